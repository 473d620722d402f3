// Package web is ctx's local dashboard (`ctx serve`): server-rendered pages, a JSON API
// with the shapes of `ctx agents --json`, and Server-Sent Events, over the same agent
// records the CLI writes. The server only renders, streams and calls the agents
// package: starting, stopping or crashing it changes nothing for any agent.
//
// It can start processes and type into agents, so every request passes, in this order,
// the Host allowlist, the token, the Origin check and the security headers (Handler).
package web

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/ctxtools/ctx/agents"
	"github.com/ctxtools/ctx/hosts"
	"github.com/ctxtools/ctx/internal/durable"
	"github.com/ctxtools/ctx/loader"
)

// DefaultAddr is where `ctx serve` listens unless told otherwise.
const DefaultAddr = "127.0.0.1:7177"

// Options configure a Server.
type Options struct {
	// Addr is a loopback address (127.0.0.1:PORT, [::1]:PORT or localhost:PORT); the
	// server listens on 127.0.0.1 and, when the machine has it, ::1, on that port.
	// Port 0 picks a free port.
	Addr string
	// Listen is another address (a LAN or tailnet one); it needs AllowRemote.
	Listen      string
	AllowRemote bool
	// Poll is how often the records and status files are read (default 1 s); every
	// second poll also asks tmux for liveness and reads memory.
	Poll time.Duration
	// Heartbeat is the interval of the event stream's comment line (default 15 s).
	Heartbeat time.Duration
	// PauseWait bounds how long a pause from the page waits for a working agent.
	PauseWait time.Duration
	// WakeDir is ctx's private runtime folder, where the server listens for the hooks'
	// wake-ups (agents.ListenWake); "" polls only.
	WakeDir string
	// NotifyCommand is run with sh -c when an agent needs input, exits or fails
	// (notify.go); "" for none.
	NotifyCommand string
	// Hosts are the other machines whose agents the page shows too, reached with SSH
	// (fleet.go); none without.
	Hosts []hosts.Host
	SSH   *hosts.Client
	// PublicURL is the address another device reaches this server at, through a
	// tailscale serve or a tunnel ("https://box.tail1234.ts.net"): its host is served
	// and its origin accepted, and PublicLoginURL uses it.
	PublicURL string
	// ReadOnly refuses every request that would change something: the page shows the
	// agents and their terminals, and nothing can be typed or pressed.
	ReadOnly bool
}

// Server is one dashboard for one workspace.
type Server struct {
	ws     *loader.Workspace
	agents *agents.Agents
	opts   Options
	public *url.URL // Options.PublicURL, parsed
	token  string
	csrf   string
	hub    *hub
	pages  *pages
	poke   chan struct{}
	fleet  fleet     // the other hosts' agents (fleet.go)
	terms  terminals // the panes pages watch (terminal.go)

	listeners []net.Listener
	port      int
	hosts     map[string]bool // the Host values served: 127.0.0.1:P, [::1]:P, localhost:P, --listen

	// ops are the pauses and resumes the API started: they finish on their own time,
	// and Shutdown waits for them.
	opsCtx    context.Context
	opsCancel context.CancelFunc
	ops       sync.WaitGroup
	opMu      sync.Mutex
	inFlight  map[string]string // agent id → op

	// lastSaved is the snapshot set LATEST-SESSION.txt named at the last refresh, and
	// sawSaves whether a refresh looked yet (project.saved events); only the refresh
	// loop touches them.
	lastSaved string
	sawSaves  bool
	// opinions is what the guard said of each waiting Bash command (interact.go);
	// only the refresh loop touches it.
	opinions map[string]string
}

// New makes a server for the workspace's agents. Nothing listens until Listen.
func New(ws *loader.Workspace, a *agents.Agents, o Options) (*Server, error) {
	if o.Addr == "" {
		o.Addr = DefaultAddr
	}
	if o.Poll <= 0 {
		o.Poll = time.Second
	}
	if o.Heartbeat <= 0 {
		o.Heartbeat = 15 * time.Second
	}
	if o.PauseWait <= 0 {
		o.PauseWait = 30 * time.Second
	}
	var public *url.URL
	if o.PublicURL != "" {
		u, err := url.Parse(o.PublicURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || strings.Trim(u.Path, "/") != "" || u.RawQuery != "" || u.User != nil {
			return nil, fmt.Errorf("%w: --url %s: give the scheme and host another device uses, as https://box.tail1234.ts.net", ErrBadAddr, o.PublicURL)
		}
		public = u
	}
	if o.Listen != "" && !o.AllowRemote {
		return nil, fmt.Errorf("--listen %s: the dashboard can start programs on this machine; confirm with --allow-remote (the token still applies)", o.Listen)
	}
	token, err := randomHex(32)
	if err != nil {
		return nil, err
	}
	csrf, err := randomHex(16)
	if err != nil {
		return nil, err
	}
	p, err := newPages()
	if err != nil {
		return nil, err
	}
	boot, err := randomHex(4)
	if err != nil {
		return nil, err
	}
	s := &Server{ws: ws, agents: a, opts: o, public: public, token: token, csrf: csrf, hub: newHub(boot), pages: p,
		poke: make(chan struct{}, 1), inFlight: map[string]string{}, opinions: map[string]string{}}
	s.hub.notify = s.runNotify
	s.opsCtx, s.opsCancel = context.WithCancel(context.Background())
	return s, nil
}

func randomHex(n int) (string, error) {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("random: %w", err)
	}
	return hex.EncodeToString(b), nil
}

// Token is this start's secret: 256 random bits, hex.
func (s *Server) Token() string { return s.token }

// URL is the server's base URL on 127.0.0.1.
func (s *Server) URL() string { return "http://127.0.0.1:" + strconv.Itoa(s.port) }

// LoginURL is the one URL that carries the token: it sets the cookie and redirects.
func (s *Server) LoginURL() string { return s.URL() + "/login?t=" + s.token }

// PublicLoginURL is the login URL at Options.PublicURL, or LoginURL without one.
func (s *Server) PublicLoginURL() string {
	if s.public == nil {
		return s.LoginURL()
	}
	return s.public.Scheme + "://" + s.public.Host + "/login?t=" + s.token
}

// Addrs are the addresses listened on.
func (s *Server) Addrs() []string {
	var out []string
	for _, l := range s.listeners {
		out = append(out, l.Addr().String())
	}
	return out
}

// Listen binds the loopback listeners (and --listen's), and fixes the Host allowlist
// to the port they got.
func (s *Server) Listen() error {
	host, port, err := net.SplitHostPort(s.opts.Addr)
	if err != nil {
		return fmt.Errorf("%w: --addr %s: %w", ErrBadAddr, s.opts.Addr, err)
	}
	if host != "127.0.0.1" && host != "::1" && host != "localhost" {
		return fmt.Errorf("%w: --addr %s: only a loopback address (127.0.0.1, ::1, localhost); another address needs --listen ADDR --allow-remote", ErrBadAddr, s.opts.Addr)
	}
	l4, err := net.Listen("tcp4", net.JoinHostPort("127.0.0.1", port))
	if errors.Is(err, syscall.EADDRINUSE) {
		return &InUseError{Addr: net.JoinHostPort("127.0.0.1", port)}
	}
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	s.listeners = append(s.listeners, l4)
	s.port = l4.Addr().(*net.TCPAddr).Port
	p := strconv.Itoa(s.port)
	// ::1 is optional: a machine (or container) without IPv6 has only 127.0.0.1.
	if l6, err := net.Listen("tcp6", net.JoinHostPort("::1", p)); err == nil {
		s.listeners = append(s.listeners, l6)
	}
	s.hosts = map[string]bool{"127.0.0.1:" + p: true, "[::1]:" + p: true, "localhost:" + p: true}
	if s.opts.Listen != "" {
		l, err := net.Listen("tcp", s.opts.Listen)
		if err != nil {
			s.closeListeners()
			return fmt.Errorf("--listen %s: %w", s.opts.Listen, err)
		}
		s.listeners = append(s.listeners, l)
		h, _, _ := net.SplitHostPort(s.opts.Listen)
		s.hosts[net.JoinHostPort(h, strconv.Itoa(l.Addr().(*net.TCPAddr).Port))] = true
	}
	if s.public != nil {
		s.hosts[strings.ToLower(s.public.Host)] = true
	}
	return nil
}

func (s *Server) closeListeners() {
	for _, l := range s.listeners {
		_ = l.Close()
	}
}

// Run serves until ctx ends, then stops everything it started: the listeners, the
// event streams, the watcher, and (waiting up to grace) the operations in flight.
// Listen must have been called.
func (s *Server) Run(ctx context.Context, grace time.Duration) error {
	if len(s.listeners) == 0 {
		return errors.New("serve: not listening")
	}
	// Request contexts derive from base: cancelling it ends the event streams, which
	// http.Server.Shutdown alone would wait for forever.
	base, cancelBase := context.WithCancel(context.Background())
	defer cancelBase()
	srv := &http.Server{
		Handler:           s.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		BaseContext:       func(net.Listener) context.Context { return base },
	}
	s.refresh(true) // the first snapshot exists before the first request
	if s.opts.WakeDir != "" {
		closeWake, err := agents.ListenWake(s.opts.WakeDir, s.ws, s.pokeWatch)
		if err != nil {
			return err
		}
		defer closeWake()
	}
	var wg sync.WaitGroup
	watchCtx, stopWatch := context.WithCancel(context.Background())
	s.terms.mu.Lock()
	s.terms.base = watchCtx
	s.terms.mu.Unlock()
	wg.Go(func() { s.watch(watchCtx) })
	if s.opts.SSH != nil {
		for _, h := range s.opts.Hosts {
			wg.Go(func() { s.follow(watchCtx, h) })
		}
	}
	errs := make(chan error, len(s.listeners))
	for _, l := range s.listeners {
		wg.Go(func() {
			if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
				errs <- err
			}
		})
	}
	var runErr error
	select {
	case <-ctx.Done():
	case runErr = <-errs:
	}
	cancelBase()
	stopWatch()
	sctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		_ = srv.Close()
	}
	s.stopOps(sctx)
	wg.Wait()
	s.terms.wait()
	return runErr
}

// stopOps ends the operations the API started: no new ones are accepted, and those in
// flight are waited for until ctx ends. One still running then is left to the next
// command that looks at the agent, which finishes or rolls it back (docs/agents.md).
func (s *Server) stopOps(ctx context.Context) {
	s.opsCancel()
	done := make(chan struct{})
	go func() { s.ops.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
	}
}

// ErrBadAddr marks an --addr that is not a loopback address and port (bad input).
var ErrBadAddr = errors.New("bad address")

// InUseError is a port something already listens on.
type InUseError struct{ Addr string }

func (e *InUseError) Error() string { return e.Addr + " is in use by another program" }

// Running returns the serve.json of a ctx serve that runs (its process alive) in the
// runtime folder dir, or nil.
func Running(dir string) *Info {
	var info Info
	b, err := os.ReadFile(filepath.Join(dir, "serve.json"))
	if err != nil || json.Unmarshal(b, &info) != nil || info.PID <= 0 {
		return nil
	}
	if p, err := os.FindProcess(info.PID); err != nil || p.Signal(syscall.Signal(0)) != nil {
		return nil
	}
	return &info
}

// Info is serve.json: how a script finds the running server and its token.
type Info struct {
	Addr      string    `json:"addr"`
	Addrs     []string  `json:"addrs"`
	URL       string    `json:"url"`
	PID       int       `json:"pid"`
	Token     string    `json:"token"`
	Workspace string    `json:"workspace"`
	StartedAt time.Time `json:"started_at"`
}

// WriteInfo writes serve.json (mode 0600) into dir, ctx's private runtime folder, and
// returns its path.
func (s *Server) WriteInfo(dir string) (string, error) {
	info := Info{Addr: s.Addrs()[0], Addrs: s.Addrs(), URL: s.URL(), PID: os.Getpid(), Token: s.token,
		Workspace: s.ws.Root, StartedAt: time.Now().UTC()}
	b, err := json.MarshalIndent(info, "", "  ")
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, "serve.json")
	return path, durable.ReplaceFile(path, append(b, '\n'), 0o600)
}

// RemoveInfo deletes serve.json if it is still this process's.
func RemoveInfo(path string) {
	var info Info
	if b, err := os.ReadFile(path); err == nil && json.Unmarshal(b, &info) == nil && info.PID == os.Getpid() {
		_ = os.Remove(path)
	}
}
