//go:build !unix

package agents

import (
	"os"
	"os/exec"
)

// ownedBy cannot tell without Unix user ids and says no. It is only asked of /proc
// entries, which exist on Linux alone, so nothing here is ever owned.
func ownedBy(os.FileInfo, int) bool {
	return false
}

// exists reports whether a process with pid exists: without signals, finding it is
// the probe (on Windows FindProcess opens it).
func exists(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	_ = p.Release()
	return true
}

// terminate ends process pid. There is no gentle request to end without signals, so
// it is the same as kill.
func terminate(pid int) {
	kill(pid)
}

// kill ends process pid at once.
func kill(pid int) {
	if p, err := os.FindProcess(pid); err == nil {
		_ = p.Kill()
		_ = p.Release()
	}
}

// detach leaves cmd as it is: without Unix sessions a child outlives its parent anyway.
func detach(*exec.Cmd) {}
