package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/ctxtools/ctx/agents"
	"github.com/ctxtools/ctx/hosts"
	"github.com/ctxtools/ctx/internal/termqr"
	"github.com/ctxtools/ctx/web"
)

type serveOptions struct {
	*App
	Addr        string
	Listen      string
	AllowRemote bool
	Open        bool
	ReadOnly    bool
	QR          bool
	URL         string
}

func newServeCmd(app *App) *cobra.Command {
	o := &serveOptions{App: app}
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "A live dashboard of the workspace's agents in the browser",
		Long: `Serve a dashboard of this workspace's agents: who needs input, who is
working, who is idle or paused, with Pause, Resume and Delete buttons, each
agent's live screen, and a form to start agents on projects. It reads the same
records as ` + "`ctx agents`" + `; stopping it changes nothing for any agent.

The server listens on 127.0.0.1 and ::1 only, and asks for a fresh token on
every start: open the login URL it prints (or use --open), which sets a cookie
and drops the token from the address. Scripts send "Authorization: Bearer
TOKEN"; the address, pid and token are in serve.json in ctx's private runtime
folder.

From a phone or another computer, reach the loopback port over a private
network and never an open port: an SSH tunnel (ssh -L 7177:127.0.0.1:7177 HOST,
then the login URL on that device), or tailscale serve on the port, with
--url giving the address the device uses. --qr prints the login URL as a QR
code for a phone's camera. Another address needs --listen ADDR --allow-remote
(the token still applies). --read-only shows everything and changes nothing.`,
		Example: `  ctx serve
  ctx serve --open
  ctx serve --qr --url https://build-box.tail1234.ts.net   # after tailscale serve --bg 7177
  ctx serve --read-only
  ctx serve --addr 127.0.0.1:8080
  token=$(jq -r .token "$XDG_RUNTIME_DIR/ctx/serve.json")   # the API, from a script
  curl -H "Authorization: Bearer $token" http://127.0.0.1:7177/api/agents`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(c *cobra.Command, args []string) error { return runServe(o) },
	}
	f := cmd.Flags()
	f.StringVar(&o.Addr, "addr", web.DefaultAddr, "loopback address and port (127.0.0.1, ::1 or localhost)")
	f.BoolVar(&o.Open, "open", false, "open the login URL in the browser (xdg-open or open)")
	f.StringVar(&o.Listen, "listen", "", "also listen on this non-loopback address (needs --allow-remote)")
	f.BoolVar(&o.AllowRemote, "allow-remote", false, "confirm --listen: anyone who can reach it and has the token controls your agents")
	f.BoolVar(&o.ReadOnly, "read-only", false, "show the agents and their terminals; refuse every change")
	f.BoolVar(&o.QR, "qr", false, "also print the login URL as a QR code (for a phone)")
	f.StringVar(&o.URL, "url", "", "the address another device reaches this server at (a tailscale serve or tunnel URL): its host is allowed, and --qr carries it")
	return cmd
}

func runServe(o *serveOptions) error {
	ws, err := o.Workspace()
	if err != nil {
		return err
	}
	a, err := agents.New(ws, o.Getenv, os.Environ())
	if err != nil {
		return err
	}
	rt, err := a.State.Runtime()
	if err != nil {
		return err
	}
	var notify web.NotifyConfig
	if err := ws.ConfigSection("serve", &notify); err != nil {
		return inputError(err)
	}
	fleet, err := hosts.Open(ws).All()
	if err != nil {
		return err
	}
	var ssh *hosts.Client
	if len(fleet) > 0 {
		if ssh, err = o.sshClient(); err != nil {
			return err
		}
	}
	srv, err := web.New(ws, a, web.Options{Addr: o.Addr, Listen: o.Listen, AllowRemote: o.AllowRemote, WakeDir: rt.Dir,
		NotifyCommand: notify.NotifyCommand, Hosts: fleet, SSH: ssh, ReadOnly: o.ReadOnly, PublicURL: o.URL})
	if err != nil {
		return inputError(err)
	}
	if err := srv.Listen(); err != nil {
		var inUse *web.InUseError
		switch {
		case errors.Is(err, web.ErrBadAddr):
			return inputError(err)
		case errors.As(err, &inUse):
			if running := web.Running(rt.Dir); running != nil && running.Addr == inUse.Addr {
				return &exitError{code: exitNotNow, err: fmt.Errorf("ctx serve is already running at %s (pid %d, workspace %s); its login URL is in %s",
					running.URL, running.PID, running.Workspace, filepath.Join(rt.Dir, "serve.json"))}
			}
			return &exitError{code: exitNotNow, err: fmt.Errorf("%w: choose another port with --addr 127.0.0.1:PORT", err)}
		}
		return err
	}
	info, err := srv.WriteInfo(rt.Dir)
	if err != nil {
		return err
	}
	defer web.RemoveInfo(info)
	fmt.Fprintf(o.Err, "ctx serve: agents of %s on %v (Ctrl-C stops)\n", ws.Root, srv.Addrs())
	fmt.Fprintf(o.Err, "ctx serve: token and address in %s\n", info)
	fmt.Fprintf(o.Out, "%s\n", srv.LoginURL())
	if o.URL != "" {
		fmt.Fprintf(o.Err, "ctx serve: from another device: %s\n", srv.PublicLoginURL())
	}
	if o.QR {
		// On stderr: stdout's one line stays the login URL for scripts.
		fmt.Fprintf(o.Err, "ctx serve: scan to sign in (%s):\n", srv.PublicLoginURL())
		if err := termqr.Write(o.Err, srv.PublicLoginURL(), o.Getenv("NO_COLOR") == ""); err != nil {
			o.Warn("--qr: %v", err)
		}
	}
	if o.Open {
		if err := openBrowser(srv.LoginURL()); err != nil {
			o.Warn("--open: %v; open the URL above yourself", err)
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return srv.Run(ctx, 30*time.Second)
}

// openBrowser hands the URL to the desktop's opener.
func openBrowser(url string) error {
	name := "xdg-open"
	if runtime.GOOS == "darwin" {
		name = "open"
	}
	p, err := exec.LookPath(name)
	if err != nil {
		return fmt.Errorf("%s not found", name)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if out, err := exec.CommandContext(ctx, p, url).CombinedOutput(); err != nil {
		return fmt.Errorf("%s: %w: %s", name, err, out)
	}
	return nil
}
