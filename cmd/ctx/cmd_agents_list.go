package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ctxtools/ctx/agents"
	"github.com/ctxtools/ctx/hosts"
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

// agentsListCuts are the columns a row of ctx agents list is cut in, in order, when
// it is wider than the terminal or the pipe's 80 columns: PROJECT (its number stays),
// STATE, then NAME, which is what people type.
var agentsListCuts = []columnCut{{col: 3, least: 12}, {col: 4, least: 12}, {col: 2, least: 12}, {col: 3, least: 8}, {col: 4, least: 8}, {col: 2, least: 8}}

func runAgentsList(o *agentsListOptions) error {
	// Every host's agents; a host that did not answer is reported after the others.
	views, hostErr := o.fleetList()
	if views == nil && hostErr != nil {
		var unreachable *hosts.UnreachableError
		var remote *hosts.RemoteError
		if !errors.As(hostErr, &unreachable) && !errors.As(hostErr, &remote) {
			return hostErr
		}
	}
	if o.Project != "" {
		ws, err := o.Workspace()
		if err != nil {
			return err
		}
		p, err := ws.Resolve(o.Project)
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
		return errors.Join(o.writeJSON(views), hostErr)
	}
	if len(views) == 0 {
		if hostErr == nil {
			fmt.Fprintln(o.Out, "no agents: start one with `ctx agents start PROJECT`")
		}
		return hostErr
	}
	// A row is one line: a long name, then the project's id (its number stays), then
	// a long state are cut, never wrapped; the agent's id names it as well, and
	// --json has everything.
	tw := &table{cuts: agentsListCuts}
	tw.add("HOST", "ID", "NAME", "PROJECT", "STATE", "SINCE", "MEMORY")
	now := o.Now()
	for _, v := range views {
		state := string(v.State)
		if v.State == agents.Active && v.Activity.Activity != "" {
			state += " (" + strings.ReplaceAll(v.Activity.Activity, "_", " ") + ")"
		}
		if v.Attention != "" {
			state += ", attention" // after the state, which a cut keeps
		}
		mem := "-"
		if v.RSSKB > 0 {
			mem = fmt.Sprintf("%d MB", v.RSSKB/1024)
		} else if v.Pause != nil && v.State == agents.Paused {
			mem = fmt.Sprintf("freed %d MB", v.Pause.RSSFreedKB/1024)
		}
		tw.add(v.Host, v.ID, v.Name, v.Project, state, agents.Age(now.Sub(v.StateSince)), mem)
	}
	return errors.Join(tw.write(o.Out, o.Width), hostErr)
}
