//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// BenchmarkHooksInRealClient runs a session of 15 prompts, each with a Bash and a Write
// call, through the real client and reports the median and p95 of each ctx hook's
// duration as the client's debug log measures it: the cost a person pays, process
// start included. Run it with `make bench-e2e`.
func BenchmarkHooksInRealClient(b *testing.B) {
	times := map[string][]int{}
	for i := 0; i < b.N; i++ {
		e := New(b, Options{Git: true})
		// A no-op hook beside ctx's, in the user's settings: what the client itself
		// costs to run any hook (sh, a process, the payload piped in).
		writeBaselineHooks(b, e)
		var prompts []string
		script := []Reply{Call(5000, Bash("ctx load 1 >/dev/null"))}
		for p := 0; p < 15; p++ {
			prompts = append(prompts, fmt.Sprintf("step %d", p))
			f := filepath.Join(e.Workspace, ProjectPath(fmt.Sprintf("03-working/bench-%d.md", p)))
			script = append(script, Call(10_000+p*50_000, Bash("git status --short >/dev/null"), Write(f, "step\n")), Say("done", 10_000+p*50_000+1000))
		}
		e.Model.Script(script...)
		res := e.MustRun(Run{Prompts: prompts, Timeout: 300_000_000_000})
		for _, h := range res.Hooks {
			if h.Millis <= 0 {
				continue
			}
			ev := h.Event
			if strings.HasPrefix(h.Command, "cat") {
				ev = "baseline-" + ev
			}
			times[ev] = append(times[ev], h.Millis)
		}
	}
	events := make([]string, 0, len(times))
	for ev := range times {
		events = append(events, ev)
	}
	sort.Strings(events)
	for _, ev := range events {
		ms := times[ev]
		sort.Ints(ms)
		med, p95 := ms[len(ms)/2], ms[min(len(ms)-1, len(ms)*95/100)]
		b.ReportMetric(float64(med), "ms-median-"+ev)
		b.ReportMetric(float64(p95), "ms-p95-"+ev)
		b.Logf("%-18s n=%3d  median %3d ms  p95 %3d ms", ev, len(ms), med, p95)
	}
}

// BenchmarkAgentPauseResume measures, with the real client in tmux: pause of an idle
// agent with 100 dirty files, resume until its SessionStart (active), and the memory
// pause freed. Run it with `make bench-e2e`.
func BenchmarkAgentPauseResume(b *testing.B) {
	e := New(b, Options{Git: true})
	e.seedClaudeJSON()
	for i := 0; i < 100; i++ {
		f := filepath.Join(e.Workspace, ProjectPath(fmt.Sprintf("03-working/dirty-%03d.md", i)))
		if err := os.WriteFile(f, []byte("work in progress\n"), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	e.Model.Script(Say("ready", 20_000))
	e.MustCtx("agents", "start", "1", "--name", "bench")
	var pauses, resumes []time.Duration
	var freed int64
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		out := e.MustCtx("agents", "pause", "bench", "--json")
		pauses = append(pauses, time.Since(t0))
		var recs []struct {
			Pause struct {
				RSSFreedKB int64 `json:"rss_freed_kb"`
			} `json:"pause"`
		}
		if err := json.Unmarshal([]byte(out), &recs); err == nil && len(recs) == 1 {
			freed = recs[0].Pause.RSSFreedKB
		}
		e.Model.Script(Say("back", 20_000))
		t1 := time.Now()
		e.MustCtx("agents", "resume", "bench")
		resumes = append(resumes, time.Since(t1))
	}
	b.ReportMetric(float64(median(pauses).Milliseconds()), "ms-pause-p50")
	b.ReportMetric(float64(median(resumes).Milliseconds()), "ms-resume-p50")
	b.ReportMetric(float64(freed)/1024, "MB-freed")
	b.Logf("pause p50 %s, resume to active p50 %s, freed %d MB (n=%d)", median(pauses), median(resumes), freed/1024, len(pauses))
}

// BenchmarkAgentsList50 times `ctx agents list --json` with 50 agent records.
func BenchmarkAgentsList50(b *testing.B) {
	e := New(b, Options{})
	addRecords(b, e.Workspace, 50, "")
	var times []time.Duration
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		e.MustCtx("agents", "list", "--json")
		times = append(times, time.Since(t0))
	}
	b.ReportMetric(float64(median(times).Microseconds())/1000, "ms-list-p50")
	b.Logf("ctx agents list --json with 50 agents: p50 %s (n=%d)", median(times), len(times))
}

func median(ds []time.Duration) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

// writeBaselineHooks registers `cat >/dev/null` (read the payload, do nothing) on the
// events ctx's benchmark compares, in the user's settings.
func writeBaselineHooks(b *testing.B, e *Env) {
	b.Helper()
	hooks := map[string]any{}
	for _, ev := range []string{"UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop"} {
		hooks[ev] = []any{map[string]any{"matcher": "*", "hooks": []any{map[string]any{"type": "command", "command": "cat >/dev/null"}}}}
	}
	data, err := json.Marshal(map[string]any{"hooks": hooks})
	if err != nil {
		b.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(e.Home, ".claude"), 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(e.Home, ".claude", "settings.json"), data, 0o644); err != nil {
		b.Fatal(err)
	}
}
