//go:build unix

package hosts

import (
	"os"
	"syscall"
)

// ownedByMe reports whether this user owns the file fi describes.
func ownedByMe(fi os.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Getuid()
}
