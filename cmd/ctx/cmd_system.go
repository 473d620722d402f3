package main

import (
	"errors"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/ctxtools/ctx/agents"
	"github.com/ctxtools/ctx/internal/claude"
	"github.com/ctxtools/ctx/internal/events"
	"github.com/ctxtools/ctx/loader"
)

// newSystemCmd is `ctx system`: one subcommand per row of events.Table.
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
	for _, ev := range events.Table {
		cmd.AddCommand(&cobra.Command{
			Use:     ev.Command,
			Short:   ev.Short,
			Example: ev.Example,
			Args:    usageArgs(cobra.NoArgs),
			RunE: func(c *cobra.Command, args []string) error {
				return runHook(c, app, ev)
			},
		})
	}
	cmd.AddCommand(newPauseCmd(app, true), newResumeCmd(app, true))
	return cmd
}

// runHook reads the hook's payload and finds its workspace, then hands both to
// events.Run. Outside a workspace only the guard runs.
func runHook(c *cobra.Command, app *App, ev events.Event) error {
	var in events.Input
	h := &events.Hook{Payload: &claude.Payload{}, Getenv: app.Getenv, Now: app.Now(), Err: app.Err}
	if ev.Name != "" {
		in.Data, in.Err = app.readStdin(hookStdinWait)
		if in.Err == nil {
			var p *claude.Payload
			if p, in.Err = claude.ParsePayload(in.Data); in.Err == nil {
				h.Payload = p // it names the agent's folder, where the workspace is
			}
		}
	}
	ws, err := app.workspaceFrom(h.Payload.Cwd)
	if errors.As(err, &h.ConfigErr) {
		err = nil // ws is on the defaults: every hook goes on, and says what is wrong
	}
	if err != nil {
		ws = nil
	}
	h.St = app.State(ws)
	in.Activity = recordAgentActivity
	in.Agent = agentPart
	// Claude Code reads what a hook prints: it comes out as written.
	return events.Run(c.Context(), ev, h, in, app.dataOut())
}

// agentPart is an agent session's part of a hook: its handoff (agents.OnHook).
func agentPart(h *events.Hook, agentID string) events.AgentReply {
	r := agents.OnHook(h.WS(), h.St, agentID, agents.HookEvent{
		Event: h.Event.Name, SessionID: h.SessionID, Tool: h.Payload.ToolName, File: h.Payload.ToolInput.File(),
		Cwd: h.Payload.Cwd, Prompt: h.Payload.Prompt, Now: h.Now,
	})
	return events.AgentReply{Text: r.Text, Stop: r.Stop}
}

// recordAgentActivity records an agent session's hook event as its activity.
func recordAgentActivity(ws *loader.Workspace, agentID string, ev events.Event, h *events.Hook) error {
	st := agents.Status{
		Activity: ev.Activity, Detail: ev.Detail, Event: ev.Name, SessionID: h.SessionID,
		Source: h.Payload.Source, Tool: h.Payload.ToolName, Summary: h.Payload.LastAssistantMessage, At: h.Now,
	}
	if ev.Activity == "needs_input" && h.Payload.ToolName != "" {
		// A permission prompt: what the tool would do, for the person who answers it.
		st.Input = h.Payload.ToolInput.Subject()
		st.Summary = events.ToolSummary(h.Payload.ToolName, h.Payload.ToolInput)
	}
	return agents.RecordHook(ws, agentID, st)
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
