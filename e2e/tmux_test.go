//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// Interactive is claude running interactively in tmux, on a tmux server of its own (a
// private socket in the Env's folder), as a person at a terminal would run it.
type Interactive struct {
	e      *Env
	socket string
	Debug  string // the --debug-file log's path
}

// Tmux starts claude interactively with args in a new tmux server and stops the server
// when the test ends. It seeds ~/.claude.json the way a finished onboarding leaves it
// (CLAUDE-CODE.md §1), so no online check or dialog stands in the way.
func (e *Env) Tmux(args ...string) *Interactive {
	e.T.Helper()
	tmux, err := exec.LookPath("tmux")
	if err != nil {
		Missing(e.T, "tmux (apt-get install tmux)")
	}
	e.seedClaudeJSON()
	s := &Interactive{e: e, socket: filepath.Join(e.Root, "tmux.sock"), Debug: filepath.Join(e.Root, "interactive-debug.log")}
	argv := append([]string{e.Claude, "--debug-file", s.Debug, "--permission-mode", "default", "--allowedTools", "Bash", "Write", "Edit", "Read"}, args...)
	cmd := exec.Command(tmux, append([]string{"-S", s.socket, "-f", "/dev/null", "new-session", "-d", "-s", "e2e", "-x", "160", "-y", "48", "-c", e.Workspace}, argv...)...)
	cmd.Env = e.environ(!e.NoCtx)
	if out, err := cmd.CombinedOutput(); err != nil {
		e.T.Fatalf("tmux new-session: %v\n%s", err, out)
	}
	e.T.Cleanup(func() { _ = s.tmux("kill-server").Run() })
	return s
}

func (s *Interactive) tmux(args ...string) *exec.Cmd {
	cmd := exec.Command("tmux", append([]string{"-S", s.socket}, args...)...)
	cmd.Env = s.e.environ(false)
	return cmd
}

// Screen is the pane's visible text.
func (s *Interactive) Screen() string {
	out, _ := s.tmux("capture-pane", "-p", "-t", "=e2e:").Output()
	return string(out)
}

// WaitFor waits until the screen shows text, failing the test after timeout.
func (s *Interactive) WaitFor(text string, timeout time.Duration) {
	s.e.T.Helper()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if strings.Contains(s.Screen(), text) {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	s.e.T.Fatalf("the screen never showed %q:\n%s", text, s.Screen())
}

// Type types text into the pane, then presses Enter.
func (s *Interactive) Type(text string) {
	s.e.T.Helper()
	if out, err := s.tmux("send-keys", "-t", "=e2e:", "-l", text).CombinedOutput(); err != nil {
		s.e.T.Fatalf("send-keys: %v\n%s", err, out)
	}
	time.Sleep(150 * time.Millisecond)
	if out, err := s.tmux("send-keys", "-t", "=e2e:", "Enter").CombinedOutput(); err != nil {
		s.e.T.Fatalf("send-keys: %v\n%s", err, out)
	}
}

// WaitExit waits for claude to end (the tmux session goes away with it).
func (s *Interactive) WaitExit(timeout time.Duration) {
	s.e.T.Helper()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if s.tmux("has-session", "-t", "=e2e").Run() != nil {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	s.e.T.Fatalf("claude did not exit:\n%s", s.Screen())
}

// Hooks are the hooks the interactive client ran, from its debug log.
func (s *Interactive) Hooks() []HookRun {
	b, _ := os.ReadFile(s.Debug)
	return parseHooks(string(b))
}

// seedClaudeJSON writes ~/.claude.json as a finished onboarding leaves it: onboarding
// done, the stand-in's key approved, the workspace trusted.
func (e *Env) seedClaudeJSON() {
	e.T.Helper()
	path := filepath.Join(e.Home, ".claude.json")
	doc := map[string]any{}
	if b, err := os.ReadFile(path); err == nil {
		_ = json.Unmarshal(b, &doc)
	}
	doc["hasCompletedOnboarding"] = true
	doc["customApiKeyResponses"] = map[string]any{"approved": []string{apiKey[len(apiKey)-20:]}, "rejected": []string{}}
	projects, _ := doc["projects"].(map[string]any)
	if projects == nil {
		projects = map[string]any{}
	}
	projects[e.Workspace] = map[string]any{"hasTrustDialogAccepted": true}
	projects[e.Root] = map[string]any{"hasTrustDialogAccepted": true}
	doc["projects"] = projects
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		e.T.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		e.T.Fatal(fmt.Errorf("seed ~/.claude.json: %w", err))
	}
}
