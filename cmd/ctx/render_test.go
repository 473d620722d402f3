package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// runInMemory runs ctx with in-memory streams, as a terminal when tty is set.
func runInMemory(t *testing.T, tty bool, env map[string]string, args ...string) (string, string, int) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := Main(args, Streams{In: strings.NewReader(""), Out: &out, Err: &errOut, OutIsTTY: tty}, func(k string) string { return env[k] })
	return out.String(), errOut.String(), code
}

func tinyWorkspace(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	dir := filepath.Join(root, "02-projects", "01-alpha", "01-planning")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"overview.md": "---\nname: Alpha\nstatus: IN_PROGRESS\n---\n",
		"steps.md":    "- [x] a\n- [ ] b\n",
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func TestProjectsOnTerminal(t *testing.T) {
	ws := tinyWorkspace(t)
	tests := []struct {
		name      string
		tty       bool
		env       map[string]string
		wantBar   bool
		wantColor bool
	}{
		{"terminal", true, map[string]string{"CTX_WORKSPACE": ws}, true, true},
		{"terminal with NO_COLOR", true, map[string]string{"CTX_WORKSPACE": ws, "NO_COLOR": "1"}, true, false},
		{"dumb terminal", true, map[string]string{"CTX_WORKSPACE": ws, "TERM": "dumb"}, true, false},
		{"pipe", false, map[string]string{"CTX_WORKSPACE": ws}, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, code := runInMemory(t, tt.tty, tt.env, "projects")
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			if got := strings.Contains(out, "█████░░░░░"); got != tt.wantBar {
				t.Errorf("bar shown = %v, want %v:\n%s", got, tt.wantBar, out)
			}
			if got := strings.Contains(out, "\x1b["); got != tt.wantColor {
				t.Errorf("colour = %v, want %v:\n%q", got, tt.wantColor, out)
			}
			if !tt.wantBar && !strings.Contains(out, "1/2 50%") {
				t.Errorf("plain columns lack the count:\n%s", out)
			}
		})
	}
}

func TestLoadFlagsReachTheOptions(t *testing.T) {
	var got *loadOptions
	app := &App{Getenv: func(string) string { return "" }}
	cmd := newLoadCmd(app, func(o *loadOptions) error { got = o; return nil })
	cmd.SetArgs([]string{"checkout", "--budget", "500", "--json"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if got == nil || got.Query != "checkout" || got.Budget != 500 || !got.JSON || got.Resume {
		t.Errorf("options %+v", got)
	}
}

func TestJSONIndentedOnlyOnTerminal(t *testing.T) {
	env := map[string]string{"CTX_WORKSPACE": tinyWorkspace(t)}
	pipe, _, _ := runInMemory(t, false, env, "projects", "--json")
	tty, _, _ := runInMemory(t, true, env, "projects", "--json")
	if strings.Count(pipe, "\n") != 1 {
		t.Errorf("in a pipe, want one compact line:\n%s", pipe)
	}
	if !strings.Contains(tty, "\n  \"projects\": [") {
		t.Errorf("on a terminal, want indented JSON:\n%s", tty)
	}
}
