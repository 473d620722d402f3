//go:build e2e && !unix

package e2e

import "os"

// killPID ends process pid at once. The suite runs on Linux (it finds processes in
// /proc); this keeps the package building elsewhere.
func killPID(pid int) {
	if p, err := os.FindProcess(pid); err == nil {
		_ = p.Kill()
		_ = p.Release()
	}
}
