package resume

import (
	"bytes"
	"strings"

	"github.com/ctxtools/ctx/markdown"
)

// header is a Quick Context line of the document: "**Next Action:** value" in any of
// the forms people write. src[Start:NameStart] and src[NameEnd:ValueStart] are the
// line's own form (a quote marker, bold), which a writer keeps.
type header struct {
	ok                   bool
	Line                 int // index into the document's lines
	Start                int // the start of the line
	NameStart, NameEnd   int
	ValueStart, ValueEnd int // the value, without the line ending or a closing "**"
}

// Which lines are ctx's is decided here, once, by Markdown structure: a header line is
// ctx's only when it is a paragraph line at the top level of the document, or a
// paragraph line of the block quote right under the title (the proposal's own form,
// "> **Next Action**: ..."). Lines in code, HTML blocks and comments, list items and
// other quotations are the person's, whatever they say. The first such line of each
// label is the header; a second one is the person's.

// findHeaders locates the three headers, once.
func (d *Document) findHeaders() { d.headersOnce.Do(d.locateHeaders) }

func (d *Document) locateHeaders() {
	lines := d.md.Lines()
	quoteTop := d.quoteUnderTitle()
	stale := d.olderEntries()
	found := 0
	for i, l := range lines {
		if l.Kind != markdown.KindParagraph || l.List != 0 {
			continue
		}
		if inSpans(stale, l.Start) {
			continue
		}
		if bytes.IndexByte(d.src[l.Start:l.End], '\r') >= 0 {
			continue // a lone CR: two lines to CommonMark, one to the editor; neither is ctx's
		}
		if l.Quote != 0 && (l.Quote != 1 || l.Top != quoteTop || quoteTop < 0) {
			continue
		}
		for j, label := range headerLabels {
			if d.headers[j].ok {
				continue
			}
			if h, ok := matchHeader(d.src, l, label); ok {
				h.Line = i
				d.headers[j] = h
				found++
				break
			}
		}
		if found == len(headerLabels) {
			return
		}
	}
}

// olderEntries are the bodies of the entries of a log that are not its newest: of
// sibling headings that carry a date or a session number ("## Session 29 (2025-11-22)"),
// all but the one with the latest date, else the highest number; and, in a log kept
// newest first, everything after it. A header line there is history.
func (d *Document) olderEntries() [][2]int {
	sections := d.Sections()
	var out [][2]int
	parentOf := func(i int) int {
		for j := i - 1; j >= 0; j-- {
			if sections[j].Level < sections[i].Level {
				return j
			}
		}
		return -1
	}
	groups := map[[2]int][]int{}
	var order [][2]int
	for i, s := range sections {
		if s.Level < 2 || !isEntryTitle(s.Title) || strings.Contains(s.Title, "<!-- ctx:session ") {
			continue // ctx's own entries come and go with saves: they date no one's header
		}
		g := [2]int{parentOf(i), s.Level}
		if _, ok := groups[g]; !ok {
			order = append(order, g)
		}
		groups[g] = append(groups[g], i)
	}
	for _, g := range order {
		entries := groups[g]
		if len(entries) < 2 {
			continue
		}
		titles := make([]string, len(entries))
		for k, i := range entries {
			titles[k] = sections[i].Title
		}
		newest := entries[newestEntry(titles)]
		for _, i := range entries {
			if i != newest {
				out = append(out, [2]int{sections[i].BodyStart, sections[i].End})
			}
		}
		// A log kept newest first grew at the top: what follows its entries (the oldest
		// one's lessons, checklists, references) is history too.
		if newest == entries[0] && len(entries) >= 3 {
			end := len(d.src)
			if g[0] >= 0 && sections[g[0]].Level > 1 {
				end = sections[g[0]].End // the log of a section: to the section's end
			}
			from := sections[newest].End
			// A section of the save point's own there (Quick Context, "Session
			// Continuity") is current, not history.
			for _, k := range sections {
				if k.Start >= from && k.Start < end && isSavePointSection(k.Title) {
					out = append(out, [2]int{from, k.Start})
					from = k.End
				}
			}
			if from < end {
				out = append(out, [2]int{from, end})
			}
		}
	}
	return out
}

func inSpans(spans [][2]int, off int) bool {
	for _, s := range spans {
		if off >= s[0] && off < s[1] {
			return true
		}
	}
	return false
}

// quoteUnderTitle is the Top number of the block quote that directly follows the
// document's title (its first top-level level-1 heading), or of a quote that opens the
// body when there is no title before it; -1 when there is none.
func (d *Document) quoteUnderTitle() int {
	lines := d.md.Lines()
	prevTop := -1
	var prevKind markdown.Kind
	for _, l := range lines {
		if l.Top < 0 || l.Top == prevTop || l.Kind == markdown.KindBlank {
			continue
		}
		if l.Quote > 0 {
			if prevTop < 0 || (prevKind == markdown.KindHeading && d.isTitle(prevTop)) {
				return l.Top
			}
			return -1
		}
		if l.Kind == markdown.KindHeading && !d.isTitle(l.Top) {
			return -1
		}
		prevTop, prevKind = l.Top, l.Kind
	}
	return -1
}

// isTitle reports whether the top-level block numbered top is the document's title.
func (d *Document) isTitle(top int) bool {
	t, ok := d.title()
	return ok && d.md.Lines()[d.lineIndex(t.Start)].Top == top
}

// title is the document's first level-1 heading, if any comes before every other
// heading.
func (d *Document) title() (markdown.Section, bool) {
	if s := d.Sections(); len(s) > 0 && s[0].Level == 1 {
		return s[0], true
	}
	return markdown.Section{}, false
}

// matchHeader reads line l as a header of label: after the line's quote markers,
// "**Label:** v", "**Label**: v", "**Label** : v" or "Label: v", the label in any case.
func matchHeader(src []byte, l markdown.Line, label string) (header, bool) {
	i, end := l.Start, l.End
	if i == 0 && bytes.HasPrefix(src, []byte("\ufeff")) {
		i = 3 // the line starts after the byte-order mark, which is no one's form
	}
	lineStart := i
	for i < end && (src[i] == ' ' || src[i] == '\t' || (src[i] == '>' && l.Quote > 0)) {
		i++
	}
	bold := false
	if i+1 < end && src[i] == '*' && src[i+1] == '*' {
		bold = true
		i += 2
		for i < end && (src[i] == ' ' || src[i] == '\t') {
			i++
		}
	}
	nameStart := i
	if end-i < len(label) || !bytes.EqualFold(src[i:i+len(label)], []byte(label)) {
		return header{}, false
	}
	i += len(label)
	nameEnd := i
	for i < end && (src[i] == ' ' || src[i] == '\t') {
		i++
	}
	closed := false
	switch {
	case i < end && src[i] == ':':
		i++
		if bold && i+1 < end && src[i] == '*' && src[i+1] == '*' {
			i += 2
			closed = true
		}
	case bold && i+1 < end && src[i] == '*' && src[i+1] == '*':
		i += 2
		closed = true
		for i < end && (src[i] == ' ' || src[i] == '\t') {
			i++
		}
		if i >= end || src[i] != ':' {
			return header{}, false
		}
		i++
	default:
		return header{}, false
	}
	for i < end && (src[i] == ' ' || src[i] == '\t') {
		i++
	}
	h := header{ok: true, Start: lineStart, NameStart: nameStart, NameEnd: nameEnd, ValueStart: i, ValueEnd: end}
	v := bytes.TrimRight(src[h.ValueStart:h.ValueEnd], " \t")
	h.ValueEnd = h.ValueStart + len(v)
	// "**Name: value**": the closing bold belongs to the line's form, not the value.
	if bold && !closed && bytes.HasSuffix(v, []byte("**")) {
		h.ValueEnd -= 2
	}
	return h, true
}

// Header returns the value of a Quick Context header line.
func (d *Document) Header(label string) (string, bool) {
	if h, ok := d.header(label); ok {
		return string(d.src[h.ValueStart:h.ValueEnd]), true
	}
	return "", false
}

func (d *Document) header(label string) (header, bool) {
	d.findHeaders()
	for i, l := range headerLabels {
		if l == label {
			return d.headers[i], d.headers[i].ok
		}
	}
	return header{}, false
}
