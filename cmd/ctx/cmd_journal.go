package main

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ctxtools/ctx/internal/events"
	"github.com/ctxtools/ctx/internal/state"
)

type journalOptions struct {
	*App
	SessionID string
	JSON      bool
	Minimal   bool
	Finalize  bool
	Discard   bool
	Continue  bool
}

func (o *journalOptions) sessionID() string {
	return cmp.Or(o.SessionID, o.Getenv(state.EnvSessionID), state.UnknownSession)
}

func newJournalCmd(app *App) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "journal",
		Short: "The wind-down journal ctx keeps near the end of the context",
		Long: `When the context crosses the auto-save threshold, ctx saves and opens a
wind-down journal (.ctx/sessions/ACTIVE-PAUSE-<session>.jsonl) in which the
hooks record prompts, tool calls and replies until the compaction or the end of
the session finalizes it into a snapshot set. These commands inspect and settle
it by hand; the session is --session-id, else $CLAUDE_CODE_SESSION_ID.`,
		Example: `  ctx journal status
  ctx journal finalize
  ctx journal recover --finalize`,
		Args: usageArgs(cobra.NoArgs),
	}
	add := func(use, short, example string, run func(*journalOptions) error, flags func(*cobra.Command, *journalOptions)) {
		opts := &journalOptions{App: app}
		c := &cobra.Command{
			Use: use, Short: short, Example: example,
			Args: usageArgs(cobra.NoArgs),
			RunE: func(*cobra.Command, []string) error { return run(opts) },
		}
		c.Flags().StringVar(&opts.SessionID, "session-id", "", "the agent session (default: $CLAUDE_CODE_SESSION_ID)")
		if flags != nil {
			flags(c, opts)
		}
		cmd.AddCommand(c)
	}
	add("status", "Show the open journal: actions, duration, context range", "  ctx journal status --json", runJournalStatus,
		func(c *cobra.Command, o *journalOptions) {
			c.Flags().BoolVar(&o.JSON, "json", false, "print the status as JSON")
		})
	add("finalize", "Close the journal into a snapshot set (harmless when none is open)", "  ctx journal finalize\n  ctx journal finalize --minimal", runJournalFinalize,
		func(c *cobra.Command, o *journalOptions) {
			c.Flags().BoolVar(&o.Minimal, "minimal", false, "only archive the journal, without a snapshot")
		})
	add("discard", "Delete the open journal", "  ctx journal discard", runJournalDiscard, nil)
	add("recover", "Settle journals a crash left behind (asks on a terminal)", "  ctx journal recover\n  ctx journal recover --discard", runJournalRecover,
		func(c *cobra.Command, o *journalOptions) {
			c.Flags().BoolVar(&o.Finalize, "finalize", false, "finalize each left-behind journal")
			c.Flags().BoolVar(&o.Discard, "discard", false, "delete each left-behind journal")
			c.Flags().BoolVar(&o.Continue, "continue", false, "leave them open for their sessions to go on")
		})
	return cmd
}

func runJournalStatus(opts *journalOptions) error {
	ws, err := opts.Workspace()
	if err != nil {
		return err
	}
	st, err := opts.State(ws).Journal(opts.sessionID()).Status()
	if err != nil {
		return err
	}
	for _, w := range st.Warnings {
		opts.Warn("%s", w)
	}
	if opts.JSON {
		return opts.writeJSON(st)
	}
	if !st.Active {
		fmt.Fprintf(opts.Out, "no journal open for session %s\n", st.SessionID)
		return nil
	}
	fmt.Fprintf(opts.Out, "journal   %s\n", ws.Rel(st.Path))
	fmt.Fprintf(opts.Out, "actions   %d over %.0f s, last: %s\n", st.ActionCount, st.DurationSeconds, st.LastActionType)
	if st.ContextRange[0] != nil && st.ContextRange[1] != nil {
		fmt.Fprintf(opts.Out, "context   %.1f%% to %.1f%% of the budget\n", *st.ContextRange[0], *st.ContextRange[1])
	}
	if st.PauseStartedAt != nil {
		fmt.Fprintf(opts.Out, "started   %s\n", st.PauseStartedAt.Local().Format("2006-01-02 15:04:05"))
	}
	return nil
}

func runJournalFinalize(opts *journalOptions) error {
	ws, err := opts.Workspace()
	if err != nil {
		return err
	}
	archived, snap, err := events.FinalizeJournal(context.Background(), opts.State(ws), opts.sessionID(), state.TriggerSave, nil, opts.Minimal, opts.Now())
	if err != nil {
		return err
	}
	switch {
	case archived == "":
		fmt.Fprintf(opts.Out, "no journal open for session %s\n", opts.sessionID())
	case snap == "":
		fmt.Fprintf(opts.Out, "archived %s\n", ws.Rel(archived))
	default:
		fmt.Fprintf(opts.Out, "archived %s; snapshot %s\n", ws.Rel(archived), snap)
	}
	return nil
}

func runJournalDiscard(opts *journalOptions) error {
	ws, err := opts.Workspace()
	if err != nil {
		return err
	}
	j := opts.State(ws).Journal(opts.sessionID())
	active, err := j.Active()
	if err != nil {
		return fmt.Errorf("discard journal: %w", err)
	}
	if !active {
		fmt.Fprintf(opts.Out, "no journal open for session %s\n", opts.sessionID())
		return nil
	}
	if err := j.Discard(); err != nil {
		return err
	}
	fmt.Fprintf(opts.Out, "discarded %s\n", ws.Rel(j.Path()))
	return nil
}

func runJournalRecover(opts *journalOptions) error {
	chosen := 0
	for _, f := range []bool{opts.Finalize, opts.Discard, opts.Continue} {
		if f {
			chosen++
		}
	}
	if chosen > 1 {
		return inputError(errors.New("recover: choose one of --finalize, --discard, --continue"))
	}
	ws, err := opts.Workspace()
	if err != nil {
		return err
	}
	all, err := opts.State(ws).Orphans("")
	if err != nil {
		return err
	}
	// A journal another session touched recently belongs to a session still running.
	var journals []*state.Journal
	for _, j := range all {
		if j.SessionID != opts.sessionID() && events.RecentlyActive(j, opts.Now()) {
			fmt.Fprintf(opts.Out, "skipped %s: session %s wrote to it recently and may still be running\n", ws.Rel(j.Path()), j.SessionID)
			continue
		}
		journals = append(journals, j)
	}
	if len(journals) == 0 {
		fmt.Fprintln(opts.Out, "no journal to recover")
		return nil
	}
	if chosen == 0 && !opts.inTerminal() {
		return inputError(fmt.Errorf("recover: %d journal(s) open; pass --finalize, --discard or --continue", len(journals)))
	}
	in := bufio.NewReader(opts.In)
	for _, j := range journals {
		action := map[bool]string{true: "finalize"}[opts.Finalize]
		if opts.Discard {
			action = "discard"
		}
		if opts.Continue {
			action = "continue"
		}
		if action == "" {
			actions := "?"
			if st, err := j.Status(); err == nil {
				actions = fmt.Sprint(st.ActionCount)
			}
			fmt.Fprintf(opts.Err, "%s: %s action(s), session %s. [f]inalize, [d]iscard or [c]ontinue? ", ws.Rel(j.Path()), actions, j.SessionID)
			answer, _ := in.ReadString('\n')
			switch strings.ToLower(strings.TrimSpace(answer)) {
			case "f", "finalize":
				action = "finalize"
			case "d", "discard":
				action = "discard"
			default:
				action = "continue"
			}
		}
		switch action {
		case "finalize":
			archived, snap, err := events.FinalizeJournal(context.Background(), opts.State(ws), j.SessionID, state.TriggerSessionEnd, nil, false, opts.Now())
			if err != nil {
				return err
			}
			fmt.Fprintf(opts.Out, "finalized %s -> %s (snapshot %s)\n", ws.Rel(j.Path()), ws.Rel(archived), snap)
		case "discard":
			if err := j.Discard(); err != nil {
				return err
			}
			fmt.Fprintf(opts.Out, "discarded %s\n", ws.Rel(j.Path()))
		default:
			fmt.Fprintf(opts.Out, "left open %s\n", ws.Rel(j.Path()))
		}
	}
	return nil
}
