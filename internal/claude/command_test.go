package claude

import (
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"unicode/utf8"
)

// commandTestBins are binary paths a person may have, quoted or not by shellWord.
var commandTestBins = []string{
	"ctx", "/usr/local/bin/ctx", "/Users/Jane Doe/bin/ctx", "/opt/it's/ctx", `/opt/"q"/ctx`,
	`C:\Program Files\ctx\ctx.exe`, "/a=b/ctx", "/$HOME/ctx", "/x`y`/ctx", "/tab\there/ctx",
	"/new\nline/ctx", "/é/ctx", "/!/ctx", "~/ctx", "/[a]*/ctx", "/{a,b}/ctx", "/#/ctx",
}

// TestShellWordInRealShells: sh (and bash, when there is one) read each quoted word
// back as the string it quotes, as Claude Code's `sh -c` does with a hook command.
func TestShellWordInRealShells(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no POSIX shell")
	}
	for _, shell := range []string{"sh", "bash"} {
		path, err := exec.LookPath(shell)
		if err != nil {
			t.Logf("no %s: %v", shell, err)
			continue
		}
		for _, s := range append(commandTestBins, "", "echo 'it''s'", "printf '%s\\n' \"$(date)\"") {
			out, err := exec.Command(path, "-c", "printf %s "+shellWord(s)).Output()
			if err != nil || string(out) != s {
				t.Errorf("%s: %s gives %q, %v; want %q", shell, shellWord(s), out, err, s)
			}
		}
	}
}

// TestHookCommandReadBack: ctx knows every command it writes as its own, with the
// binary it names.
func TestHookCommandReadBack(t *testing.T) {
	for _, bin := range commandTestBins {
		cmd := HookCommand(bin, "stop")
		got, sub, ok := ctxHookCommand(cmd)
		if !ok || got != bin || sub != "stop" {
			t.Errorf("ctxHookCommand(%q) = %q, %q, %v; want %q, stop", cmd, got, sub, ok, bin)
		}
		for _, chained := range []string{"", "my-line", "echo 'it''s'\necho two"} {
			cmd := StatusLineCommand(bin, chained)
			if isCtx, got := CtxStatusLine(cmd); !isCtx || got != chained {
				t.Errorf("CtxStatusLine(%q) = %v, %q; want true, %q", cmd, isCtx, got, chained)
			}
		}
	}
}

func TestCommandWords(t *testing.T) {
	tests := []struct{ command, bin string }{
		{`/a\ b/ctx system x`, "/a b/ctx"},
		{`"/a \"b\" \$c \x"/ctx system x`, `/a "b" $c \x/ctx`},
		{"\"/a\\\nb\"/ctx system x", "/ab/ctx"},
		{"/a\\\nb/ctx system x", "/ab/ctx"},
		{`"$CLAUDE_PROJECT_DIR"/bin/ctx system x`, "$CLAUDE_PROJECT_DIR/bin/ctx"},
		{`${HOME}/ctx system x`, "${HOME}/ctx"},
		{`$(pwd)/ctx system x`, "$(pwd)/ctx"},
		{`$'/a\tb'/ctx system x`, `$'/a\tb'/ctx`},
		{`'/a'"/b"/ctx system x`, "/a/b/ctx"},
		{`ctx system x # a note`, "ctx"},
	}
	for _, tt := range tests {
		bin, _, ok := ctxHookCommand(tt.command)
		if !ok || bin != tt.bin {
			t.Errorf("ctxHookCommand(%q) = %q, %v; want %q", tt.command, bin, ok, tt.bin)
		}
	}
}

// FuzzHookCommand: reading any command back never fails, and every command ctx writes,
// for any binary path and any status line it chains to, is read back as ctx's with that
// path and that status line. Strings come from JSON, so they are valid UTF-8; a NUL
// byte no shell can run; and the parser reads "\r\n" as "\n" even inside quotes, as
// bash does not (a carriage return in a binary's path or a status line is left out).
func FuzzHookCommand(f *testing.F) {
	for _, bin := range commandTestBins {
		f.Add(bin, "command -v ctx >/dev/null 2>&1 || exit 0; exec "+bin+" system stop")
	}
	f.Fuzz(func(t *testing.T, bin, command string) {
		ctxHookCommand(command)
		CtxStatusLine(command)
		for _, s := range []string{bin, command} {
			if s == "" || strings.ContainsAny(s, "\x00\r") || !utf8.ValidString(s) {
				return
			}
		}
		cmd := HookCommand(bin, "stop")
		if got, sub, ok := ctxHookCommand(cmd); !ok || got != bin || sub != "stop" {
			t.Fatalf("ctxHookCommand(%q) = %q, %q, %v; want %q, stop", cmd, got, sub, ok, bin)
		}
		if isCtx, chained := CtxStatusLine(StatusLineCommand(bin, command)); !isCtx || chained != command {
			t.Fatalf("CtxStatusLine(StatusLineCommand(%q, %q)) = %v, %q", bin, command, isCtx, chained)
		}
	})
}
