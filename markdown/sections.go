package markdown

import (
	"bytes"
	"strings"

	"github.com/yuin/goldmark/ast"
)

// Section is a heading of a document and the span of its body, as byte offsets into the
// source given to Sections. The body runs from the line after the heading to the next
// heading of the same or a higher level (or the end).
type Section struct {
	Level     int
	Title     string
	Start     int // first byte of the heading line
	BodyStart int // first byte after the heading line(s)
	End       int // end of the body
}

// Body returns the section's body from src.
func (s Section) Body(src []byte) []byte { return src[s.BodyStart:s.End] }

// Sections returns the top-level headings of src in order. Headings inside code blocks,
// lists or quotes are not sections.
func Sections(src []byte) []Section {
	return Parse(src).Sections()
}

func sectionsOf(doc ast.Node, src []byte) []Section {
	var out []Section
	prevEnd := 0
	for n := doc.FirstChild(); n != nil; n = n.NextSibling() {
		start, end, ok := blockSpan(n, src)
		h, isHeading := n.(*ast.Heading)
		if isHeading {
			if !ok {
				// An empty ATX heading ("##") carries no text segment: find its line
				// between the previous block and the next one.
				start = emptyHeadingLine(src, prevEnd, h.Level)
				end = lineEndOf(src, start)
			}
			lineStart := lineStartOf(src, start)
			bodyStart := lineEndAfter(src, end)
			if !isATX(src[lineStart:]) {
				bodyStart = lineEndOf(src, bodyStart) // skip the setext underline
			}
			out = append(out, Section{
				Level:     h.Level,
				Title:     strings.TrimSpace(string(blockText(h, src))),
				Start:     lineStart,
				BodyStart: bodyStart,
			})
			prevEnd = bodyStart
			continue
		}
		if ok {
			prevEnd = lineEndAfter(src, end)
		}
	}
	for i := range out {
		out[i].End = len(src)
		for j := i + 1; j < len(out); j++ {
			if out[j].Level <= out[i].Level {
				out[i].End = out[j].Start
				break
			}
		}
		if out[i].End < out[i].BodyStart {
			out[i].End = out[i].BodyStart
		}
	}
	return out
}

// Find returns the first section whose title equals title, ignoring case and
// surrounding space.
func Find(sections []Section, title string) (Section, bool) {
	for _, s := range sections {
		if strings.EqualFold(s.Title, strings.TrimSpace(title)) {
			return s, true
		}
	}
	return Section{}, false
}

// blockSpan returns the byte range covered by the text segments of n and its
// descendants.
func blockSpan(n ast.Node, src []byte) (start, end int, ok bool) {
	start, end = -1, -1
	_ = ast.Walk(n, func(c ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering || c.Type() != ast.TypeBlock {
			return ast.WalkContinue, nil
		}
		lines := c.Lines()
		if lines.Len() == 0 {
			return ast.WalkContinue, nil
		}
		if s := lines.At(0).Start; start < 0 || s < start {
			start = s
		}
		if e := lines.At(lines.Len() - 1).Stop; e > end {
			end = e
		}
		return ast.WalkContinue, nil
	})
	if start < 0 {
		return 0, 0, false
	}
	// A fenced code block's segments exclude its closing fence.
	if fc, isFence := n.(*ast.FencedCodeBlock); isFence && fc.Lines().Len() > 0 {
		end = skipClosingFence(src, end)
	}
	return start, end, true
}

func skipClosingFence(src []byte, end int) int {
	if end > len(src) {
		return len(src)
	}
	end = lineEndAfter(src, end)
	next := lineEndOf(src, end)
	line := strings.TrimSpace(string(src[end:next]))
	if strings.HasPrefix(line, "```") || strings.HasPrefix(line, "~~~") {
		return next
	}
	return end
}

func emptyHeadingLine(src []byte, from, level int) int {
	marker := strings.Repeat("#", level)
	for off := from; off < len(src); off = lineEndOf(src, off) {
		line := strings.TrimSpace(string(src[off:lineEndOf(src, off)]))
		if strings.TrimRight(line, "#") == "" && strings.HasPrefix(line, marker) {
			return off
		}
		if lineEndOf(src, off) == off {
			break
		}
	}
	return from
}

func isATX(line []byte) bool {
	return bytes.HasPrefix(bytes.TrimLeft(line, " "), []byte("#"))
}

// lineStartOf returns the offset of the start of the line holding off.
func lineStartOf(src []byte, off int) int {
	if off > len(src) {
		off = len(src)
	}
	return bytes.LastIndexByte(src[:off], '\n') + 1
}

// lineEndAfter returns the end of the line whose content stops at end; a segment may
// stop just after its newline already.
func lineEndAfter(src []byte, end int) int {
	if end > 0 && end <= len(src) && src[end-1] == '\n' {
		return end
	}
	return lineEndOf(src, end)
}

// lineEndOf returns the offset just after the newline ending the line holding off (or
// len(src) on the last line).
func lineEndOf(src []byte, off int) int {
	if off >= len(src) {
		return len(src)
	}
	i := bytes.IndexByte(src[off:], '\n')
	if i < 0 {
		return len(src)
	}
	return off + i + 1
}
