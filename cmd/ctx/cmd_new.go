package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/ctxtools/ctx/loader"
)

type newOptions struct {
	*App
	Name        string
	Status      string
	Description string
	JSON        bool
}

func newNewCmd(app *App) *cobra.Command {
	opts := &newOptions{App: app}
	cmd := &cobra.Command{
		Use:   "new NAME",
		Short: "Create a project with its planning files and save point",
		Long: `Create a project folder 02-projects/NN-slug with the next free number
(archived projects count, so numbers never repeat), its 01-planning files
(overview, plan, steps) and its _resume.md save point, all from templates.
A workspace overrides any template in .ctx/templates/.`,
		Example: `  ctx new "Checkout redesign"
  ctx new "Gift cards" --status PLANNING --description "sell and redeem gift cards at checkout"`,
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Name = args[0]
			return runNew(opts)
		},
	}
	cmd.Flags().StringVar(&opts.Status, "status", "PLANNING", "the project's status")
	cmd.Flags().StringVar(&opts.Description, "description", "", "one line on what the project is for")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the new project as JSON")
	return cmd
}

func runNew(opts *newOptions) error {
	ws, err := opts.Workspace()
	if err != nil {
		return err
	}
	if !loader.IsWorkspace(ws.Root) {
		// --workspace or $CTX_WORKSPACE named a plain folder: ctx init makes it one,
		// and says so; a project is no place to do that quietly.
		return inputError(fmt.Errorf("new: %s is not a workspace yet (it holds no %s/ or .ctx/): `ctx init` there makes it one",
			ws.Root, loader.DefaultProjectsDir))
	}
	p, err := ws.Create(loader.NewProject{Name: opts.Name, Status: opts.Status, Description: opts.Description, Now: opts.Now()})
	if err != nil {
		if errors.Is(err, loader.ErrBadName) || errors.Is(err, loader.ErrNameTaken) {
			return inputError(fmt.Errorf("new %q: %w", opts.Name, err))
		}
		return err
	}
	if opts.JSON {
		return opts.writeJSON(struct {
			SchemaVersion int             `json:"schema_version"`
			Project       *loader.Project `json:"project"`
		}{loader.SchemaVersion, p})
	}
	fmt.Fprintf(opts.Out, "Created %s\n", p.Path)
	fmt.Fprintf(opts.Out, "  planning  %s/%s/{overview,plan,steps}.md\n", p.Path, ws.Config.PlanningDir)
	fmt.Fprintf(opts.Out, "  save      %s\n", ws.Rel(ws.ResumePath(p)))
	fmt.Fprintf(opts.Out, "\nNext: describe it in overview.md, list tasks in steps.md, then `ctx load %d`.\n", p.Number)
	return nil
}
