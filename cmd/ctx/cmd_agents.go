package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/ctxtools/ctx/agents"
)

func newAgentsCmd(app *App) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "agents",
		Aliases: []string{"agent"},
		Short:   "Run Claude Code sessions in tmux; pause them to free memory, resume them where they were",
		Long: `An agent is Claude Code running in a tmux session on ctx's own tmux server
(tmux -L ctx), started on a project with ctx's resume prompt. Pausing an agent
saves the project's save point, records the whole working tree in a git
checkpoint ref (files, index and branch untouched), keeps the scrollback, and
ends every process of the agent, freeing its memory. Resuming starts the same
conversation again (claude --resume) with a short prompt saying what changed
meanwhile. There is no daemon: every command works on its own.

An agent is named by its id (a-3f9k2q), a unique prefix of it, or its name.
Exit codes: 0 ok, 1 failure, 2 bad input (unknown agent, wrong state),
3 not now (busy, conversation open elsewhere); the message says what to do.`,
		Example: `  ctx agents start 1 --name expiry
  ctx agents list
  ctx agents pause expiry
  ctx agents resume expiry
  ctx agents start 1 --host build            # on another machine (ctx hosts)`,
		Args: usageArgs(cobra.NoArgs),
	}
	cmd.AddCommand(
		newAgentsStartCmd(app), newAgentsListCmd(app), newAgentsShowCmd(app),
		newAgentsPauseCmd(app), newAgentsResumeCmd(app), newAgentsOpenCmd(app),
		newAgentsSendCmd(app), newAgentsLogsCmd(app), newAgentsRmCmd(app), newAgentsHandoffCmd(app),
		newAgentsEventsCmd(app), newAgentsMoveCmd(app), newAgentsMarkMovingCmd(app),
		newAgentsDiffCmd(app), newAgentsMergeCmd(app),
	)
	addHostFlag(cmd, app)
	// With --host, a command runs on that host (cmd_agents_hosts.go); list reads every
	// host, and open attaches over ssh -t.
	for _, sub := range cmd.Commands() {
		switch sub.Name() {
		case "list", "open", "events", "start", "show", "move":
			// list reads every host; open and events stream; start and show ask the
			// host for JSON and render it here; move works on two hosts.
			continue
		}
		local := sub.RunE
		sub.RunE = func(c *cobra.Command, args []string) error {
			o := agentsApp{app}
			h, err := o.onHost()
			switch {
			case err != nil:
				return err
			case h != nil:
				return o.forward(c, h, args)
			case c.Name() == "pause" && len(args) == 0 && o.AgentsHost == "":
				// pause --all, --project, --idle-for: every host's agents too.
				return o.acrossHosts(c, func() error { return local(c, args) })
			}
			return local(c, args)
		}
	}
	return cmd
}

// agentsApp is what the options of every agents subcommand embed: the App, and how a
// subcommand opens the workspace's agents and finds the ones it names.
type agentsApp struct{ *App }

func (o agentsApp) open() (*agents.Agents, error) {
	ws, err := o.Workspace()
	if err != nil {
		return nil, err
	}
	return agents.New(ws, o.Getenv, os.Environ())
}

// one opens the agents and resolves the one the query names.
func (o agentsApp) one(query string) (*agents.Agents, *agents.Record, error) {
	a, err := o.open()
	if err != nil {
		return nil, nil, err
	}
	rec, err := a.Get(query)
	if err != nil {
		return nil, nil, err
	}
	return a, rec, nil
}

// selectAgents resolves the agents a pause or a resume names: the arguments (names);
// else, when one of its flags selects agents (byFlag: --all, --project, --lost,
// --idle-for), every agent want keeps, of project alone when it is set.
func (o agentsApp) selectAgents(a *agents.Agents, names []string, project string, byFlag bool, want func(agents.View) bool) ([]*agents.Record, error) {
	if len(names) > 0 {
		var out []*agents.Record
		for _, q := range names {
			r, err := a.Get(q)
			if err != nil {
				return nil, err
			}
			out = append(out, r)
		}
		return out, nil
	}
	if !byFlag {
		return nil, inputError(errors.New("name an agent, or use --all or --project"))
	}
	projectID := ""
	if project != "" {
		p, err := a.Store.WS.Resolve(project)
		if err != nil {
			return nil, err
		}
		projectID = p.ID
	}
	views, _ := a.List()
	var out []*agents.Record
	for _, v := range views {
		if (projectID == "" || v.Project == projectID) && want(v) {
			out = append(out, v.Record)
		}
	}
	return out, nil
}

// forEach runs op on every agent of recs and reports the agents op did: the line op
// returns for each, or with asJSON the list of their records. op returns a nil record
// for an agent it did not do. One agent's failure does not stop the others; the
// failures are joined, each naming its agent.
func (o agentsApp) forEach(recs []*agents.Record, asJSON bool, op func(*agents.Record) (*agents.Record, string, error)) error {
	done := []*agents.Record{}
	var errs []error
	for _, r := range recs {
		out, line, err := op(r)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", r.ID, err))
		}
		if out == nil {
			continue
		}
		done = append(done, out)
		if !asJSON {
			fmt.Fprintln(o.Out, line)
		}
	}
	if asJSON {
		if err := o.writeJSON(done); err != nil {
			return err
		}
	}
	return errors.Join(errs...)
}
