package guard

import (
	"cmp"
	"slices"
	"strings"
)

// unwrapped is the command a chain of wrappers such as `sudo env X=1 nice` runs.
type unwrapped struct {
	args []arg // the command and its arguments; empty when the wrapper runs none
	// cwd is the folder a wrapper switches to (sudo -D, env -C), when cwdSet.
	cwd    string
	cwdSet bool
	// script is a command line the wrapper splits and runs (env -S), when hasScript.
	script    string
	hasScript bool
	// xargs is set when xargs runs the command with words it reads, from a file when
	// xargsFile (-a FILE), else from stdin.
	xargs, xargsFile bool
	// replace is xargs' replace-string (-I X, -i, --replace): each input line takes its
	// place in the command's words.
	replace string
}

// wrapper describes a command that runs another one: which of its short options
// (letters) and long options take a value, and whether it accepts NAME=value words
// before the command.
type wrapper struct {
	shortValue string   // options that take a value, attached or as the next word
	optValue   string   // options whose value can only be attached, such as xargs -i{}
	longValue  []string // long options whose value may be the next word
	assigns    bool     // NAME=value words may precede the command
}

var wrappers = map[string]wrapper{
	"sudo":    {shortValue: "ugCDprtTUR", longValue: []string{"user", "group", "close-from", "chdir", "chroot", "prompt", "role", "type", "command-timeout", "other-user", "host"}, assigns: true},
	"doas":    {shortValue: "uCa"},
	"env":     {shortValue: "uCSP", longValue: []string{"unset", "chdir", "split-string"}, assigns: true},
	"command": {},
	"builtin": {},
	"exec":    {shortValue: "a"},
	"nohup":   {},
	"time":    {shortValue: "fo", longValue: []string{"format", "output"}},
	"nice":    {shortValue: "n", longValue: []string{"adjustment"}},
	"timeout": {shortValue: "sk", longValue: []string{"signal", "kill-after"}},
	"stdbuf":  {shortValue: "ioe", longValue: []string{"input", "output", "error"}},
	"busybox": {},
	"xargs": {
		shortValue: "adEILnPs", optValue: "eil",
		longValue: []string{"arg-file", "delimiter", "max-args", "max-procs", "max-chars", "process-slot-var"},
	},
}

// unwrap strips the wrappers from args. The loop is bounded by the words it consumes.
func (c *checker) unwrap(args []arg, sc *scope) unwrapped {
	u := unwrapped{cwd: sc.cwd}
	for len(args) > 0 && args[0].known {
		name := commandName(args[0].s)
		w, ok := wrappers[name]
		if !ok {
			break
		}
		noCommand := false
		rest := options(args[1:], w, func(opt, value string) {
			switch {
			case opt == "v" || opt == "V":
				// command -v names a command without running it.
				noCommand = noCommand || name == "command"
			case (opt == "D" || opt == "chdir") && name == "sudo",
				(opt == "C" || opt == "chdir") && name == "env":
				u.cwd, u.cwdSet = (&scope{cwd: u.cwd}).abs(value), true
			case (opt == "S" || opt == "split-string") && name == "env":
				u.script, u.hasScript = value, true
			case (opt == "a" || opt == "arg-file") && name == "xargs":
				u.xargsFile = true
			case name == "xargs" && opt == "I":
				u.replace = value
			case name == "xargs" && (opt == "i" || opt == "replace"):
				u.replace = cmp.Or(value, "{}")
			}
		})
		u.xargs = u.xargs || name == "xargs"
		if noCommand {
			return unwrapped{}
		}
		if w.assigns {
			for len(rest) > 0 && rest[0].known && (isAssignment(rest[0].s) || rest[0].s == "-") {
				rest = rest[1:]
			}
		}
		if name == "timeout" && len(rest) > 0 {
			rest = rest[1:] // the duration
		}
		if u.hasScript {
			// env -S splits its string into words that come before the remaining ones.
			u.script += " " + joinArgs(rest)
			return u
		}
		args = rest
	}
	u.args = args
	return u
}

// options consumes the options at the start of args, reporting each with its value, and
// returns the words after them. Parsing stops at "--" or at the first word that is not
// an option, as the wrappers themselves do.
func options(args []arg, w wrapper, visit func(opt, value string)) []arg {
	i := 0
	for i < len(args) {
		a := args[i]
		if !a.known {
			break
		}
		s := a.s
		if s == "--" {
			i++
			break
		}
		if len(s) < 2 || s[0] != '-' {
			break
		}
		i++
		if strings.HasPrefix(s, "--") {
			name, value, hasValue := strings.Cut(s[2:], "=")
			if !hasValue && slices.Contains(w.longValue, name) && i < len(args) {
				value = args[i].s
				i++
			}
			visit(name, value)
			continue
		}
		for j := 1; j < len(s); j++ {
			opt := s[j : j+1]
			if strings.Contains(w.optValue, opt) {
				visit(opt, s[j+1:])
				break
			}
			if strings.Contains(w.shortValue, opt) {
				value := s[j+1:]
				if value == "" && i < len(args) {
					value = args[i].s
					i++
				}
				visit(opt, value)
				break
			}
			visit(opt, "")
		}
	}
	return args[i:]
}

// isAssignment reports whether s is a NAME=value word.
func isAssignment(s string) bool {
	name, _, ok := strings.Cut(s, "=")
	if !ok || name == "" {
		return false
	}
	for i, r := range name {
		if r != '_' && (r < 'a' || r > 'z') && (r < 'A' || r > 'Z') && (i == 0 || r < '0' || r > '9') {
			return false
		}
	}
	return true
}

var (
	shells     = map[string]bool{"sh": true, "bash": true, "zsh": true, "dash": true, "ksh": true, "mksh": true, "ash": true, "fish": true}
	sqlClients = map[string]bool{"psql": true, "mysql": true, "mariadb": true, "sqlite3": true, "sqlite": true, "cockroach": true, "duckdb": true,
		"sqlcmd": true, "clickhouse-client": true, "clickhouse": true, "usql": true, "pgcli": true, "mycli": true, "litecli": true,
		"snowsql": true, "bq": true, "isql": true, "trino": true, "presto": true}
	// containerRunners run a command inside a container; the SQL client is found among
	// their arguments, as in `docker exec db psql -c '...'`.
	containerRunners = map[string]bool{"docker": true, "podman": true, "nerdctl": true, "kubectl": true, "oc": true}
)

// command checks one command with its arguments, as resolved words. in is its stdin
// when known, and text is how a reason quotes it.
func (c *checker) command(args []arg, in input, sc *scope, text string) {
	if c.done() || len(args) == 0 || c.rules.allowed(args) {
		return
	}
	if d, ok := c.rules.denied(args); ok {
		c.denyConfig(d, text)
		return
	}
	u := c.unwrap(args, sc)
	if u.cwdSet {
		sc = sc.sub()
		sc.cwd = u.cwd
	}
	if u.hasScript {
		c.script(u.script, sc.sub())
		return
	}
	args = u.args
	if u.xargs && u.replace != "" && in.ok && !u.xargsFile {
		// xargs -I{} runs the command once per input line, the line in place of {}:
		// judged as those commands, whatever they are (a shell's script too).
		for _, line := range strings.Split(in.text, "\n") {
			if line = strings.TrimSpace(line); line != "" && !c.done() {
				c.command(replaced(args, u.replace, line), input{}, sc.sub(), text)
			}
		}
		return
	}
	if len(args) == 0 || !args[0].known {
		return
	}
	// A refusal about what flows along a pipe quotes the whole pipeline.
	piped := text
	if in.pipeline != "" {
		piped = in.pipeline
	}
	if d, ok := c.rules.denied(args); ok {
		c.denyConfig(d, text)
		return
	}
	c.checkPresets(args, text)
	if c.done() {
		return
	}
	switch name := commandName(args[0].s); {
	case name == "rm" || name == "unlink":
		c.rm(args, sc, text)
		if u.xargs && !c.done() {
			c.xargsRm(args, in, u, sc, piped)
		}
	case name == "shred":
		if u.xargs {
			args = append(args, arg{}) // xargs supplies files to shred
		}
		c.shred(args, text)
	case name == "truncate":
		c.truncate(args, sc, text)
	case name == "chmod" || name == "chown" || name == "chgrp":
		c.chmodRecursive(args, sc, text)
	case name == "source" || name == ".":
		if len(args) > 1 && args[1].download != unseenNone {
			c.denyUnseen(args[1].download, text, "sources {} into the shell")
		}
	case interpreters[name]:
		c.interpreter(args, in, sc, piped)
	case name == "read" || name == "mapfile" || name == "readarray" || name == "getopts":
		// They assign the variables they name. Marking an option's value as well only
		// spares that name from the unset-variable rule.
		for _, a := range args[1:] {
			if a.known && isName(a.s) {
				sc.markAssigned(a.s)
			}
		}
	case name == "unset":
		for _, a := range args[1:] {
			if a.known {
				delete(sc.vars, a.s)
				delete(sc.assigned, a.s)
			}
		}
	case name == "printf":
		for i := 1; i+1 < len(args); i++ {
			if args[i].known && args[i].s == "-v" && args[i+1].known {
				sc.markAssigned(args[i+1].s)
			}
		}
	case name == "git":
		c.git(args, sc, text)
	case name == "dd":
		c.dd(args, sc, text)
	case name == "tee":
		c.tee(args, sc, text)
	case isMkfs(name):
		c.deny(ruleMkfs, "Refused "+text+": it formats a filesystem, erasing everything on the target device; ask the user to run it themselves if it is really needed.")
	case sqlClients[name]:
		c.sql(args, in, text)
	case containerRunners[name]:
		if name == "docker" || name == "podman" {
			c.dockerData(args, text)
		}
		for i, a := range args[1:] {
			if a.known && sqlClients[commandName(a.s)] {
				c.sql(args[i+1:], in, text)
				break
			}
			if a.known && isLocalData(commandName(a.s)) {
				c.localData(commandName(a.s), args[i+1:], sc, text)
				break
			}
		}
	case shells[name]:
		c.shell(args, in, sc, piped)
	case name == "eval":
		if u := anyDownload(args[1:]); u != unseenNone {
			c.denyUnseen(u, text, "evaluates {}")
			return
		}
		// eval runs in the current shell, so what it changes (cd, variables) stays.
		c.script(joinArgs(args[1:]), sc)
	case name == "trap":
		c.trap(args, sc)
	case name == "find":
		c.find(args, sc, text)
	case name == "parallel":
		c.parallel(args, in, sc, text)
	case isLocalData(name):
		c.localData(name, args, sc, text)
	case name == "cd" || name == "pushd":
		c.cd(args, sc)
	case name == "popd":
		sc.cwd = ""
	}
}

// shell checks what bash, sh and the like run: the script of -c, or the script they
// read on stdin when given no script file. A script file cannot be checked, but one
// that is a download, as in bash <(curl URL), is refused.
func (c *checker) shell(args []arg, in input, sc *scope, text string) {
	i := 1
	inline, fromStdin := false, false
	for i < len(args) {
		a := args[i]
		if !a.known {
			break
		}
		s := a.s
		if s == "--" || s == "-" {
			i++
			break
		}
		if strings.HasPrefix(s, "--") {
			i++
			if s == "--rcfile" || s == "--init-file" {
				i++
			}
			continue
		}
		if len(s) < 2 || s[0] != '-' && s[0] != '+' {
			break
		}
		i++
		if s[0] == '-' && strings.Contains(s, "c") {
			inline = true
		}
		if s[0] == '-' && strings.Contains(s, "s") {
			fromStdin = true
		}
		if strings.ContainsAny(s, "oO") {
			i++ // -o pipefail, -O extglob: the option's name
		}
	}
	stdin := i >= len(args) || fromStdin
	switch {
	case inline && i < len(args) && args[i].download != unseenNone:
		c.denyUnseen(args[i].download, text, "runs {} as a shell script")
	case inline:
		if i < len(args) {
			c.script(args[i].s, sc.sub())
		}
	case !stdin && args[i].download != unseenNone:
		c.denyUnseen(args[i].download, text, "runs {} as a shell script")
	case stdin && in.download != unseenNone:
		c.denyUnseen(in.download, text, "pipes {} into a shell")
	case stdin && in.ok:
		c.script(in.text, sc.sub())
	}
}

// interpreter refuses python, perl, node and the like running a download: read on stdin
// when they are given no program, or given as the program (-c, -e, or a <(curl URL)
// file). A download passed as data to a program file is its business.
func (c *checker) interpreter(args []arg, in input, sc *scope, text string) {
	lang := interpreterLang(commandName(args[0].s))
	for i := 1; i < len(args); i++ {
		a := args[i]
		switch {
		case !a.known || a.s == "-" || !strings.HasPrefix(a.s, "-"):
			if a.download != unseenNone {
				c.denyUnseen(a.download, text, "runs {} as a program")
			} else if a.s == "-" && in.download != unseenNone {
				c.denyUnseen(in.download, text, "pipes {} into an interpreter")
			} else if a.s == "-" && in.ok {
				c.judgeCode(in.text, lang, sc, text)
			}
			return
		case a.s == "-c" || a.s == "-e" || a.s == "-E" || a.s == "-r" && lang == "php" || a.s == "--eval" || a.s == "-p" && lang == "node":
			if i+1 < len(args) && args[i+1].download != unseenNone {
				c.denyUnseen(args[i+1].download, text, "runs {} as a program")
			} else if i+1 < len(args) && args[i+1].known {
				c.judgeCode(args[i+1].s, lang, sc, text)
			}
			return
		case a.s == "-m":
			return
		}
	}
	if in.download != unseenNone {
		c.denyUnseen(in.download, text, "pipes {} into an interpreter")
	} else if in.ok {
		c.judgeCode(in.text, lang, sc, text)
	}
}

// trap checks the action of `trap 'action' SIGNAL...`, which runs later as a script.
func (c *checker) trap(args []arg, sc *scope) {
	rest := args[1:]
	for len(rest) > 0 && rest[0].known && (rest[0].s == "-p" || rest[0].s == "-l" || rest[0].s == "--") {
		rest = rest[1:]
	}
	if len(rest) >= 2 {
		c.script(rest[0].s, sc.sub())
	}
}

// cd follows the working folder through `cd dir && ...`, so that `cd / && rm -rf *` is
// seen for what it deletes. An unknown folder makes relative paths unknown.
func (c *checker) cd(args []arg, sc *scope) {
	rest := args[1:]
	for len(rest) > 0 && rest[0].known && len(rest[0].s) > 1 && rest[0].s[0] == '-' {
		if rest[0].s == "--" {
			rest = rest[1:]
			break
		}
		rest = rest[1:]
	}
	switch {
	case len(rest) == 0:
		sc.cwd = c.rules.env.Home
	case !rest[0].known || rest[0].s == "-" || strings.HasPrefix(rest[0].s, "+"):
		sc.cwd = ""
	default:
		sc.cwd = sc.abs(rest[0].s)
	}
}

func isMkfs(name string) bool {
	switch name {
	case "mkfs", "mke2fs", "mkdosfs", "mkntfs", "newfs":
		return true
	}
	return strings.HasPrefix(name, "mkfs.") || strings.HasPrefix(name, "newfs_")
}

// replaced is args with every occurrence of the replace-string in a known word made
// line, as xargs -I does.
func replaced(args []arg, replace, line string) []arg {
	out := make([]arg, len(args))
	for i, a := range args {
		out[i] = a
		if a.known {
			out[i].s = strings.ReplaceAll(a.s, replace, line)
		}
	}
	return out
}

// parallel judges GNU parallel as the commands it runs: its command template with each
// input in place of {} (or after it, without one), as the shell line parallel runs, the inputs being the words after
// :::, else the lines of its stdin when the guard knows them. Its options before the
// template are skipped; inputs from files (::::) cannot be seen, and the template is
// then judged with an input the guard cannot read.
func (c *checker) parallel(args []arg, in input, sc *scope, text string) {
	rest := args[1:]
	for len(rest) > 0 && rest[0].known && strings.HasPrefix(rest[0].s, "-") && rest[0].s != ":::" {
		opt := rest[0].s
		rest = rest[1:]
		if parallelTakesValue(opt) && len(rest) > 0 {
			rest = rest[1:]
		}
	}
	var template, inputs []arg
	fromFiles, sources := false, false
	for _, a := range rest {
		switch {
		case a.known && (a.s == ":::" || a.s == ":::+"):
			sources = true
		case a.known && (a.s == "::::" || a.s == "::::+"):
			sources, fromFiles = true, true
		case sources:
			inputs = append(inputs, a)
		default:
			template = append(template, a)
		}
	}
	if len(template) == 0 {
		return
	}
	if !sources && in.ok {
		for _, line := range strings.Split(in.text, "\n") {
			if line = strings.TrimSpace(line); line != "" {
				inputs = append(inputs, arg{s: line, known: true})
			}
		}
	}
	if fromFiles || !sources && !in.ok {
		if name := commandName(template[0].s); template[0].known && (name == "rm" || name == "unlink") {
			// Paths it reads and the guard cannot see: judged as xargs rm is.
			bare := slices.DeleteFunc(slices.Clone(template), func(a arg) bool { return a.known && a.s == "{}" })
			c.xargsRm(bare, in, unwrapped{xargsFile: fromFiles}, sc, text)
			return
		}
		inputs = append(inputs, arg{s: unknownText})
	}
	placeholder := slices.ContainsFunc(template, func(a arg) bool { return strings.Contains(a.s, "{}") })
	for _, one := range inputs {
		if c.done() {
			return
		}
		cmd := replaced(template, "{}", one.s)
		if !placeholder {
			cmd = append(slices.Clone(template), one)
		}
		// parallel hands the composed command line to a shell.
		c.script(joinArgs(cmd), sc.sub())
	}
}

// parallelTakesValue reports GNU parallel's options that take the next word as their
// value.
func parallelTakesValue(opt string) bool {
	switch opt {
	case "-j", "--jobs", "-S", "--sshlogin", "--joblog", "--results", "-a", "--arg-file", "-d", "--delimiter",
		"--timeout", "--tmpdir", "--workdir", "--wd", "-n", "--max-args", "-N", "-P":
		return true
	}
	return false
}
