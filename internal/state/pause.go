package state

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/ctxtools/ctx/internal/durable"
)

// UnknownSession is the session id used when none is given anywhere.
const UnknownSession = "session-unknown"

// quietTurns is how many paused prompts get the short reminder before it names the
// count and the way out.
const quietTurns = 5

// Runtime is the private folder of per-session markers: $XDG_RUNTIME_DIR/ctx, else
// <tmp>/ctx-<uid>. It holds nothing that must survive a reboot.
type Runtime struct {
	Dir string
}

// ErrUnsafeRuntime says the runtime folder exists but cannot be trusted.
var ErrUnsafeRuntime = errors.New("runtime folder is not private")

// RuntimeDir returns where the runtime folder is for this user.
func RuntimeDir(getenv func(string) string) string {
	if xdg := getenv("XDG_RUNTIME_DIR"); xdg != "" && filepath.IsAbs(xdg) {
		return filepath.Join(xdg, "ctx")
	}
	return filepath.Join(os.TempDir(), fmt.Sprintf("ctx-%d", os.Getuid()))
}

// openRuntime opens the runtime folder, creating it with mode 0700 when missing. An
// existing folder must be a real folder (not a symlink), owned by this user, and
// private (no group or other permissions; on Unix, see checkPrivate); otherwise it is
// refused, not repaired: someone else may control it.
func openRuntime(getenv func(string) string) (*Runtime, error) {
	dir := RuntimeDir(getenv)
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return nil, fmt.Errorf("runtime folder %s: %w", dir, err)
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return nil, fmt.Errorf("runtime folder %s: %w", dir, err)
	}
	switch {
	case fi.Mode()&os.ModeSymlink != 0:
		return nil, fmt.Errorf("%w: %s is a symlink", ErrUnsafeRuntime, dir)
	case !fi.IsDir():
		return nil, fmt.Errorf("%w: %s is not a folder", ErrUnsafeRuntime, dir)
	}
	if err := checkPrivate(dir, fi); err != nil {
		return nil, err
	}
	return &Runtime{Dir: dir}, nil
}

func (r *Runtime) marker(sessionID string) (string, error) {
	safe, err := SafeID(sessionID)
	if err != nil {
		return "", err
	}
	return filepath.Join(r.Dir, "paused-"+safe), nil
}

// Pause marks the session paused with a count of zero; pausing again resets the count.
func (r *Runtime) Pause(sessionID string) error {
	path, err := r.marker(sessionID)
	if err != nil {
		return fmt.Errorf("pause: %w", err)
	}
	return durable.WithLock(context.Background(), path, func() error {
		return durable.ReplaceLocked(path, []byte("0\n"), 0o600)
	})
}

// Resume ends the session's pause and reports whether it was paused; resuming a
// session that is not paused does nothing.
func (r *Runtime) Resume(sessionID string) (bool, error) {
	path, err := r.marker(sessionID)
	if err != nil {
		return false, fmt.Errorf("resume: %w", err)
	}
	was := false
	err = durable.WithLock(context.Background(), path, func() error {
		err := os.Remove(path)
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		was = err == nil
		return err
	})
	// The lock file stays: removing it while another process waits on it would let two
	// processes hold "the" lock. CleanStale removes it once it is old.
	return was, err
}

// Paused reports whether the session is paused and how many prompts it has been so.
func (r *Runtime) Paused(sessionID string) (bool, int, error) {
	path, err := r.marker(sessionID)
	if err != nil {
		return false, 0, err
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return false, 0, nil
	}
	if err != nil {
		return false, 0, err
	}
	n, _ := strconv.Atoi(strings.TrimSpace(string(data)))
	return true, n, nil
}

// CountTurn counts one prompt answered while paused, under the marker's lock so that
// concurrent hooks each count once. It returns whether the session is paused and the
// new count.
func (r *Runtime) CountTurn(sessionID string) (bool, int, error) {
	path, err := r.marker(sessionID)
	if err != nil {
		return false, 0, err
	}
	// Not paused is the common case: one stat, no lock.
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return false, 0, nil
	}
	paused, turns := false, 0
	err = durable.WithLock(context.Background(), path, func() error {
		data, err := os.ReadFile(path)
		if errors.Is(err, os.ErrNotExist) {
			return nil // resumed while this hook waited
		}
		if err != nil {
			return err
		}
		paused = true
		turns, _ = strconv.Atoi(strings.TrimSpace(string(data)))
		turns++
		return durable.ReplaceLocked(path, []byte(strconv.Itoa(turns)+"\n"), 0o600)
	})
	return paused, turns, err
}

// PauseReminder is the line the context-size hook prints on a paused prompt.
func PauseReminder(turns int) string {
	if turns <= quietTurns {
		return "ctx:paused"
	}
	return fmt.Sprintf("ctx:paused (%d turns) — resume with /ctx-resume", turns)
}

// CleanStale removes markers and leftovers not touched for maxAge, stopping when
// ctx is done. It returns how many files it removed.
func (r *Runtime) CleanStale(ctx context.Context, maxAge time.Duration) int {
	entries, err := os.ReadDir(r.Dir)
	if err != nil {
		return 0
	}
	removed := 0
	cutoff := time.Now().Add(-maxAge)
	for _, e := range entries {
		if ctx.Err() != nil {
			break
		}
		info, err := e.Info()
		if err != nil || !info.Mode().IsRegular() || info.ModTime().After(cutoff) {
			continue
		}
		if os.Remove(filepath.Join(r.Dir, e.Name())) == nil {
			removed++
		}
	}
	return removed
}

// CleanWorkspaceTemps removes temporary files that killed writes left in a workspace's
// .ctx folder (and its subfolders), stopping when ctx is done: at once when the name says
// its writer is gone (durable.DeadTemp), else once older than maxAge (younger ones may
// belong to a write in progress).
func CleanWorkspaceTemps(ctx context.Context, stateDir string, maxAge time.Duration) int {
	removed := 0
	cutoff := time.Now().Add(-maxAge)
	_ = filepath.WalkDir(stateDir, func(path string, d os.DirEntry, err error) error {
		if err != nil || ctx.Err() != nil {
			return filepath.SkipAll
		}
		if d.IsDir() || !strings.HasPrefix(d.Name(), durable.TempPrefix) {
			return nil
		}
		// A killed writer's file goes at once (its pid is gone), any other once old.
		if durable.DeadTemp(d.Name()) || isOlder(d, cutoff) {
			if os.Remove(path) == nil {
				removed++
			}
		}
		return nil
	})
	return removed
}

func isOlder(d os.DirEntry, cutoff time.Time) bool {
	info, err := d.Info()
	return err == nil && info.ModTime().Before(cutoff)
}
