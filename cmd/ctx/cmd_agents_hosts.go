package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ctxtools/ctx/agents"
	"github.com/ctxtools/ctx/hosts"
	"github.com/ctxtools/ctx/internal/shquote"
)

// Agents on other machines: every agents command takes --host NAME and then runs as
// ctx on that host over ssh, host-local there (`--host local`: a host never fans out
// further). list shows every host's agents unless --host says which.

// hostParallel bounds the ssh connections a command over several hosts opens at once.
const hostParallel = 4

// opTimeout bounds an operation run on a host once connected (a listing has
// hosts.DefaultTimeout).
const opTimeout = 30 * time.Minute

// onHost returns the host the command names with --host; nil for this machine.
func (o agentsApp) onHost() (*hosts.Host, error) {
	if o.AgentsHost == "" || o.AgentsHost == hosts.Local {
		return nil, nil
	}
	ws, err := o.Workspace()
	if err != nil {
		return nil, err
	}
	return hosts.Open(ws).Get(o.AgentsHost)
}

// forward runs this agents command on h with the same arguments and flags, and prints
// what ctx printed there; its exit code is kept (hosts.RemoteError).
func (o agentsApp) forward(c *cobra.Command, h *hosts.Host, args []string) error {
	out, err := o.runOn(h, forwardedArgs(c, args)...)
	if f := c.Flags().Lookup("json"); f != nil && f.Changed && len(out) > 0 {
		out = relabel(out, h.Name)
	}
	if len(out) > 0 {
		// As h's ctx printed it: JSON whole, text fitted there.
		_, _ = o.dataOut().Write(out)
	}
	return err
}

// relabel names the host in JSON a host printed about its agents: its records say
// "host": "local", which here is h's name. Output that is not JSON stays as it came.
func relabel(out []byte, name string) []byte {
	var v any
	if json.Unmarshal(out, &v) != nil {
		return out
	}
	set := func(m map[string]any) {
		if m["host"] == agents.LocalHost {
			m["host"] = name
		}
	}
	switch x := v.(type) {
	case map[string]any:
		set(x)
	case []any:
		for _, e := range x {
			if m, ok := e.(map[string]any); ok {
				set(m)
			}
		}
	}
	b, err := json.Marshal(v)
	if err != nil {
		return out
	}
	return append(b, '\n')
}

// runOn runs ctx with args on h, host-local there.
func (o agentsApp) runOn(h *hosts.Host, args ...string) ([]byte, error) {
	client, err := o.sshClient()
	if err != nil {
		return nil, err
	}
	if len(args) > 1 {
		switch args[1] {
		case "pause", "resume", "start", "handoff", "rm", "send":
			// An operation may wait for a turn to end (--wait, 30 s by default) and
			// start or pause several agents: ServerAlive ends a connection that dies.
			client.Timeout = opTimeout
		}
	}
	// `agents VERB --host local …`: before any "--", so it stays a flag.
	words := append([]string{}, args[:min(2, len(args))]...)
	words = append(words, "--host", hosts.Local)
	words = append(words, args[min(2, len(args)):]...)
	return client.Run(context.Background(), *h, words...)
}

// forwardedArgs is the command line of c again: `agents VERB`, its arguments, and every
// flag the person set except --host and the workspace (the host's is its own).
func forwardedArgs(c *cobra.Command, args []string) []string {
	words := []string{"agents", c.Name()}
	c.Flags().Visit(func(f *pflag.Flag) {
		switch f.Name {
		case "host", "workspace":
			return
		}
		if sv, ok := f.Value.(pflag.SliceValue); ok {
			for _, v := range sv.GetSlice() {
				words = append(words, "--"+f.Name+"="+v)
			}
			return
		}
		words = append(words, "--"+f.Name+"="+f.Value.String())
	})
	if len(args) > 0 {
		// Arguments after "--": one that begins with '-' stays an argument.
		words = append(append(words, "--"), args...)
	}
	return words
}

// fleetList lists the agents of this machine and of every host (or of the one --host
// names), the hosts at once over at most hostParallel connections. A host that cannot
// be reached is one error among the others' answers.
func (o agentsApp) fleetList() ([]agents.View, error) {
	ws, err := o.Workspace()
	if err != nil {
		return nil, err
	}
	var targets []hosts.Host
	all, err := hosts.Open(ws).All()
	if err != nil {
		return nil, err
	}
	local := o.AgentsHost == "" || o.AgentsHost == hosts.Local
	for _, h := range all {
		if o.AgentsHost == "" || o.AgentsHost == h.Name {
			targets = append(targets, h)
		}
	}
	if !local && len(targets) == 0 {
		return nil, &hosts.NotFoundError{Name: o.AgentsHost}
	}
	var (
		views    []agents.View
		localErr error
		wg       sync.WaitGroup
	)
	if local {
		// This machine's list while the hosts answer.
		a, err := o.open()
		if err != nil {
			return nil, err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			var problems []error
			views, problems = a.List()
			a.AddSpent(views)
			localErr = errors.Join(problems...)
		}()
	}
	var mu sync.Mutex
	var remote []agents.View
	err = hosts.Each(targets, hostParallel, func(h hosts.Host) error {
		out, err := o.runOn(&h, "agents", "list", "--json")
		if err != nil {
			return err
		}
		var got []agents.View
		if err := json.Unmarshal(out, &got); err != nil {
			return fmt.Errorf("host %s: not an agents list: %w", h.Name, err)
		}
		for i := range got {
			if got[i].Record != nil {
				got[i].Host = h.Name
			}
		}
		mu.Lock()
		remote = append(remote, got...)
		mu.Unlock()
		return nil
	})
	wg.Wait()
	if localErr != nil {
		o.Warn("%v", localErr)
	}
	views = append(views, remote...)
	sort.SliceStable(views, func(i, j int) bool {
		hi, hj := views[i].Host, views[j].Host
		if (hi == agents.LocalHost) != (hj == agents.LocalHost) {
			return hi == agents.LocalHost
		}
		return hi < hj
	})
	return views, err
}

// addHostFlag gives the agents commands --host.
func addHostFlag(cmd *cobra.Command, app *App) {
	cmd.PersistentFlags().StringVar(&app.AgentsHost, "host", "", "the host the agents run on (ctx hosts list; default: this machine, and for list every host)")
	_ = cmd.RegisterFlagCompletionFunc("host", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		ws, err := app.Workspace()
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		all, _ := hosts.Open(ws).All()
		names := []string{hosts.Local}
		for _, h := range all {
			names = append(names, h.Name)
		}
		return names, cobra.ShellCompDirectiveNoFileComp
	})
}

// openOn attaches this terminal to an agent on h: ssh -t into its tmux there.
func (o agentsApp) openOn(h *hosts.Host, agent string, readOnly bool) error {
	client, err := o.sshClient()
	if err != nil {
		return err
	}
	words := hosts.CtxWords(*h, "agents", "open", agent, "--host", hosts.Local)
	if readOnly {
		words = append(words, "--read-only")
	}
	cmd := client.Command(context.Background(), *h, true, words...)
	if !o.InIsTTY || !o.OutIsTTY {
		fmt.Fprintln(o.dataOut(), cmdLine(cmd.Args))
		return nil
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	return cmd.Run()
}

// cmdLine is a command line as a person would type it.
func cmdLine(argv []string) string { return shquote.Join(argv) }

// acrossHosts runs a selecting command (pause --idle-for, --all, --project) here with
// runLocal and then on every host at once: the lines of each, or with --json one list
// of the agents done on every host. Each host's failure is one error.
func (o agentsApp) acrossHosts(c *cobra.Command, runLocal func() error) error {
	ws, err := o.Workspace()
	if err != nil {
		return err
	}
	all, err := hosts.Open(ws).All()
	if err != nil || len(all) == 0 {
		return errors.Join(err, runLocal())
	}
	asJSON := false
	if f := c.Flags().Lookup("json"); f != nil && f.Changed {
		asJSON = true
	}
	var localOut bytes.Buffer
	out := o.Out
	if asJSON {
		o.Out = &localOut
	}
	localErr := runLocal()
	o.Out = out
	var (
		mu      sync.Mutex
		records []json.RawMessage
		texts   = map[string][]byte{}
	)
	if asJSON {
		_ = json.Unmarshal(localOut.Bytes(), &records)
	}
	hostErr := hosts.Each(all, hostParallel, func(h hosts.Host) error {
		got, err := o.runOn(&h, forwardedArgs(c, nil)...)
		mu.Lock()
		defer mu.Unlock()
		if asJSON {
			var list []json.RawMessage
			if json.Unmarshal(relabel(got, h.Name), &list) == nil {
				records = append(records, list...)
			}
		} else {
			texts[h.Name] = got
		}
		return err
	})
	if asJSON {
		if records == nil {
			records = []json.RawMessage{}
		}
		return errors.Join(localErr, o.writeJSON(records), hostErr)
	}
	for _, h := range all {
		for _, line := range strings.Split(strings.TrimSpace(string(texts[h.Name])), "\n") {
			if line != "" {
				fmt.Fprintf(o.Out, "%s: %s\n", h.Name, line)
			}
		}
	}
	return errors.Join(localErr, hostErr)
}
