package events

import (
	"cmp"
	"context"
	"errors"
	"strings"

	"github.com/ctxtools/ctx/gitstate"
	"github.com/ctxtools/ctx/guard"
	"github.com/ctxtools/ctx/internal/state"
)

// The handlers of Table's rows, one per event, each in the same shape.

// OnSessionStartHook binds the session and briefs the agent (OnSessionStart).
func OnSessionStartHook(ctx context.Context, h *Hook) (Reply, error) {
	text, err := OnSessionStart(ctx, h.St, Start{
		SessionID: h.SessionID, TranscriptPath: h.Payload.TranscriptPath, Cwd: cmp.Or(h.Payload.Cwd, h.WS().Root),
		Source: h.Payload.Source, PromptID: h.Payload.PromptID, ClaudePID: h.Getenv(EnvClaudePID), Runtime: h.runtime(),
		Paused: h.paused(), Client: h.client(), Now: h.Now,
	})
	return Reply{Context: text}, err
}

// OnPromptHook gives the pause reminder, then what the context usage calls for.
func OnPromptHook(_ context.Context, h *Hook) (Reply, error) {
	// A runtime folder that cannot be trusted means no pause flag, not no auto-save:
	// anyone who can create /tmp/ctx-<uid> first must not be able to switch it off.
	paused, turns := false, 0
	rt, err := h.St.Runtime()
	if err == nil {
		paused, turns, err = rt.CountTurn(h.SessionID)
	}
	if err != nil {
		h.Warn("%s: %v", h.Event.Command, err)
	}
	var reply Reply
	if paused {
		reply.Lines = append(reply.Lines, state.PauseReminder(turns))
	}
	lines, err := OnPrompt(h.St, Prompt{
		SessionID: h.SessionID, TranscriptPath: h.Payload.TranscriptPath, Prompt: h.Payload.Prompt,
		Paused: paused, Client: h.client(), Now: h.Now,
	})
	reply.Lines = append(reply.Lines, lines...)
	return reply, err
}

// OnToolCallHook journals the tool call. It also checks usage, because a compaction
// can come between two tool calls of one turn with no prompt before it; what it has to
// say reaches the agent with the tool's result.
func OnToolCallHook(_ context.Context, h *Hook) (Reply, error) {
	lines, err := OnToolCall(h.St, ToolCall{
		SessionID: h.SessionID, TranscriptPath: h.Payload.TranscriptPath, ToolUseID: h.Payload.ToolUseID, Tool: h.Payload.ToolName,
		Input: h.Payload.ToolInput, Paused: h.paused(), Client: h.client(), Now: h.Now,
	})
	return Reply{Context: strings.Join(lines, "\n")}, err
}

// OnStopHook journals the start of the agent's last message.
func OnStopHook(_ context.Context, h *Hook) (Reply, error) {
	return Reply{}, errors.Join(OnStop(h.St, h.SessionID, h.Payload.LastAssistantMessage, h.Now),
		CarryOnce(h.St, h.runtime(), h.SessionID, h.Payload.TranscriptPath, h.Now))
}

// OnPreCompactHook saves, finalizes the journal and counts the compaction.
func OnPreCompactHook(_ context.Context, h *Hook) (Reply, error) {
	return Reply{}, OnPreCompact(h.St, h.SessionID, h.Payload.TranscriptPath, h.Payload.Trigger, h.Payload.PromptID, h.client(), h.Now)
}

// OnPostCompactHook counts the compaction that just happened, unless PreCompact (or
// the transcript's boundary line) already did: one compaction is counted once.
func OnPostCompactHook(_ context.Context, h *Hook) (Reply, error) {
	_, err := OnCompaction(h.St, Compaction{
		SessionID: h.SessionID, TranscriptPath: h.Payload.TranscriptPath, Signal: SignalPostCompact,
		PromptID: h.Payload.PromptID, Trigger: h.Payload.Trigger, Client: h.client(), Now: h.Now,
	})
	return Reply{}, err
}

// OnSessionEndHook finalizes the journal and removes stale markers. The session's
// pause marker stays: `claude --resume` continues the same session, and a print-mode
// loop ends its process after every prompt. Only `ctx resume` ends a pause; markers no
// session touched for a week go by age.
func OnSessionEndHook(ctx context.Context, h *Hook) (Reply, error) {
	err := OnSessionEnd(ctx, h.St, h.SessionID, h.Now)
	rt, rerr := h.St.Runtime()
	if rerr != nil {
		return Reply{}, errors.Join(err, rerr)
	}
	rt.CleanStale(ctx, state.StaleMarkerAge)
	return Reply{}, err
}

// OnCleanupHook prunes what sessions long over left (Store.Prune).
func OnCleanupHook(ctx context.Context, h *Hook) (Reply, error) {
	h.St.Prune(ctx, h.Now)
	return Reply{}, nil
}

// OnGuardHook denies a destructive Bash command with a reason the agent can act on. It
// ignores the pause: it is a guard, not a nudge.
func OnGuardHook(_ context.Context, h *Hook) (Reply, error) {
	if h.Payload.ToolName != "Bash" {
		return Reply{}, nil
	}
	command := h.Payload.Command()
	if command == "" {
		return Reply{}, nil
	}
	// A config ctx cannot read never lowers protection: the built-in rules apply, and
	// the valid entries of a guard: section with a bad one stay.
	rules, cfgErr := GuardFor(h.WS(), GuardAt{Home: h.Getenv("HOME"), Cwd: h.Payload.Cwd, Dirty: gitstate.Dirty, Unique: gitstate.UniqueCommits})
	if cfgErr != nil {
		h.ConfigProblem(cfgErr, guardEntryLeft)
	}
	if v := rules.Check(command); v.Deny {
		return Reply{Deny: "ctx: " + v.Reason}, nil
	}
	return Reply{}, nil
}

// OnPermissionHook answers Claude Code's permission dialog when auto-approve is on
// (docs/guard.md has the decision table): Bash the guard refuses, or that matches
// auto_approve.deny, is denied with the reason; other Bash is allowed; edits inside
// the workspace are allowed; anything else gets no answer, and Claude Code asks the
// person. Every answer, and every request left to the person, is a line of the
// session's audit log.
func OnPermissionHook(_ context.Context, h *Hook) (Reply, error) {
	ws := h.WS()
	cfg, cfgErr := ApproveConfig(ws)
	if !AutoApproveOn(h.Getenv(EnvAutoApprove), cfg.Enabled) {
		if cfgErr != nil {
			h.ConfigProblem(cfgErr, "auto-approve stays off until it is fixed; Claude Code asks as usual")
		}
		return Reply{}, nil
	}
	rules, guardErr := GuardFor(ws, GuardAt{Home: h.Getenv("HOME"), Cwd: h.Payload.Cwd, Dirty: gitstate.Dirty, Unique: gitstate.UniqueCommits})
	ap, apErr := guard.NewApprover(rules, cfg)
	if problems := errors.Join(append([]error{cfgErr, guardErr}, PrefixEach(ConfigName(ws), apErr)...)...); problems != nil {
		h.ConfigProblem(problems, "what is broken is left out; the built-in guard rules stay in force")
	}
	req := guard.Request{Tool: h.Payload.ToolName, Command: h.Payload.Command(), File: h.Payload.ToolInput.File(),
		Cwd: cmp.Or(h.Payload.Cwd, ws.Root)}
	a := ap.Decide(req)
	auditErr := h.audit(req, a)
	var reply Reply
	switch a.Decision {
	case guard.Allow:
		reply.Permission = "allow"
	case guard.Deny:
		reply.Permission, reply.Message = "deny", "ctx: "+a.Reason
	}
	return reply, auditErr
}

// audit appends the decision to the session's audit log.
func (h *Hook) audit(req guard.Request, a guard.Approval) error {
	path, err := h.St.Session(h.SessionID).AuditFile()
	if err != nil {
		return err
	}
	return guard.AppendAudit(path, guard.AuditEntry{
		Time: h.Now.UTC(), Session: h.SessionID, Tool: req.Tool, Summary: req.Summary(),
		Decision: a.Decision, Rule: a.Rule, Reason: a.Reason,
	})
}
