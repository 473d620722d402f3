package state

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ctxtools/ctx/internal/durable"
	"github.com/ctxtools/ctx/loader"
)

// EnvSessionID is the environment variable in which Claude Code names the agent session.
const EnvSessionID = "CLAUDE_CODE_SESSION_ID"

// maxIDLen bounds a sanitized id so that it always makes a short file name.
const maxIDLen = 64

// SafeID turns a session id into a file name: letters, digits, '.', '_' and '-' are
// kept, anything else becomes '_', a leading '.' too, and a long id is shortened with a
// hash of the whole so that distinct ids stay distinct.
func SafeID(id string) (string, error) {
	if strings.TrimSpace(id) == "" {
		return "", errors.New("session id is empty")
	}
	var b strings.Builder
	for i, r := range id {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-':
			b.WriteRune(r)
		case r == '.' && i > 0:
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	safe := b.String()
	if safe != id || len(safe) > maxIDLen {
		// Replaced characters could make two ids alike; a hash of the original keeps
		// them apart.
		sum := sha256.Sum256([]byte(id))
		keep := min(len(safe), maxIDLen-17)
		safe = safe[:keep] + "-" + hex.EncodeToString(sum[:8])
	}
	return safe, nil
}

// CheckSessionID reports whether id can name an agent session as it is: not empty,
// and its own file name, which SafeID leaves unchanged (letters, digits, '.', '_' and
// '-', no leading '.', at most 64 bytes). Claude Code's ids are UUIDs; anything else
// in a hook payload is not a session ctx should write files for.
func CheckSessionID(id string) error {
	safe, err := SafeID(id)
	if err != nil {
		return err
	}
	if safe != id {
		shown := id
		if len(shown) > 40 {
			shown = shown[:40] + "…"
		}
		return fmt.Errorf("session id %q is not a safe identifier (letters, digits, '.', '_' and '-', at most %d)", shown, maxIDLen)
	}
	return nil
}

// Binding records which project an agent session works on.
type Binding struct {
	SessionID string    `json:"session_id"`
	ProjectID string    `json:"project_id"`
	Path      string    `json:"path"`
	BoundAt   time.Time `json:"bound_at"`
	// From is the session whose work this one continues (a /clear, a fork, an agent's
	// handoff): its recap and saves make the new session's note.
	From string `json:"from,omitempty"`
}

// Bind records that the session works on the project; a later Bind replaces it.
func (se *Session) Bind(binding Binding) error {
	path, err := se.path(bindingFile)
	if err != nil {
		return fmt.Errorf("bind session: %w", err)
	}
	if err := se.ensure(); err != nil {
		return err
	}
	binding.SessionID = se.ID
	data, err := json.MarshalIndent(binding, "", "  ")
	if err != nil {
		return fmt.Errorf("bind session: %w", err)
	}
	if err := durable.WriteFile(path, append(data, '\n'), 0o644); err != nil {
		return err
	}
	// Bindings are written without a lock (the last writer wins); what a killed
	// writer left is removed here.
	durable.RemoveDeadTemps(filepath.Dir(path))
	return nil
}

// Binding returns the session's binding, or nil when there is none.
func (se *Session) Binding() (*Binding, error) {
	path, err := se.path(bindingFile)
	if err != nil {
		return nil, err
	}
	return readBinding(path)
}

func readBinding(path string) (*Binding, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read binding: %w", err)
	}
	var binding Binding
	if err := json.Unmarshal(data, &binding); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &binding, nil
}

// Rebind refreshes the session's binding (after a compaction or a resume) and returns
// the project, or nil when the session has none. A bound project that no longer
// resolves is an error.
func (se *Session) Rebind(now time.Time) (*loader.Project, error) {
	binding, err := se.Binding()
	if err != nil || binding == nil {
		return nil, err
	}
	p, err := se.st.WS.Resolve(binding.Path)
	if err != nil {
		return nil, err
	}
	binding.BoundAt = now.UTC()
	return p, se.Bind(*binding)
}
