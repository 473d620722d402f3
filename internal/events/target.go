package events

import (
	"errors"
	"path/filepath"

	"github.com/ctxtools/ctx/internal/state"
	"github.com/ctxtools/ctx/loader"
)

// How a command chose its project, for the line that tells the person.
const (
	PickedNamed  = "named"
	PickedFolder = "the current folder is in it"
	PickedBound  = "bound to this session"
	PickedNewest = "newest save point"
)

// ErrNoTarget says that a save has no project to apply to.
var ErrNoTarget = errors.New("no project named, none bound to this session, and no save point yet: name one with --project")

// ErrNoProjects says that the workspace has no project yet for a command to apply to.
var ErrNoProjects = errors.New("no projects here yet: `ctx new \"Name\"` makes one")

// TargetProject picks the project a save applies to: the one named by query, else the
// one the folder cwd is in ("" skips this), else the one this agent session is bound
// to, else the one with the newest save point. It returns how it chose.
func TargetProject(st *state.Store, query, cwd, sessionID string) (*loader.Project, string, error) {
	ws := st.WS
	if query != "" {
		p, err := ws.Resolve(query)
		return p, PickedNamed, err
	}
	if cwd != "" {
		if id := ProjectOfDir(st, cwd); id != "" {
			if p, err := ws.Resolve(id); err == nil {
				return p, PickedFolder, nil
			}
		}
	}
	if sessionID != "" {
		if binding, err := st.Session(sessionID).Binding(); err == nil && binding != nil {
			p, err := ws.Resolve(binding.Path)
			if err == nil {
				return p, PickedBound, nil
			}
			var nf *loader.NotFoundError
			if !errors.As(err, &nf) {
				return nil, "", err
			}
			// The bound project was renamed or removed: fall back to the newest.
		}
	}
	p, err := ws.Newest()
	if errors.Is(err, loader.ErrNoSavePoint) {
		if folders, ferr := ws.Folders(); ferr == nil && len(folders) == 0 {
			return nil, "", ErrNoProjects
		}
		return nil, "", ErrNoTarget
	}
	return p, PickedNewest, err
}

// ProjectOfDir returns the workspace-relative folder of the project that the folder dir
// is in (or is), or "" when it is in none.
func ProjectOfDir(st *state.Store, dir string) string {
	// projectOf takes a path inside a project: any name below dir is one.
	return projectOf(st.WS, filepath.Join(dir, "_"))
}
