package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/ctxtools/ctx/internal/state"
)

type sessionsOptions struct {
	*App
	ID   string
	JSON bool
}

func newSessionsCmd(app *App) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "sessions",
		Short: "List and show the snapshot sets that saves wrote",
		Long: `Every save, close and automatic save writes a snapshot set to .ctx/sessions/:
session-<stamp>.json, .yaml and .md, and LATEST-SESSION.txt naming the newest.`,
		Example: `  ctx sessions list
  ctx sessions show latest
  ctx sessions prune --keep 20`,
		Args: usageArgs(cobra.NoArgs),
	}
	cmd.AddCommand(newSessionsListCmd(app), newSessionsShowCmd(app), newSessionsPruneCmd(app))
	return cmd
}

func newSessionsListCmd(app *App) *cobra.Command {
	opts := &sessionsOptions{App: app}
	cmd := &cobra.Command{
		Use:     "list",
		Short:   "List snapshots, newest first",
		Example: "  ctx sessions list\n  ctx sessions list --json",
		Args:    usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runSessionsList(opts)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the snapshots as JSON")
	return cmd
}

func newSessionsShowCmd(app *App) *cobra.Command {
	opts := &sessionsOptions{App: app}
	cmd := &cobra.Command{
		Use:   "show ID",
		Short: "Show one snapshot (an id, its stamp, or latest)",
		Example: `  ctx sessions show latest
  ctx sessions show session-20261121T093000Z-123456 --json`,
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.ID = args[0]
			return runSessionsShow(opts)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the snapshot as JSON")
	return cmd
}

func snapshotsOf(app *App) (state.Snapshots, error) {
	ws, err := app.Workspace()
	if err != nil {
		return state.Snapshots{}, err
	}
	return app.State(ws).Snapshots(), nil
}

func runSessionsList(opts *sessionsOptions) error {
	snaps, err := snapshotsOf(opts.App)
	if err != nil {
		return err
	}
	list, err := snaps.List()
	if list == nil && err != nil {
		return err // the folder itself could not be listed
	}
	if err != nil {
		opts.Warn("%v", err) // some snapshots could not be read
	}
	if list == nil {
		list = []state.Snapshot{}
	}
	if opts.JSON {
		return opts.writeJSON(struct {
			SchemaVersion int              `json:"schema_version"`
			Snapshots     []state.Snapshot `json:"snapshots"`
		}{state.SnapshotSchemaVersion, list})
	}
	if len(list) == 0 {
		opts.Note("no snapshots yet: `ctx save` writes one")
		return nil
	}
	// A snapshot set a line: a long project id is cut, never wrapped.
	tw := &table{cuts: []columnCut{{col: 3, least: 12}}}
	for _, s := range list {
		project := "(workspace)"
		if s.Project != nil {
			project = s.Project.ID
		}
		row := []string{s.SnapshotID, s.SavedAt.Local().Format("2006-01-02 15:04"), string(s.Trigger), project}
		if s.ContextUsage != nil {
			row = append(row, fmt.Sprintf("%.0f%% context", s.ContextUsage.Percentage))
		}
		tw.add(row...)
	}
	return tw.write(opts.Out, opts.Width)
}

func runSessionsShow(opts *sessionsOptions) error {
	snaps, err := snapshotsOf(opts.App)
	if err != nil {
		return err
	}
	s, err := snaps.Read(opts.ID)
	if err != nil {
		return inputError(err)
	}
	if opts.JSON {
		return opts.writeJSON(s)
	}
	_, err = opts.dataOut().Write(s.Markdown()) // the briefing file, byte for byte
	return err
}
