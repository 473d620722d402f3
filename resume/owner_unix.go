//go:build unix

package resume

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// ownerOf returns the user and group that own the file fi describes.
func ownerOf(fi os.FileInfo) (uid, gid int, ok bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0, false
	}
	return int(st.Uid), int(st.Gid), true
}

// mayWrite reports whether this process may write path, as the kernel decides it
// (permission bits for this user, ACLs, a read-only mount).
func mayWrite(path string) bool {
	return syscall.Access(path, 2 /* W_OK */) == nil
}

// syncFolder makes the entries of dir durable.
func syncFolder(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	defer func() { _ = d.Close() }()
	// Some filesystems refuse fsync on a folder (EINVAL, ENOTSUP): they cannot do
	// better, so that refusal is not an error.
	if err := d.Sync(); err != nil && !errors.Is(err, syscall.EINVAL) && !errors.Is(err, syscall.ENOTSUP) {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	return nil
}
