//go:build !unix

package durable

import "os"

// processAlive reports whether a process with id pid exists. Without signals, finding
// the process is the best probe there is (on Windows FindProcess opens it).
func processAlive(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	_ = p.Release()
	return true
}
