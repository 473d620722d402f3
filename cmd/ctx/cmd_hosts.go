package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ctxtools/ctx/gitstate"
	"github.com/ctxtools/ctx/hosts"
	"github.com/ctxtools/ctx/internal/state"
	"github.com/ctxtools/ctx/loader"
)

func newHostsCmd(app *App) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "hosts",
		Aliases: []string{"host"},
		Short:   "The other machines agents run on, reached with your own ssh",
		Long: `A host is another machine (a build box, a VM, a cloud workspace) where ctx,
Claude Code, tmux and git are installed and a clone of this workspace lives.
ctx reaches it with the system ssh, so your ~/.ssh/config, keys, ProxyJump,
Tailscale SSH or Coder aliases work as they do for ssh; one master connection
per host is shared (ControlMaster), and ssh never prompts (BatchMode). The list
is yours, in .ctx/state/hosts.json, which git does not track.

Then every agents command takes --host NAME, and ctx agents list shows the
agents of every host (docs/hosts.md).`,
		Example: `  ctx hosts add build                          # the ssh alias "build", the workspace at the same path
  ctx hosts add gpu me@10.0.0.7 --remote-workspace /srv/ws
  ctx hosts check build
  ctx hosts list
  ctx hosts rm gpu`,
		Args: usageArgs(cobra.NoArgs),
	}
	cmd.AddCommand(newHostsAddCmd(app), newHostsListCmd(app), newHostsCheckCmd(app), newHostsRmCmd(app))
	return cmd
}

type hostsAddOptions struct {
	*App
	Remote  string
	Ctx     string
	NoCheck bool
	Install bool
	JSON    bool
}

func newHostsAddCmd(app *App) *cobra.Command {
	o := &hostsAddOptions{App: app}
	cmd := &cobra.Command{
		Use:   "add NAME [SSH-DESTINATION]",
		Short: "Add a host: its name here, how ssh reaches it, where its workspace is",
		Long: `Add a host. NAME is how ctx names it (lower-case letters, digits and -);
SSH-DESTINATION is what ssh is given (an alias of ~/.ssh/config, user@host,
ssh://user@host:port), by default NAME. The workspace there is at the same path
as here unless --remote-workspace says where. The host is checked at once (ctx hosts
check); --no-check skips that. When the host has no ctx, --install copies this
binary there (the same OS and architecture) with scp; on a terminal ctx asks.`,
		Example: `  ctx hosts add build
  ctx hosts add gpu me@10.0.0.7 --remote-workspace /srv/ws --ctx /home/me/go/bin/ctx`,
		Args: usageArgs(cobra.RangeArgs(1, 2)),
		RunE: func(c *cobra.Command, args []string) error {
			dest := args[0]
			if len(args) == 2 {
				dest = args[1]
			}
			return runHostsAdd(o, args[0], dest)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Remote, "remote-workspace", "", "the workspace's path on the host (default: the same path as here; -w names the workspace here)")
	f.StringVar(&o.Ctx, "ctx", "", "the ctx command on the host, an absolute path (default: ctx on its PATH)")
	f.BoolVar(&o.NoCheck, "no-check", false, "add without checking the host")
	f.BoolVar(&o.Install, "install", false, "when the host has no ctx, copy this one there (~/.local/bin/ctx, with scp; same OS and architecture)")
	f.BoolVar(&o.JSON, "json", false, "print the host (and its check) as JSON")
	return cmd
}

func runHostsAdd(o *hostsAddOptions, name, dest string) error {
	ws, err := o.Workspace()
	if err != nil {
		return err
	}
	h := hosts.Host{Name: name, Destination: dest, Workspace: o.Remote, Ctx: o.Ctx, AddedAt: o.Now().UTC()}
	if h.Workspace == "" {
		h.Workspace = ws.Root
	}
	if err := h.Check(); err != nil {
		return inputError(err)
	}
	if err := hosts.Open(ws).Add(h); err != nil {
		return inputError(err)
	}
	if o.NoCheck {
		if o.JSON {
			return o.writeJSON(h)
		}
		fmt.Fprintf(o.Out, "added host %s (%s, workspace %s)\n", h.Name, h.Destination, h.Workspace)
		return nil
	}
	r, err := o.checkHost(h)
	if err != nil {
		return err
	}
	if r.Reachable && r.Ctx == "" && (o.Install || o.confirm(fmt.Sprintf("ctx is not on %s: copy this one there (%s/.local/bin/ctx)? [y/N] ", h.Name, r.Home))) {
		if h, r, err = o.installOn(ws, h, r); err != nil {
			return err
		}
	}
	if o.JSON {
		return errors.Join(o.writeJSON(struct {
			Host  hosts.Host   `json:"host"`
			Check hosts.Report `json:"check"`
		}{h, r}), checkErr(r))
	}
	fmt.Fprintf(o.Out, "added host %s (%s, workspace %s)\n", h.Name, h.Destination, h.Workspace)
	o.printReport(r)
	return checkErr(r)
}

// installOn copies this ctx to h, records where, and checks h again.
func (o *hostsAddOptions) installOn(ws *loader.Workspace, h hosts.Host, r hosts.Report) (hosts.Host, hosts.Report, error) {
	if want := hosts.ThisMachine(); r.OS != want {
		return h, r, fmt.Errorf("host %s is %s, this machine %s: install a ctx built for it there", h.Name, r.OS, want)
	}
	self, err := os.Executable()
	if err != nil {
		return h, r, err
	}
	c, err := o.sshClient()
	if err != nil {
		return h, r, err
	}
	target, err := c.Install(context.Background(), h, self, r.Home)
	if err != nil {
		return h, r, err
	}
	if err := hosts.Open(ws).Update(h.Name, func(x *hosts.Host) { x.Ctx = target }); err != nil {
		return h, r, err
	}
	h.Ctx = target
	fmt.Fprintf(o.Out, "installed ctx on %s: %s\n", h.Name, target)
	r, err = o.checkHost(h)
	return h, r, err
}

type hostsListOptions struct {
	*App
	JSON bool
}

func newHostsListCmd(app *App) *cobra.Command {
	o := &hostsListOptions{App: app}
	cmd := &cobra.Command{
		Use:     "list",
		Short:   "List the hosts",
		Example: "  ctx hosts list\n  ctx hosts list --json",
		Args:    usageArgs(cobra.NoArgs),
		RunE: func(c *cobra.Command, args []string) error {
			ws, err := o.Workspace()
			if err != nil {
				return err
			}
			all, err := hosts.Open(ws).All()
			if err != nil {
				return err
			}
			if o.JSON {
				if all == nil {
					all = []hosts.Host{}
				}
				return o.writeJSON(all)
			}
			if len(all) == 0 {
				fmt.Fprintln(o.Out, "no hosts yet: ctx hosts add NAME [SSH-DESTINATION]")
				return nil
			}
			tw := &table{}
			tw.add("NAME", "SSH", "WORKSPACE")
			for _, h := range all {
				tw.add(h.Name, h.Destination, h.Workspace)
			}
			return tw.write(o.Out, o.Width)
		},
	}
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print as JSON")
	return cmd
}

type hostsCheckOptions struct {
	*App
	JSON bool
}

func newHostsCheckCmd(app *App) *cobra.Command {
	o := &hostsCheckOptions{App: app}
	cmd := &cobra.Command{
		Use:   "check NAME",
		Short: "Check a host: reachable, ctx, claude, tmux and git there, its workspace, systemd",
		Long: `Check a host over ssh: that it answers; that ctx, claude, tmux and git are
there (with their versions, and a warning when ctx is not this version); that the
workspace exists there and is a clone of this repository; and, where systemd
runs, that lingering is on, so agents outlive the login that started them ("no
systemd" is not a failure: the tmux server outlives the login by itself). Exit 0
when nothing is missing, 1 when something is, 3 when the host is unreachable.`,
		Example: "  ctx hosts check build\n  ctx hosts check build --json",
		Args:    usageArgs(cobra.ExactArgs(1)),
		RunE: func(c *cobra.Command, args []string) error {
			ws, err := o.Workspace()
			if err != nil {
				return err
			}
			h, err := hosts.Open(ws).Get(args[0])
			if err != nil {
				return err
			}
			r, err := o.checkHost(*h)
			if err != nil {
				return err
			}
			if o.JSON {
				return errors.Join(o.writeJSON(r), checkErr(r))
			}
			o.printReport(r)
			return checkErr(r)
		},
	}
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print as JSON")
	return cmd
}

func newHostsRmCmd(app *App) *cobra.Command {
	return &cobra.Command{
		Use:     "rm NAME",
		Short:   "Remove a host from the list (nothing on the host changes)",
		Example: "  ctx hosts rm gpu",
		Args:    usageArgs(cobra.ExactArgs(1)),
		RunE: func(c *cobra.Command, args []string) error {
			ws, err := app.Workspace()
			if err != nil {
				return err
			}
			if err := hosts.Open(ws).Remove(args[0]); err != nil {
				return err
			}
			fmt.Fprintf(app.Out, "removed host %s\n", args[0])
			return nil
		},
	}
}

// sshClient is the ssh client of this command: master sockets in the runtime folder.
func (a *App) sshClient() (*hosts.Client, error) {
	c, err := hosts.NewClient(state.RuntimeDir(a.Getenv))
	if err != nil {
		return nil, err
	}
	c.Columns = a.Width // the host's text is shown here, as it comes
	return c, nil
}

// checkHost runs a host's check with this workspace's first commit and this ctx's
// version.
func (a *App) checkHost(h hosts.Host) (hosts.Report, error) {
	c, err := a.sshClient()
	if err != nil {
		return hosts.Report{}, err
	}
	ws, err := a.Workspace()
	if err != nil {
		return hosts.Report{}, err
	}
	root := ""
	if out, err := gitstate.Run(context.Background(), ws.Root, nil, "rev-list", "--max-parents=0", "HEAD"); err == nil {
		lines := strings.Fields(string(out))
		if len(lines) > 0 {
			root = lines[len(lines)-1]
		}
	}
	first, _, _ := strings.Cut(versionText(), "\n")
	return c.Check(context.Background(), h, root, first), nil
}

func (a *App) printReport(r hosts.Report) {
	if !r.Reachable {
		fmt.Fprintf(a.Out, "%s: unreachable: %s\n", r.Host, r.Error)
		return
	}
	fmt.Fprintf(a.Out, "%s: reachable (%s)\n", r.Host, r.OS)
	tw := &table{}
	row := func(k, v string) {
		if v == "" {
			v = "not found"
		}
		tw.add("  "+k, v)
	}
	row("ctx", r.Ctx)
	row("claude", r.Claude)
	row("tmux", r.Tmux)
	row("git", r.Git)
	ws := "missing"
	if r.Workspace {
		ws = "present"
		if r.SameRepo != nil && *r.SameRepo {
			ws += ", a clone of this repository"
		}
	}
	row("workspace", ws)
	sd := "no systemd (the tmux server outlives the login by itself)"
	if r.Systemd {
		sd = "lingering " + r.Linger
	}
	row("systemd", sd)
	_ = tw.write(a.Out, a.Width)
	for _, p := range r.Problems {
		fmt.Fprintf(a.Out, "  problem: %s\n", p)
	}
	for _, w := range r.Warnings {
		fmt.Fprintf(a.Out, "  warning: %s\n", w)
	}
}

// checkErr is a check's outcome as an error: unreachable is "not now" (exit 3),
// something missing a failure (exit 1).
func checkErr(r hosts.Report) error {
	switch {
	case !r.Reachable:
		return &hosts.UnreachableError{Host: r.Host, Detail: r.Error}
	case len(r.Problems) > 0:
		return fmt.Errorf("host %s: %s", r.Host, strings.Join(r.Problems, "; "))
	}
	return nil
}

// confirm asks a yes-or-no question when a person can answer it, stdin a terminal
// (the question goes to stderr, so `ctx … | less` still asks); anywhere else the
// answer is no.
func (a *App) confirm(question string) bool {
	if !a.InIsTTY || a.In == nil {
		return false
	}
	fmt.Fprint(a.Err, question)
	line, _ := bufio.NewReader(a.In).ReadString('\n')
	return strings.HasPrefix(strings.ToLower(strings.TrimSpace(line)), "y")
}
