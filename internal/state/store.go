// Package state is what ctx keeps between commands and hooks: every path under a
// workspace's .ctx/ that is not configuration, and the private runtime folder. A
// command opens it once (Open) and asks it for what it needs; no other package builds
// a state path.
//
//	.ctx/state/sessions/<id>/   one folder per Claude Code session (Session):
//	    binding.json            the project the session works on
//	    cycle.json              compaction cycle: usage flags, counts, the transcript
//	    work.txt                workspace files the session changed
//	    window.json             the context window the status line reported
//	    audit.jsonl             auto-approve's decisions (never pruned)
//	.ctx/sessions/              snapshot sets and wind-down journals (Snapshots, Journal)
//	$XDG_RUNTIME_DIR/ctx        pause markers, once-per-event markers (Runtime)
package state

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/ctxtools/ctx/internal/durable"
	"github.com/ctxtools/ctx/loader"
)

// Store is a workspace's state, opened once per command. Its zero workspace (nil) is
// the state of a command outside any workspace: the runtime folder only.
type Store struct {
	WS     *loader.Workspace
	getenv func(string) string

	rtOnce sync.Once
	rt     *Runtime
	rtErr  error

	mu       sync.Mutex
	sessions map[string]*Session // opened this command, so a folder is looked up once
}

// Open opens the state of ws (nil outside a workspace). It touches no file: each part
// is created when first written.
func Open(ws *loader.Workspace, getenv func(string) string) *Store {
	if getenv == nil {
		getenv = os.Getenv
	}
	return &Store{WS: ws, getenv: getenv}
}

// Runtime is the private runtime folder, opened and trust-checked once per Store.
func (s *Store) Runtime() (*Runtime, error) {
	s.rtOnce.Do(func() { s.rt, s.rtErr = openRuntime(s.getenv) })
	return s.rt, s.rtErr
}

// errNoWorkspace is what a workspace part of a Store without one answers.
var errNoWorkspace = errors.New("no workspace")

// dir is .ctx/state, "" outside a workspace.
func (s *Store) dir() string {
	if s.WS == nil {
		return ""
	}
	return s.WS.StatePath("state")
}

// Snapshots are the workspace's snapshot sets, .ctx/sessions.
func (s *Store) Snapshots() Snapshots {
	return Snapshots{Dir: s.sessionsDir()}
}

// Journal is a session's wind-down journal, in .ctx/sessions.
func (s *Store) Journal(sessionID string) *Journal {
	return OpenJournal(s.sessionsDir(), sessionID)
}

// Orphans are the active journals of sessions other than except (see Orphans).
func (s *Store) Orphans(except string) ([]*Journal, error) {
	return Orphans(s.sessionsDir(), except)
}

func (s *Store) sessionsDir() string {
	if s.WS == nil {
		return ""
	}
	return s.WS.StatePath("sessions")
}

// Session is one Claude Code session's folder. An id that can name no file is kept
// as an error that every method returns.
func (s *Store) Session(id string) *Session {
	s.mu.Lock()
	defer s.mu.Unlock()
	if se, ok := s.sessions[id]; ok {
		return se
	}
	safe, err := SafeID(id)
	if err == nil && s.WS == nil {
		err = errNoWorkspace
	}
	se := &Session{st: s, ID: id, safe: safe, err: err}
	if s.sessions == nil {
		s.sessions = map[string]*Session{}
	}
	s.sessions[id] = se
	return se
}

// Session is the state of one Claude Code session in a workspace.
type Session struct {
	st   *Store
	ID   string
	safe string
	err  error
	// adopt looks for the older layout's files once per Store.
	adopt sync.Once
}

// sessionFiles are the names in a session's folder, and where each lived before the
// folder existed (.ctx/state/<old>): a session's old files move in when it is first
// opened.
var sessionFiles = []struct{ name, old, ext string }{
	{bindingFile, "sessions", ".json"},
	{cycleFile, "cycles", ".json"},
	{workFile, "work", ".txt"},
	{windowFile, "windows", ".json"},
	{auditFile, "audit", ".jsonl"},
}

const (
	bindingFile = "binding.json"
	cycleFile   = "cycle.json"
	workFile    = "work.txt"
	windowFile  = "window.json"
	auditFile   = "audit.jsonl"
	savesFile   = "saves.json" // new with the folder layout: nothing to adopt
)

// folder is the session's folder.
func (se *Session) folder() string {
	return filepath.Join(se.st.dir(), "sessions", se.safe)
}

// path returns the session's file name, moving the session's files of the older
// layout in when its folder does not exist yet.
func (se *Session) path(name string) (string, error) {
	if se.err != nil {
		return "", se.err
	}
	dir := se.folder()
	se.adopt.Do(func() {
		if _, err := os.Lstat(dir); errors.Is(err, os.ErrNotExist) {
			se.adoptOldFiles(dir)
		}
	})
	return filepath.Join(dir, name), nil
}

// adoptOldFiles moves the session's files of the layout before one folder per session
// (.ctx/state/sessions/<id>.json, cycles/, work/, windows/, audit/) into dir.
func (se *Session) adoptOldFiles(dir string) {
	for _, f := range sessionFiles {
		old := filepath.Join(se.st.dir(), f.old, se.safe+f.ext)
		if _, err := os.Lstat(old); err != nil {
			continue
		}
		if durable.MkdirAll(dir, 0o755) == nil {
			_ = os.Rename(old, filepath.Join(dir, f.name))
		}
	}
}

// ensure creates the session's folder (and .ctx/state with its .gitignore) for a write.
func (se *Session) ensure() error {
	if err := loader.EnsureStateDir(se.st.dir()); err != nil {
		return err
	}
	return durable.MkdirAll(se.folder(), 0o755)
}

// AuditFile is the session's audit log, its folder created.
func (se *Session) AuditFile() (string, error) {
	path, err := se.path(auditFile)
	if err != nil {
		return "", err
	}
	return path, se.ensure()
}

// RecentBindings returns up to n bindings, most recently bound first, other than the
// session except's: the candidates for a fork's parent.
func (s *Store) RecentBindings(except string, n int) []Binding {
	if s.WS == nil {
		return nil
	}
	entries, err := os.ReadDir(filepath.Join(s.dir(), "sessions"))
	if err != nil {
		return nil
	}
	type cand struct {
		path string
		mod  time.Time
	}
	var cands []cand
	for _, e := range entries {
		path := filepath.Join(s.dir(), "sessions", e.Name(), bindingFile)
		if !e.IsDir() {
			path = filepath.Join(s.dir(), "sessions", e.Name()) // the older layout
			if filepath.Ext(path) != ".json" {
				continue
			}
		}
		if info, err := os.Stat(path); err == nil && info.Mode().IsRegular() {
			cands = append(cands, cand{path, info.ModTime()})
		}
	}
	sort.Slice(cands, func(i, j int) bool { return cands[i].mod.After(cands[j].mod) })
	var out []Binding
	for _, c := range cands {
		if len(out) == n {
			break
		}
		b, err := readBinding(c.path)
		if err != nil || b == nil || b.SessionID == "" || b.SessionID == except {
			continue
		}
		out = append(out, *b)
	}
	return out
}

// staleSessionAge is when a session is long over: Claude Code resumes sessions for
// days, not months.
const staleSessionAge = 30 * 24 * time.Hour

// StaleMarkerAge is when a runtime marker no session touched counts as abandoned.
const StaleMarkerAge = 7 * 24 * time.Hour

// Prune removes what the hooks keep of sessions no hook touched for a month (binding,
// cycle, work list, window; the audit log stays), the marks and temporary files
// nothing owns any more, stopping when ctx is done. It returns how many files it removed.
func (s *Store) Prune(ctx context.Context, now time.Time) int {
	removed := 0
	if rt, err := s.Runtime(); err == nil {
		removed += rt.CleanStale(ctx, StaleMarkerAge)
	}
	if s.WS == nil {
		return removed
	}
	removed += CleanWorkspaceTemps(ctx, s.WS.StatePath(), time.Hour)
	sessions := filepath.Join(s.dir(), "sessions")
	entries, _ := os.ReadDir(sessions)
	for _, e := range entries {
		if ctx.Err() != nil {
			return removed
		}
		if e.IsDir() {
			removed += pruneSession(ctx, filepath.Join(sessions, e.Name()), now)
		}
	}
	// The older layout's files, of sessions not opened since.
	for _, f := range sessionFiles {
		if f.name != auditFile {
			removed += removeOlder(ctx, filepath.Join(s.dir(), f.old), staleSessionAge, now)
		}
	}
	return removed
}

// pruneSession empties a session's folder of everything but its audit log when no
// file in it changed for staleSessionAge, and removes the folder when nothing is left.
func pruneSession(ctx context.Context, dir string, now time.Time) int {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0
	}
	for _, e := range entries {
		if info, err := e.Info(); err != nil || now.Sub(info.ModTime()) < staleSessionAge {
			return 0
		}
	}
	removed := 0
	for _, e := range entries {
		if e.Name() == auditFile || ctx.Err() != nil {
			continue
		}
		if os.Remove(filepath.Join(dir, e.Name())) == nil {
			removed++
		}
	}
	_ = os.Remove(dir) // only when empty
	return removed
}

// removeOlder removes the plain files in dir not modified for age before now, stopping
// when ctx is done, and returns how many it removed.
func removeOlder(ctx context.Context, dir string, age time.Duration, now time.Time) int {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0
	}
	removed := 0
	for _, e := range entries {
		if ctx.Err() != nil {
			break
		}
		info, err := e.Info()
		if err != nil || !info.Mode().IsRegular() || now.Sub(info.ModTime()) < age {
			continue
		}
		if os.Remove(filepath.Join(dir, e.Name())) == nil {
			removed++
		}
	}
	return removed
}
