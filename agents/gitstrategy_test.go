package agents

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// gitRepo makes a repository with a.txt and b.txt committed on main, then the agent's
// work: a.txt changed and new.txt untracked.
func gitRepo(t *testing.T) (dir string, write func(name, text string)) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("git not installed; CI=true: a skipped real component is a failure")
		}
		t.Skip("git not installed")
	}
	for k, v := range map[string]string{"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"} {
		t.Setenv(k, v)
	}
	dir = t.TempDir()
	write = func(name, text string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	gitRun(t, dir, "init", "-q", "-b", "main")
	write("a.txt", "a\n")
	write("b.txt", "b\n")
	gitRun(t, dir, "add", "-A")
	gitRun(t, dir, "commit", "-qm", "base")
	write("a.txt", "a changed by the agent\n")
	write("new.txt", "the agent's new file\n")
	return dir, write
}

func read(t *testing.T, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		return "<" + err.Error() + ">"
	}
	return string(b)
}

// --git stash: the checkpoint first, then a named stash remembered by its id; the tree
// is clean while paused; what the person changes meanwhile is reported against the
// clean tree; resume applies the stash by id and drops it. A pause finished again after
// a crash finds the same stash.
func TestGitStashRoundTrip(t *testing.T) {
	dir, write := gitRepo(t)
	cp, err := TakeCheckpoint(dir, "a-test01", "20261123T120000Z")
	if err != nil {
		t.Fatal(err)
	}
	if err := cp.applyStrategy(GitStash, "a-test01", "expiry", "20261123T120000Z"); err != nil {
		t.Fatal(err)
	}
	if cp.Stash == "" || cp.Strategy != GitStash {
		t.Fatalf("no stash recorded: %+v", cp)
	}
	if st := gitRun(t, dir, "status", "--porcelain", "--untracked-files=all"); st != "" {
		t.Fatalf("the tree is not clean after the stash:\n%s", st)
	}
	if list := gitRun(t, dir, "stash", "list"); !strings.Contains(list, "ctx-pause a-test01 20261123T120000Z") {
		t.Fatalf("stash list: %s", list)
	}
	if got := gitRun(t, dir, "show", cp.Ref+":new.txt"); got != "the agent's new file\n" {
		t.Errorf("the checkpoint lacks the untracked file: %q", got)
	}
	again, err := TakeCheckpoint(dir, "a-test01", "20261123T120000Z")
	if err != nil {
		t.Fatal(err)
	}
	if err := again.applyStrategy(GitStash, "a-test01", "expiry", "20261123T120000Z"); err != nil || again.Stash != cp.Stash {
		t.Fatalf("a pause finished again made another stash: %v, %s vs %s", err, again.Stash, cp.Stash)
	}

	ch, err := cp.Compare()
	if err != nil || !ch.Unchanged {
		t.Fatalf("nothing changed while paused, but: %+v %v", ch, err)
	}
	write("b.txt", "b edited by the person\n")
	if ch, _ = cp.Compare(); len(ch.Files) != 1 || ch.Files[0] != "b.txt" || len(ch.Overlap) != 0 {
		t.Errorf("changed while paused: %+v", ch)
	}

	note, err := cp.undoStrategy(false)
	if err != nil || note != "" {
		t.Fatalf("undo: %q, %v", note, err)
	}
	if read(t, dir, "a.txt") != "a changed by the agent\n" || read(t, dir, "new.txt") != "the agent's new file\n" || read(t, dir, "b.txt") != "b edited by the person\n" {
		t.Errorf("after resume: a=%q new=%q b=%q", read(t, dir, "a.txt"), read(t, dir, "new.txt"), read(t, dir, "b.txt"))
	}
	if list := gitRun(t, dir, "stash", "list"); list != "" {
		t.Errorf("the stash was not dropped: %s", list)
	}
}

// A stash that conflicts with a commit made while paused stays, the tree goes back to
// how the person left it, and the agent stays paused (ConflictError); told to go on,
// the conflict is left in the files and named in the prompt.
func TestGitStashConflict(t *testing.T) {
	dir, write := gitRepo(t)
	cp, err := TakeCheckpoint(dir, "a-test02", "s1")
	if err != nil {
		t.Fatal(err)
	}
	if err := cp.applyStrategy(GitStash, "a-test02", "expiry", "s1"); err != nil {
		t.Fatal(err)
	}
	write("a.txt", "a changed by the person\n")
	gitRun(t, dir, "commit", "-qam", "person")

	_, err = cp.undoStrategy(false)
	var conflict *ConflictError
	if !errors.As(err, &conflict) || len(conflict.Files) != 1 || conflict.Files[0] != "a.txt" {
		t.Fatalf("want a conflict in a.txt, got %v", err)
	}
	if read(t, dir, "a.txt") != "a changed by the person\n" {
		t.Errorf("the refused resume left a.txt as %q", read(t, dir, "a.txt"))
	}
	if findStashByID(dir, cp.Stash) < 0 {
		t.Fatal("the stash was not kept")
	}
	note, err := cp.undoStrategy(true)
	if err != nil || !strings.Contains(note, "a.txt") {
		t.Fatalf("going on: %q, %v", note, err)
	}
	if !strings.Contains(read(t, dir, "a.txt"), "<<<<<<<") || findStashByID(dir, cp.Stash) < 0 {
		t.Errorf("going on: markers in a.txt and the stash kept; a.txt=%q", read(t, dir, "a.txt"))
	}
}

// --git commit: a WIP commit on top of HEAD, undone with reset --soft on resume when it
// is still HEAD, and left alone (with a note) when someone committed on top.
func TestGitCommitRoundTrip(t *testing.T) {
	dir, write := gitRepo(t)
	base := strings.TrimSpace(gitRun(t, dir, "rev-parse", "HEAD"))
	cp, err := TakeCheckpoint(dir, "a-test03", "s1")
	if err != nil {
		t.Fatal(err)
	}
	if err := cp.applyStrategy(GitCommit, "a-test03", "expiry", "s1"); err != nil {
		t.Fatal(err)
	}
	if subject := strings.TrimSpace(gitRun(t, dir, "log", "-1", "--format=%s")); subject != "ctx: pause expiry (WIP)" || cp.WIPCommit == "" {
		t.Fatalf("WIP commit: %q %+v", subject, cp)
	}
	if ch, err := cp.Compare(); err != nil || !ch.Unchanged {
		t.Fatalf("nothing changed while paused, but %+v %v", ch, err)
	}
	if _, err := cp.undoStrategy(false); err != nil {
		t.Fatal(err)
	}
	if head := strings.TrimSpace(gitRun(t, dir, "rev-parse", "HEAD")); head != base {
		t.Errorf("HEAD %s after resume, want %s", head, base)
	}
	if read(t, dir, "a.txt") != "a changed by the agent\n" || read(t, dir, "new.txt") != "the agent's new file\n" {
		t.Error("the agent's changes are not back in the tree")
	}

	cp2, _ := TakeCheckpoint(dir, "a-test03", "s2")
	if err := cp2.applyStrategy(GitCommit, "a-test03", "expiry", "s2"); err != nil {
		t.Fatal(err)
	}
	write("b.txt", "on top\n")
	gitRun(t, dir, "commit", "-qam", "person on top")
	note, err := cp2.undoStrategy(false)
	if err != nil || !strings.Contains(note, "no longer HEAD") {
		t.Errorf("with a commit on top: %q, %v", note, err)
	}
}

func TestCheckGitStrategy(t *testing.T) {
	for in, want := range map[string]string{"": GitKeep, "keep": GitKeep, "stash": GitStash, "commit": GitCommit} {
		if got, err := CheckGitStrategy(in); err != nil || got != want {
			t.Errorf("%q: %q, %v", in, got, err)
		}
	}
	if _, err := CheckGitStrategy("reset"); !errors.Is(err, ErrGitStrategy) {
		t.Errorf("reset: %v", err)
	}
}

// One classification of agent errors feeds both the CLI's exit codes and the API's
// status codes.
func TestKindOf(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want Kind
	}{
		{&NotNowError{Msg: "busy"}, KindNotNow},
		{fmt.Errorf("resume: %w", &ConflictError{Files: []string{"a"}}), KindNotNow},
		{&NotFoundError{Query: "x"}, KindNotFound},
		{&AmbiguousError{Query: "a"}, KindBadInput},
		{fmt.Errorf("%w: branch b is checked out at /x", ErrWorktree), KindBadInput},
		{errors.New("disk full"), KindFailure},
	} {
		if got := KindOf(tc.err); got != tc.want {
			t.Errorf("KindOf(%v) = %d, want %d", tc.err, got, tc.want)
		}
	}
}

// A file the person changed while paused is in the way of the stash: git refuses to
// apply it and names the file, and the agent stays paused with that file in the
// conflict. That holds under a person's own language too (git's message is read, so git
// must speak English to ctx whatever the locale): with LANGUAGE=de, git 2.39 says
// "würden durch den Merge überschrieben werden" to a terminal.
func TestGitStashInTheWayUnderAnotherLanguage(t *testing.T) {
	dir, write := gitRepo(t)
	cp, err := TakeCheckpoint(dir, "a-test04", "s1")
	if err != nil {
		t.Fatal(err)
	}
	if err := cp.applyStrategy(GitStash, "a-test04", "expiry", "s1"); err != nil {
		t.Fatal(err)
	}
	write("a.txt", "a changed by the person, not committed\n")

	// C.UTF-8 exists on every glibc system and, unlike C, lets LANGUAGE choose the
	// messages; de_DE.UTF-8 need not be generated.
	t.Setenv("LANGUAGE", "de")
	t.Setenv("LANG", "de_DE.UTF-8")
	t.Setenv("LC_ALL", "C.UTF-8")
	if probe, _ := exec.Command("git", "-C", t.TempDir(), "status").CombinedOutput(); strings.Contains(string(probe), "not a git repository") {
		t.Log("git has no German messages on this machine: the locale is not exercised here")
	}

	_, err = cp.undoStrategy(false)
	var conflict *ConflictError
	if !errors.As(err, &conflict) || fmt.Sprint(conflict.Files) != "[a.txt]" {
		t.Fatalf("want a.txt in the way, got %v", err)
	}
	if read(t, dir, "a.txt") != "a changed by the person, not committed\n" || findStashByID(dir, cp.Stash) < 0 {
		t.Errorf("the refused resume changed a.txt to %q or lost the stash", read(t, dir, "a.txt"))
	}
}
