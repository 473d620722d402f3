package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ctxtools/ctx/agents"
)

type agentsShowOptions struct {
	agentsApp
	Agent string
	JSON  bool
}

func newAgentsShowCmd(app *App) *cobra.Command {
	o := &agentsShowOptions{agentsApp: agentsApp{app}}
	cmd := &cobra.Command{
		Use:     "show AGENT",
		Short:   "Show an agent: its record, activity, pause and the resume prompt it would get",
		Example: "  ctx agents show expiry\n  ctx agents show a-3f --json",
		Args:    usageArgs(cobra.ExactArgs(1)),
		RunE: func(c *cobra.Command, args []string) error {
			o.Agent = args[0]
			return runAgentsShow(o)
		},
	}
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print as JSON")
	return cmd
}

func runAgentsShow(o *agentsShowOptions) error {
	var out agents.Detail
	if h, err := o.onHost(); err != nil {
		return err
	} else if h != nil {
		// Asked of the host, rendered here: its attach command is this machine's.
		got, err := o.runOn(h, "agents", "show", o.Agent, "--json")
		if err != nil {
			return err
		}
		if err := json.Unmarshal(got, &out); err != nil {
			return fmt.Errorf("host %s: not an agent: %w", h.Name, err)
		}
		out.Host = h.Name
		out.Attach = cmdLine([]string{"ctx", "agents", "open", out.Name, "--host", h.Name})
	} else {
		a, rec, err := o.one(o.Agent)
		if err != nil {
			return err
		}
		out = a.Detail(rec)
	}
	if o.JSON {
		return o.writeJSON(out)
	}
	rec := out.Record
	host := ""
	if rec.Host != "" && rec.Host != agents.LocalHost {
		host = "  on " + rec.Host
	}
	fmt.Fprintf(o.Out, "%s  %s  project %s  %s since %s%s\n", rec.ID, rec.Name, rec.Project, rec.State, rec.StateSince.Local().Format(time.DateTime), host)
	fmt.Fprintf(o.Out, "  folder     %s\n  session    %s\n", rec.Cwd, rec.Claude.SessionID)
	if rec.Attention != "" {
		fmt.Fprintf(o.Out, "  attention  %s\n", rec.Attention)
	}
	if len(rec.Chain) > 1 {
		fmt.Fprintf(o.Out, "  chain      %d sessions\n", len(rec.Chain))
		for i, l := range rec.Chain {
			fmt.Fprintf(o.Out, "    %d. %s\n", i+1, chainLine(l))
		}
	}
	if out.Activity.Activity != "" {
		fmt.Fprintf(o.Out, "  activity   %s (%s at %s) %s\n", out.Activity.Activity, out.Activity.Event, out.Activity.At.Local().Format(time.TimeOnly), out.Activity.Summary)
	}
	if p := rec.Pause; p != nil {
		fmt.Fprintf(o.Out, "  paused     %s (%s), freed %d MB, %d processes ended\n", p.PausedAt.Local().Format(time.DateTime), p.Reason, p.RSSFreedKB/1024, p.ProcessesEnded)
		if p.Git != nil {
			fmt.Fprintf(o.Out, "  checkpoint %s (%s)\n", p.Git.Ref, count(len(p.Git.Dirty), "dirty file"))
			// A command to copy: one line, whatever the width.
			fmt.Fprintf(o.dataOut(), "  restore    %s\n", out.Restore)
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
	if rec.State.Running() {
		fmt.Fprintf(o.Out, "  attach     %s\n", out.Attach)
	}
	return nil
}

// chainLine is one session of an agent's chain: its id, why it started, how full it
// was when it handed off, and the check of a handoff's fresh session.
func chainLine(l agents.Link) string {
	line := l.SessionID + "  " + l.Reason
	if !l.StartedAt.IsZero() {
		line += " " + l.StartedAt.Local().Format(time.TimeOnly)
	}
	if l.NoteTokens > 0 {
		line += fmt.Sprintf(", note %d tokens", l.NoteTokens)
	}
	if l.Check != "" {
		line += ", check " + l.Check
	}
	if l.EndedAt != nil {
		line += fmt.Sprintf(" → handed off at %.0f%% (%d tokens)", l.EndPercent, l.EndTokens)
	}
	return line
}
