package guard

import (
	"regexp"
	"strings"
	"sync"

	"github.com/ctxtools/ctx/internal/shquote"
)

// An interpreter's one-liner (python3 -c, node -e, perl -e, ruby -e, php -r) or the
// program it reads from a heredoc is judged by the shell commands it hands the system:
// os.system, subprocess, child_process, system, exec, backticks. A command written as
// a string literal (or a list of literals) is judged as if typed; one the code builds
// at run time (a variable, a concatenation, an f-string) cannot be judged and is
// refused. Text that only mentions a command, as print('rm -rf /'), runs nothing.

// shellOutCall matches a call that runs a shell command, up to its first argument.
var shellOutCall = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?:\bos\.(?:system|popen)|\bsubprocess\.(?:run|call|check_call|check_output|Popen|getoutput|getstatusoutput)|\b(?:execSync|execFileSync|spawnSync|execFile|spawn)|(?:\bchild_process['"]?\)?|\bcp|\bchildProcess)\.exec|(?:^|[^.\w])(?:system|exec|shell_exec|passthru|popen|proc_open|qx))\s*\(\s*`)
})

// shellOutQuoted matches backticks and %x(...) / qx{...}, which run their text as a
// shell command in Perl, Ruby and PHP.
var shellOutQuoted = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile("`([^`]*)`|%x\\(([^)]*)\\)|qx\\{([^}]*)\\}")
})

// shellOuts returns the shell commands code runs that the guard can read, and whether
// it builds one at run time.
func shellOuts(code string, lang string) (commands []string, built bool) {
	for _, loc := range shellOutCall().FindAllStringIndex(code, -1) {
		rest := code[loc[1]:]
		if lang == "python" && strings.HasSuffix(strings.TrimSpace(code[loc[0]:loc[1]]), "exec(") && !strings.Contains(code[max(0, loc[0]-4):loc[1]], "os.") {
			continue // Python's exec runs Python, not a shell
		}
		cmd, ok := literalCommand(rest)
		if !ok {
			built = true
			continue
		}
		commands = append(commands, cmd)
	}
	if lang != "python" && lang != "node" {
		for _, m := range shellOutQuoted().FindAllStringSubmatch(code, -1) {
			cmd := m[1] + m[2] + m[3]
			if strings.ContainsAny(cmd, "$@") && lang != "php" || strings.Contains(cmd, "#{") {
				built = true // interpolated
				continue
			}
			commands = append(commands, cmd)
		}
	}
	return commands, built
}

// literalCommand reads the first argument of a call, which starts s: a string literal
// ('…', "…"), or a list of them (["rm", "-rf", "x"], joined by spaces), possibly
// followed by more arguments of the same call. ok is false when it is anything else.
func literalCommand(s string) (string, bool) {
	s = strings.TrimSpace(s)
	if s == "" {
		return "", false
	}
	if s[0] == '[' {
		var words []string
		rest := strings.TrimSpace(s[1:])
		for rest != "" && rest[0] != ']' {
			w, n, ok := stringLiteral(rest)
			if !ok {
				return "", false
			}
			words = append(words, shquote.Quote(w))
			rest = strings.TrimSpace(rest[n:])
			rest = strings.TrimSpace(strings.TrimPrefix(rest, ","))
		}
		return strings.Join(words, " "), rest != ""
	}
	w, n, ok := stringLiteral(s)
	if !ok {
		return "", false
	}
	// A literal followed by + or % or .format builds the command at run time.
	after := strings.TrimSpace(s[n:])
	if after != "" && (after[0] == '+' || after[0] == '%' || after[0] == '.') {
		return "", false
	}
	return w, true
}

// stringLiteral reads a quoted string at the start of s (no prefix such as f or r):
// its value, the bytes it spans and whether it is one. A string with an interpolation
// (${…} in a JS template, #{…}, {…} in an f-string) is not.
func stringLiteral(s string) (string, int, bool) {
	if s == "" {
		return "", 0, false
	}
	q := s[0]
	if q != '\'' && q != '"' && q != '`' {
		return "", 0, false
	}
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		switch ch := s[i]; {
		case ch == '\\' && i+1 < len(s):
			i++
			b.WriteByte(s[i])
		case ch == q:
			v := b.String()
			if q == '`' && strings.Contains(v, "${") || strings.Contains(v, "#{") {
				return "", 0, false
			}
			return v, i + 1, true
		default:
			b.WriteByte(ch)
		}
	}
	return "", 0, false
}

// interpreterLang names the language an interpreter runs, for shellOuts.
func interpreterLang(name string) string {
	switch {
	case strings.HasPrefix(name, "python"):
		return "python"
	case name == "node" || name == "deno" || name == "bun":
		return "node"
	}
	return name
}

// judgeCode judges the shell commands an interpreter's code runs, refusing code that
// builds them at run time.
func (c *checker) judgeCode(code, lang string, sc *scope, text string) {
	commands, built := shellOuts(code, lang)
	for _, cmd := range commands {
		if c.done() {
			return
		}
		c.script(cmd, sc.sub())
	}
	if built && !c.done() {
		c.deny(ruleUnjudgeable, "Refused "+text+": the program builds a shell command at run time and hands it to the system, so the guard cannot know what it runs; write the command out as a literal, or run it from the shell directly.")
	}
}
