//go:build e2e

package e2e

import (
	"bufio"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ctxtools/ctx/agents"
	"github.com/ctxtools/ctx/loader"
)

// BenchmarkHostsList times `ctx agents list --json` over 3 hosts with 20 agent records
// each (and 20 here), warm master connections: each host a real sshd and account. Run
// it with `make bench-e2e`.
func BenchmarkHostsList(b *testing.B) {
	e := New(b, Options{Git: true})
	addRecords(b, e.Workspace, 20, "")
	for i := 0; i < 3; i++ {
		name := fmt.Sprintf("h%d", i)
		r := e.NewRemote(name)
		addRecords(b, r.Workspace, 20, r.User)
		e.MustCtx("hosts", "add", name, "--remote-workspace", r.Workspace, "--no-check")
	}
	out := e.MustCtx("agents", "list") // the master connections come up
	if n := strings.Count(out, "\n"); n != 81 {
		b.Fatalf("%d lines, want a header and 80 agents:\n%s", n, out)
	}
	var times []time.Duration
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		e.MustCtx("agents", "list", "--json")
		times = append(times, time.Since(t0))
	}
	b.ReportMetric(float64(median(times).Microseconds())/1000, "ms-list-p50")
	b.Logf("agents list --json over 3 hosts × 20 agents and 20 here, warm: p50 %s (n=%d)", median(times), len(times))
}

// BenchmarkRemotePauseResume times a pause and a resume (to active) of an idle agent
// on another host, from here.
func BenchmarkRemotePauseResume(b *testing.B) {
	e := New(b, Options{Git: true})
	r := e.NewRemote("build")
	e.MustCtx("hosts", "add", "build", "--remote-workspace", r.Workspace, "--no-check")
	e.Model.Script(Say("ready", 20_000))
	e.MustCtx("agents", "start", "1", "--host", "build", "--name", "far")
	var pauses, resumes []time.Duration
	for i := 0; i < b.N; i++ {
		time.Sleep(500 * time.Millisecond) // idle: its turn over
		t0 := time.Now()
		e.MustCtx("agents", "pause", "far", "--host", "build")
		pauses = append(pauses, time.Since(t0))
		e.Model.Script(Say("back", 20_000))
		t1 := time.Now()
		e.MustCtx("agents", "resume", "far", "--host", "build")
		resumes = append(resumes, time.Since(t1))
	}
	b.ReportMetric(float64(median(pauses).Milliseconds()), "ms-pause-p50")
	b.ReportMetric(float64(median(resumes).Milliseconds()), "ms-resume-p50")
	b.Logf("remote pause p50 %s, resume to active p50 %s (n=%d)", median(pauses), median(resumes), len(pauses))
}

// addRecords writes n paused agents' records into a workspace (owned by user, when
// given).
func addRecords(b *testing.B, workspace string, n int, user string) {
	b.Helper()
	ws, err := loader.Discover(loader.DiscoverOptions{Cwd: workspace})
	if err != nil {
		b.Fatal(err)
	}
	store := agents.NewStore(ws)
	for i := 0; i < n; i++ {
		r := &agents.Record{ID: agents.NewID(), Name: fmt.Sprintf("agent-%02d", i), Project: "01-checkout-redesign",
			State: agents.Paused, CreatedAt: time.Now(), Tmux: agents.TmuxInfo{Kind: "tmux", Session: fmt.Sprintf("ctx-x%02d", i)}}
		if err := store.Create(r); err != nil {
			b.Fatal(err)
		}
	}
	if user != "" {
		if out, err := exec.Command("chown", "-R", user+":"+user, filepath.Join(workspace, ".ctx")).CombinedOutput(); err != nil {
			b.Fatalf("chown: %v %s", err, out)
		}
	}
}

// BenchmarkRemoteDashboardEvent times an agent's hook on another host (a real hook
// process there, as its claude would run it) to the event on the dashboard's stream
// here: the host's `ctx agents events --follow` over ssh, then ctx serve's stream.
func BenchmarkRemoteDashboardEvent(b *testing.B) {
	e := New(b, Options{Git: true})
	r := e.NewRemote("build")
	addRecords(b, r.Workspace, 1, r.User)
	e.MustCtx("hosts", "add", "build", "--remote-workspace", r.Workspace, "--no-check")
	var agentID string
	if out, err := exec.Command("ls", filepath.Join(r.Workspace, ".ctx/state/agents")).Output(); err == nil {
		for _, f := range strings.Fields(string(out)) {
			if strings.HasPrefix(f, "a-") {
				agentID = f
			}
		}
	}
	serve := exec.Command(e.CtxDir+"/ctx", "serve", "--addr", "127.0.0.1:0")
	serve.Dir, serve.Env = e.Workspace, e.environ(true)
	stdout, _ := serve.StdoutPipe()
	if err := serve.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = serve.Process.Signal(syscall.SIGINT); _ = serve.Wait() })
	sc := bufio.NewScanner(stdout)
	if !sc.Scan() {
		b.Fatal("ctx serve printed no login URL")
	}
	login := sc.Text()
	base, query, _ := strings.Cut(login, "/login?t=")
	req, _ := http.NewRequest("GET", base+"/events", nil)
	req.Header.Set("Authorization", "Bearer "+query)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	seen := make(chan time.Time, 64)
	go func() {
		rd := bufio.NewScanner(resp.Body)
		rd.Buffer(make([]byte, 1<<20), 1<<24)
		for rd.Scan() {
			if line := rd.Text(); strings.HasPrefix(line, "data:") && strings.Contains(line, agentID) && strings.Contains(line, `"source":"status"`) {
				seen <- time.Now()
			}
		}
	}()
	time.Sleep(2 * time.Second) // the host's stream is up
	hook := func(command, event string) time.Time {
		payload := fmt.Sprintf(`{"session_id":"s-bench","hook_event_name":%q,"cwd":%q,"tool_name":"Bash","tool_input":{"command":"ls"}}`, event, r.Workspace)
		cmd := exec.Command("runuser", "-u", r.User, "--", "env", "PATH="+filepath.Join(r.Home, "bin")+":/usr/bin:/bin",
			"HOME="+r.Home, agents.EnvAgentID+"="+agentID, "ctx", "system", command)
		cmd.Dir = r.Workspace
		cmd.Stdin = strings.NewReader(payload)
		t0 := time.Now()
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("hook: %v %s", err, out)
		}
		return t0
	}
	var lat []time.Duration
	for i := 0; i < b.N; i++ {
		for _, ev := range [][2]string{{"record-action", "PostToolUse"}, {"stop", "Stop"}} {
			t0 := hook(ev[0], ev[1])
			select {
			case at := <-seen:
				lat = append(lat, at.Sub(t0))
			case <-time.After(10 * time.Second):
				b.Fatalf("no event for %s within 10 s", ev[1])
			}
			time.Sleep(200 * time.Millisecond)
			for len(seen) > 0 {
				<-seen
			}
		}
	}
	sorted := append([]time.Duration(nil), lat...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i] < sorted[j] })
	p95 := sorted[min(len(sorted)-1, len(sorted)*95/100)]
	b.ReportMetric(float64(median(lat).Milliseconds()), "ms-event-p50")
	b.ReportMetric(float64(p95.Milliseconds()), "ms-event-p95")
	b.Logf("remote hook → dashboard event: p50 %s, p95 %s (n=%d)", median(lat), p95, len(lat))
}

// BenchmarkRemoteMove times `ctx agents move` of an idle agent with 100 changed files
// to another host, from the command to the agent active there.
func BenchmarkRemoteMove(b *testing.B) {
	e := New(b, Options{Git: true})
	e.seedClaudeJSON()
	r := e.NewRemote("build")
	e.MustCtx("hosts", "add", "build", "--remote-workspace", r.Workspace, "--no-check")
	var moves []time.Duration
	for i := 0; i < b.N; i++ {
		name := fmt.Sprintf("mover%d", i)
		e.Model.Script(Say("ready", 20_000))
		e.MustCtx("agents", "start", "1", "--name", name, "--worktree", "ctx/"+name)
		wt := filepath.Join(e.Workspace, ".ctx", "worktrees", name)
		for f := 0; f < 100; f++ {
			if err := os.WriteFile(filepath.Join(wt, fmt.Sprintf("work-%03d.md", f)), []byte(fmt.Sprintf("change %d\n", f)), 0o644); err != nil {
				b.Fatal(err)
			}
		}
		time.Sleep(500 * time.Millisecond) // its first turn over
		t0 := time.Now()
		e.MustCtx("agents", "move", name, "--to", "build")
		moves = append(moves, time.Since(t0))
	}
	b.ReportMetric(float64(median(moves).Milliseconds()), "ms-move-p50")
	b.Logf("move of an agent with 100 changed files to another host, to active there: p50 %s (n=%d)", median(moves), len(moves))
}
