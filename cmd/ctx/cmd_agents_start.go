package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ctxtools/ctx/agents"
	"github.com/ctxtools/ctx/hosts"
)

type agentsStartOptions struct {
	agentsApp
	cmd      *cobra.Command
	Project  string
	Name     string
	Cwd      string
	Worktree string
	From     string
	Prompt   string
	Mode     string
	Model    string
	Auto     bool
	NoWait   bool
	Handoff  string
	// MovedFrom is "HOST:ID": ctx agents move starts the agent where it moved.
	MovedFrom string
	JSON      bool
}

func newAgentsStartCmd(app *App) *cobra.Command {
	o := &agentsStartOptions{agentsApp: agentsApp{app}}
	cmd := &cobra.Command{
		Use:   "start PROJECT",
		Short: "Start an agent on a project, in tmux, with ctx's resume prompt",
		Example: `  ctx agents start 1
  ctx agents start checkout --name expiry --permission-mode acceptEdits
  ctx agents start 1 --name expiry --worktree ctx/expiry   # on a branch of its own
  ctx agents start 1 --handoff compact   # let Claude Code compact instead of handing off`,
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(c *cobra.Command, args []string) error {
			o.Project, o.cmd = args[0], c
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
	f.StringVar(&o.Handoff, "handoff", "", "at the auto-save threshold: fresh hands off to a new session, compact lets Claude Code compact (default: agents.handoff in .ctx/config.yaml, else fresh)")
	f.StringVar(&o.MovedFrom, "moved-from", "", "HOST:ID of the agent this one continues (ctx agents move)")
	_ = f.MarkHidden("moved-from")
	f.BoolVar(&o.NoWait, "no-wait", false, "return once claude is launched, without waiting for its session to start")
	f.BoolVar(&o.JSON, "json", false, "print the agent as JSON")
	return cmd
}

func runAgentsStart(o *agentsStartOptions) error {
	if h, err := o.onHost(); err != nil {
		return err
	} else if h != nil {
		return o.startOn(h)
	}
	a, err := o.open()
	if err != nil {
		return err
	}
	if o.Handoff != "" {
		if _, err := agents.CheckHandoff(o.Handoff); err != nil {
			return inputError(err)
		}
	}
	p, err := a.Store.WS.Resolve(o.Project)
	if err != nil {
		return err
	}
	rec, err := a.Start(agents.StartOptions{Project: p, Name: o.Name, Cwd: o.Cwd, Prompt: o.Prompt,
		PermissionMode: o.Mode, Model: o.Model, AutoApprove: o.Auto, NoWait: o.NoWait, Handoff: o.Handoff, Moves: movedFrom(o.MovedFrom, o.Now()), Worktree: o.Worktree, From: o.From})
	if rec == nil {
		return err
	}
	if o.From != "" && o.Worktree == "" {
		o.Warn("--from goes with --worktree; ignored")
	}
	if o.JSON {
		return errors.Join(o.writeJSON(rec), err)
	}
	o.reportStart(rec, "")
	return err
}

// reportStart prints a started agent: on which project, its state, how to attach.
func (o *agentsStartOptions) reportStart(rec *agents.Record, host string) {
	where, attach := "", []string{"ctx", "agents", "open", rec.Name}
	if host != "" {
		where, attach = " on host "+host, append(attach, "--host", host)
	}
	fmt.Fprintf(o.Out, "started %s (%s) on %s%s: %s\n", rec.ID, rec.Name, rec.Project, where, rec.State)
	fmt.Fprintf(o.Out, "  attach: %s\n", cmdLine(attach))
}

// startOn starts the agent on h (the same flags there) and renders the record here.
func (o *agentsStartOptions) startOn(h *hosts.Host) error {
	words := forwardedArgs(o.cmd, []string{o.Project})
	words = append(words[:2:2], append([]string{"--json"}, words[2:]...)...)
	got, err := o.runOn(h, words...)
	var rec agents.Record
	if jerr := json.Unmarshal(got, &rec); jerr != nil || rec.ID == "" {
		return errors.Join(err, fmt.Errorf("host %s: no agent in the answer", h.Name))
	}
	rec.Host = h.Name
	if o.JSON {
		return errors.Join(o.writeJSON(&rec), err)
	}
	o.reportStart(&rec, h.Name)
	return err
}

// movedFrom is the move a --moved-from HOST:ID names ("" for none).
func movedFrom(v string, now time.Time) []agents.Move {
	host, id, ok := strings.Cut(v, ":")
	if !ok || host == "" || id == "" {
		return nil
	}
	return []agents.Move{{From: host, FromID: id, To: agents.LocalHost, At: now.UTC()}}
}
