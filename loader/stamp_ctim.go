//go:build linux || openbsd || dragonfly || solaris

package loader

import (
	"io/fs"
	"syscall"
)

// statExtra is the status change time and inode of a stat.
func statExtra(fi fs.FileInfo) (ctime int64, ino uint64) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return st.Ctim.Nano(), st.Ino
	}
	return 0, 0
}

// stampsSeeCtime says whether stamps hold a status change time here.
const stampsSeeCtime = true
