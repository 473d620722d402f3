package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/ctxtools/ctx/agents"
)

type agentsResumeOptions struct {
	agentsApp
	Agents        []string
	Lost          bool
	All           bool
	Prompt        string
	Fresh         bool
	NoWait        bool
	WithConflicts bool
	JSON          bool
}

func newAgentsResumeCmd(app *App) *cobra.Command {
	o := &agentsResumeOptions{agentsApp: agentsApp{app}}
	cmd := &cobra.Command{
		Use:   "resume [AGENT...]",
		Short: "Resume agents in the same conversation, told what changed while they were away",
		Example: `  ctx agents resume expiry
  ctx agents resume --lost
  ctx agents resume a-3f --prompt "Go on with task 8"`,
		RunE: func(c *cobra.Command, args []string) error {
			o.Agents = args
			return runAgentsResume(o)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&o.Lost, "lost", false, "every agent left lost by a reboot or a killed tmux server")
	f.BoolVar(&o.All, "all", false, "every paused agent")
	f.StringVar(&o.Prompt, "prompt", "", "the prompt to resume with (default: what changed, and the next action)")
	f.BoolVar(&o.Fresh, "fresh", false, "start a new conversation with the full briefing")
	f.BoolVar(&o.NoWait, "no-wait", false, "return once claude is launched")
	f.BoolVar(&o.WithConflicts, "resume-with-conflicts", false, "resume even when the pause's stash conflicts (the prompt lists the files)")
	f.BoolVar(&o.JSON, "json", false, "print the resumed agents as JSON")
	return cmd
}

func runAgentsResume(o *agentsResumeOptions) error {
	a, err := o.open()
	if err != nil {
		return err
	}
	recs, err := o.selectAgents(a, o.Agents, "", o.All || o.Lost, func(v agents.View) bool {
		if o.Lost {
			return v.State == agents.Lost
		}
		return v.State == agents.Paused
	})
	if err != nil {
		return err
	}
	return o.forEach(recs, o.JSON, func(r *agents.Record) (*agents.Record, string, error) {
		out, plan, err := a.Resume(r, agents.ResumeOptions{Prompt: o.Prompt, Fresh: o.Fresh, NoWait: o.NoWait, WithConflicts: o.WithConflicts})
		if out == nil {
			return nil, "", err
		}
		how := "in the same conversation"
		if plan != nil && plan.Fresh {
			how = "in a fresh conversation (" + plan.FreshWhy + ")"
		}
		return out, fmt.Sprintf("resumed %s (%s) %s: %s", out.ID, out.Name, how, out.State), err
	})
}
