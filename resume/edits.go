package resume

import (
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/ctxtools/ctx/markdown"
)

// The edits a save plans. Each reads the plan's one parse and adds byte edits; none
// changes a byte outside the span it owns.

// setField sets a top-level frontmatter value. Only the value's own span changes; a
// missing key is inserted after its template neighbour; a document without frontmatter
// gets one. value is a string, an int, a bool or a time.Time.
func (p *plan) setField(key string, value any) {
	d := p.d
	if d.fm.Open == 0 {
		p.newFM = append(p.newFM, key+": "+scalarText(value, 0)+"\n")
		return
	}
	if d.mapping != nil {
		pairs := d.mapping.Content
		for i := 0; i+1 < len(pairs); i += 2 {
			if pairs[i].Value != key {
				continue
			}
			start, end := d.valueSpan(i)
			text := scalarText(value, pairs[i+1].Style)
			if start == end || d.src[start-1] == ':' {
				text = " " + text // the span starts right after "key:"
			}
			if string(d.src[start:end]) != text {
				p.add(start, end, text)
			}
			return
		}
	}
	at, indent := d.insertionPoint(key)
	p.add(at, at, indent+key+": "+scalarText(value, 0)+"\n")
}

// valueSpan returns the byte range of the value of pair i (the key's index): the YAML
// node's own span, so that comments and blank lines after it stay.
func (d *Document) valueSpan(i int) (int, int) {
	key, val := d.mapping.Content[i], d.mapping.Content[i+1]
	keyStart := d.offsetOf(key.Line, key.Column)
	keyLineEnd := contentEnd(d.src, keyStart, lineEnd(d.src, keyStart))
	colon := keyStart + bytes.IndexByte(d.src[keyStart:keyLineEnd], ':')
	if val.Kind == yaml.ScalarNode && val.Tag == "!!null" && val.Value == "" {
		// "key:" or "key: # comment": the value goes right after the colon.
		return colon + 1, colon + 1
	}
	start := d.offsetOf(val.Line, val.Column)
	if val.Anchor != "" {
		// "key: &name value": the anchor stays, only the value after it changes.
		if a := bytes.Index(d.src[start:keyLineEnd], []byte("&"+val.Anchor)); a >= 0 {
			start += a + 1 + len(val.Anchor)
			for start < keyLineEnd && (d.src[start] == ' ' || d.src[start] == '\t') {
				start++
			}
		}
	}
	keyIndent := key.Column - 1
	if val.Kind == yaml.ScalarNode {
		switch val.Style {
		case yaml.DoubleQuotedStyle:
			if end, ok := closingQuote(d.src[:d.fm.ContentEnd], start, '"'); ok {
				return start, end
			}
		case yaml.SingleQuotedStyle:
			if end, ok := closingQuote(d.src[:d.fm.ContentEnd], start, '\''); ok {
				return start, end
			}
		case yaml.LiteralStyle, yaml.FoldedStyle:
			// Every line indented as deep as the block's first line is the block's,
			// comments included; a comment less deep after it is not.
			return colon + 1, d.deeperLinesEnd(lineEnd(d.src, start), d.blockIndent(lineEnd(d.src, start), keyIndent)-1, true)
		default:
			// A plain value runs on over the lines deeper than the key that are not
			// comments; a comment ends it, and one after its last line is not its.
			return start, d.plainSpanEnd(start, keyIndent)
		}
	}
	// A list, a map, a flow value or an alias: the lines deeper than the key after the
	// colon, without the comments and blank lines that follow the last of them, and
	// without a comment at the end of the last line.
	return colon + 1, d.plainSpanEnd(colon+1, keyIndent)
}

// plainSpanEnd is the end of a value that starts at start (on the key's line) and runs
// on over the lines deeper than the key, without a trailing comment.
func (d *Document) plainSpanEnd(start, keyIndent int) int {
	end := contentEnd(d.src, start, lineEnd(d.src, start))
	if next := d.deeperLinesEnd(lineEnd(d.src, start), keyIndent, false); next > lineEnd(d.src, start) {
		end = next
	}
	from := max(start, lineStart(d.src, end))
	return plainEnd(d.src, from, end)
}

// blockIndent is the indentation of a block scalar's first line that is not blank.
func (d *Document) blockIndent(off, keyIndent int) int {
	for pos := off; pos < d.fm.ContentEnd; pos = lineEnd(d.src, pos) {
		line := d.src[pos:contentEnd(d.src, pos, lineEnd(d.src, pos))]
		if len(bytes.TrimSpace(line)) != 0 {
			return max(len(line)-len(bytes.TrimLeft(line, " ")), keyIndent+1)
		}
	}
	return keyIndent + 1
}

// deeperLinesEnd returns the end (before its line ending) of the last line, from off
// on, indented deeper than keyIndent, stopping at the first line that is not: a line
// that is a comment counts only when comments is set (a block scalar's text), a blank
// line only when a deeper line follows it. It returns the end of the line before off
// when there is none.
func (d *Document) deeperLinesEnd(off, keyIndent int, comments bool) int {
	end := contentEnd(d.src, lineStart(d.src, max(off-1, 0)), off)
	for pos := off; pos < d.fm.ContentEnd; {
		next := lineEnd(d.src, pos)
		line := d.src[pos:contentEnd(d.src, pos, next)]
		trimmed := bytes.TrimSpace(line)
		indent := len(line) - len(bytes.TrimLeft(line, " \t"))
		switch {
		case len(trimmed) == 0:
		case indent <= keyIndent:
			return end
		case trimmed[0] == '#' && !comments:
			return end
		default:
			end = pos + len(line)
		}
		pos = next
	}
	return end
}

// closingQuote finds the end (just past the closing quote) of a quoted scalar at start.
func closingQuote(src []byte, start int, q byte) (int, bool) {
	for i := start + 1; i < len(src); i++ {
		switch {
		case q == '"' && src[i] == '\\':
			i++
		case src[i] == q && q == '\'' && i+1 < len(src) && src[i+1] == '\'':
			i++
		case src[i] == q:
			return i + 1, true
		}
	}
	return 0, false
}

// plainEnd trims a trailing comment and spaces from a plain scalar's line.
func plainEnd(src []byte, start, end int) int {
	line := src[start:end]
	if i := bytes.Index(line, []byte(" #")); i >= 0 {
		end = start + i
	} else if i := bytes.Index(line, []byte("\t#")); i >= 0 {
		end = start + i
	}
	for end > start && (src[end-1] == ' ' || src[end-1] == '\t') {
		end--
	}
	return end
}

// insertionPoint returns where a missing key goes: on the line after the value of the
// nearest preceding template key present, else before the first key.
func (d *Document) insertionPoint(key string) (int, string) {
	pos := -1
	for i, k := range FrontmatterKeys {
		if k == key {
			pos = i
		}
	}
	if d.mapping == nil || len(d.mapping.Content) == 0 {
		return d.fm.ContentEnd, ""
	}
	present := map[string]int{}
	for i := 0; i+1 < len(d.mapping.Content); i += 2 {
		present[d.mapping.Content[i].Value] = i
	}
	indent := strings.Repeat(" ", d.mapping.Content[0].Column-1)
	for j := pos - 1; j >= 0; j-- {
		if i, ok := present[FrontmatterKeys[j]]; ok {
			_, end := d.valueSpan(i)
			return min(lineEnd(d.src, end), d.fm.ContentEnd), indent
		}
	}
	first := d.mapping.Content[0]
	return lineStart(d.src, d.offsetOf(first.Line, first.Column)), indent
}

// scalarText writes value as YAML, keeping a string's quoting style when it can.
func scalarText(value any, style yaml.Style) string {
	switch v := value.(type) {
	case int:
		return strconv.Itoa(v)
	case int64:
		return strconv.FormatInt(v, 10)
	case bool:
		return strconv.FormatBool(v)
	case time.Time:
		text := v.UTC().Format(time.RFC3339)
		if style == yaml.DoubleQuotedStyle || style == yaml.SingleQuotedStyle {
			return stringText(text, style)
		}
		return text
	case string:
		return stringText(v, style)
	}
	return stringText(fmt.Sprint(value), style)
}

func stringText(s string, style yaml.Style) string {
	switch style {
	case yaml.DoubleQuotedStyle, yaml.SingleQuotedStyle:
	default:
		style = 0
	}
	if s == "" {
		if style == yaml.SingleQuotedStyle {
			return "''"
		}
		return `""`
	}
	out, err := yaml.Marshal(&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s, Style: style})
	text := strings.TrimSuffix(string(out), "\n")
	if err != nil || strings.Contains(text, "\n") {
		out, _ = yaml.Marshal(&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s, Style: yaml.DoubleQuotedStyle})
		text = strings.TrimSuffix(string(out), "\n")
	}
	return text
}

// headerValue is one header line a save sets.
type headerValue struct{ label, value string }

// setHeaders sets the Quick Context header lines: in place where the document has
// them (only the value changes), and the missing ones together, in the form of the
// document's own header lines: next to them when that moves none of the person's lines
// to another block, else as a paragraph of their own under the title.
func (p *plan) setHeaders(values []headerValue) {
	d := p.d
	var missing []headerValue
	for _, hv := range values {
		hv.value = oneLine(hv.value)
		h, ok := d.header(hv.label)
		if !ok {
			missing = append(missing, hv)
			continue
		}
		text := hv.value
		if h.ValueStart == h.ValueEnd && text != "" && h.ValueStart > 0 && d.src[h.ValueStart-1] != ' ' && d.src[h.ValueStart-1] != '\t' {
			text = " " + text // "**Next action:**" with nothing after it
		}
		if string(d.src[h.ValueStart:h.ValueEnd]) != hv.value {
			e := p.add(h.ValueStart, h.ValueEnd, text)
			p.expect = append(p.expect, expectedHeader{label: hv.label, value: hv.value, edit: e, offset: h.Start - h.ValueStart})
		}
	}
	if len(missing) == 0 {
		return
	}
	form := headerForm{prefix: "**", sep: ":** "}
	var anchor header
	for _, l := range headerLabels {
		if h, ok := d.header(l); ok && (!anchor.ok || h.Start < anchor.Start) {
			anchor = h
		}
	}
	at, pre, post := -1, "", ""
	if anchor.ok {
		form = headerForm{prefix: string(d.src[anchor.Start:anchor.NameStart]), sep: strings.TrimRight(string(d.src[anchor.NameEnd:anchor.ValueStart]), " \t") + " "}
		if strings.Contains(form.prefix, "**") && !strings.Contains(form.sep, "**") {
			form.suffix = "**" // "**Next Action: value**"
		}
		if d.inPreamble(anchor.Start) {
			at = d.paragraphEdge(anchor.Line)
		}
	}
	if at < 0 {
		// A paragraph of their own right under the title, in the form of the document's
		// header lines (not quoted: the quote is the person's).
		form.prefix = strings.TrimLeft(form.prefix, " \t>")
		at, pre, post = d.underTitle()
	}
	if anchor.ok && d.inPreamble(anchor.Start) && d.headerParagraph(anchor.Line) && d.paragraphOpenAfter(anchor.Line) {
		// A paragraph of header lines only: each missing line goes in its order,
		// after the header before it or before the one after it.
		for _, hv := range missing {
			at := -1
			for _, l := range headerLabels {
				if l == hv.label {
					break
				}
				if h, ok := d.header(l); ok && d.md.Lines()[h.Line].Leaf == d.md.Lines()[anchor.Line].Leaf {
					at = d.md.Lines()[h.Line].Next
				}
			}
			if at < 0 {
				at = anchor.Start
			}
			e := p.add(at, at, form.prefix+hv.label+form.sep+hv.value+form.suffix+"\n")
			p.expect = append(p.expect, expectedHeader{label: hv.label, value: hv.value, edit: e})
		}
		return
	}
	var b strings.Builder
	b.WriteString(pre)
	offsets := make([]int, len(missing))
	for i, hv := range missing {
		offsets[i] = b.Len()
		b.WriteString(form.prefix + hv.label + form.sep + hv.value + form.suffix + "\n")
	}
	b.WriteString(post)
	e := p.add(at, at, b.String())
	for i, hv := range missing {
		off := offsets[i]
		if d.eol != "\n" {
			off += strings.Count(b.String()[:offsets[i]], "\n")
		}
		p.expect = append(p.expect, expectedHeader{label: hv.label, value: hv.value, edit: e, offset: off})
	}
}

type headerForm struct{ prefix, sep, suffix string }

// inPreamble reports whether off lies under the title, before the first heading after
// it: where a missing header joins the others. A header further down stays where it
// is, and the missing ones go under the title.
func (d *Document) inPreamble(off int) bool {
	for i, s := range d.Sections() {
		if s.Start >= off {
			return true
		}
		if i > 0 || s.Level > 1 {
			return false
		}
	}
	return true
}

// headerParagraph reports whether every line of the paragraph holding line i is a
// header line of some label, and ends with a line break (so a line may follow it).
func (d *Document) headerParagraph(i int) bool {
	lines := d.md.Lines()
	for _, l := range lines {
		if l.Leaf != lines[i].Leaf {
			continue
		}
		ok := bytes.IndexByte(d.src[l.Start:l.End], '\r') < 0 // a lone CR's line is no header
		if ok {
			ok = false
			for _, label := range headerLabels {
				if _, m := matchHeader(d.src, l, label); m {
					ok = true
				}
			}
		}
		if !ok || (l.Next == len(d.src) && !bytes.HasSuffix(d.src, []byte("\n"))) {
			return false
		}
	}
	return true
}

// paragraphOpenAfter reports whether lines may follow the paragraph that holds line i:
// what comes after it is a blank line, a heading or the end.
func (d *Document) paragraphOpenAfter(i int) bool {
	lines := d.md.Lines()
	at := d.paragraphEdge(i)
	return at >= 0 && at > lines[i].Start
}

// paragraphEdge is where lines may join the paragraph that holds line i: after its last
// line when what follows is a blank line, a heading or the end, else before its first
// line (a list or quote that hangs on the paragraph stays with it); -1 when neither.
func (d *Document) paragraphEdge(i int) int {
	lines := d.md.Lines()
	first, last := i, i
	for first > 0 && lines[first-1].Leaf == lines[i].Leaf {
		first--
	}
	for last+1 < len(lines) && lines[last+1].Leaf == lines[i].Leaf {
		last++
	}
	if last+1 == len(lines) {
		if bytes.HasSuffix(d.src, []byte("\n")) {
			return lines[last].Next
		}
		return -1
	}
	next := lines[last+1]
	if next.Kind == markdown.KindBlank || (next.Kind == markdown.KindHeading && next.Quote == 0 && next.List == 0 && bytes.HasPrefix(bytes.TrimLeft(d.src[next.Start:next.End], " "), []byte("#"))) {
		return lines[last].Next
	}
	if first == 0 || lines[first].Start < d.fm.End {
		return -1
	}
	return lines[first].Start
}

// underTitle is where a paragraph of header lines goes when the document has none:
// after the title (or at the top of the body), with the blank lines around it.
func (d *Document) underTitle() (at int, pre, post string) {
	at = d.fm.End
	afterBOM := at == 0 && bytes.HasPrefix(d.src, []byte("\ufeff"))
	if afterBOM {
		at = 3 // the byte-order mark stays first
	}
	if t, ok := d.title(); ok {
		at = t.BodyStart
		pre = "\n"
	}
	if at > 0 && d.src[at-1] != '\n' && !afterBOM {
		pre = "\n" + pre
	}
	if at < len(d.src) {
		next := d.src[at:lineEnd(d.src, at)]
		if len(bytes.TrimSpace(next)) != 0 {
			post = "\n"
		} else if pre == "\n" {
			// The title is followed by a blank line already: use it.
			at, pre, post = lineEnd(d.src, at), "", "\n"
			if at < len(d.src) && len(bytes.TrimSpace(d.src[at:lineEnd(d.src, at)])) == 0 {
				post = ""
			}
		}
	}
	return at, pre, post
}

// appendItem adds "- item" at the end of the section named by path, unless a list item
// with the same text is already there. A missing subsection is added at the end of its
// parent, which must exist.
func (p *plan) appendItem(item string, path ...string) error {
	d := p.d
	item = oneLine(item)
	s, ok := d.findSection(path...)
	if !ok {
		if len(path) < 2 {
			return fmt.Errorf("no section %q", path[0])
		}
		parent, ok := d.findSection(path[:len(path)-1]...)
		if !ok {
			return fmt.Errorf("no section %q", strings.Join(path[:len(path)-1], " / "))
		}
		at, pre, post := d.appendAt(parent.BodyStart, parent.End)
		if at > parent.BodyStart {
			pre = d.blankBefore(at, pre)
		}
		p.addLate(at, pre+strings.Repeat("#", min(parent.Level+1, 6))+" "+path[len(path)-1]+"\n- "+item+"\n"+post)
		return nil
	}
	if d.hasItem(s.BodyStart, s.End, item) {
		return nil
	}
	at, pre, post := d.appendAt(s.BodyStart, s.End)
	p.add(at, at, pre+"- "+item+"\n"+post)
	return nil
}

// sectionHolding is the level-2 section whose span holds off.
func (d *Document) sectionHolding(off int) (markdown.Section, bool) {
	var found markdown.Section
	ok := false
	for _, s := range d.Sections() {
		if s.Level == 2 && s.Start <= off && off < s.End {
			found, ok = s, true
		}
	}
	return found, ok
}

// blankBefore returns pre with a line break added when the document up to at, followed
// by pre, does not end with a blank line: a heading written at at stands apart.
func (d *Document) blankBefore(at int, pre string) string {
	text := strings.ReplaceAll(string(d.src[max(at-4, 0):at])+pre, "\r\n", "\n")
	if !strings.HasSuffix(text, "\n\n") {
		pre += "\n"
	}
	return pre
}

// hasItem reports whether src[from:to] holds a list item whose text is item, ignoring a
// leading "YYYY-MM-DD: " date and backticks.
func (d *Document) hasItem(from, to int, item string) bool {
	want := normalItem(item)
	lines := d.md.Lines()
	for i, l := range lines {
		if l.Start < from || l.Start >= to || l.List == 0 {
			continue
		}
		// An item's text may open a block of its own ("- # x", "- ```"): its first line
		// counts whatever its kind; the lines inside code do not.
		if l.Kind == markdown.KindCode && i > 0 && lines[i-1].Leaf == l.Leaf {
			continue
		}
		t := strings.TrimSpace(string(d.src[l.Start:l.End]))
		if len(t) < 2 || !strings.ContainsRune("-*+", rune(t[0])) || t[1] != ' ' {
			continue
		}
		if normalItem(t[2:]) == want {
			return true
		}
	}
	return false
}

func normalItem(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > 12 && s[4] == '-' && s[7] == '-' && s[10] == ':' {
		s = strings.TrimSpace(s[11:])
	}
	return strings.Trim(s, "` ")
}

// sessionEntry finds the Session History entry of a session: the heading line that
// carries its marker, in the section; its line index, and the end of the entry.
func (d *Document) sessionEntry(key string) (line, end int, ok bool) {
	s, ok := d.findSection(SectionSessionHistory)
	if !ok {
		return 0, 0, false
	}
	marker := sessionMarker(key)
	lines := d.md.Lines()
	for i, l := range lines {
		if l.Start < s.BodyStart || l.Start >= s.End {
			continue
		}
		if l.Kind == markdown.KindHeading && l.TopLevel() && bytes.Contains(d.src[l.Start:l.End], []byte(marker)) {
			end = s.End
			for _, sub := range d.Sections() {
				if sub.Start > l.Start && sub.Start < s.End {
					end = sub.Start
					break
				}
			}
			return i, end, true
		}
	}
	return 0, 0, false
}

// setSessionEntry writes the Session History entry of one agent session: heading is
// the entry's title line (without "### "), item an optional line to add under it. The
// entry of the same session is updated in place, never duplicated. Only the entry's
// heading line and the end of the entry change; the heading only while it is still the
// open heading ctx wrote, or when the session closes (a close writes its own heading).
func (p *plan) setSessionEntry(key, heading, item string, closing bool) error {
	d := p.d
	item = oneLine(item)
	s, ok := d.findSection(SectionSessionHistory)
	if !ok {
		return fmt.Errorf("no section %q", SectionSessionHistory)
	}
	headLine := strings.Repeat("#", min(s.Level+1, 6)) + " " + oneLine(heading) + " " + sessionMarker(key)
	i, end, ok := d.sessionEntry(key)
	if !ok {
		at, pre, post := d.appendAt(s.BodyStart, s.End)
		if at > s.BodyStart {
			pre = d.blankBefore(at, pre)
		}
		text := pre + headLine + "\n"
		if item != "" {
			text += "- " + item + "\n"
		}
		p.addLate(at, text+post)
		return nil
	}
	l := d.md.Lines()[i]
	current := string(d.src[l.Start:l.End])
	if current != headLine && (closing || openSessionHeadingRE().MatchString(current)) {
		p.add(l.Start, l.End, headLine)
	}
	if item == "" || d.hasItem(l.Next, end, item) {
		return nil
	}
	at, pre, post := d.appendAt(l.Next, end)
	p.add(at, at, pre+"- "+item+"\n"+post)
	return nil
}

// openSessionHeadingRE matches the heading ctx writes for a session still open.
var openSessionHeadingRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^#{2,6} Session \d+ — \d{4}-\d{2}-\d{2} <!-- ctx:session [^ ]+ -->$`)
})

// block finds ctx's marked block name in section s: a begin marker line and the end
// marker line after it, both lines of their own at the top level (markers in code, in
// a quote or in a list are examples); the offsets of the lines between them.
func (d *Document) block(s markdown.Section, name string) (from, to int, ok bool) {
	begin, end := blockBegin(name), blockEnd(name)
	lines := d.md.Lines()
	open := -1
	for i, l := range lines {
		if l.Start < s.BodyStart || l.Start >= s.End {
			continue
		}
		switch {
		case d.isMarkerLine(i, begin):
			open = l.Next
		case d.isMarkerLine(i, end) && open >= 0:
			return open, l.Start, true
		}
	}
	return 0, 0, false
}

// isMarkerLine reports whether line i is the marker on a line of its own at the top
// level: an HTML block of that one line. A marker inside another HTML block, a comment,
// code, a quote or a list is an example, and the person's.
func (d *Document) isMarkerLine(i int, marker string) bool {
	lines := d.md.Lines()
	l := lines[i]
	if l.Kind != markdown.KindHTML || !l.TopLevel() || string(bytes.TrimSpace(d.src[l.Start:l.End])) != marker {
		return false
	}
	return (i == 0 || lines[i-1].Leaf != l.Leaf) && (i+1 == len(lines) || lines[i+1].Leaf != l.Leaf)
}

// replaceBlock sets the lines of ctx's marked block name in the section titled title
// (under any of its titles; the section must exist). Without a whole block there, a
// new one goes at the top of the section and whatever was there stays below it.
func (p *plan) replaceBlock(title, name, content string) error {
	d := p.d
	s, ok := d.findSection(title)
	if !ok {
		return fmt.Errorf("no section %q", title)
	}
	if from, to, ok := d.block(s, name); ok {
		if string(d.src[from:to]) != strings.ReplaceAll(content, "\n", d.eol) {
			p.add(from, to, content)
		}
		return nil
	}
	text := blockBegin(name) + "\n" + content + blockEnd(name) + "\n"
	at := s.BodyStart
	if at > 0 && d.src[at-1] != '\n' {
		text = "\n" + text
	}
	if at < len(d.src) && len(bytes.TrimSpace(d.src[at:lineEnd(d.src, at)])) != 0 {
		text += "\n"
	}
	p.add(at, at, text)
	return nil
}

// ensureSections adds those of the named level-2 sections of the template that the
// document lacks under any equivalent title, in template order, each with its template
// body up to its first subsection; nothing else changes. It reports the titles added.
func (p *plan) ensureSections(tmpl []byte, titles []string) []string {
	d := p.d
	want := map[string]bool{}
	for _, t := range titles {
		want[strings.ToLower(t)] = true
	}
	tmplSections := markdown.Parse(tmpl).Sections()
	var order []markdown.Section
	for _, s := range tmplSections {
		if s.Level == 2 {
			order = append(order, s)
		}
	}
	var added []string
	for i, ts := range order {
		if !want[strings.ToLower(ts.Title)] {
			continue
		}
		if _, ok := d.findSection(ts.Title); ok {
			continue
		}
		end := ts.End
		for _, sub := range tmplSections {
			if sub.Start > ts.Start && sub.Start < end && sub.Level > ts.Level {
				end = sub.Start
			}
		}
		text := strings.TrimRight(strings.ReplaceAll(string(tmpl[ts.Start:end]), "\r\n", "\n"), "\n") + "\n"
		at, atEnd := -1, false
		// After the nearest earlier template section the document has...
		for j := i - 1; j >= 0 && at < 0 && !atEnd; j-- {
			if s, ok := d.findSection(order[j].Title); ok {
				if s.End < len(d.src) {
					at = s.End
				} else {
					atEnd = true
				}
			}
		}
		// ...else before the nearest later one...
		for j := i + 1; j < len(order) && at < 0 && !atEnd; j++ {
			if s, ok := d.findSection(order[j].Title); ok {
				at = s.Start
			}
		}
		pre, post := "", ""
		if at >= 0 {
			if at > 0 && !bytes.HasSuffix(d.src[:at], []byte("\n\n")) && !bytes.HasSuffix(d.src[:at], []byte("\r\n\r\n")) {
				pre = "\n"
			}
			post = "\n"
		} else {
			// ...else at the end of the document; but before the last section when the
			// document ends inside a block left open, which would follow the new heading.
			at, pre, post = d.appendAt(d.fm.End, len(d.src))
			if last := d.lastContentLine(d.fm.End, len(d.src)); last >= 0 && d.openToEnd(last) {
				if s, ok := d.sectionHolding(d.md.Lines()[last].Start); ok {
					at, pre, post = s.Start, "", "\n"
				}
			}
			if at > 0 {
				pre = d.blankBefore(at, pre)
			}
		}
		p.add(at, at, pre+text+post)
		added = append(added, ts.Title)
	}
	return added
}
