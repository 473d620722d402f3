package session

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ctxtools/ctx/internal/durable"
	"github.com/ctxtools/ctx/loader"
)

// Work is what the hooks saw a session change: the workspace files its Write, Edit and
// NotebookEdit calls touched, one line each in .ctx/state/work/<session>.txt. A save
// lists them when git cannot (a workspace that is not a repository, or work committed
// before the save), and the briefing after a compaction names them.
type Work struct {
	StateDir string
}

// maxWorkRead bounds what Files reads of a session's list: a long session touches
// hundreds of files, not megabytes of names.
const maxWorkRead = 1 << 20

func (w Work) path(sessionID string) (string, error) {
	safe, err := SafeID(sessionID)
	if err != nil {
		return "", err
	}
	return filepath.Join(w.StateDir, "work", safe+".txt"), nil
}

// Add records that the session changed rel (workspace-relative, slash-separated).
func (w Work) Add(sessionID, rel string) error {
	if sessionID == "" || sessionID == UnknownSession || rel == "" {
		return nil
	}
	path, err := w.path(sessionID)
	if err != nil {
		return err
	}
	if err := loader.EnsureStateDir(w.StateDir); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("record changed file: %w", err)
	}
	return durable.AppendLine(path, []byte(rel))
}

// Files returns the files the session changed, each once, in the order first seen.
func (w Work) Files(sessionID string) ([]string, error) {
	if sessionID == "" || sessionID == UnknownSession {
		return nil, nil
	}
	path, err := w.path(sessionID)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	seen := map[string]bool{}
	var out []string
	sc := bufio.NewScanner(&limitedReader{f: f, n: maxWorkRead})
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || seen[line] {
			continue
		}
		seen[line] = true
		out = append(out, line)
	}
	return out, sc.Err()
}

// Prune removes the lists of sessions no hook touched for a month, stopping at
// deadline.
func (w Work) Prune(now, deadline time.Time) int {
	return removeOlder(filepath.Join(w.StateDir, "work"), staleCycleAge, now, deadline)
}

type limitedReader struct {
	f *os.File
	n int64
}

func (l *limitedReader) Read(p []byte) (int, error) {
	if l.n <= 0 {
		return 0, errors.New("list of changed files is over 1 MB")
	}
	if int64(len(p)) > l.n {
		p = p[:l.n]
	}
	n, err := l.f.Read(p)
	l.n -= int64(n)
	return n, err
}
