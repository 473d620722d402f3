package guard

import (
	"regexp"
	"strings"
	"sync"
)

// chmodMode matches the chmod modes that look like options, such as -w or -rwx.
var chmodMode = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^-[rwxXstugo]+$`) })

// chmodRecursive refuses chmod -R, chown -R and chgrp -R over /, a system folder, the
// home folder, the workspace root, a folder above them, or the projects folder: every
// file's mode or owner below is rewritten at once, and the old ones (an executable bit,
// ~/.ssh's private modes, a file owned by root) cannot be told apart afterwards.
// A single project or build folder is the agent's to change.
func (c *checker) chmodRecursive(args []arg, sc *scope, text string) {
	name := commandName(args[0].s)
	recursive, modeSeen := false, false
	var targets []arg
	opts := true
	for j := 1; j < len(args); j++ {
		a := args[j]
		s := a.s
		switch {
		case !a.known:
			if modeSeen {
				targets = append(targets, a)
			}
			modeSeen = true
		case opts && s == "--":
			opts = false
		case opts && name == "chmod" && chmodMode().MatchString(s):
			modeSeen = true // -w is a mode, not an option
		case opts && strings.HasPrefix(s, "--"):
			opt, _, _ := strings.Cut(s[2:], "=")
			switch {
			case opt == "recursive":
				recursive = true
			case strings.HasPrefix(opt, "reference"):
				modeSeen = true // the reference file replaces the mode or owner
			}
		case opts && len(s) > 1 && s[0] == '-':
			recursive = recursive || strings.Contains(s, "R")
		case !modeSeen:
			modeSeen = true
		default:
			targets = append(targets, a)
		}
	}
	if !recursive {
		return
	}
	rule, verb, example := ruleChmodRecursive, "permission", "chmod -R u+w build"
	if name != "chmod" {
		rule, verb, example = ruleChownRecursive, "ownership", name+" -R \"$USER\" build"
	}
	for _, t := range targets {
		p := ""
		if t.known {
			p, _ = c.protectedTarget(t.s, sc)
			if p == "" {
				if q, kind := c.projectsTarget(t.s, sc); kind == kindProjects {
					p = q
				}
			}
		}
		if p == "" {
			p, _ = c.collapses(t, sc)
		}
		if p != "" {
			c.deny(rule, "Refused "+text+": a recursive "+verb+" change over "+p+" rewrites every file below it at once, and the old "+verb+"s cannot be told apart afterwards; change only the folder you mean, such as `"+example+"`, or ask the user.")
			return
		}
	}
}
