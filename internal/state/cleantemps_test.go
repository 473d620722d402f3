package state

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/ctxtools/ctx/internal/durable"
)

// A killed writer's temporary file (its pid gone) is removed at once; a young one of a
// live writer stays until it is old.
func TestCleanWorkspaceTempsDeadWriters(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state", "cycles")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	dead := filepath.Join(dir, durable.TempPrefix+"s1.json-999999999-1")
	live := filepath.Join(dir, durable.TempPrefix+"s1.json-"+strconv.Itoa(os.Getpid())+"-1")
	for _, p := range []string{dead, live} {
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if n := CleanWorkspaceTemps(context.Background(), filepath.Dir(filepath.Dir(dir)), time.Hour); n != 1 {
		t.Errorf("removed %d, want 1", n)
	}
	if _, err := os.Stat(dead); !os.IsNotExist(err) {
		t.Errorf("a dead writer's file stayed: %v", err)
	}
	if _, err := os.Stat(live); err != nil {
		t.Errorf("a live writer's young file went: %v", err)
	}
}
