package agents

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// --worktree on real git: a new branch in a worktree under .ctx/worktrees that the main
// checkout does not see; a branch checked out elsewhere is refused; a worktree removed
// by hand comes back from its branch; rm removes it only when it holds no work.
func TestWorktreeLifecycle(t *testing.T) {
	dir, _ := gitRepo(t)
	gitRun(t, dir, "add", "-A")
	gitRun(t, dir, "commit", "-qm", "the agent's start")
	head := strings.TrimSpace(gitRun(t, dir, "rev-parse", "HEAD"))

	wt, err := addWorktree(dir, "expiry", "ctx/expiry", "")
	if err != nil {
		t.Fatal(err)
	}
	if wt.Base != head || wt.Path != filepath.Join(dir, ".ctx", "worktrees", "expiry") {
		t.Fatalf("worktree %+v", wt)
	}
	if got := strings.TrimSpace(gitRun(t, wt.Path, "branch", "--show-current")); got != "ctx/expiry" {
		t.Errorf("the worktree is on %q", got)
	}
	if st := gitRun(t, dir, "status", "--porcelain", "--untracked-files=all"); st != "" {
		t.Errorf("the main checkout sees the worktree:\n%s", st)
	}
	if _, err := addWorktree(dir, "again", "ctx/expiry", ""); !errors.Is(err, ErrWorktree) || !strings.Contains(err.Error(), "checked out at") {
		t.Errorf("a branch checked out elsewhere: %v", err)
	}
	if _, err := addWorktree(dir, "bad", "no..dots", ""); !errors.Is(err, ErrWorktree) {
		t.Errorf("a bad branch name: %v", err)
	}
	if _, err := addWorktree(t.TempDir(), "x", "b", ""); !errors.Is(err, ErrWorktree) {
		t.Errorf("outside git: %v", err)
	}

	// Removed by hand while paused: resume adds it again from the branch.
	if err := os.RemoveAll(wt.Path); err != nil {
		t.Fatal(err)
	}
	if readded, err := wt.ensure(); err != nil || !readded {
		t.Fatalf("ensure: %v, %v", readded, err)
	}
	if _, err := os.Stat(filepath.Join(wt.Path, "a.txt")); err != nil {
		t.Errorf("the re-added worktree lacks the branch's files: %v", err)
	}

	// Work in it keeps it; clean, it goes.
	if err := os.WriteFile(filepath.Join(wt.Path, "work.txt"), []byte("w\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := wt.remove(); !errors.Is(err, ErrWorktree) {
		t.Fatalf("a worktree with work was removed: %v", err)
	}
	if _, err := os.Stat(filepath.Join(wt.Path, "work.txt")); err != nil {
		t.Fatalf("the work is gone: %v", err)
	}
	if err := os.Remove(filepath.Join(wt.Path, "work.txt")); err != nil {
		t.Fatal(err)
	}
	if err := wt.remove(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(wt.Path); !os.IsNotExist(err) {
		t.Errorf("the clean worktree stayed: %v", err)
	}
	// The branch, with its commits, stays.
	if got := strings.TrimSpace(gitRun(t, dir, "rev-parse", "ctx/expiry")); got != head {
		t.Errorf("branch ctx/expiry at %s, want %s", got, head)
	}
}
