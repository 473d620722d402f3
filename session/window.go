package session

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/ctxtools/ctx/internal/durable"
	"github.com/ctxtools/ctx/loader"
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

// windowFile is where a session's window is kept: the workspace's .ctx/state/windows/,
// else the private runtime folder.
func windowFile(ws *loader.Workspace, rt *Runtime, sessionID string) (string, error) {
	safe, err := SafeID(sessionID)
	if err != nil {
		return "", err
	}
	switch {
	case ws != nil:
		return filepath.Join(ws.StatePath("state"), "windows", safe+".json"), nil
	case rt != nil:
		return filepath.Join(rt.Dir, "window-"+safe+".json"), nil
	}
	return "", errors.New("no workspace and no runtime folder to record the window in")
}

// RecordWindow keeps the window for the session. The status line runs several times a
// second: an unchanged record is not written again.
func RecordWindow(ws *loader.Workspace, rt *Runtime, rec WindowRecord) error {
	if rec.Window <= 0 {
		return nil
	}
	path, err := windowFile(ws, rt, rec.SessionID)
	if err != nil {
		return err
	}
	if cur, err := readWindow(path); err == nil && cur.Window == rec.Window && cur.Model == rec.Model {
		return nil
	}
	if ws != nil {
		if err := loader.EnsureStateDir(ws.StatePath("state")); err != nil {
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
func KnownWindow(ws *loader.Workspace, getenv func(string) string, sessionID string) int {
	if sessionID == "" || sessionID == UnknownSession {
		return 0
	}
	if ws != nil {
		if path, err := windowFile(ws, nil, sessionID); err == nil {
			if rec, err := readWindow(path); err == nil {
				return rec.Window
			}
		}
	}
	if rt, err := OpenRuntime(getenv); err == nil {
		if path, err := windowFile(nil, rt, sessionID); err == nil {
			if rec, err := readWindow(path); err == nil {
				return rec.Window
			}
		}
	}
	return 0
}
