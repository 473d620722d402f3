// Package resume is the _resume.md save point: a document model that finds the
// frontmatter values and sections ctx owns and changes only their bytes, and the save
// that recomputes them.
package resume

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/ctxtools/ctx/markdown"
)

// MaxBytes bounds the save point ctx will edit.
const MaxBytes = 4 << 20

// Document is a parsed _resume.md. Edits return a new Document whose bytes differ from
// the old ones only inside the edited span.
type Document struct {
	src []byte
	eol string

	hasFM bool
	// fmContent is the byte range of the YAML between the --- lines; fmEnd is just after
	// the closing --- line (the start of the body).
	fmContentStart, fmContentEnd, fmEnd int
	// fmOpenEnd is just after the opening --- line.
	fmOpenEnd int
	mapping   *yaml.Node
	// values are the frontmatter's plain values; nil after an edit of the frontmatter
	// that kept the model without a parse (Frontmatter reads them again).
	values map[string]any

	// The body's structure, offsets into src: read from md on first use, then kept in
	// step with every edit (see model.go).
	structured bool
	sections   []markdown.Section
	code       [][2]int
	labels     [len(headerLabels)]headerAt

	// md is the parse of exactly src; nil when an edit updated the model in place
	// (Markdown parses on demand then).
	md *markdown.Document
	// inPlace: edits update the model instead of parsing the new bytes, and refuse
	// (errNeedsParse) an edit whose effect on the structure the model cannot follow.
	inPlace bool
}

// Span is the byte range an edit replaced: old[Start:End] became new[Start:Start+Len].
type Span struct {
	Start, End, Len int
}

// ErrFrontmatter marks a frontmatter that does not parse; such a document is never
// written.
var ErrFrontmatter = errors.New("frontmatter does not parse")

// FrontmatterError says where a frontmatter fails to parse.
type FrontmatterError struct {
	Line int
	Msg  string
}

func (e *FrontmatterError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%d: frontmatter: %s", e.Line, e.Msg)
	}
	return "frontmatter: " + e.Msg
}

func (e *FrontmatterError) Unwrap() error { return ErrFrontmatter }

// Parse reads a document. A frontmatter that does not parse, or that is not a mapping,
// is a *FrontmatterError naming the line.
func Parse(src []byte) (*Document, error) {
	d := &Document{src: src, eol: eolOf(src), md: markdown.Parse(src)}
	if err := d.findFrontmatter(); err != nil {
		return nil, err
	}
	d.values = d.md.FM.Values
	return d, nil
}

// Bytes returns the document's bytes.
func (d *Document) Bytes() []byte { return d.src }

var bom = []byte("\ufeff")

func (d *Document) findFrontmatter() error {
	off := 0
	if bytes.HasPrefix(d.src, bom) {
		off = len(bom)
	}
	// Like the reader, allow blank lines before the opening ---.
	line := 1
	for off < len(d.src) {
		end := lineEnd(d.src, off)
		text := strings.TrimSpace(string(d.src[off:end]))
		if text == "" {
			off, line = end, line+1
			continue
		}
		if text != "---" {
			return nil
		}
		d.fmOpenEnd = end
		break
	}
	if d.fmOpenEnd == 0 {
		return nil
	}
	openLine := line
	for pos := d.fmOpenEnd; pos < len(d.src); {
		end := lineEnd(d.src, pos)
		if strings.TrimSpace(string(d.src[pos:end])) == "---" {
			d.hasFM = true
			d.fmContentStart, d.fmContentEnd, d.fmEnd = d.fmOpenEnd, pos, end
			break
		}
		pos = end
	}
	if !d.hasFM {
		return &FrontmatterError{Line: openLine, Msg: "no closing --- line"}
	}
	if err := d.md.FMErr; err != nil {
		var le *markdown.LineError
		if errors.As(err, &le) {
			return &FrontmatterError{Line: le.Line, Msg: le.Msg}
		}
		return &FrontmatterError{Line: openLine, Msg: err.Error()}
	}
	d.mapping = d.md.FM.Node
	if d.mapping == nil {
		d.mapping = &yaml.Node{Kind: yaml.MappingNode}
	}
	// ctx edits a value in place and inserts keys as lines: a {...} mapping has no
	// lines to insert between, and of a key written twice no one knows which counts.
	if d.mapping.Style&yaml.FlowStyle != 0 {
		return &FrontmatterError{Line: openLine + d.mapping.Line, Msg: "written as one {...} mapping; ctx edits key: value lines, one per line"}
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(d.mapping.Content); i += 2 {
		k := d.mapping.Content[i]
		if seen[k.Value] {
			return &FrontmatterError{Line: openLine + k.Line, Msg: fmt.Sprintf("key %q appears twice", k.Value)}
		}
		seen[k.Value] = true
	}
	return nil
}

// eolOf is the line ending a document's added lines take: CRLF once the document has one.
func eolOf(src []byte) string {
	if bytes.Contains(src, []byte("\r\n")) {
		return "\r\n"
	}
	return "\n"
}

// Frontmatter returns the frontmatter as plain values.
func (d *Document) Frontmatter() map[string]any {
	if d.values == nil && d.hasFM {
		// An edit in place kept the YAML node without decoding the values again.
		if d.md != nil {
			d.values = d.md.FM.Values
		} else if fm, err := markdown.ReadFrontmatter(d.src); err == nil {
			d.values = fm.Values
		}
	}
	if d.values == nil {
		return map[string]any{}
	}
	return d.values
}

// Markdown returns the document's parse, for readers that want its structure. A
// document edited in place is parsed here, once.
func (d *Document) Markdown() *markdown.Document {
	if d.md == nil {
		d.md = markdown.Parse(d.src)
	}
	return d.md
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

// Sections returns the document's sections with offsets into Bytes().
func (d *Document) Sections() []markdown.Section {
	d.structure()
	return d.sections
}

// splice returns a new document with src[start:end] replaced by text. The new model
// comes from a parse of the new bytes, or, for a document edited in place, from the
// old model (reshape).
func (d *Document) splice(start, end int, text string) (*Document, Span, error) {
	out := make([]byte, 0, len(d.src)-(end-start)+len(text))
	out = append(out, d.src[:start]...)
	out = append(out, text...)
	out = append(out, d.src[end:]...)
	span := Span{Start: start, End: end, Len: len(text)}
	if d.inPlace {
		nd, err := d.reshape(out, start, end, text)
		if err != nil {
			return nil, Span{}, err
		}
		return nd, span, nil
	}
	nd, err := Parse(out)
	if err != nil {
		return nil, Span{}, fmt.Errorf("edit would break the document: %w", err)
	}
	return nd, span, nil
}

// lines converts "\n" in text to the document's line ending.
func (d *Document) lines(text string) string {
	if d.eol == "\n" {
		return text
	}
	return strings.ReplaceAll(strings.ReplaceAll(text, "\r\n", "\n"), "\n", d.eol)
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
	off := d.fmContentStart
	for l := 1; l < line && off < d.fmContentEnd; l++ {
		off = lineEnd(d.src, off)
	}
	for c := 1; c < col && off < d.fmContentEnd; c++ {
		_, size := utf8.DecodeRune(d.src[off:])
		off += size
	}
	return off
}
