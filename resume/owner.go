package resume

import (
	"errors"
	"fmt"
	"os"
)

// fileOwner is what a save keeps of the file it replaces: its mode, owner and group.
type fileOwner struct {
	mode     os.FileMode
	uid, gid int
	known    bool
}

// ErrReadOnly marks a save point its owner made read-only: ctx never replaces it.
var ErrReadOnly = errors.New("read-only")

// writable checks that the save point at path may be replaced and returns what the
// replacement must keep. A file without write permission is refused: a rename would
// replace it anyway, against its owner's wish.
func writable(t Target, path string) (fileOwner, error) {
	fi, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) {
		return fileOwner{mode: 0o644}, nil
	}
	if err != nil {
		return fileOwner{}, fmt.Errorf("%s: %w", t.Rel(path), err)
	}
	o := fileOwner{mode: fi.Mode().Perm()}
	o.uid, o.gid, o.known = ownerOf(fi)
	if o.mode&0o200 == 0 || !mayWrite(path) {
		return fileOwner{}, fmt.Errorf("%s: %w: %w (chmod u+w lets ctx save)", t.Rel(path), ErrReadOnly, ErrNotWritten)
	}
	return o, nil
}

// restore gives the new file at path the owner and group of the one it replaced (the
// rename made it the saving user's). It returns a note when that is not possible.
func (o fileOwner) restore(path string) string {
	if !o.known {
		return ""
	}
	fi, err := os.Stat(path)
	if err != nil {
		return ""
	}
	if uid, gid, ok := ownerOf(fi); !ok || (uid == o.uid && gid == o.gid) {
		return ""
	}
	if err := os.Chown(path, o.uid, o.gid); err != nil {
		return fmt.Sprintf("owner could not be kept (%d:%d): %v", o.uid, o.gid, errors.Unwrap(err))
	}
	return ""
}
