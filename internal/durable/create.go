package durable

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// CreateExclusive creates path holding data unless path exists, and reports whether
// it did. No reader and no crash ever finds the file empty or cut short, which matters
// for files whose emptiness means something (an empty .gitignore ctx wrote would be a
// person's decision to commit what it ignores). The data goes to a synced temporary file that is then
// linked to path, which fails when path exists.
func CreateExclusive(path string, data []byte, perm os.FileMode) (bool, error) {
	if err := CheckInside(path); err != nil {
		return false, err
	}
	tmpName, err := writeTemp(filepath.Dir(path), filepath.Base(path), data, perm, true)
	if err != nil {
		return false, fmt.Errorf("write %s: %w", path, err)
	}
	defer func() { _ = os.Remove(tmpName) }()
	err = linkFile(tmpName, path)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, fs.ErrExist):
		return false, nil // another process wrote it first
	}
	// A file system without hard links: create the file in place, which a crash can
	// leave empty, as before.
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if errors.Is(err, fs.ErrExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("create %s: %w", path, err)
	}
	_, werr := f.Write(data)
	if err := errors.Join(werr, f.Close()); err != nil {
		return false, fmt.Errorf("write %s: %w", path, err)
	}
	return true, nil
}

// linkFile is os.Link; a test stops a writer here, between its temporary file and the
// link, to kill it there.
var linkFile = os.Link
