package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/ctxtools/ctx/session"
	"github.com/ctxtools/ctx/usage"
)

type usageOptions struct {
	*App
	Transcript string
	SessionID  string
	JSON       bool
}

func newUsageCmd(app *App) *cobra.Command {
	opts := &usageOptions{App: app}
	cmd := &cobra.Command{
		Use:   "usage",
		Short: "Show how full the agent's context window is",
		Long: `Show context usage read from a Claude Code transcript: tokens used, the window
(200k, or 1M for a [1m] model), the budget up to compaction (window minus the
reserve), the percentage of each, and the warn and auto-save thresholds, which
are fractions of the budget. Settings: the usage: section of .ctx/config.yaml
(window, reserve, warn_at, auto_save_at).

Without --transcript, the transcript the hooks last saw for the session
(--session-id, else $CLAUDE_CODE_SESSION_ID), else Claude Code's own file for it.`,
		Example: `  ctx usage --transcript ~/.claude/projects/-home-me-work/3f2a9c.jsonl
  ctx usage --session-id 3f2a9c --json`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error { return runUsage(opts) },
	}
	cmd.Flags().StringVar(&opts.Transcript, "transcript", "", "the transcript (JSONL) to read")
	cmd.Flags().StringVar(&opts.SessionID, "session-id", "", "the agent session whose transcript to read")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the usage as JSON")
	return cmd
}

func runUsage(opts *usageOptions) error {
	ws, err := opts.Workspace()
	if err != nil {
		return err
	}
	cfg, err := session.UsageConfig(ws)
	if err != nil {
		return inputError(err)
	}
	path := opts.Transcript
	if path == "" {
		id := firstNonEmpty(opts.SessionID, opts.Getenv(session.EnvSessionID))
		if id == "" {
			return inputError(errors.New("usage: pass --transcript PATH or --session-id ID (no $CLAUDE_CODE_SESSION_ID here)"))
		}
		if path = session.TranscriptFor(ws, id, opts.Getenv); path == "" {
			return inputError(fmt.Errorf("usage: no transcript known for session %q; pass --transcript PATH", id))
		}
	}
	u, err := usage.Read(path, cfg)
	if err != nil {
		return inputError(err)
	}
	if opts.JSON {
		return opts.writeJSON(struct {
			*usage.Usage
			Transcript string `json:"transcript"`
		}{u, path})
	}
	w := opts.Out
	fmt.Fprintf(w, "tokens     %d  (%s)\n", u.TokensUsed, u.Source)
	fmt.Fprintf(w, "window     %d  %.1f%% used\n", u.Window, u.PercentOfWindow)
	fmt.Fprintf(w, "budget     %d  %.1f%% used  (window minus a %d-token reserve: compaction comes here)\n", u.Budget, u.PercentOfBudget, u.Reserve)
	fmt.Fprintf(w, "warn at    %.0f%% of the budget   auto-save at %.0f%%\n", u.WarnAt*100, u.AutoSaveAt*100)
	if u.Model != "" {
		fmt.Fprintf(w, "model      %s\n", u.Model)
	}
	return nil
}
