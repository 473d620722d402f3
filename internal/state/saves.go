package state

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/ctxtools/ctx/internal/durable"
)

// A session's saves are what its own `ctx save` and `ctx close` said: the newest
// summary and next step, and the decisions and blockers recorded in the session. A
// handoff note gives them to the fresh session that continues the work (the save point
// holds them too, but not which session wrote them).

// Saves is one session's saves.json.
type Saves struct {
	Count     int       `json:"count"`
	At        time.Time `json:"at"`
	Summary   string    `json:"summary,omitempty"`
	Next      string    `json:"next,omitempty"`
	Decisions []string  `json:"decisions,omitempty"`
	Blockers  []string  `json:"blockers,omitempty"`
}

// savesKept bounds the decisions and blockers a session's saves keep: the newest.
const savesKept = 20

// RecordSave adds one save of the session.
func (se *Session) RecordSave(at time.Time, summary, next string, decisions, blockers []string) error {
	if se.ID == "" || se.ID == UnknownSession {
		return nil
	}
	path, err := se.path(savesFile)
	if err != nil {
		return err
	}
	if err := se.ensure(); err != nil {
		return fmt.Errorf("record the save: %w", err)
	}
	s, err := se.Saves()
	if err != nil {
		s = &Saves{} // an unreadable record is replaced: it only feeds a note
	}
	s.Count++
	s.At = at.UTC()
	if summary != "" {
		s.Summary = summary
	}
	if next != "" {
		s.Next = next
	}
	s.Decisions = newest(append(s.Decisions, decisions...), savesKept)
	s.Blockers = newest(append(s.Blockers, blockers...), savesKept)
	data, err := json.Marshal(s)
	if err != nil {
		return err
	}
	return durable.ReplaceFile(path, append(data, '\n'), 0o644)
}

// Saves returns the session's saves; an empty record when it never saved.
func (se *Session) Saves() (*Saves, error) {
	path, err := se.path(savesFile)
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return &Saves{}, nil
	}
	if err != nil {
		return nil, err
	}
	var s Saves
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &s, nil
}

func newest(list []string, n int) []string {
	return list[max(0, len(list)-n):]
}
