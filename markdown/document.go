package markdown

import (
	"sync"
	"sync/atomic"

	"github.com/yuin/goldmark/text"
)

// Document is a Markdown file parsed once: its frontmatter (where it lies, its values
// and YAML node), and, read on first use and then kept, its headings with their spans and the
// kind of each line. Every reader of a save point (the load,
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
		c := newParseCopy(d.src)
		doc := taskParser().Parse(text.NewReader(c.text))
		d.sections = sectionsOf(doc, c.text)
		for i := range d.sections {
			s := &d.sections[i]
			s.Start, s.BodyStart, s.End = c.orig(s.Start), c.orig(s.BodyStart), c.orig(s.End)
		}
		d.lines = linesOf(doc, d.src, c, d.FMSpan.End)
	})
}

// Sections returns the document's top-level headings (see Sections).
func (d *Document) Sections() []Section {
	d.structure()
	return d.sections
}

// Lines returns every line of the document with the kind of block it belongs to and
// the containers that hold it, as CommonMark reads them.
func (d *Document) Lines() []Line {
	d.structure()
	return d.lines
}
