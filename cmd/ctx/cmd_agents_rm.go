package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/ctxtools/ctx/agents"
)

type agentsRmOptions struct {
	agentsApp
	Agent          string
	Force          bool
	RemoveWorktree bool
}

func newAgentsRmCmd(app *App) *cobra.Command {
	o := &agentsRmOptions{agentsApp: agentsApp{app}}
	cmd := &cobra.Command{
		Use:   "rm AGENT",
		Short: "Stop an agent and delete its record (its transcript and checkpoints stay)",
		Example: `  ctx agents rm expiry
  ctx agents rm a-3f --force
  ctx agents rm expiry --remove-worktree   # and its worktree, when it holds no uncommitted work`,
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(c *cobra.Command, args []string) error {
			o.Agent = args[0]
			return runAgentsRm(o)
		},
	}
	cmd.Flags().BoolVar(&o.Force, "force", false, "remove a working agent too")
	cmd.Flags().BoolVar(&o.RemoveWorktree, "remove-worktree", false, "also delete the worktree ctx made for it, when it holds no uncommitted work")
	return cmd
}

func runAgentsRm(o *agentsRmOptions) error {
	a, rec, err := o.one(o.Agent)
	if err != nil {
		return err
	}
	err = a.RemoveWith(rec, o.Force, o.RemoveWorktree)
	if err != nil && !errors.Is(err, agents.ErrWorktree) {
		return err
	}
	fmt.Fprintf(o.Out, "removed %s (%s); its transcript and checkpoint refs stay\n", rec.ID, rec.Name)
	if rec.Worktree != nil && (!o.RemoveWorktree || err != nil) {
		fmt.Fprintf(o.Out, "  worktree %s (branch %s) stays\n", rec.Worktree.Path, rec.Worktree.Branch)
	}
	if err != nil {
		return &exitError{code: exitFailure, err: err}
	}
	return nil
}
