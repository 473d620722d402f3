//go:build unix

package resume

import (
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
