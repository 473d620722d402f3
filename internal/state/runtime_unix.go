//go:build unix

package state

import (
	"fmt"
	"os"
	"syscall"
)

// checkPrivate refuses a runtime folder that others may enter or that another user
// owns.
func checkPrivate(dir string, fi os.FileInfo) error {
	if fi.Mode().Perm()&0o077 != 0 {
		return fmt.Errorf("%w: %s has mode %o, want 700", ErrUnsafeRuntime, dir, fi.Mode().Perm())
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Getuid() {
		return fmt.Errorf("%w: %s is owned by uid %d, not %d", ErrUnsafeRuntime, dir, st.Uid, os.Getuid())
	}
	return nil
}
