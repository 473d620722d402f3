package agents

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/ctxtools/ctx/internal/durable"
)

// Worktrees (`ctx agents start --worktree BRANCH`): an agent may work on a branch of
// its own, in a git worktree ctx adds under <repo>/.ctx/worktrees/<name>. Inside the
// repository, Claude Code's trust of the repository covers it; a .gitignore of `*` keeps
// the folder out of the main checkout's status. Resume adds the worktree again when it
// was removed while the agent was paused; `ctx agents rm` keeps it (with the agent's
// work) unless --remove-worktree, and then only when it is clean.

// Worktree is the git worktree an agent runs in.
type Worktree struct {
	Repo   string `json:"repo"`
	Path   string `json:"path"`
	Branch string `json:"branch"`
	Base   string `json:"base"` // the commit the branch was made from ("" for an existing branch)
	// FromBranch is the branch it started from, which ctx agents diff compares with and
	// merge merges into: --from's when that names a branch, else the one checked out
	// where the agent was started.
	FromBranch   string `json:"from_branch,omitempty"`
	CreatedByCtx bool   `json:"created_by_ctx"`
}

// ErrWorktree marks a worktree request that cannot be carried out as asked (bad input).
var ErrWorktree = errors.New("worktree")

// addWorktree makes the worktree for an agent named name, on branch (created from
// from, or HEAD, when it does not exist), in the repository holding dir.
func addWorktree(dir, name, branch, from string) (*Worktree, error) {
	repo := repoRoot(dir)
	if repo == "" {
		return nil, fmt.Errorf("%w: --worktree %s: %s is not in a git repository", ErrWorktree, branch, dir)
	}
	if _, err := git(repo, nil, "check-ref-format", "--branch", branch); err != nil {
		return nil, fmt.Errorf("%w: --worktree %q is not a valid branch name", ErrWorktree, branch)
	}
	if at, err := checkedOutAt(repo, branch); err != nil {
		return nil, err
	} else if at != "" {
		return nil, fmt.Errorf("%w: branch %s is checked out at %s; a branch can be checked out in one place only", ErrWorktree, branch, at)
	}
	folder := filepath.Join(repo, ".ctx", "worktrees")
	if err := durable.MkdirAll(folder, 0o755); err != nil {
		return nil, err
	}
	if _, err := durable.CreateExclusive(filepath.Join(folder, ".gitignore"), []byte("# ctx: agents' worktrees\n*\n"), 0o644); err != nil {
		return nil, err
	}
	wt := &Worktree{Repo: repo, Path: filepath.Join(folder, name), Branch: branch, CreatedByCtx: true}
	if from != "" {
		if _, err := git(repo, nil, "rev-parse", "--verify", "-q", "refs/heads/"+from); err == nil {
			wt.FromBranch = from
		}
	} else if out, err := git(dir, nil, "symbolic-ref", "-q", "--short", "HEAD"); err == nil {
		wt.FromBranch = strings.TrimSpace(out)
	}
	if _, err := os.Stat(wt.Path); err == nil {
		return nil, fmt.Errorf("%w: %s exists already", ErrWorktree, wt.Path)
	}
	if _, err := git(repo, nil, "rev-parse", "--verify", "-q", "refs/heads/"+branch); err == nil {
		_, err = git(repo, nil, "worktree", "add", "-q", wt.Path, branch)
		return wt, err
	}
	base := from
	if base == "" {
		base = "HEAD"
	}
	out, err := git(repo, nil, "rev-parse", "--verify", "-q", base+"^{commit}")
	if err != nil {
		return nil, fmt.Errorf("%w: --from %s: no such commit", ErrWorktree, base)
	}
	wt.Base = strings.TrimSpace(out)
	if _, err := git(repo, nil, "worktree", "add", "-q", "-b", branch, wt.Path, wt.Base); err != nil {
		return nil, err
	}
	return wt, nil
}

// checkedOutAt returns where branch is checked out in the repository's worktrees, or "".
func checkedOutAt(repo, branch string) (string, error) {
	out, err := git(repo, nil, "worktree", "list", "--porcelain")
	if err != nil {
		return "", err
	}
	path := ""
	for _, line := range strings.Split(out, "\n") {
		if p, ok := strings.CutPrefix(line, "worktree "); ok {
			path = p
		}
		if line == "branch refs/heads/"+branch {
			return path, nil
		}
	}
	// A worktree in the middle of a rebase shows as detached, and the branch is still
	// its own: the rebase moves it when it ends.
	common, err := git(repo, nil, "rev-parse", "--path-format=absolute", "--git-common-dir")
	if err != nil {
		return "", err
	}
	common = strings.TrimSpace(common)
	linked, _ := filepath.Glob(filepath.Join(common, "worktrees", "*"))
	for _, dir := range append([]string{common}, linked...) {
		for _, state := range []string{"rebase-merge", "rebase-apply"} {
			if b, err := os.ReadFile(filepath.Join(dir, state, "head-name")); err == nil && strings.TrimSpace(string(b)) == "refs/heads/"+branch {
				return "", &NotNowError{Msg: fmt.Sprintf("branch %s is being rebased (%s): finish or abort the rebase first", branch, filepath.Join(dir, state))}
			}
		}
	}
	return "", nil
}

// ensure adds the worktree again when it is gone (removed by hand while the agent was
// paused), from its branch.
func (w *Worktree) ensure() (readded bool, err error) {
	if fi, err := os.Stat(w.Path); err == nil && fi.IsDir() {
		return false, nil
	}
	_, _ = git(w.Repo, nil, "worktree", "prune")
	if at, err := checkedOutAt(w.Repo, w.Branch); err != nil {
		return false, err
	} else if at != "" {
		return false, fmt.Errorf("%w: the worktree %s is gone and its branch %s is checked out at %s", ErrWorktree, w.Path, w.Branch, at)
	}
	if _, err := git(w.Repo, nil, "worktree", "add", "-q", w.Path, w.Branch); err != nil {
		return false, fmt.Errorf("add the worktree again: %w", err)
	}
	return true, nil
}

// remove deletes a worktree ctx made, only when it holds no work (clean); otherwise it
// says why it stays.
func (w *Worktree) remove() error {
	if !w.CreatedByCtx {
		return nil
	}
	if _, err := os.Stat(w.Path); err != nil {
		_, _ = git(w.Repo, nil, "worktree", "prune")
		return nil
	}
	out, err := git(w.Path, nil, "status", "--porcelain", "--untracked-files=all")
	if err != nil {
		return err
	}
	if strings.TrimSpace(out) != "" {
		return fmt.Errorf("%w: %s has uncommitted work; it stays (commit or remove it, then `git worktree remove`)", ErrWorktree, w.Path)
	}
	_, err = git(w.Repo, nil, "worktree", "remove", w.Path)
	return err
}
