package agents

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/ctxtools/ctx/gitstate"
)

// Git strategies of a pause (AGENTS.md §5.7). Every strategy takes the checkpoint
// first (TakeCheckpoint: nothing the person wrote is ever lost); then
//
//   - keep (the default) leaves the tree as it is;
//   - stash puts the agent's changes away with `git stash push -u`, named
//     "ctx-pause <id> <stamp>" and remembered by the stash's commit id (refs/stash is one
//     stack for every worktree of a repository, so positions move);
//   - commit makes a WIP commit "ctx: pause <name> (WIP)", with the repository's hooks.
//
// Resume undoes the step: the stash is applied by its id (a conflict keeps the stash and
// the agent paused, unless the person says to go on), and a WIP commit still at HEAD is
// undone with `reset --soft`, keeping its changes in the tree and the index.

// The strategies.
const (
	GitKeep   = "keep"
	GitStash  = "stash"
	GitCommit = "commit"
)

// ErrGitStrategy is an unknown --git value.
var ErrGitStrategy = errors.New("--git takes keep, stash or commit")

// ConflictError is a stash that did not apply cleanly on resume: the stash is kept,
// the agent stays paused.
type ConflictError struct {
	Files []string
	Stash string
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("the stash %s does not apply cleanly (conflicts in %s); it is kept and the agent stays paused: resolve and resume, or resume with --resume-with-conflicts",
		ShortSHA(e.Stash), strings.Join(e.Files, ", "))
}

// CheckGitStrategy validates a --git value ("" is keep).
func CheckGitStrategy(s string) (string, error) {
	switch s {
	case "", GitKeep:
		return GitKeep, nil
	case GitStash, GitCommit:
		return s, nil
	}
	return "", fmt.Errorf("%w, not %q", ErrGitStrategy, s)
}

// stashMessage names a pause's stash.
func stashMessage(id, stamp string) string { return "ctx-pause " + id + " " + stamp }

// applyStrategy carries out the strategy after the checkpoint. It is idempotent: a
// stash or commit of this pause already made (a pause finished after a crash) is found
// and reused. With nothing dirty, there is nothing to stash or commit.
func (c *Checkpoint) applyStrategy(strategy, id, name, stamp string) error {
	if strategy == GitKeep || strategy == "" || c.Stash != "" || c.WIPCommit != "" {
		return nil
	}
	c.Strategy = strategy
	defer c.recordAfter()
	switch strategy {
	case GitStash:
		msg := stashMessage(id, stamp)
		if sha := findStash(c.Repo, msg); sha != "" {
			c.Stash = sha
			return nil
		}
		if len(c.Dirty) == 0 {
			return nil
		}
		if _, err := git(c.Repo, nil, "stash", "push", "--include-untracked", "-m", msg); err != nil {
			return fmt.Errorf("git stash: %w", err)
		}
		if c.Stash = findStash(c.Repo, msg); c.Stash == "" {
			return errors.New("git stash: the stash just made is not in the list")
		}
	case GitCommit:
		msg := "ctx: pause " + name + " (WIP)"
		if head, err := git(c.Repo, nil, "log", "-1", "--format=%H%x00%P%x00%s"); err == nil {
			f := strings.SplitN(strings.TrimSpace(head), "\x00", 3)
			if len(f) == 3 && f[2] == msg {
				c.WIPCommit, c.Head = f[0], f[1] // made by this pause before a crash
				return nil
			}
		}
		if len(c.Dirty) == 0 {
			return nil
		}
		if _, err := git(c.Repo, nil, "add", "-A"); err != nil {
			return fmt.Errorf("git add: %w", err)
		}
		if _, err := git(c.Repo, nil, "commit", "-q", "-m", msg); err != nil {
			return fmt.Errorf("git commit: %w", err)
		}
		out, err := git(c.Repo, nil, "rev-parse", "HEAD")
		if err != nil {
			return err
		}
		c.WIPCommit = strings.TrimSpace(out)
	}
	return nil
}

// recordAfter notes the tree and HEAD the strategy left.
func (c *Checkpoint) recordAfter() {
	if tree, err := treeOf(c.Repo); err == nil {
		c.AfterTree = tree
	}
	if out, err := git(c.Repo, nil, "rev-parse", "--verify", "-q", "HEAD"); err == nil {
		c.AfterHead = strings.TrimSpace(out)
	}
}

// findStash returns the commit id of the stash named msg, or "".
func findStash(repo, msg string) string {
	out, err := git(repo, nil, "stash", "list", "--format=%H%x00%gs")
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(out, "\n") {
		sha, subject, ok := strings.Cut(line, "\x00")
		// git writes "On <branch>: <msg>" as the stash's subject.
		if ok && (subject == msg || strings.HasSuffix(subject, ": "+msg)) {
			return sha
		}
	}
	return ""
}

// undoStrategy brings the tree back to where the pause left it: the stash applied (and
// dropped), the WIP commit undone when it is still HEAD. It returns a note for the
// resume prompt, and a *ConflictError when the stash conflicts and not goOn.
func (c *Checkpoint) undoStrategy(goOn bool) (note string, err error) {
	if c.Undone {
		return "", nil
	}
	switch {
	case c.Stash != "":
		if findStashByID(c.Repo, c.Stash) < 0 {
			return "", nil // applied and dropped by an earlier resume
		}
		if _, err := git(c.Repo, nil, "stash", "apply", "--index", c.Stash); err != nil {
			conflicts := unmerged(c.Repo)
			if len(conflicts) == 0 {
				// Refused before touching anything: a file of the stash is in the way
				// (made or changed while paused). The tree is as the person left it.
				var ge *gitstate.Error
				if errors.As(err, &ge) {
					if inWay := filesInTheWay(ge.Stderr); len(inWay) > 0 {
						return "", &ConflictError{Files: inWay, Stash: c.Stash}
					}
				}
				return "", fmt.Errorf("git stash apply %s: %w; the stash is kept", ShortSHA(c.Stash), err)
			}
			if !goOn {
				// Back to the tree as it was: the person decides.
				_, _ = git(c.Repo, nil, "reset", "--merge")
				return "", &ConflictError{Files: conflicts, Stash: c.Stash}
			}
			return "The stash of your changes conflicted with changes made while you were paused, in: " +
				strings.Join(conflicts, ", ") + ". Resolve the conflict markers in those files first. The stash is kept as " + ShortSHA(c.Stash) + ".", nil
		}
		if i := findStashByID(c.Repo, c.Stash); i >= 0 {
			_, _ = git(c.Repo, nil, "stash", "drop", "-q", fmt.Sprintf("stash@{%d}", i))
		}
	case c.WIPCommit != "":
		out, err := git(c.Repo, nil, "rev-parse", "--verify", "-q", "HEAD")
		if err != nil || strings.TrimSpace(out) != c.WIPCommit {
			return "Your work-in-progress commit " + ShortSHA(c.WIPCommit) + " is no longer HEAD (someone committed on top or switched branch); it was left as it is.", nil
		}
		if _, err := git(c.Repo, nil, "reset", "-q", "--soft", "HEAD~1"); err != nil {
			return "", fmt.Errorf("undo the WIP commit: %w", err)
		}
	}
	return "", nil
}

// findStashByID returns the position of the stash whose commit id is sha, or -1.
func findStashByID(repo, sha string) int {
	out, err := git(repo, nil, "stash", "list", "--format=%H")
	if err != nil {
		return -1
	}
	for i, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if line == sha {
			return i
		}
	}
	return -1
}

// filesInTheWay reads the files git names (on stderr, in English: gitstate.Run) when it
// refuses to apply a stash over them: "F already exists, no checkout", and the
// tab-indented list after "would be overwritten".
func filesInTheWay(stderr string) []string {
	var files []string
	listing := false
	for _, line := range strings.Split(stderr, "\n") {
		switch {
		case strings.HasSuffix(line, " already exists, no checkout"):
			files = append(files, strings.TrimSuffix(line, " already exists, no checkout"))
		case strings.Contains(line, "would be overwritten"):
			listing = true
		case listing && strings.HasPrefix(line, "\t"):
			files = append(files, strings.TrimSpace(line))
		default:
			listing = false
		}
	}
	sort.Strings(files)
	return files
}

// unmerged lists the files left in conflict.
func unmerged(repo string) []string {
	out, err := git(repo, nil, "diff", "--name-only", "--diff-filter=U", "-z")
	if err != nil {
		return nil
	}
	var files []string
	for _, f := range strings.Split(out, "\x00") {
		if f != "" {
			files = append(files, f)
		}
	}
	sort.Strings(files)
	return files
}
