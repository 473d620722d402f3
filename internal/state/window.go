package state

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/ctxtools/ctx/internal/durable"
)

// WindowRecord is the context window Claude Code reported for a session to its status
// line: the one figure of the window that only Claude Code knows for sure (a model's
// window depends on the plan, and the transcript drops "[1m]").
type WindowRecord struct {
	SessionID string    `json:"session_id"`
	Window    int       `json:"window"`
	Model     string    `json:"model,omitempty"`
	At        time.Time `json:"recorded_at"`
}

// RecordWindow keeps the window for the session: in its folder in a workspace, else in
// the private runtime folder. The status line runs several times a second: an
// unchanged record is not written again.
func (s *Store) RecordWindow(rec WindowRecord) error {
	if rec.Window <= 0 {
		return nil
	}
	path, err := s.windowPath(rec.SessionID)
	if err != nil {
		return err
	}
	if cur, err := readWindow(path); err == nil && cur.Window == rec.Window && cur.Model == rec.Model {
		return nil
	}
	if s.WS != nil {
		if err := s.Session(rec.SessionID).ensure(); err != nil {
			return err
		}
	}
	if err := durable.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	data, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("window record: %w", err)
	}
	return durable.ReplaceFile(path, append(data, '\n'), 0o600)
}

// windowPath is where a session's window is kept: its folder in a workspace, else the
// runtime folder.
func (s *Store) windowPath(sessionID string) (string, error) {
	if s.WS != nil {
		return s.Session(sessionID).path(windowFile)
	}
	safe, err := SafeID(sessionID)
	if err != nil {
		return "", err
	}
	rt, err := s.Runtime()
	if err != nil {
		return "", errors.New("no workspace and no runtime folder to record the window in")
	}
	return filepath.Join(rt.Dir, "window-"+safe+".json"), nil
}

func readWindow(path string) (*WindowRecord, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var rec WindowRecord
	if err := json.Unmarshal(data, &rec); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &rec, nil
}

// KnownWindow returns the window the status line recorded for the session, from the
// workspace or the runtime folder; 0 when none was.
func (s *Store) KnownWindow(sessionID string) int {
	if sessionID == "" || sessionID == UnknownSession {
		return 0
	}
	if s.WS != nil {
		if path, err := s.Session(sessionID).path(windowFile); err == nil {
			if rec, err := readWindow(path); err == nil {
				return rec.Window
			}
		}
	}
	if safe, err := SafeID(sessionID); err == nil {
		if rt, err := s.Runtime(); err == nil {
			if rec, err := readWindow(filepath.Join(rt.Dir, "window-"+safe+".json")); err == nil {
				return rec.Window
			}
		}
	}
	return 0
}
