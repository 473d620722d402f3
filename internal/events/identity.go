package events

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/ctxtools/ctx/internal/state"
)

// EnvClaudePID names the claude process in the environment of its hooks and tools.
const EnvClaudePID = "CLAUDE_PID"

// ErrNoSession says that no agent session could be found for a command run by hand or
// by an agent: neither $CLAUDE_CODE_SESSION_ID nor Claude Code's record of the
// process named by $CLAUDE_PID says which.
var ErrNoSession = errors.New("no agent session found: $" + state.EnvSessionID + " is not set and $" + EnvClaudePID +
	" names no running Claude Code session; pass --session-id ID")

// CurrentID returns the agent session a command runs in, and where it was found:
// $CLAUDE_CODE_SESSION_ID, else the sessionId of ~/.claude/sessions/<pid>.json for the
// claude process $CLAUDE_PID (set for hooks and tools by every Claude Code, also those
// that do not set the session id; the file is Claude Code's own record of an
// interactive session). It returns "" when neither says.
func CurrentID(getenv func(string) string) (id, source string) {
	if id := getenv(state.EnvSessionID); id != "" {
		return id, "$" + state.EnvSessionID
	}
	if id := SessionOfProcess(getenv, getenv(EnvClaudePID)); id != "" {
		return id, "$" + EnvClaudePID + " " + getenv(EnvClaudePID)
	}
	return "", ""
}

// SessionOfProcess returns the session id Claude Code records for its process pid in
// <config>/sessions/<pid>.json, or "" when there is no such record.
func SessionOfProcess(getenv func(string) string, pid string) string {
	if n, err := strconv.Atoi(pid); err != nil || n <= 0 || strconv.Itoa(n) != pid {
		return "" // not a process id: never a path
	}
	config, err := claudeConfigDir(getenv)
	if err != nil {
		return ""
	}
	data, err := os.ReadFile(filepath.Join(config, "sessions", pid+".json"))
	if err != nil {
		return ""
	}
	var rec struct {
		PID       int    `json:"pid"`
		SessionID string `json:"sessionId"`
	}
	if json.Unmarshal(data, &rec) != nil || (rec.PID != 0 && strconv.Itoa(rec.PID) != pid) {
		return ""
	}
	return rec.SessionID
}

// claudeConfigDir is Claude Code's folder: $CLAUDE_CONFIG_DIR, else ~/.claude.
func claudeConfigDir(getenv func(string) string) (string, error) {
	if dir := getenv("CLAUDE_CONFIG_DIR"); dir != "" {
		return dir, nil
	}
	home := getenv("HOME")
	if home == "" {
		var err error
		if home, err = os.UserHomeDir(); err != nil {
			return "", fmt.Errorf("claude config folder: %w", err)
		}
	}
	return filepath.Join(home, ".claude"), nil
}

// TranscriptFor finds a session's transcript: the one the hooks last saw, else Claude
// Code's own file for it (<config>/projects/*/<id>.jsonl, config being
// $CLAUDE_CONFIG_DIR or ~/.claude). It returns "" when there is none.
func TranscriptFor(st *state.Store, id string, getenv func(string) string) string {
	if c, err := st.Session(id).Cycle(); err == nil && c.TranscriptPath != "" {
		return c.TranscriptPath
	}
	safe, err := state.SafeID(id)
	if err != nil || safe != id {
		return "" // an id that is no file name cannot name a transcript
	}
	config, err := claudeConfigDir(getenv)
	if err != nil {
		return ""
	}
	matches, _ := filepath.Glob(filepath.Join(config, "projects", "*", id+".jsonl"))
	if len(matches) == 0 {
		return ""
	}
	return matches[0]
}
