package agents

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/ctxtools/ctx/internal/claude"
	"github.com/ctxtools/ctx/internal/durable"
	"github.com/ctxtools/ctx/internal/events"
	"github.com/ctxtools/ctx/internal/state"
	"github.com/ctxtools/ctx/loader"
)

// A handoff ends an agent's session when its context is full and starts a fresh one
// for the same agent, in the same tmux window and folder, whose first prompt is ctx's
// handoff note (events.HandoffNote): the work goes on without a compaction's lossy
// summary. The hooks of the agent's session drive it (OnHook): at the auto-save
// threshold they ask the agent to finish its step and record its own note; at the end
// of that turn (Stop), or after handoffBound more tool calls, they start
// `ctx agents handoff` in the background, which carries out the steps below. Each step
// is recorded before it runs, so a ctx killed at any step leaves an agent that the next
// command finishes as the new session or rolls back to the old one, never neither.

// Handoff policies.
const (
	HandoffFresh   = "fresh"   // hand off to a fresh session at the save threshold
	HandoffCompact = "compact" // let Claude Code compact, as without ctx
)

// DefaultHandoff is the policy of an agent and a workspace that say none: an agent
// works unattended, so it gets the note that ctx checks, not a summary nobody reads.
const DefaultHandoff = HandoffFresh

// Handoff reasons, as a chain's links record them.
const (
	ReasonStart   = "start"
	ReasonContext = "context" // the context reached the save threshold
	ReasonBound   = "bound"   // the agent went on working past the request
	ReasonForced  = "forced"  // `ctx agents handoff`
	ReasonFresh   = "resume-fresh"
)

// handoffBound is how many tool calls an agent may make after the request before ctx
// ends its turn and hands off with its own note: between the 90% save and Claude
// Code's compaction there are about 90,000 tokens on the default model.
const handoffBound = 5

// Link is one session of an agent's chain.
type Link struct {
	SessionID string    `json:"session_id"`
	Reason    string    `json:"reason"` // start, context, bound, forced, resume-fresh
	StartedAt time.Time `json:"started_at"`
	// At the end of the session: when, and how full its context was.
	EndedAt    *time.Time `json:"ended_at,omitempty"`
	EndPercent float64    `json:"end_percent,omitempty"`
	EndTokens  int        `json:"end_tokens,omitempty"`
	// A session started by a handoff: the note it was given (a file in the agent's
	// folder) and its size, and the check that it took.
	// Asked is when the hooks of the session before it asked for the handoff (its
	// Stop, or the end of the turn at the bound); zero for a forced one.
	Asked      *time.Time `json:"asked,omitempty"`
	Note       string     `json:"note,omitempty"`
	NoteTokens int        `json:"note_tokens,omitempty"`
	Check      string     `json:"check,omitempty"` // pending, ok, or failed: why
	Delivered  bool       `json:"delivered,omitempty"`
	Misses     int        `json:"misses,omitempty"`
	// TasksDone is the project's tasks done at the handoff: the fresh session's first
	// save must not go back from it (SaveChecked once it was looked at).
	TasksDone   int  `json:"tasks_done,omitempty"`
	SaveChecked bool `json:"save_checked,omitempty"`
}

// Check states of a handoff's fresh session.
const (
	CheckPending = "pending"
	CheckOK      = "ok"
	checkFailed  = "failed: "
)

// CheckHandoff validates a handoff policy.
func CheckHandoff(s string) (string, error) {
	switch s {
	case HandoffFresh, HandoffCompact:
		return s, nil
	}
	return "", fmt.Errorf("handoff %q: use fresh or compact", s)
}

// agentsConfig is the agents: section of .ctx/config.yaml.
type agentsConfig struct {
	Handoff string `yaml:"handoff"`
}

// Policy is the agent's handoff policy: its own, else the workspace's, else
// DefaultHandoff. A workspace value that is neither is an error.
func Policy(ws *loader.Workspace, rec *Record) (string, error) {
	if rec.Handoff != "" {
		return rec.Handoff, nil
	}
	var cfg agentsConfig
	if err := ws.ConfigSection("agents", &cfg); err != nil {
		return DefaultHandoff, err
	}
	if cfg.Handoff == "" {
		return DefaultHandoff, nil
	}
	p, err := CheckHandoff(cfg.Handoff)
	if err != nil {
		return DefaultHandoff, fmt.Errorf("agents.%w", err)
	}
	return p, nil
}

// request is a handoff asked for and not yet carried out: written by the hooks of the
// agent's session (no lock; one session writes it), removed when the handoff is done.
type request struct {
	SessionID string    `json:"session_id"`
	At        time.Time `json:"at"`
	Percent   float64   `json:"percent"`
	Tokens    int       `json:"tokens"`
	Calls     int       `json:"calls"`                   // tool calls since the request
	Launched  time.Time `json:"launched,omitempty"`      // a handoff process was started
	Deferred  string    `json:"deferred,omitempty"`      // why the last one did not happen
	Tries     int       `json:"tries,omitempty"`         // handoffs started for it
	Reason    string    `json:"launch_reason,omitempty"` // context or bound
}

func (s Store) requestPath(id string) string { return filepath.Join(s.Dir, id, "handoff-request.json") }

func (s Store) readRequest(id string) *request {
	data, err := os.ReadFile(s.requestPath(id))
	if err != nil {
		return nil
	}
	var r request
	if json.Unmarshal(data, &r) != nil {
		return nil
	}
	return &r
}

func (s Store) writeRequest(id string, r *request) error {
	data, err := json.Marshal(r)
	if err != nil {
		return err
	}
	return durable.ReplaceFile(s.requestPath(id), append(data, '\n'), 0o600)
}

// HookEvent is what OnHook is told of one hook of an agent's session.
type HookEvent struct {
	Event     string // Claude Code's event name
	SessionID string
	Tool      string
	File      string // the file a tool call named
	Cwd       string
	Prompt    string
	Now       time.Time
}

// HookReply is what OnHook has for the agent: text (beside the hook's own), and, to
// end the turn after a tool call, the reason Claude Code shows.
type HookReply struct {
	Text string
	Stop string
}

// OnHook is the agent's part of a hook of its session: the handoff request at the
// auto-save threshold, the bound on the turn after it, the handoff at the end of the
// turn, and the check that a handoff's fresh session took the work up. It never fails a
// hook: what goes wrong is recorded on the agent.
func OnHook(ws *loader.Workspace, st *state.Store, id string, ev HookEvent) HookReply {
	switch ev.Event {
	case claude.EventUserPromptSubmit, claude.EventPostToolUse, claude.EventStop:
	default:
		return HookReply{}
	}
	store := NewStore(ws)
	rec, err := store.Load(id)
	if err != nil || rec.Claude.SessionID != ev.SessionID {
		return HookReply{} // not the agent's current session (a subagent, a session gone)
	}
	if n := len(rec.Chain); n > 0 && rec.Chain[n-1].SessionID == ev.SessionID {
		if l := rec.Chain[n-1]; l.Check == CheckPending || l.Check == CheckOK && !l.SaveChecked {
			checkHandoff(ws, st, store, rec, ev)
		}
	}
	if rec.State != Active || rec.Op != nil {
		return HookReply{}
	}
	req := store.readRequest(id)
	if req != nil && req.SessionID != ev.SessionID {
		req = nil // a request of an earlier session: that one is over
	}
	switch ev.Event {
	case claude.EventUserPromptSubmit, claude.EventPostToolUse:
		if req == nil {
			return requestAtThreshold(ws, st, store, rec, ev)
		}
		if ev.Event != claude.EventPostToolUse || !req.Launched.IsZero() {
			return HookReply{}
		}
		req.Calls++
		if req.Calls < handoffBound || req.Tries >= handoffTries {
			_ = store.writeRequest(id, req)
			return HookReply{}
		}
		if !launchHandoff(ws, store, rec, req, ReasonBound, ev.Now) {
			return HookReply{}
		}
		return HookReply{Stop: fmt.Sprintf("ctx: handing off to a fresh session (context at %.0f%%)", req.Percent)}
	case claude.EventStop:
		if req != nil && req.Launched.IsZero() && req.Tries < handoffTries {
			launchHandoff(ws, store, rec, req, ReasonContext, ev.Now)
		}
	}
	return HookReply{}
}

// handoffTries bounds the handoffs started for one request: one that cannot happen
// (it keeps finding a prompt waiting, ctx cannot start) is reported, not retried at
// every tool call.
const handoffTries = 3

// requestAtThreshold asks for a handoff once the session's auto-save happened (the
// hook's own usage check just made it, or an earlier one did).
func requestAtThreshold(ws *loader.Workspace, st *state.Store, store Store, rec *Record, ev HookEvent) HookReply {
	c, err := st.Session(ev.SessionID).Cycle()
	if err != nil || !c.AutoSaved {
		return HookReply{}
	}
	if p, err := Policy(ws, rec); err != nil || p != HandoffFresh {
		return HookReply{} // a policy ctx cannot read hands nothing off: Claude Code compacts
	}
	req := &request{SessionID: ev.SessionID, At: ev.Now.UTC(), Percent: c.LastPercent, Tokens: c.LastTokens}
	if err := store.writeRequest(rec.ID, req); err != nil {
		return HookReply{}
	}
	store.Feed(rec.ID, "agent.handoff_requested", map[string]any{"session_id": ev.SessionID, "percent": c.LastPercent})
	return HookReply{Text: fmt.Sprintf("ctx: this agent hands off to a fresh session at the end of this turn instead of compacting. Finish the step you are on, record where you are with `ctx save --summary \"...\" --next \"...\"` (the next step, precisely), then end your turn: the fresh session starts from that note. After %d more tool calls ctx ends the turn and hands off with its own note.", handoffBound)}
}

// launchHandoff starts `ctx agents handoff` in the background for the request: the
// hook that asks must return before its session can end.
func launchHandoff(ws *loader.Workspace, store Store, rec *Record, req *request, reason string, now time.Time) bool {
	if p, err := Policy(ws, rec); err != nil || p != HandoffFresh {
		_ = os.Remove(store.requestPath(rec.ID)) // the policy changed since the request
		return false
	}
	req.Launched, req.Reason, req.Tries = now.UTC(), reason, req.Tries+1
	if err := store.writeRequest(rec.ID, req); err != nil {
		return false
	}
	if err := spawn(ws, store, rec.ID, req.SessionID, reason); err != nil {
		req.Launched, req.Deferred = time.Time{}, "could not start the handoff: "+err.Error()
		_ = store.writeRequest(rec.ID, req)
		store.Feed(rec.ID, "agent.op_failed", map[string]any{"op": "handoff", "error": err.Error()})
		return false
	}
	return true
}

// hookWait is how long a handoff the hooks started waits for the session to be idle: a
// prompt waiting for the person, a turn a person started meanwhile, are waited out.
const hookWait = 15 * time.Minute

// spawn starts the handoff process (tests replace it).
var spawn = spawnHandoff

// spawnHandoff runs this ctx as `ctx agents handoff`, detached, without the agent's
// mark (ending the agent's processes must not end it), its output in the agent's
// folder.
func spawnHandoff(ws *loader.Workspace, store Store, id, sessionID, reason string) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	log, err := os.OpenFile(filepath.Join(store.AgentDir(id), "handoff.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer func() { _ = log.Close() }()
	cmd := exec.Command(self, "--workspace", ws.Root, "agents", "handoff", id, "--from-session", sessionID, "--reason", reason,
		"--wait", hookWait.String())
	drop := map[string]bool{}
	for _, v := range identityVars {
		drop[v] = true
	}
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); !drop[k] {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Dir, cmd.Stdout, cmd.Stderr = ws.Root, log, log
	detach(cmd)
	if err := cmd.Start(); err != nil {
		return err
	}
	return cmd.Process.Release()
}

// checkHandoff checks, from the first hooks of a handoff's fresh session, that the
// note reached it (its first prompt is the note) and that it went on with the
// project's work (its first tool calls touch the agent's folder, and a save of it does
// not go back). A session that does not take the work up is reported on the agent.
func checkHandoff(ws *loader.Workspace, st *state.Store, store Store, rec *Record, ev HookEvent) {
	// The tasks done once the session saved, read before the lock; -1 before its save.
	tasks := -1
	if s, err := st.Session(ev.SessionID).Saves(); err == nil && s.Count > 0 {
		if p, err := ws.Resolve(rec.ProjectPath); err == nil {
			tasks = p.Progress.TasksCompleted
		}
	}
	pending := rec.Chain[len(rec.Chain)-1].Check == CheckPending
	if !pending && tasks < 0 {
		return // checked; its first save is still to come
	}
	verdict := ""
	_, _ = store.Update(rec.ID, func(r *Record) error {
		n := len(r.Chain)
		if n == 0 || r.Chain[n-1].SessionID != ev.SessionID {
			return nil
		}
		l := &r.Chain[n-1]
		if tasks >= 0 && !l.SaveChecked {
			l.SaveChecked = true
			if tasks < l.TasksDone && !strings.HasPrefix(l.Check, checkFailed) {
				l.Check = fmt.Sprintf("%sits first save went back to %d tasks done, from %d at the handoff", checkFailed, tasks, l.TasksDone)
			}
		}
		if l.Check != CheckPending {
			if strings.HasPrefix(l.Check, checkFailed) && r.Attention == "" {
				r.Attention = fmt.Sprintf("the handoff to session %s did not take: %s", l.SessionID, strings.TrimPrefix(l.Check, checkFailed))
				verdict = r.Attention
			}
			return nil
		}
		switch ev.Event {
		case claude.EventUserPromptSubmit:
			if strings.HasPrefix(strings.TrimSpace(ev.Prompt), events.NoteFirstLine) {
				l.Delivered = true
			}
		case claude.EventPostToolUse:
			switch {
			case !l.Delivered:
				l.Check = checkFailed + "the handoff note never reached the fresh session's first prompt"
			case belongs(r, ev):
				l.Check = CheckOK
			default:
				if l.Misses++; l.Misses >= 3 {
					l.Check = checkFailed + "its first tool calls worked outside the agent's folder"
				}
			}
		case claude.EventStop:
			l.Check = checkFailed + "its first turn ended without touching the project"
			if !l.Delivered {
				l.Check = checkFailed + "the handoff note never reached the fresh session's first prompt"
			}
		}
		switch {
		case l.Check == CheckOK:
			r.Attention = ""
			verdict = CheckOK
		case strings.HasPrefix(l.Check, checkFailed):
			r.Attention = fmt.Sprintf("the handoff to session %s did not take: %s", l.SessionID, strings.TrimPrefix(l.Check, checkFailed))
			verdict = r.Attention
		}
		return nil
	})
	switch {
	case verdict == CheckOK:
		store.Feed(rec.ID, "agent.handoff_checked", map[string]any{"session_id": ev.SessionID})
	case verdict != "":
		store.Feed(rec.ID, "agent.attention", map[string]any{"session_id": ev.SessionID, "why": verdict})
		Wake(store.WS)
	}
}

// belongs reports whether a tool call of the agent's session is the project's work: a
// file in the agent's folder, or a command run there.
func belongs(r *Record, ev HookEvent) bool {
	inside := func(path string) bool {
		if path == "" {
			return false
		}
		if !filepath.IsAbs(path) {
			path = filepath.Join(r.Cwd, path)
		}
		rel, err := filepath.Rel(r.Cwd, filepath.Clean(path))
		return err == nil && filepath.IsLocal(rel) || rel == "."
	}
	if ev.File != "" {
		return inside(ev.File)
	}
	return inside(ev.Cwd)
}

// HandoffOptions say how to hand off.
type HandoffOptions struct {
	Reason string // context, bound or forced
	// FromSession hands off only this session: a handoff asked for by a session that
	// is already over has nothing to do.
	FromSession string
	Wait        time.Duration // how long to wait for the session to be idle
	NoWait      bool          // return once the fresh session is launched
}

// Handoff ends the agent's session and starts a fresh one that continues the work
// from ctx's handoff note. It waits for a safe point (the session idle: never in the
// middle of a tool call, never while a permission prompt waits) and refuses a paused
// agent.
func (a *Agents) Handoff(rec *Record, o HandoffOptions) (*Record, error) {
	panes, err := a.Tmux.Panes()
	if err != nil {
		return nil, err
	}
	if rec, err = a.reconcile(rec, panes); err != nil {
		return nil, err
	}
	if o.FromSession != "" && rec.Claude.SessionID != o.FromSession {
		return rec, nil // handed off already
	}
	if err := ready(rec, EvHandoff); err != nil {
		return nil, err
	}
	// A handoff the hooks started waits out a prompt (the person answers it, the turn
	// goes on); one a person asks for is refused while a prompt waits.
	if err := a.handoffPoint(rec, o.Wait, o.FromSession == "", o.Reason); err != nil {
		if req := a.Store.readRequest(rec.ID); req != nil && o.FromSession != "" {
			req.Launched, req.Deferred = time.Time{}, err.Error() // the next Stop tries again
			_ = a.Store.writeRequest(rec.ID, req)
			if req.Tries >= handoffTries {
				_, _ = a.Store.Update(rec.ID, func(r *Record) error {
					r.Attention = "the handoff could not happen: " + err.Error()
					return nil
				})
			}
		}
		a.Store.Feed(rec.ID, "agent.handoff_deferred", map[string]any{"why": err.Error()})
		return nil, err
	}
	reason := firstOf(o.Reason, ReasonForced)
	rec, err = a.begin(rec.ID, EvHandoff, Op{Kind: "handoff", Step: "note", Session: NewSessionID(), Reason: reason}, nil)
	if err != nil {
		return nil, err
	}
	a.Store.Feed(rec.ID, "agent.handoff", map[string]any{"reason": reason, "from": rec.Claude.SessionID, "to": rec.Op.Session})
	return a.finishHandoff(rec, o)
}

// handoffPoint waits until the session is idle: Claude Code's own record of the
// process says idle (not busy, not waiting on a permission prompt), or, without one,
// its hooks last reported a finished turn.
func (a *Agents) handoffPoint(rec *Record, wait time.Duration, refuseAtPrompt bool, reason string) error {
	deadline := time.Now().Add(wait)
	for {
		idle, prompt, what := a.sessionIdle(rec, reason)
		switch {
		case idle:
			return nil
		case prompt != "" && refuseAtPrompt:
			return &NotNowError{Msg: fmt.Sprintf("handoff %s: the agent waits on a %s prompt; answer it first (ctx agents open %s)", rec.ID, prompt, rec.Name)}
		case time.Now().After(deadline):
			return &NotNowError{Msg: fmt.Sprintf("handoff %s: the agent is still %s; try again when its turn ends", rec.ID, what)}
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// sessionIdle reports whether the agent's session is idle, from Claude Code's own
// record of the process (idle, busy, waiting) or, without one, from its hooks: a
// finished turn, or a turn ctx itself ended at the bound (no Stop follows that). prompt
// names a prompt that waits for the person; what says what it does instead.
func (a *Agents) sessionIdle(rec *Record, reason string) (idle bool, prompt, what string) {
	status, waitingFor := "", ""
	for _, s := range claude.SessionRecords(a.Getenv) {
		if s.SessionID == rec.Claude.SessionID && pidAlive(s.PID) {
			status, waitingFor = s.Status, s.WaitingFor
		}
	}
	act := a.Store.ReadStatus(rec.ID)
	switch {
	case status == claude.StatusWaiting || act.Activity == "needs_input":
		return false, firstOf(waitingFor, act.Detail, "input"), "waiting on a prompt"
	case status == claude.StatusIdle:
		return true, "", ""
	case status == "" && (act.Activity == "idle" || reason == ReasonBound && act.Event == claude.EventPostToolUse):
		return true, "", ""
	}
	return false, "", firstOf(status, act.Activity, "working")
}

// finishHandoff runs the handoff's steps from the one recorded: note (save, journal,
// the note written), end (the old session ends), launch (the fresh session starts in
// the same window), confirm. Each is idempotent.
func (a *Agents) finishHandoff(rec *Record, o HandoffOptions) (*Record, error) {
	id, op := rec.ID, *rec.Op
	noteFile := "handoff-" + op.Session + ".md"
	notePath := filepath.Join(a.Store.AgentDir(id), noteFile)
	old := rec.Claude.SessionID
	if op.Step == "note" || op.Step == "end" {
		if _, err := os.Stat(notePath); err != nil {
			if err := a.setStep(id, "handoff", "note"); err != nil {
				return nil, err
			}
			if err := a.writeNote(rec, notePath); err != nil {
				return a.rollbackHandoff(id, fmt.Errorf("handoff note: %w", err))
			}
		}
		if op.Step == "note" {
			// The note took a moment: a turn a person started meanwhile is not cut.
			if idle, _, what := a.sessionIdle(rec, op.Reason); !idle && a.paneAlive(rec) {
				return a.rollbackHandoff(id, fmt.Errorf("the agent is %s again", what))
			}
		}
		if err := a.setStep(id, "handoff", "end"); err != nil {
			return nil, err
		}
		// From here the old session is ending: the handoff only goes forward.
		a.endClaude(rec, "idle")
		if _, left := EndMarked(id, 2*time.Second); len(left) > 0 {
			_, _ = a.Store.Update(id, func(r *Record) error {
				r.LastError = fmt.Sprintf("handoff: processes %v of the old session did not end", left)
				return nil
			})
		}
		if err := a.setStep(id, "handoff", "launch"); err != nil {
			return nil, err
		}
	}
	note, err := os.ReadFile(notePath)
	if err != nil {
		return nil, fmt.Errorf("handoff %s: the note is gone: %w", id, err)
	}
	now := a.Now().UTC()
	var asked *time.Time
	if req := a.Store.readRequest(id); req != nil && req.SessionID == old && !req.Launched.IsZero() {
		asked = &req.Launched
	}
	tasksDone := 0
	if p, err := a.Store.WS.Resolve(rec.ProjectPath); err == nil {
		tasksDone = p.Progress.TasksCompleted
	}
	rec, err = a.Store.Update(id, func(r *Record) error {
		if r.Claude.SessionID == op.Session {
			return nil // launched before: launch again the same session
		}
		closeLink(a.State, r, now)
		r.Claude.PreviousSessionIDs = append(r.Claude.PreviousSessionIDs, r.Claude.SessionID)
		r.Claude.SessionID = op.Session
		r.Chain = append(r.Chain, Link{SessionID: op.Session, Reason: op.Reason, StartedAt: now, Asked: asked,
			Note: noteFile, NoteTokens: (len(note) + 3) / 4, Check: CheckPending, TasksDone: tasksDone})
		return nil
	})
	if err != nil {
		return nil, err
	}
	_ = a.State.Session(op.Session).Bind(state.Binding{ProjectID: rec.Project, Path: rec.ProjectPath, BoundAt: now, From: old})
	args := append([]string{"--session-id", op.Session}, launchFlags(rec.Claude)...)
	argv, err := a.command(rec, args, string(note))
	if err != nil {
		return nil, fmt.Errorf("handoff %s: %w", id, err)
	}
	since := a.Now().UTC()
	panes, _ := a.Tmux.Panes()
	if _, ok := panes[rec.Tmux.Session]; ok {
		err = a.Tmux.Respawn(rec.Tmux.Session, rec.Cwd, nil, argv)
	} else {
		err = a.Tmux.NewSession(rec.Tmux.Session, rec.Cwd, nil, argv)
	}
	if err != nil {
		out, _ := a.Store.Update(id, func(r *Record) error {
			r.State, r.StateSince, r.Op, r.LastError = Failed, a.Now().UTC(), nil, "handoff: "+err.Error()
			return nil
		})
		return out, fmt.Errorf("handoff %s: %w", id, err)
	}
	if err := a.setStep(id, "handoff", "confirm"); err != nil {
		return nil, err
	}
	if _, err := a.Store.Update(id, func(r *Record) error { r.Op = nil; return nil }); err != nil {
		return nil, err
	}
	_ = os.Remove(a.Store.requestPath(id))
	a.Store.Feed(id, "agent.handed_off", map[string]any{"reason": op.Reason, "session_id": op.Session, "note_tokens": (len(note) + 3) / 4})
	if o.NoWait {
		return rec, nil
	}
	out, err := a.confirm(id, since)
	if err != nil {
		_, _ = a.Store.Update(id, func(r *Record) error {
			r.Attention = "the handoff's fresh session did not start: " + err.Error()
			return nil
		})
		a.Store.Feed(id, "agent.attention", map[string]any{"why": err.Error()})
	}
	return out, err
}

// writeNote saves the old session's work (a snapshot, its journal finalized) and
// writes the note the fresh session starts from.
func (a *Agents) writeNote(rec *Record, path string) error {
	sid := rec.Claude.SessionID
	_, _ = events.AutoSave(a.State, sid, events.TriggerHandoff, nil, 0, a.Now())
	archived, _, _ := events.FinalizeJournal(context.Background(), a.State, sid, events.TriggerHandoff, nil, false, a.Now())
	why := "its context was full"
	if c, err := a.State.Session(sid).Cycle(); err == nil && c.LastPercent > 0 {
		why = fmt.Sprintf("its context reached %.0f%% of the budget before compaction", c.LastPercent)
	}
	if rec.Op != nil && rec.Op.Reason == ReasonForced {
		why = "a person asked for a handoff"
	}
	note := events.HandoffNote(a.State, events.Handoff{From: sid, Why: why, Journal: a.Store.WS.Rel(archived), Now: a.Now()})
	return durable.WriteFile(path, []byte(note), 0o600)
}

// closeLink ends the chain's newest link with the session's usage; a record from
// before chains gets its links from its session ids.
func closeLink(st *state.Store, r *Record, now time.Time) {
	if len(r.Chain) == 0 {
		for _, s := range r.Claude.PreviousSessionIDs {
			r.Chain = append(r.Chain, Link{SessionID: s, Reason: "earlier"})
		}
		r.Chain = append(r.Chain, Link{SessionID: r.Claude.SessionID, Reason: ReasonStart, StartedAt: r.CreatedAt})
	}
	l := &r.Chain[len(r.Chain)-1]
	l.EndedAt = &now
	if c, err := st.Session(l.SessionID).Cycle(); err == nil {
		l.EndPercent, l.EndTokens = c.LastPercent, c.LastTokens
	}
	if l.Check == CheckPending {
		l.Check = checkFailed + "it handed off before doing any work"
	}
}

// rollbackHandoff undoes a handoff whose old session is still there: the agent goes
// on as it was.
func (a *Agents) rollbackHandoff(id string, cause error) (*Record, error) {
	out, err := a.Store.Update(id, func(r *Record) error {
		if r.Op == nil || r.Op.Kind != "handoff" || r.Op.PID != os.Getpid() {
			return nil // not this process's handoff (any more)
		}
		r.State, r.StateSince, r.Op = Active, a.Now().UTC(), nil
		if cause != nil {
			r.LastError = cause.Error()
		}
		return nil
	})
	if req := a.Store.readRequest(id); req != nil {
		req.Launched = time.Time{}
		_ = a.Store.writeRequest(id, req)
	}
	if cause == nil {
		return out, err
	}
	a.Store.Feed(id, "agent.op_failed", map[string]any{"op": "handoff", "error": cause.Error()})
	return out, errors.Join(fmt.Errorf("handoff %s: %w; the agent keeps its session", id, cause), err)
}

// recoverHandoff settles a handoff whose ctx process died. One recoverer claims it (the
// op's pid becomes its own under the lock, only while it is still the dead one); the
// others leave it. Killed at step note with the old session busy again (a person typed
// meanwhile), it is rolled back and the request kept for the turn's Stop; otherwise it
// goes forward: the note written if missing, the old session ended (again), the fresh
// one launched, or found running. Never neither, never two.
func (a *Agents) recoverHandoff(r *Record, panes map[string]Pane) (*Record, error) {
	dead, claimed := r.Op.PID, false
	out, err := a.Store.Update(r.ID, func(rr *Record) error {
		if rr.Op != nil && rr.Op.Kind == "handoff" && rr.Op.PID == dead {
			rr.Op.PID, claimed = os.Getpid(), true
		}
		return nil
	})
	if err != nil || !claimed {
		return out, err
	}
	p, ok := panes[out.Tmux.Session]
	alive := ok && !p.Dead
	switch out.Op.Step {
	case "note":
		if idle, _, _ := a.sessionIdle(out, out.Op.Reason); alive && !idle {
			return a.rollbackHandoff(out.ID, nil)
		}
	case "launch", "confirm":
		if alive && out.Claude.SessionID == out.Op.Session {
			// The fresh session runs: the confirmation comes with the next look.
			return a.Store.Update(out.ID, func(rr *Record) error {
				if rr.Op != nil && rr.Op.Kind == "handoff" && rr.Op.PID == os.Getpid() {
					rr.Op = nil
				}
				return nil
			})
		}
	}
	return a.finishHandoff(out, HandoffOptions{NoWait: true})
}

// paneAlive reports whether the agent's tmux pane runs.
func (a *Agents) paneAlive(rec *Record) bool {
	panes, err := a.Tmux.Panes()
	p, ok := panes[rec.Tmux.Session]
	return err == nil && ok && !p.Dead
}
