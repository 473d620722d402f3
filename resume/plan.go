package resume

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"github.com/ctxtools/ctx/markdown"
)

// Edit replaces src[Start:End] with Text. An insertion has Start == End; insertions at
// one offset keep the order they were planned in.
type Edit struct {
	Start, End int
	Text       string
	seq        int
	// late orders an insertion that opens a block of its own (a heading) after the
	// insertions at its offset that continue the block before it (an item).
	late bool
}

// plan collects the edits of one round of a save, every one planned against the same
// parse, and what the parse of the result must show.
type plan struct {
	d     *Document
	edits []Edit
	// expect are the header lines the edits write: after the round, each must be the
	// document's header of its label, with its value.
	expect []expectedHeader
	// newFM holds the keys of a frontmatter the document lacks, written as one block.
	newFM []string
}

type expectedHeader struct {
	label, value string
	edit         int // the edit that writes the line
	offset       int // where the line starts in the edit's text
}

func newPlan(d *Document) *plan { return &plan{d: d} }

// add plans an edit; text uses "\n", which becomes the document's line ending.
func (p *plan) add(start, end int, text string) int {
	if p.d.eol != "\n" {
		text = strings.ReplaceAll(text, "\n", p.d.eol)
	}
	p.edits = append(p.edits, Edit{Start: start, End: end, Text: text, seq: len(p.edits)})
	return len(p.edits) - 1
}

// addLate plans an insertion that opens a block of its own (see Edit.late).
func (p *plan) addLate(at int, text string) int {
	i := p.add(at, at, text)
	p.edits[i].late = true
	return i
}

// empty reports whether the plan changes nothing.
func (p *plan) empty() bool { return len(p.edits) == 0 && len(p.newFM) == 0 }

// apply writes the plan's edits into a copy of the document's bytes, in one pass.
// Edits are sorted; an overlap is a bug of the plan, reported and never written.
func (p *plan) apply() ([]byte, []int, error) {
	if len(p.newFM) > 0 {
		at := 0
		if bytes.HasPrefix(p.d.src, []byte("\ufeff")) {
			at = 3
		}
		p.add(at, at, "---\n"+strings.Join(p.newFM, "")+"---\n")
		// The new frontmatter goes before anything else written at the top.
		p.edits[len(p.edits)-1].seq = -1
		p.newFM = nil
	}
	order := make([]int, len(p.edits))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		ea, eb := p.edits[a], p.edits[b]
		if ea.Start != eb.Start {
			return ea.Start - eb.Start
		}
		// At one offset, insertions come first, in planned order, then a replacement.
		if (ea.Start == ea.End) != (eb.Start == eb.End) {
			if ea.Start == ea.End {
				return -1
			}
			return 1
		}
		if ea.late != eb.late {
			if eb.late {
				return -1
			}
			return 1
		}
		return ea.seq - eb.seq
	})
	src := p.d.src
	out := make([]byte, 0, len(src)+256)
	newStart := make([]int, len(p.edits))
	last := 0
	for _, i := range order {
		e := p.edits[i]
		if e.Start < last || e.End < e.Start || e.End > len(src) {
			return nil, nil, fmt.Errorf("save: two edits overlap at byte %d (a bug of ctx)", e.Start)
		}
		out = append(out, src[last:e.Start]...)
		newStart[i] = len(out)
		out = append(out, e.Text...)
		last = e.End
	}
	out = append(out, src[last:]...)
	return out, newStart, nil
}

// run applies the plan and parses the result, checking what the edits must not do:
// change the kind or the containers of a line the person wrote (a line that became
// code, a list that a new line re-parented), or leave a header they wrote anywhere but
// where it was planned.
func (p *plan) run() (*Document, error) {
	if p.empty() {
		return p.d, nil
	}
	out, newStart, err := p.apply()
	if err != nil {
		return nil, err
	}
	nd := Parse(out)
	if p.d.md.FMErr == nil && nd.md.FMErr != nil {
		return nil, fmt.Errorf("frontmatter: the edits would break it: %w", nd.md.FMErr)
	}
	if err := p.checkKept(nd); err != nil {
		return nil, err
	}
	for _, e := range p.expect {
		h, ok := nd.header(e.label)
		want := newStart[e.edit] + e.offset
		if !ok || h.Start != want || string(nd.src[h.ValueStart:h.ValueEnd]) != e.value {
			return nil, fmt.Errorf("%s: the line written for it would not read as the save point's header (near line %d)", e.label, p.d.lineIndex(p.edits[e.edit].Start)+1)
		}
	}
	return nd, nil
}

// checkKept compares every body line no edit touched with the same line after the
// edits: the same kind of block, in the same quotes and lists.
func (p *plan) checkKept(nd *Document) error {
	type span struct{ start, end int }
	touched := make([]span, 0, len(p.edits))
	for _, e := range p.edits {
		touched = append(touched, span{e.Start, e.End})
	}
	slices.SortFunc(touched, func(a, b span) int { return a.start - b.start })
	// A line no edit touched moves by what the edits before it added or removed.
	shift := func(off int) int {
		at := off
		for _, e := range p.edits {
			if e.End <= off {
				at += len(e.Text) - (e.End - e.Start)
			}
		}
		return at
	}
	newLines := nd.md.Lines()
	for i, l := range p.d.md.Lines() {
		if l.Kind == markdown.KindFrontmatter || l.Kind == markdown.KindBlank {
			continue
		}
		hit := false
		for _, t := range touched {
			if t.start < l.Next && t.end > l.Start {
				hit = true
				break
			}
		}
		if hit {
			continue
		}
		at := shift(l.Start)
		nl := newLines[nd.lineIndex(at)]
		if nl.Start != at {
			return fmt.Errorf("line %d: an edit would move it", i+1)
		}
		if nl.Kind != l.Kind || nl.Quote != l.Quote || nl.List != l.List {
			return fmt.Errorf("line %d: an edit would turn this %s line into %s", i+1, describe(l), describe(nl))
		}
	}
	return nil
}

func describe(l markdown.Line) string {
	s := l.Kind.String()
	if l.Quote > 0 {
		s += " in a quote"
	}
	if l.List > 0 {
		s += " in a list"
	}
	return s
}

// lastContentLine is the index of the last line of [from, to) that is not blank, or -1.
func (d *Document) lastContentLine(from, to int) int {
	lines := d.md.Lines()
	for i := d.lineIndex(max(to-1, 0)); i >= 0 && i < len(lines); i-- {
		l := lines[i]
		if l.Start < from {
			break
		}
		if l.Start >= to {
			continue
		}
		if l.Kind != markdown.KindBlank {
			return i
		}
	}
	return -1
}

// openToEnd reports whether line i ends the document inside a block that never closed
// (a fence, a comment), which would take in any line written after it.
func (d *Document) openToEnd(i int) bool {
	lines := d.md.Lines()
	l := lines[i]
	if l.Kind != markdown.KindCode && l.Kind != markdown.KindHTML {
		return false
	}
	for j := i + 1; j < len(lines); j++ {
		if lines[j].Kind != markdown.KindBlank {
			return false
		}
	}
	first := i
	for first > 0 && lines[first-1].Leaf == l.Leaf {
		first--
	}
	open := bytes.TrimLeft(d.src[lines[first].Start:lines[first].End], " \t>")
	text := bytes.TrimLeft(d.src[l.Start:l.End], " \t>")
	switch {
	case bytes.HasPrefix(open, []byte("```")) || bytes.HasPrefix(open, []byte("~~~")):
		c := open[0]
		opened := 0
		for opened < len(open) && open[opened] == c {
			opened++
		}
		n := 0
		for n < len(text) && text[n] == c {
			n++
		}
		// Closed only by a run of the same character at least as long as the opening.
		return first == i || n < opened || len(bytes.TrimSpace(text[n:])) != 0
	case bytes.HasPrefix(open, []byte("<!--")):
		return !bytes.Contains(d.src[lines[first].Start:l.End][4:], []byte("-->"))
	case l.Kind == markdown.KindHTML:
		for _, tag := range []string{"<script", "<pre", "<style", "<textarea", "<?", "<![CDATA[", "<!"} {
			if bytes.HasPrefix(bytes.ToLower(open), []byte(tag)) {
				return true // the end marker is unknown here: write before it
			}
		}
	}
	return false
}

// appendAt is where whole lines go at the end of the span [from, to) of a section:
// after its last line that is not blank, with a blank line first when that line is
// not a paragraph or list line the new lines may follow; before a block that runs open
// to the end of the document. pre and post are the line breaks around the new lines.
func (d *Document) appendAt(from, to int) (at int, pre, post string) {
	i := d.lastContentLine(from, to)
	if i < 0 {
		at = from
		if at > 0 && d.src[at-1] != '\n' {
			pre = "\n"
		}
		return at, pre, ""
	}
	lines := d.md.Lines()
	l := lines[i]
	if d.openToEnd(i) {
		// Before the whole top-level block that holds the open one: before only the
		// open block, new lines would end a list item or quote and take the block in.
		first := i
		for first > 0 && (lines[first-1].Leaf == l.Leaf || l.Top >= 0 && lines[first-1].Top == l.Top) {
			first--
		}
		at = lines[first].Start
		if first > 0 && lines[first-1].Kind != markdown.KindBlank {
			pre = "\n"
		}
		return at, pre, "\n"
	}
	at = l.Next
	if at == len(d.src) && !bytes.HasSuffix(d.src, []byte("\n")) {
		pre = "\n"
	}
	if at < len(d.src) && len(bytes.TrimSpace(d.src[at:lineEnd(d.src, at)])) != 0 {
		// The line after (a setext heading's text, say) must not continue the new lines.
		post = "\n"
	}
	// After a paragraph or list line of the document's own level, a list item follows
	// as it is; after anything else it needs a blank line to stand apart.
	if follows := l.Quote == 0 && (l.Kind == markdown.KindParagraph || l.List > 0); !follows {
		pre += "\n"
	}
	return at, pre, post
}
