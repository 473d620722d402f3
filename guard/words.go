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
}

// sub is a copy for a subshell: what it changes does not leak back.
func (sc *scope) sub() *scope {
	n := *sc
	if len(sc.vars) > 0 {
		n.vars = make(map[string]string, len(sc.vars))
		for k, v := range sc.vars {
			n.vars[k] = v
		}
	}
	return &n
}

func (sc *scope) set(name string, a arg) {
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
	var b strings.Builder
	known := true
	for i, part := range w.Parts {
		switch p := part.(type) {
		case *syntax.Lit:
			v := unescape(p.Value, quoteNone)
			if i == 0 && strings.HasPrefix(v, "~") {
				var ok bool
				v, ok = c.tilde(v, sc)
				known = known && ok
			}
			b.WriteString(v)
		case *syntax.SglQuoted:
			b.WriteString(singleQuoted(p))
		case *syntax.DblQuoted:
			for _, inner := range p.Parts {
				known = c.part(&b, inner, sc) && known
			}
		default:
			known = c.part(&b, part, sc) && known
		}
	}
	return arg{s: b.String(), known: known}
}

// part writes a word part found unquoted or inside double quotes (the difference does
// not matter here: field splitting and globbing are judged on the result).
func (c *checker) part(b *strings.Builder, part syntax.WordPart, sc *scope) bool {
	switch p := part.(type) {
	case *syntax.Lit:
		b.WriteString(unescape(p.Value, quoteDouble))
		return true
	case *syntax.ParamExp:
		if v, ok := c.param(p, sc); ok {
			b.WriteString(v)
			return true
		}
	case *syntax.CmdSubst:
		// "$(pwd)" is a common way to name the working folder, and a known one.
		if isPwd(p) && sc.cwd != "" {
			b.WriteString(sc.cwd)
			return true
		}
	}
	b.WriteString(unknownText)
	return false
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
	var b strings.Builder
	known := true
	for _, part := range r.Hdoc.Parts {
		if lit, ok := part.(*syntax.Lit); ok {
			if quoted {
				b.WriteString(lit.Value)
			} else {
				b.WriteString(unescape(lit.Value, quoteHeredoc))
			}
			continue
		}
		known = c.part(&b, part, sc) && known
	}
	return arg{s: b.String(), known: known}
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
