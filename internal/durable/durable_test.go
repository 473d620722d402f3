package durable

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
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
			err := WithLock(context.Background(), path, func() error {
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

func TestAppendLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log.jsonl")
	for _, line := range []string{"one", "two\n"} {
		if err := AppendLine(path, []byte(line)); err != nil {
			t.Fatal(err)
		}
	}
	if data, _ := os.ReadFile(path); string(data) != "one\ntwo\n" {
		t.Errorf("content %q", data)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o644 {
		t.Errorf("mode %v", fi.Mode())
	}

	// A line cut short by a crash keeps to itself; the next line is whole.
	if err := os.WriteFile(path, []byte("one\ntw"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := AppendLine(path, []byte("three")); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(path); string(data) != "one\ntw\nthree\n" {
		t.Errorf("after a torn line: %q", data)
	}

	if err := AppendLine(path, []byte("four\nfive")); err == nil {
		t.Error("a line holding a newline was accepted")
	}
	if err := AppendLine(filepath.Join(t.TempDir(), "no", "log"), []byte("x")); err == nil {
		t.Error("appending into a missing folder: want an error")
	}
}

func TestAppendLineConcurrent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log")
	const writers, each = 8, 50
	// Longer than PIPE_BUF, past which a plain O_APPEND write has no atomicity promise.
	const bodyLen = 8000
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				line := make([]byte, 2+bodyLen)
				line[0], line[1] = 'A'+byte(w), 'A'+byte(i)
				for k := 2; k < len(line); k++ {
					line[k] = 'x'
				}
				if err := AppendLine(path, line); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	data, _ := os.ReadFile(path)
	seen := map[[2]byte]bool{}
	for len(data) > 0 {
		n := 0
		for n < len(data) && data[n] != '\n' {
			n++
		}
		line := data[:n]
		data = data[min(n+1, len(data)):]
		whole := len(line) == 2+bodyLen
		for _, c := range line[min(2, len(line)):] {
			whole = whole && c == 'x'
		}
		key := [2]byte{}
		copy(key[:], line)
		if !whole || seen[key] {
			t.Fatalf("line %d is torn or repeated (%d bytes)", len(seen)+1, len(line))
		}
		seen[key] = true
	}
	if len(seen) != writers*each {
		t.Errorf("got %d lines, want %d", len(seen), writers*each)
	}
}

func TestWithLockTimesOutNamingTheHolder(t *testing.T) {
	old := LockTimeout
	LockTimeout = 50 * time.Millisecond
	t.Cleanup(func() { LockTimeout = old })
	path := filepath.Join(t.TempDir(), "state.json")
	held := make(chan struct{})
	release := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- WithLock(context.Background(), path, func() error {
			close(held)
			<-release
			return nil
		})
	}()
	<-held
	// flock locks belong to open files, so a second flock.New in this process
	// contends like another process would.
	err := WithLock(context.Background(), path, func() error { return nil })
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	var le *LockError
	if !errors.As(err, &le) {
		t.Fatalf("want a *LockError, got %v", err)
	}
	msg := err.Error()
	if le.Lock != path+".lock" || le.Holder != os.Getpid() || !strings.Contains(msg, path+".lock") || !strings.Contains(msg, fmt.Sprintf("process %d", os.Getpid())) {
		t.Errorf("lock error = %q (%+v)", msg, le)
	}
	// Released: the next taker gets it at once.
	if err := WithLock(context.Background(), path, func() error { return nil }); err != nil {
		t.Fatal(err)
	}
}

func TestResolveAndCheckInside(t *testing.T) {
	ws, outside := t.TempDir(), t.TempDir()
	if err := os.Symlink("loop", filepath.Join(ws, "loop")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(ws, "out")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "nothing-yet"), filepath.Join(ws, "dangling")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(ws, "in"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(ws, "in"), filepath.Join(ws, "inner")); err != nil {
		t.Fatal(err)
	}
	Confine(ws)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = Resolve(filepath.Join(ws, "loop", "x")) // a loop ends
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Resolve did not return on a loop of links")
	}
	for _, tc := range []struct {
		path    string
		outside bool
	}{
		{filepath.Join(ws, "a", "new", "file"), false},
		{filepath.Join(ws, "inner", "file"), false},
		{filepath.Join(ws, "out", "file"), true},
		{filepath.Join(ws, "out"), true},
		{filepath.Join(ws, "dangling"), true},
		{filepath.Join(t.TempDir(), "elsewhere"), false}, // not in a workspace: not concerned
	} {
		err := CheckInside(tc.path)
		if got := errors.Is(err, ErrOutside); got != tc.outside {
			t.Errorf("CheckInside(%s) = %v, want outside %v", tc.path, err, tc.outside)
		}
	}
	if err := WriteFile(filepath.Join(ws, "out", "f"), []byte("x"), 0o644); !errors.Is(err, ErrOutside) {
		t.Errorf("WriteFile through a link out: %v", err)
	}
	if _, err := os.Stat(filepath.Join(outside, "f")); !os.IsNotExist(err) {
		t.Errorf("the file was written outside: %v", err)
	}
}

// A temporary file whose writer died goes with the next write to its folder; one of a
// live writer stays.
func TestRemoveDeadTemps(t *testing.T) {
	dir := t.TempDir()
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	deadTemp := filepath.Join(dir, fmt.Sprintf("%sstate.json-%d-123", TempPrefix, dead.Process.Pid))
	liveTemp := filepath.Join(dir, fmt.Sprintf("%sstate.json-%d-456", TempPrefix, os.Getpid()))
	for _, f := range []string{deadTemp, liveTemp} {
		if err := os.WriteFile(f, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := ReplaceFile(filepath.Join(dir, "other.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(deadTemp); !os.IsNotExist(err) {
		t.Errorf("the dead writer's temporary file stayed: %v", err)
	}
	if _, err := os.Stat(liveTemp); err != nil {
		t.Errorf("a live writer's temporary file was removed: %v", err)
	}
}

// A lock waits no longer than its context allows: a hook's budget bounds the wait,
// not only LockTimeout.
func TestLockWaitEndsWithTheContext(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	held, release := make(chan struct{}), make(chan struct{})
	go func() {
		_ = WithLock(context.Background(), path, func() error {
			close(held)
			<-release
			return nil
		})
	}()
	<-held
	defer close(release)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := WithLock(ctx, path, func() error { return nil })
	var le *LockError
	if !errors.As(err, &le) {
		t.Fatalf("err = %v, want a *LockError", err)
	}
	if waited := time.Since(start); waited > LockTimeout/2 {
		t.Errorf("waited %s past a 100ms context", waited)
	}
}
