// Package guardtable reads the guard's table of commands and verdicts
// (guard/testdata/commands.txt, whose header describes the format): the guard's own
// tests and the tests of the real binary judge the same table.
package guardtable

import (
	"bufio"
	"fmt"
	"os"
	"strings"
)

// Case is one command of the table with the verdict it must get.
type Case struct {
	Line    int      // where it starts in the file
	Deny    bool     // deny, or allow
	Rule    string   // the rule that denies it
	Clean   bool     // the repositories have no uncommitted changes
	Cwd     string   // the folder the command runs in ("" for the workspace)
	Presets []string // the guard presets switched on (presets=a,b)
	Command string   // possibly several lines (continuation lines start with four spaces)
}

// Read reads the table at path.
func Read(path string) ([]Case, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	var cases []Case
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		text := sc.Text()
		if rest, ok := strings.CutPrefix(text, "    "); ok {
			if len(cases) == 0 {
				return nil, fmt.Errorf("commands.txt:%d: a continuation line with no command above", n)
			}
			cases[len(cases)-1].Command += "\n" + rest
			continue
		}
		if strings.TrimSpace(text) == "" || strings.HasPrefix(text, "#") {
			continue
		}
		head, command, ok := strings.Cut(text, "|")
		if !ok {
			return nil, fmt.Errorf("commands.txt:%d: no | between the verdict and the command", n)
		}
		c := Case{Line: n, Command: strings.TrimPrefix(command, " ")}
		fields := strings.Fields(head)
		if len(fields) == 0 {
			return nil, fmt.Errorf("commands.txt:%d: no verdict", n)
		}
		switch fields[0] {
		case "deny":
			if len(fields) < 2 {
				return nil, fmt.Errorf("commands.txt:%d: deny needs a rule", n)
			}
			c.Deny, c.Rule, fields = true, fields[1], fields[2:]
		case "allow":
			fields = fields[1:]
		default:
			return nil, fmt.Errorf("commands.txt:%d: verdict %q, want deny or allow", n, fields[0])
		}
		for _, opt := range fields {
			switch {
			case opt == "clean":
				c.Clean = true
			case strings.HasPrefix(opt, "cwd="):
				c.Cwd = strings.TrimPrefix(opt, "cwd=")
			case strings.HasPrefix(opt, "presets="):
				c.Presets = strings.Split(strings.TrimPrefix(opt, "presets="), ",")
			default:
				return nil, fmt.Errorf("commands.txt:%d: unknown option %q", n, opt)
			}
		}
		cases = append(cases, c)
	}
	return cases, sc.Err()
}
