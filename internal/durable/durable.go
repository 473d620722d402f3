// Package durable is the one place where ctx writes files that must survive a crash:
// atomic replacement and read-modify-write under a sidecar lock.
package durable

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/gofrs/flock"
)

// TempPrefix marks ctx's temporary files so that a crashed write can be recognised and
// removed by the next one.
const TempPrefix = ".ctx-tmp-"

// WriteFile replaces path with data atomically: a temporary file in the same folder is
// written, synced and renamed over path, then the folder is synced. A reader sees the old
// or the new content, never a mix.
func WriteFile(path string, data []byte, perm os.FileMode) error {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	tmp, err := os.CreateTemp(dir, TempPrefix+base+"-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmpName := tmp.Name()
	fail := func(err error) error {
		_ = tmp.Close()
		_ = os.Remove(tmpName)
		return fmt.Errorf("write %s: %w", path, err)
	}
	if _, err := tmp.Write(data); err != nil {
		return fail(err)
	}
	if err := tmp.Chmod(perm); err != nil {
		return fail(err)
	}
	if err := tmp.Sync(); err != nil {
		return fail(err)
	}
	if err := tmp.Close(); err != nil {
		_ = os.Remove(tmpName)
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmpName, path); err != nil {
		_ = os.Remove(tmpName)
		return fmt.Errorf("write %s: %w", path, err)
	}
	return syncDir(dir)
}

// ReplaceFile replaces path with data atomically (temp file and rename) without
// syncing: for runtime markers that a crash may lose but a reader must never see half
// written.
func ReplaceFile(path string, data []byte, perm os.FileMode) error {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	tmp, err := os.CreateTemp(dir, TempPrefix+base+"-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	_, werr := tmp.Write(data)
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr, os.Chmod(tmp.Name(), perm)); err != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// RemoveStaleTemps deletes temporary files that an interrupted WriteFile left in dir for
// the file named base. It is called before a write so that a crash leaves no litter;
// the caller must hold the lock every writer of that file takes, or it could remove a
// temporary file another process is about to rename.
func RemoveStaleTemps(dir, base string) {
	RemoveStaleTempsMatching(dir, globEscape(base))
}

// RemoveStaleTempsMatching is RemoveStaleTemps for every file whose name matches the
// glob pattern, for a folder of many files written under one lock.
func RemoveStaleTempsMatching(dir, pattern string) {
	matches, _ := filepath.Glob(filepath.Join(dir, TempPrefix+pattern+"-*"))
	for _, m := range matches {
		_ = os.Remove(m)
	}
}

func globEscape(s string) string {
	return strings.NewReplacer(`*`, `\*`, `?`, `\?`, `[`, `\[`, `\`, `\\`).Replace(s)
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	defer func() { _ = d.Close() }()
	// Some filesystems refuse fsync on a directory; the rename has happened by then, so
	// that refusal is not worth failing the write for.
	_ = d.Sync()
	return nil
}

// WithLock runs fn while holding an exclusive lock on the sidecar file path+".lock".
// fn must re-read whatever it modifies: another process may have changed it while this
// one waited.
func WithLock(path string, fn func() error) error {
	lock := flock.New(path + ".lock")
	if err := lock.Lock(); err != nil {
		return fmt.Errorf("lock %s: %w", path, err)
	}
	defer func() { _ = lock.Unlock() }()
	return fn()
}

// MkdirAll creates dir and its parents with perm, like os.MkdirAll, naming dir in the error.
func MkdirAll(dir string, perm os.FileMode) error {
	if err := os.MkdirAll(dir, perm); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	return nil
}
