package jsonedit

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestSetAndRemove(t *testing.T) {
	tests := []struct {
		name, in, key, value, set, removed string
	}{
		{"empty input", "", "a", "1", "{\n  \"a\": 1\n}\n", ""},
		{"empty object", " {} ", "a", "1", " {\n  \"a\": 1\n} ", " {} "},
		{"replace keeps the rest", "{\n\t\"a\": 1,\n\t\"b\":   [1, 2]\n}\n", "a", `"x"`,
			"{\n\t\"a\": \"x\",\n\t\"b\":   [1, 2]\n}\n", "{\n\t\"b\":   [1, 2]\n}\n"},
		{"add to an indented file", "{\n    \"a\": 1\n}", "b", "2", "{\n    \"a\": 1,\n    \"b\": 2\n}", "{\n    \"a\": 1\n}"},
		{"add to a compact file", `{"a":1}`, "b", "2", `{"a":1,"b":2}`, `{"a":1}`},
		{"the last of duplicates", `{"a":1,"b":2,"a":3}`, "a", "4", `{"a":1,"b":2,"a":4}`, `{"a":1,"b":2}`},
		{"remove the first", "{\n  \"a\": 1,\n  \"b\": 2\n}", "a", "0", "{\n  \"a\": 0,\n  \"b\": 2\n}", "{\n  \"b\": 2\n}"},
		{"remove the only one", `{ "a" : 1 }`, "a", "0", `{ "a" : 0 }`, `{}`},
		{"a key that needs escaping", `{"a":1}`, "x&\"y", "0", `{"a":1,"x&\"y":0}`, `{"a":1}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := Parse([]byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if got := string(d.Set(tt.key, json.RawMessage(tt.value))); got != tt.set {
				t.Errorf("Set = %q, want %q", got, tt.set)
			}
			if got := string(d.Remove(tt.key)); got != tt.removed {
				t.Errorf("Remove = %q, want %q", got, tt.removed)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	for in, want := range map[string]string{
		"{\n  \"a\": 1,\n}": "invalid JSON at line 3, column 1",
		"[1]":               "the top level is an array, not an object",
		"  \"x\"":           "the top level is a string, not an object",
		`{"a":1} {"b":2}`:   "invalid JSON at line 1, column 9",
		"{\"a\": tru}":      "invalid JSON at line 1, column 10",
		"\xef\xbb\xbf{}":    "invalid JSON at line 1, column 1",
	} {
		_, err := Parse([]byte(in))
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("Parse(%q) = %v, want %q…", in, err, want)
		}
	}
}

func TestLayout(t *testing.T) {
	for in, want := range map[string]Layout{
		"":                        Indented,
		"{}":                      Indented,
		"{\"a\": {\"b\": 1}}":     Compact,
		"{\n\t\"a\": 1\n}":        {Unit: "\t"},
		"{\n    \"a\": 1\n}":      {Unit: "    "},
		"{\"a\": 1,\n\"b\": 2\n}": Indented,
		"{\n  \"a\":\n    1\n}\n": {Unit: "    "},
	} {
		d, err := Parse([]byte(in))
		if err != nil {
			t.Fatal(err)
		}
		if got := d.Layout(); got != want {
			t.Errorf("Layout(%q) = %+v, want %+v", in, got, want)
		}
	}
}

func TestEncode(t *testing.T) {
	obj, ok := ParseObject([]byte(`{"b": [1,2], "a": {"x":1}}`))
	if !ok {
		t.Fatal("not parsed")
	}
	obj.Set("c", String("<&>"))
	obj.Remove("b")
	if got := string(obj.Encode(Indented, 1)); got != "{\n    \"a\": {\"x\":1},\n    \"c\": \"<&>\"\n  }" {
		t.Errorf("Encode = %q", got)
	}
	if got := string(EncodeArray(nil, Indented, 2)); got != "[]" {
		t.Errorf("an empty array = %q", got)
	}
	if got := string(EncodeArray([]json.RawMessage{[]byte("1"), []byte(`"x"`)}, Compact, 3)); got != `[1,"x"]` {
		t.Errorf("a compact array = %q", got)
	}
	for _, raw := range []string{`[1]`, `{"a":1} x`, ``, `{"a":}`} {
		if _, ok := ParseObject([]byte(raw)); ok {
			t.Errorf("ParseObject(%q) accepted", raw)
		}
	}
	if !Equal([]byte(`{"a": [1, {"b": null}]}`), []byte(`{"a":[1,{"b":null}]}`)) || Equal([]byte(`1.0`), []byte(`1`)) {
		t.Errorf("Equal")
	}
}

// FuzzEdit: for any object encoding/json accepts, setting a member and reading it back
// gives the value set, the result is valid JSON, and every member not touched keeps its
// key, its bytes and its place; removing it leaves the others likewise.
func FuzzEdit(f *testing.F) {
	for _, seed := range []struct{ in, key, value string }{
		{"", "hooks", `{}`},
		{"{}", "a", "1"},
		{"{\n  \"a\": 1,\n  \"b\": [1, 2]\n}\n", "b", "not json"},
		{"{\"a\":1,\"a\":{\"x\":[]}}", "a", `{"y": true}`},
		{"\t{\n\t\"k\": \"v\"\n}", "new", `"\u00e9"`},
		{" { \"a\" : null } ", "a", " [ ] "},
	} {
		f.Add([]byte(seed.in), seed.key, seed.value)
	}
	f.Fuzz(func(t *testing.T, in []byte, key, value string) {
		if !json.Valid(in) || !bytes.HasPrefix(bytes.TrimLeft(in, " \t\r\n"), []byte("{")) || !utf8.ValidString(key) {
			return
		}
		d, err := Parse(in)
		if err != nil {
			t.Fatalf("Parse(%q): %v", in, err)
		}
		v := json.RawMessage(bytes.TrimSpace([]byte(value)))
		if !json.Valid(v) {
			v = String(value)
		}
		before := d.Members()
		index := d.last(key)

		out := d.Set(key, v)
		d2 := parseValid(t, out)
		if got, ok := d2.Get(key); !ok || !bytes.Equal(got, v) {
			t.Fatalf("Set(%q, %s) on %q: read back %s, %v", key, v, in, got, ok)
		}
		want := append(Object(nil), before...)
		if index >= 0 {
			want[index].Value = v
		} else {
			want = append(want, Member{key, v})
		}
		sameMembers(t, "Set", in, d2.Members(), want)

		if index < 0 {
			if out := d.Remove(key); !bytes.Equal(out, in) {
				t.Fatalf("Remove(%q) of an absent key changed %q to %q", key, in, out)
			}
			return
		}
		d3 := parseValid(t, d.Remove(key))
		want = append(append(Object(nil), before[:index]...), before[index+1:]...)
		sameMembers(t, "Remove", in, d3.Members(), want)
	})
}

func parseValid(t *testing.T, out []byte) *Doc {
	t.Helper()
	if !json.Valid(out) {
		t.Fatalf("not valid JSON: %q", out)
	}
	d, err := Parse(out)
	if err != nil {
		t.Fatalf("Parse(%q): %v", out, err)
	}
	return d
}

func sameMembers(t *testing.T, op string, in []byte, got, want Object) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s on %q: %d members, want %d", op, in, len(got), len(want))
	}
	for i := range got {
		if got[i].Key != want[i].Key || !bytes.Equal(got[i].Value, want[i].Value) {
			t.Fatalf("%s on %q: member %d is %q: %s, want %q: %s", op, in, i, got[i].Key, got[i].Value, want[i].Key, want[i].Value)
		}
	}
}
