//go:build unix

package main

import (
	"errors"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// readFileWithin reads f to its end, keeping the first limit bytes, and gives up with
// nothing when the end has not come within wait. It waits in poll(2) on the calling
// goroutine: a hook process pays for no reader thread and no timer, which a goroutine
// blocked in read(2) and a select on time.After would cost it at every tool call.
func readFileWithin(f *os.File, limit int64, wait time.Duration) (data []byte, handled bool, err error) {
	conn, err := f.SyscallConn()
	if err != nil {
		return nil, false, nil
	}
	fd := -1
	if conn.Control(func(u uintptr) { fd = int(u) }) != nil {
		return nil, false, nil
	}
	deadline := time.Now().Add(wait)
	buf := make([]byte, 32<<10)
	for {
		left := time.Until(deadline)
		if left <= 0 {
			return nil, true, nil
		}
		ready, perr := unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}, int(left.Milliseconds())+1)
		if errors.Is(perr, unix.EINTR) {
			continue
		}
		if perr != nil && data == nil {
			return nil, false, nil // a file poll(2) cannot wait on: the portable reader
		}
		if perr != nil {
			return nil, true, &os.PathError{Op: "poll", Path: f.Name(), Err: perr}
		}
		if ready == 0 {
			return nil, true, nil
		}
		n, rerr := unix.Read(fd, buf)
		switch {
		case errors.Is(rerr, unix.EINTR), errors.Is(rerr, unix.EAGAIN):
			continue
		case rerr != nil:
			return nil, true, &os.PathError{Op: "read", Path: f.Name(), Err: rerr}
		case n == 0:
			return data, true, nil
		}
		if keep := min(int64(n), limit-int64(len(data))); keep > 0 {
			data = append(data, buf[:keep]...)
		}
	}
}
