package claude

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Claude Code runs a hook or status-line command as a line of shell (`sh -c`). ctx
// writes its own (HookCommand, StatusLineCommand) and must know them again in a
// settings file, in every form any ctx wrote and however a person re-spaced or
// re-quoted them; it reads them with the shell parser the guard uses, in bash's
// dialect, of which sh's commands are a part.

// HookCommand returns the shell command a hook registration runs:
//
//	command -v ctx >/dev/null 2>&1 || exit 0; exec ctx system SUBCOMMAND
//
// Claude Code runs it with `sh -c`. On a machine without ctx (a teammate's, who cloned
// a project whose committed settings register ctx) it exits 0 and prints nothing,
// instead of failing with "ctx: not found" on every prompt and tool call. Where ctx
// exists, exec hands it the hook's stdin and makes its exit status the hook's. ctxBin
// is quoted for the shell when it needs to be; an empty ctxBin means "ctx". The same
// ctxBin gives the same bytes at every settings level, which is what lets Claude Code
// run a hook registered at two levels once.
func HookCommand(ctxBin, sub string) string {
	bin := binWord(ctxBin)
	return "command -v " + bin + " >/dev/null 2>&1 || exit 0; exec " + bin + " system " + sub
}

// StatusLineCommand returns the statusLine command that runs `ctx statusline`, chaining
// to chained (the person's own status-line command, "" for none). Like HookCommand it
// is quiet where ctx is absent, and there the person's own command still runs:
//
//	command -v ctx >/dev/null 2>&1 || exit 0; exec ctx statusline
//	if command -v ctx >/dev/null 2>&1; then exec ctx statusline -- 'CMD' ; else exec sh -c 'CMD' ; fi
func StatusLineCommand(ctxBin, chained string) string {
	bin := binWord(ctxBin)
	if chained == "" {
		return "command -v " + bin + " >/dev/null 2>&1 || exit 0; exec " + bin + " statusline"
	}
	q := shellWord(chained)
	return "if command -v " + bin + " >/dev/null 2>&1; then exec " + bin + " statusline -- " + q + " ; else exec sh -c " + q + " ; fi"
}

func binWord(ctxBin string) string {
	if ctxBin == "" {
		return "ctx"
	}
	return shellWord(ctxBin)
}

// shellWord quotes s as one word for sh: syntax.Quote's POSIX form (s itself when
// nothing in it is special to the shell, else in single quotes, or in double quotes
// when it holds a single quote). POSIX sh has no escape for a control character such
// as a newline, which syntax.Quote refuses; single quotes keep one as it is.
func shellWord(s string) string {
	if q, err := syntax.Quote(s, syntax.LangPOSIX); err == nil {
		return q
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// ctxSystemSubcommand reports whether command runs ctx's hook plumbing and returns its
// subcommand; see ctxHookCommand.
func ctxSystemSubcommand(command string) (string, bool) {
	_, sub, ok := ctxHookCommand(command)
	return sub, ok
}

// ctxHookCommand reads a hook command in any form ctx has written: `BIN system SUB`,
// where BIN's base name is ctx (a bare "ctx", or a path, quoted or not), and
// HookCommand's `command -v BIN >/dev/null 2>&1 || exit 0; exec BIN system SUB`, where
// BIN may have any name as long as both words name the same binary (a renamed ctx
// that --local registered by its path). It returns BIN unquoted and SUB ("" when the
// command stops after "system"); ok is false for any other command, which then
// belongs to the user and is never touched.
func ctxHookCommand(command string) (bin, sub string, ok bool) {
	f := parseCommand(command)
	if f == nil {
		return "", "", false
	}
	var args []string
	switch len(f.Stmts) {
	case 1:
		args, ok = simpleCommand(command, f.Stmts[0])
		if !ok || len(args) == 0 || !isCtxBinary(args[0]) {
			return "", "", false
		}
	case 2:
		guarded, ok := guardedBinary(command, f.Stmts[0])
		if !ok {
			return "", "", false
		}
		if args, ok = simpleCommand(command, f.Stmts[1]); !ok {
			return "", "", false
		}
		if len(args) > 0 && args[0] == "exec" {
			args = args[1:]
		}
		if len(args) == 0 || args[0] != guarded {
			return "", "", false
		}
	default:
		return "", "", false
	}
	if len(args) < 2 || args[1] != "system" {
		return "", "", false
	}
	if len(args) > 2 {
		sub = args[2]
	}
	return args[0], sub, true
}

// guardedBinary returns the binary HookCommand's guard tests, when st is that guard:
// `command -v BIN || exit 0`, with the first command's output sent anywhere.
func guardedBinary(src string, st *syntax.Stmt) (string, bool) {
	or, ok := st.Cmd.(*syntax.BinaryCmd)
	if !ok || or.Op != syntax.OrStmt || !plainStmt(st) || len(st.Redirs) > 0 {
		return "", false
	}
	test, ok := simpleCommand(src, or.X)
	if !ok || len(test) != 3 || test[0] != "command" || test[1] != "-v" {
		return "", false
	}
	for _, r := range or.X.Redirs {
		switch r.Op {
		case syntax.RdrOut, syntax.AppOut, syntax.DplOut, syntax.RdrAll, syntax.AppAll:
		default:
			return "", false
		}
	}
	exit, ok := simpleCommand(src, or.Y)
	if !ok || len(or.Y.Redirs) > 0 || len(exit) != 2 || exit[0] != "exit" || exit[1] != "0" {
		return "", false
	}
	return test[2], true
}

// CtxStatusLine reports whether a statusLine command runs ctx's, and the command it
// chains to ("" for none): a command in it runs `BIN statusline` (after exec or not),
// BIN being ctx or the binary the command's `command -v` tests (a renamed ctx).
func CtxStatusLine(command string) (isCtx bool, chained string) {
	f := parseCommand(command)
	if f == nil {
		return false, ""
	}
	var calls [][]string
	syntax.Walk(f, func(n syntax.Node) bool {
		if call, ok := n.(*syntax.CallExpr); ok {
			calls = append(calls, words(command, call.Args))
		}
		return true
	})
	guarded := ""
	for _, args := range calls {
		if len(args) > 2 && args[0] == "command" && args[1] == "-v" {
			guarded = args[2]
			break
		}
	}
	for _, args := range calls {
		if len(args) > 0 && args[0] == "exec" {
			args = args[1:]
		}
		if len(args) > 1 && args[1] == "statusline" && (isCtxBinary(args[0]) || guarded != "" && args[0] == guarded) {
			if len(args) > 3 && args[2] == "--" {
				chained = args[3]
			}
			return true, chained
		}
	}
	return false, ""
}

// isCtxBinary reports whether a command word names ctx: its base name is ctx (ctx.exe
// on Windows).
func isCtxBinary(word string) bool {
	base := word
	if i := strings.LastIndexAny(base, `/\`); i >= 0 {
		base = base[i+1:]
	}
	if len(base) > 4 && strings.EqualFold(base[len(base)-4:], ".exe") {
		base = base[:len(base)-4]
	}
	return base == "ctx"
}

// parseCommand parses a command line as bash would; nil when it does not parse.
func parseCommand(command string) *syntax.File {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(command), "")
	if err != nil {
		return nil
	}
	return f
}

// simpleCommand returns the words of st when it runs one command (no pipe, list,
// variable assignment, background or negation); redirections are allowed.
func simpleCommand(src string, st *syntax.Stmt) ([]string, bool) {
	call, ok := st.Cmd.(*syntax.CallExpr)
	if !ok || !plainStmt(st) || len(call.Assigns) > 0 {
		return nil, false
	}
	return words(src, call.Args), true
}

func plainStmt(st *syntax.Stmt) bool {
	return !st.Negated && !st.Background && !st.Coprocess && !st.Disown
}

func words(src string, ws []*syntax.Word) []string {
	out := make([]string, len(ws))
	for i, w := range ws {
		var b strings.Builder
		for _, p := range w.Parts {
			writeWordPart(&b, src, p, false)
		}
		out[i] = b.String()
	}
	return out
}

// writeWordPart writes a part of a word as the shell passes it on, quotes and escapes
// removed. An expansion stays as it is written ("$CLAUDE_PROJECT_DIR"): what it gives
// is known only when the command runs.
func writeWordPart(b *strings.Builder, src string, p syntax.WordPart, quoted bool) {
	switch p := p.(type) {
	case *syntax.Lit:
		b.WriteString(unescape(p.Value, quoted))
		return
	case *syntax.SglQuoted:
		if !p.Dollar {
			b.WriteString(p.Value)
			return
		}
	case *syntax.DblQuoted:
		for _, q := range p.Parts {
			writeWordPart(b, src, q, true)
		}
		return
	}
	b.WriteString(src[p.Pos().Offset():p.End().Offset()])
}

// unescape removes the backslashes of a literal: every one outside quotes, and inside
// double quotes those before $, `, ", \ and a line break. An escaped line break is no
// character at all.
func unescape(s string, quoted bool) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 == len(s) || quoted && !strings.ContainsRune("$`\"\\\n", rune(s[i+1])) {
			b.WriteByte(s[i])
			continue
		}
		i++
		if s[i] != '\n' {
			b.WriteByte(s[i])
		}
	}
	return b.String()
}
