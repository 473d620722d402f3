package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/ctxtools/ctx/agents"
)

type agentsOptions struct {
	*App
	JSON     bool
	Agents   []string
	Project  string
	Name     string
	Cwd      string
	Prompt   string
	Mode     string
	Model    string
	Auto     bool
	NoWait   bool
	Wait     time.Duration
	Force    bool
	All      bool
	Lost     bool
	Fresh    bool
	ReadOnly bool
	IdleFor  time.Duration
	Git      string
	GoOn     bool
	Worktree string
	From     string
	RemoveWT bool
}

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
  ctx agents resume expiry`,
		Args: usageArgs(cobra.NoArgs),
	}
	cmd.AddCommand(
		newAgentsStartCmd(app), newAgentsListCmd(app), newAgentsShowCmd(app),
		newAgentsPauseCmd(app), newAgentsResumeCmd(app), newAgentsOpenCmd(app),
		newAgentsSendCmd(app), newAgentsLogsCmd(app), newAgentsRmCmd(app),
	)
	return cmd
}

func (o *agentsOptions) open() (*agents.Agents, error) {
	ws, err := o.Workspace()
	if err != nil {
		return nil, err
	}
	return agents.New(ws, o.Getenv, os.Environ())
}

// one opens the agents and resolves the one the query names.
func (o *agentsOptions) one(query string) (*agents.Agents, *agents.Record, error) {
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

func newAgentsStartCmd(app *App) *cobra.Command {
	o := &agentsOptions{App: app}
	cmd := &cobra.Command{
		Use:   "start PROJECT",
		Short: "Start an agent on a project, in tmux, with ctx's resume prompt",
		Example: `  ctx agents start 1
  ctx agents start checkout --name expiry --permission-mode acceptEdits
  ctx agents start 1 --name expiry --worktree ctx/expiry   # on a branch of its own`,
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(c *cobra.Command, args []string) error {
			o.Project = args[0]
			return runAgentsStart(o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Name, "name", "", "a name for the agent (default: the project id and the agent id)")
	f.StringVar(&o.Cwd, "cwd", "", "the folder claude runs in (default: the workspace root)")
	f.StringVar(&o.Worktree, "worktree", "", "run on this branch in a git worktree of its own, under <repo>/.ctx/worktrees/<name>")
	f.StringVar(&o.From, "from", "", "with --worktree, make a new branch from this commit (default: HEAD)")
	f.StringVar(&o.Prompt, "prompt", "", "the first prompt (default: ctx's resume prompt for the project)")
	f.StringVar(&o.Mode, "permission-mode", "", "claude's --permission-mode")
	f.StringVar(&o.Model, "model", "", "claude's --model")
	f.BoolVar(&o.Auto, "auto-approve", false, "let ctx's guard answer permission requests (see docs/guard.md)")
	f.BoolVar(&o.NoWait, "no-wait", false, "return once claude is launched, without waiting for its session to start")
	f.BoolVar(&o.JSON, "json", false, "print the agent as JSON")
	return cmd
}

func runAgentsStart(o *agentsOptions) error {
	a, err := o.open()
	if err != nil {
		return err
	}
	p, err := a.Store.WS.Resolve(o.Project)
	if err != nil {
		return err
	}
	rec, err := a.Start(agents.StartOptions{Project: p, Name: o.Name, Cwd: o.Cwd, Prompt: o.Prompt,
		PermissionMode: o.Mode, Model: o.Model, AutoApprove: o.Auto, NoWait: o.NoWait, Worktree: o.Worktree, From: o.From})
	if rec == nil {
		return err
	}
	if o.From != "" && o.Worktree == "" {
		o.Warn("--from goes with --worktree; ignored")
	}
	if o.JSON {
		return errors.Join(o.writeJSON(rec), err)
	}
	fmt.Fprintf(o.Out, "started %s (%s) on %s: %s\n", rec.ID, rec.Name, rec.Project, rec.State)
	fmt.Fprintf(o.Out, "  attach: ctx agents open %s\n", rec.Name)
	return err
}

func newAgentsListCmd(app *App) *cobra.Command {
	o := &agentsOptions{App: app}
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

func runAgentsList(o *agentsOptions) error {
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

func newAgentsShowCmd(app *App) *cobra.Command {
	o := &agentsOptions{App: app}
	cmd := &cobra.Command{
		Use:     "show AGENT",
		Short:   "Show an agent: its record, activity, pause and the resume prompt it would get",
		Example: "  ctx agents show expiry\n  ctx agents show a-3f --json",
		Args:    usageArgs(cobra.ExactArgs(1)),
		RunE: func(c *cobra.Command, args []string) error {
			o.Agents = args
			return runAgentsShow(o)
		},
	}
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print as JSON")
	return cmd
}

func runAgentsShow(o *agentsOptions) error {
	a, rec, err := o.one(o.Agents[0])
	if err != nil {
		return err
	}
	out := a.Detail(rec)
	if o.JSON {
		return o.writeJSON(out)
	}
	fmt.Fprintf(o.Out, "%s  %s  project %s  %s since %s\n", rec.ID, rec.Name, rec.Project, rec.State, rec.StateSince.Local().Format(time.DateTime))
	fmt.Fprintf(o.Out, "  folder     %s\n  session    %s\n", rec.Cwd, rec.Claude.SessionID)
	if out.Activity.Activity != "" {
		fmt.Fprintf(o.Out, "  activity   %s (%s at %s) %s\n", out.Activity.Activity, out.Activity.Event, out.Activity.At.Local().Format(time.TimeOnly), out.Activity.Summary)
	}
	if p := rec.Pause; p != nil {
		fmt.Fprintf(o.Out, "  paused     %s (%s), freed %d MB, %d processes ended\n", p.PausedAt.Local().Format(time.DateTime), p.Reason, p.RSSFreedKB/1024, p.ProcessesEnded)
		if p.Git != nil {
			fmt.Fprintf(o.Out, "  checkpoint %s (%d dirty files)\n  restore    %s\n", p.Git.Ref, len(p.Git.Dirty), out.Restore)
		}
	}
	if rec.Exit != nil {
		fmt.Fprintf(o.Out, "  exited     status %d\n", rec.Exit.Status)
		for _, l := range rec.Exit.LastLines {
			fmt.Fprintf(o.Out, "    | %s\n", l)
		}
	}
	if rec.LastError != "" {
		fmt.Fprintf(o.Out, "  last error %s\n", rec.LastError)
	}
	if out.Resume != nil {
		fmt.Fprintln(o.Out, "  resume prompt:")
		for _, l := range strings.Split(out.Resume.Prompt, "\n") {
			fmt.Fprintf(o.Out, "    %s\n", l)
		}
	}
	fmt.Fprintf(o.Out, "  attach     %s\n", out.Attach)
	return nil
}

// selectAgents resolves the agents an operation names: the arguments, every agent
// (--all), a project's, or the lost ones.
func (o *agentsOptions) selectAgents(a *agents.Agents, want func(agents.View) bool) ([]*agents.Record, error) {
	if len(o.Agents) > 0 {
		var out []*agents.Record
		for _, q := range o.Agents {
			r, err := a.Get(q)
			if err != nil {
				return nil, err
			}
			out = append(out, r)
		}
		return out, nil
	}
	if !o.All && o.Project == "" && !o.Lost && o.IdleFor <= 0 {
		return nil, inputError(errors.New("name an agent, or use --all or --project"))
	}
	projectID := ""
	if o.Project != "" {
		p, err := a.Store.WS.Resolve(o.Project)
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

func newAgentsPauseCmd(app *App) *cobra.Command {
	o := &agentsOptions{App: app}
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

func runAgentsPause(o *agentsOptions) error {
	a, err := o.open()
	if err != nil {
		return err
	}
	if o.IdleFor < 0 || (o.IdleFor > 0 && len(o.Agents) > 0) {
		return inputError(errors.New("pause: --idle-for takes a positive duration and no agent names"))
	}
	strategy, err := agents.CheckGitStrategy(o.Git)
	if err != nil {
		return inputError(fmt.Errorf("pause: %w", err))
	}
	now := o.Now()
	recs, err := o.selectAgents(a, func(v agents.View) bool { return v.State == agents.Active && idleFor(v, now) >= o.IdleFor })
	if err != nil {
		return err
	}
	reason := "user"
	if o.IdleFor > 0 {
		reason = "idle"
	}
	var done []*agents.Record
	var errs []error
	for _, r := range recs {
		out, err := a.Pause(r, agents.PauseOptions{Wait: o.Wait, Force: o.Force, Reason: reason, Git: strategy})
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", r.ID, err))
		}
		if out != nil && out.State == agents.Paused {
			done = append(done, out)
			if !o.JSON {
				fmt.Fprintf(o.Out, "paused %s (%s): freed %d MB, %d processes ended", out.ID, out.Name, out.Pause.RSSFreedKB/1024, out.Pause.ProcessesEnded)
				if out.Pause.Git != nil {
					fmt.Fprintf(o.Out, ", checkpoint %s", out.Pause.Git.Ref)
				}
				fmt.Fprintln(o.Out)
			}
		}
	}
	if o.JSON {
		if done == nil {
			done = []*agents.Record{}
		}
		if err := o.writeJSON(done); err != nil {
			return err
		}
	}
	return errors.Join(errs...)
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

func newAgentsResumeCmd(app *App) *cobra.Command {
	o := &agentsOptions{App: app}
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
	f.BoolVar(&o.GoOn, "resume-with-conflicts", false, "resume even when the pause's stash conflicts (the prompt lists the files)")
	f.BoolVar(&o.JSON, "json", false, "print the resumed agents as JSON")
	return cmd
}

func runAgentsResume(o *agentsOptions) error {
	a, err := o.open()
	if err != nil {
		return err
	}
	recs, err := o.selectAgents(a, func(v agents.View) bool {
		if o.Lost {
			return v.State == agents.Lost
		}
		return v.State == agents.Paused
	})
	if err != nil {
		return err
	}
	var done []*agents.Record
	var errs []error
	for _, r := range recs {
		out, plan, err := a.Resume(r, agents.ResumeOptions{Prompt: o.Prompt, Fresh: o.Fresh, NoWait: o.NoWait, WithConflicts: o.GoOn})
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", r.ID, err))
		}
		if out == nil {
			continue
		}
		done = append(done, out)
		if !o.JSON {
			how := "in the same conversation"
			if plan != nil && plan.Fresh {
				how = "in a fresh conversation (" + plan.FreshWhy + ")"
			}
			fmt.Fprintf(o.Out, "resumed %s (%s) %s: %s\n", out.ID, out.Name, how, out.State)
		}
	}
	if o.JSON {
		if done == nil {
			done = []*agents.Record{}
		}
		if err := o.writeJSON(done); err != nil {
			return err
		}
	}
	return errors.Join(errs...)
}

func newAgentsOpenCmd(app *App) *cobra.Command {
	o := &agentsOptions{App: app}
	cmd := &cobra.Command{
		Use:     "open AGENT",
		Aliases: []string{"attach"},
		Short:   "Attach this terminal to an agent (detach with Ctrl-b d)",
		Example: "  ctx agents open expiry\n  ctx agents attach a-3f --read-only",
		Args:    usageArgs(cobra.ExactArgs(1)),
		RunE: func(c *cobra.Command, args []string) error {
			o.Agents = args
			return runAgentsOpen(o)
		},
	}
	cmd.Flags().BoolVar(&o.ReadOnly, "read-only", false, "watch without typing")
	return cmd
}

func runAgentsOpen(o *agentsOptions) error {
	a, rec, err := o.one(o.Agents[0])
	if err != nil {
		return err
	}
	if !rec.State.Running() && rec.State != agents.Exited {
		return &exitError{code: exitNotNow, err: fmt.Errorf("agent %s is %s: resume it first with `ctx agents resume %s`", rec.ID, rec.State, rec.Name)}
	}
	argv := a.Tmux.Attach(rec.Host.Session, o.ReadOnly)
	if !o.InIsTTY || !o.OutIsTTY {
		fmt.Fprintln(o.Out, strings.Join(argv, " "))
		return nil
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	return cmd.Run()
}

func newAgentsSendCmd(app *App) *cobra.Command {
	o := &agentsOptions{App: app}
	cmd := &cobra.Command{
		Use:     "send AGENT TEXT",
		Short:   "Type a prompt into an idle agent",
		Example: `  ctx agents send expiry "Run the tests again"`,
		Args:    usageArgs(cobra.ExactArgs(2)),
		RunE: func(c *cobra.Command, args []string) error {
			o.Agents, o.Prompt = args[:1], args[1]
			a, rec, err := o.one(o.Agents[0])
			if err != nil {
				return err
			}
			return a.Send(rec, o.Prompt)
		},
	}
	return cmd
}

func newAgentsLogsCmd(app *App) *cobra.Command {
	o := &agentsOptions{App: app}
	cmd := &cobra.Command{
		Use:     "logs AGENT",
		Short:   "Print an agent's screen and history, or the scrollback its pause kept",
		Example: "  ctx agents logs expiry | less",
		Args:    usageArgs(cobra.ExactArgs(1)),
		RunE: func(c *cobra.Command, args []string) error {
			a, rec, err := o.one(args[0])
			if err != nil {
				return err
			}
			text, err := a.Logs(rec)
			if err != nil {
				return err
			}
			_, err = fmt.Fprint(o.dataOut(), text)
			return err
		},
	}
	return cmd
}

func newAgentsRmCmd(app *App) *cobra.Command {
	o := &agentsOptions{App: app}
	cmd := &cobra.Command{
		Use:   "rm AGENT",
		Short: "Stop an agent and delete its record (its transcript and checkpoints stay)",
		Example: `  ctx agents rm expiry
  ctx agents rm a-3f --force
  ctx agents rm expiry --remove-worktree   # and its worktree, when it holds no uncommitted work`,
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(c *cobra.Command, args []string) error {
			a, rec, err := o.one(args[0])
			if err != nil {
				return err
			}
			err = a.RemoveWith(rec, o.Force, o.RemoveWT)
			if err != nil && !errors.Is(err, agents.ErrWorktree) {
				return err
			}
			fmt.Fprintf(o.Out, "removed %s (%s); its transcript and checkpoint refs stay\n", rec.ID, rec.Name)
			if rec.Worktree != nil && (!o.RemoveWT || err != nil) {
				fmt.Fprintf(o.Out, "  worktree %s (branch %s) stays\n", rec.Worktree.Path, rec.Worktree.Branch)
			}
			if err != nil {
				return &exitError{code: exitFailure, err: err}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&o.Force, "force", false, "remove a working agent too")
	cmd.Flags().BoolVar(&o.RemoveWT, "remove-worktree", false, "also delete the worktree ctx made for it, when it holds no uncommitted work")
	return cmd
}
