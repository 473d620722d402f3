package guard

import (
	"path"
	"strconv"
	"strings"
	"unicode/utf8"

	"mvdan.cc/sh/v3/syntax"
)

// arg is a word of a command as the shell would pass it, when that can be known without
// running anything. An unknown word (one with a command substitution or an unset
// variable) keeps its known pieces with unknownText in place of the rest, so that a
// script built from it still parses.
type arg struct {
	s     string
	known bool
	// unset names the first variable in the word that the command never assigns and
	// bash does not set itself, and ifUnset is the word's value with such variables
	// empty, as bash expands them: "$DIR/" is "/" when DIR is unset.
	unset   string
	ifUnset string
	// download marks a word holding code nobody has read: a download, as in
	// "$(curl URL)" or <(wget -O- URL), or text a decoder produces, as in
	// "$(echo … | base64 -d)".
	download unseen
}

// unknownText replaces the parts of a word the guard cannot know. It is a plain word
// that names nothing dangerous, so an unknown part can never complete a dangerous
// command by accident.
const unknownText = "__ctx_unknown__"

// maxVars bounds the variables a scope tracks, so copying a scope for a subshell stays
// cheap however many assignments a command makes.
const maxVars = 64

// scope is what the guard knows while walking one shell: the working folder (empty when
// unknown, after `cd "$X"`), the variables assigned literal values, and the source text
// that node offsets refer to.
type scope struct {
	cwd   string
	vars  map[string]string
	src   string
	depth int // nesting of scripts parsed from strings, such as bash -c
	// assigned are the variables the command assigns, known value or not; past
	// maxAssigned names, allAssigned stands for every name.
	assigned    map[string]bool
	allAssigned bool
}

// maxAssigned bounds the names a scope remembers as assigned.
const maxAssigned = 4 * maxVars

// sub is a copy for a subshell: what it changes does not leak back.
func (sc *scope) sub() *scope {
	n := *sc
	if len(sc.vars) > 0 {
		n.vars = make(map[string]string, len(sc.vars))
		for k, v := range sc.vars {
			n.vars[k] = v
		}
	}
	if len(sc.assigned) > 0 {
		n.assigned = make(map[string]bool, len(sc.assigned))
		for k := range sc.assigned {
			n.assigned[k] = true
		}
	}
	return &n
}

func (sc *scope) set(name string, a arg) {
	sc.markAssigned(name)
	if !a.known {
		delete(sc.vars, name)
		return
	}
	if sc.vars == nil {
		sc.vars = map[string]string{}
	}
	if _, ok := sc.vars[name]; ok || len(sc.vars) < maxVars {
		sc.vars[name] = a.s
	}
}

func (sc *scope) markAssigned(name string) {
	if sc.allAssigned || sc.assigned[name] {
		return
	}
	if len(sc.assigned) >= maxAssigned {
		sc.allAssigned = true
		return
	}
	if sc.assigned == nil {
		sc.assigned = map[string]bool{}
	}
	sc.assigned[name] = true
}

// unassigned reports whether name may be unset when the command runs: nothing in it
// assigns the variable, and bash or a login does not always set it.
func (sc *scope) unassigned(name string) bool {
	if sc.allAssigned || sc.assigned[name] || alwaysSet[name] || !isName(name) {
		return false
	}
	_, known := sc.vars[name]
	return !known
}

// alwaysSet are the variables bash sets itself, or a login always does.
var alwaysSet = map[string]bool{
	"HOME": true, "PWD": true, "OLDPWD": true, "PATH": true, "SHELL": true, "USER": true,
	"LOGNAME": true, "UID": true, "EUID": true, "PPID": true, "RANDOM": true,
	"SECONDS": true, "LINENO": true, "HOSTNAME": true, "HOSTTYPE": true, "OSTYPE": true,
	"MACHTYPE": true, "SHLVL": true, "IFS": true, "BASH": true, "BASHPID": true,
	"BASH_VERSION": true, "GROUPS": true, "EPOCHSECONDS": true, "EPOCHREALTIME": true,
}

// isName reports whether s is a variable name rather than a positional or special
// parameter such as $1, $@ or $?, which the rule for unset variables leaves alone.
func isName(s string) bool {
	return s != "" && isAssignment(s+"=")
}

// abs is p as an absolute clean path, or "" when it is relative and the working folder
// is unknown.
func (sc *scope) abs(p string) string {
	if strings.HasPrefix(p, "/") {
		return path.Clean(p)
	}
	if sc.cwd == "" {
		return ""
	}
	return path.Join(sc.cwd, p)
}

func (c *checker) words(ws []*syntax.Word, sc *scope) []arg {
	args := make([]arg, len(ws))
	for i, w := range ws {
		args[i] = c.word(w, sc)
	}
	return args
}

// word resolves w as bash would, for the parts that need no process: quotes, escapes,
// a leading ~, and $HOME, $PWD and variables assigned earlier in the command.
func (c *checker) word(w *syntax.Word, sc *scope) arg {
	x := &expansion{known: true}
	for i, part := range w.Parts {
		switch p := part.(type) {
		case *syntax.Lit:
			v := unescape(p.Value, quoteNone)
			if i == 0 && strings.HasPrefix(v, "~") {
				var ok bool
				v, ok = c.tilde(v, sc)
				x.known = x.known && ok
			}
			x.write(v)
		case *syntax.SglQuoted:
			x.write(singleQuoted(p))
		case *syntax.DblQuoted:
			for _, inner := range p.Parts {
				c.part(x, inner, sc)
			}
		default:
			c.part(x, part, sc)
		}
		if c.tooLarge(x) {
			break
		}
	}
	return x.arg()
}

// expansion collects a word's value as word resolves it.
type expansion struct {
	b, e     strings.Builder // the value, and the value with unassigned variables empty
	known    bool
	unset    string
	download unseen
}

func (x *expansion) write(s string) {
	x.b.WriteString(s)
	x.e.WriteString(s)
}

func (x *expansion) arg() arg {
	a := arg{s: x.b.String(), known: x.known, download: x.download}
	if x.unset != "" {
		a.unset, a.ifUnset = x.unset, x.e.String()
	}
	return a
}

// tooLarge refuses a word that expands beyond what the guard judges, as
// a=x; a=$a$a; a=$a$a... would, rather than build it or let it pass unread.
func (c *checker) tooLarge(x *expansion) bool {
	if x.b.Len() <= maxCommandBytes {
		return false
	}
	c.deny(ruleUnjudgeable, "Refused this command: it builds a string longer than "+
		strconv.Itoa(maxCommandBytes>>10)+" KiB from its variables, too large to judge; write the content to a file with the file-writing tool and use that file instead.")
	return true
}

// part writes a word part found unquoted or inside double quotes (the difference does
// not matter here: field splitting and globbing are judged on the result).
func (c *checker) part(x *expansion, part syntax.WordPart, sc *scope) {
	switch p := part.(type) {
	case *syntax.Lit:
		x.write(unescape(p.Value, quoteDouble))
		return
	case *syntax.ParamExp:
		if v, ok := c.param(p, sc); ok {
			x.write(v)
			return
		}
		if name, v, ok := emptyParam(p, sc); ok {
			x.b.WriteString(unknownText)
			x.e.WriteString(v)
			x.known = false
			if x.unset == "" {
				x.unset = name
			}
			return
		}
	case *syntax.CmdSubst:
		// "$(pwd)" is a common way to name the working folder, and a known one.
		if isPwd(p) && sc.cwd != "" {
			x.write(sc.cwd)
			return
		}
		x.download = max(x.download, c.downloads(p))
	case *syntax.ProcSubst:
		x.download = max(x.download, c.downloads(p))
	}
	x.write(unknownText)
	x.known = false
}

// emptyParam is the value of an unassigned variable's expansion when the variable is
// unset: "" for $NAME, ${NAME} and ${NAME:+x}, the default for ${NAME:-default}. It is
// not ok for ${NAME:?} and ${NAME?}, which stop bash instead, and for anything else.
func emptyParam(p *syntax.ParamExp, sc *scope) (string, string, bool) {
	if p.Param == nil || !plainParam(p) || !sc.unassigned(p.Param.Value) {
		return "", "", false
	}
	name := p.Param.Value
	if p.Exp == nil {
		return name, "", true
	}
	switch p.Exp.Op {
	case syntax.AlternateUnset, syntax.AlternateUnsetOrNull:
		return name, "", true
	case syntax.DefaultUnset, syntax.DefaultUnsetOrNull:
		if p.Exp.Word == nil {
			return name, "", true
		}
		if v := p.Exp.Word.Lit(); v != "" && !strings.ContainsAny(v, "\\'\"$`~") {
			return name, v, true
		}
	}
	return "", "", false
}

// param is the value of $NAME or ${NAME}, and of ${NAME:-x} and the like when NAME is
// known, since those then mean NAME.
func (c *checker) param(p *syntax.ParamExp, sc *scope) (string, bool) {
	name := paramName(p)
	if name == "" {
		if p.Exp == nil || p.Param == nil || !plainParam(p) {
			return "", false
		}
		switch p.Exp.Op {
		case syntax.DefaultUnset, syntax.DefaultUnsetOrNull, syntax.ErrorUnset, syntax.ErrorUnsetOrNull:
			name = p.Param.Value
		default:
			return "", false
		}
	}
	if v, ok := sc.vars[name]; ok {
		return v, true
	}
	switch name {
	case "HOME":
		return c.rules.env.Home, c.rules.env.Home != ""
	case "PWD":
		return sc.cwd, sc.cwd != ""
	}
	return "", false
}

// isPwd reports whether s is $(pwd), `pwd`, $(pwd -P) or $(pwd -L).
func isPwd(s *syntax.CmdSubst) bool {
	if len(s.Stmts) != 1 || len(s.Stmts[0].Redirs) > 0 {
		return false
	}
	call, ok := s.Stmts[0].Cmd.(*syntax.CallExpr)
	if !ok || len(call.Assigns) > 0 || len(call.Args) == 0 || len(call.Args) > 2 || call.Args[0].Lit() != "pwd" {
		return false
	}
	return len(call.Args) == 1 || call.Args[1].Lit() == "-P" || call.Args[1].Lit() == "-L"
}

// paramName is NAME for a plain $NAME or ${NAME}, else "".
func paramName(p *syntax.ParamExp) string {
	if p.Param == nil || p.Exp != nil || !plainParam(p) {
		return ""
	}
	return p.Param.Value
}

func plainParam(p *syntax.ParamExp) bool {
	return p.Flags == nil && !p.Excl && !p.Length && !p.Width && !p.IsSet &&
		p.Split == syntax.OptUnset && p.GlobSubst == syntax.OptUnset && p.RcExpand == syntax.OptUnset &&
		p.NestedParam == nil && p.Index == nil && len(p.Modifiers) == 0 &&
		p.Slice == nil && p.Repl == nil && p.Names == 0
}

// tilde expands a leading ~ (~, ~/x, ~+). ~user is left unknown rather than guessed.
func (c *checker) tilde(v string, sc *scope) (string, bool) {
	head, rest, _ := strings.Cut(v, "/")
	if rest != "" || strings.HasSuffix(v, "/") {
		rest = "/" + rest
	}
	switch head {
	case "~":
		if c.rules.env.Home == "" {
			return unknownText + rest, false
		}
		return c.rules.env.Home + rest, true
	case "~+":
		if sc.cwd == "" {
			return unknownText + rest, false
		}
		return sc.cwd + rest, true
	}
	return unknownText + rest, false
}

type quoting int

const (
	quoteNone    quoting = iota // backslash escapes any character
	quoteDouble                 // backslash escapes only $ ` " \ and newline
	quoteHeredoc                // backslash escapes only $ ` \ and newline
)

// unescape removes the backslashes the shell would remove from raw literal text.
func unescape(s string, q quoting) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		next := s[i+1]
		switch {
		case next == '\n':
			i++ // a line continuation vanishes
		case q == quoteNone,
			next == '$' || next == '`' || next == '\\',
			next == '"' && q == quoteDouble:
			b.WriteByte(next)
			i++
		default:
			b.WriteByte('\\')
		}
	}
	return b.String()
}

func singleQuoted(p *syntax.SglQuoted) string {
	if p.Dollar {
		return ansiC(p.Value)
	}
	return p.Value
}

// ansiC decodes the escapes of a $'...' string.
func ansiC(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		i++
		switch e := s[i]; e {
		case 'a':
			b.WriteByte('\a')
		case 'b':
			b.WriteByte('\b')
		case 'e', 'E':
			b.WriteByte(0x1b)
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'v':
			b.WriteByte('\v')
		case 'x', 'u', 'U':
			width := map[byte]int{'x': 2, 'u': 4, 'U': 8}[e]
			j := i + 1
			for j < len(s) && j-i-1 < width && isHex(s[j]) {
				j++
			}
			n, err := strconv.ParseUint(s[i+1:j], 16, 32)
			if err != nil {
				b.WriteByte('\\')
				b.WriteByte(e)
				continue
			}
			if e == 'x' {
				b.WriteByte(byte(n))
			} else {
				b.WriteRune(rune(n))
			}
			i = j - 1
		case '0', '1', '2', '3', '4', '5', '6', '7':
			j := i
			for j < len(s) && j-i < 3 && s[j] >= '0' && s[j] <= '7' {
				j++
			}
			n, _ := strconv.ParseUint(s[i:j], 8, 16)
			b.WriteByte(byte(n))
			i = j - 1
		default:
			b.WriteByte(e) // \\ \' \" \? and unknown escapes
		}
	}
	if !utf8.ValidString(b.String()) {
		return strings.ToValidUTF8(b.String(), "?")
	}
	return b.String()
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// document resolves a heredoc body: literal when its delimiter was quoted, else with
// the escapes and expansions of an unquoted heredoc.
func (c *checker) document(r *syntax.Redirect, sc *scope) arg {
	if r.Hdoc == nil {
		return arg{}
	}
	quoted := false
	for _, p := range r.Word.Parts {
		lit, ok := p.(*syntax.Lit)
		if !ok || strings.Contains(lit.Value, `\`) {
			quoted = true
		}
	}
	x := &expansion{known: true}
	for _, part := range r.Hdoc.Parts {
		if lit, ok := part.(*syntax.Lit); ok {
			if quoted {
				x.write(lit.Value)
			} else {
				x.write(unescape(lit.Value, quoteHeredoc))
			}
		} else {
			c.part(x, part, sc)
		}
		if c.tooLarge(x) {
			break
		}
	}
	return x.arg()
}

// commandName is the name a command word runs, without its folder: /usr/bin/rm is rm.
func commandName(s string) string {
	if i := strings.LastIndexByte(s, '/'); i >= 0 {
		return s[i+1:]
	}
	return s
}

// joinArgs is the text of args joined by spaces, as eval and bash -c "$*" see them.
func joinArgs(args []arg) string {
	parts := make([]string, len(args))
	for i, a := range args {
		parts[i] = a.s
	}
	return strings.Join(parts, " ")
}
