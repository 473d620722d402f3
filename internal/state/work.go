package state

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/ctxtools/ctx/internal/durable"
)

// A session's work list is what the hooks saw it change: the workspace files its
// Write, Edit and NotebookEdit calls touched, one line each in its work.txt. A save
// lists them when git cannot (a workspace that is not a repository, or work committed
// before the save), and the briefing after a compaction names them.

// maxWorkRead bounds what Work reads of a session's list: a long session touches
// hundreds of files, not megabytes of names.
const maxWorkRead = 1 << 20

// AddWork records that the session changed rel (workspace-relative, slash-separated).
func (se *Session) AddWork(rel string) error {
	if se.ID == "" || se.ID == UnknownSession || rel == "" {
		return nil
	}
	path, err := se.path(workFile)
	if err != nil {
		return err
	}
	if err := se.ensure(); err != nil {
		return fmt.Errorf("record changed file: %w", err)
	}
	return durable.AppendLine(path, []byte(rel))
}

// Work returns the files the session changed, each once, in the order first seen.
func (se *Session) Work() ([]string, error) {
	if se.ID == "" || se.ID == UnknownSession {
		return nil, nil
	}
	path, err := se.path(workFile)
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
