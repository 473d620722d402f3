package durable

import (
	"os"
	"path/filepath"
	"testing"
)

func TestSameFile(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	for _, p := range []string{a, b} {
		if err := os.WriteFile(p, []byte(p), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	link, hard := filepath.Join(dir, "link"), filepath.Join(dir, "hard")
	if err := os.Symlink(a, link); err != nil {
		t.Skip("no symlinks here:", err)
	}
	if err := os.Link(a, hard); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		x, y string
		want bool
	}{
		{a, a, true}, {a, dir + "/./a", true}, {a, link, true}, {a, hard, true}, {dir, dir + "/", true},
		{a, b, false}, {a, filepath.Join(dir, "missing"), false},
		{filepath.Join(dir, "gone"), filepath.Join(dir, "gone"), true}, // one spelling: one path
	} {
		if got := SameFile(tt.x, tt.y); got != tt.want {
			t.Errorf("SameFile(%q, %q) = %v, want %v", tt.x, tt.y, got, tt.want)
		}
	}
}
