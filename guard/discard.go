package guard

import (
	"path"
	"strings"
)

// The git commands here overwrite working files with a committed or staged version.
// Like git reset --hard, they are refused only while Env.Dirty reports uncommitted
// changes, and only in their wholesale forms: a forced switch, or a pathspec that
// covers the tree or a folder. Restoring one named file is the everyday way to undo an
// edit and stays allowed; Env.Dirty knows repositories, not files, so refusing it would
// refuse every single-file undo in a repository with any change at all.

// checkout refuses git checkout -f, and git checkout [tree-ish] [--] <wide pathspec>.
func (c *checker) checkout(args []arg, dir, text string) {
	force, fromFile := false, false
	var operands []arg
	opts := true
	for j := 0; j < len(args); j++ {
		a := args[j]
		s := a.s
		switch {
		case !a.known || !opts || s == "-" || !strings.HasPrefix(s, "-"):
			operands = append(operands, a)
		case s == "--":
			opts = false
		case strings.HasPrefix(s, "--"):
			name, _, hasValue := strings.Cut(s[2:], "=")
			switch {
			case name == "force":
				force = true
			case name == "pathspec-from-file":
				fromFile = true
			case !hasValue && (name == "orphan" || name == "conflict"):
				j++
			}
		default:
			for k := 1; k < len(s); k++ {
				if s[k] == 'f' {
					force = true
				}
				if s[k] == 'b' || s[k] == 'B' {
					if k == len(s)-1 {
						j++ // -b takes the next word; attached, the rest of this one
					}
					break
				}
			}
		}
	}
	wide, what := c.widePathspec(operands, dir)
	if !force && !fromFile && !wide {
		return
	}
	if !c.isDirty(dir) {
		return
	}
	switch {
	case force:
		what = "a forced checkout overwrites them for good"
	case fromFile:
		what = "checking out the paths listed in a file overwrites them for good, and the guard cannot see which"
	}
	c.deny(ruleGitCheckoutDiscard, "Refused "+text+": "+repoName(dir)+" has uncommitted changes, and "+what+"; keep them first with `git stash push -m \"before checkout\"` or commit them, or ask the user which changes to throw away.")
}

// restore refuses git restore of the working tree (the default, or --worktree) over a
// wide pathspec; --staged alone only unstages and loses nothing.
func (c *checker) restore(args []arg, dir, text string) {
	staged, worktree, fromFile := false, false, false
	var operands []arg
	opts := true
	for j := 0; j < len(args); j++ {
		a := args[j]
		s := a.s
		switch {
		case !a.known || !opts || s == "-" || !strings.HasPrefix(s, "-"):
			operands = append(operands, a)
		case s == "--":
			opts = false
		case strings.HasPrefix(s, "--"):
			name, _, hasValue := strings.Cut(s[2:], "=")
			switch {
			case name == "staged":
				staged = true
			case name == "worktree":
				worktree = true
			case name == "pathspec-from-file":
				fromFile = true
			case !hasValue && (name == "source" || name == "conflict"):
				j++
			}
		default:
			for k := 1; k < len(s); k++ {
				switch s[k] {
				case 'S':
					staged = true
				case 'W':
					worktree = true
				case 's':
					if k == len(s)-1 {
						j++
					}
					k = len(s)
				}
			}
		}
	}
	if staged && !worktree {
		return
	}
	wide, what := c.widePathspec(operands, dir)
	if fromFile {
		wide, what = true, "restoring the paths listed in a file overwrites them for good, and the guard cannot see which"
	}
	if !wide || !c.isDirty(dir) {
		return
	}
	c.deny(ruleGitRestoreDiscard, "Refused "+text+": "+repoName(dir)+" has uncommitted changes, and "+what+"; keep them first with `git stash push -m \"before restore\"` or commit them, or ask the user which changes to throw away.")
}

// switchBranch refuses git switch -f, --force and --discard-changes.
func (c *checker) switchBranch(args []arg, dir, text string) {
	discard := false
	for _, a := range args {
		s := a.s
		if !a.known || s == "--" {
			break
		}
		switch {
		case s == "--force" || s == "--discard-changes":
			discard = true
		case len(s) > 1 && s[0] == '-' && s[1] != '-':
			// -c, -C and the like take a branch name, which holds no f.
			if i := strings.IndexAny(s, "cC"); i >= 0 {
				s = s[:i]
			}
			discard = discard || strings.Contains(s, "f")
		}
	}
	if discard && c.isDirty(dir) {
		c.deny(ruleGitSwitchDiscard, "Refused "+text+": "+repoName(dir)+" has uncommitted changes that a forced switch throws away for good; keep them with `git stash push -m \"before switch\"` or commit them, then switch without --force.")
	}
}

// stash refuses git stash drop and git stash clear, dirty tree or not: a stash is
// reachable only through its entry in the stash list, and once that is gone its changes
// survive only as an unnamed commit that git gc prunes.
func (c *checker) stash(args []arg, text string) {
	for _, a := range args {
		if !a.known {
			return
		}
		if strings.HasPrefix(a.s, "-") {
			continue
		}
		if a.s == "drop" || a.s == "clear" {
			c.deny(ruleGitStashDrop, "Refused "+text+": a dropped stash is reachable only by its commit hash until git prunes it, so its changes are as good as lost; leave it in the list (it costs nothing), or save it with `git stash show -p stash@{0} > stash.patch` and ask the user to drop it.")
		}
		return
	}
}

// widePathspec reports whether a checkout or restore operand covers more than named
// files: the whole tree (., :/, *, an exclusion such as :!x), a glob, a folder named
// with a trailing slash or by .., the repository's own folder, or a folder the guard
// protects (the workspace, a projects or planning folder). It also says what that
// means, for the reason. An operand that is not known is not counted: it may be a
// branch name, and guessing would refuse every `git checkout "$BRANCH"`.
func (c *checker) widePathspec(operands []arg, dir string) (bool, string) {
	const whole = "overwriting the whole tree with the committed version destroys them for good"
	for _, a := range operands {
		if !a.known {
			continue
		}
		s := a.s
		if rest, ok := strings.CutPrefix(s, ":"); ok {
			// Pathspec magic: ":/" and ":(top)" mean the top of the tree, ":!" and ":^"
			// an exclusion, which leaves every other file.
			switch {
			case rest == "" || strings.HasPrefix(rest, "!") || strings.HasPrefix(rest, "^"):
				return true, whole
			case strings.HasPrefix(rest, "/"):
				s = "." + rest[1:]
				if s == "." || s == "./" {
					return true, whole
				}
			case strings.HasPrefix(rest, "("):
				magic, after, _ := strings.Cut(rest[1:], ")")
				if strings.Contains(magic, "exclude") {
					return true, whole
				}
				if after == "" || after == "." {
					return true, whole
				}
				s = after
			}
		}
		clean := path.Clean(s)
		switch {
		case clean == "." || clean == ".." || strings.HasPrefix(clean, "../"):
			return true, whole
		case strings.ContainsAny(s, "*?["):
			return true, "overwriting every file that " + s + " matches destroys them for good"
		case strings.HasSuffix(s, "/"):
			return true, "overwriting the folder " + s + " with the committed version destroys them for good"
		}
		abs := (&scope{cwd: dir}).abs(s)
		if abs != "" && abs == dir {
			return true, whole
		}
		if _, rule := c.protectedTarget(s, &scope{cwd: dir}); rule != "" {
			return true, whole
		}
		if p, kind := c.projectsTarget(s, &scope{cwd: dir}); kind != "" {
			return true, "overwriting " + p + " with the committed version destroys them for good"
		}
	}
	return false, ""
}
