package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/ctxtools/ctx/agents"
)

type agentsEventsOptions struct {
	agentsApp
	Follow bool
	JSON   bool
}

// How often a followed list looks for a change (a stat per agent file), and how often
// it asks tmux and reads memory as a full list does.
const (
	eventsPoll = 100 * time.Millisecond
	eventsFull = 2 * time.Second
	// EventsHeartbeat: a line at least this often, changed or not, so the reader can
	// tell a silent stream from a quiet one, and this process learns within it that
	// its reader went away.
	eventsHeartbeat = 5 * time.Second
)

func newAgentsEventsCmd(app *App) *cobra.Command {
	o := &agentsEventsOptions{agentsApp: agentsApp{app}}
	cmd := &cobra.Command{
		Use:   "events",
		Short: "Print the agents as JSON lines: now, and with --follow at every change",
		Long: `Print this machine's agents as one JSON line, {"host", "at", "agents"}, the
agents as ctx agents list --json gives them. With --follow, print a line again
whenever an agent changes (its record or the activity its hooks report: looked
for every 100 ms), every 2 s when memory or liveness moved, and at least every
5 s in any case, until the reader goes away. ctx serve follows every host's agents this way, over one ssh
connection each.`,
		Example: "  ctx agents events --json\n  ctx agents events --follow --json | head -3",
		Args:    usageArgs(cobra.NoArgs),
		RunE: func(c *cobra.Command, args []string) error {
			return runAgentsEvents(o)
		},
	}
	cmd.Flags().BoolVar(&o.Follow, "follow", false, "keep printing a line at every change")
	cmd.Flags().BoolVar(&o.JSON, "json", true, "JSON lines (the only form)")
	return cmd
}

// eventsLine is one line of ctx agents events.
type eventsLine struct {
	Host   string        `json:"host"`
	At     time.Time     `json:"at"`
	Agents []agents.View `json:"agents"`
}

func runAgentsEvents(o *agentsEventsOptions) error {
	a, err := o.open()
	if err != nil {
		return err
	}
	if o.AgentsHost != "" && o.AgentsHost != agents.LocalHost {
		return inputError(fmt.Errorf("agents events: this machine's only (--host local); ctx serve follows the other hosts"))
	}
	var last []byte
	lastLine := time.Now()
	emit := func(always bool) error {
		views, _ := a.List()
		if views == nil {
			views = []agents.View{}
		}
		body, err := json.Marshal(views)
		if err != nil {
			return err
		}
		if bytes.Equal(body, last) && !always {
			return nil
		}
		last, lastLine = body, time.Now()
		line, err := json.Marshal(eventsLine{Host: agents.LocalHost, At: o.Now().UTC(), Agents: views})
		if err != nil {
			return err
		}
		if _, err := o.dataOut().Write(append(line, '\n')); err != nil {
			return err
		}
		if f, ok := o.dataOut().(interface{ Sync() error }); ok {
			_ = f.Sync()
		}
		return nil
	}
	if err := emit(true); err != nil || !o.Follow {
		return err
	}
	stamp := agentFilesStamp(a.Store.Dir)
	lastFull := time.Now()
	for {
		time.Sleep(eventsPoll)
		now := agentFilesStamp(a.Store.Dir)
		beat := time.Since(lastLine) >= eventsHeartbeat
		if now == stamp && time.Since(lastFull) < eventsFull && !beat {
			continue
		}
		stamp, lastFull = now, time.Now()
		if err := emit(beat); err != nil {
			if errors.Is(err, syscall.EPIPE) || errors.Is(err, os.ErrClosed) {
				return nil // the reader went away
			}
			return err
		}
	}
}

// agentFilesStamp sums the sizes and times of the agents' files: it changes when any
// record or status changes.
func agentFilesStamp(dir string) int64 {
	var sum int64
	_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() && path != dir && filepath.Dir(path) != dir {
			return filepath.SkipDir
		}
		if name := d.Name(); name == "agent.json" || name == "status.json" {
			if fi, err := d.Info(); err == nil {
				sum += fi.ModTime().UnixNano() ^ fi.Size()
			}
		}
		return nil
	})
	return sum
}
