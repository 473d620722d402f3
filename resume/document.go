// Package resume is the _resume.md save point, and nothing that knows a workspace: its
// vocabulary (vocab.go), one parse of a document (this file), the readers the load needs
// (read.go), which lines are ctx's (header.go), the edits a save makes, planned against
// the one parse and applied as one batch (plan.go), and the save itself (save.go), to
// which the caller hands what it needs of the workspace (Target).
package resume

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/ctxtools/ctx/markdown"
)

// MaxBytes bounds the save point ctx will edit.
const MaxBytes = 4 << 20

// Document is one parse of a save point: its bytes, its frontmatter and its Markdown
// structure. It never changes; a save plans edits against it and parses the result.
type Document struct {
	src []byte
	eol string
	md  *markdown.Document
	fm  markdown.FrontmatterSpan
	// mapping is the frontmatter's YAML mapping (nil without one, or when it does not
	// parse).
	mapping *yaml.Node

	headersOnce sync.Once
	headers     [len(headerLabels)]header
}

// ErrFrontmatter marks a frontmatter that does not parse; such a document is never
// written.
var ErrFrontmatter = errors.New("frontmatter does not parse")

// Parse reads a document. It never fails: a frontmatter that does not parse is
// reported by FrontmatterErr, and the body is still read.
func Parse(src []byte) *Document {
	return FromMarkdown(markdown.Parse(src))
}

// FromMarkdown is the save point of a document already parsed.
func FromMarkdown(md *markdown.Document) *Document {
	d := &Document{src: md.Bytes(), eol: eolOf(md.Bytes()), md: md, fm: md.FMSpan}
	if md.FMErr == nil {
		d.mapping = md.FM.Node
	}
	return d
}

// Bytes returns the document's bytes.
func (d *Document) Bytes() []byte { return d.src }

// Markdown returns the document's Markdown parse.
func (d *Document) Markdown() *markdown.Document { return d.md }

// FrontmatterErr says why the frontmatter does not parse (a *markdown.LineError), or nil.
func (d *Document) FrontmatterErr() error { return d.md.FMErr }

// editable reports why ctx may not edit the document: a frontmatter that does not
// parse, that is one {...} mapping (no lines to insert between), or that names a key
// twice (no one knows which counts). The error names the line and wraps ErrFrontmatter.
func (d *Document) editable() error {
	if err := d.md.FMErr; err != nil {
		var le *markdown.LineError
		if errors.As(err, &le) {
			return frontmatterError{le}
		}
		return fmt.Errorf("%w: %w", err, ErrFrontmatter)
	}
	if d.mapping == nil {
		return nil
	}
	if line, ok := d.otherLineBreak(); ok {
		return frontmatterError{&markdown.LineError{Line: line, What: "frontmatter", Msg: "a line break YAML counts and ctx does not (a lone CR, U+0085, U+2028 or U+2029); ctx edits only frontmatter whose lines end in LF or CRLF"}}
	}
	if d.mapping.Style&yaml.FlowStyle != 0 {
		return frontmatterError{&markdown.LineError{Line: d.fm.Open + d.mapping.Line, What: "frontmatter", Msg: "written as one {...} mapping; ctx edits key: value lines, one per line"}}
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(d.mapping.Content); i += 2 {
		k := d.mapping.Content[i]
		if seen[k.Value] {
			return frontmatterError{&markdown.LineError{Line: d.fm.Open + k.Line, What: "frontmatter", Msg: fmt.Sprintf("key %q appears twice", k.Value)}}
		}
		seen[k.Value] = true
	}
	return nil
}

// otherLineBreak finds, in the frontmatter, a line break of YAML's that is not LF or
// CRLF: yaml.Node's line numbers count it, and offsetOf would then miss by a line.
func (d *Document) otherLineBreak() (int, bool) {
	fm := d.src[d.fm.ContentStart:d.fm.ContentEnd]
	line := d.fm.Open + 1
	for i := 0; i < len(fm); {
		r, size := utf8.DecodeRune(fm[i:])
		switch {
		case r == '\n':
			line++
		case r == '\r' && (i+1 >= len(fm) || fm[i+1] != '\n'), r == '\u0085', r == '\u2028', r == '\u2029':
			return line, true
		}
		i += size
	}
	return 0, false
}

// frontmatterError is a frontmatter problem at a line that keeps ctx from editing.
type frontmatterError struct{ *markdown.LineError }

func (e frontmatterError) Unwrap() []error { return []error{e.LineError, ErrFrontmatter} }

// eolOf is the line ending a document's added lines take: CRLF once the document has one.
func eolOf(src []byte) string {
	if bytes.Contains(src, []byte("\r\n")) {
		return "\r\n"
	}
	return "\n"
}

// Frontmatter returns the frontmatter as plain values (empty when there is none).
func (d *Document) Frontmatter() map[string]any {
	if d.md.FM.Values == nil {
		return map[string]any{}
	}
	return d.md.FM.Values
}

// Field returns the text of a top-level scalar frontmatter value and whether it exists.
func (d *Document) Field(key string) (string, bool) {
	if d.mapping == nil {
		return "", false
	}
	for i := 0; i+1 < len(d.mapping.Content); i += 2 {
		if d.mapping.Content[i].Value == key {
			return d.mapping.Content[i+1].Value, true
		}
	}
	return "", false
}

// Sections returns the document's top-level headings with offsets into Bytes().
func (d *Document) Sections() []markdown.Section { return d.md.Sections() }

// findSection finds a section by its path of titles, recognising the titles people
// give the same section (SameTitle) at any heading level. A subsection is looked for
// inside its parent, else as a section of its own at level 2 ("## Key Decisions" with
// no Critical Context above); never inside another section.
func (d *Document) findSection(path ...string) (markdown.Section, bool) {
	last := path[len(path)-1]
	if len(path) == 1 {
		return FindEquivalent(d.Sections(), last)
	}
	if parent, ok := d.findSection(path[:len(path)-1]...); ok {
		for _, s := range d.Sections() {
			if s.Start >= parent.BodyStart && s.Start < parent.End && s.Level > parent.Level && SameTitle(s.Title, last) {
				return s, true
			}
		}
		return markdown.Section{}, false
	}
	for _, s := range d.Sections() {
		if s.Level == 2 && SameTitle(s.Title, last) {
			return s, true
		}
	}
	return markdown.Section{}, false
}

// lineIndex returns the index of the line holding offset off.
func (d *Document) lineIndex(off int) int {
	lines := d.md.Lines()
	lo, hi := 0, len(lines)
	for lo+1 < hi {
		mid := (lo + hi) / 2
		if lines[mid].Start <= off {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo
}

// lineEnd returns the offset just after the newline ending the line at off.
func lineEnd(src []byte, off int) int {
	if off >= len(src) {
		return len(src)
	}
	if i := bytes.IndexByte(src[off:], '\n'); i >= 0 {
		return off + i + 1
	}
	return len(src)
}

// lineStart returns the offset of the start of the line holding off.
func lineStart(src []byte, off int) int {
	return bytes.LastIndexByte(src[:off], '\n') + 1
}

// contentEnd trims the line ending from the line [start, end).
func contentEnd(src []byte, start, end int) int {
	for end > start && (src[end-1] == '\n' || src[end-1] == '\r') {
		end--
	}
	return end
}

// offsetOf converts a 1-based line and column of the frontmatter YAML (as yaml.Node
// reports them, counting characters) into a byte offset of the document.
func (d *Document) offsetOf(line, col int) int {
	off := d.fm.ContentStart
	for l := 1; l < line && off < d.fm.ContentEnd; l++ {
		off = lineEnd(d.src, off)
	}
	for c := 1; c < col && off < d.fm.ContentEnd; c++ {
		_, size := utf8.DecodeRune(d.src[off:])
		off += size
	}
	return off
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
