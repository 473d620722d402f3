package main

import (
	"cmp"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/ctxtools/ctx/internal/claude"
	"github.com/ctxtools/ctx/internal/events"
	"github.com/ctxtools/ctx/internal/state"
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
		Long: `Show context usage read from a Claude Code transcript: tokens used, the window,
the budget up to compaction, the percentage of each, the warn and auto-save
thresholds (fractions of the budget), and where each number came from.

The window comes from the model: claude-opus-5-5 (Claude Code's default), the
opus, sonnet and haiku aliases and any [1m] model have 1M, the 4.x models 200k.
The budget is where Claude Code compacts: the window less the model's output
limit (up to 20k) less 13k, so 967k of 1M and 167k of 200k. Claude Code's own
settings move it, and ctx reads them: $CLAUDE_CODE_AUTO_COMPACT_WINDOW,
claude --autocompact or autoCompactWindow in its settings.json files,
$CLAUDE_AUTOCOMPACT_PCT_OVERRIDE, $CLAUDE_CODE_DISABLE_1M_CONTEXT, and
$DISABLE_AUTO_COMPACT or autoCompactEnabled in ~/.claude.json, which make
compaction manual and the whole window the budget.

Settings: the usage: section of .ctx/config.yaml (warn_at, auto_save_at; and
window, reserve for a model ctx does not know; max_scan_bytes, how far back from
the transcript's end ctx looks for the last assistant line, 32 MiB by default:
when there is none within it, the usage is unknown and ctx usage exits 1).

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
	cfg, err := events.UsageConfig(ws)
	if err != nil {
		return inputError(err)
	}
	path := opts.Transcript
	if path == "" {
		id := cmp.Or(opts.SessionID, opts.Getenv(state.EnvSessionID))
		if id == "" {
			return inputError(errors.New("usage: pass --transcript PATH or --session-id ID (no $CLAUDE_CODE_SESSION_ID here)"))
		}
		if path = events.TranscriptFor(opts.State(ws), id, opts.Getenv); path == "" {
			return inputError(fmt.Errorf("usage: no transcript known for session %q; pass --transcript PATH", id))
		}
	}
	client := claude.DetectClient(opts.Getenv, cmp.Or(opts.Getenv("CLAUDE_PROJECT_DIR"), ws.Root))
	if id, _ := events.CurrentID(opts.Getenv); opts.SessionID != "" || id != "" {
		client.KnownWindow = opts.State(ws).KnownWindow(cmp.Or(opts.SessionID, id))
	}
	for _, problem := range client.Problems {
		opts.Warn("claude code settings: %s", problem)
	}
	u, err := usage.Read(path, cfg, client)
	if errors.Is(err, usage.ErrUnknown) {
		return err // a transcript read, but nothing in its tail tells the usage: exit 1
	}
	if err != nil {
		return inputError(err)
	}
	if opts.JSON {
		return opts.writeJSON(struct {
			*usage.Usage
			Transcript string   `json:"transcript"`
			Problems   []string `json:"problems,omitempty"`
		}{u, path, client.Problems})
	}
	w := opts.Out
	fmt.Fprintf(w, "tokens     %d  (%s)\n", u.TokensUsed, u.Source)
	window := u.WindowSource
	if u.MaxOutput > 0 {
		window += fmt.Sprintf(", max output %d", u.MaxOutput)
	}
	fmt.Fprintf(w, "window     %d  %.1f%% used  (%s)\n", u.Window, u.PercentOfWindow, window)
	if u.AutoCompact {
		fmt.Fprintf(w, "budget     %d  %.1f%% used  (automatic compaction here; %s)\n", u.Budget, u.PercentOfBudget, u.BudgetSource)
	} else {
		fmt.Fprintf(w, "budget     %d  %.1f%% used  (the whole window, compaction is manual: %s)\n", u.Budget, u.PercentOfBudget, u.BudgetSource)
	}
	fmt.Fprintf(w, "warn at    %.0f%% of the budget   auto-save at %.0f%%\n", u.WarnAt*100, u.AutoSaveAt*100)
	if u.Model != "" {
		fmt.Fprintf(w, "model      %s\n", u.Model)
	}
	return nil
}
