package main

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/ctxtools/ctx/agents"
)

type agentsHandoffOptions struct {
	agentsApp
	Agent       string
	Policy      string
	Wait        time.Duration
	NoWait      bool
	JSON        bool
	FromSession string
	Reason      string
}

func newAgentsHandoffCmd(app *App) *cobra.Command {
	o := &agentsHandoffOptions{agentsApp: agentsApp{app}}
	cmd := &cobra.Command{
		Use:   "handoff AGENT",
		Short: "Hand an agent's work to a fresh session now, or set its handoff policy",
		Long: `A handoff ends the agent's Claude Code session and starts a fresh one for the
same agent, in the same tmux window and folder, whose first prompt is ctx's
handoff note: the agent's own last note (ctx save), the files it changed and its
last actions, the decisions and blockers it recorded, then the project's next
task, pending tasks and the reads in order, within about 2,000 tokens.

With the policy fresh (the default), an agent hands off by itself when its
context reaches the auto-save threshold, instead of waiting for Claude Code to
compact it; with compact, Claude Code compacts as it would without ctx. This
command hands off now, or with --policy sets the agent's policy and does
nothing else. It waits for the agent to be idle and refuses while a permission
prompt waits.`,
		Example: `  ctx agents handoff expiry
  ctx agents handoff expiry --policy compact   # this agent lets Claude Code compact
  ctx agents handoff expiry --json`,
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(c *cobra.Command, args []string) error {
			o.Agent = args[0]
			return runAgentsHandoff(o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Policy, "policy", "", "set the agent's handoff policy (fresh or compact) instead of handing off")
	f.DurationVar(&o.Wait, "wait", 30*time.Second, "how long to wait for a working agent to finish its turn")
	f.BoolVar(&o.NoWait, "no-wait", false, "return once the fresh session is launched")
	f.BoolVar(&o.JSON, "json", false, "print the agent as JSON")
	// The hooks of the agent's session start the handoff with these.
	f.StringVar(&o.FromSession, "from-session", "", "hand off only if this is still the agent's session")
	f.StringVar(&o.Reason, "reason", agents.ReasonForced, "why: context, bound or forced")
	_ = f.MarkHidden("from-session")
	_ = f.MarkHidden("reason")
	return cmd
}

func runAgentsHandoff(o *agentsHandoffOptions) error {
	a, rec, err := o.one(o.Agent)
	if err != nil {
		return err
	}
	if o.Policy != "" {
		policy, err := agents.CheckHandoff(o.Policy)
		if err != nil {
			return inputError(err)
		}
		out, err := a.Store.Update(rec.ID, func(r *agents.Record) error { r.Handoff = policy; return nil })
		if err != nil {
			return err
		}
		if o.JSON {
			return o.writeJSON(out)
		}
		fmt.Fprintf(o.Out, "%s (%s): handoff policy %s\n", out.ID, out.Name, policy)
		return nil
	}
	switch o.Reason {
	case agents.ReasonContext, agents.ReasonBound, agents.ReasonForced:
	default:
		return inputError(fmt.Errorf("--reason %q: use context, bound or forced", o.Reason))
	}
	out, err := a.Handoff(rec, agents.HandoffOptions{Reason: o.Reason, FromSession: o.FromSession, Wait: o.Wait, NoWait: o.NoWait})
	if out == nil {
		return err
	}
	if o.JSON {
		return errors.Join(o.writeJSON(out), err)
	}
	if err == nil {
		fmt.Fprintf(o.Out, "%s (%s): handed off to session %s (%s)\n", out.ID, out.Name, out.Claude.SessionID, out.State)
	}
	return err
}
