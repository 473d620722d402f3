package durable

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// A CreateExclusive killed after its temporary file is written and before the link
// leaves no file at the path, whole or half: the next call writes it whole. The writer
// runs in a child process (this test binary, re-run), stopped at the link and killed.
func TestCreateExclusiveKilledBeforeLink(t *testing.T) {
	if dir := os.Getenv("CTX_TEST_CREATE_DIR"); dir != "" {
		linkFile = func(string, string) error { select {} } // wait here to be killed
		_, _ = CreateExclusive(filepath.Join(dir, ".gitignore"), []byte("whole\n"), 0o644)
		return
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCreateExclusiveKilledBeforeLink$")
	cmd.Env = append(os.Environ(), "CTX_TEST_CREATE_DIR="+dir)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	temp := func() string {
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), TempPrefix) {
				return e.Name()
			}
		}
		return ""
	}
	deadline := time.Now().Add(10 * time.Second)
	for temp() == "" {
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			t.Fatal("the child never wrote its temporary file")
		}
		time.Sleep(5 * time.Millisecond)
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	target := filepath.Join(dir, ".gitignore")
	if _, err := os.Lstat(target); !os.IsNotExist(err) {
		t.Fatalf("a writer killed before its link left the file: %v", err)
	}
	if name := temp(); !DeadTemp(name) {
		t.Errorf("the killed writer's temporary file %q is not recognised as dead", name)
	}
	if wrote, err := CreateExclusive(target, []byte("whole\n"), 0o644); err != nil || !wrote {
		t.Fatalf("the next CreateExclusive: %v, %v", wrote, err)
	}
	if got, _ := os.ReadFile(target); string(got) != "whole\n" {
		t.Errorf("got %q", got)
	}
}

// Of writers racing to create one file, exactly one does, and the file is whole.
func TestCreateExclusiveOneWins(t *testing.T) {
	target := filepath.Join(t.TempDir(), "f")
	var wg sync.WaitGroup
	var mu sync.Mutex
	wins := 0
	for range 8 {
		wg.Go(func() {
			if wrote, err := CreateExclusive(target, []byte("whole\n"), 0o644); err == nil && wrote {
				mu.Lock()
				wins++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if got, _ := os.ReadFile(target); wins != 1 || string(got) != "whole\n" {
		t.Errorf("%d writers won; the file is %q", wins, got)
	}
}
