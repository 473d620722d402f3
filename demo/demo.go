// Package demo holds the example workspace embedded in the ctx binary.
//
// The workspace is a small fictional team, "Acme web shop", with one project in
// progress and a save point (01-checkout-redesign), one being planned with the numbered
// planning names (02-search-relevance), one complete with a legacy schema-v2 save point
// (03-docs-site-migration), an onboarding project, and a commented .ctx/config.yaml.
package demo

import (
	"embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
)

// The all: prefix keeps the files whose names start with "_" or "." (_resume.md, .ctx/).
//
//go:embed all:workspace
var embedded embed.FS

// root is the folder of embedded that holds the workspace.
const root = "workspace"

// Modes of what Write creates (before the umask).
const (
	fileMode = 0o644
	dirMode  = 0o755
)

// ErrNotEmpty is the reason Write refuses a folder that already holds something.
var ErrNotEmpty = errors.New("not empty")

// Files lists the workspace-relative paths (forward slashes) of every embedded file,
// sorted.
func Files() []string {
	var files []string
	err := fs.WalkDir(embedded, root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			files = append(files, p[len(root)+1:])
		}
		return nil
	})
	if err != nil {
		// The tree is compiled into the binary: a walk error is a broken build.
		panic("demo: embedded workspace: " + err.Error())
	}
	slices.Sort(files)
	return files
}

// Write copies the example workspace into dir, which must be empty or not exist (it is
// then created, with its parents, mode 0o755). It refuses, with an error wrapping
// ErrNotEmpty, when dir already holds anything, and it never replaces an existing file.
// Files get mode 0o644 and folders 0o755 (less what the umask takes away). When a write
// fails, everything Write created is removed again, dir too when Write made it.
func Write(dir string) (err error) {
	made, err := prepare(dir)
	if err != nil {
		return err
	}
	var created []string // in creation order, so a rollback removes children first
	if made {
		created = append(created, dir)
	}
	defer func() {
		if err != nil {
			for _, p := range slices.Backward(created) {
				_ = os.Remove(p)
			}
		}
	}()
	folders := map[string]bool{}
	for _, rel := range Files() {
		for _, d := range parents(path.Dir(rel)) {
			if folders[d] {
				continue
			}
			p := filepath.Join(dir, filepath.FromSlash(d))
			if err := os.Mkdir(p, dirMode); err != nil {
				return writeError(dir, err)
			}
			created = append(created, p)
			folders[d] = true
		}
		data, err := embedded.ReadFile(root + "/" + rel)
		if err != nil {
			return fmt.Errorf("demo: %w", err)
		}
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := writeNew(p, data); err != nil {
			return writeError(dir, err)
		}
		created = append(created, p)
	}
	return nil
}

// writeError words a failure to create something inside dir. Something already in the
// way means another process filled dir after prepare found it empty.
func writeError(dir string, err error) error {
	if errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("demo: %s is %w", dir, ErrNotEmpty)
	}
	return fmt.Errorf("demo: %w", err)
}

// prepare makes sure dir is an empty folder, creating it (and its parents) when it does
// not exist; made reports whether it did.
func prepare(dir string) (made bool, err error) {
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := os.MkdirAll(dir, dirMode); err != nil {
			return false, fmt.Errorf("demo: %w", err)
		}
		return true, nil
	case err != nil:
		return false, fmt.Errorf("demo: %w", err)
	case !fi.IsDir():
		return false, fmt.Errorf("demo: %s is not a folder", dir)
	}
	f, err := os.Open(dir)
	if err != nil {
		return false, fmt.Errorf("demo: %w", err)
	}
	defer func() { _ = f.Close() }()
	names, err := f.Readdirnames(1)
	if len(names) > 0 {
		return false, fmt.Errorf("demo: %s is %w", dir, ErrNotEmpty)
	}
	if err != nil && !errors.Is(err, io.EOF) {
		return false, fmt.Errorf("demo: %w", err)
	}
	return false, nil
}

// writeNew writes a file that must not exist yet, so that nothing is ever overwritten,
// even when another process fills dir after prepare looked at it.
func writeNew(p string, data []byte) error {
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, fileMode)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		_ = f.Close()
		_ = os.Remove(p)
		return err
	}
	if err := f.Close(); err != nil {
		_ = os.Remove(p)
		return err
	}
	return nil
}

// parents returns a slash-separated folder and the folders above it, outermost first
// ("a/b" gives "a", "a/b"); "." gives nothing.
func parents(d string) []string {
	if d == "." {
		return nil
	}
	return append(parents(path.Dir(d)), d)
}
