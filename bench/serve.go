//go:build linux

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ctxtools/ctx/agents"
	"github.com/ctxtools/ctx/demo"
	"github.com/ctxtools/ctx/loader"
)

// The dashboard's figures, with the real binaries: `ctx serve` over a workspace of 50
// agents (11 live in tmux, 39 paused), measured from outside the process.
//
//   - hook → event: a real hook process (`ctx system stop`, CTX_AGENT_ID set) is started,
//     and the time until its change arrives on the event stream is taken;
//   - terminal: one event stream watches the screens of 10 agents, as the Terminals
//     page does; text typed into one pane (tmux send-keys) is timed until a screen
//     event holding it arrives;
//   - memory: the server's peak resident memory (VmHWM) after the runs;
//   - idle CPU: the server's user and system time over an idle window, as a share of
//     it, with the 10 terminals still watched.

const (
	serveAgents    = 50
	serveHooks     = 40
	serveTerminals = 10
	serveTyped     = 60
	serveIdle      = 10 * time.Second
)

type serveResult struct {
	latencies  []time.Duration
	terminal   []time.Duration
	browser    []time.Duration // nil without Chromium (browserErr)
	browserErr error
	peakRSS    int64 // bytes
	idleCPU    float64
}

// benchServe runs the dashboard cases and prints their rows.
func benchServe(bin string) error {
	if _, err := exec.LookPath("tmux"); err != nil {
		return errors.New("serve: tmux is needed for the live agent (apt-get install tmux)")
	}
	r, err := measureServe(bin)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	slices.Sort(r.latencies)
	slices.Sort(r.terminal)
	n := len(r.latencies)
	p95 := r.latencies[(n*95+99)/100-1]
	tp95 := r.terminal[(len(r.terminal)*95+99)/100-1]
	fmt.Printf("\nctx serve, %d agents (%d hooks, %d keystrokes into %d watched terminals, %s idle):\n", serveAgents, n, len(r.terminal), serveTerminals, serveIdle)
	row := func(what, got, target string, ok bool) {
		verdict := "PASS"
		if !ok {
			verdict = "OVER"
		}
		fmt.Printf("  %-36s %12s  target %-8s %s\n", what, got, target, verdict)
	}
	row("hook → event, median", fmt.Sprintf("%.1f ms", ms(medianOf(r.latencies))), "", true)
	row("hook → event, p95", fmt.Sprintf("%.1f ms", ms(p95)), "≤ 100 ms", p95 <= 100*time.Millisecond)
	row("pane → screen event, median", fmt.Sprintf("%.1f ms", ms(medianOf(r.terminal))), "", true)
	row("pane → screen event, p95", fmt.Sprintf("%.1f ms", ms(tp95)), "≤ 150 ms", tp95 <= 150*time.Millisecond)
	if len(r.browser) > 0 {
		slices.Sort(r.browser)
		bp95 := r.browser[(len(r.browser)*95+99)/100-1]
		row("pane → browser (10 open), median", fmt.Sprintf("%.1f ms", ms(medianOf(r.browser))), "", true)
		row("pane → browser (10 open), p95", fmt.Sprintf("%.1f ms", ms(bp95)), "≤ 150 ms", bp95 <= 150*time.Millisecond)
	} else {
		fmt.Printf("  pane change → browser: not measured: %v\n", r.browserErr)
	}
	row("server peak memory", fmt.Sprintf("%.1f MB", float64(r.peakRSS)/(1<<20)), "≤ 60 MB", r.peakRSS <= 60<<20)
	row("server idle CPU", fmt.Sprintf("%.2f %%", r.idleCPU), "≤ 1 %", r.idleCPU <= 1)
	return nil
}

func measureServe(bin string) (res serveResult, err error) {
	tmp, err := os.MkdirTemp("", "ctx-bench-serve-")
	if err != nil {
		return res, err
	}
	defer remove(tmp)
	root := filepath.Join(tmp, "ws")
	if err := demo.Write(root); err != nil {
		return res, err
	}
	ws, err := loader.Open(root)
	if err != nil {
		return res, err
	}
	socket := fmt.Sprintf("ctx-bench-%d", os.Getpid())
	live := "ctx-a-live01"
	tmux := func(args ...string) error {
		return exec.Command("tmux", append([]string{"-L", socket}, args...)...).Run()
	}
	if err := tmux("new-session", "-d", "-s", live, "sleep", "600"); err != nil {
		return res, fmt.Errorf("tmux: %w", err)
	}
	defer func() { _ = tmux("kill-server") }()
	// The watched terminals: each pane runs cat, so typed text shows (the terminal's
	// echo) the moment tmux has it.
	var watched []string
	for i := range serveTerminals {
		if err := tmux("new-session", "-d", "-s", fmt.Sprintf("ctx-a-term%02d", i), "-x", "200", "-y", "50", "cat"); err != nil {
			return res, fmt.Errorf("tmux: %w", err)
		}
		watched = append(watched, fmt.Sprintf("a-term%02d", i))
	}

	store := agents.NewStore(ws)
	now := time.Now().UTC()
	for i := range serveAgents {
		rec := &agents.Record{ID: fmt.Sprintf("a-bench%02d", i), Name: fmt.Sprintf("agent-%02d", i), Project: "01-checkout-redesign",
			State: agents.Paused, StateSince: now, CreatedAt: now, Tmux: agents.TmuxInfo{Kind: "tmux", Socket: socket, Session: fmt.Sprintf("ctx-a-bench%02d", i)}}
		switch {
		case i == 0:
			rec.ID, rec.State, rec.Tmux.Session = "a-live01", agents.Active, live
		case i <= serveTerminals:
			rec.ID, rec.State, rec.Tmux.Session = watched[i-1], agents.Active, "ctx-a-"+watched[i-1][2:]
		}
		if err := store.Create(rec); err != nil {
			return res, err
		}
	}

	env := append(os.Environ(), "CTX_WORKSPACE="+root, "XDG_RUNTIME_DIR="+tmp, "CTX_TMUX_SOCKET="+socket, "NO_COLOR=1")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv := exec.CommandContext(ctx, bin, "serve", "--addr", "127.0.0.1:0")
	srv.Env, srv.Dir = env, root
	out, err := srv.StdoutPipe()
	if err != nil {
		return res, err
	}
	if err := srv.Start(); err != nil {
		return res, err
	}
	defer func() { cancel(); _ = srv.Wait() }()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		return res, fmt.Errorf("read the login URL: %w", err)
	}
	login, err := url.Parse(strings.TrimSpace(line))
	if err != nil {
		return res, err
	}
	token := login.Query().Get("t")

	req, _ := http.NewRequestWithContext(ctx, "GET", "http://"+login.Host+"/events", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return res, err
	}
	defer func() { _ = resp.Body.Close() }()
	events := make(chan string, 64)
	go func() {
		rd := bufio.NewReader(resp.Body)
		for {
			l, err := rd.ReadString('\n')
			if err != nil {
				close(events)
				return
			}
			if name, ok := strings.CutPrefix(strings.TrimSpace(l), "event: "); ok {
				events <- name
			}
		}
	}()
	if first := <-events; first != "snapshot" {
		return res, fmt.Errorf("first event %q", first)
	}
	// Let the first full refresh (tmux, memory) settle before measuring.
	time.Sleep(2500 * time.Millisecond)
	drain(events)

	hookEnv := append(slices.Clone(env), agents.EnvAgentID+"=a-live01")
	for i := range serveHooks {
		payload, _ := json.Marshal(map[string]any{"session_id": "11111111-2222-3333-4444-555555555555", "hook_event_name": "Stop",
			"cwd": root, "last_assistant_message": fmt.Sprintf("step %d done", i)})
		hook := exec.Command(bin, "system", "stop")
		hook.Env, hook.Dir, hook.Stdin = hookEnv, root, strings.NewReader(string(payload))
		start := time.Now()
		if err := hook.Run(); err != nil {
			return res, fmt.Errorf("hook: %w", err)
		}
		select {
		case name, ok := <-events:
			if !ok {
				return res, errors.New("the event stream ended")
			}
			if !strings.HasPrefix(name, "agent.") {
				return res, fmt.Errorf("event %q after a hook", name)
			}
			res.latencies = append(res.latencies, time.Since(start))
		case <-time.After(5 * time.Second):
			return res, errors.New("no event within 5 s of a hook")
		}
		drain(events)
		time.Sleep(50 * time.Millisecond)
	}

	if res.terminal, err = measureTerminals(ctx, login.Host, token, watched, tmux); err != nil {
		return res, err
	}
	if res.browser, err = measureBrowser(login.String(), watched, tmux); err != nil && !errors.Is(err, errNoChromium) {
		return res, err
	}
	res.browserErr = err

	pid := srv.Process.Pid
	cpu0, err := cpuTicks(pid)
	if err != nil {
		return res, err
	}
	t0 := time.Now()
	time.Sleep(serveIdle)
	cpu1, err := cpuTicks(pid)
	if err != nil {
		return res, err
	}
	const ticksPerSecond = 100 // USER_HZ on Linux
	res.idleCPU = float64(cpu1-cpu0) / ticksPerSecond / time.Since(t0).Seconds() * 100
	res.peakRSS, err = peakRSS(pid)
	return res, err
}

func drain(events chan string) {
	for {
		select {
		case <-events:
		default:
			return
		}
	}
}

// cpuTicks is a process's user plus system time, in clock ticks (/proc/PID/stat).
func cpuTicks(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The fields after the command name, which is in parentheses and may hold spaces.
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	if len(f) < 13 {
		return 0, errors.New("short /proc stat")
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	return utime + stime, errors.Join(err1, err2)
}

// peakRSS is a process's peak resident memory (VmHWM).
func peakRSS(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb * 1024, err
		}
	}
	return 0, errors.New("no VmHWM")
}

// measureTerminals opens one event stream watching the screens of ids, types a marker
// into one pane after another, and times each until a screen event holding it
// arrives. The stream stays open (the caller's ctx ends it), so the idle window that
// follows has the terminals watched.
func measureTerminals(ctx context.Context, host, token string, ids []string, tmux func(...string) error) ([]time.Duration, error) {
	q := url.Values{"screen": ids}
	req, _ := http.NewRequestWithContext(ctx, "GET", "http://"+host+"/events?"+q.Encode(), nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req) //nolint:bodyclose // closed when ctx ends
	if err != nil {
		return nil, err
	}
	type screen struct {
		id   string
		data string
		at   time.Time
	}
	screens := make(chan screen, 1024)
	go func() {
		defer close(screens)
		rd := bufio.NewReaderSize(resp.Body, 1<<20)
		name := ""
		for {
			l, err := rd.ReadString('\n')
			if err != nil {
				return
			}
			l = strings.TrimRight(l, "\n")
			switch {
			case strings.HasPrefix(l, "event: "):
				name = l[7:]
			case strings.HasPrefix(l, "data: ") && name == "agent.screen":
				var d struct {
					ID string `json:"id"`
				}
				_ = json.Unmarshal([]byte(l[6:]), &d)
				screens <- screen{d.ID, l[6:], time.Now()}
			}
		}
	}()
	// Each watched agent's screen first, as a page gets it.
	first := map[string]bool{}
	for deadline := time.After(10 * time.Second); len(first) < len(ids); {
		select {
		case s, ok := <-screens:
			if !ok {
				return nil, errors.New("the screen stream ended")
			}
			first[s.id] = true
		case <-deadline:
			return nil, fmt.Errorf("only %d of %d screens within 10 s", len(first), len(ids))
		}
	}
	var out []time.Duration
	for i := range serveTyped {
		id := ids[i%len(ids)]
		marker := fmt.Sprintf("typed-%03d-%s", i, id)
		start := time.Now()
		if err := tmux("send-keys", "-t", "=ctx-"+id+":", "-l", marker); err != nil {
			return nil, err
		}
		for got := false; !got; {
			select {
			case s, ok := <-screens:
				if !ok {
					return nil, errors.New("the screen stream ended")
				}
				if s.id == id && strings.Contains(s.data, marker) {
					out = append(out, s.at.Sub(start))
					got = true
				}
			case <-time.After(5 * time.Second):
				return nil, fmt.Errorf("no screen of %s holding %q within 5 s", id, marker)
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	go func() { // keep reading, so the server never drops the stream as slow
		for range screens {
		}
	}()
	return out, nil
}
