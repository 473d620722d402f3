//go:build unix

package agents

import (
	"os"
	"os/exec"
	"syscall"
)

// ownedBy reports whether user uid owns the file fi describes.
func ownedBy(fi os.FileInfo, uid int) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == uid
}

// exists reports whether a process with pid exists and this user may signal it.
func exists(pid int) bool {
	return syscall.Kill(pid, 0) == nil
}

// terminate asks process pid to end (SIGTERM).
func terminate(pid int) {
	_ = syscall.Kill(pid, syscall.SIGTERM)
}

// kill ends process pid at once (SIGKILL).
func kill(pid int) {
	_ = syscall.Kill(pid, syscall.SIGKILL)
}

// detach makes cmd a session of its own: it outlives the hook that starts it, and
// Claude Code ending the hook's process group does not end it.
func detach(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
}
