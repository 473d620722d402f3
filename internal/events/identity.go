package events

import (
	"errors"

	"github.com/ctxtools/ctx/internal/state"

	"github.com/ctxtools/ctx/internal/claude"
)

// EnvClaudePID names the claude process in the environment of its hooks and tools.
const EnvClaudePID = "CLAUDE_PID"

// ErrNoSession says that no agent session could be found for a command run by hand or
// by an agent: neither $CLAUDE_CODE_SESSION_ID nor Claude Code's record of the
// process named by $CLAUDE_PID says which.
var ErrNoSession = errors.New("no agent session found: $" + state.EnvSessionID + " unset, $" + EnvClaudePID +
	" names none; pass --session-id ID")

// CurrentID returns the agent session a command runs in, and where it was found:
// $CLAUDE_CODE_SESSION_ID, else the sessionId of ~/.claude/sessions/<pid>.json for the
// claude process $CLAUDE_PID (set for hooks and tools by every Claude Code, also those
// that do not set the session id; the file is Claude Code's own record of an
// interactive session). It returns "" when neither says.
func CurrentID(getenv func(string) string) (id, source string) {
	if id := getenv(state.EnvSessionID); id != "" {
		return id, "$" + state.EnvSessionID
	}
	if id := claude.SessionOfProcess(getenv, getenv(EnvClaudePID)); id != "" {
		return id, "$" + EnvClaudePID + " " + getenv(EnvClaudePID)
	}
	return "", ""
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
	return claude.FindTranscript(getenv, id)
}
