package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// These tests install ctx as a team and a developer really do: from a binary that is
// not named ctx (a renamed or development build), into a checkout that is then moved,
// and run the hook commands ctx wrote the way Claude Code does, with sh -c.

// renamedCtx copies the built ctx to DIR/ctx-dev and returns its path.
func renamedCtx(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(ctxBinary(t))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "ctx-dev")
	if err := os.WriteFile(path, data, 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// runIn runs bin in dir with only HOME and PATH set (and COLUMNS, for whole lines)
// and returns its output.
func runIn(t *testing.T, dir, home, path, bin string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = []string{"HOME=" + home, "PATH=" + path, "XDG_RUNTIME_DIR=" + t.TempDir(), "COLUMNS=" + wideColumns}
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// settingsCommands returns every hook command and the status line of a settings file.
func settingsCommands(t *testing.T, file string) []string {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Hooks map[string][]struct {
			Hooks []struct {
				Command string `json:"command"`
			} `json:"hooks"`
		} `json:"hooks"`
		StatusLine struct {
			Command string `json:"command"`
		} `json:"statusLine"`
	}
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	var cmds []string
	for _, groups := range s.Hooks {
		for _, g := range groups {
			for _, h := range g.Hooks {
				cmds = append(cmds, h.Command)
			}
		}
	}
	if len(cmds) == 0 {
		t.Fatalf("%s: no hook commands", file)
	}
	return append(cmds, s.StatusLine.Command)
}

// shHook runs a hook command as Claude Code does: sh -c, the payload on stdin.
func shHook(t *testing.T, dir, home, path, command, payload string) (stdout, stderr string, err error) {
	t.Helper()
	cmd := exec.Command("/bin/sh", "-c", command)
	cmd.Dir = dir
	cmd.Env = []string{"HOME=" + home, "PATH=" + path, "CLAUDE_PROJECT_DIR=" + dir, "XDG_RUNTIME_DIR=" + t.TempDir()}
	cmd.Stdin = strings.NewReader(payload)
	var o, e strings.Builder
	cmd.Stdout, cmd.Stderr = &o, &e
	err = cmd.Run()
	return o.String(), e.String(), err
}

func sessionStartPayload(dir string) string {
	p, _ := json.Marshal(map[string]string{
		"session_id": "11111111-2222-3333-4444-555555555555", "hook_event_name": "SessionStart",
		"source": "startup", "cwd": dir, "transcript_path": filepath.Join(dir, "none.jsonl"),
	})
	return string(p)
}

// TestInitRenamedBinaryProjectSettings: a renamed build installs into the project's
// shared settings; what it writes names no path of this machine, so the checkout can
// move and a teammate's ctx on the PATH runs the hooks, while a machine without ctx
// runs them quietly.
func TestInitRenamedBinaryProjectSettings(t *testing.T) {
	bin := renamedCtx(t)
	ws := procWorkspace(t)
	home := t.TempDir()
	sysPath := "/usr/bin:/bin"

	out, err := runIn(t, ws, home, sysPath, bin, "init")
	if err != nil {
		t.Fatalf("init from a renamed binary: %v\n%s", err, out)
	}
	if !strings.Contains(out, "the hooks run ctx from the PATH, on your teammates' machines too") {
		t.Errorf("init did not say the hooks need ctx on the PATH:\n%s", out)
	}
	if out, err := runIn(t, ws, home, sysPath, bin, "save", "-p", "1", "--summary", "first"); err != nil {
		t.Fatalf("save: %v\n%s", err, out)
	}
	settings := filepath.Join(ws, ".claude", "settings.json")
	for _, c := range settingsCommands(t, settings) {
		if strings.Contains(c, string(filepath.Separator)) && !strings.Contains(c, "/dev/null") {
			t.Errorf("a committed command names a path: %q", c)
		}
		if strings.Contains(c, "ctx-dev") || strings.Contains(c, ws) || strings.Contains(c, home) {
			t.Errorf("a committed command names this machine: %q", c)
		}
	}

	// The checkout moves; a teammate has ctx on the PATH.
	moved := filepath.Join(t.TempDir(), "moved")
	if err := os.Rename(ws, moved); err != nil {
		t.Fatal(err)
	}
	teammateBin := t.TempDir()
	if err := os.Symlink(bin, filepath.Join(teammateBin, "ctx")); err != nil {
		t.Fatal(err)
	}
	var sessionStart string
	for _, c := range settingsCommands(t, filepath.Join(moved, ".claude", "settings.json")) {
		if strings.HasSuffix(c, "system session-start") {
			sessionStart = c
		}
	}
	if sessionStart == "" {
		t.Fatal("no session-start hook registered")
	}
	stdout, stderr, err := shHook(t, moved, home, teammateBin+":"+sysPath, sessionStart, sessionStartPayload(moved))
	if err != nil || stderr != "" {
		t.Fatalf("session-start in the moved checkout: %v, stderr %q", err, stderr)
	}
	if !strings.Contains(stdout, "01-alpha") {
		t.Errorf("session-start did not brief the moved workspace's project:\n%s", stdout)
	}
	// A teammate without ctx: nothing, and success.
	stdout, stderr, err = shHook(t, moved, home, sysPath, sessionStart, sessionStartPayload(moved))
	if err != nil || stdout != "" || stderr != "" {
		t.Errorf("without ctx: err %v, stdout %q, stderr %q; want a quiet success", err, stdout, stderr)
	}
}

// TestInitRenamedBinaryLocalSettings: in the personal settings, a renamed build is
// named by its real path; the hooks run it, a second init finds them current, doctor
// agrees, and uninstall takes them out again.
func TestInitRenamedBinaryLocalSettings(t *testing.T) {
	bin := renamedCtx(t)
	ws := procWorkspace(t)
	home := t.TempDir()
	sysPath := "/usr/bin:/bin"

	if out, err := runIn(t, ws, home, sysPath, bin, "init", "--local"); err != nil {
		t.Fatalf("init --local from a renamed binary: %v\n%s", err, out)
	}
	if out, err := runIn(t, ws, home, sysPath, bin, "save", "-p", "1", "--summary", "first"); err != nil {
		t.Fatalf("save: %v\n%s", err, out)
	}
	local := filepath.Join(ws, ".claude", "settings.local.json")
	var sessionStart string
	for _, c := range settingsCommands(t, local) {
		if !strings.Contains(c, bin) {
			t.Errorf("a local command does not name the renamed binary %s: %q", bin, c)
		}
		if strings.HasSuffix(c, "system session-start") {
			sessionStart = c
		}
	}
	stdout, stderr, err := shHook(t, ws, home, sysPath, sessionStart, sessionStartPayload(ws))
	if err != nil || stderr != "" || !strings.Contains(stdout, "01-alpha") {
		t.Fatalf("the local session-start hook: %v, stderr %q, stdout %q", err, stderr, stdout)
	}

	before, err := os.ReadFile(local)
	if err != nil {
		t.Fatal(err)
	}
	out, err := runIn(t, ws, home, sysPath, bin, "init", "--local")
	if err != nil || !strings.Contains(out, "already current") {
		t.Fatalf("second init --local: %v\n%s", err, out)
	}
	if after, _ := os.ReadFile(local); string(after) != string(before) {
		t.Error("a second init changed the local settings")
	}
	if out, err := runIn(t, ws, home, sysPath, bin, "doctor"); err != nil || !strings.Contains(out, "the hooks call "+bin) {
		t.Errorf("doctor: %v\n%s", err, out)
	}
	if out, err := runIn(t, ws, home, sysPath, bin, "uninstall", "--local"); err != nil {
		t.Fatalf("uninstall --local: %v\n%s", err, out)
	}
	if _, err := os.Stat(local); !os.IsNotExist(err) {
		t.Errorf("the local settings ctx created are still there: %v", err)
	}
}
