package agents

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Where systemd runs and the user lingers, ctx's tmux server starts in a scope of the
// user's manager (systemd-run --user --scope), so it outlives the login that started
// it; without lingering it does not (the manager ends with the last login); a second
// session joins the running server without; a systemd-run that fails (no user manager)
// leaves a plain server. A stand-in systemd-run records how it was called and runs
// the rest, as the real one does in a scope.
func TestServerStartsInASystemdScope(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("tmux not installed (apt-get install tmux); CI=true: a skipped real component is a failure")
		}
		t.Skip("tmux not installed")
	}
	for _, c := range []struct{ works, lingers bool }{{true, true}, {false, true}, {true, false}} {
		works := c.works
		t.Run(fmt.Sprintf("works=%v,lingers=%v", c.works, c.lingers), func(t *testing.T) {
			dir, err := os.MkdirTemp("", "tx") // short: the server's socket is in it
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = os.RemoveAll(dir) })
			log := filepath.Join(dir, "systemd-run.log")
			body := fmt.Sprintf("#!/bin/sh\necho \"$@\" >> %s\n", log)
			if works {
				body += "while [ \"$1\" != -- ]; do shift; done; shift; exec \"$@\"\n"
			} else {
				body += "echo 'Failed to connect to bus: No medium found' >&2; exit 1\n"
			}
			bin := filepath.Join(dir, "bin")
			_ = os.MkdirAll(bin, 0o755)
			if err := os.WriteFile(filepath.Join(bin, "systemd-run"), []byte(body), 0o755); err != nil {
				t.Fatal(err)
			}
			linger := map[bool]string{true: "yes", false: "no"}[c.lingers]
			if err := os.WriteFile(filepath.Join(bin, "loginctl"), []byte("#!/bin/sh\necho "+linger+"\n"), 0o755); err != nil {
				t.Fatal(err)
			}
			t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
			t.Setenv("TMUX_TMPDIR", dir)
			systemd := filepath.Join(dir, "systemd")
			_ = os.MkdirAll(systemd, 0o755)
			tm := Tmux{Socket: fmt.Sprintf("ctx-scope-test-%d", os.Getpid()), SystemdDir: systemd}
			t.Cleanup(func() { _, _ = tm.run("kill-server") })
			for _, name := range []string{"one", "two"} {
				if err := tm.NewSession(name, dir, nil, []string{"sleep", "30"}); err != nil {
					t.Fatal(err)
				}
			}
			panes, err := tm.Panes()
			if err != nil || len(panes) != 2 {
				t.Fatalf("sessions %v, %v", panes, err)
			}
			calls, _ := os.ReadFile(log)
			switch n := strings.Count(string(calls), "\n"); {
			case !c.lingers && n != 0:
				t.Errorf("systemd-run called %d times for a user who does not linger: %q", n, calls)
			case c.lingers && (n != 1 || !strings.HasPrefix(string(calls), "--user --scope")):
				t.Errorf("systemd-run called %d times: %q; want once, for the server's first session", n, calls)
			}
		})
	}
	// Without systemd, no scope.
	if s := (Tmux{Socket: "x", SystemdDir: filepath.Join(t.TempDir(), "none")}).scope(); s != nil {
		t.Errorf("a scope without systemd: %v", s)
	}
}
