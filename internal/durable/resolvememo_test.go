package durable

import (
	"os"
	"path/filepath"
	"testing"
)

// Resolve remembers a folder's resolution for a moment only: a folder that became a
// link is seen once the moment has passed.
func TestResolveMemoExpires(t *testing.T) {
	root := t.TempDir()
	elsewhere := t.TempDir()
	dir := filepath.Join(root, "d")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "f")
	before := Resolve(file)
	if err := os.Remove(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(elsewhere, dir); err != nil {
		t.Fatal(err)
	}
	resolvedDirs.Lock()
	for k, e := range resolvedDirs.m {
		e.at = e.at.Add(-2 * resolvedDirs.ttl)
		resolvedDirs.m[k] = e
	}
	resolvedDirs.Unlock()
	after := Resolve(file)
	want := filepath.Join(Resolve(elsewhere), "f")
	if after != want || before == after {
		t.Errorf("after the folder became a link: %s, want %s (before: %s)", after, want, before)
	}
	// The link itself, as the last element, is always followed afresh.
	if got := Resolve(dir); got != Resolve(elsewhere) {
		t.Errorf("the link: %s, want %s", got, Resolve(elsewhere))
	}
}
