package main

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/ctxtools/ctx/agents"
)

type agentsPauseOptions struct {
	agentsApp
	Agents  []string
	All     bool
	Project string
	IdleFor time.Duration
	Git     string
	Wait    time.Duration
	Force   bool
	JSON    bool
}

func newAgentsPauseCmd(app *App) *cobra.Command {
	o := &agentsPauseOptions{agentsApp: agentsApp{app}}
	cmd := &cobra.Command{
		Use:   "pause [AGENT...]",
		Short: "Pause agents: save point, git checkpoint, scrollback; every process ended, memory freed",
		Example: `  ctx agents pause expiry
  ctx agents pause --all --wait 2m
  ctx agents pause --idle-for 30m     # free the memory of agents nobody has used for 30 minutes
  ctx agents pause a-3f --force
  ctx agents pause expiry --git stash   # a clean tree while the agent is away; resume applies it`,
		RunE: func(c *cobra.Command, args []string) error {
			o.Agents = args
			return runAgentsPause(o)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&o.All, "all", false, "every active agent")
	f.StringVar(&o.Project, "project", "", "the active agents of a project")
	f.DurationVar(&o.IdleFor, "idle-for", 0, "the active agents idle (or waiting for input) for at least this long, e.g. 30m")
	f.StringVar(&o.Git, "git", agents.GitKeep, "after the checkpoint: keep the tree as it is, stash the agent's changes, or commit them as WIP")
	f.DurationVar(&o.Wait, "wait", 30*time.Second, "how long to wait for a working agent to finish its turn")
	f.BoolVar(&o.Force, "force", false, "interrupt a working agent (Escape) instead of refusing")
	f.BoolVar(&o.JSON, "json", false, "print the paused agents as JSON")
	return cmd
}

func runAgentsPause(o *agentsPauseOptions) error {
	a, err := o.open()
	if err != nil {
		return err
	}
	if o.IdleFor < 0 || (o.IdleFor > 0 && len(o.Agents) > 0) {
		return inputError(errors.New("pause: --idle-for takes a positive duration and no agent names"))
	}
	strategy, err := agents.CheckGitStrategy(o.Git)
	if err != nil {
		return fmt.Errorf("pause: %w", err)
	}
	now := o.Now()
	recs, err := o.selectAgents(a, o.Agents, o.Project, o.All || o.Project != "" || o.IdleFor > 0, func(v agents.View) bool {
		return v.State == agents.Active && idleFor(v, now) >= o.IdleFor
	})
	if err != nil {
		return err
	}
	reason := "user"
	if o.IdleFor > 0 {
		reason = "idle"
	}
	return o.forEach(recs, o.JSON, func(r *agents.Record) (*agents.Record, string, error) {
		out, err := a.Pause(r, agents.PauseOptions{Wait: o.Wait, Force: o.Force, Reason: reason, Git: strategy})
		if out == nil || out.State != agents.Paused {
			return nil, "", err
		}
		line := fmt.Sprintf("paused %s (%s): freed %d MB, %d processes ended", out.ID, out.Name, out.Pause.RSSFreedKB/1024, out.Pause.ProcessesEnded)
		if out.Pause.Git != nil {
			line += ", checkpoint " + out.Pause.Git.Ref
		}
		return out, line, err
	})
}

// idleFor is how long an agent has been idle or waiting for input (its last hook
// event's age), or 0 when it is working, compacting or has reported nothing yet.
func idleFor(v agents.View, now time.Time) time.Duration {
	switch v.Activity.Activity {
	case "idle", "needs_input":
		if !v.Activity.At.IsZero() {
			return now.Sub(v.Activity.At)
		}
	}
	return 0
}
