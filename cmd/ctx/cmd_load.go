package main

import (
	"errors"

	"github.com/spf13/cobra"

	"github.com/ctxtools/ctx/internal/events"
	"github.com/ctxtools/ctx/internal/state"
	"github.com/ctxtools/ctx/loader"
)

type loadOptions struct {
	*App
	Query  string
	Resume bool
	Budget int
	JSON   bool
}

func addLoadFlags(cmd *cobra.Command, opts *loadOptions) {
	cmd.Flags().IntVar(&opts.Budget, "budget", 0, "cut the recommended reads to fit this many tokens (the save point always stays)")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the load result as JSON")
}

func newLoadCmd(app *App, runF func(*loadOptions) error) *cobra.Command {
	opts := &loadOptions{App: app}
	cmd := &cobra.Command{
		Use:   "load [PROJECT]",
		Short: "Show where a project's work stopped and what to read first",
		Long: `Load a project: its progress, its save point (_resume.md), the files to read
in order with their token cost, and a short resume prompt for the agent.

PROJECT is a number (1, 01 and 001 all mean project 1), an id such as
01-checkout-redesign, or part of a project's name. With --resume and no PROJECT,
the project whose save point is newest is loaded.

Loading binds the agent session ($CLAUDE_CODE_SESSION_ID) to the project, so that
later saves and hooks know where to write.`,
		Example: `  ctx load 1
  ctx load checkout --json
  ctx load --resume --budget 20000`,
		Args: usageArgs(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.Query = args[0]
			}
			if opts.Query == "" && !opts.Resume {
				return inputError(errors.New("load: name a project (e.g. `ctx load 1`) or pass --resume for the newest save point"))
			}
			if runF != nil {
				return runF(opts)
			}
			return runLoad(opts)
		},
		ValidArgsFunction: completeProjects(app),
	}
	cmd.Flags().BoolVar(&opts.Resume, "resume", false, "without PROJECT, load the project with the newest save point")
	addLoadFlags(cmd, opts)
	return cmd
}

func runLoad(opts *loadOptions) error {
	if opts.Budget < 0 {
		return inputError(errors.New("--budget must be a positive number of tokens"))
	}
	ws, err := opts.Workspace()
	if err != nil {
		return err
	}
	var p *loader.Project
	if opts.Query == "" {
		p, err = ws.Newest()
	} else {
		p, err = ws.Resolve(opts.Query)
	}
	if err != nil {
		return err
	}
	result := ws.Load(p, loader.LoadOptions{Budget: opts.Budget})
	opts.warnProblems(ws, p)
	out := loadOutput{Result: result, Session: bindSession(opts.App, ws, p)}
	if opts.JSON {
		return opts.writeJSON(out)
	}
	renderBriefing(opts.App, out)
	return nil
}

// loadOutput is the load result with the session binding that the load made.
type loadOutput struct {
	*loader.Result
	Session *sessionInfo `json:"session,omitempty"`
}

type sessionInfo struct {
	ID    string `json:"id"`
	Bound bool   `json:"bound"`
}

// bindSession binds the agent session to the loaded project. A failure is a warning:
// the load itself has succeeded.
func bindSession(app *App, ws *loader.Workspace, p *loader.Project) *sessionInfo {
	id, _ := events.CurrentID(app.Getenv)
	if id == "" {
		return nil
	}
	err := app.State(ws).Session(id).Bind(state.Binding{ProjectID: p.ID, Path: p.Path, BoundAt: app.Now().UTC()})
	if err != nil {
		app.Warn("session not bound to %s: %v", p.ID, err)
		return &sessionInfo{ID: id}
	}
	return &sessionInfo{ID: id, Bound: true}
}

// completeProjects completes project ids for the shell.
func completeProjects(app *App) func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return func(_ *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		ws, err := app.Workspace()
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		folders, _ := ws.Folders()
		ids := make([]string, 0, len(folders))
		for _, f := range folders {
			ids = append(ids, f.ID)
		}
		return ids, cobra.ShellCompDirectiveNoFileComp
	}
}
