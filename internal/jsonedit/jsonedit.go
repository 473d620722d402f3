// Package jsonedit edits JSON that a person wrote and keeps: a document whose top level
// is an object gets one member's value replaced, added or removed by splicing its
// bytes, so that every other byte (the order of the members, their spacing, how each
// number is spelled, duplicate keys) stays as the file had it. What is written anew is
// indented as the rest of the document is.
package jsonedit

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
)

// Doc is a JSON document whose top level is an object, with where each top-level
// value lies in its bytes.
type Doc struct {
	in      []byte
	members Object
	spans   [][2]int // byte range of each member's value in in
	open    int      // offset of the top-level "{"; -1 for empty input
	close   int      // offset just after the top-level "}"
}

// Parse reads a document whose top level is an object. Empty input (or only spaces) is
// a document with no members, and no braces yet. Input that is not valid JSON is an
// error naming the line and column, and so is a top level that is not an object.
func Parse(in []byte) (*Doc, error) {
	d := &Doc{in: in, open: -1}
	if len(bytes.TrimSpace(in)) == 0 {
		return d, nil
	}
	if !json.Valid(in) {
		var v any
		err := json.Unmarshal(in, &v)
		var syn *json.SyntaxError
		if errors.As(err, &syn) {
			line, col := lineColumn(in, syn.Offset)
			return nil, fmt.Errorf("invalid JSON at line %d, column %d: %w", line, col, err)
		}
		return nil, fmt.Errorf("invalid JSON: %w", err)
	}
	d.open = len(in) - len(bytes.TrimLeft(in, " \t\r\n"))
	if in[d.open] != '{' {
		return nil, fmt.Errorf("the top level is %s, not an object", Kind(in))
	}
	dec := json.NewDecoder(bytes.NewReader(in))
	if _, err := dec.Token(); err != nil {
		return nil, fmt.Errorf("invalid JSON: %w", err)
	}
	for dec.More() {
		key, value, err := nextMember(dec)
		if err != nil {
			return nil, fmt.Errorf("invalid JSON: %w", err)
		}
		end := int(dec.InputOffset())
		d.members = append(d.members, Member{key, value})
		d.spans = append(d.spans, [2]int{end - len(value), end})
	}
	if _, err := dec.Token(); err != nil {
		return nil, fmt.Errorf("invalid JSON: %w", err)
	}
	d.close = int(dec.InputOffset())
	return d, nil
}

// Members returns the top-level members in document order, values as written.
func (d *Doc) Members() Object { return d.members }

// Get returns the value of the last top-level member named key, the one JSON parsers
// keep.
func (d *Doc) Get(key string) (json.RawMessage, bool) { return d.members.Get(key) }

// Layout returns how the document is indented: one line, or the indentation of its
// first member's line as one step (two spaces when there is no member to tell).
func (d *Doc) Layout() Layout {
	if len(d.members) == 0 {
		return Indented
	}
	if !bytes.Contains(d.in[d.open:d.close], []byte("\n")) {
		return Compact
	}
	if unit := lineIndent(d.in, d.spans[0][0]); unit != "" {
		return Layout{Unit: unit}
	}
	return Indented
}

// Set returns the document with the last member named key given value, or with the
// member added after the others when there is none. Every other byte is the input's;
// the caller encodes value for the document's layout at depth 1 (Object.Encode).
func (d *Doc) Set(key string, value json.RawMessage) []byte {
	l := d.Layout()
	if i := d.last(key); i >= 0 {
		return splice(d.in, d.spans[i][0], d.spans[i][1], string(value))
	}
	if len(d.members) == 0 {
		obj := "{\n" + l.Unit + string(String(key)) + ": " + string(value) + "\n}"
		if d.open < 0 {
			return []byte(obj + "\n")
		}
		return splice(d.in, d.open, d.close, obj)
	}
	end := d.spans[len(d.spans)-1][1]
	if l.Compact {
		return splice(d.in, end, end, ","+string(String(key))+":"+string(value))
	}
	return splice(d.in, end, end, ",\n"+l.Unit+string(String(key))+": "+string(value))
}

// Remove returns the document without the last member named key, and without the
// comma that set it apart; every other byte is the input's. Without such a member it
// returns the input.
func (d *Doc) Remove(key string) []byte {
	i := d.last(key)
	switch {
	case i < 0:
		return d.in
	case len(d.members) == 1:
		return splice(d.in, d.open, d.close, "{}")
	case i > 0:
		return splice(d.in, d.spans[i-1][1], d.spans[i][1], "")
	}
	// The first member: from just after "{" through the comma after its value, keeping
	// the line break and indentation that lead to the next key.
	comma := d.spans[0][1] + bytes.IndexByte(d.in[d.spans[0][1]:], ',')
	return splice(d.in, d.open+1, comma+1, "")
}

func (d *Doc) last(key string) int {
	for i := len(d.members) - 1; i >= 0; i-- {
		if d.members[i].Key == key {
			return i
		}
	}
	return -1
}

func splice(in []byte, start, end int, with string) []byte {
	out := make([]byte, 0, len(in)-(end-start)+len(with))
	out = append(out, in[:start]...)
	out = append(out, with...)
	return append(out, in[end:]...)
}

// lineIndent returns the spaces and tabs that begin the line holding offset.
func lineIndent(in []byte, offset int) string {
	start := bytes.LastIndexByte(in[:offset], '\n') + 1
	end := start
	for end < offset && (in[end] == ' ' || in[end] == '\t') {
		end++
	}
	return string(in[start:end])
}

func lineColumn(in []byte, offset int64) (line, col int) {
	offset = min(offset, int64(len(in)))
	before := in[:offset]
	line = bytes.Count(before, []byte("\n")) + 1
	col = int(offset) - (bytes.LastIndexByte(before, '\n') + 1)
	return line, col
}

// Layout is how a document is indented, so that what an edit writes looks like the
// rest.
type Layout struct {
	Unit    string // one indentation step
	Compact bool   // the document is written on one line
}

var (
	// Indented is json.MarshalIndent's layout with two spaces, for a new document.
	Indented = Layout{Unit: "  "}
	// Compact writes everything on one line.
	Compact = Layout{Compact: true}
)

// Object is a JSON object with its members in order and their values as they were
// written, so that encoding it again changes nothing that was not changed.
type Object []Member

// Member is one key and its value of an Object.
type Member struct {
	Key   string
	Value json.RawMessage
}

// ParseObject reads raw as one JSON object; ok is false for anything else.
func ParseObject(raw []byte) (obj Object, ok bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, false
	}
	obj = Object{}
	for dec.More() {
		key, value, err := nextMember(dec)
		if err != nil {
			return nil, false
		}
		obj = append(obj, Member{key, value})
	}
	if _, err := dec.Token(); err != nil {
		return nil, false
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, false
	}
	return obj, true
}

func nextMember(dec *json.Decoder) (key string, value json.RawMessage, err error) {
	tok, err := dec.Token()
	if err != nil {
		return "", nil, err
	}
	key, _ = tok.(string)
	err = dec.Decode(&value)
	return key, value, err
}

// Get returns the value of the last member named key, the one JSON parsers keep.
func (o Object) Get(key string) (json.RawMessage, bool) {
	for i := len(o) - 1; i >= 0; i-- {
		if o[i].Key == key {
			return o[i].Value, true
		}
	}
	return nil, false
}

// Set replaces the value of the last member named key, in place, or adds the member
// at the end.
func (o *Object) Set(key string, value json.RawMessage) {
	for i := len(*o) - 1; i >= 0; i-- {
		if (*o)[i].Key == key {
			(*o)[i].Value = value
			return
		}
	}
	*o = append(*o, Member{key, value})
}

// Remove removes every member named key.
func (o *Object) Remove(key string) {
	kept := (*o)[:0]
	for _, m := range *o {
		if m.Key != key {
			kept = append(kept, m)
		}
	}
	*o = kept
}

// Encode writes the object nested depth levels deep (the top-level object being at 0),
// one member a line as json.MarshalIndent would. Values are written as they are: they
// come from the same depth of the same document, so they keep their own layout.
func (o Object) Encode(l Layout, depth int) json.RawMessage {
	sep := ": "
	if l.Compact {
		sep = ":"
	}
	items := make([][]byte, len(o))
	for i, m := range o {
		items[i] = append(append(String(m.Key), sep...), m.Value...)
	}
	return encodeList('{', '}', items, l, depth)
}

// ParseArray reads raw as one JSON array and returns its elements as written; ok is
// false for anything else.
func ParseArray(raw []byte) (elems []json.RawMessage, ok bool) {
	t := bytes.TrimLeft(raw, " \t\r\n")
	if len(t) == 0 || t[0] != '[' {
		return nil, false
	}
	if err := json.Unmarshal(raw, &elems); err != nil {
		return nil, false
	}
	return elems, true
}

// EncodeArray writes elems as an array nested depth levels deep, as Object.Encode does.
func EncodeArray(elems []json.RawMessage, l Layout, depth int) json.RawMessage {
	items := make([][]byte, len(elems))
	for i, e := range elems {
		items[i] = e
	}
	return encodeList('[', ']', items, l, depth)
}

func encodeList(open, close byte, items [][]byte, l Layout, depth int) json.RawMessage {
	var buf bytes.Buffer
	buf.WriteByte(open)
	for i, item := range items {
		if i > 0 {
			buf.WriteByte(',')
		}
		if !l.Compact {
			buf.WriteByte('\n')
			buf.WriteString(strings.Repeat(l.Unit, depth+1))
		}
		buf.Write(item)
	}
	if len(items) > 0 && !l.Compact {
		buf.WriteByte('\n')
		buf.WriteString(strings.Repeat(l.Unit, depth))
	}
	buf.WriteByte(close)
	return buf.Bytes()
}

// String encodes s as a JSON string without Go's HTML escaping, which would turn a "&"
// in a shell command into \u0026.
func String(s string) json.RawMessage {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// Equal reports whether a and b hold the same JSON value, whatever their spacing and
// member order; numbers are compared as written ("1.0" is not "1").
func Equal(a, b []byte) bool {
	decode := func(raw []byte) (any, error) {
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		var v any
		err := dec.Decode(&v)
		return v, err
	}
	va, errA := decode(a)
	vb, errB := decode(b)
	return errA == nil && errB == nil && reflect.DeepEqual(va, vb)
}

// Kind names the kind of a JSON value for an error message: "an object", "an array",
// "a string", "a number", "a boolean", "null" or "empty".
func Kind(raw []byte) string {
	t := bytes.TrimLeft(raw, " \t\r\n")
	if len(t) == 0 {
		return "empty"
	}
	switch t[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	default:
		return "a number"
	}
}
