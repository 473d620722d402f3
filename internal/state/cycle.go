package state

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/ctxtools/ctx/internal/durable"
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

// Began is when the cycle began, for one that predates StartedAt: its last update.
func (c *Cycle) Began() time.Time {
	if !c.StartedAt.IsZero() {
		return c.StartedAt
	}
	return c.UpdatedAt
}

// Update reads the session's cycle, lets fn change it, and writes it back, all under a
// lock so that hooks racing on one session never lose a flag.
func (se *Session) UpdateCycle(fn func(*Cycle) error) (*Cycle, error) {
	path, err := se.path(cycleFile)
	if err != nil {
		return nil, err
	}
	if err := se.ensure(); err != nil {
		return nil, err
	}
	sessionID := se.ID
	var cur Cycle
	err = durable.WithLock(context.Background(), path, func() error {
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
func (se *Session) Cycle() (*Cycle, error) {
	sessionID := se.ID
	path, err := se.path(cycleFile)
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
