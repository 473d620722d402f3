//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"
)

// BenchmarkAgentHandoff measures, with the real client in tmux, b.N handoffs of an
// agent whose every session crosses 90% at its first step: the wall time from the
// hook that asked for the handoff (the old session's Stop) to the fresh session's first
// request to the model, and the size of each handoff note. Run it with
// `make bench-e2e`.
func BenchmarkAgentHandoff(b *testing.B) {
	e := handoffEnvB(b)
	agent := newStepAgent(b.N, true, func(int) int { return 880_000 })
	e.Model.Respond = agent.respond(e)
	e.MustCtx("agents", "start", "1", "--name", "relay", "--auto-approve", "--permission-mode", "default", "--prompt", "Do the steps of the task.")
	v := e.waitChain("relay", b.N+1, time.Duration(b.N)*20*time.Second+time.Minute)
	firsts := firstRequests(e.Model)
	var walls []time.Duration
	var notes []int
	for _, l := range v.Chain[1:] {
		r, ok := firsts[l.SessionID]
		if !ok || l.Asked == nil {
			b.Fatalf("link %s: no first request or no time asked", l.SessionID)
		}
		walls = append(walls, r.At.Sub(*l.Asked))
		notes = append(notes, l.NoteTokens)
	}
	if feed, err := os.ReadFile(filepath.Join(e.Workspace, ".ctx/state/agents/feed.jsonl")); err == nil && os.Getenv("CTX_BENCH_FEED") != "" {
		b.Logf("feed:\n%s", feed)
		for _, l := range v.Chain[1:] {
			b.Logf("asked %s first request %s", l.Asked.Format("15:04:05.000"), firsts[l.SessionID].At.UTC().Format("15:04:05.000"))
		}
	}
	sort.Ints(notes)
	b.ReportMetric(float64(median(walls).Milliseconds()), "ms-handoff-p50")
	b.ReportMetric(float64(notes[len(notes)-1]), "tokens-note-max")
	b.Logf("%d handoffs: Stop → fresh session's first request p50 %s (min %s, max %s); notes %d–%d tokens",
		len(walls), median(walls), minDur(walls), maxDur(walls), notes[0], notes[len(notes)-1])
}

// BenchmarkHandoffVersusCompaction runs the same 12-step task twice, once with the
// agent handing off (policy fresh) and once letting Claude Code compact (policy
// compact, the stand-in summarizing what was done), and reports what the model is
// sent: the size of the first request after each handoff or compaction, and of the
// average request over the task, in tokens at four bytes a token (the stand-in counts
// no tokens; the request's system prompt, tools and messages are measured as sent).
// It ignores b.N: one run of each is the measurement.
func BenchmarkHandoffVersusCompaction(b *testing.B) {
	cost := func(n int) int {
		if n > 9 {
			return 150_000
		}
		return 290_000
	}
	run := func(policy string, onlyMessages bool) (firstAfter, all []int, events int) {
		e := handoffEnvB(b)
		agent := newStepAgent(12, policy == "fresh", cost)
		e.Model.Respond = agent.respond(e)
		e.Model.Summarize = func(r Request) string {
			agent.mu.Lock()
			agent.levels[r.SessionID] = 12_000
			agent.mu.Unlock()
			done := lastDone(r.Text())
			return fmt.Sprintf("Steps 1 to %d of the 12-step task are done (files work/step-01.txt to work/step-%02d.txt). Next: step %d.", done, done, done+1)
		}
		e.MustCtx("agents", "start", "1", "--name", "task", "--handoff", policy, "--auto-approve", "--permission-mode", "default", "--prompt", "Do the 12 steps of the task, one at a time.")
		deadline := time.Now().Add(3 * time.Minute)
		for len(stepLines(e)) < 12 || e.show("task").Activity.Event != "Stop" {
			if time.Now().After(deadline) {
				b.Fatalf("%s: the task did not finish: %d steps", policy, len(stepLines(e)))
			}
			time.Sleep(500 * time.Millisecond)
		}
		reqs := e.Model.Requests(KindMain)
		seen := map[string]bool{}
		afterCompaction := false
		for i, r := range reqs {
			size := (len(r.raw) + 3) / 4
			if msgs, err := json.Marshal(r.Body["messages"]); err == nil && onlyMessages {
				size = (len(msgs) + 3) / 4
			}
			all = append(all, size)
			switch {
			case i > 0 && !seen[r.SessionID]:
				firstAfter, events = append(firstAfter, size), events+1
			case afterCompaction:
				firstAfter, events = append(firstAfter, size), events+1
			}
			afterCompaction = false
			seen[r.SessionID] = true
			for _, s := range e.Model.Requests(KindSummary) {
				if s.At.After(r.At) && (i+1 == len(reqs) || s.At.Before(reqs[i+1].At)) {
					afterCompaction = true
				}
			}
		}
		return firstAfter, all, events
	}
	mean := func(xs []int) int {
		t := 0
		for _, x := range xs {
			t += x
		}
		return t / max(1, len(xs))
	}
	for _, only := range []bool{false, true} {
		what := "whole request"
		if only {
			what = "messages"
		}
		hFirst, hAll, handoffs := run("fresh", only)
		cFirst, cAll, compactions := run("compact", only)
		suffix := map[bool]string{false: "", true: "-messages"}[only]
		b.ReportMetric(float64(mean(hFirst)), "tokens-first-after-handoff"+suffix)
		b.ReportMetric(float64(mean(cFirst)), "tokens-first-after-compaction"+suffix)
		b.ReportMetric(float64(mean(hAll)), "tokens-per-request-handoff"+suffix)
		b.ReportMetric(float64(mean(cAll)), "tokens-per-request-compact"+suffix)
		b.Logf("%s, handoff: %d handoffs, first request after each %v (mean %d), %d requests of mean %d tokens",
			what, handoffs, hFirst, mean(hFirst), len(hAll), mean(hAll))
		b.Logf("%s, compact: %d compactions, first request after each %v (mean %d), %d requests of mean %d tokens",
			what, compactions, cFirst, mean(cFirst), len(cAll), mean(cAll))
	}
}

func handoffEnvB(b *testing.B) *Env {
	e := New(b, Options{Git: true})
	e.seedClaudeJSON()
	if err := os.MkdirAll(filepath.Join(e.Workspace, ProjectPath("work")), 0o755); err != nil {
		b.Fatal(err)
	}
	return e
}

// waitChain waits until the agent's chain has n sessions, the last one checked and
// idle.
func (e *Env) waitChain(name string, n int, timeout time.Duration) handoffView {
	e.T.Helper()
	deadline := time.Now().Add(timeout)
	for {
		v := e.handoffView(name)
		if len(v.Chain) >= n && v.State == "active" && v.Chain[len(v.Chain)-1].Check != "pending" && e.show(name).Activity.Event == "Stop" {
			return v
		}
		if time.Now().After(deadline) {
			out, _ := json.Marshal(v)
			e.T.Fatalf("agent %s: chain of %d sessions not reached: %s", name, n, out)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// firstRequests is each session's first main-chain request.
func firstRequests(m *Model) map[string]Request {
	out := map[string]Request{}
	for _, r := range m.Requests(KindMain) {
		if _, ok := out[r.SessionID]; !ok {
			out[r.SessionID] = r
		}
	}
	return out
}

func minDur(ds []time.Duration) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[0]
}

func maxDur(ds []time.Duration) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] > s[j] })
	return s[0]
}
