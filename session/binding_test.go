package session

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestSafeID(t *testing.T) {
	long := strings.Repeat("a", 10_000)
	tests := []struct {
		id      string
		wantErr bool
		same    bool // kept as it is
	}{
		{"abc-123_DEF", false, true},
		{"a.b", false, true},
		{"", true, false},
		{"  ", true, false},
		{"../x", false, false},
		{"/abs/path", false, false},
		{"nul\x00byte", false, false},
		{".hidden", false, false},
		{long, false, false},
		{"üñí", false, false},
	}
	seen := map[string]string{}
	for _, tt := range tests {
		got, err := SafeID(tt.id)
		if (err != nil) != tt.wantErr {
			t.Errorf("SafeID(%q): err = %v", tt.id, err)
			continue
		}
		if err != nil {
			continue
		}
		if tt.same != (got == tt.id) {
			t.Errorf("SafeID(%q) = %q", tt.id, got)
		}
		if len(got) > maxIDLen || strings.ContainsAny(got, "/\\\x00") || strings.HasPrefix(got, ".") || got != filepath.Base(got) {
			t.Errorf("SafeID(%q) = %q is not a safe file name", tt.id, got)
		}
		if prev, dup := seen[got]; dup {
			t.Errorf("SafeID(%q) and SafeID(%q) collide: %q", prev, tt.id, got)
		}
		seen[got] = tt.id
	}
	a, _ := SafeID("x/y")
	b, _ := SafeID("x_y")
	if a == b {
		t.Errorf("x/y and x_y collide")
	}
}

func TestCheckSessionID(t *testing.T) {
	for _, tt := range []struct {
		id  string
		err string // a part of the error, "" for none
	}{
		{"3f6c2a9e-8b1d-4e7a-9c55-0d2b7e41a6f3", ""},
		{"s1", ""},
		{"a.b_c-D", ""},
		{"", "session id is empty"},
		{" \t", "session id is empty"},
		{"../b1", `session id "../b1" is not a safe identifier`},
		{".hidden", "not a safe identifier"},
		{"a b", "not a safe identifier"},
		{"a/b", "not a safe identifier"},
		{"é", "not a safe identifier"},
		{strings.Repeat("a", 64), ""},
		{strings.Repeat("a", 65), `"` + strings.Repeat("a", 40) + `…" is not a safe identifier`},
	} {
		err := CheckSessionID(tt.id)
		switch {
		case tt.err == "" && err != nil:
			t.Errorf("%q: unexpected error %v", tt.id, err)
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("%q: got %v, want an error containing %q", tt.id, err, tt.err)
		}
	}
}

func TestBindings(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	b := Bindings{StateDir: dir}
	if got, err := b.Lookup("s1"); got != nil || err != nil {
		t.Fatalf("lookup before bind: %v, %v", got, err)
	}
	if err := b.Bind(Binding{SessionID: "s1", ProjectID: "01-a"}); err != nil {
		t.Fatal(err)
	}
	if err := b.Bind(Binding{SessionID: "s1", ProjectID: "02-b"}); err != nil {
		t.Fatal(err)
	}
	got, err := b.Lookup("s1")
	if err != nil || got == nil || got.ProjectID != "02-b" {
		t.Fatalf("lookup: %+v, %v", got, err)
	}
	if data, err := os.ReadFile(filepath.Join(dir, ".gitignore")); err != nil || !strings.Contains(string(data), "*") {
		t.Errorf(".gitignore: %q, %v", data, err)
	}
	if err := b.Bind(Binding{SessionID: ""}); err == nil {
		t.Errorf("empty session id bound")
	}
}

func TestPruneCycles(t *testing.T) {
	c := Cycles{StateDir: t.TempDir()}
	for _, id := range []string{"old", "new"} {
		if _, err := c.Update(id, func(*Cycle) error { return nil }); err != nil {
			t.Fatal(err)
		}
	}
	old := filepath.Join(c.StateDir, "cycles", "old.json")
	month := time.Now().Add(-31 * 24 * time.Hour)
	if err := os.Chtimes(old, month, month); err != nil {
		t.Fatal(err)
	}
	if n := c.PruneCycles(time.Now(), time.Now().Add(time.Second)); n != 1 {
		t.Errorf("removed %d, want 1", n)
	}
	if _, err := os.Stat(old); !os.IsNotExist(err) {
		t.Errorf("stale cycle kept")
	}
	if _, err := os.Stat(filepath.Join(c.StateDir, "cycles", "new.json")); err != nil {
		t.Errorf("fresh cycle removed: %v", err)
	}
}
