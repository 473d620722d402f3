//go:build !(linux || openbsd || dragonfly || solaris || darwin || freebsd || netbsd)

package loader

import "io/fs"

// statExtra says nothing where the system's stat has no status change time Go exposes
// alike (Windows, AIX, Plan 9): stamps are size, time and mode there.
func statExtra(fs.FileInfo) (ctime int64, ino uint64) { return 0, 0 }

// stampsSeeCtime says whether stamps hold a status change time here.
const stampsSeeCtime = false
