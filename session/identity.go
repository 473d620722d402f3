package session

import (
	"errors"

	"github.com/ctxtools/ctx/internal/claude"
)

// EnvClaudePID names the claude process in the environment of its hooks and tools.
const EnvClaudePID = "CLAUDE_PID"

// ErrNoSession says that no agent session could be found for a command run by hand or
// by an agent: neither $CLAUDE_CODE_SESSION_ID nor Claude Code's record of the
// process named by $CLAUDE_PID says which.
var ErrNoSession = errors.New("no agent session found: $" + EnvSessionID + " is not set and $" + EnvClaudePID +
	" names no running Claude Code session; pass --session-id ID")

// CurrentID returns the agent session a command runs in, and where it was found:
// $CLAUDE_CODE_SESSION_ID, else the sessionId of ~/.claude/sessions/<pid>.json for the
// claude process $CLAUDE_PID (set for hooks and tools by every Claude Code, also those
// that do not set the session id; the file is Claude Code's own record of an
// interactive session). It returns "" when neither says.
func CurrentID(getenv func(string) string) (id, source string) {
	if id := getenv(EnvSessionID); id != "" {
		return id, "$" + EnvSessionID
	}
	if id := SessionOfProcess(getenv, getenv(EnvClaudePID)); id != "" {
		return id, "$" + EnvClaudePID + " " + getenv(EnvClaudePID)
	}
	return "", ""
}

// SessionOfProcess returns the session id Claude Code records for its process pid in
// <config>/sessions/<pid>.json, or "" when there is no such record.
func SessionOfProcess(getenv func(string) string, pid string) string {
	return claude.SessionOfProcess(getenv, pid)
}
