//go:build e2e && unix

package e2e

import "syscall"

// killPID ends process pid at once (SIGKILL).
func killPID(pid int) {
	_ = syscall.Kill(pid, syscall.SIGKILL)
}
