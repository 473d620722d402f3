package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/ctxtools/ctx/internal/claude"
	"github.com/ctxtools/ctx/internal/events"
	"github.com/ctxtools/ctx/internal/state"
)

type pauseOptions struct {
	*App
	SessionID string
}

// sessionID picks the agent session: --session-id, then the hook JSON on stdin, then
// $CLAUDE_CODE_SESSION_ID, then Claude Code's record of the process $CLAUDE_PID. With
// none of them it fails: pausing a made-up session would report success and silence
// nothing.
func (o *pauseOptions) sessionID() (string, error) {
	if o.SessionID != "" {
		// No hook acts for an id that is not a safe identifier (events.Run refuses
		// it), so a pause of one would never be seen.
		if err := state.CheckSessionID(o.SessionID); err != nil {
			return "", inputError(fmt.Errorf("--session-id: %w", err))
		}
		return o.SessionID, nil
	}
	if data, _ := o.readStdin(commandStdinWait); len(data) > 0 {
		if p, err := claude.ParsePayload(data); err == nil && p.SessionID != "" {
			return p.SessionID, nil
		}
	}
	if id, _ := events.CurrentID(o.Getenv); id != "" {
		return id, nil
	}
	return "", &exitError{code: exitFailure, err: events.ErrNoSession}
}

func newPauseCmd(app *App, plumbing bool) *cobra.Command {
	return newPauseFlagCmd(app, &cobra.Command{
		Use:   "pause",
		Short: "Quiet ctx's nudges for this agent session",
		Long: `Pause ctx for this agent session: its reminders and messages stop. The
dangerous-command guard keeps working, and so does the safety net: the automatic
save near the end of the context and the wind-down journal run quietly. Each
prompt while paused gets a one-line reminder ("ctx:paused"). Pausing again
restarts the count; 'ctx resume' turns the nudges back on. Other sessions are
not affected.`,
		Example: `  ctx pause
  ctx pause --session-id 3f2a9c`,
	}, func(opts *pauseOptions, rt *state.Runtime, id string) error {
		if err := rt.Pause(id); err != nil {
			return inputError(err)
		}
		if !plumbing {
			fmt.Fprintf(opts.Out, "ctx paused for session %s: nudges are off, the command guard stays on. Resume with `ctx resume` (/ctx-resume).\n", id)
		}
		return nil
	})
}

func newResumeCmd(app *App, plumbing bool) *cobra.Command {
	return newPauseFlagCmd(app, &cobra.Command{
		Use:   "resume",
		Short: "Turn ctx's nudges back on for this agent session",
		Long: `Resume ctx for this agent session after 'ctx pause'. When the session is not
paused this does nothing and says nothing.`,
		Example: `  ctx resume
  ctx resume --session-id 3f2a9c`,
	}, func(opts *pauseOptions, rt *state.Runtime, id string) error {
		_, turns, _ := rt.Paused(id)
		was, err := rt.Resume(id)
		if err != nil {
			return inputError(err)
		}
		if was && !plumbing {
			fmt.Fprintf(opts.Out, "ctx resumed for session %s after %s: nudges are back on.\n", id, count(turns, "paused prompt"))
		}
		return nil
	})
}

// newPauseFlagCmd completes pause or resume: both take --session-id and act on the
// session's marker in the private runtime folder.
func newPauseFlagCmd(app *App, cmd *cobra.Command, run func(*pauseOptions, *state.Runtime, string) error) *cobra.Command {
	opts := &pauseOptions{App: app}
	cmd.Args = usageArgs(cobra.NoArgs)
	cmd.RunE = func(*cobra.Command, []string) error {
		rt, err := opts.State(nil).Runtime()
		if err != nil {
			return err
		}
		id, err := opts.sessionID()
		if err != nil {
			return err
		}
		return run(opts, rt, id)
	}
	cmd.Flags().StringVar(&opts.SessionID, "session-id", "", "the agent session (default: hook JSON on stdin, else $CLAUDE_CODE_SESSION_ID, else the session of $CLAUDE_PID)")
	return cmd
}
