package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestInitAsksOnATerminal: with a person at the keyboard (stdin a terminal, stdout a
// terminal or a pipe: `ctx init | less`), ctx init asks before it makes a folder a
// workspace; "no" (or just Enter) changes nothing, "y" makes it.
func TestInitAsksOnATerminal(t *testing.T) {
	for _, tc := range []struct {
		answer string
		outTTY bool
		made   bool
	}{{"n\n", true, false}, {"\n", true, false}, {"y\n", true, true}, {"n\n", false, false}} {
		t.Run(strings.TrimSpace(tc.answer)+map[bool]string{true: "", false: " in a pipe"}[tc.outTTY], func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "notes.md"), []byte("mine\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			t.Chdir(dir)
			var out, errOut bytes.Buffer
			env := map[string]string{"HOME": t.TempDir()}
			code := Main([]string{"init"}, Streams{In: strings.NewReader(tc.answer), Out: &out, Err: &errOut, OutIsTTY: tc.outTTY, InIsTTY: true, Width: 80},
				func(k string) string { return env[k] })
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut.String())
			}
			if !strings.Contains(errOut.String(), "is not a ctx workspace yet. Make it one?") ||
				!strings.Contains(errOut.String(), "ctx's hooks in .claude/settings.json") {
				t.Errorf("no question asked, or it hides that Claude Code's settings are written:\n%s", errOut.String())
			}
			for _, p := range []string{"02-projects", ".ctx", ".claude"} {
				if _, err := os.Stat(filepath.Join(dir, p)); (err == nil) != tc.made {
					t.Errorf("%s exists: %v, want %v", p, err == nil, tc.made)
				}
			}
			if !tc.made && !strings.Contains(out.String(), "Nothing changed.") {
				t.Errorf("a no must say nothing changed:\n%s", out.String())
			}
			if data, err := os.ReadFile(filepath.Join(dir, "notes.md")); err != nil || string(data) != "mine\n" {
				t.Errorf("the person's file changed: %q %v", data, err)
			}
		})
	}
}
