package web

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os/exec"
	"sync"
	"time"

	"github.com/ctxtools/ctx/agents"
	"github.com/ctxtools/ctx/hosts"
)

// The fleet: the agents of the other machines (docs/hosts.md). Each host streams its
// agents through one long-lived `ssh HOST ctx agents events --follow --json`; a
// connection that ends is made again with backoff. A host that cannot be reached keeps
// its last known agents on the page, marked unreachable, never removed.

// fleet is the hosts' agents as last heard.
type fleet struct {
	mu    sync.Mutex
	feeds map[string]*hostFeed
}

type hostFeed struct {
	views []agents.View
	up    bool
	err   string
}

// Backoff of a host's reconnection: from the first to the most.
const (
	followBackoff    = time.Second
	followBackoffMax = 30 * time.Second
	// followSilence: three heartbeats missed (ctx agents events writes one every 5 s).
	followSilence = 15 * time.Second
)

// follow streams h's agents until ctx ends.
func (s *Server) follow(ctx context.Context, h hosts.Host) {
	backoff := followBackoff
	for ctx.Err() == nil {
		// One connection: ended by the server, or when the host falls silent (no line,
		// not even the heartbeat, for followSilence).
		conn, cancel := context.WithCancel(ctx)
		heard := make(chan struct{}, 1)
		go func() {
			t := time.NewTimer(followSilence)
			defer t.Stop()
			for {
				select {
				case <-conn.Done():
					return
				case <-heard:
					t.Reset(followSilence)
				case <-t.C:
					cancel()
					return
				}
			}
		}()
		cmd := s.opts.SSH.Command(conn, h, false, hosts.CtxWords(h, "agents", "events", "--follow", "--json", "--host", hosts.Local)...)
		var errb bytes.Buffer
		cmd.Stderr = &errb
		stdout, err := cmd.StdoutPipe()
		if err == nil {
			err = cmd.Start()
		}
		if err == nil {
			sc := bufio.NewScanner(stdout)
			sc.Buffer(make([]byte, 64<<10), 16<<20)
			for sc.Scan() {
				select {
				case heard <- struct{}{}:
				default:
				}
				var line struct {
					Agents []agents.View `json:"agents"`
				}
				if json.Unmarshal(sc.Bytes(), &line) != nil {
					continue
				}
				for i := range line.Agents {
					line.Agents[i].Host = h.Name
				}
				s.fleet.set(h.Name, line.Agents, true, "")
				s.pokeWatch()
				backoff = followBackoff
			}
			cancel() // a line too long, a read error: this connection is done
			err = cmd.Wait()
		}
		cancel()
		why := hosts.LastLine(errb.String())
		if why == "" && err != nil {
			why = err.Error()
			var ee *exec.ExitError
			if errors.As(err, &ee) && ee.ExitCode() == 255 {
				why = "the ssh connection ended"
			}
		}
		s.fleet.set(h.Name, nil, false, why)
		s.pokeWatch()
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, followBackoffMax)
	}
}

// set records what a host said; a host that went away keeps its last agents.
func (f *fleet) set(host string, views []agents.View, up bool, err string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.feeds == nil {
		f.feeds = map[string]*hostFeed{}
	}
	feed := f.feeds[host]
	if feed == nil {
		feed = &hostFeed{}
		f.feeds[host] = feed
	}
	if up {
		feed.views = views
	}
	feed.up, feed.err = up, err
}

// views are every host's agents, and the hosts that cannot be reached now.
func (f *fleet) views() ([]agents.View, map[string]string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []agents.View
	down := map[string]string{}
	for name, feed := range f.feeds {
		out = append(out, feed.views...)
		if !feed.up {
			down[name] = feed.err
		}
	}
	return out, down
}

// hostOf returns the host an agent of the fleet runs on.
func (s *Server) hostOf(id string) (*hosts.Host, bool) {
	views, _ := s.fleet.views()
	var found *hosts.Host
	for _, v := range views {
		if v.ID != id && v.Name != id {
			continue
		}
		for _, h := range s.opts.Hosts {
			if h.Name == v.Host {
				if found != nil && found.Name != h.Name {
					return nil, false // a name on two hosts: only the id says which
				}
				found = &h
			}
		}
	}
	return found, found != nil
}

// remoteOp runs an agents command on the agent's host in the background, as the
// server's own operations run (one at a time per agent, an event when it fails).
func (s *Server) remoteOp(h *hosts.Host, id, op string, args ...string) error {
	return s.startOp(id, op, func() error {
		_, err := s.opts.SSH.Run(s.opsCtx, *h, append([]string{"agents", op, "--host", hosts.Local, id}, args...)...)
		return err
	})
}
