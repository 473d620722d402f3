package main

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxtools/ctx/demo"
)

func TestFitLine(t *testing.T) {
	tests := []struct {
		line  string
		width int
		want  string
	}{
		{"short", 20, "short\n"},
		{"no wrapping when width is 0, however long the line is", 0, "no wrapping when width is 0, however long the line is\n"},
		{"  stopped   card brand detection done; expiry spiked", 30,
			"  stopped   card brand\n            detection done;\n            expiry spiked\n"},
		{"  - a list item that goes on and on", 20, "  - a list item that\n    goes on and on\n"},
		{"   12. a numbered item that goes on", 22, "   12. a numbered item\n       that goes on\n"},
		{"ok    hooks      all 9 registered in /a/long/path/settings.json", 40,
			"ok    hooks      all 9 registered in\n                 /a/long/path/settings.json\n"},
		{"a verylongwordthatcannotbebroken end", 10, "a\nverylongwordthatcannotbebroken\nend\n"},
		{"\x1b[1mbold\x1b[0m words here", 10, "\x1b[1mbold\x1b[0m words\nhere\n"},
	}
	for _, tt := range tests {
		if got := fitLine(tt.line, tt.width); got != tt.want {
			t.Errorf("fitLine(%q, %d) =\n%q\nwant\n%q", tt.line, tt.width, got, tt.want)
		}
	}
}

func TestReflow(t *testing.T) {
	text := "A paragraph the author broke\nat a wide width, long before\nthis terminal.\n\n  ctx load 1\n  ctx load 2\n\n```\ncode line that is much too long to fit but stays\nnext code line\n```\n- item one is long enough to wrap\n- item two"
	if got := reflow(text, 80); got != text {
		t.Errorf("reflow at a width that fits changed the text:\n%s", got)
	}
	want := "A paragraph the author\nbroke at a wide width,\nlong before this\nterminal.\n\n  ctx load 1\n  ctx load 2\n\n```\ncode line that is much too long to fit but stays\nnext code line\n```\n- item one is long enough\n  to wrap\n- item two"
	if got := reflow(text, 25); got != want {
		t.Errorf("reflow(25) =\n%s\nwant\n%s", got, want)
	}
}

func TestFitWriterPartialLines(t *testing.T) {
	var b bytes.Buffer
	f := newFitWriter(&b, 10)
	// A question without its newline shows at once, whole.
	if _, err := f.Write([]byte("Remove 12 snapshot sets? [y/N] ")); err != nil {
		t.Fatal(err)
	}
	if b.String() != "Remove 12 snapshot sets? [y/N] " {
		t.Fatalf("a partial line was held back: %q", b.String())
	}
	if _, err := f.Write([]byte("yes\nthree short words\n")); err != nil {
		t.Fatal(err)
	}
	want := "Remove 12 snapshot sets? [y/N] yes\nthree\nshort\nwords\n"
	if b.String() != want {
		t.Errorf("got %q, want %q", b.String(), want)
	}
}

// TestOutputFitsTheTerminal runs commands as on a terminal 60 columns wide: no line is
// wider (a word wider than the terminal stands alone), and no word is lost; JSON is
// never fitted. In a pipe, lines stay whole.
func TestOutputFitsTheTerminal(t *testing.T) {
	ws := demoWorkspace(t)
	env := map[string]string{"CTX_WORKSPACE": ws, "NO_COLOR": "1"}
	const width = 60
	for _, args := range [][]string{
		{"load", "1"}, {"show", "1"}, {"--help"}, {"load", "--help"}, {"save", "--help"},
		{"agents", "--help"}, {"init", "--help"}, {"templates", "list"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			piped, _, code := runInMemoryWidth(t, false, 0, env, args...)
			fitted, errOut, code2 := runInMemoryWidth(t, true, width, env, args...)
			if code != 0 || code2 != 0 {
				t.Fatalf("exit %d/%d: %s", code, code2, errOut)
			}
			if !hasLineWider(piped, width) {
				t.Fatalf("the piped output has no line over %d columns; the test shows nothing", width)
			}
			for _, l := range strings.Split(fitted, "\n") {
				trimmed := strings.TrimSpace(l)
				if m := listMarker(trimmed); m > 0 {
					trimmed = trimmed[m:]
				}
				if displayWidth(l) > width && len(strings.Fields(trimmed)) > 1 {
					t.Errorf("line of %d columns: %q", displayWidth(l), l)
				}
			}
			if a, b := strings.Fields(piped), strings.Fields(fitted); strings.Join(a, " ") != strings.Join(b, " ") {
				t.Errorf("fitting changed the words:\npiped:  %q\nfitted: %q", a, b)
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

func hasLineWider(s string, width int) bool {
	for _, l := range strings.Split(s, "\n") {
		if displayWidth(l) > width {
			return true
		}
	}
	return false
}

// runInMemoryWidth is runInMemory on a terminal of width columns (0: a pipe).
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
