// Package durable is the one place where ctx writes files that must survive a crash:
// atomic replacement and read-modify-write under a sidecar lock.
package durable

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/gofrs/flock"
)

// TempPrefix marks ctx's temporary files so that a crashed write can be recognised and
// removed by the next one.
const TempPrefix = ".ctx-tmp-"

// WriteFile replaces path with data atomically: a temporary file in the same folder is
// written, synced and renamed over path, then the folder is synced. A reader sees the old
// or the new content, never a mix, and after a crash the file is one or the other.
func WriteFile(path string, data []byte, perm os.FileMode) error {
	return replace(path, data, perm, true)
}

// ReplaceFile replaces path with data atomically (temp file and rename) without
// syncing: for runtime markers and state that a crash may lose but a reader must never
// see half written. These small folders are written without a common lock, so each
// write also removes the temporary files of writers that were killed (RemoveDeadTemps).
func ReplaceFile(path string, data []byte, perm os.FileMode) error {
	if err := replace(path, data, perm, false); err != nil {
		return err
	}
	RemoveDeadTemps(filepath.Dir(path))
	return nil
}

func replace(path string, data []byte, perm os.FileMode, durable bool) error {
	if err := CheckInside(path); err != nil {
		return err
	}
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	tmpName, err := writeTemp(dir, base, data, perm, durable)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmpName, path); err != nil {
		_ = os.Remove(tmpName)
		return fmt.Errorf("write %s: %w", path, err)
	}
	if durable {
		return SyncDir(dir)
	}
	return nil
}

// writeTemp writes data to a new temporary file for base in dir and returns its path;
// on an error nothing is left. The writer's process id is in the name: a temporary
// file whose writer is gone can be removed by anyone (RemoveDeadTemps), lock or not.
func writeTemp(dir, base string, data []byte, perm os.FileMode, sync bool) (string, error) {
	tmp, err := os.CreateTemp(dir, TempPrefix+base+"-"+strconv.Itoa(os.Getpid())+"-*")
	if err != nil {
		return "", err
	}
	_, err = tmp.Write(data)
	if err == nil {
		err = tmp.Chmod(perm)
	}
	if err == nil && sync {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(tmp.Name())
		return "", err
	}
	return tmp.Name(), nil
}

// ReplaceLocked is ReplaceFile for a caller holding the lock every writer of path takes
// (WithLock): first it removes the temporary files killed writers of path left, which
// no live writer can own.
func ReplaceLocked(path string, data []byte, perm os.FileMode) error {
	RemoveStaleTemps(filepath.Dir(path), filepath.Base(path))
	return replace(path, data, perm, false)
}

// DeadTemp reports whether a folder entry is a temporary file of this package whose
// writing process no longer runs (killed mid-write): anyone may remove it, lock or
// not, since a live writer's file is never one. The name is .ctx-tmp-<base>-<pid>-<n>.
func DeadTemp(name string) bool {
	return strings.HasPrefix(name, TempPrefix) && writerGone(name)
}

// writerGone reports whether a temporary file or folder of this package, named
// ...-<pid>-<n> by its writer (writeTemp, TempDirIn), was left by a process that no
// longer runs. A name without a process id says nothing, so false.
func writerGone(name string) bool {
	rest, _, ok := cutLast(name, '-')
	if !ok {
		return false
	}
	_, id, _ := cutLast(rest, '-')
	pid, err := strconv.Atoi(id)
	return err == nil && pid > 0 && !processAlive(pid)
}

// cutLast slices s around the last sep.
func cutLast(s string, sep byte) (before, after string, found bool) {
	i := strings.LastIndexByte(s, sep)
	if i < 0 {
		return s, "", false
	}
	return s[:i], s[i+1:], true
}

// RemoveDeadTemps deletes the temporary files in dir whose writer is gone (DeadTemp),
// without any lock. It reads the folder once.
func RemoveDeadTemps(dir string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if DeadTemp(e.Name()) {
			_ = os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}

// RemoveStaleTemps deletes temporary files that an interrupted WriteFile left in dir for
// the file named base. It is called before a write so that a crash leaves no litter;
// the caller must hold the lock every writer of that file takes, or it could remove a
// temporary file another process is about to rename.
func RemoveStaleTemps(dir, base string) {
	matches, _ := filepath.Glob(filepath.Join(dir, TempPrefix+globEscape(base)+"-*"))
	for _, m := range matches {
		_ = os.Remove(m)
	}
}

func globEscape(s string) string {
	return strings.NewReplacer(`*`, `\*`, `?`, `\?`, `[`, `\[`, `\`, `\\`).Replace(s)
}

// SyncDir makes the entries of dir (a rename, a new file) durable. A file system that
// cannot sync a folder is not an error; any other failure is.
func SyncDir(dir string) error {
	if runtime.GOOS == "windows" {
		// Windows cannot fsync a folder (it is refused, golang/go#75541); NTFS makes
		// the rename itself durable.
		return nil
	}
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	defer func() { _ = d.Close() }()
	// Some filesystems refuse fsync on a directory (EINVAL, ENOTSUP): they cannot do
	// better, so that refusal is not an error. Any other failure is: the rename may not
	// survive a crash, and the caller must know.
	if err := d.Sync(); err != nil && !errors.Is(err, syscall.EINVAL) && !errors.Is(err, syscall.ENOTSUP) {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	return nil
}

// LockTimeout is how long WithLock and WithLockIn wait for a lock before giving up.
// Every ctx critical section takes milliseconds; a lock held longer belongs to a
// process that hangs, and a hook must not hang with it (its own budget is 10 s, 1.5 s
// at session end). A variable so that tests can shorten it.
var LockTimeout = 5 * time.Second

// LockError is the error of a lock not taken in time: it names the lock file and,
// when the holder wrote it, the holder's process id.
type LockError struct {
	Path   string // the file the lock protects
	Lock   string // the lock file
	Holder int    // the holding process's id; 0 when unknown
	Waited time.Duration
}

func (e *LockError) Error() string {
	holder := "an unknown process"
	if e.Holder > 0 {
		holder = "process " + strconv.Itoa(e.Holder)
		if !processAlive(e.Holder) {
			holder += " (no longer running: its lock should have gone with it; remove " + e.Lock + " if it stays)"
		}
	}
	return fmt.Sprintf("lock %s: still held by %s after %s (lock file %s)", e.Path, holder, e.Waited.Round(time.Millisecond), e.Lock)
}

// WithLock runs fn while holding an exclusive lock on the sidecar file path+".lock".
// fn must re-read whatever it modifies: another process may have changed it while this
// one waited. A lock not taken within LockTimeout, or before ctx is done (a hook's
// budget), is a *LockError.
func WithLock(ctx context.Context, path string, fn func() error) error {
	return withLockFile(ctx, path, path+".lock", fn)
}

// WithLockIn is WithLock with the lock file in dir (named by this user and a hash of
// path) instead of beside the file: for files in folders that are not ctx's own, such
// as a person's project folder or .claude/, often under version control, where a stray
// .lock file would show up as their change.
func WithLockIn(ctx context.Context, dir, path string, fn func() error) error {
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = path
	}
	// The lock is named by the file's resolved path: one workspace reached through a
	// link and directly is one file, and must be one lock.
	sum := sha256.Sum256([]byte(Resolve(abs)))
	return withLockFile(ctx, path, filepath.Join(dir, fmt.Sprintf("ctx-%d-%x.lock", os.Getuid(), sum[:8])), fn)
}

// withLockFile takes the lock on lockPath, polling from 1 ms up to 25 ms between tries
// until LockTimeout or ctx is done, writes this process's id into the lock file for whoever waits
// next, and runs fn. The kernel releases a flock with its holder, so a crashed holder
// never leaves a lock behind, only its stale id.
func withLockFile(ctx context.Context, path, lockPath string, fn func() error) error {
	if err := CheckInside(lockPath); err != nil {
		return err
	}
	lock := flock.New(lockPath)
	start := time.Now()
	for delay := time.Millisecond; ; delay = min(delay*2, 25*time.Millisecond) {
		ok, err := lock.TryLock()
		if err != nil {
			return fmt.Errorf("lock %s: %w", path, err)
		}
		if ok {
			break
		}
		if waited := time.Since(start); waited >= LockTimeout || ctx.Err() != nil {
			return &LockError{Path: path, Lock: lockPath, Holder: lockHolder(lockPath), Waited: waited}
		}
		time.Sleep(delay)
	}
	defer func() { _ = lock.Unlock() }()
	// Best effort: the id only improves a timeout's message.
	_ = os.WriteFile(lockPath, []byte(strconv.Itoa(os.Getpid())+"\n"), 0o600)
	return fn()
}

// lockHolder reads the process id a holder wrote into a lock file (0 when none).
func lockHolder(lockPath string) int {
	b, err := os.ReadFile(lockPath)
	if err != nil {
		return 0
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || n <= 0 {
		return 0
	}
	return n
}

// WithOutsideLock is WithLockIn for files with no workspace around them (the user's
// own Claude Code settings and skills): the lock lives in ctx's folder of the user's
// cache ($XDG_CACHE_HOME/ctx/locks or ~/.cache/ctx/locks), one file per protected file,
// never in the shared temporary folder, where they would pile up. Without a cache
// folder, the lock goes beside the file.
func WithOutsideLock(path string, fn func() error) error {
	if cache, err := os.UserCacheDir(); err == nil {
		dir := filepath.Join(cache, "ctx", "locks")
		if err := os.MkdirAll(dir, 0o700); err == nil {
			return WithLockIn(context.Background(), dir, path, fn)
		}
	}
	return WithLock(context.Background(), path, fn)
}

// MkdirAll creates dir and its parents with perm, like os.MkdirAll, naming dir in the error.
func MkdirAll(dir string, perm os.FileMode) error {
	if err := CheckInside(dir); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, perm); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	return nil
}

// AppendLine adds line to the end of path as one line (the '\n' is added when missing),
// creating the file with mode 0644 when it does not exist. The line goes out in a
// single write to a file opened with O_APPEND, under the lock WithLock takes, so lines
// from concurrent processes never interleave. Should the file end in a line cut short
// by a crash, a '\n' goes out first in the same write, so that the fragment stays a line
// of its own and does not swallow the new one.
//
// There is no fsync: an appended line records work in progress, and readers skip a
// torn one, so a crash may cost the last few lines; an fsync per line would cost
// milliseconds on every call, and appenders such as hooks run on every prompt and
// every tool call.
func AppendLine(path string, line []byte) error {
	line = bytes.TrimSuffix(line, []byte("\n"))
	if bytes.IndexByte(line, '\n') >= 0 {
		return fmt.Errorf("append to %s: the line holds a newline, which would make it two", path)
	}
	if err := CheckInside(path); err != nil {
		return err
	}
	return WithLock(context.Background(), path, func() error {
		// O_RDWR rather than O_WRONLY: the last byte is read to find a torn line.
		f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_RDWR, 0o644)
		if err != nil {
			return fmt.Errorf("append to %s: %w", path, err)
		}
		fi, err := f.Stat()
		var last [1]byte
		if err == nil && fi.Size() > 0 {
			_, err = f.ReadAt(last[:], fi.Size()-1)
		}
		if err != nil {
			_ = f.Close()
			return fmt.Errorf("append to %s: %w", path, err)
		}
		buf := make([]byte, 0, len(line)+2)
		if fi.Size() > 0 && last[0] != '\n' {
			buf = append(buf, '\n')
		}
		buf = append(buf, line...)
		buf = append(buf, '\n')
		_, werr := f.Write(buf)
		if err := errors.Join(werr, f.Close()); err != nil {
			return fmt.Errorf("append to %s: %w", path, err)
		}
		return nil
	})
}
