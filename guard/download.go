package guard

import "mvdan.cc/sh/v3/syntax"

// downloaders fetch a URL, printing it to stdout when told to (or, for curl, by
// default). Their output fed to a shell runs code that nobody has read.
var downloaders = map[string]bool{
	"curl": true, "wget": true, "wget2": true, "fetch": true, "http": true, "https": true,
	"xh": true, "curlie": true, "aria2c": true,
}

// interpreters run a program read from stdin when given no program file, as shells do.
var interpreters = map[string]bool{
	"python": true, "python3": true, "perl": true, "ruby": true, "node": true, "php": true,
}

// downloads reports whether a command or process substitution runs a downloader, so
// that its text is a download: "$(curl URL)", <(wget -qO- URL). Answers are kept per
// node, so nested substitutions are walked once each however often their words are
// resolved.
func (c *checker) downloads(n syntax.Node) bool {
	if d, ok := c.downloaded[n]; ok {
		return d
	}
	found := false
	syntax.Walk(n, func(m syntax.Node) bool {
		if found {
			return false
		}
		switch m := m.(type) {
		case *syntax.CmdSubst, *syntax.ProcSubst:
			if m != n {
				found = c.downloads(m)
				return false
			}
		case *syntax.CallExpr:
			found = c.downloaderCall(m)
		}
		return !found
	})
	if c.downloaded == nil {
		c.downloaded = map[syntax.Node]bool{}
	}
	c.downloaded[n] = found
	return found
}

// downloaderCall reports whether call runs a downloader, through any wrappers, judging
// by its literal words only: resolving its words could walk nested substitutions again.
func (c *checker) downloaderCall(call *syntax.CallExpr) bool {
	args := make([]arg, 0, len(call.Args))
	for _, w := range call.Args {
		s, ok := plainWord(w, false)
		args = append(args, arg{s: s, known: ok})
	}
	u := c.unwrap(args, &scope{})
	return len(u.args) > 0 && u.args[0].known && downloaders[commandName(u.args[0].s)]
}

func (c *checker) denyPipeToShell(text, how string) {
	c.deny(rulePipeToShell, "Refused "+text+": it "+how+", running code straight from the network that nobody has read; download it to a file with `curl -fsSL -o install.sh URL`, read it, and ask the user to run it.")
}
