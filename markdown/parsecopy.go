package markdown

import (
	"bytes"
	"sort"
)

// parseCopy is the text goldmark reads for a document, made to read as CommonMark
// reads the document where goldmark does not: the frontmatter blanked (so that it is
// never Markdown) and a byte-order mark made line ends, a CR before a line end made a space and a lone CR a line end
// (goldmark sees "-\r" as no list item, and a lone CR as no line end), and tabs
// expanded to tab stops of 4 (goldmark counts a tab as four columns wherever it is).
// Offsets into the copy map back to the document with orig.
type parseCopy struct {
	text []byte
	// norm is the document with its frontmatter blanked and its CRs made spaces or
	// line ends: the same length as the document, so its offsets are the document's.
	norm []byte
	// Line starts of text and of norm (the same lines: tabs add no line ends).
	textStarts, normStarts []int
	expanded               bool
}

func newParseCopy(src []byte) *parseCopy {
	norm := blankFrontmatter(src)
	if bytes.HasPrefix(src, bom) {
		// Not three spaces: with a space after the mark they would make a heading code.
		norm = bytes.Clone(norm)
		copy(norm, "\n\n\n")
	}
	if bytes.IndexByte(norm, '\r') >= 0 {
		if &norm[0] == &src[0] {
			norm = bytes.Clone(norm)
		}
		for i, c := range norm {
			if c != '\r' {
				continue
			}
			if i+1 < len(norm) && norm[i+1] == '\n' {
				norm[i] = ' '
			} else {
				norm[i] = '\n'
			}
		}
	}
	c := &parseCopy{text: norm, norm: norm}
	if bytes.IndexByte(norm, '\t') >= 0 {
		c.text, c.expanded = expandTabs(norm), true
		c.textStarts, c.normStarts = lineStarts(c.text), lineStarts(norm)
	}
	return c
}

// orig maps an offset of the copy to the document's.
func (c *parseCopy) orig(off int) int {
	if !c.expanded {
		return off
	}
	i := sort.SearchInts(c.textStarts, off+1) - 1
	col, pos := off-c.textStarts[i], c.normStarts[i]
	for n := 0; n < col && pos < len(c.norm) && c.norm[pos] != '\n'; pos++ {
		if c.norm[pos] == '\t' {
			n += 4 - n%4
		} else {
			n++
		}
		if n > col {
			break // inside a tab: the tab's own offset
		}
	}
	return pos
}

func lineStarts(b []byte) []int {
	out := []int{0}
	for i, c := range b {
		if c == '\n' {
			out = append(out, i+1)
		}
	}
	return out
}

// expandTabs returns b with every tab replaced by spaces to the next tab stop of 4, as
// CommonMark reads tabs in block structure.
func expandTabs(b []byte) []byte {
	out := make([]byte, 0, len(b)+len(b)/8)
	col := 0
	for _, c := range b {
		switch c {
		case '\t':
			n := 4 - col%4
			out = append(out, "    "[:n]...)
			col += n
			continue
		case '\n':
			col = -1
		}
		out = append(out, c)
		col++
	}
	return out
}
