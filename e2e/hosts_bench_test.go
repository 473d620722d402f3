//go:build e2e

package e2e

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
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
