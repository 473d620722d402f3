package main

import (
	"fmt"
	"os"
	"os/exec"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ctxtools/ctx/agents"
)

type agentsOpenOptions struct {
	agentsApp
	Agent    string
	ReadOnly bool
}

func newAgentsOpenCmd(app *App) *cobra.Command {
	o := &agentsOpenOptions{agentsApp: agentsApp{app}}
	cmd := &cobra.Command{
		Use:     "open AGENT",
		Aliases: []string{"attach"},
		Short:   "Attach this terminal to an agent (detach with Ctrl-b d)",
		Example: "  ctx agents open expiry\n  ctx agents attach a-3f --read-only",
		Args:    usageArgs(cobra.ExactArgs(1)),
		RunE: func(c *cobra.Command, args []string) error {
			o.Agent = args[0]
			return runAgentsOpen(o)
		},
	}
	cmd.Flags().BoolVar(&o.ReadOnly, "read-only", false, "watch without typing")
	return cmd
}

func runAgentsOpen(o *agentsOpenOptions) error {
	if h, err := o.onHost(); err != nil {
		return err
	} else if h != nil {
		return o.openOn(h, o.Agent, o.ReadOnly)
	}
	a, rec, err := o.one(o.Agent)
	if err != nil {
		return err
	}
	if !rec.State.Running() && rec.State != agents.Exited {
		return &exitError{code: exitNotNow, err: fmt.Errorf("agent %s is %s: resume it first with `ctx agents resume %s`", rec.ID, rec.State, rec.Name)}
	}
	argv := a.Tmux.Attach(rec.Tmux.Session, o.ReadOnly)
	if !o.InIsTTY || !o.OutIsTTY {
		fmt.Fprintln(o.dataOut(), strings.Join(argv, " "))
		return nil
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	return cmd.Run()
}
