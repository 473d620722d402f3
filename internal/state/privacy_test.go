package state

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The sessions folder's .gitignore: what a killed write leaves (a temporary file) is
// not taken for it, so the next call writes it, and an emptied one, a person's choice,
// stays empty. That the write itself is whole or nothing, killed or not, is
// durable.CreateExclusive's (TestCreateExclusiveKilledBeforeLink).
func TestSessionsIgnoreWrittenWhole(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sessions")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	// A write killed before its link.
	if err := os.WriteFile(filepath.Join(dir, ".ctx-tmp-.gitignore-123"), []byte("# ctx"), 0o644); err != nil {
		t.Fatal(err)
	}
	ignore := filepath.Join(dir, ".gitignore")
	wrote, err := EnsureSessionsDir(dir)
	if err != nil || !wrote {
		t.Fatalf("EnsureSessionsDir = %v, %v; want it to write the .gitignore", wrote, err)
	}
	if got, _ := os.ReadFile(ignore); string(got) != sessionsIgnore {
		t.Errorf(".gitignore = %q, want %q", got, sessionsIgnore)
	}
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".ctx-tmp-") && e.Name() != ".ctx-tmp-.gitignore-123" {
			names = append(names, e.Name())
		}
	}
	if len(names) > 0 {
		t.Errorf("temporary files left: %v", names)
	}

	if err := os.WriteFile(ignore, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if wrote, err := EnsureSessionsDir(dir); err != nil || wrote {
		t.Errorf("with an emptied .gitignore: EnsureSessionsDir = %v, %v; want it left alone", wrote, err)
	}
	if got, _ := os.ReadFile(ignore); len(got) != 0 {
		t.Errorf("the emptied .gitignore was written again: %q", got)
	}
}
