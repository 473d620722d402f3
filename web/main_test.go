package web

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestMain gives the tests' tmux servers a folder of their own (TMUX_TMPDIR), and ends
// them and removes it afterwards: nothing is left in the system's tmux folder.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "ctxw") // short: tmux's sockets are in it
	if err != nil {
		panic(err)
	}
	_ = os.Setenv("TMUX_TMPDIR", dir)
	code := m.Run()
	sockets, _ := filepath.Glob(filepath.Join(dir, "tmux-*", "*"))
	for _, s := range sockets {
		_ = exec.Command("tmux", "-S", s, "kill-server").Run()
	}
	_ = os.RemoveAll(dir)
	os.Exit(code)
}
