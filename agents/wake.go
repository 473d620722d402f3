package agents

import (
	"crypto/sha256"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/ctxtools/ctx/internal/state"
	"github.com/ctxtools/ctx/loader"
)

// The wake socket: a running dashboard (ctx serve) listens on a Unix datagram socket
// in ctx's private runtime folder, and a hook that has just recorded an agent's
// activity sends it one byte, so the page shows the change at once instead of at the
// next poll. Nothing depends on it: no server, no socket, a full buffer — the send
// fails quietly and the poll still finds the change.

// WakePath is the wake socket of the workspace at root, in the runtime folder dir: one
// per workspace, named by a hash of its path, short enough for a socket's address.
func WakePath(dir, root string) string {
	sum := sha256.Sum256([]byte(root))
	return filepath.Join(dir, fmt.Sprintf("wake-%x.sock", sum[:6]))
}

// ListenWake opens the wake socket of ws in the runtime folder and calls poke for every
// datagram until the returned close function is called. A stale socket file (a server
// that crashed) is replaced.
func ListenWake(dir string, ws *loader.Workspace, poke func()) (closeWake func(), err error) {
	path := WakePath(dir, ws.Root)
	if _, err := os.Lstat(path); err == nil {
		if c, err := net.Dial("unixgram", path); err == nil {
			_ = c.Close()
			return nil, fmt.Errorf("wake socket %s: another ctx serve of this workspace is running", path)
		}
		_ = os.Remove(path)
	}
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: path, Net: "unixgram"})
	if err != nil {
		return nil, fmt.Errorf("wake socket: %w", err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 16)
		for {
			if _, _, err := conn.ReadFromUnix(buf); err != nil {
				return
			}
			poke()
		}
	}()
	return func() {
		_ = conn.Close()
		<-done
		_ = os.Remove(path)
	}, nil
}

// Wake tells a dashboard serving ws, if one runs, that an agent's activity changed.
// It never blocks for long and never fails the caller.
func Wake(ws *loader.Workspace) {
	dir := state.RuntimeDir(os.Getenv)
	path := WakePath(dir, ws.Root)
	if _, err := os.Stat(path); err != nil {
		return // no server: the common case costs one stat
	}
	c, err := net.DialTimeout("unixgram", path, 50*time.Millisecond)
	if err != nil {
		return
	}
	_ = c.SetWriteDeadline(time.Now().Add(50 * time.Millisecond))
	_, _ = c.Write([]byte{1})
	_ = c.Close()
}
