// Package gitstate reads what a save records of the workspace's git repository: the
// branch, the commit and the files with uncommitted changes.
package gitstate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Timeout bounds one Read: a save must not hang on a slow or wedged repository.
const Timeout = 2 * time.Second

// State is what a save records of the workspace's git repository.
type State struct {
	Branch string   `json:"branch" yaml:"branch"` // "" on a detached HEAD
	Head   string   `json:"head" yaml:"head"`     // full commit hash, "" before the first commit
	Dirty  []string `json:"dirty" yaml:"dirty"`   // relative to Root, forward slashes, sorted, never nil

	// Root is the repository's top folder, for turning Dirty into paths. It is spelled
	// from the dir given to Read when that names the same folder (so a symlink above the
	// repository stays as the caller wrote it), else as git resolves it. A machine-local
	// absolute path, it is not part of the recorded state.
	Root string `json:"-" yaml:"-"`
}

// underGit reports whether dir or a folder above it holds a .git entry (a folder, or the
// file of a worktree or submodule).
// When in doubt (a folder that cannot be read) it says yes, and git decides.
func underGit(dir string) bool {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return true
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return true
	}
	return gitAbove(abs) || (real != abs && gitAbove(real))
}

func gitAbove(dir string) bool {
	for {
		if _, err := os.Lstat(filepath.Join(dir, ".git")); err == nil {
			return true
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return false
		}
		dir = parent
	}
}

// errNoWorkTree means git ran but found no work tree at the folder it was given.
var errNoWorkTree = errors.New("not in a git work tree")

// Read returns the git state of the repository holding dir, or (nil, nil) when dir is
// not inside a git work tree or git is not installed. Both git runs together are bounded
// by Timeout, and neither takes git's index lock.
func Read(ctx context.Context, dir string) (*State, error) {
	if !underGit(dir) {
		// Starting git costs milliseconds; a save outside any repository skips it.
		return nil, nil
	}
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()

	out, err := Run(ctx, dir, nil, "rev-parse", "--show-toplevel", "--show-cdup")
	if errors.Is(err, exec.ErrNotFound) || errors.Is(err, errNoWorkTree) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	top, cdup, _ := strings.Cut(strings.TrimSuffix(string(out), "\n"), "\n")

	// Porcelain v2 carries the branch, the commit and the changed paths in one run;
	// -z leaves paths unquoted, so spaces and non-ASCII names come through as written.
	out, err = Run(ctx, dir, nil, "status", "--porcelain=v2", "-z", "--branch", "--untracked-files=all")
	if err != nil {
		return nil, err
	}
	st, err := parseStatus(out)
	if err != nil {
		return nil, err
	}
	st.Root = rootFolder(dir, top, cdup)
	return st, nil
}

// Run runs git with args in dir and returns what it wrote to stdout. It is the one way
// ctx starts git: the environment is scrubbed (gitEnv), so git speaks English, which
// callers that read its messages rely on, and works on the repository holding dir
// whatever a surrounding git hook set; env is added after the scrub (a temporary index,
// an author). ctx bounds the run. A failure is an *Error carrying git's stderr, except a
// missing git (exec.ErrNotFound) and a cancelled ctx (ctx.Err()), which are wrapped.
func Run(ctx context.Context, dir string, env []string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(gitEnv(os.Environ()), env...)
	// A helper that git starts (fsmonitor, credential) may hold the pipes open after
	// git is killed; WaitDelay keeps the timeout a real bound. It also bounds reading
	// the last of git's output after git exited, which on a loaded machine took more
	// than the 50 ms this once was ("WaitDelay expired before I/O complete" from a git
	// that had succeeded).
	cmd.WaitDelay = 2 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	switch {
	case err == nil:
		return stdout.Bytes(), nil
	case errors.Is(err, exec.ErrNotFound):
		return nil, err
	case ctx.Err() != nil:
		return nil, fmt.Errorf("git %s in %s: %w", args[0], dir, ctx.Err())
	}
	return nil, &Error{Dir: dir, Args: args, Stdout: stdout.String(), Stderr: strings.TrimSpace(stderr.String()), Err: err}
}

// RunStatus runs git as Run does, for the commands whose exit status is an answer
// (merge-tree: 1 is a conflict; diff --no-index: 1 is a difference): it returns
// stdout and the status, and an error only when git could not run or was stopped.
func RunStatus(ctx context.Context, dir string, args ...string) (string, int, error) {
	out, err := Run(ctx, dir, nil, args...)
	var ge *Error
	var exit *exec.ExitError
	if errors.As(err, &ge) && errors.As(ge.Err, &exit) {
		return ge.Stdout, exit.ExitCode(), nil
	}
	return string(out), 0, err
}

// Error is a git run that failed, with what git said.
type Error struct {
	Dir    string
	Args   []string
	Stdout string // what it wrote before failing
	Stderr string // all of it, trimmed; in English (Run)
	Err    error  // the exit status
}

// Error names the command and the folder, and gives the first line of git's stderr,
// which is where git says what went wrong.
func (e *Error) Error() string {
	what := "git " + e.Args[0] + " in " + e.Dir
	if e.Stderr == "" {
		return fmt.Sprintf("%s: %v", what, e.Err)
	}
	return fmt.Sprintf("%s: %s: %v", what, firstLine(e.Stderr), e.Err)
}

// Unwrap gives the exit status, and errNoWorkTree when git found no work tree at Dir.
func (e *Error) Unwrap() []error {
	if notWorkTree(e.Stderr) {
		return []error{e.Err, errNoWorkTree}
	}
	return []error{e.Err}
}

// rootFolder returns the repository's top folder, preferring dir's spelling of it: git
// resolves symlinks (/tmp becomes /private/tmp on macOS), and a caller that compares
// the result with its own paths would otherwise find them unrelated.
func rootFolder(dir, top, cdup string) string {
	top = filepath.FromSlash(top)
	abs, err := filepath.Abs(dir)
	if err != nil {
		return top
	}
	spelled := filepath.Join(abs, filepath.FromSlash(cdup))
	a, errA := os.Stat(spelled)
	b, errB := os.Stat(top)
	if errA == nil && errB == nil && os.SameFile(a, b) {
		return spelled
	}
	return top
}

// gitEnv returns env prepared for a git run: English messages (notWorkTree and the
// callers of Run read them), no optional locks (a status that only reads does not
// rewrite the index under a person's git), and none of the variables a surrounding git
// hook may have set that would point git at a repository other than the one holding dir.
func gitEnv(env []string) []string {
	out := make([]string, 0, len(env)+2)
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		switch name {
		case "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR", "GIT_PREFIX",
			"GIT_OPTIONAL_LOCKS", "LC_ALL", "LANGUAGE":
			continue
		}
		out = append(out, kv)
	}
	return append(out, "GIT_OPTIONAL_LOCKS=0", "LC_ALL=C")
}

// notWorkTree tells from git's message whether it failed only because there is no work
// tree at dir: outside any repository, or inside a .git folder or a bare repository.
func notWorkTree(msg string) bool {
	return strings.Contains(msg, "not a git repository") ||
		strings.Contains(msg, "must be run in a work tree")
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return strings.TrimPrefix(line, "fatal: ")
}

// parseStatus reads the output of `git status --porcelain=v2 -z --branch`.
func parseStatus(out []byte) (*State, error) {
	st := &State{Dirty: []string{}}
	records := strings.Split(string(out), "\x00")
	for i := 0; i < len(records); i++ {
		rec := records[i]
		if rec == "" {
			continue
		}
		var path string
		switch rec[0] {
		case '#':
			parseHeader(st, rec)
			continue
		case '1':
			// 1 XY sub mH mI mW hH hI path
			path = field(rec, 8)
		case '2':
			// 2 XY sub mH mI mW hH hI Xscore path, then the original path as its own record.
			path = field(rec, 9)
			i++
		case 'u':
			// u XY sub m1 m2 m3 mW h1 h2 h3 path
			path = field(rec, 10)
		case '?', '!':
			path = field(rec, 1)
		default:
			return nil, fmt.Errorf("git status: unexpected line %q", rec)
		}
		if path == "" {
			return nil, fmt.Errorf("git status: no path in line %q", rec)
		}
		st.Dirty = append(st.Dirty, path)
	}
	slices.Sort(st.Dirty)
	return st, nil
}

func parseHeader(st *State, rec string) {
	key, value, _ := strings.Cut(strings.TrimPrefix(rec, "# "), " ")
	switch key {
	case "branch.oid":
		if value != "(initial)" {
			st.Head = value
		}
	case "branch.head":
		if value != "(detached)" {
			st.Branch = value
		}
	}
}

// field returns what follows the first n space-separated fields of rec: the path, which
// may itself hold spaces.
func field(rec string, n int) string {
	parts := strings.SplitN(rec, " ", n+1)
	if len(parts) <= n {
		return ""
	}
	return parts[n]
}

// Dirty reports whether the repository holding dir has uncommitted work. When git
// cannot tell, it says yes, so a caller guarding that work errs towards keeping it; a
// folder outside any repository has none.
func Dirty(dir string) bool {
	st, err := Read(context.Background(), dir)
	if err != nil {
		return true
	}
	return st != nil && len(st.Dirty) > 0
}

// UniqueCommits reports whether branch, in the repository holding dir, has commits
// that no other branch, tag or remote-tracking branch holds: deleting it would leave
// them to garbage collection. When git cannot tell (no such branch, no repository), it
// says yes, as Dirty does.
func UniqueCommits(dir, branch string) bool {
	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	defer cancel()
	ref := "refs/heads/" + branch
	// --exclude names the branch as --branches lists it, without refs/heads/.
	out, err := Run(ctx, dir, nil, "rev-list", "--max-count=1", ref, "--not", "--exclude="+branch, "--branches", "--tags", "--remotes")
	if err != nil {
		return true
	}
	return len(bytes.TrimSpace(out)) > 0
}
