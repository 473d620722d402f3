package session

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/ctxtools/ctx/internal/claude"
	"github.com/ctxtools/ctx/internal/durable"
	"github.com/ctxtools/ctx/loader"
)

// Cycle is one agent session's state between two compactions: whether it has been
// warned and auto-saved in this cycle, and what the hooks last saw.
type Cycle struct {
	SessionID      string  `json:"session_id"`
	Number         int     `json:"cycle"` // compactions seen in this session
	Warned         bool    `json:"warned"`
	AutoSaved      bool    `json:"auto_saved"`
	TranscriptPath string  `json:"transcript_path,omitempty"`
	LastPercent    float64 `json:"last_percent"`
	LastTokens     int     `json:"last_tokens"`
	// Held is a line for the agent that came while the session was paused (an
	// auto-save's), given at the first check after `ctx resume`.
	Held      []string  `json:"held,omitempty"`
	UpdatedAt time.Time `json:"updated_at"`
	// StartedAt is when this cycle began: the last compaction counted, or the first
	// time the hooks saw the session. A compact_boundary older than it is history.
	StartedAt time.Time `json:"started_at,omitzero"`
	// Compaction identifies the last compaction counted, so that its other signals
	// (PreCompact, PostCompact, SessionStart compact, the transcript's boundary line)
	// never count it again.
	Compaction *CompactionMark `json:"compaction,omitempty"`
	// ScannedTo is how far the transcript has been searched for compact_boundary lines.
	ScannedTo int64 `json:"scanned_to,omitempty"`
}

// CompactionMark is what identifies one compaction across its signals: the prompt it
// happened in (PreCompact, PostCompact and SessionStart carry the same prompt_id) and
// the uuid of its compact_boundary line, each filled in as soon as a signal knows it.
type CompactionMark struct {
	PromptID string    `json:"prompt_id,omitempty"`
	Boundary string    `json:"boundary,omitempty"`
	Signal   string    `json:"signal"` // the signal that counted it
	At       time.Time `json:"at"`
}

// start is when the cycle began, for one that predates StartedAt: its last update.
func (c *Cycle) start() time.Time {
	if !c.StartedAt.IsZero() {
		return c.StartedAt
	}
	return c.UpdatedAt
}

// Cycles stores cycle state under a workspace's .ctx/state/cycles/.
type Cycles struct {
	StateDir string
}

func (c Cycles) path(sessionID string) (string, error) {
	safe, err := SafeID(sessionID)
	if err != nil {
		return "", err
	}
	return filepath.Join(c.StateDir, "cycles", safe+".json"), nil
}

// Update reads the session's cycle, lets fn change it, and writes it back, all under a
// lock so that hooks racing on one session never lose a flag.
func (c Cycles) Update(sessionID string, fn func(*Cycle) error) (*Cycle, error) {
	path, err := c.path(sessionID)
	if err != nil {
		return nil, err
	}
	if err := loader.EnsureStateDir(c.StateDir); err != nil {
		return nil, err
	}
	if err := durable.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	var cur Cycle
	err = durable.WithLock(path, func() error {
		cur = Cycle{SessionID: sessionID}
		data, err := os.ReadFile(path)
		switch {
		case errors.Is(err, os.ErrNotExist):
		case err != nil:
			return err
		default:
			// A damaged state file starts a fresh cycle rather than stopping the hook.
			_ = json.Unmarshal(data, &cur)
		}
		if err := fn(&cur); err != nil {
			return err
		}
		out, err := json.Marshal(cur)
		if err != nil {
			return fmt.Errorf("cycle state: %w", err)
		}
		return durable.ReplaceLocked(path, append(out, '\n'), 0o644)
	})
	if err != nil {
		return nil, err
	}
	return &cur, nil
}

// Get returns the session's cycle without changing it (a zero cycle when none).
func (c Cycles) Get(sessionID string) (*Cycle, error) {
	path, err := c.path(sessionID)
	if err != nil {
		return nil, err
	}
	cur := &Cycle{SessionID: sessionID}
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return cur, nil
	}
	if err != nil {
		return nil, err
	}
	_ = json.Unmarshal(data, cur)
	return cur, nil
}

// TranscriptFor finds a session's transcript: the one the hooks last saw, else Claude
// Code's own file for it (<config>/projects/*/<id>.jsonl, config being
// $CLAUDE_CONFIG_DIR or ~/.claude). It returns "" when there is none.
func TranscriptFor(ws *loader.Workspace, id string, getenv func(string) string) string {
	if c, err := (Cycles{StateDir: ws.StatePath("state")}).Get(id); err == nil && c.TranscriptPath != "" {
		return c.TranscriptPath
	}
	safe, err := SafeID(id)
	if err != nil || safe != id {
		return "" // an id that is no file name cannot name a transcript
	}
	return claude.FindTranscript(getenv, id)
}

// staleCycleAge is when a cycle's session is long over: Claude Code resumes sessions
// for days, not months.
const staleCycleAge = 30 * 24 * time.Hour

// PruneCycles removes cycle state no session touched for a month, stopping at deadline.
func (c Cycles) PruneCycles(now, deadline time.Time) int {
	return removeOlder(filepath.Join(c.StateDir, "cycles"), staleCycleAge, now, deadline)
}

// removeOlder removes the plain files in dir not modified for age before now, stopping
// at deadline, and returns how many it removed: state of sessions long over.
func removeOlder(dir string, age time.Duration, now, deadline time.Time) int {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0
	}
	removed := 0
	for _, e := range entries {
		if time.Now().After(deadline) {
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
