package durable

import (
	"os"
	"path/filepath"
	"sync"
	"testing"
)

func TestWriteFileReplacesAtomically(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f.md")
	if err := WriteFile(path, []byte("one"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(path, []byte("two"), 0o600); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil || string(data) != "two" {
		t.Fatalf("content %q, %v", data, err)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", fi.Mode())
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("left files behind: %v", entries)
	}
}

func TestWriteFileIntoMissingFolderFails(t *testing.T) {
	if err := WriteFile(filepath.Join(t.TempDir(), "no", "f"), nil, 0o644); err == nil {
		t.Fatal("want an error")
	}
}

func TestRemoveStaleTemps(t *testing.T) {
	dir := t.TempDir()
	stale := filepath.Join(dir, TempPrefix+"f.md-123")
	other := filepath.Join(dir, TempPrefix+"g.md-123")
	for _, p := range []string{stale, other} {
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	RemoveStaleTemps(dir, "f.md")
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("stale temp kept")
	}
	if _, err := os.Stat(other); err != nil {
		t.Errorf("another file's temp removed")
	}
}

func TestWithLockSerialises(t *testing.T) {
	path := filepath.Join(t.TempDir(), "counter")
	var wg sync.WaitGroup
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := WithLock(path, func() error {
				data, _ := os.ReadFile(path)
				return WriteFile(path, append(data, 'x'), 0o644)
			})
			if err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if data, _ := os.ReadFile(path); len(data) != 20 {
		t.Errorf("got %d increments, want 20", len(data))
	}
}
