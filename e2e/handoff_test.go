//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// The handoff scenario: one long task of steps, each a file written and a line
// appended to a log by a Bash call. The stand-in acts as a model would on what it is
// told: it works out the next step from its conversation (the files it wrote, or the
// handoff note's "Next: step N"), does one step per request, and, asked by ctx to hand
// off, records its own note with `ctx save` and ends its turn. The context level it
// reports grows with the steps done in the session, so that every session's context
// crosses ctx's 90% line and none reaches Claude Code's compaction (967,000 tokens on
// the default model).

// stepAgent is the stand-in's behaviour for a task of total steps.
type stepAgent struct {
	total int
	// cost is what step n adds to its session's context.
	cost func(n int) int
	// obey: asked to hand off, the agent saves and ends its turn; without it the agent
	// ignores the request and goes on working.
	obey bool

	mu     sync.Mutex
	levels map[string]int // per session: the level reached
	saved  map[string]bool
}

var (
	stepFileRe = regexp.MustCompile(`step-(\d+)\.txt`)
	nextStepRe = regexp.MustCompile(`Next: step (\d+)`)
)

const handoffAsk = "hands off to a fresh session at the end of this turn"

// lastDone is the highest step the conversation knows to be done.
func lastDone(text string) int {
	done := 0
	for _, m := range stepFileRe.FindAllStringSubmatch(text, -1) {
		n, _ := strconv.Atoi(m[1])
		done = max(done, n)
	}
	for _, m := range nextStepRe.FindAllStringSubmatch(text, -1) {
		n, _ := strconv.Atoi(m[1])
		done = max(done, n-1)
	}
	return done
}

func (s *stepAgent) respond(e *Env) func(Request) Reply {
	return func(r Request) Reply {
		s.mu.Lock()
		defer s.mu.Unlock()
		text := r.Text()
		done := lastDone(text)
		level := s.levels[r.SessionID]
		if level == 0 {
			level = 12_000
		}
		switch {
		case s.saved[r.SessionID]:
			return Say("stopping here: steps up to "+strconv.Itoa(done)+" are done", level+500)
		case s.obey && strings.Contains(text, handoffAsk):
			s.saved[r.SessionID] = true
			s.levels[r.SessionID] = level + 2_000
			return Call(level+2_000, Bash(fmt.Sprintf(`ctx save --summary "steps 1-%d done" --next "step %d"`, done, done+1)))
		case done >= s.total:
			s.saved[r.SessionID] = true
			return Call(level+1_000, Bash(fmt.Sprintf(`ctx save --summary "all %d steps done" --next "review the work"`, s.total)))
		}
		n := done + 1
		level += s.cost(n)
		s.levels[r.SessionID] = level
		file := filepath.Join(e.Workspace, ProjectPath(fmt.Sprintf("work/step-%02d.txt", n)))
		return Call(level,
			Write(file, fmt.Sprintf("step %d\n", n)),
			Bash(fmt.Sprintf(`echo "step %d $CLAUDE_CODE_SESSION_ID" >> %s`, n, filepath.Join(e.Workspace, ProjectPath("work/steps.log")))))
	}
}

// handoffView is what the tests read of an agent's chain.
type handoffView struct {
	State     string `json:"state"`
	Attention string `json:"attention"`
	Claude    struct {
		SessionID string `json:"session_id"`
	} `json:"claude"`
	Chain []struct {
		SessionID  string  `json:"session_id"`
		Reason     string  `json:"reason"`
		EndPercent float64 `json:"end_percent"`
		EndTokens  int     `json:"end_tokens"`
		NoteTokens int     `json:"note_tokens"`
		Check      string  `json:"check"`
	} `json:"chain"`
	Op *struct {
		Kind string `json:"kind"`
		Step string `json:"step"`
	} `json:"op"`
}

func (e *Env) handoffView(name string) handoffView {
	e.T.Helper()
	var v handoffView
	if err := json.Unmarshal([]byte(e.MustCtx("agents", "show", name, "--json")), &v); err != nil {
		e.T.Fatal(err)
	}
	return v
}

// waitFor polls the agent until ok holds.
func (e *Env) waitFor(name, what string, timeout time.Duration, ok func(handoffView) bool) handoffView {
	e.T.Helper()
	deadline := time.Now().Add(timeout)
	for {
		v := e.handoffView(name)
		if ok(v) {
			return v
		}
		if time.Now().After(deadline) {
			screen, _, _ := e.Ctx("agents", "logs", name)
			log, _ := os.ReadFile(filepath.Join(e.Workspace, ".ctx/state/agents", agentIDOf(e, name), "handoff.log"))
			e.T.Fatalf("agent %s: %s did not happen: %+v\nhandoff.log:\n%s\nscreen:\n%s", name, what, v, log, tail(screen, 2500))
		}
		time.Sleep(250 * time.Millisecond)
	}
}

func agentIDOf(e *Env, name string) string {
	var v struct {
		ID string `json:"id"`
	}
	_ = json.Unmarshal([]byte(e.MustCtx("agents", "show", name, "--json")), &v)
	return v.ID
}

// stepLines is the task's log, a line per step: "step N <session>".
func stepLines(e *Env) []string {
	data, _ := os.ReadFile(filepath.Join(e.Workspace, ProjectPath("work/steps.log")))
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if l != "" {
			out = append(out, l)
		}
	}
	return out
}

func handoffEnv(t *testing.T) *Env {
	e := agentsEnv(t)
	if err := os.MkdirAll(filepath.Join(e.Workspace, ProjectPath("work")), 0o755); err != nil {
		t.Fatal(err)
	}
	return e
}

// The 12-step task: three handoffs, never a compaction, every step done once, each
// fresh session's first request the note with the next step and the files the last
// session changed, a chain of four sessions, four sessions in the save point's history.
func TestAgentHandsOffThreeTimesInATwelveStepTask(t *testing.T) {
	e := handoffEnv(t)
	agent := &stepAgent{total: 12, obey: true, levels: map[string]int{}, saved: map[string]bool{},
		// Three steps fill a session past 90% (870,300 tokens); the last three are
		// smaller, so the fourth session ends the task below it.
		cost: func(n int) int {
			if n > 9 {
				return 150_000
			}
			return 290_000
		}}
	e.Model.Respond = agent.respond(e)
	e.MustCtx("agents", "start", "1", "--name", "long", "--auto-approve", "--permission-mode", "default", "--prompt", "Do the 12 steps of the task, one at a time.")
	e.waitFor("long", "the whole task", 150*time.Second, func(v handoffView) bool {
		return len(stepLines(e)) >= 12 && len(v.Chain) == 4 && v.State == "active" && v.Chain[3].Check == "ok"
	})
	// Settle: nothing more happens after the last step.
	time.Sleep(2 * time.Second)
	v := e.handoffView("long")

	lines := stepLines(e)
	if len(lines) != 12 {
		t.Fatalf("%d steps logged, want 12 (none repeated, none skipped):\n%s", len(lines), strings.Join(lines, "\n"))
	}
	sessionsOfSteps := map[string]bool{}
	for i, l := range lines {
		f := strings.Fields(l)
		if len(f) != 3 || f[1] != strconv.Itoa(i+1) {
			t.Fatalf("step %d of the log is %q: steps out of order, repeated or skipped\n%s", i+1, l, strings.Join(lines, "\n"))
		}
		sessionsOfSteps[f[2]] = true
	}
	if len(v.Chain) != 4 || len(sessionsOfSteps) != 4 {
		t.Fatalf("chain of %d sessions, steps done by %d sessions; want 4 and 4: %+v", len(v.Chain), len(sessionsOfSteps), v.Chain)
	}
	for i, l := range v.Chain {
		if !sessionsOfSteps[l.SessionID] {
			t.Errorf("link %d (%s) did no step", i+1, l.SessionID)
		}
		if i == 0 {
			continue
		}
		if l.Reason != "context" || l.Check != "ok" || l.NoteTokens == 0 || l.NoteTokens > 2000 {
			t.Errorf("link %d: %+v; want reason context, check ok, a note of 1–2,000 tokens", i+1, l)
		}
		prev := v.Chain[i-1]
		if prev.EndPercent < 90 || prev.EndTokens < 870_000 {
			t.Errorf("link %d handed off at %.1f%% (%d tokens), want ≥ 90%%", i, prev.EndPercent, prev.EndTokens)
		}
	}
	if v.Attention != "" {
		t.Errorf("attention: %s", v.Attention)
	}
	// Claude Code never compacted.
	if n := len(e.Model.Requests(KindSummary)); n > 0 {
		t.Errorf("%d compaction summaries requested", n)
	}
	// Each fresh session's first request: the note, the right next step, the files the
	// last session changed.
	firsts := map[string]Request{}
	for _, r := range e.Model.Requests(KindMain) {
		if _, ok := firsts[r.SessionID]; !ok {
			firsts[r.SessionID] = r
		}
	}
	for i := 1; i < 4; i++ {
		r := firsts[v.Chain[i].SessionID]
		text := r.LastUserText()
		next := 3*i + 1
		for _, want := range []string{"ctx: handoff note.", fmt.Sprintf("Next: step %d", next), fmt.Sprintf("step-%02d.txt", next-1), "Read first, in order"} {
			if !strings.Contains(text, want) {
				t.Errorf("session %d's first request lacks %q:\n%s", i+1, want, tail(text, 3000))
			}
		}
	}
	// The save point's history: four sessions.
	resume := e.ReadFile(ProjectPath("01-planning/_resume.md"))
	found := 0
	for _, l := range v.Chain {
		if strings.Contains(resume, l.SessionID) {
			found++
		}
	}
	if found != 4 {
		t.Errorf("the save point names %d of the chain's 4 sessions:\n%s", found, tail(resume, 3000))
	}
	// `ctx agents show` tells the chain.
	out := e.MustCtx("agents", "show", "long")
	if !strings.Contains(out, "chain      4 sessions") || strings.Count(out, "handed off at") != 3 {
		t.Errorf("show does not tell the chain:\n%s", out)
	}
	ids := make([]string, 0, 4)
	for _, l := range v.Chain {
		ids = append(ids, l.SessionID)
	}
	sort.Strings(ids)
	t.Logf("chain: %v\nthe second session's first request:\n%s\nshow:\n%s", ids, firsts[v.Chain[1].SessionID].LastUserText(), out)
}
