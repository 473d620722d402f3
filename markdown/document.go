package markdown

import (
	"sync"
	"sync/atomic"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/text"
)

// Document is a Markdown file parsed once: its frontmatter (where it lies, its values
// and YAML node), and, read on first use and then kept, its headings with their spans,
// its code blocks and the kind of each line. Every reader of a save point (the load,
// show, the save's own edits) asks one Document instead of parsing the bytes again.
type Document struct {
	src []byte
	// FM is the frontmatter; FMErr says why it did not parse (a *LineError); FMSpan is
	// where it lies.
	FM     Frontmatter
	FMErr  error
	FMSpan FrontmatterSpan

	once     sync.Once
	sections []Section
	code     [][2]int
	lines    []Line
}

// parses counts the documents parsed by this process.
var parses atomic.Int64

// Parses reports how many documents Parse has read in this process, so that a test can
// prove that a command parses each file once.
func Parses() int64 { return parses.Load() }

// Parse reads src into a Document. It never fails: a frontmatter that does not parse is
// FMErr, and the body is still read as Markdown.
func Parse(src []byte) *Document {
	parses.Add(1)
	d := &Document{src: src, FMSpan: FindFrontmatter(src)}
	d.FM, d.FMErr = readFrontmatter(src, d.FMSpan)
	return d
}

// Bytes returns the document's source.
func (d *Document) Bytes() []byte { return d.src }

func (d *Document) structure() {
	d.once.Do(func() {
		blank := blankFrontmatter(d.src)
		doc := taskParser().Parse(text.NewReader(blank))
		d.sections, d.code = sectionsOf(doc, blank), codeBlocksOf(doc)
		d.lines = linesOf(doc, d.src, blank, d.FMSpan.End)
	})
}

// Sections returns the document's top-level headings (see Sections).
func (d *Document) Sections() []Section {
	d.structure()
	return d.sections
}

// CodeBlocks returns the byte ranges of the document's code blocks (see CodeBlocks).
func (d *Document) CodeBlocks() [][2]int {
	d.structure()
	return d.code
}

// Lines returns every line of the document with the kind of block it belongs to and
// the containers that hold it, as CommonMark reads them.
func (d *Document) Lines() []Line {
	d.structure()
	return d.lines
}

func codeBlocksOf(doc ast.Node) [][2]int {
	var out [][2]int
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch n.(type) {
		case *ast.FencedCodeBlock, *ast.CodeBlock:
			if lines := n.Lines(); lines.Len() > 0 {
				out = append(out, [2]int{lines.At(0).Start, lines.At(lines.Len() - 1).Stop})
			}
			return ast.WalkSkipChildren, nil
		}
		return ast.WalkContinue, nil
	})
	return out
}
