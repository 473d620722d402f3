package usage

import (
	"bytes"
	"os"
	"syscall"
	"time"
)

// waitTail is how much of the transcript's end WaitForLine looks at: the line it waits
// for is among the newest.
const waitTail = 256 << 10

// WaitForLine waits, up to within, until the last part of the transcript at path holds
// marker, and reports whether it did. Claude Code writes its transcript lazily: a
// PostToolUse hook can run before the assistant line that asked for the tool is on
// disk, and usage read then is one reply old — old enough to miss the crossing of a
// threshold right before a compaction. The hook knows the tool call's id, which that
// line carries, so it waits for it rather than guessing.
func WaitForLine(path string, marker []byte, within time.Duration) bool {
	if len(marker) == 0 {
		return true
	}
	deadline := time.Now().Add(within)
	buf := make([]byte, waitTail)
	for {
		if tailHolds(path, marker, buf) {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func tailHolds(path string, marker, buf []byte) bool {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return false
	}
	defer func() { _ = f.Close() }()
	info, err := f.Stat()
	if err != nil || !info.Mode().IsRegular() {
		return false
	}
	off := max(info.Size()-int64(len(buf)), 0)
	n, _ := f.ReadAt(buf[:info.Size()-off], off)
	return bytes.Contains(buf[:n], marker)
}
