package state

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ctxtools/ctx/loader"
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

func testStore(t *testing.T) *Store {
	t.Helper()
	rt := t.TempDir()
	return Open(&loader.Workspace{Root: t.TempDir()}, func(k string) string {
		if k == "XDG_RUNTIME_DIR" {
			return rt
		}
		return ""
	})
}

func TestBindings(t *testing.T) {
	st := testStore(t)
	dir := st.WS.StatePath("state")
	if got, err := st.Session("s1").Binding(); got != nil || err != nil {
		t.Fatalf("lookup before bind: %v, %v", got, err)
	}
	if err := st.Session("s1").Bind(Binding{ProjectID: "01-a"}); err != nil {
		t.Fatal(err)
	}
	if err := st.Session("s1").Bind(Binding{ProjectID: "02-b"}); err != nil {
		t.Fatal(err)
	}
	got, err := st.Session("s1").Binding()
	if err != nil || got == nil || got.ProjectID != "02-b" || got.SessionID != "s1" {
		t.Fatalf("lookup: %+v, %v", got, err)
	}
	if data, err := os.ReadFile(filepath.Join(dir, ".gitignore")); err != nil || !strings.Contains(string(data), "*") {
		t.Errorf(".gitignore: %q, %v", data, err)
	}
	if err := st.Session("").Bind(Binding{}); err == nil {
		t.Errorf("empty session id bound")
	}
}

// A session's files of the layout before one folder per session move into its
// folder when it is first opened, and the one prune removes what a month-old session
// left but its audit log.
func TestSessionFolderAdoptsOldFilesAndPrunes(t *testing.T) {
	st := testStore(t)
	dir := st.WS.StatePath("state")
	old := map[string]string{
		"sessions/s1.json": `{"session_id":"s1","project_id":"01-a","path":"02-projects/01-a"}`,
		"cycles/s1.json":   `{"session_id":"s1","cycle":2}`,
		"work/s1.txt":      "a.md\n",
		"windows/s1.json":  `{"session_id":"s1","window":1000000}`,
		"audit/s1.jsonl":   `{"decision":"allow"}` + "\n",
	}
	for rel, body := range old {
		path := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	se := st.Session("s1")
	if b, err := se.Binding(); err != nil || b == nil || b.ProjectID != "01-a" {
		t.Fatalf("binding of the old layout: %+v, %v", b, err)
	}
	if c, err := se.Cycle(); err != nil || c.Number != 2 {
		t.Errorf("cycle of the old layout: %+v, %v", c, err)
	}
	if w, err := se.Work(); err != nil || len(w) != 1 {
		t.Errorf("work of the old layout: %v, %v", w, err)
	}
	if n := st.KnownWindow("s1"); n != 1000000 {
		t.Errorf("window of the old layout: %d", n)
	}
	for rel := range old {
		if _, err := os.Stat(filepath.Join(dir, rel)); !os.IsNotExist(err) {
			t.Errorf("%s stayed in the old layout", rel)
		}
	}
	folder := filepath.Join(dir, "sessions", "s1")
	month := time.Now().Add(-31 * 24 * time.Hour)
	entries, _ := os.ReadDir(folder)
	if len(entries) != 5 {
		t.Fatalf("the session's folder holds %d files, want 5", len(entries))
	}
	if err := st.Session("s2").AddWork("b.md"); err != nil {
		t.Fatal(err)
	}
	if n := st.Prune(context.Background(), time.Now()); n != 0 {
		t.Errorf("Prune removed %d fresh files", n)
	}
	for _, e := range entries {
		if err := os.Chtimes(filepath.Join(folder, e.Name()), month, month); err != nil {
			t.Fatal(err)
		}
	}
	if n := st.Prune(context.Background(), time.Now()); n != 4 {
		t.Errorf("Prune removed %d files of the month-old session, want 4", n)
	}
	if _, err := os.Stat(filepath.Join(folder, "audit.jsonl")); err != nil {
		t.Errorf("the audit log was pruned: %v", err)
	}
	if w, _ := st.Session("s2").Work(); len(w) != 1 {
		t.Errorf("a fresh session was pruned: %v", w)
	}
}
