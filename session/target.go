package session

import (
	"errors"

	"github.com/ctxtools/ctx/loader"
)

// How a command chose its project, for the line that tells the person.
const (
	PickedNamed  = "named"
	PickedBound  = "bound to this session"
	PickedNewest = "newest save point"
)

// ErrNoTarget says that a save has no project to apply to.
var ErrNoTarget = errors.New("no project named, none bound to this session, and no save point yet: name one with --project")

// TargetProject picks the project a save applies to: the one named by query, else the
// one this agent session is bound to, else the one with the newest save point. It
// returns how it chose.
func TargetProject(ws *loader.Workspace, query, sessionID string) (*loader.Project, string, error) {
	if query != "" {
		p, err := ws.Resolve(query)
		return p, PickedNamed, err
	}
	if sessionID != "" {
		b := Bindings{StateDir: ws.StatePath("state")}
		if binding, err := b.Lookup(sessionID); err == nil && binding != nil {
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
		return nil, "", ErrNoTarget
	}
	return p, PickedNewest, err
}
