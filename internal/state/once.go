package state

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/ctxtools/ctx/internal/durable"
)

// FirstRun reports whether this is the first run of hook for the event eventID of the
// session, and records it. Claude Code runs a hook once per settings level unless the
// command strings are identical, so ctx installed for the project and for the user (or
// in two forms) would journal, nudge and save twice; the second run of the same event
// finds its id recorded and does nothing. Only the last event per hook and session is
// kept: a duplicate arrives at once, beside the first.
func (r *Runtime) FirstRun(hook, sessionID, eventID string) (bool, error) {
	if eventID == "" {
		return true, nil
	}
	safe, err := SafeID(sessionID)
	if err != nil {
		return true, err
	}
	path := filepath.Join(r.Dir, "seen-"+hook+"-"+safe)
	first := true
	err = durable.WithLock(context.Background(), path, func() error {
		b, err := os.ReadFile(path)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		if string(b) == eventID {
			first = false
			return nil
		}
		// Not synced: losing this record in a crash costs at most one doubled line.
		return os.WriteFile(path, []byte(eventID), 0o600)
	})
	if err != nil {
		return true, fmt.Errorf("hook run record: %w", err)
	}
	return first, nil
}
