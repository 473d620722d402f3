package events

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/ctxtools/ctx/internal/claude"
	"github.com/ctxtools/ctx/internal/state"
	"github.com/ctxtools/ctx/loader"
	"github.com/ctxtools/ctx/usage"
)

// SessionStart sources, as Claude Code names them.
const (
	SourceStartup = "startup"
	SourceResume  = "resume"
	SourceCompact = "compact"
	SourceFork    = "fork"
	SourceClear   = "clear"
)

// Start is what the SessionStart hook knows.
type Start struct {
	SessionID      string
	TranscriptPath string
	Cwd            string
	Source         string
	PromptID       string
	ClaudePID      string         // $CLAUDE_PID: the claude process, the same across /clear
	Runtime        *state.Runtime // nil when the runtime folder cannot be trusted
	Paused         bool
	Client         usage.Client
	Now            time.Time
}

// OnSessionStart runs the SessionStart hook: it recovers journals crashed sessions
// left; counts a compaction (source compact) unless another signal did; gives a session
// that came from another one under a new id (a fork, /clear, a resume with a new id)
// that session's project binding; and returns what the agent is told: after a
// compaction, resume or fork the briefing; on a fresh start inside a workspace one line
// naming the project last active and how to resume it; "" when ctx has nothing useful
// to say or the session is paused.
func OnSessionStart(ctx context.Context, st *state.Store, in Start) (string, error) {
	_, err := RecoverJournals(ctx, st, in.SessionID, in.Now)
	errs := []error{err}
	if in.Source == SourceCompact {
		_, err := OnCompaction(st, Compaction{
			SessionID: in.SessionID, TranscriptPath: in.TranscriptPath, Signal: SignalSessionStart,
			PromptID: in.PromptID, Client: in.Client, Now: in.Now,
		})
		errs = append(errs, err)
	}
	if in.Source != SourceStartup && in.SessionID != state.UnknownSession {
		_, err := CarryBinding(st, in)
		errs = append(errs, err)
	}
	if in.Runtime != nil && in.ClaudePID != "" && in.SessionID != state.UnknownSession {
		errs = append(errs, in.Runtime.RecordProcessSession(in.ClaudePID, in.SessionID))
	}
	if in.Paused {
		return "", errors.Join(errs...)
	}
	var text string
	switch in.Source {
	case SourceStartup:
		text = StartupLine(st, in.SessionID, in.Cwd)
	case SourceClear:
		// After /clear the fresh context starts from the handoff note of the session
		// cleared, not from nothing: the handoff a person makes instead of waiting for
		// a compaction.
		text, err = clearNote(st, in)
		errs = append(errs, err)
	case SourceResume, SourceCompact, SourceFork:
		text, err = briefing(st, in)
		errs = append(errs, err)
	}
	return text, errors.Join(errs...)
}

// briefing is what the agent is told when a session continues: what the session did
// itself first (the save point may predate it), then the bound project's briefing.
func briefing(st *state.Store, in Start) (string, error) {
	ws := st.WS
	recap := SessionRecap(st, in.SessionID, in.Source == SourceCompact)
	p, err := st.Session(in.SessionID).Rebind(in.Now)
	if err != nil {
		return "", err
	}
	if p == nil {
		return recap.Text(time.Time{}), nil
	}
	result := ws.Load(p, loader.LoadOptions{})
	savedAt, _ := time.Parse(time.RFC3339, result.Resume.LastUpdated)
	text := recap.Text(savedAt)
	return text + loader.Briefing(result, max(loader.BriefingBytes-len(text), loader.BriefingBytes/2)), nil
}

// StartupLine is the one line a fresh session inside a workspace gets: the project the
// session is already bound to (`ctx agents start` binds before it launches), else the
// one the current folder is in, else the one whose save point is newest, and the
// command that resumes it. It is "" when there is no such project or it is finished.
func StartupLine(st *state.Store, sessionID, cwd string) string {
	ws := st.WS
	if b, err := st.Session(sessionID).Binding(); err == nil && b != nil {
		if p, err := ws.Resolve(b.Path); err == nil {
			return fmt.Sprintf("ctx: this session works on project %s (%s%s). `ctx load %s` shows where it stopped.", p.ID, p.Name, percentDone(p), p.ID)
		}
	}
	var p *loader.Project
	if id := ProjectOfDir(st, cwd); id != "" {
		p, _ = ws.Resolve(id)
	}
	if p == nil {
		var err error
		if p, err = ws.Newest(); err != nil || p == nil {
			return ""
		}
	}
	switch strings.ToUpper(p.Status) {
	case "COMPLETE", "ARCHIVED":
		return ""
	}
	return fmt.Sprintf("ctx: last active project here: %s (%s%s). To continue it, run `ctx load %s`.", p.ID, p.Name, percentDone(p), p.ID)
}

// percentDone is ", 42% done" for a project with tasks, "" without.
func percentDone(p *loader.Project) string {
	if p.Progress.TasksTotal > 0 {
		return fmt.Sprintf(", %d%% done", p.Progress.Percent)
	}
	return ""
}

// CarryBinding gives a session that has no binding the binding of the session it came
// from, and returns it (nil when there is none to carry). The parent is, first, the
// session the same claude process last started ($CLAUDE_PID: /clear and /branch keep
// the process), else the bound session whose transcript begins with the same message
// (a fork or a resume under a new id copies the conversation, uuids and all, into the
// new transcript). A session with no id of its own is never bound this way.
func CarryBinding(st *state.Store, in Start) (*state.Binding, error) {
	se := st.Session(in.SessionID)
	if existing, err := se.Binding(); err != nil || existing != nil {
		return nil, err
	}
	var parent *state.Binding
	if in.Runtime != nil && in.ClaudePID != "" {
		if prev := in.Runtime.ProcessSession(in.ClaudePID); prev != "" && prev != in.SessionID {
			parent, _ = st.Session(prev).Binding()
		}
	}
	if parent == nil && in.TranscriptPath != "" {
		parent = parentByTranscript(st, in.SessionID, in.TranscriptPath)
	}
	if parent == nil {
		return nil, nil
	}
	carried := state.Binding{SessionID: in.SessionID, ProjectID: parent.ProjectID, Path: parent.Path, BoundAt: in.Now.UTC(), From: parent.SessionID}
	return &carried, se.Bind(carried)
}

// bindingsTried bounds how many bound sessions are tried as a fork's parent, newest
// binding first.
const bindingsTried = 64

// parentByTranscript finds the bound session whose transcript, beside the new one in
// Claude Code's project folder, holds the new transcript's first message.
func parentByTranscript(st *state.Store, sessionID, transcript string) *state.Binding {
	first := claude.FirstMessageUUID(transcript)
	if first == "" {
		return nil
	}
	for _, binding := range st.RecentBindings(sessionID, bindingsTried) {
		safe, err := state.SafeID(binding.SessionID)
		if err != nil || safe != binding.SessionID {
			continue // an id that is no file name names no transcript
		}
		if claude.HoldsMessage(filepath.Join(filepath.Dir(transcript), binding.SessionID+".jsonl"), first) {
			return &binding
		}
	}
	return nil
}

// carryTries is how many Stops of a session look for its parent before giving up.
const carryTries = 3

// CarryOnce is CarryBinding for the hooks after SessionStart: a fork's transcript holds
// none of its parent's messages yet when its SessionStart and first prompt run (the
// copy is written with the first reply), so the Stop hook looks again. Claude Code
// writes its transcript lazily, so the hook first waits, briefly, for the reply's line.
// A marker in the runtime folder counts the looks: a few, then never again.
func CarryOnce(st *state.Store, rt *state.Runtime, sessionID, transcript string, now time.Time) error {
	if rt == nil || transcript == "" || sessionID == state.UnknownSession {
		return nil
	}
	tries, ok := rt.CarryTries(sessionID)
	if !ok || tries >= carryTries {
		return nil
	}
	usage.WaitForLine(transcript, []byte(`"assistant"`), carryWait) // however the line is spaced
	if claude.FirstMessageUUID(transcript) == "" {
		return nil // nothing to match yet: the next Stop looks again
	}
	carried, err := CarryBinding(st, Start{SessionID: sessionID, TranscriptPath: transcript, Now: now})
	next := tries + 1
	if carried != nil {
		next = carryTries
	}
	return errors.Join(err, rt.SetCarryTries(sessionID, next))
}

// carryWait bounds the wait for the reply's transcript line at a Stop.
const carryWait = time.Second
