package markdown

import (
	"bytes"

	"github.com/yuin/goldmark/ast"
)

// Kind is what a line of a document is in CommonMark's block structure: the kind of
// the leaf block it belongs to.
type Kind uint8

// The kinds of line. A line that belongs to no leaf block is KindBlank when it holds
// nothing but container markers and space, else KindOther (a list marker alone, a
// link reference definition).
const (
	KindBlank Kind = iota
	KindOther
	KindFrontmatter
	KindParagraph
	KindHeading // an ATX heading, or a setext heading with its underline
	KindCode    // an indented code block, or a fenced one with its fences
	KindHTML
	KindBreak // a thematic break
)

var kindNames = [...]string{"blank", "other", "frontmatter", "paragraph", "heading", "code", "html", "break"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "kind?"
}

// Line is one line of a document as Markdown structure reads it.
type Line struct {
	Start int // offset of the line's first byte
	End   int // offset of the end of its content, before the line ending
	Next  int // offset of the next line (after the line ending)
	Kind  Kind
	// Quote and List are how many block quotes and list items hold the line.
	Quote, List int
	// Leaf numbers the leaf block the line belongs to (the lines of one paragraph share
	// it); -1 for a line of none.
	Leaf int
	// Top numbers the top-level block (a child of the document) that holds the line;
	// -1 for a line between blocks.
	Top int
}

// TopLevel reports whether the line sits directly in the document, in no quote or list.
func (l Line) TopLevel() bool { return l.Quote == 0 && l.List == 0 }

// splitLines returns the lines of src with their offsets, every line KindBlank or
// KindOther, in no block.
func splitLines(src []byte) []Line {
	var out []Line
	for off := 0; off < len(src); {
		next := lineEndOf(src, off)
		end := next
		for end > off && (src[end-1] == '\n' || src[end-1] == '\r') {
			end--
		}
		kind := KindBlank
		if len(bytes.Trim(src[off:end], " \t>")) > 0 {
			kind = KindOther
		}
		out = append(out, Line{Start: off, End: end, Next: next, Kind: kind, Leaf: -1, Top: -1})
		off = next
	}
	return out
}

// linesOf classifies every line of src from the parse doc of its copy c; fmEnd is
// where the frontmatter ends.
func linesOf(doc ast.Node, src []byte, c *parseCopy, fmEnd int) []Line {
	blank := c.text
	lines := splitLines(src)
	if len(lines) == 0 {
		return lines
	}
	starts := make(lineIndex, len(lines))
	for i, l := range lines {
		starts[i] = l.Start
	}
	lineOf := func(off int) int { return starts.lineOf(c.orig(off)) - 1 }
	for i := range lines {
		if lines[i].Start < fmEnd {
			lines[i].Kind = KindFrontmatter
		}
	}
	// Blocks in document order, so that a block's extent can end where the next begins.
	type leaf struct {
		n           ast.Node
		first, last int
		quote, list int
		top         int
	}
	var leaves []leaf
	top := -1
	for n := doc.FirstChild(); n != nil; n = n.NextSibling() {
		top++
		_ = ast.Walk(n, func(c ast.Node, entering bool) (ast.WalkStatus, error) {
			if !entering || c.Type() != ast.TypeBlock {
				return ast.WalkContinue, nil
			}
			switch c.(type) {
			case *ast.Blockquote, *ast.List, *ast.ListItem:
				return ast.WalkContinue, nil
			}
			quote, list := 0, 0
			for p := c.Parent(); p != nil; p = p.Parent() {
				switch p.(type) {
				case *ast.Blockquote:
					quote++
				case *ast.ListItem:
					list++
				}
			}
			first, last, ok := leafExtent(c, blank, lineOf)
			if ok {
				leaves = append(leaves, leaf{n: c, first: first, last: last, quote: quote, list: list, top: top})
			}
			return ast.WalkSkipChildren, nil
		})
	}
	// Top-level containers claim their lines between blocks too (a blank line inside a
	// quote), so that Top tells which quote a line is in.
	top = -1
	for n := doc.FirstChild(); n != nil; n = n.NextSibling() {
		top++
		if n.Pos() < 0 {
			continue
		}
		from := lineOf(n.Pos())
		to := len(lines) - 1
		if next := n.NextSibling(); next != nil && next.Pos() >= 0 {
			to = lineOf(next.Pos()) - 1
		}
		for i := from; i <= to && i < len(lines); i++ {
			if lines[i].Kind != KindFrontmatter {
				lines[i].Top = top
			}
		}
	}
	// A list item or quote that holds no leaf on its first line (an empty item "-", a
	// ">" alone) still holds that line.
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering || n.Pos() < 0 {
			return ast.WalkContinue, nil
		}
		switch n.(type) {
		case *ast.ListItem, *ast.Blockquote:
			quote, list := 0, 0
			for p := n; p != nil; p = p.Parent() {
				switch p.(type) {
				case *ast.Blockquote:
					quote++
				case *ast.ListItem:
					list++
				}
			}
			if i := lineOf(n.Pos()); i < len(lines) && lines[i].Leaf < 0 && lines[i].Kind != KindFrontmatter {
				lines[i].Quote, lines[i].List = quote, list
			}
		}
		return ast.WalkContinue, nil
	})
	for id, lf := range leaves {
		kind := kindOf(lf.n)
		last := lf.last
		if _, fenced := lf.n.(*ast.FencedCodeBlock); fenced {
			next := len(lines)
			if id+1 < len(leaves) {
				next = leaves[id+1].first
			}
			if after := last + 1; after < next && isClosingFence(expandTabs(src[lines[after].Start:lines[after].End]), fenceChar(blank, lf.n.Pos())) {
				last = after
			}
		}
		for i := lf.first; i <= last && i < len(lines); i++ {
			lines[i].Kind, lines[i].Quote, lines[i].List, lines[i].Leaf, lines[i].Top = kind, lf.quote, lf.list, id, lf.top
		}
	}
	return lines
}

// leafExtent returns the first and last line of a leaf block. Paragraphs and code are
// their lines (a paragraph's first lines may have become link reference definitions);
// the rest start where the parser opened them.
func leafExtent(n ast.Node, src []byte, lineOf func(int) int) (first, last int, ok bool) {
	segs := n.Lines()
	first, last = -1, -1
	if segs.Len() > 0 {
		first = lineOf(segs.At(0).Start)
		s := segs.At(segs.Len() - 1)
		last = lineOf(max(s.Start, s.Stop-1))
	}
	switch b := n.(type) {
	case *ast.Paragraph, *ast.TextBlock, *ast.LinkReferenceDefinition:
	case *ast.CodeBlock:
		// Blank lines at the end of an indented code block are not part of it.
		for i := segs.Len() - 1; i >= 0; i-- {
			seg := segs.At(i)
			if len(bytes.TrimSpace(seg.Value(src))) != 0 {
				break
			}
			last = lineOf(max(seg.Start, seg.Stop-1)) - 1
		}
	case *ast.Heading:
		if n.Pos() < 0 {
			break
		}
		first = lineOf(n.Pos())
		if isATXAt(src, n.Pos()) || last < 0 {
			last = first
		} else {
			last++ // the setext underline
		}
	case *ast.HTMLBlock:
		if n.Pos() >= 0 {
			first = lineOf(n.Pos())
		}
		if b.HasClosure() {
			last = max(last, lineOf(b.ClosureLine.Start))
		}
		last = max(last, first)
	default: // fenced code, thematic break
		if n.Pos() >= 0 {
			first = lineOf(n.Pos())
		}
		last = max(last, first)
	}
	return first, last, first >= 0
}

// isATXAt reports whether the block at off opens with an ATX heading's #s.
func isATXAt(src []byte, off int) bool {
	i := off
	for i < len(src) && i-off < 3 && src[i] == ' ' {
		i++
	}
	n := 0
	for i < len(src) && src[i] == '#' {
		i, n = i+1, n+1
	}
	return n >= 1 && n <= 6 && (i == len(src) || src[i] == ' ' || src[i] == '\t' || src[i] == '\n' || src[i] == '\r')
}

// fenceChar is the character of the fence opened at off.
func fenceChar(src []byte, off int) byte {
	for off >= 0 && off < len(src) && src[off] == ' ' {
		off++
	}
	if off >= 0 && off < len(src) {
		return src[off]
	}
	return '`'
}

// isClosingFence reports whether line (with its container markers) is a run of three
// or more fence characters and nothing else.
func isClosingFence(line []byte, c byte) bool {
	t := bytes.TrimLeft(line, " \t>")
	n := 0
	for n < len(t) && t[n] == c {
		n++
	}
	return n >= 3 && len(bytes.TrimSpace(t[n:])) == 0
}

func kindOf(n ast.Node) Kind {
	switch n.(type) {
	case *ast.Paragraph, *ast.TextBlock:
		return KindParagraph
	case *ast.Heading:
		return KindHeading
	case *ast.CodeBlock, *ast.FencedCodeBlock:
		return KindCode
	case *ast.HTMLBlock:
		return KindHTML
	case *ast.ThematicBreak:
		return KindBreak
	}
	return KindOther
}
