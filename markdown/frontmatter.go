// Package markdown reads the structure of ctx's Markdown files: frontmatter, headings with
// their byte spans, and checkbox tasks. It is shared by the loader and the save point.
package markdown

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"
)

// Frontmatter is the YAML header of a Markdown file, decoded into plain values that
// encode to JSON as they were written (dates stay strings).
type Frontmatter struct {
	Present bool
	Values  map[string]any
	// Node is the YAML mapping as parsed, with its comments, styles and positions (lines
	// count from the line after the opening "---"); nil when there is no mapping.
	Node *yaml.Node
	// Body is the content after the frontmatter (all of it when there is none).
	Body []byte
}

var bom = []byte("\ufeff")

// maxYAMLNodes bounds how many values one frontmatter may expand to, so that a document
// built from nested aliases cannot make ctx allocate without end.
const maxYAMLNodes = 100_000

// LineError is a problem of a file at a line: "7: frontmatter: mapping values are not
// allowed in this context". Line is 0 when it is not known. The line is data, never
// parsed back out of the message.
type LineError struct {
	Line int
	What string // "frontmatter", "yaml"
	Msg  string
}

func (e *LineError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%d: %s: %s", e.Line, e.What, e.Msg)
	}
	return e.What + ": " + e.Msg
}

func fmError(line int, format string, args ...any) *LineError {
	return &LineError{Line: line, What: "frontmatter", Msg: fmt.Sprintf(format, args...)}
}

// FrontmatterSpan is where a document's frontmatter lies, as offsets into the
// document (a byte-order mark included). It is found by the delimiters alone: the
// first line that is not blank is "---", and the block runs to the next "---" line.
type FrontmatterSpan struct {
	Open         int // the 1-based line of the opening ---; 0 when there is none
	ContentStart int // the YAML between the --- lines
	ContentEnd   int
	End          int // just after the closing --- line; 0 when the block is not closed
}

// FindFrontmatter finds the frontmatter block of src: the one scanner of it that every
// reader and writer of ctx uses.
func FindFrontmatter(src []byte) FrontmatterSpan {
	off := 0
	if bytes.HasPrefix(src, bom) {
		off = len(bom)
	}
	var sp FrontmatterSpan
	for line := 1; off < len(src); line++ {
		next := lineEndOf(src, off)
		text := bytes.TrimSpace(src[off:next])
		if len(text) == 0 {
			off = next
			continue
		}
		if string(text) != "---" {
			return FrontmatterSpan{}
		}
		sp.Open, sp.ContentStart = line, next
		break
	}
	if sp.Open == 0 {
		return sp
	}
	for off = sp.ContentStart; off < len(src); {
		next := lineEndOf(src, off)
		// The closing line starts at the margin: an indented "---" is a block scalar's.
		if string(bytes.TrimRight(src[off:next], " \t\r\n")) == "---" {
			sp.ContentEnd, sp.End = off, next
			return sp
		}
		off = next
	}
	return sp
}

// headlessFrontmatter returns the line of the "---" that closes a frontmatter whose
// opening "---" is missing (a line deleted by hand), else 0: the document opens with
// two or more YAML "key: value" lines, with nothing between them but their values'
// indented or "- " continuation lines, and the next line is "---". Such a document is
// a Markdown setext heading to CommonMark, but no person writes one that way, and a
// writer that took it for text would add a second frontmatter above the first.
func headlessFrontmatter(src []byte) int {
	keys := 0
	for line, off := 1, 0; off < len(src); line++ {
		next := lineEndOf(src, off)
		text := strings.TrimRight(string(src[off:next]), " \t\r\n")
		switch {
		case text == "---":
			if keys >= 2 {
				return line
			}
			return 0
		case yamlKeyLineRE().MatchString(text):
			keys++
		case keys > 0 && (strings.HasPrefix(text, " ") || strings.HasPrefix(text, "\t") || strings.HasPrefix(text, "- ")):
		default:
			return 0
		}
		off = next
	}
	return 0
}

var yamlKeyLineRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]*:(?:[ \t]|$)`) })

// ReadFrontmatter splits data into frontmatter and body. A byte-order mark and CRLF line
// ends are accepted. An unclosed or unparsable frontmatter is an error whose message
// carries the line number in the file ("3: frontmatter: ...").
func ReadFrontmatter(data []byte) (Frontmatter, error) {
	return readFrontmatter(data, FindFrontmatter(data))
}

func readFrontmatter(data []byte, sp FrontmatterSpan) (Frontmatter, error) {
	body := bytes.TrimPrefix(data, bom)
	if sp.Open == 0 {
		if line := headlessFrontmatter(body); line > 0 {
			return Frontmatter{Body: body}, fmError(line, "this --- closes key: value lines that no --- opens; add --- as the first line")
		}
		return Frontmatter{Body: body}, nil
	}
	if sp.End == 0 {
		return Frontmatter{Body: body}, fmError(sp.Open, "no closing --- line")
	}
	var node yaml.Node
	if err := yaml.Unmarshal(data[sp.ContentStart:sp.ContentEnd], &node); err != nil {
		return Frontmatter{Body: body}, YAMLError(err, sp.Open)
	}
	rest := data[sp.End:]
	if node.Kind == 0 {
		// "---\n---" and a block of comments parse to an empty document: present but empty.
		return Frontmatter{Present: true, Values: map[string]any{}, Body: rest}, nil
	}
	doc := &node
	if doc.Kind == yaml.DocumentNode && len(doc.Content) == 1 {
		doc = doc.Content[0]
	}
	if doc.Kind != yaml.MappingNode {
		return Frontmatter{Body: body}, fmError(sp.Open+doc.Line, "expected key: value lines")
	}
	budget := maxYAMLNodes
	v, err := plainValue(doc, &budget)
	if err != nil {
		return Frontmatter{Body: body}, fmError(sp.Open+doc.Line, "%v", err)
	}
	return Frontmatter{Present: true, Values: v.(map[string]any), Node: doc, Body: rest}, nil
}

var yamlLineRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^yaml: (?:line (\d+): )?(.*)$`) })

// YAMLError rewrites a YAML decoding error so that its line number counts from the top
// of the file (offset is the line of the opening "---", or 0 for a plain YAML file):
// "7: frontmatter: mapping values are not allowed in this context".
// The result is a *LineError.
func YAMLError(err error, offset int) error {
	var le *LineError
	if errors.As(err, &le) {
		return le
	}
	var te *yaml.TypeError
	if errors.As(err, &te) && len(te.Errors) > 0 {
		err = errors.New("yaml: " + te.Errors[0])
	}
	m := yamlLineRE().FindStringSubmatch(err.Error())
	if m == nil {
		return &LineError{What: "frontmatter", Msg: err.Error()}
	}
	what := "frontmatter"
	if offset == 0 {
		what = "yaml"
	}
	if m[1] == "" {
		return &LineError{What: what, Msg: m[2]}
	}
	n, _ := strconv.Atoi(m[1])
	return &LineError{Line: n + offset, What: what, Msg: m[2]}
}

func plainValue(n *yaml.Node, budget *int) (any, error) {
	*budget--
	if *budget < 0 {
		return nil, errors.New("too many values (nested aliases?)")
	}
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return nil, nil
		}
		return plainValue(n.Content[0], budget)
	case yaml.AliasNode:
		return plainValue(n.Alias, budget)
	case yaml.SequenceNode:
		out := make([]any, 0, len(n.Content))
		for _, c := range n.Content {
			v, err := plainValue(c, budget)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	case yaml.MappingNode:
		out := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			val, err := plainValue(v, budget)
			if err != nil {
				return nil, err
			}
			out[k.Value] = val
		}
		return out, nil
	}
	return scalarValue(n), nil
}

func scalarValue(n *yaml.Node) any {
	switch n.ShortTag() {
	case "!!null":
		return nil
	case "!!bool":
		var b bool
		if n.Decode(&b) == nil {
			return b
		}
	case "!!int":
		var i int64
		if n.Decode(&i) == nil {
			return i
		}
	case "!!float":
		var f float64
		// NaN and infinities have no JSON form; keep them as written.
		if n.Decode(&f) == nil && !math.IsNaN(f) && !math.IsInf(f, 0) {
			return f
		}
	}
	return n.Value
}

// String returns the frontmatter value of key as text ("" when absent or not a scalar).
func (f Frontmatter) String(key string) string {
	switch v := f.Values[key].(type) {
	case string:
		return v
	case int64, float64, bool:
		return fmt.Sprint(v)
	}
	return ""
}

// Strings returns the value of key as a list of strings: a list's string items, or a
// single string as a list of one.
func (f Frontmatter) Strings(key string) []string {
	switch v := f.Values[key].(type) {
	case string:
		if v != "" {
			return []string{v}
		}
	case []any:
		out := make([]string, 0, len(v))
		for _, item := range v {
			if s, ok := item.(string); ok && s != "" {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// Locate prefixes an error with the file it is about: "path:3: ..." when the error
// starts with a line number ("3: ..."), as the frontmatter errors do, else "path: ...".
func Locate(path string, err error) string {
	var le *LineError
	if errors.As(err, &le) && le.Line > 0 && err.Error() == le.Error() {
		return fmt.Sprintf("%s:%d: %s: %s", path, le.Line, le.What, le.Msg)
	}
	msg := err.Error()
	if lineNumberRE().MatchString(msg) {
		return path + ":" + msg
	}
	return path + ": " + msg
}

var lineNumberRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\d+: `) })
