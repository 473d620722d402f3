package resume

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/ctxtools/ctx/markdown"
)

// FrontmatterKeys is the template order of the frontmatter keys: a missing key is
// inserted after the nearest key before it in this order.
var FrontmatterKeys = []string{
	"resume_version", "last_updated", "compaction_count", "total_tokens_approx", "session_count",
	"project_id", "project_name", "project_status",
	"current_phase", "current_skill", "current_workflow_step",
	"current_section", "current_section_name", "next_task_number", "next_task_description",
	"progress_tasks_completed", "progress_tasks_total", "progress_percentage",
	"planning_completed",
}

// SetField sets a top-level frontmatter value. Only the value's bytes change; a missing
// key is inserted after its template neighbour; a document without frontmatter gets
// one. value is a string, an int, a bool or a time.Time.
func (d *Document) SetField(key string, value any) (*Document, Span, error) {
	if !d.hasFM {
		text := "---\n" + key + ": " + scalarText(value, 0) + "\n---\n"
		at := 0
		if bytes.HasPrefix(d.src, bom) {
			at = len(bom)
		}
		return d.splice(at, at, d.lines(text))
	}
	pairs := d.mapping.Content
	for i := 0; i+1 < len(pairs); i += 2 {
		if pairs[i].Value != key {
			continue
		}
		start, end := d.valueSpan(i)
		old := pairs[i+1]
		text := scalarText(value, old.Style)
		if start == end || d.src[start-1] == ':' {
			text = " " + text // the span starts right after "key:"
		}
		if string(d.src[start:end]) == text {
			return d, Span{Start: start, End: start, Len: 0}, nil
		}
		return d.spliceField(start, end, text, i, "")
	}
	at, indent := d.insertionPoint(key)
	return d.spliceField(at, at, d.lines(indent+key+": "+scalarText(value, 0)+"\n"), -1, key)
}

// valueSpan returns the byte range of the value of pair i (the key's index).
func (d *Document) valueSpan(i int) (int, int) {
	key, val := d.mapping.Content[i], d.mapping.Content[i+1]
	keyStart := d.offsetOf(key.Line, key.Column)
	keyLineEnd := contentEnd(d.src, keyStart, lineEnd(d.src, keyStart))
	if val.Kind == yaml.ScalarNode && val.Tag == "!!null" && val.Value == "" {
		// "key:" or "key: # comment": the value goes right after the colon.
		if colon := bytes.IndexByte(d.src[keyStart:keyLineEnd], ':'); colon >= 0 {
			at := keyStart + colon + 1
			return at, at
		}
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
			if end, ok := closingQuote(d.src[:d.fmContentEnd], start, '"'); ok {
				return start, end
			}
		case yaml.SingleQuotedStyle:
			if end, ok := closingQuote(d.src[:d.fmContentEnd], start, '\''); ok {
				return start, end
			}
		case 0, yaml.TaggedStyle:
			if !d.continues(lineEnd(d.src, start), keyIndent) {
				return start, plainEnd(d.src, start, contentEnd(d.src, start, lineEnd(d.src, start)))
			}
		}
	}
	// A block, a list, a map or a multi-line value: everything from the colon up to
	// the next key.
	if colon := bytes.IndexByte(d.src[keyStart:keyLineEnd], ':'); colon >= 0 {
		start = keyStart + colon + 1
	}
	end := d.fmContentEnd
	if i+2 < len(d.mapping.Content) {
		next := d.mapping.Content[i+2]
		end = lineStart(d.src, d.offsetOf(next.Line, next.Column))
	}
	// Blank lines and the person's comments between this value and the next key are
	// not part of the value.
	for end > start {
		ls := lineStart(d.src, end-1)
		line := d.src[ls:end]
		trimmed := bytes.TrimSpace(line)
		indent := len(line) - len(bytes.TrimLeft(line, " \t"))
		if len(trimmed) != 0 && (trimmed[0] != '#' || indent > keyIndent) {
			break
		}
		end = ls
	}
	return start, contentEnd(d.src, start, end)
}

// continues reports whether the line at off carries on a plain value begun on the line
// before: a line indented deeper than the key, that is neither blank nor a comment.
func (d *Document) continues(off, keyIndent int) bool {
	if off >= d.fmContentEnd {
		return false
	}
	line := d.src[off:lineEnd(d.src, off)]
	trimmed := bytes.TrimSpace(line)
	if len(trimmed) == 0 || trimmed[0] == '#' {
		return false
	}
	return len(line)-len(bytes.TrimLeft(line, " \t")) > keyIndent
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

// insertionPoint returns where a missing key goes: on the line after the nearest
// preceding template key present, else at the top of the frontmatter.
func (d *Document) insertionPoint(key string) (int, string) {
	pos := -1
	for i, k := range FrontmatterKeys {
		if k == key {
			pos = i
		}
	}
	present := map[string]int{}
	for i := 0; i+1 < len(d.mapping.Content); i += 2 {
		present[d.mapping.Content[i].Value] = i
	}
	indent := ""
	if len(d.mapping.Content) > 0 {
		indent = strings.Repeat(" ", d.mapping.Content[0].Column-1)
	}
	for j := pos - 1; j >= 0; j-- {
		i, ok := present[FrontmatterKeys[j]]
		if !ok {
			continue
		}
		if i+2 < len(d.mapping.Content) {
			next := d.mapping.Content[i+2]
			return lineStart(d.src, d.offsetOf(next.Line, next.Column)), indent
		}
		return d.fmContentEnd, indent
	}
	if len(d.mapping.Content) > 0 && pos >= 0 {
		first := d.mapping.Content[0]
		return lineStart(d.src, d.offsetOf(first.Line, first.Column)), indent
	}
	return d.fmContentEnd, indent
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

// Block markers delimit the lines ctx owns inside a section that may also hold a
// person's text.
func blockBegin(name string) string { return "<!-- ctx:begin " + name + " -->" }
func blockEnd(name string) string   { return "<!-- ctx:end " + name + " -->" }

// ReplaceBlock sets the lines between the ctx markers name in the section titled
// title (the section must exist). Without markers, a marked block is inserted at the
// top of the section body and whatever was there stays below it.
func (d *Document) ReplaceBlock(title, name, content string) (*Document, Span, error) {
	s, ok := markdown.Find(d.Sections(), title)
	if !ok {
		return nil, Span{}, fmt.Errorf("no section %q", title)
	}
	body := d.src[s.BodyStart:s.End]
	// Markers inside a code block are an example, not ctx's block.
	if b := d.markerAt(s.BodyStart, s.End, blockBegin(name)); b >= 0 {
		from := lineEnd(d.src, b)
		if e := d.markerAt(from, s.End, blockEnd(name)); e >= 0 {
			to := lineStart(d.src, e)
			if string(d.src[from:to]) == d.lines(content) {
				return d, Span{Start: from, End: from}, nil
			}
			return d.splice(from, to, d.lines(content))
		}
	}
	text := blockBegin(name) + "\n" + content + blockEnd(name) + "\n"
	at := s.BodyStart
	if at > 0 && d.src[at-1] != '\n' {
		text = "\n" + text
	}
	if strings.TrimSpace(string(body)) != "" && !bytes.HasPrefix(bytes.TrimLeft(body, " \t"), []byte("\n")) && !bytes.HasPrefix(body, []byte("\r\n")) {
		text += "\n"
	}
	return d.splice(at, at, d.lines(text))
}

// markerAt returns the offset of the first marker in src[start:end] that is not in a
// code block, or -1.
func (d *Document) markerAt(start, end int, marker string) int {
	d.structure()
	code := d.code
	for off := start; off < end; {
		i := bytes.Index(d.src[off:end], []byte(marker))
		if i < 0 {
			return -1
		}
		at := off + i
		if !markdown.InCode(code, at, at+len(marker)) {
			return at
		}
		off = at + len(marker)
	}
	return -1
}

// Header labels of the Quick Context lines at the top of the body.
const (
	LastSession  = "Last Session"
	CurrentPhase = "Current Phase"
	NextAction   = "Next Action"
)

var headerLabels = [...]string{LastSession, CurrentPhase, NextAction}

// SetHeader sets the value of a Quick Context header line, in whatever form the
// document writes it ("**Next Action:** ...", "> **Next Action**: ...", "Next action:
// ..."). Only the value after the label changes. A missing line is added next to the
// other header lines and in their form, else after the title.
func (d *Document) SetHeader(label, value string) (*Document, Span, error) {
	value = oneLine(value)
	if l, ok := d.findHeader(label); ok {
		if string(d.src[l.ValueStart:l.ValueEnd]) == value {
			return d, Span{Start: l.ValueStart, End: l.ValueStart}, nil
		}
		return d.splice(l.ValueStart, l.ValueEnd, value)
	}
	at, afterTitle, form := d.headerInsertionPoint(label)
	text := form.prefix + label + form.sep + value + "\n"
	if afterTitle {
		// The header block sits apart from the title and from what follows.
		text = "\n" + text
		if !startsWithBlankLine(d.src[at:]) {
			text += "\n"
		}
	}
	if at > 0 && d.src[at-1] != '\n' {
		text = "\n" + text
	}
	return d.splice(at, at, d.lines(text))
}

// headerForm is how a document writes its header lines: what comes before the label
// and between the label and the value.
type headerForm struct{ prefix, sep string }

var defaultHeaderForm = headerForm{prefix: "**", sep: ":** "}

// headerInsertionPoint is after the header line that precedes label in order, else
// before the one that follows it, else after the title, else at the top of the body.
// It reports whether it is the title, and the form of the neighbouring header line.
func (d *Document) headerInsertionPoint(label string) (int, bool, headerForm) {
	before, after := -1, -1
	form, seen := defaultHeaderForm, false
	passed := false
	for _, l := range headerLabels {
		if l == label {
			passed = true
			continue
		}
		loc, ok := d.findHeader(l)
		if !ok {
			continue
		}
		if !seen {
			form = headerForm{prefix: string(d.src[loc.Start:loc.NameStart]), sep: string(d.src[loc.NameEnd:loc.ValueStart])}
			seen = true
		}
		switch {
		case !passed:
			before = lineEnd(d.src, loc.ValueEnd)
		case after < 0:
			after = loc.Start
		}
	}
	if !strings.HasSuffix(form.sep, " ") {
		form.sep += " "
	}
	switch {
	case before >= 0:
		return before, false, form
	case after >= 0:
		return after, false, form
	}
	if sections := d.Sections(); len(sections) > 0 && sections[0].Level == 1 {
		return sections[0].BodyStart, true, form
	}
	return d.fmEnd, false, form
}

// startsWithBlankLine reports whether b begins with an empty line (or is empty).
func startsWithBlankLine(b []byte) bool {
	line := b[:lineEnd(b, 0)]
	return len(bytes.TrimSpace(line)) == 0
}

// endsWithBlankLine reports whether src ends with an empty line, in either line ending.
func endsWithBlankLine(src []byte) bool {
	return bytes.HasSuffix(src, []byte("\n\n")) || bytes.HasSuffix(src, []byte("\r\n\r\n"))
}

// Header returns the value of a Quick Context header line.
func (d *Document) Header(label string) (string, bool) {
	if l, ok := d.findHeader(label); ok {
		return string(d.src[l.ValueStart:l.ValueEnd]), true
	}
	return "", false
}

// findHeader finds a header line where people keep them (markdown.FindLabel).
func (d *Document) findHeader(label string) (markdown.Label, bool) {
	d.structure()
	for i, l := range headerLabels {
		if l == label {
			return d.labels[i].Label, d.labels[i].ok
		}
	}
	return d.Markdown().Label(label, SectionQuickContext)
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
