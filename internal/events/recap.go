package events

import (
	"fmt"
	"strings"
	"time"

	"github.com/ctxtools/ctx/internal/state"
)

// recapFiles and recapActions bound what a recap lists: a briefing stays near 2k tokens.
const (
	recapFiles   = 8
	recapActions = 6
)

// Recap is what the hooks themselves saw of a session, for the briefing after a
// compaction or a resume: the save point may be older than the session's own work
// (the agent never saved), so the files the session changed and its last journaled
// actions are told beside it, and which is newer is said.
type Recap struct {
	Compacted bool
	Handoff   bool      // told to the fresh session that continues it: "the last session's"
	Files     []string  // workspace-relative, newest last
	Actions   []string  // one line each, oldest first
	ActionsAt time.Time // the newest action's time; zero when there are none
}

// SessionRecap gathers the recap of sessionID: its changed files (Work), and its last
// actions from its open journal or, once a compaction finalized it, from the newest
// snapshot, when that snapshot is the session's.
func SessionRecap(st *state.Store, sessionID string, compacted bool) Recap {
	r := Recap{Compacted: compacted}
	if files, err := st.Session(sessionID).Work(); err == nil {
		r.Files = files[max(0, len(files)-recapFiles):]
	}
	// A sessions folder ctx does not read (checkReadable) gives no recap; the hook
	// reports it once, from the journals' recovery.
	j := st.Journal(sessionID)
	if active, _ := j.Active(); active {
		if lines, _, err := j.Read(); err == nil {
			for _, l := range lines {
				if state.IsAction(l.Type) && l.Type != state.LineSystemEvent {
					r.Actions = append(r.Actions, state.SummarizeAction(l))
					r.ActionsAt = l.Timestamp
				}
			}
		}
	} else if id, err := st.Snapshots().Latest(); err == nil {
		if snap, err := st.Snapshots().Load(id); err == nil && snap.SessionID == sessionID && snap.IncrementalPause != nil {
			list, _ := snap.IncrementalPause["actions_summary"].([]any)
			for _, a := range list {
				m, _ := a.(map[string]any)
				if m["type"] == state.LineSystemEvent {
					continue
				}
				if s, _ := m["summary"].(string); s != "" {
					r.Actions = append(r.Actions, s)
				}
				if ts, _ := m["timestamp"].(string); ts != "" {
					r.ActionsAt, _ = time.Parse(time.RFC3339Nano, ts)
				}
			}
		}
	}
	r.Actions = r.Actions[max(0, len(r.Actions)-recapActions):]
	return r
}

// Text renders the recap for the agent, given when the save point was last written
// (zero when unknown); "" when there is nothing to say.
func (r Recap) Text(savedAt time.Time) string {
	var b strings.Builder
	if r.Compacted {
		b.WriteString("ctx: the context was just compacted. Earlier ctx notes about the context filling up (save now, finish the current step) no longer apply: carry on with the work.\n")
	}
	if len(r.Files) == 0 && len(r.Actions) == 0 {
		return b.String()
	}
	newer := ""
	if !r.ActionsAt.IsZero() && !savedAt.IsZero() {
		if r.ActionsAt.After(savedAt) {
			newer = " (newer than the save point below)"
		} else {
			newer = " (older than the save point below)"
		}
	}
	whose := "This session's"
	if r.Handoff {
		whose = "The last session's"
	}
	fmt.Fprintf(&b, "%s own work, as ctx's hooks recorded it%s:\n", whose, newer)
	if len(r.Files) > 0 {
		fmt.Fprintf(&b, "Files changed: %s\n", strings.Join(r.Files, ", "))
	}
	if len(r.Actions) > 0 {
		b.WriteString("Last actions:\n")
		for _, a := range r.Actions {
			fmt.Fprintf(&b, "- %s\n", state.OneLine(a))
		}
	}
	return b.String()
}
