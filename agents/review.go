package agents

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/ctxtools/ctx/gitstate"
)

// Review and merge: what an agent on a branch of its own (ctx agents start
// --worktree) changed against the branch it started from, and bringing that into the
// branch. The worktree is never removed here: it stays until the person removes it
// (ctx agents rm --remove-worktree).

// Review is an agent's changes against the branch it merges into.
type Review struct {
	Agent  string `json:"agent"`
	Branch string `json:"branch"`
	// Into is the branch it is compared with and merges into: the one it started
	// from, or the --into given.
	Into      string       `json:"into"`
	MergeBase string       `json:"merge_base"`
	Worktree  string       `json:"worktree"`
	Commits   []Commit     `json:"commits"`
	Files     []FileChange `json:"files"`
	// Patch is the whole change, committed and uncommitted, against the merge base;
	// untracked files show as new. It is cut at MaxPatch bytes (Truncated).
	Patch     string `json:"patch"`
	Truncated bool   `json:"truncated,omitempty"`
}

// Commit is one commit of the agent's branch beyond the merge base.
type Commit struct {
	SHA     string `json:"sha"`
	Subject string `json:"subject"`
}

// FileChange is one file the agent changed: committed on its branch, uncommitted in
// its worktree, or both.
type FileChange struct {
	Path        string `json:"path"`
	Status      string `json:"status"` // added, modified, deleted, renamed
	Committed   bool   `json:"committed"`
	Uncommitted bool   `json:"uncommitted"`
}

// Uncommitted are the files changed in the worktree and not committed.
func (r *Review) Uncommitted() []string {
	var out []string
	for _, f := range r.Files {
		if f.Uncommitted {
			out = append(out, f.Path)
		}
	}
	return out
}

// MaxPatch bounds Review.Patch.
const MaxPatch = 2 << 20

// ErrNoWorktree is an agent that works in a folder it shares, not on a branch of its
// own (bad input).
var ErrNoWorktree = errors.New("no worktree")

// MergeConflictError is a merge git cannot make on its own: nothing was changed.
type MergeConflictError struct {
	Branch, Into string
	Files        []string
}

func (e *MergeConflictError) Error() string {
	return fmt.Sprintf("%s does not merge cleanly into %s: conflicts in %s; nothing was changed (merge it by hand, or have the agent rebase on %s)",
		e.Branch, e.Into, strings.Join(e.Files, ", "), e.Into)
}

// Review compares the agent's branch and worktree with into ("" for the branch it
// started from).
func (a *Agents) Review(rec *Record, into string) (*Review, error) {
	return a.review(rec, into, true)
}

// review is Review, with the patch or without it (a merge needs only the commits and
// the files).
func (a *Agents) review(rec *Record, into string, withPatch bool) (*Review, error) {
	wt := rec.Worktree
	if wt == nil {
		return nil, fmt.Errorf("%w: agent %s works in %s, not on a branch of its own (ctx agents start --worktree BRANCH gives one)", ErrNoWorktree, rec.Name, rec.Cwd)
	}
	into, err := wt.target(into)
	if err != nil {
		return nil, err
	}
	rv := &Review{Agent: rec.ID, Branch: wt.Branch, Into: into, Worktree: wt.Path}
	out, err := git(wt.Repo, nil, "merge-base", "refs/heads/"+into, "refs/heads/"+wt.Branch)
	if err != nil {
		return nil, fmt.Errorf("%s and %s share no history: %w", wt.Branch, into, err)
	}
	rv.MergeBase = strings.TrimSpace(out)
	if out, err = git(wt.Repo, nil, "log", "--reverse", "--format=%H%x09%s", rv.MergeBase+"..refs/heads/"+wt.Branch); err != nil {
		return nil, err
	}
	for line := range strings.Lines(out) {
		sha, subject, _ := strings.Cut(strings.TrimRight(line, "\n"), "\t")
		rv.Commits = append(rv.Commits, Commit{SHA: sha, Subject: subject})
	}
	files := map[string]*FileChange{}
	var order []string
	note := func(status, path string, committed bool) {
		f := files[path]
		if f == nil {
			f = &FileChange{Path: path, Status: status}
			files[path] = f
			order = append(order, path)
		}
		if committed {
			f.Committed = true
		} else {
			f.Uncommitted = true
		}
	}
	if out, err = git(wt.Repo, nil, "diff", "--name-status", "-M", "-z", rv.MergeBase, "refs/heads/"+wt.Branch); err != nil {
		return nil, err
	}
	for _, c := range nameStatus(out) {
		note(c.status, c.path, true)
	}
	live := false
	if fi, err := os.Stat(wt.Path); err == nil && fi.IsDir() {
		live = true
		if out, err = git(wt.Path, nil, "diff", "--name-status", "-M", "-z", "HEAD"); err != nil {
			return nil, err
		}
		for _, c := range nameStatus(out) {
			note(c.status, c.path, false)
		}
		if out, err = git(wt.Path, nil, "ls-files", "--others", "--exclude-standard", "-z"); err != nil {
			return nil, err
		}
		for p := range strings.SplitSeq(strings.TrimRight(out, "\x00"), "\x00") {
			if p != "" {
				note("added", p, false)
			}
		}
	}
	for _, p := range order {
		rv.Files = append(rv.Files, *files[p])
	}
	if !withPatch {
		return rv, nil
	}
	// The patch: the worktree (or, without one, the branch) against the merge base,
	// then each untracked file as new.
	var patch strings.Builder
	if live {
		out, err = git(wt.Path, nil, "diff", "--no-color", "--no-ext-diff", "-M", rv.MergeBase)
	} else {
		out, err = git(wt.Repo, nil, "diff", "--no-color", "--no-ext-diff", "-M", rv.MergeBase, "refs/heads/"+wt.Branch)
	}
	if err != nil {
		return nil, err
	}
	patch.WriteString(out)
	for _, f := range rv.Files {
		if !live || f.Committed || !f.Uncommitted || f.Status != "added" || patch.Len() > MaxPatch {
			continue
		}
		// git diff --no-index exits 1 when the files differ, which they do: its output
		// is the patch all the same.
		out, code, err := gitAnswer(wt.Path, "diff", "--no-color", "--no-index", "--", "/dev/null", f.Path)
		if err == nil && code > 1 {
			err = fmt.Errorf("git diff --no-index %s: exit %d", f.Path, code)
		}
		if err != nil {
			return nil, err
		}
		patch.WriteString(out)
	}
	rv.Patch = patch.String()
	if len(rv.Patch) > MaxPatch {
		rv.Patch, rv.Truncated = strings.ToValidUTF8(rv.Patch[:MaxPatch], ""), true
	}
	return rv, nil
}

type nameStatusLine struct{ status, path string }

// nameStatus reads git diff --name-status -z: a status letter (R and C with a score)
// and one path, or two for a rename or copy (the new one kept).
func nameStatus(out string) []nameStatusLine {
	f := strings.Split(strings.TrimRight(out, "\x00"), "\x00")
	var res []nameStatusLine
	for i := 0; i < len(f); i++ {
		code := f[i]
		if code == "" || i+1 >= len(f) {
			break
		}
		status := map[byte]string{'A': "added", 'D': "deleted", 'M': "modified", 'T': "modified", 'R': "renamed", 'C': "added"}[code[0]]
		if status == "" {
			status = "modified"
		}
		path := f[i+1]
		i++
		if code[0] == 'R' || code[0] == 'C' {
			if i+1 < len(f) {
				path = f[i+1]
				i++
			}
		}
		res = append(res, nameStatusLine{status, path})
	}
	return res
}

// gitAnswer runs git where its exit status is an answer (gitstate.RunStatus).
func gitAnswer(dir string, args ...string) (string, int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), gitTimeout)
	defer cancel()
	return gitstate.RunStatus(ctx, dir, args...)
}

// target is the branch a review compares with: into when given, else the branch the
// worktree started from, else (a record from before ctx kept it) the branch checked
// out in the repository's main folder.
func (wt *Worktree) target(into string) (string, error) {
	if into == "" {
		into = wt.FromBranch
	}
	if into == "" {
		out, err := git(wt.Repo, nil, "symbolic-ref", "-q", "--short", "HEAD")
		if err != nil {
			return "", fmt.Errorf("%w: %s started from no branch that ctx knows; name one with --into", ErrWorktree, wt.Branch)
		}
		into = strings.TrimSpace(out)
	}
	if into == wt.Branch {
		return "", fmt.Errorf("%w: --into %s is the agent's own branch", ErrWorktree, into)
	}
	if _, err := git(wt.Repo, nil, "rev-parse", "--verify", "-q", "refs/heads/"+into); err != nil {
		return "", fmt.Errorf("%w: no branch %q in %s", ErrWorktree, into, wt.Repo)
	}
	return into, nil
}

// MergeOptions are ctx agents merge's flags.
type MergeOptions struct {
	Into   string // "" for the branch it started from
	Squash bool   // one commit on Into, not the branch's history
}

// MergeResult says what a merge did.
type MergeResult struct {
	Agent  string `json:"agent"`
	Branch string `json:"branch"`
	Into   string `json:"into"`
	// How: "fast-forward", "merge" (a merge commit), "squash" (one new commit), or
	// "up-to-date" (nothing to merge).
	How     string `json:"how"`
	Commit  string `json:"commit"` // Into's head after the merge
	Commits int    `json:"commits"`
	Where   string `json:"checkout,omitempty"` // the checkout of Into that was updated
}

// Merge brings the agent's branch into the branch it started from (or o.Into): a
// fast-forward when it can, else a merge commit, or with Squash one commit. It is
// refused, with nothing changed, while the worktree has uncommitted changes, while the
// checkout of Into has any, and when the merge would conflict (the conflicting files
// named). The agent's worktree and branch stay.
func (a *Agents) Merge(rec *Record, o MergeOptions) (*MergeResult, error) {
	rv, err := a.review(rec, o.Into, false)
	if err != nil {
		return nil, err
	}
	wt := rec.Worktree
	res := &MergeResult{Agent: rec.ID, Branch: wt.Branch, Into: rv.Into, Commits: len(rv.Commits)}
	if left := rv.Uncommitted(); len(left) > 0 {
		return nil, &NotNowError{Msg: fmt.Sprintf("%d files are not committed in %s (%s): commit them, or ask the agent to, before merging",
			len(left), wt.Path, strings.Join(left[:min(5, len(left))], ", "))}
	}
	head := func(ref string) (string, error) {
		out, err := git(wt.Repo, nil, "rev-parse", "--verify", "-q", ref+"^{commit}")
		return strings.TrimSpace(out), err
	}
	intoHead, err := head("refs/heads/" + rv.Into)
	if err != nil {
		return nil, err
	}
	branchHead, err := head("refs/heads/" + wt.Branch)
	if err != nil {
		return nil, err
	}
	if len(rv.Commits) == 0 {
		res.How, res.Commit = "up-to-date", intoHead
		return res, nil
	}
	// Whether it merges cleanly, without touching any checkout: the tree it would make.
	out, code, err := gitAnswer(wt.Repo, "merge-tree", "--write-tree", "--name-only", "--no-messages", "refs/heads/"+rv.Into, "refs/heads/"+wt.Branch)
	if err != nil {
		return nil, err
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code == 1 {
		return nil, &MergeConflictError{Branch: wt.Branch, Into: rv.Into, Files: lines[1:]}
	} else if code != 0 || len(lines) == 0 {
		return nil, fmt.Errorf("git merge-tree %s %s: exit %d: %s", rv.Into, wt.Branch, code, out)
	}
	tree := lines[0]
	ff := rv.MergeBase == intoHead
	msg := mergeMessage(rec, rv, o.Squash)
	where, err := checkedOutAt(wt.Repo, rv.Into)
	if err != nil {
		return nil, err
	}
	res.Where = where
	switch {
	case ff && !o.Squash:
		res.How = "fast-forward"
	case o.Squash:
		res.How = "squash"
	default:
		res.How = "merge"
	}
	if res.How != "fast-forward" {
		// A commit is made: without an identity git would fail half-way.
		if _, err := git(wt.Repo, nil, "var", "GIT_COMMITTER_IDENT"); err != nil {
			return nil, fmt.Errorf("%w: git has no name and email for the %s commit here (git config --global user.name …, user.email …): %w", ErrWorktree, res.How, err)
		}
	}
	if where != "" {
		// Into is checked out: git's own merge there keeps its files in step.
		if out, err := git(where, nil, "status", "--porcelain", "--untracked-files=no"); err != nil || strings.TrimSpace(out) != "" {
			return nil, &NotNowError{Msg: fmt.Sprintf("%s is checked out at %s with uncommitted changes: commit or stash them before merging", rv.Into, where)}
		}
		switch res.How {
		case "fast-forward":
			_, err = git(where, nil, "merge", "--ff-only", "-q", "refs/heads/"+wt.Branch)
		case "squash":
			if _, err = git(where, nil, "merge", "--squash", "-q", "refs/heads/"+wt.Branch); err == nil {
				_, err = git(where, nil, "commit", "-q", "--no-verify", "-m", msg)
			}
		default:
			_, err = git(where, nil, "merge", "--no-ff", "--no-verify", "-q", "-m", msg, "refs/heads/"+wt.Branch)
		}
		if err != nil {
			// Back to the clean checkout it was: a merge in progress is aborted, a
			// squash left staged is unstaged and its files put back.
			if _, abortErr := git(where, nil, "merge", "--abort"); abortErr != nil {
				_, _ = git(where, nil, "reset", "-q", "--merge")
			}
			return nil, fmt.Errorf("merge into %s at %s: %w", rv.Into, where, err)
		}
	} else {
		// Into is checked out nowhere: its ref moves, from the head seen above only.
		next := branchHead
		if res.How != "fast-forward" {
			args := []string{"commit-tree", tree, "-p", intoHead}
			if res.How == "merge" {
				args = append(args, "-p", branchHead)
			}
			out, err := git(wt.Repo, nil, append(args, "-m", msg)...)
			if err != nil {
				return nil, err
			}
			next = strings.TrimSpace(out)
		}
		if _, err := git(wt.Repo, nil, "update-ref", "-m", "ctx agents merge "+rec.Name, "refs/heads/"+rv.Into, next, intoHead); err != nil {
			return nil, err
		}
	}
	if res.Commit, err = head("refs/heads/" + rv.Into); err != nil {
		return nil, err
	}
	a.Store.Feed(rec.ID, "agent.merged", map[string]any{"branch": wt.Branch, "into": rv.Into, "how": res.How, "commit": res.Commit})
	return res, nil
}

// mergeMessage names the agent and its branch; a squash lists the branch's commits.
func mergeMessage(rec *Record, rv *Review, squash bool) string {
	if !squash {
		return fmt.Sprintf("Merge agent %s (%s) into %s", rec.Name, rv.Branch, rv.Into)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Agent %s: %d commits of %s\n\n", rec.Name, len(rv.Commits), rv.Branch)
	for _, c := range rv.Commits {
		fmt.Fprintf(&b, "* %s\n", c.Subject)
	}
	return b.String()
}

// PatchLine says what a line of a patch is, for whoever colours it: "file" (a file's
// header), "hunk", "add", "del", or "" for context.
func PatchLine(line string) string {
	switch {
	case strings.HasPrefix(line, "diff --git"), strings.HasPrefix(line, "+++ "), strings.HasPrefix(line, "--- "):
		return "file"
	case strings.HasPrefix(line, "@@"):
		return "hunk"
	case strings.HasPrefix(line, "+"):
		return "add"
	case strings.HasPrefix(line, "-"):
		return "del"
	}
	return ""
}
