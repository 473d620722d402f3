package durable

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// Confinement: ctx never writes outside a workspace through a link. A workspace root is
// registered with Confine when it is opened; from then on every write of this package
// (WriteFile, ReplaceFile, MkdirAll, AppendLine and the lock files of WithLock) whose
// path lies inside that workspace, by the spelling given or by the resolved one, is
// refused with an *OutsideError when, links followed, it would land outside it. Paths
// outside every registered workspace (the user's Claude Code settings, ctx's runtime
// folder) are not concerned. A workspace may allow folders outside it explicitly
// (links.allow_outside in .ctx/config.yaml), for projects kept on another disk.

// ErrOutside is matched by every *OutsideError.
var ErrOutside = errors.New("leads outside the workspace through a link")

// OutsideError is a write refused because a link takes it outside the workspace.
type OutsideError struct {
	Path   string // the path as ctx was asked to write it
	Target string // where the links lead
	Root   string // the workspace
}

func (e *OutsideError) Error() string {
	return fmt.Sprintf("%s: %s", e.Path, e.Reason())
}

// Reason is the error without the path, for a caller that names the path its own way.
func (e *OutsideError) Reason() string {
	return fmt.Sprintf("a link leads it to %s, outside the workspace; ctx does not follow it (links.allow_outside in .ctx/config.yaml allows a folder)", e.Target)
}

func (e *OutsideError) Is(target error) bool { return target == ErrOutside }

type confinedRoot struct {
	spelled, resolved string
	allow             []string // resolved folders outside the root that may be written
}

var confinement struct {
	sync.RWMutex
	roots []confinedRoot
}

// Confine registers a workspace root (any spelling) and the folders outside it that
// its writes may reach through links. Registering a root again replaces its entry.
func Confine(root string, allowOutside ...string) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return
	}
	r := confinedRoot{spelled: abs, resolved: Resolve(abs)}
	for _, a := range allowOutside {
		if a, err := filepath.Abs(a); err == nil {
			r.allow = append(r.allow, Resolve(a))
		}
	}
	confinement.Lock()
	defer confinement.Unlock()
	// A new list, never an edit of the old one: a reader may hold it without the lock.
	// A root registered again keeps its place (the first root holding a path counts).
	roots := slices.Clone(confinement.roots)
	if i := slices.IndexFunc(roots, func(have confinedRoot) bool { return have.resolved == r.resolved }); i >= 0 {
		roots[i] = r
	} else {
		roots = append(roots, r)
	}
	confinement.roots = roots
}

// CheckInside returns an *OutsideError when writing path would, through a link, leave
// the registered workspace it lies in; nil otherwise.
func CheckInside(path string) error {
	confinement.RLock()
	roots := confinement.roots
	confinement.RUnlock()
	if len(roots) == 0 {
		return nil
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil
	}
	for _, r := range roots {
		if !Within(abs, r.spelled) && !Within(abs, r.resolved) {
			continue
		}
		target := Resolve(abs)
		if Within(target, r.resolved) {
			return nil
		}
		for _, a := range r.allow {
			if Within(target, a) {
				return nil
			}
		}
		return &OutsideError{Path: path, Target: target, Root: r.spelled}
	}
	return nil
}

// Resolve returns path with every link followed: the longest part of it that exists is
// resolved and the rest joined on, so a path about to be created resolves too. A link
// that leads nowhere resolves to its target; a loop of links resolves to the path as
// far as it could be followed.
func Resolve(path string) string {
	path = filepath.Clean(path)
	dir, base := filepath.Split(path)
	if dir == "" || base == "" {
		return resolve(path, 0)
	}
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&os.ModeSymlink != 0 {
		return resolve(path, 0) // the last element is a link: follow it
	}
	// Anything else under dir resolves to dir's resolution and its own name.
	return filepath.Join(resolvedDirs.get(filepath.Clean(dir)), base)
}

// resolvedDirs remembers, for a moment, the folders Resolve resolved: a save writes five
// files in three folders, and resolving each from the root again was 200 stat calls.
// The moment is short, so that a long-lived process (ctx serve) sees a folder that
// became a link since.
var resolvedDirs = dirMemo{ttl: time.Second, m: map[string]memoEntry{}}

type memoEntry struct {
	resolved string
	at       time.Time
}

type dirMemo struct {
	sync.Mutex
	ttl time.Duration
	m   map[string]memoEntry
}

func (d *dirMemo) get(dir string) string {
	now := time.Now()
	d.Lock()
	e, ok := d.m[dir]
	d.Unlock()
	if ok && now.Sub(e.at) < d.ttl {
		return e.resolved
	}
	// A folder that is no link resolves as its parent does, with its own name: only the
	// levels not remembered yet are walked.
	r := ""
	if parent, base := filepath.Split(dir); base != "" && parent != "" {
		if fi, err := os.Lstat(dir); err == nil && fi.Mode()&os.ModeSymlink == 0 {
			r = filepath.Join(d.get(filepath.Clean(parent)), base)
		}
	}
	if r == "" {
		r = resolve(dir, 0)
	}
	d.Lock()
	if len(d.m) > 256 {
		clear(d.m)
	}
	d.m[dir] = memoEntry{resolved: r, at: now}
	d.Unlock()
	return r
}

// maxLinks is how many dangling links Resolve follows in a row, as a kernel does.
const maxLinks = 40

func resolve(path string, depth int) string {
	path = filepath.Clean(path)
	rest := ""
	for p := path; ; {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Join(real, rest)
		}
		if target, err := os.Readlink(p); err == nil && depth < maxLinks {
			// A dangling link: it still says where a write would go.
			if !filepath.IsAbs(target) {
				target = filepath.Join(filepath.Dir(p), target)
			}
			return filepath.Join(resolve(target, depth+1), rest)
		}
		parent := filepath.Dir(p)
		if parent == p {
			return path
		}
		rest = filepath.Join(filepath.Base(p), rest)
		p = parent
	}
}

// SameFile reports whether a and b name the same file or folder: the same clean path,
// or the same existing one through a link, a hard link or another spelling.
func SameFile(a, b string) bool {
	if filepath.Clean(a) == filepath.Clean(b) {
		return true
	}
	ia, errA := os.Stat(a)
	ib, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(ia, ib)
}

// Within reports whether path is dir or lies below it (both clean and absolute).
func Within(path, dir string) bool {
	if path == dir {
		return true
	}
	if !strings.HasSuffix(dir, string(filepath.Separator)) {
		dir += string(filepath.Separator)
	}
	return strings.HasPrefix(path, dir)
}
