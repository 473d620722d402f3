// Package ctxbin builds the ctx binary for the tests that run it as a separate process
// (cmd/ctx, torture, e2e): once per test process, as make build ships it.
package ctxbin

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// prefix names the temporary folders the binary is built in. A test binary whose
// TestMain is not its own (cmd/ctx's is testscript's) cannot remove its folder after
// the last test, so each build removes the folders left untouched for idle: those of
// earlier runs. A folder in use is touched every minute while its process lives, so a
// concurrent run, however long, never loses its binary.
const (
	prefix = "ctx-testbin-"
	idle   = 10 * time.Minute
)

var built struct {
	once sync.Once
	dir  string
	path string
	err  error
}

// Path returns the path of ctx built from this module's cmd/ctx, building it at the
// first call of the test process: with the go tool of $GO (default go), without cgo
// and with -trimpath, as make build builds the shipped binary. A failed build fails t.
func Path(t testing.TB) string {
	t.Helper()
	built.once.Do(build)
	if built.err != nil {
		t.Fatalf("building ctx: %v", built.err)
	}
	return built.path
}

// Cleanup removes what Path built; a TestMain of its own calls it after the tests.
func Cleanup() {
	if built.dir != "" {
		_ = os.RemoveAll(built.dir)
	}
}

func build() {
	removeIdle()
	dir, err := os.MkdirTemp("", fmt.Sprintf("%s%d-", prefix, os.Getpid()))
	if err != nil {
		built.err = err
		return
	}
	built.dir = dir
	goTool := os.Getenv("GO")
	if goTool == "" {
		goTool = "go"
	}
	path := filepath.Join(dir, "ctx")
	cmd := exec.Command(goTool, "build", "-trimpath", "-o", path, "github.com/ctxtools/ctx/cmd/ctx")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		built.err = fmt.Errorf("%s build ctx: %w\n%s", goTool, err, out)
		return
	}
	built.path = path
	go func() {
		for range time.Tick(time.Minute) {
			now := time.Now()
			_ = os.Chtimes(dir, now, now)
		}
	}()
}

func removeIdle() {
	old, _ := filepath.Glob(filepath.Join(os.TempDir(), prefix+"*"))
	for _, dir := range old {
		if fi, err := os.Stat(dir); err == nil && time.Since(fi.ModTime()) > idle {
			_ = os.RemoveAll(dir)
		}
	}
}
