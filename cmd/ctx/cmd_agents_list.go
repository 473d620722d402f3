package main

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/ctxtools/ctx/agents"
)

type agentsListOptions struct {
	agentsApp
	Project string
	JSON    bool
}

func newAgentsListCmd(app *App) *cobra.Command {
	o := &agentsListOptions{agentsApp: agentsApp{app}}
	cmd := &cobra.Command{
		Use:     "list",
		Aliases: []string{"ls"},
		Short:   "List the agents: state, activity, project, memory",
		Example: "  ctx agents list\n  ctx agents ls --json",
		Args:    usageArgs(cobra.NoArgs),
		RunE:    func(c *cobra.Command, args []string) error { return runAgentsList(o) },
	}
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print the agents as JSON")
	cmd.Flags().StringVar(&o.Project, "project", "", "only the agents of this project")
	return cmd
}

func runAgentsList(o *agentsListOptions) error {
	a, err := o.open()
	if err != nil {
		return err
	}
	views, problems := a.List()
	for _, p := range problems {
		o.Warn("%v", p)
	}
	if o.Project != "" {
		p, err := a.Store.WS.Resolve(o.Project)
		if err != nil {
			return err
		}
		var keep []agents.View
		for _, v := range views {
			if v.Project == p.ID {
				keep = append(keep, v)
			}
		}
		views = keep
	}
	if o.JSON {
		if views == nil {
			views = []agents.View{}
		}
		return o.writeJSON(views)
	}
	if len(views) == 0 {
		fmt.Fprintln(o.Out, "no agents: start one with `ctx agents start PROJECT`")
		return nil
	}
	tw := tabwriter.NewWriter(o.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNAME\tPROJECT\tSTATE\tSINCE\tMEMORY")
	now := o.Now()
	for _, v := range views {
		state := string(v.State)
		if v.State == agents.Active && v.Activity.Activity != "" {
			state += " (" + strings.ReplaceAll(v.Activity.Activity, "_", " ") + ")"
		}
		if v.Attention != "" {
			state = "attention: " + state
		}
		mem := "-"
		if v.RSSKB > 0 {
			mem = fmt.Sprintf("%d MB", v.RSSKB/1024)
		} else if v.Pause != nil && v.State == agents.Paused {
			mem = fmt.Sprintf("freed %d MB", v.Pause.RSSFreedKB/1024)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", v.ID, v.Name, v.Project, state, agents.Age(now.Sub(v.StateSince)), mem)
	}
	return tw.Flush()
}
