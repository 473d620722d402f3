package main

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ctxtools/ctx/demo"
	"github.com/ctxtools/ctx/internal/termtext"
)

// withoutExamples is help text without its Examples section.
func withoutExamples(help string) string {
	before, after, ok := strings.Cut(help, "\nExamples:\n")
	if !ok {
		return help
	}
	_, rest, _ := strings.Cut(after, "\n\n")
	return before + "\n" + rest
}

// codeSpan is text in backticks, which fitting never breaks.
var codeSpan = regexp.MustCompile("`[^`]*`")

// TestOutputFitsTheTerminal runs commands as on a terminal 60 columns wide: no line is
// wider (a word wider than the terminal stands alone), and no word is lost (compared
// with the same output unfitted, Width 0); JSON is never fitted. A pipe fits to 80
// columns: pipe_width_test.go.
func TestOutputFitsTheTerminal(t *testing.T) {
	ws := demoWorkspace(t)
	env := map[string]string{"CTX_WORKSPACE": ws, "NO_COLOR": "1"}
	const width = 60
	for _, args := range [][]string{
		{"load", "1"}, {"show", "1"}, {"--help"}, {"load", "--help"}, {"save", "--help"},
		{"agents", "--help"}, {"init", "--help"}, {"templates", "list"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			whole, _, code := runInMemoryWidth(t, false, 0, env, args...)
			fitted, errOut, code2 := runInMemoryWidth(t, true, width, env, args...)
			if code != 0 || code2 != 0 {
				t.Fatalf("exit %d/%d: %s", code, code2, errOut)
			}
			if !hasLineWider(whole, width) {
				t.Fatalf("the unfitted output has no line over %d columns; the test shows nothing", width)
			}
			fenced := false
			for _, l := range strings.Split(fitted, "\n") {
				// A fenced block's lines are code to copy: whole, however long.
				if fence := termtext.IsFence(l); fenced || fence {
					fenced = fenced != fence
					continue
				}
				// A code span (a command to copy) is never broken: one word.
				words := strings.Fields(codeSpan.ReplaceAllString(l, "code"))
				if len(words) > 0 && strings.Trim(words[0], "-*0123456789.") == "" {
					words = words[1:] // a list marker: its item's one long word stands alone
				}
				if displayWidth(l) > width && len(words) > 1 {
					t.Errorf("line of %d columns: %q", displayWidth(l), l)
				}
			}
			// Examples are fitted as commands (TestExamplesStayCommands checks them).
			if a, b := strings.Fields(withoutExamples(whole)), strings.Fields(withoutExamples(fitted)); strings.Join(a, " ") != strings.Join(b, " ") {
				t.Errorf("fitting changed the words:\nwhole:  %q\nfitted: %q", a, b)
			}
		})
	}
	t.Run("projects", func(t *testing.T) {
		out, _, code := runInMemoryWidth(t, true, width, env, "projects")
		if code != 0 || hasLineWider(out, width) {
			t.Errorf("exit %d, a row wider than %d:\n%s", code, width, out)
		}
		if !strings.Contains(out, "\n01-checkout") {
			t.Errorf("a cut row lost the project's number and id:\n%s", out)
		}
	})
	t.Run("json", func(t *testing.T) {
		out, _, code := runInMemoryWidth(t, true, width, env, "load", "1", "--json")
		var v map[string]any
		if code != 0 || json.Unmarshal([]byte(out), &v) != nil || !hasLineWider(out, width) {
			t.Errorf("JSON on a terminal was fitted or broken (exit %d):\n%s", code, out)
		}
	})
}

// displayWidth is the number of columns l takes (the output has no colours: NO_COLOR).
func displayWidth(l string) int { return utf8.RuneCountInString(l) }

func hasLineWider(s string, width int) bool {
	for _, l := range strings.Split(s, "\n") {
		if displayWidth(l) > width {
			return true
		}
	}
	return false
}

// runInMemoryWidth is runInMemory with Out a terminal or not (tty), its text fitted to
// width columns (0: lines stay whole; SystemStreams makes a pipe 80 columns wide).
func runInMemoryWidth(t *testing.T, tty bool, width int, env map[string]string, args ...string) (string, string, int) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := Main(args, Streams{In: strings.NewReader(""), Out: &out, Err: &errOut, OutIsTTY: tty, Width: width}, func(k string) string { return env[k] })
	return out.String(), errOut.String(), code
}

// demoWorkspace writes ctx's example workspace to a fresh folder.
func demoWorkspace(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "shop")
	if err := demo.Write(dir); err != nil {
		t.Fatal(err)
	}
	return dir
}
