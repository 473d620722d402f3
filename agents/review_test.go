package agents

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ctxtools/ctx/internal/claude"
)

// reviewSetup is a repository on main with an agent's worktree on ctx/feature, made
// from main as ctx agents start --worktree makes it.
func reviewSetup(t *testing.T) (a *Agents, rec *Record, repo string) {
	t.Helper()
	repo, _ = gitRepo(t)
	gitRun(t, repo, "add", "-A")
	gitRun(t, repo, "commit", "-qm", "start")
	wt, err := addWorktree(repo, "feature", "ctx/feature", "")
	if err != nil {
		t.Fatal(err)
	}
	if wt.FromBranch != "main" {
		t.Fatalf("the worktree started from %q, want main", wt.FromBranch)
	}
	a = &Agents{Store: newStore(t)}
	rec = &Record{ID: "a-rev01", Name: "reviewer", Cwd: wt.Path, Worktree: wt}
	return a, rec, repo
}

func write(t *testing.T, dir, name, text string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func rev(t *testing.T, dir, ref string) string {
	t.Helper()
	return strings.TrimSpace(gitRun(t, dir, "rev-parse", ref))
}

// The review: committed and uncommitted changes against the branch it started from,
// each file marked; the patch holds them all, an untracked file as new.
func TestReviewShowsCommittedAndUncommitted(t *testing.T) {
	a, rec, _ := reviewSetup(t)
	wt := rec.Worktree.Path
	write(t, wt, "a.txt", "a, committed by the agent\n")
	gitRun(t, wt, "commit", "-qam", "change a")
	write(t, wt, "b.txt", "b, not committed\n")
	write(t, wt, "c.txt", "c, untracked\n")
	rv, err := a.Review(rec, "")
	if err != nil {
		t.Fatal(err)
	}
	if rv.Into != "main" || len(rv.Commits) != 1 || rv.Commits[0].Subject != "change a" {
		t.Errorf("review: into %q, commits %+v", rv.Into, rv.Commits)
	}
	want := map[string]FileChange{
		"a.txt": {Path: "a.txt", Status: "modified", Committed: true},
		"b.txt": {Path: "b.txt", Status: "modified", Uncommitted: true},
		"c.txt": {Path: "c.txt", Status: "added", Uncommitted: true},
	}
	if len(rv.Files) != len(want) {
		t.Errorf("files %+v", rv.Files)
	}
	for _, f := range rv.Files {
		if want[f.Path] != f {
			t.Errorf("file %+v, want %+v", f, want[f.Path])
		}
	}
	for _, s := range []string{"+a, committed by the agent", "+b, not committed", "+c, untracked", "new file mode"} {
		if !strings.Contains(rv.Patch, s) {
			t.Errorf("the patch lacks %q:\n%s", s, rv.Patch)
		}
	}
	// Not on a worktree of its own: bad input.
	if _, err := a.Review(&Record{Name: "plain", Cwd: "/x"}, ""); !errors.Is(err, ErrNoWorktree) || KindOf(err) != KindBadInput {
		t.Errorf("an agent without a worktree: %v", err)
	}
	if _, err := a.Review(rec, "no-such-branch"); KindOf(err) != KindBadInput {
		t.Errorf("--into an unknown branch: %v", err)
	}
}

// Merge, checked by git itself: refused while anything is uncommitted; a fast-forward
// of the checked-out main; a merge commit after main moved; a squash; a conflict that
// changes nothing and names the file; a branch checked out nowhere moved by its ref;
// a dirty checkout of main refused. The worktree always stays.
func TestMerge(t *testing.T) {
	a, rec, repo := reviewSetup(t)
	wt := rec.Worktree.Path
	write(t, wt, "a.txt", "a, by the agent\n")
	if _, err := a.Merge(rec, MergeOptions{}); KindOf(err) != KindNotNow || !strings.Contains(err.Error(), "a.txt") {
		t.Fatalf("uncommitted work: %v", err)
	}
	gitRun(t, wt, "commit", "-qam", "agent: a")
	res, err := a.Merge(rec, MergeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.How != "fast-forward" || rev(t, repo, "main") != rev(t, repo, "ctx/feature") || res.Where != repo {
		t.Errorf("fast-forward: %+v", res)
	}
	if b, _ := os.ReadFile(filepath.Join(repo, "a.txt")); string(b) != "a, by the agent\n" {
		t.Errorf("main's checkout was not updated: %q", b)
	}
	if res, err := a.Merge(rec, MergeOptions{}); err != nil || res.How != "up-to-date" {
		t.Errorf("merged again: %+v %v", res, err)
	}

	// Both sides move: a merge commit with two parents.
	write(t, repo, "b.txt", "b, by the person\n")
	gitRun(t, repo, "commit", "-qam", "person: b")
	write(t, wt, "new.txt", "the agent's second file\n")
	gitRun(t, wt, "add", "new.txt")
	gitRun(t, wt, "commit", "-qm", "agent: new")
	if res, err = a.Merge(rec, MergeOptions{}); err != nil || res.How != "merge" {
		t.Fatalf("merge: %+v %v", res, err)
	}
	if parents := strings.Fields(gitRun(t, repo, "log", "-1", "--format=%P", "main")); len(parents) != 2 {
		t.Errorf("the merge commit has parents %v", parents)
	}
	if _, err := os.Stat(filepath.Join(repo, "new.txt")); err != nil {
		t.Errorf("main lacks the agent's file: %v", err)
	}

	// Squash: one commit, one parent, the agent's change in it.
	write(t, wt, "c.txt", "c\n")
	gitRun(t, wt, "add", "c.txt")
	gitRun(t, wt, "commit", "-qm", "agent: c")
	before := rev(t, repo, "main")
	if res, err = a.Merge(rec, MergeOptions{Squash: true}); err != nil || res.How != "squash" {
		t.Fatalf("squash: %+v %v", res, err)
	}
	if parents := strings.Fields(gitRun(t, repo, "log", "-1", "--format=%P", "main")); len(parents) != 1 || parents[0] != before {
		t.Errorf("the squash commit has parents %v, want [%s]", parents, before)
	}
	if msg := gitRun(t, repo, "log", "-1", "--format=%B", "main"); !strings.Contains(msg, "agent: c") {
		t.Errorf("the squash message: %q", msg)
	}

	// A conflict: nothing changes, the file is named.
	write(t, repo, "a.txt", "a, the person's version\n")
	gitRun(t, repo, "commit", "-qam", "person: a")
	write(t, wt, "a.txt", "a, the agent's other version\n")
	gitRun(t, wt, "commit", "-qam", "agent: a again")
	before = rev(t, repo, "main")
	var conflict *MergeConflictError
	if _, err = a.Merge(rec, MergeOptions{}); !errors.As(err, &conflict) || len(conflict.Files) != 1 || conflict.Files[0] != "a.txt" {
		t.Fatalf("a conflict: %v", err)
	}
	if rev(t, repo, "main") != before || gitRun(t, repo, "status", "--porcelain") != "" {
		t.Errorf("a refused merge changed main or its checkout:\n%s", gitRun(t, repo, "status", "--porcelain"))
	}
	if _, err := os.Stat(filepath.Join(repo, ".git", "MERGE_HEAD")); err == nil {
		t.Error("a merge was left in progress")
	}

	// Into a branch checked out nowhere: its ref moves, nothing else.
	gitRun(t, repo, "branch", "release", before)
	gitRun(t, wt, "reset", "-q", "--hard", "main")
	write(t, wt, "d.txt", "d\n")
	gitRun(t, wt, "add", "d.txt")
	gitRun(t, wt, "commit", "-qm", "agent: d")
	gitRun(t, repo, "commit", "-q", "--allow-empty", "-m", "main moves on")
	res, err = a.Merge(rec, MergeOptions{Into: "release"})
	if err != nil || res.How != "fast-forward" || res.Where != "" || rev(t, repo, "release") != rev(t, repo, "ctx/feature") {
		t.Errorf("into release: %+v %v", res, err)
	}

	// A dirty checkout of the branch merged into: refused, untouched.
	write(t, wt, "e.txt", "e\n")
	gitRun(t, wt, "add", "e.txt")
	gitRun(t, wt, "commit", "-qm", "agent: e")
	write(t, repo, "b.txt", "b, being edited\n")
	if _, err = a.Merge(rec, MergeOptions{}); KindOf(err) != KindNotNow || !strings.Contains(err.Error(), "uncommitted") {
		t.Errorf("a dirty main: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(repo, "b.txt")); string(b) != "b, being edited\n" {
		t.Errorf("the person's edit was touched: %q", b)
	}
	if _, err := os.Stat(wt); err != nil {
		t.Errorf("the worktree went: %v", err)
	}
}

// What an agent spent: each session of its chain and their subagents' transcripts,
// today's part by the local date; a session named twice counts once.
func TestSpentReadsTheWholeChain(t *testing.T) {
	cfg := t.TempDir()
	cwd := t.TempDir()
	a := &Agents{Getenv: func(k string) string {
		if k == claude.EnvConfigDir {
			return cfg
		}
		return ""
	}}
	now := time.Date(2026, 11, 26, 15, 0, 0, 0, time.Local)
	line := func(id string, at time.Time, in, out int64) string {
		return fmt.Sprintf(`{"type":"assistant","requestId":"r-%s","timestamp":%q,"message":{"id":%q,"usage":{"input_tokens":%d,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":%d}}}`+"\n",
			id, at.UTC().Format(time.RFC3339), id, in, out)
	}
	put := func(path, text string) {
		t.Helper()
		_ = os.MkdirAll(filepath.Dir(path), 0o755)
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	first := claude.TranscriptPath(cfg, cwd, "s-1")
	put(first, line("m1", now.AddDate(0, 0, -1), 100, 10))
	put(strings.TrimSuffix(first, ".jsonl")+"/subagents/agent-x.jsonl", line("m2", now.AddDate(0, 0, -1), 7, 1))
	put(claude.TranscriptPath(cfg, cwd, "s-2"), line("m3", now, 50, 5))
	rec := &Record{Cwd: cwd, Claude: Claude{SessionID: "s-2", PreviousSessionIDs: []string{"s-1"}},
		Chain: []Link{{SessionID: "s-1"}, {SessionID: "s-2"}}}
	got := a.Spent(rec, now)
	if got.All.Input != 157 || got.All.Output != 16 || got.Today.Input != 50 || got.Today.Output != 5 {
		t.Errorf("spent %+v", got)
	}
}

// Without a git identity, a merge that makes a commit is refused before anything is
// touched; a fast-forward needs none.
func TestMergeWithoutIdentity(t *testing.T) {
	a, rec, repo := reviewSetup(t)
	wt := rec.Worktree.Path
	write(t, wt, "a.txt", "a, by the agent\n")
	gitRun(t, wt, "commit", "-qam", "agent: a")
	home := t.TempDir()
	for _, k := range []string{"GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "EMAIL"} {
		t.Setenv(k, "")
		_ = os.Unsetenv(k)
	}
	t.Setenv("HOME", home)
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	t.Setenv("XDG_CONFIG_HOME", home)
	before := rev(t, repo, "main")
	if _, err := a.Merge(rec, MergeOptions{Squash: true}); err == nil || !strings.Contains(err.Error(), "user.name") {
		t.Fatalf("a squash without an identity: %v", err)
	}
	if rev(t, repo, "main") != before {
		t.Error("main moved")
	}
	if st := strings.TrimSpace(gitRun(t, repo, "status", "--porcelain")); st != "" {
		t.Errorf("the checkout was touched:\n%s", st)
	}
	if res, err := a.Merge(rec, MergeOptions{}); err != nil || res.How != "fast-forward" {
		t.Errorf("a fast-forward without an identity: %+v %v", res, err)
	}
}

// The branch merged into is being rebased: git lists its worktree as detached, but the
// rebase will move the branch when it ends. The merge is refused, and nothing moves.
func TestMergeRefusedDuringARebase(t *testing.T) {
	a, rec, repo := reviewSetup(t)
	write(t, rec.Worktree.Path, "a.txt", "a, by the agent\n")
	gitRun(t, rec.Worktree.Path, "commit", "-qam", "agent: a")
	before := rev(t, repo, "main")
	gitRun(t, repo, "checkout", "-q", "--detach")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(repo, ".git", "rebase-merge"), 0o755))
	must(os.WriteFile(filepath.Join(repo, ".git", "rebase-merge", "head-name"), []byte("refs/heads/main\n"), 0o644))
	if _, err := a.Merge(rec, MergeOptions{}); KindOf(err) != KindNotNow || !strings.Contains(err.Error(), "rebased") {
		t.Errorf("a merge into a branch being rebased: %v", err)
	}
	if rev(t, repo, "main") != before {
		t.Error("main moved under its rebase")
	}
}

// A merge that fails after git began it (here a commit git cannot sign) puts the
// person's checkout back as it was: nothing staged, no merge in progress, the branch
// where it was.
func TestFailedMergeLeavesTheCheckoutAsItWas(t *testing.T) {
	for _, squash := range []bool{false, true} {
		a, rec, repo := reviewSetup(t)
		write(t, rec.Worktree.Path, "new.txt", "the agent's file\n")
		gitRun(t, rec.Worktree.Path, "add", "new.txt")
		gitRun(t, rec.Worktree.Path, "commit", "-qm", "agent: new")
		write(t, repo, "b.txt", "b, by the person\n")
		gitRun(t, repo, "commit", "-qam", "person: b") // no fast-forward: a commit is made
		gitRun(t, repo, "config", "commit.gpgsign", "true")
		gitRun(t, repo, "config", "gpg.program", "false")
		before := rev(t, repo, "main")
		if _, err := a.Merge(rec, MergeOptions{Squash: squash}); err == nil {
			t.Fatalf("squash=%v: a merge whose commit cannot be made succeeded", squash)
		}
		if rev(t, repo, "main") != before {
			t.Errorf("squash=%v: main moved", squash)
		}
		if st := strings.TrimSpace(gitRun(t, repo, "status", "--porcelain")); st != "" {
			t.Errorf("squash=%v: the checkout was left changed:\n%s", squash, st)
		}
		if _, err := os.Stat(filepath.Join(repo, ".git", "MERGE_HEAD")); err == nil {
			t.Errorf("squash=%v: a merge was left in progress", squash)
		}
	}
}
