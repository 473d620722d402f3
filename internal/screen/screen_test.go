package screen

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	tests := []struct {
		in   string
		want Screen
	}{
		{"plain\n", Screen{{{Text: "plain"}}}},
		{"a\n\nb", Screen{{{Text: "a"}}, nil, {{Text: "b"}}}},
		{"\x1b[38;2;215;119;87mtick\x1b[39m rest", Screen{{{Text: "tick", FG: "#d77757"}, {Text: " rest"}}}},
		{"\x1b[1mb\x1b[22m\x1b[7mi\x1b[27m", Screen{{{Text: "b", Attr: Bold}, {Text: "i", Attr: Inverse}}}},
		{"\x1b[38;5;208mx\x1b[48;5;17my\x1b[49mz\x1b[0m", Screen{{{Text: "x", FG: "#ff8700"}, {Text: "y", FG: "#ff8700", BG: "#00005f"}, {Text: "z", FG: "#ff8700"}}}},
		{"\x1b[38:2::1:2:3mc\x1b[m", Screen{{{Text: "c", FG: "#010203"}}}},
		{"\x1b[31;1mr\x1b[39;22m", Screen{{{Text: "r", FG: "#cd3131", Attr: Bold}}}},
		{"\x1b[4:0mu\x1b[4mv", Screen{{{Text: "u"}, {Text: "v", Attr: Underline}}}},
		// Other sequences are skipped whole; control characters draw nothing.
		{"a\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\b\x07\x1b(B.", Screen{{{Text: "alinkb."}}}},
		{"<script>&amp;", Screen{{{Text: "<script>&amp;"}}}},
		{"cut \x1b[38;2;1", Screen{{{Text: "cut "}}}},
		{"bad \xff byte", Screen{{{Text: "bad \ufffd byte"}}}},
	}
	for _, tt := range tests {
		got := Parse(tt.in)
		if fmt.Sprint(got) != fmt.Sprint(tt.want) {
			t.Errorf("Parse(%q) =\n%v\nwant\n%v", tt.in, got, tt.want)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add("\x1b[38;2;215;119;87mtick\x1b[39m rest\n\x1b[1;7mx")
	f.Add("\x1b]8;;u\x07\x1b[")
	f.Fuzz(func(t *testing.T, s string) {
		sc := Parse(s)
		for _, line := range sc {
			for _, sp := range line {
				if sp.Text == "" || strings.ContainsAny(sp.Text, "\x1b\n") {
					t.Fatalf("span %q of %q", sp.Text, s)
				}
			}
		}
	})
}

// tmux is the oracle: styled text is printed into a real pane, and what tmux itself
// says of it (capture-pane -e, re-encoded by tmux) is parsed. Its plain text must be
// tmux's own capture without -e, and each styled word must carry the colour it was
// printed with.
func TestParseAgreesWithTmux(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("tmux not installed (apt-get install tmux); CI=true: a skipped real component is a failure")
		}
		t.Skip("tmux not installed")
	}
	dir, err := os.MkdirTemp("", "scr") // short: tmux's socket lives here
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	t.Setenv("TMUX_TMPDIR", dir)
	tmux := func(args ...string) string {
		t.Helper()
		out, err := exec.Command("tmux", append([]string{"-L", "screen-test", "-f", "/dev/null"}, args...)...).Output()
		if err != nil {
			t.Fatalf("tmux %v: %v", args, err)
		}
		return string(out)
	}
	t.Cleanup(func() { _ = exec.Command("tmux", "-L", "screen-test", "kill-server").Run() })

	// Words in known styles, then random noise of styles and text.
	type word struct {
		sgr, text, fg, bg string
		attr              uint8
	}
	words := []word{
		{"38;2;215;119;87", "truecolor", "#d77757", "", 0},
		{"38;5;208", "indexed", "#ff8700", "", 0},
		{"31", "red", "#cd3131", "", 0},
		{"1;48;2;10;20;30", "boldonbg", "", "#0a141e", Bold},
		{"7", "inverse", "", "", Inverse},
		{"3;4", "italicunder", "", "", Italic | Underline},
	}
	rng := rand.New(rand.NewPCG(7, 28))
	var script strings.Builder
	for i, w := range words {
		fmt.Fprintf(&script, "printf '\\033[%sm%s\\033[0m line%d\\n'\n", w.sgr, w.text, i)
	}
	sgrs := []string{"0", "1", "2", "3", "4", "7", "9", "22", "24", "27", "31", "42", "95", "38;5;33", "48;5;240", "38;2;1;200;3", "39", "49"}
	for i := range 30 {
		var line strings.Builder
		for range 1 + rng.IntN(6) {
			fmt.Fprintf(&line, "\\033[%sm", sgrs[rng.IntN(len(sgrs))])
			line.WriteString([]string{"word", "ü", "╭─╮", "❯ 1. Yes", "  spaced  ", "漢字"}[rng.IntN(6)])
		}
		fmt.Fprintf(&script, "printf '%s\\033[0m n%d\\n'\n", line.String(), i)
	}
	script.WriteString("sleep 60\n")
	sh := filepath.Join(dir, "draw.sh")
	if err := os.WriteFile(sh, []byte(script.String()), 0o755); err != nil {
		t.Fatal(err)
	}
	tmux("new-session", "-d", "-s", "s", "-x", "120", "-y", "60", "sh", sh)
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(tmux("capture-pane", "-p", "-t", "=s:"), " n29") {
		if time.Now().After(deadline) {
			t.Fatalf("the pane never showed the script's output:\n%s", tmux("capture-pane", "-p", "-t", "=s:"))
		}
		time.Sleep(50 * time.Millisecond)
	}
	styled := tmux("capture-pane", "-p", "-e", "-t", "=s:")
	plain := tmux("capture-pane", "-p", "-t", "=s:")
	sc := Parse(styled)
	if got, want := strings.TrimRight(sc.Plain(), "\n"), strings.TrimRight(plain, "\n"); got != want {
		t.Errorf("the parse's text is not tmux's plain capture:\n got %q\nwant %q", got, want)
	}
	for i, w := range words {
		var found *Span
		for _, sp := range sc[i] {
			if sp.Text == w.text {
				found = &sp
			}
		}
		if found == nil {
			t.Errorf("line %d: no span %q in %+v", i, w.text, sc[i])
			continue
		}
		if found.FG != w.fg || found.BG != w.bg || found.Attr != w.attr {
			t.Errorf("%q printed with %s: parsed as %+v, want fg %q bg %q attr %d", w.text, w.sgr, *found, w.fg, w.bg, w.attr)
		}
	}
}
