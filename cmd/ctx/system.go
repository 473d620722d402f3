package main

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ctxtools/ctx/agents"
	"github.com/ctxtools/ctx/gitstate"
	"github.com/ctxtools/ctx/internal/claude"
	"github.com/ctxtools/ctx/loader"
	"github.com/ctxtools/ctx/session"
	"github.com/ctxtools/ctx/usage"
)

// sessionEndBudget is how long the SessionEnd hook may take: Claude Code is closing.
const sessionEndBudget = 1500 * time.Millisecond

// staleMarkerAge is when a runtime marker no session touched counts as abandoned.
const staleMarkerAge = 7 * 24 * time.Hour

func newSystemCmd(app *App) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "system",
		Short: "Plumbing that Claude Code's hooks call (see `ctx init`)",
		Long: `Plumbing commands that Claude Code's hooks call, one per event. Each reads the
hook's JSON on stdin. Outside a workspace they do nothing; an internal error
prints one warning and exits 0, so a broken ctx never breaks the agent's turn.
Input that is not the event's JSON (empty, not JSON, another event's, no
session_id made of letters, digits, '.', '_' and '-') changes nothing: one
warning says why. The guard still refuses a command it cannot read.`,
		Example: `  echo '{"session_id":"s1","prompt":"hi"}' | ctx system check-context-size
  ctx system pause --session-id s1`,
		Hidden: true,
		Args:   usageArgs(cobra.NoArgs),
	}
	hooks := []struct {
		use, short, example string
		run                 func(*hookRun) error
	}{
		{"session-start", "SessionStart: bind the session and brief the agent after a compaction or resume",
			`  echo '{"session_id":"s1","source":"compact"}' | ctx system session-start`, hookSessionStart},
		{"check-context-size", "UserPromptSubmit: the pause reminder, then context usage",
			`  echo '{"session_id":"s1","prompt":"hi"}' | ctx system check-context-size`, hookCheckContextSize},
		{"block-dangerous-commands", "PreToolUse (Bash): refuse destructive commands, paused or not",
			`  echo '{"tool_name":"Bash","tool_input":{"command":"rm -rf /"}}' | ctx system block-dangerous-commands`, hookBlockDangerous},
		{"record-action", "PostToolUse: journal the tool call; bind the session from project files touched",
			`  echo '{"session_id":"s1","tool_name":"Edit","tool_input":{"file_path":"02-projects/01-a/notes.md"}}' | ctx system record-action`, hookRecordAction},
		{"stop", "Stop: journal the start of the agent's last message",
			`  echo '{"session_id":"s1","last_assistant_message":"done"}' | ctx system stop`, hookStop},
		{"pre-compact", "PreCompact: save, finalize the journal, count the compaction; never blocks",
			`  echo '{"session_id":"s1","trigger":"auto"}' | ctx system pre-compact`, hookPreCompact},
		{"post-compact", "PostCompact: count the compaction and start a new cycle, unless PreCompact did",
			`  echo '{"session_id":"s1","trigger":"auto","prompt_id":"p1"}' | ctx system post-compact`, hookPostCompact},
		{"session-end", "SessionEnd: finalize the journal and clean up markers (within 1.5 s)",
			`  echo '{"session_id":"s1","reason":"exit"}' | ctx system session-end`, hookSessionEnd},
		{"cleanup-tmp", "Remove stale markers and temporary files (paused or not)",
			`  ctx system cleanup-tmp`, hookCleanupTmp},
		{"permission-request", "PermissionRequest: auto-approve through the guard, when it is on",
			`  echo '{"session_id":"s1","tool_name":"Bash","tool_input":{"command":"ls"}}' | CTX_AUTO_APPROVE=1 ctx system permission-request`, hookPermissionRequest},
	}
	for _, h := range hooks {
		run := h.run
		cmd.AddCommand(&cobra.Command{
			Use:     h.use,
			Short:   h.short,
			Example: h.example,
			Args:    usageArgs(cobra.NoArgs),
			RunE: func(c *cobra.Command, args []string) error {
				return runHook(app, c.Name(), run)
			},
		})
	}
	cmd.AddCommand(newPauseCmd(app, true), newResumeCmd(app, true))
	return cmd
}

// hookRun is what one hook invocation knows.
type hookRun struct {
	*App
	Name      string
	Payload   *claude.Payload
	SessionID string
	WS        *loader.Workspace
}

// runHook reads the payload, finds the workspace and runs the hook. Outside a workspace
// it does nothing; a failure becomes one warning and exit 0. A payload that is not a
// real event of the hook's kind (empty, not a JSON object, naming another event, or
// without a session id that is a safe identifier) changes nothing: one warning says
// why. The guard judges whatever command it can read, session id or not, and refuses
// one it cannot read.
func runHook(app *App, name string, run func(*hookRun) error) error {
	h := &hookRun{App: app, Name: name, Payload: &claude.Payload{}}
	event, isEvent := hookEvents[name]
	guardHook := name == guardHookName
	var data []byte
	var inputErr error
	if isEvent {
		data, inputErr = app.readStdin(hookStdinWait)
		if inputErr == nil {
			var p *claude.Payload
			if p, inputErr = claude.ParsePayload(data); inputErr == nil {
				h.Payload = p
			}
		}
	}
	if guardHook && inputErr != nil && len(data) > 0 {
		// A command the guard cannot read is a command it cannot judge: refused.
		return claude.WriteDeny(app.Out, "ctx: this command could not be judged, so it was not run: the hook payload could not be read ("+inputErr.Error()+"). Run it in smaller pieces.")
	}
	ws, err := app.workspaceFrom(h.Payload.Cwd)
	var cfgErr *loader.ConfigError
	if errors.As(err, &cfgErr) {
		err = nil // ws is on the defaults: every hook goes on, and says what is wrong
	}
	if err != nil && !guardHook {
		return nil // not in a workspace: project hooks do nothing, not even complain
	}
	h.WS = ws // nil for the guard outside a workspace: it judges wherever it is installed
	if isEvent && inputErr == nil {
		inputErr = h.Payload.CheckEvent(event)
	}
	if idErr := session.CheckSessionID(h.Payload.SessionID); idErr == nil {
		h.SessionID = h.Payload.SessionID
	} else if isEvent && inputErr == nil && !guardHook {
		inputErr = fmt.Errorf("hook payload: %w", idErr)
	}
	if inputErr != nil {
		app.Warn("%s: %v; nothing done", name, inputErr)
		return nil
	}
	if onceOnly[name] && !h.firstRun() {
		return nil
	}
	if cfgErr != nil {
		h.configProblem(cfgErr, configFallback)
	}
	if id := app.Getenv(agents.EnvAgentID); id != "" && ws != nil && h.SessionID != "" {
		// An agent's session: its activity for ctx agents and the dashboard. Never a
		// reason to fail the hook.
		if err := agents.RecordHook(ws, id, hookEvents[name], h.SessionID, h.Payload.Source,
			h.Payload.ToolName, h.Payload.LastAssistantMessage, h.Now()); err != nil {
			app.Warn("%s: agent %s: %v", name, id, err)
		}
	}
	if err := run(h); err != nil {
		var ee *exitError
		if errors.As(err, &ee) && ee.silent {
			return err
		}
		app.Warn("%s: %v", name, err)
	}
	return nil
}

// hookEvents names the Claude Code event each hook command runs on. A command not
// listed (cleanup-tmp) is no event's: it reads no payload.
var hookEvents = map[string]string{
	"session-start": "SessionStart", "check-context-size": "UserPromptSubmit",
	"block-dangerous-commands": "PreToolUse", "record-action": "PostToolUse", "stop": "Stop",
	"pre-compact": "PreCompact", "session-end": "SessionEnd", "post-compact": "PostCompact",
	"permission-request": "PermissionRequest", "notification": "Notification",
}

// onceOnly are the hooks that must act once per event: each records, counts or saves.
// The guard is not among them: judging a command twice refuses it twice, harmlessly.
var onceOnly = map[string]bool{"check-context-size": true, "record-action": true, "stop": true, "pre-compact": true, "post-compact": true}

// firstRun reports whether this run is the first of its hook for its event: false when
// ctx, installed at two settings levels, already ran for it.
func (h *hookRun) firstRun() bool {
	rt, err := session.OpenRuntime(h.Getenv)
	if err != nil {
		return true // no trusted runtime folder: act, rather than risk doing nothing
	}
	first, err := rt.FirstRun(h.Name, h.SessionID, h.Payload.EventID())
	if err != nil {
		h.Warn("%s: %v", h.Name, err)
	}
	return first
}

// client is what Claude Code's own settings say about the window and the compaction
// point: its environment (hooks inherit the client's), its settings files for the
// project the hook runs in, and the running client's flags.
func (h *hookRun) client() usage.Client {
	c := claude.DetectClient(h.Getenv, cmp.Or(h.Getenv("CLAUDE_PROJECT_DIR"), h.Payload.Cwd, h.WS.Root))
	c.KnownWindow = session.KnownWindow(h.WS, h.Getenv, h.SessionID) // what `ctx statusline` recorded
	return c
}

// paused reports whether nudges are off for this session, counting nothing.
func (h *hookRun) paused() bool {
	rt, err := session.OpenRuntime(h.Getenv)
	if err != nil {
		return false
	}
	paused, _, _ := rt.Paused(h.SessionID)
	return paused
}

func hookCheckContextSize(h *hookRun) error {
	// A runtime folder that cannot be trusted means no pause flag, not no auto-save:
	// anyone who can create /tmp/ctx-<uid> first must not be able to switch it off.
	paused, turns := false, 0
	rt, err := session.OpenRuntime(h.Getenv)
	if err == nil {
		paused, turns, err = rt.CountTurn(h.SessionID)
	}
	if err != nil {
		h.Warn("%s: %v", h.Name, err)
	}
	if paused {
		if err := claude.WriteText(h.Out, session.PauseReminder(turns)); err != nil {
			return err
		}
	}
	lines, err := session.OnPrompt(h.WS, session.Prompt{
		SessionID: h.SessionID, TranscriptPath: h.Payload.TranscriptPath, Prompt: h.Payload.Prompt,
		Paused: paused, Client: h.client(), Now: h.Now(),
	})
	for _, line := range lines {
		if werr := claude.WriteText(h.Out, line); werr != nil {
			return werr
		}
	}
	return err
}

// hookRecordAction also checks usage, because a compaction can come between two tool
// calls of one turn with no prompt before it; what it has to say reaches the agent
// with the tool's result.
func hookRecordAction(h *hookRun) error {
	lines, err := session.OnToolCall(h.WS, session.ToolCall{
		SessionID: h.SessionID, TranscriptPath: h.Payload.TranscriptPath, ToolUseID: h.Payload.ToolUseID, Tool: h.Payload.ToolName,
		Input: h.Payload.ToolInput, Paused: h.paused(), Client: h.client(), Now: h.Now(),
	})
	if len(lines) > 0 {
		if werr := claude.WriteAdditionalContext(h.Out, claude.EventPostToolUse, strings.Join(lines, "\n")); werr != nil {
			return errors.Join(err, werr)
		}
	}
	return err
}

func hookStop(h *hookRun) error {
	rt, _ := session.OpenRuntime(h.Getenv)
	return errors.Join(session.OnStop(h.WS, h.SessionID, h.Payload.LastAssistantMessage, h.Now()),
		session.CarryOnce(h.WS, rt, h.SessionID, h.Payload.TranscriptPath, h.Now()))
}

func hookPreCompact(h *hookRun) error {
	return session.OnPreCompact(h.WS, h.SessionID, h.Payload.TranscriptPath, h.Payload.Trigger, h.Payload.PromptID, h.client(), h.Now())
}

func hookSessionStart(h *hookRun) error {
	rt, _ := session.OpenRuntime(h.Getenv)
	text, err := session.OnSessionStart(h.WS, session.Start{
		SessionID: h.SessionID, TranscriptPath: h.Payload.TranscriptPath, Cwd: cmp.Or(h.Payload.Cwd, h.WS.Root),
		Source: h.Payload.Source, PromptID: h.Payload.PromptID, ClaudePID: h.Getenv(session.EnvClaudePID), Runtime: rt,
		Paused: h.paused(), Client: h.client(), Now: h.Now(), Deadline: time.Now().Add(sessionEndBudget),
	})
	if text == "" {
		return err
	}
	return errors.Join(err, claude.WriteAdditionalContext(h.Out, claude.EventSessionStart, text))
}

func hookSessionEnd(h *hookRun) error {
	deadline := time.Now().Add(sessionEndBudget)
	err := session.OnSessionEnd(h.WS, h.SessionID, h.Now(), deadline)
	// The session's pause marker stays: `claude --resume` continues the same session,
	// and a print-mode loop ends its process after every prompt. Only `ctx resume`
	// ends a pause; markers no session touched for a week go by age.
	rt, rerr := session.OpenRuntime(h.Getenv)
	if rerr != nil {
		return errors.Join(err, rerr)
	}
	rt.CleanStale(staleMarkerAge, deadline)
	return err
}

func hookCleanupTmp(h *hookRun) error {
	deadline := time.Now().Add(sessionEndBudget)
	if rt, err := session.OpenRuntime(h.Getenv); err == nil {
		rt.CleanStale(staleMarkerAge, deadline)
	}
	session.CleanWorkspaceTemps(h.WS.StatePath(), time.Hour, deadline)
	session.Cycles{StateDir: h.WS.StatePath("state")}.PruneCycles(time.Now(), deadline)
	session.Work{StateDir: h.WS.StatePath("state")}.Prune(time.Now(), deadline)
	return nil
}

// guardHookName is the hook that judges Bash commands: the one hook that runs outside a
// workspace too.
const guardHookName = "block-dangerous-commands"

// hookBlockDangerous denies a destructive Bash command with a reason the agent can act
// on. It ignores the pause: it is a guard, not a nudge.
func hookBlockDangerous(h *hookRun) error {
	if h.Payload.ToolName != "Bash" {
		return nil
	}
	command := h.Payload.Command()
	if command == "" {
		return nil
	}
	// A config ctx cannot read never lowers protection: the built-in rules apply, and
	// the valid entries of a guard: section with a bad one stay.
	rules, cfgErr := guardFor(h.App, h.WS, h.Payload.Cwd, gitstate.Dirty)
	if cfgErr != nil {
		h.configProblem(cfgErr, guardEntryLeft)
	}
	if v := rules.Check(command); v.Deny {
		return claude.WriteDeny(h.Out, "ctx: "+v.Reason)
	}
	return nil
}

// Stdin waits: a hook's payload arrives at once and is closed by Claude Code; a person's
// or an agent's plain command may have a stdin that never closes, and must not hang.
const (
	hookStdinWait    = 2 * time.Second
	commandStdinWait = 100 * time.Millisecond
)

// readStdin reads a hook payload from stdin: nothing from a terminal, and from a pipe
// only what arrives within wait. A payload larger than claude.MaxPayloadBytes is cut
// there and the rest read and dropped, so the writer never blocks on a full pipe.
func (a *App) readStdin(wait time.Duration) ([]byte, error) {
	if a.In == nil {
		return nil, nil
	}
	if f, ok := a.In.(*os.File); ok {
		fi, err := f.Stat()
		if err != nil || fi.Mode()&os.ModeCharDevice != 0 {
			return nil, nil
		}
		if data, ok, err := readFileWithin(f, claude.MaxPayloadBytes, wait); ok {
			return data, err
		}
	}
	type result struct {
		data []byte
		err  error
	}
	done := make(chan result, 1)
	go func() {
		data, err := io.ReadAll(io.LimitReader(a.In, claude.MaxPayloadBytes))
		if err == nil {
			_, _ = io.Copy(io.Discard, a.In)
		}
		done <- result{data, err}
	}()
	select {
	case r := <-done:
		return r.data, r.err
	case <-time.After(wait):
		return nil, nil // the reader goroutine ends with the process
	}
}
