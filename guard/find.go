package guard

import (
	"path"
	"strings"
)

// findSearch is what a find command searches and does with what it finds.
type findSearch struct {
	// risk is the protected folder one of its starting points names: /, a system
	// folder, home, the workspace, a folder above them, or a projects, project or
	// planning folder. "" when none does.
	risk string
	// deletes is set by -delete, and by -exec, -execdir, -ok or -okdir running rm,
	// unlink or shred.
	deletes bool
	// generated is set when its tests limit it to generated files, such as -name
	// '*.pyc', or to empty ones (-empty), before any deletion, in an expression
	// without -o, ! or ",": such a find deletes nothing that cannot be made again.
	generated bool
}

// findSearch reads a find command's starting points and expression.
func (c *checker) findSearch(args []arg, sc *scope) *findSearch {
	fs := &findSearch{}
	i := 1
	for i < len(args) && args[i].known {
		s := args[i].s
		if s == "-H" || s == "-L" || s == "-P" || strings.HasPrefix(s, "-O") {
			i++
		} else if s == "-D" {
			i += 2
		} else {
			break
		}
	}
	var starts []arg
	for ; i < len(args); i++ {
		s := args[i].s
		if args[i].known && (len(s) > 1 && s[0] == '-' || s == "(" || s == "!" || s == ",") {
			break
		}
		starts = append(starts, args[i])
	}
	if len(starts) == 0 {
		starts = []arg{{s: ".", known: true}}
	}
	simple, generated := true, false
	for ; i < len(args); i++ {
		a := args[i]
		if !a.known {
			continue
		}
		switch a.s {
		case "-o", "-or", ",", "!", "-not":
			simple = false
		case "-name", "-iname", "-path", "-ipath", "-wholename", "-iwholename":
			if i+1 < len(args) {
				i++
				generated = generated || !fs.deletes && args[i].known && generatedTest(a.s, args[i].s)
			}
		case "-empty":
			// An empty file or folder holds nothing to lose.
			generated = generated || !fs.deletes
		case "-delete":
			fs.deletes = true
		case "-exec", "-execdir", "-ok", "-okdir":
			end := i + 1
			for end < len(args) && (!args[end].known || args[end].s != ";" && args[end].s != "+") {
				end++
			}
			if u := c.unwrap(args[i+1:end], sc); len(u.args) > 0 && u.args[0].known {
				switch commandName(u.args[0].s) {
				case "rm", "unlink", "shred":
					fs.deletes = true
				}
			}
			i = end
		}
	}
	fs.generated = generated && simple
	for _, s := range starts {
		if p := c.riskyFolder(s, sc); p != "" {
			fs.risk = p
			break
		}
	}
	return fs
}

// riskyFolder is the protected folder a starting point or a recursive target names,
// or "" when it names none.
func (c *checker) riskyFolder(a arg, sc *scope) string {
	if a.known {
		if p, rule := c.protectedTarget(a.s, sc); rule != "" {
			return p
		}
		if p, kind := c.projectsTarget(a.s, sc); kind != "" {
			return p
		}
	}
	p, _ := c.collapses(a, sc)
	return p
}

// generatedTest reports whether a -name, -iname or -path test matches generated files
// only: its pattern, or for -path the pattern's last element, is one of
// generatedPatterns.
func generatedTest(test, pattern string) bool {
	if strings.Contains(test, "path") {
		pattern = strings.TrimSuffix(pattern, "/*")
		pattern = path.Base(pattern)
	}
	for _, g := range generatedPatterns {
		if pattern == g || strings.HasPrefix(test, "-i") && strings.EqualFold(pattern, g) {
			return true
		}
	}
	return false
}

// find checks the commands of -exec, -execdir, -ok and -okdir (their {} stands for files
// find chooses, which the guard does not know), then refuses a find that deletes over a
// protected folder.
func (c *checker) find(args []arg, sc *scope, text string) {
	for i := 1; i < len(args); i++ {
		switch args[i].s {
		case "-exec", "-execdir", "-ok", "-okdir":
		default:
			continue
		}
		start := i + 1
		end := start
		for end < len(args) && (!args[end].known || args[end].s != ";" && args[end].s != "+") {
			end++
		}
		c.command(args[start:end], input{}, sc, text)
		i = end
	}
	if c.done() {
		return
	}
	if fs := c.findSearch(args, sc); fs.deletes && fs.risk != "" && !fs.generated {
		c.deny(ruleFindDelete, "Refused "+text+": it deletes files throughout "+fs.risk+", which holds work that cannot be recovered; start find at the specific build or temp folder you mean, or limit it to generated files such as -name '*.pyc'.")
	}
}

// xargsRm refuses xargs running rm (or unlink) on paths the guard cannot see: read from
// a file or from a command other than echo, printf or find, unless rm is not recursive
// and runs in an ordinary folder; or printed by a find that find-delete would refuse.
// Known text (echo build | xargs rm -rf) is judged as rm's own operands.
func (c *checker) xargsRm(args []arg, in input, u unwrapped, sc *scope, text string) {
	switch {
	case u.xargsFile:
	case in.ok:
		words := strings.Fields(strings.ReplaceAll(in.text, "\x00", " "))
		operands := append([]arg(nil), args...)
		for _, w := range words {
			operands = append(operands, arg{s: w, known: true})
		}
		c.rm(operands, sc, text)
		return
	case in.find != nil:
		if in.find.risk != "" && !in.find.generated {
			c.deny(ruleXargsRm, "Refused "+text+": it deletes what a find prints from "+in.find.risk+", which holds work that cannot be recovered; start find at the specific build or temp folder you mean, or limit it to generated files such as -name '*.pyc'.")
		}
		return
	}
	recursive := false
	for _, a := range args[1:] {
		if a.known && (a.s == "--recursive" || len(a.s) > 1 && a.s[0] == '-' && a.s[1] != '-' && strings.ContainsAny(a.s, "rR")) {
			recursive = true
		}
	}
	where := sc.cwd
	if where == "" {
		where = "an unknown folder"
	}
	if !recursive && c.riskyFolder(arg{s: ".", known: sc.cwd != ""}, sc) == "" && sc.cwd != "" {
		return
	}
	c.deny(ruleXargsRm, "Refused "+text+": xargs hands rm paths the guard cannot see, read in "+where+", and they may name the workspace or a project; run rm on the specific paths you mean, or pipe them from a find started at a build or temp folder.")
}
