package main

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ctxtools/ctx/internal/state"
)

type sessionsPruneOptions struct {
	*App
	Keep      int
	KeepSet   bool
	OlderThan string
	DryRun    bool
	Yes       bool
	JSON      bool
}

func newSessionsPruneCmd(app *App) *cobra.Command {
	opts := &sessionsPruneOptions{App: app}
	cmd := &cobra.Command{
		Use:   "prune --keep N | --older-than AGE",
		Short: "Remove old snapshot sets",
		Long: `Remove old snapshot sets from .ctx/sessions/: every file of a set (.json,
.yaml, .md and its archived -incremental journals). --keep N keeps the newest N;
--older-than AGE removes the sets saved before it (30d, 2w, 12h, 90m); both
together remove only what is outside both. The set LATEST-SESSION.txt names is
never removed, nor is an open ACTIVE-PAUSE journal.

On a terminal prune only says what it would remove unless --yes; from a script
it removes, unless --dry-run.`,
		Example: `  ctx sessions prune --keep 20
  ctx sessions prune --older-than 30d --yes
  ctx sessions prune --keep 5 --older-than 2w --dry-run`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.KeepSet = cmd.Flags().Changed("keep")
			if !opts.KeepSet && opts.OlderThan == "" {
				return inputError(errors.New("sessions prune: say what to remove: --keep N, --older-than AGE, or both"))
			}
			return runSessionsPrune(opts)
		},
	}
	cmd.Flags().IntVar(&opts.Keep, "keep", 0, "keep the newest `N` sets")
	cmd.Flags().StringVar(&opts.OlderThan, "older-than", "", "remove sets saved more than `AGE` ago: 30d, 2w, 12h, 90m")
	cmd.Flags().BoolVar(&opts.DryRun, "dry-run", false, "say what would be removed, remove nothing (the default on a terminal)")
	cmd.Flags().BoolVarP(&opts.Yes, "yes", "y", false, "remove without a dry run on a terminal")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the sets as JSON")
	return cmd
}

// parseAge reads an age: a Go duration (12h, 90m) or a number of days (30d) or weeks (2w).
func parseAge(s string) (time.Duration, error) {
	unit := map[byte]time.Duration{'d': 24 * time.Hour, 'w': 7 * 24 * time.Hour}
	if s != "" {
		if u, ok := unit[s[len(s)-1]]; ok {
			n, err := strconv.Atoi(strings.TrimSpace(s[:len(s)-1]))
			if err == nil && n > 0 {
				return time.Duration(n) * u, nil
			}
		}
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("age %q: write it as 30d, 2w, 12h or 90m", s)
	}
	return d, nil
}

func runSessionsPrune(opts *sessionsPruneOptions) error {
	var age time.Duration
	if opts.OlderThan != "" {
		var err error
		if age, err = parseAge(opts.OlderThan); err != nil {
			return inputError(fmt.Errorf("sessions prune: --older-than: %w", err))
		}
	}
	if opts.KeepSet && opts.Keep < 0 {
		return inputError(fmt.Errorf("sessions prune: --keep %d: must be 0 or more", opts.Keep))
	}
	snaps, err := snapshotsOf(opts.App)
	if err != nil {
		return err
	}
	dryRun := opts.DryRun || (opts.OutIsTTY && !opts.Yes)
	pruned, kept, err := snaps.Prune(state.PruneOptions{
		Keep: opts.Keep, KeepSet: opts.KeepSet, OlderThan: age, Now: opts.Now(), DryRun: dryRun,
	})
	if err != nil {
		return err
	}
	if pruned == nil {
		pruned = []state.PrunedSet{}
	}
	if opts.JSON {
		return opts.writeJSON(struct {
			DryRun bool              `json:"dry_run"`
			Pruned []state.PrunedSet `json:"pruned"`
			Kept   int               `json:"kept"`
		}{dryRun, pruned, kept})
	}
	verb := "removed"
	if dryRun {
		verb = "would remove"
	}
	for _, p := range pruned {
		files := "1 file"
		if len(p.Files) != 1 {
			files = fmt.Sprintf("%d files", len(p.Files))
		}
		fmt.Fprintf(opts.Out, "%s %s  %s  (%s)\n", verb, p.ID, p.SavedAt.Local().Format("2006-01-02 15:04"), files)
	}
	fmt.Fprintf(opts.Err, "%s %s, %d kept\n", verb, count(len(pruned), "snapshot set"), kept)
	if dryRun && !opts.DryRun && len(pruned) > 0 {
		fmt.Fprintf(opts.Err, "a dry run, as on every terminal: add --yes to remove them\n")
	}
	return nil
}
