package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ctxtools/ctx/agents"
	"github.com/ctxtools/ctx/gitstate"
	"github.com/ctxtools/ctx/hosts"
	"github.com/ctxtools/ctx/internal/shquote"
)

type agentsMoveOptions struct {
	agentsApp
	Agent  string
	To     string
	Cancel bool
	JSON   bool
}

func newAgentsMoveCmd(app *App) *cobra.Command {
	o := &agentsMoveOptions{agentsApp: agentsApp{app}}
	cmd := &cobra.Command{
		Use:   "move AGENT --to HOST",
		Short: "Move an agent on its own branch to another machine, with its work and plan",
		Long: `Move an agent that works on a branch of its own (started with --worktree) to
another host (or back: --to local). The agent is paused where it is, its work
committed on its branch (the pause's WIP commit, with the save point); it is
marked as moving, so it does not resume there meanwhile; its branch and
checkpoint go to the repository the target works in (git over ssh, through this
machine); it starts there on the same branch, in a fresh session with ctx's
briefing; then its record and clean worktree are removed where it was (the
branch and the checkpoint stay). Run again after an interruption, it goes on
from where it stopped; --cancel drops the mark instead.`,
		Example: `  ctx agents move expiry --to build
  ctx agents move expiry --host build --to local
  ctx agents move expiry --cancel`,
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(c *cobra.Command, args []string) error {
			o.Agent = args[0]
			return runAgentsMove(o)
		},
	}
	cmd.Flags().StringVar(&o.To, "to", "", "the host to move it to (local for this machine)")
	cmd.Flags().BoolVar(&o.Cancel, "cancel", false, "drop the mark of a move that will not be finished: the agent resumes where it is")
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print the moved agent as JSON")
	return cmd
}

// side is one end of a move: this machine (host nil) or a host.
type side struct {
	o    *agentsMoveOptions
	host *hosts.Host
}

func (s side) name() string {
	if s.host == nil {
		return hosts.Local
	}
	return s.host.Name
}

// run runs `ctx agents args…` on the side and returns its JSON output.
func (s side) run(args ...string) ([]byte, error) {
	if s.host != nil {
		return s.o.runOn(s.host, append([]string{"agents"}, args...)...)
	}
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	ws, err := s.o.Workspace()
	if err != nil {
		return nil, err
	}
	words := append([]string{"--workspace", ws.Root, "agents", args[0], "--host", hosts.Local}, args[1:]...)
	out, err := execCtx(self, words)
	return out, err
}

// show is the agent's record on the side; nil when it has none of that name.
func (s side) show(agent string) (*agents.Detail, error) {
	out, err := s.run("show", "--json", "--", agent)
	var re *hosts.RemoteError
	if errors.As(err, &re) && re.Code == exitInput {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var d agents.Detail
	if err := json.Unmarshal(out, &d); err != nil {
		return nil, fmt.Errorf("%s: not an agent: %w", s.name(), err)
	}
	return &d, nil
}

func runAgentsMove(o *agentsMoveOptions) error {
	srcHost, err := o.onHost()
	if err != nil {
		return err
	}
	src := side{o, srcHost}
	d, err := src.show(o.Agent)
	if err != nil {
		return err
	}
	if d == nil {
		return inputError(fmt.Errorf("no agent %q on %s", o.Agent, src.name()))
	}
	if o.Cancel {
		if _, err := src.run("mark-moving", "--", d.ID); err != nil {
			return err
		}
		fmt.Fprintf(o.Out, "move of %s cancelled: it resumes on %s\n", d.Name, src.name())
		return nil
	}
	if o.To == "" {
		return inputError(errors.New("move: --to HOST (local for this machine)"))
	}
	to := cmp.Or(d.MovingTo, o.To)
	if d.MovingTo != "" && d.MovingTo != o.To {
		return inputError(fmt.Errorf("agent %s is moving to %s: finish that with --to %s, or --cancel", d.Name, d.MovingTo, d.MovingTo))
	}
	dst := side{o, nil}
	if to != hosts.Local {
		ws, err := o.Workspace()
		if err != nil {
			return err
		}
		if dst.host, err = hosts.Open(ws).Get(to); err != nil {
			return err
		}
	}
	if dst.name() == src.name() {
		return inputError(fmt.Errorf("agent %s is on %s already", d.Name, src.name()))
	}
	if d.Worktree == nil {
		return inputError(fmt.Errorf("agent %s works in the checkout itself, which a move would rewrite: only an agent on a branch of its own moves (ctx agents start %s --worktree BRANCH)", d.Name, d.Project))
	}
	branch := d.Worktree.Branch

	// 1. Paused where it is, its work committed on its branch.
	if d.State != agents.Paused {
		if _, err := src.run("pause", "--git", agents.GitCommit, "--json", "--", d.ID); err != nil {
			return fmt.Errorf("move: pause on %s: %w", src.name(), err)
		}
		if d, err = src.show(d.ID); err != nil || d == nil {
			return errors.Join(errors.New("move: the paused agent is gone"), err)
		}
	}
	if d.Pause == nil || d.Pause.Git == nil || (d.Pause.GitStrategy != agents.GitCommit && len(d.Pause.Git.Dirty) > 0) {
		return &exitError{code: exitNotNow, err: fmt.Errorf("agent %s was paused with its changes left in its tree: resume it, then move it (a move pauses with --git commit)", d.Name)}
	}
	// 2. Marked: it does not resume where it is while it moves.
	if d.MovingTo == "" {
		if _, err := src.run("mark-moving", "--to", dst.name(), "--", d.ID); err != nil {
			return fmt.Errorf("move: mark on %s: %w", src.name(), err)
		}
	}
	o.crashAt("marked")
	// 3. The branch and the checkpoint, through this machine's repository.
	if err := o.moveRefs(src, dst, branch, d.Pause.Git.Ref); err != nil {
		return fmt.Errorf("move: %w (run the same move again to go on)", err)
	}
	o.crashAt("refs")
	// 4. Started there, on the same branch, unless a run before this one did.
	moved, err := dst.show(d.Name)
	if err != nil {
		return err
	}
	if moved == nil || moved.Worktree == nil || moved.Worktree.Branch != branch {
		if moved != nil {
			return inputError(fmt.Errorf("move: %s has another agent named %s", dst.name(), d.Name))
		}
		args := []string{"start", "--json", "--name", d.Name, "--worktree", branch,
			"--moved-from", src.name() + ":" + d.ID}
		if d.Claude.PermissionMode != "" {
			args = append(args, "--permission-mode", d.Claude.PermissionMode)
		}
		if d.Claude.Model != "" {
			args = append(args, "--model", d.Claude.Model)
		}
		if d.Claude.AutoApprove {
			args = append(args, "--auto-approve")
		}
		if _, err := dst.run(append(args, "--", d.Project)...); err != nil {
			return fmt.Errorf("move: start on %s: %w (run the same move again to go on)", dst.name(), err)
		}
		if moved, err = dst.show(d.Name); err != nil || moved == nil {
			return errors.Join(fmt.Errorf("move: the agent did not start on %s", dst.name()), err)
		}
	}
	o.crashAt("started")
	// 5. Gone from where it was: record and clean worktree (branch and checkpoint stay).
	if _, err := src.run("rm", "--remove-worktree", "--", d.ID); err != nil {
		return fmt.Errorf("move: the agent runs on %s; removing it from %s: %w", dst.name(), src.name(), err)
	}
	moved.Host = dst.name()
	if o.JSON {
		return o.writeJSON(moved.Record)
	}
	fmt.Fprintf(o.Out, "moved %s from %s to %s: %s (%s), on branch %s\n", d.Name, src.name(), dst.name(), moved.ID, moved.State, branch)
	return nil
}

// moveRefs gets the branch and the checkpoint ref from src to dst with git over ssh,
// through this machine's repository: fetched from a host, pushed to a host. The
// branch is never forced: a branch that went another way there stops the move.
func (o *agentsMoveOptions) moveRefs(src, dst side, branch, checkpoint string) error {
	ws, err := o.Workspace()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	top, err := gitstate.Run(ctx, ws.Root, nil, "rev-parse", "--show-toplevel")
	if err != nil {
		return fmt.Errorf("this workspace is not in a git repository: %w", err)
	}
	repo := strings.TrimSpace(string(top))
	rel, err := filepath.Rel(ws.Root, repo)
	if err != nil {
		return err
	}
	client, err := o.sshClient()
	if err != nil {
		return err
	}
	env := []string{"GIT_SSH_COMMAND=" + shquote.Join(client.SSHCommand())}
	url := func(h *hosts.Host) string {
		return hosts.GitURL(*h, path.Clean(path.Join(h.Workspace, filepath.ToSlash(rel))))
	}
	heads := "refs/heads/" + branch
	local := heads
	if src.host != nil {
		if dst.host != nil {
			local = "refs/ctx/moving/" + branch // only passing through
		}
		if _, err := gitstate.Run(ctx, repo, env, "fetch", "--quiet", url(src.host), "+"+heads+":"+local, "+"+checkpoint+":"+checkpoint); err != nil {
			return fmt.Errorf("fetch from %s: %w", src.name(), err)
		}
	}
	if dst.host != nil {
		if _, err := gitstate.Run(ctx, repo, env, "push", "--quiet", url(dst.host), local+":"+heads, "+"+checkpoint+":"+checkpoint); err != nil {
			return fmt.Errorf("push to %s: %w", dst.name(), err)
		}
	}
	return nil
}

// execCtx runs this ctx with words and returns what it printed; a failure keeps its
// exit code and message, as a host's does.
func execCtx(self string, words []string) ([]byte, error) {
	cmd := exec.Command(self, words...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		msg := hosts.LastLine(errb.String())
		return out.Bytes(), &hosts.RemoteError{Host: hosts.Local, Code: ee.ExitCode(), Msg: strings.TrimPrefix(msg, "ctx: ")}
	}
	return out.Bytes(), err
}

// newAgentsMarkMovingCmd is the mark a move puts on the agent it takes away (hidden:
// ctx agents move runs it, here or on a host).
func newAgentsMarkMovingCmd(app *App) *cobra.Command {
	var to string
	cmd := &cobra.Command{
		Use:     "mark-moving AGENT",
		Short:   "Mark a paused agent as moving to a host (--to), or clear the mark",
		Example: "  ctx agents mark-moving expiry --to build\n  ctx agents mark-moving expiry",
		Hidden:  true,
		Args:    usageArgs(cobra.ExactArgs(1)),
		RunE: func(c *cobra.Command, args []string) error {
			o := agentsApp{app}
			a, rec, err := o.one(args[0])
			if err != nil {
				return err
			}
			out, err := a.SetMoving(rec, to)
			if err != nil {
				return err
			}
			return o.writeJSON(out)
		},
	}
	cmd.Flags().StringVar(&to, "to", "", "the host it moves to; empty clears the mark")
	return cmd
}

// crashAt ends this process when CTX_TEST_CRASH_AT names the step ("move:STEP"): the
// tests prove that a move killed at any step goes on when run again.
func (o *agentsMoveOptions) crashAt(step string) {
	if o.Getenv("CTX_TEST_CRASH_AT") == "move:"+step {
		p, _ := os.FindProcess(os.Getpid())
		_ = p.Kill()
		time.Sleep(time.Second)
	}
}
