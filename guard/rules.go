package guard

import (
	"path"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Rule ids, as reported in Verdict.Rule.
const (
	ruleRmRoot             = "rm-root"              // rm -r of / or /*
	ruleRmHome             = "rm-home"              // rm -r of the home folder or all its contents
	ruleRmWorkspace        = "rm-workspace"         // rm -r of the workspace root or all its contents
	ruleRmParent           = "rm-parent"            // rm -r of a folder holding the workspace or home
	ruleRmSystem           = "rm-system"            // rm -r of a system folder such as /usr or /etc
	ruleRmNoPreserveRoot   = "rm-no-preserve-root"  // rm --no-preserve-root
	ruleRmHomeContents     = "rm-home-contents"     // rm -r of a folder in home, or of another user's home
	ruleRmSystemContents   = "rm-system-contents"   // rm -r of what a system folder holds: /var/log, /etc/nginx
	ruleRmGitDir           = "rm-git-dir"           // rm -r of the .git folder of the repository worked in
	ruleRmProjects         = "rm-projects"          // rm -r of the projects folder, a project or a planning folder
	ruleRmUnsetVar         = "rm-unset-var"         // rm -r of "$UNSET/" and the like
	ruleFindDelete         = "find-delete"          // find -delete or -exec rm over a protected folder
	ruleXargsRm            = "xargs-rm"             // xargs rm over paths the guard cannot see
	ruleGitForcePush       = "git-force-push"       // forced push to main or master, or to an unknown branch
	ruleGitDeleteMain      = "git-delete-main"      // push deleting the remote main or master
	ruleGitResetHard       = "git-reset-hard"       // git reset --hard with uncommitted changes
	ruleGitClean           = "git-clean"            // git clean -f with -d, -x or -X, with uncommitted changes
	ruleGitCheckoutDiscard = "git-checkout-discard" // git checkout -f or over the whole tree, with changes
	ruleGitRestoreDiscard  = "git-restore-discard"  // git restore of the whole working tree, with changes
	ruleGitSwitchDiscard   = "git-switch-discard"   // git switch -f or --discard-changes, with changes
	ruleGitStashDrop       = "git-stash-drop"       // git stash drop or clear
	ruleGitWorktreeRemove  = "git-worktree-remove"  // git worktree remove --force over uncommitted work
	ruleGitBranchDelete    = "git-branch-delete"    // git branch -D of commits no other ref holds
	ruleOverwriteInPlace   = "overwrite-in-place"   // shred, truncate, or > onto a save point or secret
	ruleChmodRecursive     = "chmod-recursive"      // chmod -R over a protected folder
	ruleChownRecursive     = "chown-recursive"      // chown -R or chgrp -R over a protected folder
	rulePipeToShell        = "pipe-to-shell"        // a download run by a shell unread
	ruleSQLDrop            = "sql-drop"             // DROP DATABASE, TABLE or SCHEMA sent to a SQL client
	ruleSQLTruncate        = "sql-truncate"         // TRUNCATE sent to a SQL client
	ruleSQLDeleteAll       = "sql-delete-all"       // DELETE without WHERE sent to a SQL client
	ruleDBDrop             = "db-drop"              // dropdb, mysqladmin drop, a Mongo dropDatabase()
	ruleRedisFlush         = "redis-flush"          // redis-cli FLUSHALL or FLUSHDB
	ruleDockerVolume       = "docker-volume"        // docker volume rm or prune, compose down -v
	ruleRsyncDelete        = "rsync-delete"         // rsync --delete into the workspace, a project or home
	ruleMkfs               = "mkfs"                 // making a filesystem
	ruleDdDevice           = "dd-device"            // dd of=/dev/...
	ruleDeviceWrite        = "device-write"         // > or tee onto a disk device
	ruleForkBomb           = "fork-bomb"            // a function that spawns copies of itself
	ruleTooDeep            = "too-deep"             // scripts nested in strings beyond maxDepth
	ruleUnjudgeable        = "unjudgeable"          // does not parse, or too large or nested to parse
	ruleConfigDeny         = "config-deny"          // a pattern from the workspace's guard.deny
)

func (c *checker) denyConfig(d denyPattern, text string) {
	why := d.reason
	if why == "" {
		why = "ask the user to run it themselves if it is needed"
	}
	c.deny(ruleConfigDeny, "Refused "+text+": this workspace's .ctx/config.yaml ("+d.key+") forbids `"+d.source+"`: "+strings.TrimSuffix(why, ".")+".")
}

// rm refuses a recursive deletion of a protected folder. -f is not required: without a
// terminal to prompt on, rm -r deletes as much as rm -rf does.
func (c *checker) rm(args []arg, sc *scope, text string) {
	recursive, noPreserve := false, false
	var targets []arg
	opts := true
	for _, a := range args[1:] {
		s := a.s
		switch {
		case !a.known:
			targets = append(targets, a)
		case opts && s == "--":
			opts = false
		case opts && strings.HasPrefix(s, "--"):
			// GNU rm takes any unambiguous prefix of a long option, such as --rec.
			name, _, _ := strings.Cut(s[2:], "=")
			switch {
			case abbreviates(name, "recursive", 1):
				recursive = true
			case abbreviates(name, "no-preserve-root", 1):
				noPreserve = true
			}
		case opts && len(s) > 1 && s[0] == '-':
			recursive = recursive || strings.ContainsAny(s[1:], "rR")
		default:
			// GNU rm also takes options after the operands, so parsing goes on.
			targets = append(targets, a)
		}
	}
	if noPreserve {
		c.deny(ruleRmNoPreserveRoot, rmReason(ruleRmNoPreserveRoot, text, ""))
		return
	}
	if !recursive {
		return
	}
	for _, t := range targets {
		if t.known {
			if p, rule := c.protectedTarget(t.s, sc); rule != "" {
				c.deny(rule, rmReason(rule, text, p))
				return
			}
			if p, what := c.homeContentsTarget(t.s, sc); p != "" {
				c.deny(ruleRmHomeContents, "Refused "+text+": "+p+" is "+what+", and rm -r deletes it for good; delete the specific file or cache folder you mean inside it, or ask the user.")
				return
			}
			if p := c.systemContentsTarget(t.s, sc); p != "" {
				c.deny(ruleRmSystemContents, "Refused "+text+": "+p+" is part of the system (its configuration, programs, libraries, logs or service data), and rm -r deletes it for good; remove the package that owns it with the package manager, or ask the user.")
				return
			}
			if p := c.gitDirTarget(t.s, sc); p != "" {
				c.deny(ruleRmGitDir, "Refused "+text+": "+p+" is the repository's history (every commit, branch and stash), which nothing restores; to start over without history ask the user, and to remove a vendored copy's .git name a folder below this one.")
				return
			}
			if p, kind := c.projectsTarget(t.s, sc); kind != "" {
				c.deny(ruleRmProjects, "Refused "+text+": "+projectsWhat(p, kind)+", and deleting it loses plans and save points that nothing can restore; delete the specific file or build folder you mean (one inside 03-working, say), or ask the user.")
				return
			}
		}
		if p, v := c.collapses(t, sc); v != "" {
			c.deny(ruleRmUnsetVar, "Refused "+text+": nothing in this command sets $"+v+" before rm's arguments are expanded, and if it is empty the path becomes "+p+", which rm would delete; set it in a command of its own first, or write ${"+v+":?} so that bash stops when it is empty.")
			return
		}
	}
}

// collapses reports the protected folder t would name if the variables the command
// never assigns were empty, and the first such variable; "" when it names none.
func (c *checker) collapses(t arg, sc *scope) (string, string) {
	if t.unset == "" || t.ifUnset == "" {
		return "", "" // an empty operand names no file
	}
	if p, rule := c.protectedTarget(t.ifUnset, sc); rule != "" {
		return p, t.unset
	}
	if p, kind := c.projectsTarget(t.ifUnset, sc); kind != "" {
		return p, t.unset
	}
	return "", ""
}

// protectedTarget reports which protected folder deleting target would destroy, itself
// or all its contents (x/*, x/.*, and * or .* in it), and the rule that protects it.
func (c *checker) protectedTarget(target string, sc *scope) (string, string) {
	p := holder(target)
	if p == "" {
		return "", ""
	}
	abs := sc.abs(p)
	if abs == "" {
		return "", ""
	}
	glob := strings.ContainsAny(abs, "*?[")
	for _, pp := range c.rules.protected {
		if abs == pp.path {
			return pp.path, pp.rule
		}
		if glob {
			if ok, _ := path.Match(abs, pp.path); ok {
				return pp.path, pp.rule
			}
		}
	}
	return "", ""
}

// holder is the folder that deleting target would empty or remove: target itself, or
// the folder whose every entry it names (x/*, x/.*, * and .* naming the working folder).
// It is "" for the empty word, which names no file.
func holder(target string) string {
	if target == "" {
		return ""
	}
	p := path.Clean(target)
	for {
		switch {
		case p == "*" || p == ".*":
			return "."
		case strings.HasSuffix(p, "/*"):
			p = path.Clean(p[:len(p)-1])
		case strings.HasSuffix(p, "/.*"):
			p = path.Clean(p[:len(p)-2])
		default:
			return p
		}
	}
}

// abbreviates reports whether name, typed after --, selects the long option: GNU and
// git option parsers accept any unambiguous prefix of at least min letters.
func abbreviates(name, option string, minLen int) bool {
	return len(name) >= minLen && strings.HasPrefix(option, name)
}

func rmReason(rule, text, p string) string {
	switch rule {
	case ruleRmNoPreserveRoot:
		return "Refused " + text + ": --no-preserve-root switches off rm's last protection against deleting the whole filesystem; drop that flag and name the specific folder to delete."
	case ruleRmRoot:
		return "Refused " + text + ": it recursively deletes the whole filesystem; name the specific folder you mean to delete instead, such as ./build."
	case ruleRmHome:
		return "Refused " + text + ": it recursively deletes the home folder " + p + "; name the specific subfolder you mean to delete instead."
	case ruleRmWorkspace:
		return "Refused " + text + ": it deletes the workspace root " + p + " with all its files and history; delete the specific build or output folder inside it instead."
	case ruleRmParent:
		return "Refused " + text + ": " + p + " contains the workspace or the home folder, which would be deleted with it; delete a specific folder below it instead."
	default:
		return "Refused " + text + ": " + p + " is a system folder the machine needs; delete the specific file you mean instead, or ask the user."
	}
}

// git checks push, reset --hard and clean, after git's own options such as -C dir.
func (c *checker) git(args []arg, sc *scope, text string) {
	dir := sc.cwd
	i := 1
	for i < len(args) {
		a := args[i]
		if !a.known {
			return
		}
		s := a.s
		switch {
		case s == "-C" && i+1 < len(args):
			dir = resolveDir(dir, args[i+1])
			i += 2
		case s == "--work-tree" && i+1 < len(args):
			dir = resolveDir(dir, args[i+1])
			i += 2
		case strings.HasPrefix(s, "--work-tree="):
			dir = resolveDir(dir, arg{s: strings.TrimPrefix(s, "--work-tree="), known: true})
			i++
		case s == "-c" || s == "--git-dir" || s == "--namespace" || s == "--config-env" || s == "--super-prefix":
			i += 2
		case strings.HasPrefix(s, "-"):
			i++
		default:
			switch s {
			case "push":
				c.push(args[i+1:], text)
			case "reset":
				c.reset(args[i+1:], dir, text)
			case "clean":
				c.clean(args[i+1:], dir, text)
			case "checkout":
				c.checkout(args[i+1:], dir, text)
			case "restore":
				c.restore(args[i+1:], dir, text)
			case "switch":
				c.switchBranch(args[i+1:], dir, text)
			case "stash":
				c.stash(args[i+1:], text)
			case "worktree":
				c.worktreeRemove(args[i+1:], dir, text)
			case "branch":
				c.branchDelete(args[i+1:], dir, text)
			}
			return
		}
	}
}

func resolveDir(dir string, a arg) string {
	if !a.known {
		return ""
	}
	return (&scope{cwd: dir}).abs(a.s)
}

// push refuses a forced push that can rewrite main or master. A forced push without a
// refspec (or to HEAD, or to a branch held in a variable) is refused too: its target is
// the current branch or push.default's choice, which the guard cannot see, and an agent
// can always name its feature branch explicitly.
func (c *checker) push(args []arg, text string) {
	force, mirror, all, del, dry := false, false, false, false, false
	repoSeen := false
	var refs []arg
	opts := true
	for j := 0; j < len(args); j++ {
		a := args[j]
		s := a.s
		switch {
		case a.known && opts && s == "--":
			opts = false
		case a.known && opts && strings.HasPrefix(s, "--"):
			name, _, hasValue := strings.Cut(s[2:], "=")
			switch {
			case abbreviates(name, "force", 3) || abbreviates(name, "force-with-lease", 3):
				// git takes unambiguous prefixes; an ambiguous one fails without pushing.
				force = true
			case name == "mirror":
				mirror = true
			case name == "all" || name == "branches":
				all = true
			case name == "delete":
				del = true
			case name == "dry-run":
				dry = true
			case !hasValue && (name == "repo" || name == "receive-pack" || name == "exec" || name == "push-option"):
				j++
			}
		case a.known && opts && len(s) > 1 && s[0] == '-':
			for k := 1; k < len(s); k++ {
				switch s[k] {
				case 'f':
					force = true
				case 'd':
					del = true
				case 'n':
					dry = true
				case 'o':
					if k == len(s)-1 {
						j++ // -o takes the next word; attached, the rest of this one
					}
					k = len(s)
				}
			}
		case !repoSeen:
			repoSeen = true
		default:
			refs = append(refs, a)
		}
	}
	if dry {
		return
	}
	if mirror || force && all {
		c.deny(ruleGitForcePush, "Refused "+text+": it force-updates every branch on the remote, main and master included, rewriting history others build on; push your feature branch by name instead.")
		return
	}
	for _, r := range refs {
		s := r.s
		plus := strings.HasPrefix(s, "+")
		s = strings.TrimPrefix(s, "+")
		src, dst, hasColon := strings.Cut(s, ":")
		if !hasColon {
			dst = src
		}
		dst = strings.TrimPrefix(dst, "refs/heads/")
		isMain := dst == "main" || dst == "master"
		unknown := !r.known || dst == "HEAD" || dst == "@"
		switch {
		case isMain && (del || hasColon && src == ""):
			c.deny(ruleGitDeleteMain, "Refused "+text+": it deletes the remote "+dst+" branch that everyone builds on; delete only your own feature branches, and ask the user about "+dst+".")
			return
		case isMain && (force || plus):
			c.deny(ruleGitForcePush, "Refused "+text+": force-pushing to "+dst+" rewrites the shared history others build on; push to a feature branch and open a pull request instead, or ask the user.")
			return
		case unknown && (force || plus):
			c.deny(ruleGitForcePush, "Refused "+text+": the guard cannot tell which branch this forced push overwrites, and it may be main or master; name the branch explicitly, as in `git push --force-with-lease origin my-branch`.")
			return
		}
	}
	if force && len(refs) == 0 {
		c.deny(ruleGitForcePush, "Refused "+text+": a forced push without a branch name overwrites whatever the current branch tracks, which may be main or master; name the branch explicitly, as in `git push --force-with-lease origin my-branch`.")
	}
}

func (c *checker) reset(args []arg, dir, text string) {
	for _, a := range args {
		if a.known && a.s == "--" {
			return
		}
		if a.known && a.s == "--hard" {
			if c.isDirty(dir) {
				c.deny(ruleGitResetHard, "Refused "+text+": "+repoName(dir)+" has uncommitted changes that a hard reset destroys for good; keep them first with `git stash push -m \"before reset\"` or commit them, then run the reset as a command of its own.")
			}
			return
		}
	}
}

func (c *checker) clean(args []arg, dir, text string) {
	force, dry := false, false
	for j := 0; j < len(args); j++ {
		a := args[j]
		s := a.s
		switch {
		case !a.known:
		case s == "--":
			j = len(args)
		case s == "--force":
			force = true
		case s == "--dry-run":
			dry = true
		case s == "--exclude":
			j++
		case strings.HasPrefix(s, "--"):
		case len(s) > 1 && s[0] == '-':
			for k := 1; k < len(s); k++ {
				switch s[k] {
				case 'f':
					force = true
				case 'n':
					dry = true
				case 'e':
					if k == len(s)-1 {
						j++
					}
					k = len(s)
				}
			}
		}
	}
	if !force || dry {
		return
	}
	if c.isDirty(dir) {
		c.deny(ruleGitClean, "Refused "+text+": "+repoName(dir)+" has uncommitted work, and git clean deletes untracked (and with -x ignored) files permanently (-d folders too); list what it would delete with `git clean -n -d -x`, and keep what matters with `git stash push --include-untracked -m \"before clean\"` first.")
	}
}

func repoName(dir string) string {
	if dir == "" {
		return "the repository (its folder could not be determined)"
	}
	return "the repository at " + dir
}

// isDirty asks Env.Dirty once per folder and Check. An unknown folder or a missing
// Dirty counts as dirty: losing work is the outcome to avoid.
func (c *checker) isDirty(dir string) bool {
	if dir == "" || c.rules.env.Dirty == nil {
		return true
	}
	if d, ok := c.dirty[dir]; ok {
		return d
	}
	if c.dirty == nil {
		c.dirty = map[string]bool{}
	}
	d := c.rules.env.Dirty(dir)
	c.dirty[dir] = d
	return d
}

func (c *checker) dd(args []arg, sc *scope, text string) {
	for _, a := range args[1:] {
		if !a.known || !strings.HasPrefix(a.s, "of=") {
			continue
		}
		p := sc.abs(strings.TrimPrefix(a.s, "of="))
		if strings.HasPrefix(p, "/dev/") && !pseudoDevice(p) {
			c.deny(ruleDdDevice, "Refused "+text+": dd onto "+p+" overwrites the device it names, destroying its data; write to an image file instead, and ask the user to flash it.")
			return
		}
	}
}

// tee refuses writing onto a disk device, and, without -a, overwriting a save point.
func (c *checker) tee(args []arg, sc *scope, text string) {
	appendMode := false
	opts := true
	for _, a := range args[1:] {
		if !a.known {
			continue
		}
		if opts && a.s == "--" {
			opts = false
			continue
		}
		if opts && strings.HasPrefix(a.s, "-") && a.s != "-" {
			appendMode = appendMode || a.s == "--append" || !strings.HasPrefix(a.s, "--") && strings.Contains(a.s, "a")
			continue
		}
		if diskDevice(sc.abs(a.s)) {
			c.deny(ruleDeviceWrite, deviceReason(text, sc.abs(a.s)))
			return
		}
		if p, what := c.savePoint(a.s, sc); what != "" && !appendMode {
			c.deny(ruleOverwriteInPlace, overwriteReason(text, p, what))
			return
		}
	}
}

// redirect refuses output redirected onto a disk device, as in `> /dev/sda`, and a
// truncating redirection onto a save point, as in `: > _resume.md`.
func (c *checker) redirect(r *syntax.Redirect, sc *scope, st *syntax.Stmt) {
	truncates := false
	switch r.Op {
	case syntax.RdrOut, syntax.RdrClob, syntax.RdrAll, syntax.RdrAllClob:
		truncates = true
	case syntax.AppOut, syntax.RdrInOut, syntax.AppClob, syntax.AppAll, syntax.AppAllClob, syntax.DplOut:
	default:
		return
	}
	if r.Word == nil {
		return
	}
	w := c.word(r.Word, sc)
	if !w.known {
		return
	}
	if p := sc.abs(w.s); diskDevice(p) {
		c.deny(ruleDeviceWrite, deviceReason("`"+r.Op.String()+" "+w.s+"`", p))
		return
	}
	if truncates {
		if p, what := c.savePoint(w.s, sc); what != "" {
			c.deny(ruleOverwriteInPlace, overwriteReason(c.source(st, sc), p, what))
		}
	}
}

func deviceReason(text, p string) string {
	return "Refused " + text + ": writing to " + p + " overwrites a disk device and the filesystems on it; write to a regular file instead."
}

// pseudoDevice reports whether p is a /dev entry that is safe to write to.
func pseudoDevice(p string) bool {
	switch strings.TrimPrefix(p, "/dev/") {
	case "null", "zero", "full", "random", "urandom", "stdout", "stderr", "stdin", "tty", "ptmx":
		return true
	}
	for _, prefix := range []string{"/dev/fd/", "/dev/shm/", "/dev/pts/", "/dev/tcp/", "/dev/udp/"} {
		if strings.HasPrefix(p, prefix) {
			return true
		}
	}
	return false
}

// diskDevice reports whether p names a disk or memory device. Unlike dd, a redirection
// to a character device such as a serial port (/dev/ttyUSB0) is an everyday thing, so
// only storage and memory devices are listed.
func diskDevice(p string) bool {
	name, ok := strings.CutPrefix(p, "/dev/")
	if !ok {
		return false
	}
	switch name {
	case "mem", "kmem", "port", "root":
		return true
	}
	for _, prefix := range []string{"sd", "hd", "vd", "xvd", "nvme", "mmcblk", "disk", "rdisk", "mapper/", "md", "dm-", "loop", "nbd", "sr", "zd", "ram", "mtdblock"} {
		if strings.HasPrefix(name, prefix) {
			return true
		}
	}
	return false
}

// forkBomb refuses a function that calls itself at least twice, in a pipe or in the
// background, so that every call doubles the processes: `:(){ :|:& };:` under any name.
func (c *checker) forkBomb(f *syntax.FuncDecl, sc *scope) {
	if f.Name == nil || f.Body == nil {
		return
	}
	name := unescape(f.Name.Value, quoteNone)
	// The offsets of the self-calls, in source order, answer "does this node call
	// itself" by a binary search, keeping the check linear in the body's size.
	// A nested function is judged on its own, when the walk reaches it; walking into
	// it here as well would make nested definitions cost the square of their size.
	var selfCalls []uint
	syntax.Walk(f.Body, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.FuncDecl:
			return false
		case *syntax.CallExpr:
			if len(n.Args) > 0 {
				if a := c.word(n.Args[0], sc); a.known && a.s == name {
					selfCalls = append(selfCalls, n.Args[0].Pos().Offset())
				}
			}
		}
		return true
	})
	if len(selfCalls) < 2 {
		return
	}
	slices.Sort(selfCalls)
	calls := func(n syntax.Node) bool {
		i, _ := slices.BinarySearch(selfCalls, n.Pos().Offset())
		return i < len(selfCalls) && selfCalls[i] < n.End().Offset()
	}
	spawns := false
	syntax.Walk(f.Body, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.FuncDecl:
			return false
		case *syntax.BinaryCmd:
			if (n.Op == syntax.Pipe || n.Op == syntax.PipeAll) && calls(n.X) && calls(n.Y) {
				spawns = true
			}
		case *syntax.Stmt:
			if n.Background && calls(n) {
				spawns = true
			}
		}
		return !spawns
	})
	if spawns {
		c.deny(ruleForkBomb, "Refused "+c.source(f, sc)+": it is a fork bomb, a function that keeps spawning copies of itself until the machine stops responding; there is no safe way to run it.")
	}
}

// worktreeRemove refuses git worktree remove --force (or -f) of a worktree with
// uncommitted changes: without --force git refuses it itself.
func (c *checker) worktreeRemove(args []arg, dir, text string) {
	if len(args) == 0 || !args[0].known || args[0].s != "remove" {
		return
	}
	force := false
	var paths []arg
	for _, a := range args[1:] {
		switch {
		case !a.known:
			paths = append(paths, a)
		case a.s == "--force" || len(a.s) > 1 && a.s[0] == '-' && a.s[1] != '-' && strings.Contains(a.s, "f"):
			force = true
		case !strings.HasPrefix(a.s, "-"):
			paths = append(paths, a)
		}
	}
	if !force {
		return
	}
	for _, p := range paths {
		wt := resolveDir(dir, p)
		if c.isDirty(wt) {
			c.deny(ruleGitWorktreeRemove, "Refused "+text+": "+repoName(wt)+" has uncommitted changes, and --force deletes them with the worktree; commit or stash them there first (git -C "+p.s+" stash push -u), then remove it without --force.")
			return
		}
	}
}

// branchDelete refuses git branch -D (--delete --force) of a branch whose commits no
// other branch, tag or remote holds: they would be left to garbage collection.
func (c *checker) branchDelete(args []arg, dir, text string) {
	del, force := false, false
	var names []arg
	for _, a := range args {
		switch {
		case !a.known:
			names = append(names, a)
		case a.s == "--delete":
			del = true
		case a.s == "--force":
			force = true
		case len(a.s) > 1 && a.s[0] == '-' && a.s[1] != '-':
			del = del || strings.ContainsAny(a.s, "dD")
			force = force || strings.ContainsAny(a.s, "Df")
		case !strings.HasPrefix(a.s, "-"):
			names = append(names, a)
		}
	}
	if !del || !force {
		return // git branch -d refuses an unmerged branch itself
	}
	for _, n := range names {
		if c.uniqueBranch(dir, n) {
			c.deny(ruleGitBranchDelete, "Refused "+text+": branch "+n.s+" holds commits no other branch, tag or remote has, and deleting it with -D loses them; merge or push it first, or delete it with -d, which refuses what is not merged.")
			return
		}
	}
}

// uniqueBranch asks Env.Unique, or Dirty when the machine has no answer for branches; a
// branch the guard cannot read counts as unique.
func (c *checker) uniqueBranch(dir string, b arg) bool {
	if !b.known || dir == "" {
		return true
	}
	if c.rules.env.Unique == nil {
		return c.isDirty(dir)
	}
	return c.rules.env.Unique(dir, b.s)
}
