package guard

import (
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// maxDepth bounds how deeply scripts inside strings (bash -c, eval, a heredoc fed to a
// shell) are parsed. Nesting deeper than any real command is refused rather than
// trusted, since the guard cannot see what it would run.
const maxDepth = 8

// checker walks one Check's command. It stops at the first refusal.
type checker struct {
	rules      *Rules
	verdict    Verdict
	dirty      map[string]bool
	downloaded map[syntax.Node]unseen
}

// input is what a command reads on stdin when the guard can know it: a heredoc, a
// here-string, or the output of an echo, printf or cat piped into it.
type input struct {
	text string
	ok   bool
	// download marks input that comes from a download or a decoder, directly or
	// through filters.
	download unseen
	// find is set when the input is the list of paths a find prints.
	find *findSearch
	// pipeline quotes the whole pipeline the input comes through, for a reason about
	// what flows along it.
	pipeline string
}

func (c *checker) done() bool { return c.verdict.Deny }

func (c *checker) deny(rule, reason string) {
	if !c.verdict.Deny {
		c.verdict = Verdict{Deny: true, Rule: rule, Reason: reason}
	}
}

// script parses src and walks it in sc, one level deeper than sc's own source. What it
// changes in sc (cd, assignments) stays, as for eval; callers that run a separate shell
// pass a copy.
func (c *checker) script(src string, sc *scope) {
	if c.done() {
		return
	}
	if sc.depth >= maxDepth {
		c.deny(ruleTooDeep, "Refused this command: it nests shell scripts inside strings more than "+
			strconv.Itoa(maxDepth)+" levels deep, too deep to check; run the inner command directly instead.")
		return
	}
	if c.unjudgeable(src) {
		return
	}
	// A fresh parser each time: Parser.reset does not clear every field, and a parser
	// left mid-word by a syntax error must not colour the next parse.
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(src), "")
	if err != nil {
		// The fallback only finds a more telling rule for the refusal.
		c.fallback(src)
		c.denyUnparsed(err)
		return
	}
	outer, depth := sc.src, sc.depth
	sc.src, sc.depth = src, depth+1
	c.stmts(f.Stmts, sc)
	sc.src, sc.depth = outer, depth
}

func (c *checker) stmts(list []*syntax.Stmt, sc *scope) {
	for _, st := range list {
		if c.done() {
			return
		}
		c.stmt(st, sc, input{})
	}
}

func (c *checker) stmt(st *syntax.Stmt, sc *scope, in input) {
	if c.done() || st == nil {
		return
	}
	for _, r := range st.Redirs {
		c.exprs(r.Word, sc)
		c.exprs(r.Hdoc, sc)
		c.redirect(r, sc, st)
	}
	switch cmd := st.Cmd.(type) {
	case nil:
	case *syntax.CallExpr:
		c.call(cmd, st, sc, in)
	case *syntax.BinaryCmd:
		if cmd.Op == syntax.Pipe || cmd.Op == syntax.PipeAll {
			c.pipeline(cmd, sc, in)
			return
		}
		c.stmt(cmd.X, sc, in)
		c.stmt(cmd.Y, sc, in)
	case *syntax.Subshell:
		c.stmts(cmd.Stmts, sc.sub())
	case *syntax.Block:
		c.stmts(cmd.Stmts, sc)
	case *syntax.IfClause:
		for ic := cmd; ic != nil; ic = ic.Else {
			c.stmts(ic.Cond, sc)
			c.stmts(ic.Then, sc)
		}
	case *syntax.WhileClause:
		c.stmts(cmd.Cond, sc)
		c.stmts(cmd.Do, sc)
	case *syntax.ForClause:
		c.exprs(cmd.Loop, sc)
		if wi, ok := cmd.Loop.(*syntax.WordIter); ok && wi.Name != nil {
			sc.set(wi.Name.Value, c.riskiest(wi.Items, sc))
		}
		c.stmts(cmd.Do, sc)
	case *syntax.CaseClause:
		c.exprs(cmd.Word, sc)
		for _, item := range cmd.Items {
			for _, p := range item.Patterns {
				c.exprs(p, sc)
			}
			c.stmts(item.Stmts, sc)
		}
	case *syntax.FuncDecl:
		c.forkBomb(cmd, sc)
		// The body runs only if called, but a destructive function is refused when
		// defined: the guard does not follow calls.
		c.stmt(cmd.Body, sc.sub(), input{})
	case *syntax.DeclClause:
		c.exprs(cmd, sc)
		c.declare(cmd, sc)
	case *syntax.TimeClause:
		c.stmt(cmd.Stmt, sc, in)
	case *syntax.CoprocClause:
		c.stmt(cmd.Stmt, sc.sub(), in)
	default:
		// Arithmetic, [[ ]], let and the like run no command themselves, but may hold
		// substitutions that do.
		c.exprs(cmd, sc)
	}
}

// exprs walks the substitutions inside a node that is not itself a command.
func (c *checker) exprs(n syntax.Node, sc *scope) {
	if n == nil || c.done() {
		return
	}
	if w, ok := n.(*syntax.Word); ok && w == nil {
		return
	}
	syntax.Walk(n, func(n syntax.Node) bool {
		if c.done() {
			return false
		}
		switch n := n.(type) {
		case *syntax.CmdSubst:
			c.stmts(n.Stmts, sc.sub())
			return false
		case *syntax.ProcSubst:
			c.stmts(n.Stmts, sc.sub())
			return false
		case *syntax.Stmt:
			c.stmt(n, sc.sub(), input{})
			return false
		}
		return true
	})
}

// pipeline walks a | b | c, each part in its own subshell as bash runs them, giving
// each part the output of the one before when that output is known text.
func (c *checker) pipeline(cmd *syntax.BinaryCmd, sc *scope, in input) {
	var parts []*syntax.Stmt
	var flatten func(st *syntax.Stmt)
	flatten = func(st *syntax.Stmt) {
		if b, ok := st.Cmd.(*syntax.BinaryCmd); ok && (b.Op == syntax.Pipe || b.Op == syntax.PipeAll) && len(st.Redirs) == 0 {
			flatten(b.X)
			flatten(b.Y)
			return
		}
		parts = append(parts, st)
	}
	flatten(cmd.X)
	flatten(cmd.Y)
	partIn := in
	text := c.source(cmd, sc)
	for i, st := range parts {
		if c.done() {
			return
		}
		if i > 0 {
			partIn = c.output(parts[i-1], sc, partIn)
			partIn.pipeline = text
		}
		c.stmt(st, sc.sub(), partIn)
	}
}

// output is what st writes to stdout given in on its stdin: known text for an echo,
// printf or cat of known text, the search of a find, and a download for a downloader
// or for anything downstream of one, since a filter passes the download on.
func (c *checker) output(st *syntax.Stmt, sc *scope, in input) input {
	own := c.stdin(st, sc, in)
	out := input{download: own.download}
	call, ok := st.Cmd.(*syntax.CallExpr)
	if !ok || len(call.Args) == 0 {
		return out
	}
	u := c.unwrap(c.words(call.Args, sc), sc)
	if len(u.args) == 0 || !u.args[0].known {
		return out
	}
	args := u.args[1:]
	switch name := commandName(u.args[0].s); name {
	case "find":
		out.find = c.findSearch(u.args, sc)
		return out
	case "echo":
		for len(args) > 0 && (args[0].s == "-n" || args[0].s == "-e" || args[0].s == "-E" || args[0].s == "-ne" || args[0].s == "-en") {
			args = args[1:]
		}
		return input{text: joinArgs(args), ok: true, download: anyDownload(args)}
	case "printf":
		if len(args) > 0 && args[0].s == "--" {
			args = args[1:]
		}
		// The format's own escapes matter when the text is a script for a shell.
		text := strings.NewReplacer(`\n`, "\n", `\t`, "\t").Replace(joinArgs(args))
		return input{text: text, ok: true, download: anyDownload(args)}
	case "cat":
		if len(args) == 0 || len(args) == 1 && args[0].s == "-" {
			return own
		}
		out.download = max(out.download, anyDownload(args))
	default:
		out.download = max(out.download, producer(u.args))
	}
	return out
}

func anyDownload(args []arg) unseen {
	var u unseen
	for _, a := range args {
		u = max(u, a.download)
	}
	return u
}

// stdin is what the command of st reads: its own heredoc or here-string, else nothing
// known when it redirects from a file, else what it was given.
func (c *checker) stdin(st *syntax.Stmt, sc *scope, in input) input {
	for i := len(st.Redirs) - 1; i >= 0; i-- {
		r := st.Redirs[i]
		if r.N != nil && r.N.Value != "0" {
			continue
		}
		switch r.Op {
		case syntax.Hdoc, syntax.DashHdoc:
			d := c.document(r, sc)
			return input{text: d.s, ok: true, download: d.download}
		case syntax.WordHdoc:
			w := c.word(r.Word, sc)
			return input{text: w.s, ok: true, download: w.download}
		case syntax.RdrIn, syntax.RdrInOut, syntax.DplIn:
			// sh < <(curl URL) reads a download; any other file is unknown.
			return input{download: c.word(r.Word, sc).download}
		}
	}
	return in
}

// riskiest picks the value a loop variable is checked with, since the body is walked
// once rather than once per item: a protected folder or main/master if one is listed,
// else the only item, else unknown.
func (c *checker) riskiest(items []*syntax.Word, sc *scope) arg {
	for _, w := range items {
		a := c.word(w, sc)
		if !a.known {
			continue
		}
		if _, rule := c.protectedTarget(a.s, sc); rule != "" {
			return a
		}
		if branch := strings.TrimPrefix(strings.TrimPrefix(a.s, "+"), "refs/heads/"); branch == "main" || branch == "master" {
			return a
		}
	}
	if len(items) == 1 {
		return c.word(items[0], sc)
	}
	return arg{}
}

// call checks one simple command.
func (c *checker) call(call *syntax.CallExpr, st *syntax.Stmt, sc *scope, in input) {
	for _, a := range call.Assigns {
		c.exprs(a, sc)
	}
	for _, w := range call.Args {
		c.exprs(w, sc)
	}
	if c.done() {
		return
	}
	if len(call.Args) == 0 {
		for _, a := range call.Assigns {
			c.assign(a, sc)
		}
		return
	}
	args := c.words(call.Args, sc)
	if c.rules.allowed(args) {
		return
	}
	c.command(args, c.stdin(st, sc, in), sc, c.source(call, sc))
}

// source is the text of n for quoting in a reason, shortened to stay one readable line.
func (c *checker) source(n syntax.Node, sc *scope) string {
	start, end := int(n.Pos().Offset()), int(n.End().Offset())
	if start < 0 || end > len(sc.src) || start >= end {
		return "this command"
	}
	const limit = 100
	// Only the start is quoted, so only the start is read: a reason for each of many
	// nested pipelines must not cost the length of each.
	end = min(end, start+8*limit)
	text := strings.Join(strings.Fields(sc.src[start:end]), " ")
	if len(text) > limit {
		cut := limit
		for cut > 0 && text[cut]&0xC0 == 0x80 {
			cut-- // never split a UTF-8 sequence
		}
		text = text[:cut] + "…"
	}
	return "`" + text + "`"
}

func (c *checker) assign(a *syntax.Assign, sc *scope) {
	if a.Name == nil || a.Append || a.Index != nil || a.Array != nil {
		if a.Name != nil {
			sc.set(a.Name.Value, arg{})
		}
		return
	}
	if a.Value == nil {
		sc.set(a.Name.Value, arg{s: "", known: true})
		return
	}
	sc.set(a.Name.Value, c.word(a.Value, sc))
}

// declare records export X=v, local X=v and the like as assignments.
func (c *checker) declare(d *syntax.DeclClause, sc *scope) {
	for _, a := range d.Args {
		if a.Naked {
			continue
		}
		c.assign(a, sc)
	}
}
