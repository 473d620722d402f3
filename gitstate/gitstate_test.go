package gitstate

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// isolate keeps the machine's git configuration and any repository above the test's
// folders out of the test, for the git runs of the test and of Read alike.
func isolate(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	root := t.TempDir()
	t.Setenv("GIT_CONFIG_GLOBAL", os.DevNull)
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	t.Setenv("GIT_CEILING_DIRECTORIES", root)
	for _, name := range []string{"GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"} {
		t.Setenv(name, "")
		os.Unsetenv(name)
	}
	return root
}

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.email=t@example.com", "-c", "user.name=t"}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

func newRepo(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(isolate(t), "repo")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	git(t, dir, "init", "-q", "-b", "main")
	return dir
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, dir string) *State {
	t.Helper()
	st, err := Read(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if st == nil {
		t.Fatal("got no state for a repository")
	}
	return st
}

func TestReadOutsideRepository(t *testing.T) {
	dir := isolate(t)
	st, err := Read(context.Background(), dir)
	if st != nil || err != nil {
		t.Fatalf("got %+v, %v; want nil, nil", st, err)
	}
}

func TestReadInsideGitFolder(t *testing.T) {
	dir := newRepo(t)
	st, err := Read(context.Background(), filepath.Join(dir, ".git"))
	if st != nil || err != nil {
		t.Fatalf("got %+v, %v; want nil, nil", st, err)
	}
}

func TestReadWithoutGit(t *testing.T) {
	dir := newRepo(t)
	t.Setenv("PATH", t.TempDir())
	st, err := Read(context.Background(), dir)
	if st != nil || err != nil {
		t.Fatalf("got %+v, %v; want nil, nil", st, err)
	}
}

func TestReadMissingFolderFails(t *testing.T) {
	dir := isolate(t)
	if _, err := Read(context.Background(), filepath.Join(dir, "nope")); err == nil {
		t.Fatal("want an error for a folder that does not exist")
	}
}

func TestReadBeforeFirstCommit(t *testing.T) {
	dir := newRepo(t)
	st := read(t, dir)
	want := &State{Branch: "main", Head: "", Dirty: []string{}, Root: dir}
	if !reflect.DeepEqual(st, want) {
		t.Fatalf("got %+v, want %+v", st, want)
	}
	if st.Dirty == nil {
		t.Error("Dirty is nil, want an empty list")
	}

	write(t, filepath.Join(dir, "first.md"), "x\n")
	git(t, dir, "add", "first.md")
	write(t, filepath.Join(dir, "notes.md"), "y\n")
	st = read(t, dir)
	if st.Head != "" || st.Branch != "main" {
		t.Errorf("branch %q head %q, want main and no head", st.Branch, st.Head)
	}
	if want := []string{"first.md", "notes.md"}; !slices.Equal(st.Dirty, want) {
		t.Errorf("dirty %q, want %q", st.Dirty, want)
	}
}

func TestReadAfterCommit(t *testing.T) {
	dir := newRepo(t)
	write(t, filepath.Join(dir, "a.md"), "a\n")
	write(t, filepath.Join(dir, "old name.md"), "old\n")
	write(t, filepath.Join(dir, "docs", "plan.md"), "plan\n")
	git(t, dir, "add", ".")
	git(t, dir, "commit", "-q", "-m", "first")
	head := git(t, dir, "rev-parse", "HEAD")

	write(t, filepath.Join(dir, "a.md"), "a changed\n")
	write(t, filepath.Join(dir, "new file.txt"), "untracked\n")
	write(t, filepath.Join(dir, "docs", "with space.md"), "untracked too\n")
	git(t, dir, "mv", "old name.md", "docs/renamed file.md")

	want := &State{
		Branch: "main",
		Head:   head,
		Dirty:  []string{"a.md", "docs/renamed file.md", "docs/with space.md", "new file.txt"},
		Root:   dir,
	}
	// From a subfolder too: paths stay relative to the repository root.
	for _, from := range []string{dir, filepath.Join(dir, "docs")} {
		if st := read(t, from); !reflect.DeepEqual(st, want) {
			t.Errorf("from %s: got %+v, want %+v", from, st, want)
		}
	}
}

func TestReadDetachedHead(t *testing.T) {
	dir := newRepo(t)
	write(t, filepath.Join(dir, "a.md"), "a\n")
	git(t, dir, "add", ".")
	git(t, dir, "commit", "-q", "-m", "first")
	head := git(t, dir, "rev-parse", "HEAD")
	git(t, dir, "checkout", "-q", "--detach")

	st := read(t, dir)
	want := &State{Branch: "", Head: head, Dirty: []string{}, Root: dir}
	if !reflect.DeepEqual(st, want) {
		t.Fatalf("got %+v, want %+v", st, want)
	}
}

// Root keeps the caller's spelling of the path through a symlink above the repository,
// and falls back to git's when the symlink leads into the middle of one.
func TestReadRootThroughSymlinks(t *testing.T) {
	dir := newRepo(t)
	write(t, filepath.Join(dir, "docs", "a.md"), "a\n")
	base := filepath.Dir(dir)
	above := filepath.Join(base, "link-to-repo")
	inside := filepath.Join(base, "link-to-docs")
	if err := os.Symlink(dir, above); err != nil {
		t.Skip("no symlinks here:", err)
	}
	if err := os.Symlink(filepath.Join(dir, "docs"), inside); err != nil {
		t.Fatal(err)
	}
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct{ from, root string }{
		{filepath.Join(above, "docs"), above},
		{inside, real},
	}
	for _, tt := range tests {
		if st := read(t, tt.from); st.Root != tt.root {
			t.Errorf("from %s: root %q, want %q", tt.from, st.Root, tt.root)
		}
	}
}

// A git hook that runs ctx passes GIT_DIR (often relative); Read must still look at the
// repository holding dir.
func TestReadIgnoresInheritedGitDir(t *testing.T) {
	dir := newRepo(t)
	other := filepath.Join(filepath.Dir(dir), "other")
	git(t, filepath.Dir(dir), "init", "-q", "-b", "elsewhere", other)
	t.Setenv("GIT_DIR", filepath.Join(other, ".git"))

	if st := read(t, dir); st.Branch != "main" {
		t.Errorf("branch %q, want main: GIT_DIR leaked into Read", st.Branch)
	}
}

// With optional locks on, git status refreshes the index and rewrites it when a tracked
// file's stat data changed; Read must leave the index alone.
func TestReadDoesNotRewriteIndex(t *testing.T) {
	dir := newRepo(t)
	file := filepath.Join(dir, "a.md")
	write(t, file, "a\n")
	git(t, dir, "add", ".")
	git(t, dir, "commit", "-q", "-m", "first")
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(file, later, later); err != nil {
		t.Fatal(err)
	}
	index := filepath.Join(dir, ".git", "index")
	before, err := os.ReadFile(index)
	if err != nil {
		t.Fatal(err)
	}

	read(t, dir)
	after, _ := os.ReadFile(index)
	if string(after) != string(before) {
		t.Fatal("Read rewrote the index")
	}

	// The same run with locks allowed does rewrite it, so the check above can fail.
	git(t, dir, "status", "--porcelain")
	if after, _ := os.ReadFile(index); string(after) == string(before) {
		t.Skip("this git does not refresh the index on status; the check proves nothing here")
	}
}

func TestReadTimesOutWithCallerContext(t *testing.T) {
	dir := newRepo(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Read(ctx, dir); err == nil {
		t.Fatal("want an error from a cancelled context")
	}
}

func TestParseStatus(t *testing.T) {
	tests := []struct {
		name string
		out  string
		want *State
	}{
		{
			name: "unmerged and ignored",
			out: "# branch.oid 0123\x00# branch.head feature/x\x00# branch.upstream origin/x\x00# branch.ab +1 -0\x00" +
				"u UU N... 100644 100644 100644 100644 a b c both changed.go\x00! build/\x00",
			want: &State{Branch: "feature/x", Head: "0123", Dirty: []string{"both changed.go", "build/"}},
		},
		{
			name: "rename keeps the new path only",
			out:  "# branch.oid (initial)\x00# branch.head main\x002 R. N... 100644 100644 100644 a a R100 new dir/x y\x00old dir/x y\x00",
			want: &State{Branch: "main", Dirty: []string{"new dir/x y"}},
		},
		{
			name: "empty",
			out:  "",
			want: &State{Dirty: []string{}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseStatus([]byte(tt.out))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestParseStatusRejectsGarbage(t *testing.T) {
	for _, out := range []string{"hello\x00", "1 .M N...\x00"} {
		if _, err := parseStatus([]byte(out)); err == nil {
			t.Errorf("%q: want an error", out)
		}
	}
}

func FuzzParseStatus(f *testing.F) {
	f.Add([]byte("# branch.oid (initial)\x00# branch.head main\x00? a b\x00"))
	f.Add([]byte("2 R. N... 100644 100644 100644 a a R100 new\x00old\x00"))
	f.Fuzz(func(t *testing.T, out []byte) {
		st, err := parseStatus(out)
		if err != nil {
			return
		}
		if st.Dirty == nil || !slices.IsSorted(st.Dirty) {
			t.Fatalf("dirty %q: want a sorted, non-nil list", st.Dirty)
		}
	})
}

// Run is every git run of ctx: whatever the person's language and whatever a git hook
// set, git speaks English and works on the repository holding dir, and the caller's
// own variables come through. The environment is read back through an alias.
func TestRunEnvironment(t *testing.T) {
	dir := newRepo(t)
	t.Setenv("LANGUAGE", "de")
	t.Setenv("LANG", "de_DE.UTF-8")
	t.Setenv("LC_ALL", "C.UTF-8")
	t.Setenv("GIT_INDEX_FILE", filepath.Join(dir, "elsewhere"))

	out, err := Run(context.Background(), dir, []string{"CTX_TEST_EXTRA=1"}, "-c", "alias.showenv=!env", "showenv")
	if err != nil {
		t.Fatal(err)
	}
	env := strings.Split(string(out), "\n")
	for _, want := range []string{"LC_ALL=C", "CTX_TEST_EXTRA=1"} {
		if !slices.Contains(env, want) {
			t.Errorf("git's environment lacks %s", want)
		}
	}
	for _, kv := range env {
		if strings.HasPrefix(kv, "LANGUAGE=") || strings.HasPrefix(kv, "GIT_INDEX_FILE=") {
			t.Errorf("git's environment holds %s", kv)
		}
	}

	_, err = Run(context.Background(), dir, nil, "rev-parse", "--verify", "nope^{commit}")
	var ge *Error
	if !errors.As(err, &ge) || !strings.Contains(ge.Stderr, "fatal: Needed a single revision") ||
		err.Error() != "git rev-parse in "+dir+": Needed a single revision: exit status 128" {
		t.Errorf("got %v, want git's English stderr in a *gitstate.Error", err)
	}
}

// UniqueCommits, against a real repository: a branch with a commit of its own holds
// work nothing else has; once merged, tagged, or the same as another branch, it does
// not; a branch that is not there counts as unique (the guard errs towards keeping).
func TestUniqueCommits(t *testing.T) {
	dir := newRepo(t)
	write(t, filepath.Join(dir, "a.md"), "a\n")
	git(t, dir, "add", "a.md")
	git(t, dir, "commit", "-qm", "a")
	git(t, dir, "branch", "same")
	if UniqueCommits(dir, "same") {
		t.Error("a branch at main's commit holds nothing of its own")
	}
	git(t, dir, "checkout", "-qb", "spike")
	write(t, filepath.Join(dir, "b.md"), "b\n")
	git(t, dir, "add", "b.md")
	git(t, dir, "commit", "-qm", "b")
	git(t, dir, "checkout", "-q", "main")
	if !UniqueCommits(dir, "spike") {
		t.Error("a branch with a commit of its own was not unique")
	}
	git(t, dir, "tag", "kept", "spike")
	if UniqueCommits(dir, "spike") {
		t.Error("a tagged branch was unique")
	}
	git(t, dir, "tag", "-d", "kept")
	git(t, dir, "merge", "-q", "--ff-only", "spike")
	if UniqueCommits(dir, "spike") {
		t.Error("a merged branch was unique")
	}
	if !UniqueCommits(dir, "no-such-branch") {
		t.Error("a branch that is not there counts as unique")
	}
}
