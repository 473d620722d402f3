package events

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/ctxtools/ctx/internal/claude"
	"github.com/ctxtools/ctx/internal/state"
	"github.com/ctxtools/ctx/loader"
	"github.com/ctxtools/ctx/usage"
)

// Hook is what one hook invocation knows: its event, the payload, the workspace's
// state (a Store with no workspace outside one: the guard judges anywhere), and the
// process's environment and clock.
type Hook struct {
	Event     Event
	Payload   *claude.Payload
	SessionID string // the payload's, when it is a safe identifier
	St        *state.Store
	Getenv    func(string) string
	Now       time.Time
	Err       io.Writer // warnings
	// ConfigErr is the workspace's config problem (the workspace runs on its defaults).
	ConfigErr *loader.ConfigError

	configLines []string // config problems for the agent, before the reply's lines
}

// WS is the workspace, nil outside one.
func (h *Hook) WS() *loader.Workspace { return h.St.WS }

// Warn prints one warning line.
func (h *Hook) Warn(format string, args ...any) {
	fmt.Fprintf(h.Err, "ctx: warning: "+format+"\n", args...)
}

// Reply is what a hook answers Claude Code on stdout.
type Reply struct {
	Lines   []string // plain text for the agent (SessionStart, UserPromptSubmit)
	Context string   // additionalContext of the event
	Deny    string   // PreToolUse: the reason the command is refused
	// Permission answers a PermissionRequest: "allow" or "deny" (with Message); ""
	// leaves the question to the person.
	Permission, Message string
	// Stop ends the agent's turn after a tool call, with this reason (PostToolUse).
	Stop string
}

// Write writes the reply for the event.
func (r Reply) Write(w io.Writer, event string) error {
	for _, line := range r.Lines {
		if err := claude.WriteText(w, line); err != nil {
			return err
		}
	}
	switch {
	case r.Deny != "":
		return claude.WriteDeny(w, r.Deny)
	case r.Permission != "":
		return claude.WritePermissionDecision(w, r.Permission == "allow", r.Message)
	case r.Stop != "":
		return claude.WriteStop(w, event, r.Stop, r.Context)
	case r.Context != "":
		return claude.WriteAdditionalContext(w, event, r.Context)
	}
	return nil
}

// Input is what Run is given besides the Hook: the payload's bytes as read, and what
// reading or parsing them failed with (the Hook's Payload is the parsed payload).
type Input struct {
	Data []byte
	Err  error
	// Activity records an agent session's activity (ctx agents sets CTX_AGENT_ID);
	// nil records nothing.
	Activity func(ws *loader.Workspace, agentID string, ev Event, h *Hook) error
	// Agent is the agent's part of the hook, after ctx's own (agents.OnHook); nil
	// adds nothing.
	Agent func(h *Hook, agentID string) AgentReply
}

// EnvAgentID names the agent a session runs for: `ctx agents start` sets it for every
// process of the agent (agents.EnvAgentID is this one).
const EnvAgentID = "CTX_AGENT_ID"

// Run runs one hook on its payload (parsed by the caller, who found the workspace from
// it). Outside a workspace it does nothing but judge commands; a payload that is not a real event of the hook's kind (empty, not a
// JSON object, naming another event, or without a session id that is a safe
// identifier) changes nothing: one warning says why. The guard judges whatever command
// it can read, session id or not, and refuses one it cannot read. A hook's failure is a
// warning, never a broken turn: Run returns only what could not be written to out.
func Run(ctx context.Context, ev Event, h *Hook, in Input, out io.Writer) error {
	h.Event = ev
	if h.Payload == nil {
		h.Payload = &claude.Payload{}
	}
	inputErr := in.Err
	isEvent, isGuard := ev.Name != "", ev.Command == GuardCommand
	if isGuard && inputErr != nil && len(in.Data) > 0 {
		// A command the guard cannot read is a command it cannot judge: refused.
		return claude.WriteDeny(out, "ctx: this command could not be judged, so it was not run: the hook payload could not be read ("+inputErr.Error()+"). Run it in smaller pieces.")
	}
	if h.WS() == nil && !isGuard {
		return nil // not in a workspace: project hooks do nothing, not even complain
	}
	if isEvent && inputErr == nil {
		inputErr = h.Payload.CheckEvent(ev.Name)
	}
	if idErr := state.CheckSessionID(h.Payload.SessionID); idErr == nil {
		h.SessionID = h.Payload.SessionID
	} else if isEvent && inputErr == nil && !isGuard {
		if wrong := h.Payload.WrongType("session_id"); wrong != nil {
			idErr = wrong
		} else if strings.TrimSpace(h.Payload.SessionID) == "" {
			idErr = errors.New("no session_id")
		}
		inputErr = fmt.Errorf("hook payload: %w", idErr)
	}
	if inputErr != nil {
		h.Warn("%s: %v; nothing done", ev.Command, inputErr)
		return nil
	}
	if ev.OnceOnly && !h.firstRun() {
		return nil
	}
	if h.ConfigErr != nil {
		h.ConfigProblem(h.ConfigErr, configFallback)
	}
	if id := h.Getenv(EnvAgentID); id != "" && h.WS() != nil && h.SessionID != "" && ev.Activity != "" && in.Activity != nil {
		// An agent's session: its activity for ctx agents and the dashboard. Never a
		// reason to fail the hook.
		if err := in.Activity(h.WS(), id, ev, h); err != nil {
			h.Warn("%s: agent %s: %v", ev.Command, id, err)
		}
	}
	if ev.Budget > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, ev.Budget)
		defer cancel()
	}
	reply, err := ev.Run(ctx, h)
	if err != nil {
		h.Warn("%s: %v", ev.Command, err)
	}
	if id := h.Getenv(EnvAgentID); id != "" && h.WS() != nil && h.SessionID != "" && in.Agent != nil {
		// The agent's part (a handoff, its checks): after ctx's own, which may have
		// just saved at the threshold.
		more := in.Agent(h, id)
		if more.Text != "" {
			if ev.Name == claude.EventPostToolUse {
				reply.Context = strings.TrimSpace(reply.Context + "\n" + more.Text)
			} else {
				reply.Lines = append(reply.Lines, more.Text)
			}
		}
		reply.Stop = more.Stop
	}
	reply.Lines = append(h.configLines, reply.Lines...)
	return reply.Write(out, ev.Name)
}

// AgentReply is what an agent's part of a hook adds to ctx's reply: text for the
// agent, and, after a tool call, the reason to end its turn.
type AgentReply struct{ Text, Stop string }

// firstRun reports whether this run is the first of its hook for its event: false when
// ctx, installed at two settings levels, already ran for it.
func (h *Hook) firstRun() bool {
	rt, err := h.St.Runtime()
	if err != nil {
		return true // no trusted runtime folder: act, rather than risk doing nothing
	}
	first, err := rt.FirstRun(h.Event.Command, h.SessionID, h.Payload.EventID())
	if err != nil {
		h.Warn("%s: %v", h.Event.Command, err)
	}
	return first
}

// client is what Claude Code's own settings say about the window and the compaction
// point: its environment (hooks inherit the client's), its settings files for the
// project the hook runs in, and the running client's flags.
func (h *Hook) client() usage.Client {
	c := claude.DetectClient(h.Getenv, cmp.Or(h.Getenv("CLAUDE_PROJECT_DIR"), h.Payload.Cwd, h.WS().Root))
	c.KnownWindow = h.St.KnownWindow(h.SessionID) // what `ctx statusline` recorded
	return c
}

// paused reports whether nudges are off for this session, counting nothing.
func (h *Hook) paused() bool {
	rt, err := h.St.Runtime()
	if err != nil {
		return false
	}
	paused, _, _ := rt.Paused(h.SessionID)
	return paused
}

// runtime is the runtime folder, nil when it cannot be trusted.
func (h *Hook) runtime() *state.Runtime {
	rt, _ := h.St.Runtime()
	return rt
}

// Consequences of a config problem, as the warning states them.
const (
	configFallback = "ctx goes on with its defaults and the built-in guard rules until it is fixed; `ctx doctor` checks it"
	guardEntryLeft = "the guard leaves that out and keeps its other rules; `ctx guard rules` lists what is in force"
)

// ConfigProblem says, in one line, that the workspace's config could not be used and
// what ctx does instead: once per session for each hook and problem, so that neither
// the agent nor the person is told it on every prompt and tool call. The
// UserPromptSubmit hook says it on stdout, which Claude Code gives the model; the
// others, whose stdout is JSON or unread, on stderr.
func (h *Hook) ConfigProblem(err error, consequence string) {
	msg := OneLine(err.Error())
	if rt, rerr := h.St.Runtime(); rerr == nil {
		sum := sha256.Sum256([]byte(msg))
		if first, _ := rt.FirstRun("config-"+h.Event.Command, h.SessionID, hex.EncodeToString(sum[:8])); !first {
			return
		}
	}
	line := "ctx: warning: " + msg + " (" + consequence + ")"
	if h.Event.Name == claude.EventUserPromptSubmit {
		h.configLines = append(h.configLines, line)
		return
	}
	fmt.Fprintln(h.Err, line)
}

// OneLine joins the lines of a message (several problems joined) with "; ".
func OneLine(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", "; ")), " ")
}
