//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ctxtools/ctx/agents"
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
		SessionID  string     `json:"session_id"`
		Reason     string     `json:"reason"`
		EndPercent float64    `json:"end_percent"`
		EndTokens  int        `json:"end_tokens"`
		NoteTokens int        `json:"note_tokens"`
		Check      string     `json:"check"`
		Asked      *time.Time `json:"asked"`
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

func newStepAgent(total int, obey bool, cost func(int) int) *stepAgent {
	return &stepAgent{total: total, obey: obey, cost: cost, levels: map[string]int{}, saved: map[string]bool{}}
}

// runTask starts the agent on the task and waits until it is done by a chain of
// sessions, the last one checked; it fails unless every step was done once, in order.
// It returns the agent and how many steps each session did.
func (e *Env) runTask(name string, agent *stepAgent, sessions int) (handoffView, map[string]int) {
	e.T.Helper()
	e.Model.Respond = agent.respond(e)
	e.MustCtx("agents", "start", "1", "--name", name, "--auto-approve", "--permission-mode", "default",
		"--prompt", fmt.Sprintf("Do the %d steps of the task, one at a time.", agent.total))
	e.waitFor(name, "the whole task", 150*time.Second, func(v handoffView) bool {
		return len(stepLines(e)) >= agent.total && len(v.Chain) == sessions && v.State == "active" && v.Chain[sessions-1].Check == "ok"
	})
	time.Sleep(2 * time.Second) // nothing more happens after the last step
	v := e.handoffView(name)
	lines := stepLines(e)
	if len(lines) != agent.total || len(v.Chain) != sessions {
		e.T.Fatalf("%d steps logged, chain of %d; want %d steps (none repeated, none skipped) and %d sessions:\n%s",
			len(lines), len(v.Chain), agent.total, sessions, strings.Join(lines, "\n"))
	}
	bySession := map[string]int{}
	for i, l := range lines {
		f := strings.Fields(l)
		if len(f) != 3 || f[1] != strconv.Itoa(i+1) {
			e.T.Fatalf("step %d of the log is %q: steps out of order, repeated or skipped\n%s", i+1, l, strings.Join(lines, "\n"))
		}
		bySession[f[2]]++
	}
	return v, bySession
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
	// Three steps fill a session past 90% (870,300 tokens); the last three are smaller,
	// so the fourth session ends the task below it.
	v, bySession := e.runTask("long", newStepAgent(12, true, func(n int) int {
		if n > 9 {
			return 150_000
		}
		return 290_000
	}), 4)
	if len(bySession) != 4 {
		t.Fatalf("steps done by %d sessions, want 4: %+v", len(bySession), v.Chain)
	}
	for i, l := range v.Chain {
		if bySession[l.SessionID] == 0 {
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
	firsts := firstRequests(e.Model)
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
	for i, l := range v.Chain {
		t.Logf("session %d: %s, note %d tokens, handed off at %.1f%%", i+1, l.Reason, l.NoteTokens, l.EndPercent)
	}
}

// The agent ignores the request and goes on working: after the bound of tool calls ctx
// ends its turn (Claude Code makes no further request) and hands off with its own
// note, which names the files done, so the fresh session goes on at the right step.
func TestAgentIgnoringTheRequestIsHandedOffAtTheBound(t *testing.T) {
	e := handoffEnv(t)
	v, bySession := e.runTask("deaf", newStepAgent(6, false, func(n int) int {
		if n <= 3 {
			return 290_000
		}
		return 10_000
	}), 2)
	// The request came with step 3's first call; 5 calls later (steps 3 to 5) the turn
	// was ended.
	if bySession[v.Chain[0].SessionID] != 5 || bySession[v.Chain[1].SessionID] != 1 || v.Chain[1].Reason != "bound" {
		t.Errorf("steps per session %v, chain %+v; want 5 and 1, the second started at the bound", bySession, v.Chain)
	}
	for _, r := range e.Model.Requests(KindMain) {
		if r.SessionID == v.Chain[0].SessionID && strings.Contains(r.LastUserText(), "step-05.txt") {
			t.Errorf("the first session made a request after the bound ended its turn")
		}
	}
	var first Request
	for _, r := range e.Model.Requests(KindMain) {
		if r.SessionID == v.Chain[1].SessionID {
			first = r
			break
		}
	}
	note := first.LastUserText()
	if !strings.Contains(note, "ctx: handoff note.") || !strings.Contains(note, "step-05.txt") || strings.Contains(note, "The last session's own note") {
		t.Errorf("the note without the agent's help:\n%s", tail(note, 2500))
	}
}

// A kill at each step of a handoff: the next look finishes it as the fresh session, or,
// when the old session is busy again (a person typed meanwhile) before it was ended,
// rolls it back to the old one: never neither, and the agent answers its next prompt.
func TestAgentHandoffKilledAtEachStep(t *testing.T) {
	e := handoffEnv(t)
	// A crash "at" a step is a kill after the step is recorded, before it runs.
	for _, step := range []string{"note", "note-busy", "end", "launch", "confirm"} {
		t.Run(step, func(t *testing.T) {
			name := "crash-" + step
			e.Model.Script(Say("ready", 20_000))
			e.MustCtx("agents", "start", "1", "--name", name)
			v := e.waitTurn(name, time.Time{})
			old := v.Claude.SessionID
			if step != "note-busy" {
				e.Model.Script(Say("fresh-"+step, 15_000))
			}
			e.Vars["CTX_TEST_CRASH_AT"] = "handoff:" + strings.TrimSuffix(step, "-busy")
			if _, _, code := e.Ctx("agents", "handoff", name); code == 0 {
				t.Fatalf("the injected crash did not happen")
			}
			delete(e.Vars, "CTX_TEST_CRASH_AT")
			if step == "note-busy" {
				// The person types into the old session before anything looks: its turn
				// is busy when the handoff is recovered.
				e.Model.Script(Reply{Text: "slow-answer", Usage: At(21_000), Delay: 4 * time.Second})
				e.tmuxAgent(v.Tmux.Session, "a slow question")
				deadline := time.Now().Add(10 * time.Second)
				for agentStatus(e, v.ID).Activity != "working" {
					if time.Now().After(deadline) {
						t.Fatalf("the typed prompt never reached the session")
					}
					time.Sleep(100 * time.Millisecond)
				}
			}
			h := e.waitFor(name, "recovery", 30*time.Second, func(h handoffView) bool { return h.State == "active" && h.Op == nil })
			if step == "note-busy" { // rolled back: the old session goes on with its turn
				if h.Claude.SessionID != old || len(h.Chain) != 1 {
					t.Fatalf("after a crash before the old session ended, busy: session %s, chain %+v; want the old one", h.Claude.SessionID, h.Chain)
				}
				e.waitTurn(name, time.Now().Add(-time.Second))
				if !strings.Contains(e.MustCtx("agents", "logs", name), "slow-answer") {
					t.Errorf("the old session's turn did not finish")
				}
			} else { // forward: the fresh session runs, briefed
				if h.Claude.SessionID == old || len(h.Chain) != 2 {
					t.Fatalf("after a crash at %s: session %s, chain %+v; want a fresh one", step, h.Claude.SessionID, h.Chain)
				}
				e.waitTurn(name, time.Time{})
				found := false
				for _, r := range e.Model.Requests(KindMain) {
					found = found || r.SessionID == h.Claude.SessionID && strings.Contains(r.LastUserText(), "ctx: handoff note.")
				}
				if !found {
					t.Errorf("the fresh session's first request is not the handoff note")
				}
			}
			if n := strings.Count(tmuxPanes(e), v.Tmux.Session+" "); n != 1 {
				t.Errorf("%d panes of the agent's session, want 1", n)
			}
			e.MustCtx("agents", "rm", name, "--force")
		})
	}
}

// tmuxAgent types a line into an agent's pane as a person attached would.
func (e *Env) tmuxAgent(session, text string) {
	e.T.Helper()
	for _, args := range [][]string{{"send-keys", "-t", "=" + session + ":", "-l", text}, {"send-keys", "-t", "=" + session + ":", "Enter"}} {
		cmd := exec.Command("tmux", append([]string{"-L", "ctx"}, args...)...)
		cmd.Env = e.environ(true)
		if out, err := cmd.CombinedOutput(); err != nil {
			e.T.Fatalf("tmux %v: %v %s", args, err, out)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// tmuxPanes lists ctx's tmux panes: "session pid" per line.
func tmuxPanes(e *Env) string {
	cmd := exec.Command("tmux", "-L", "ctx", "list-panes", "-a", "-F", "#{session_name} #{pane_pid}")
	cmd.Env = e.environ(true)
	out, _ := cmd.Output()
	return string(out)
}

// agentStatus reads the agent's status.json as the hooks wrote it.
func agentStatus(e *Env, id string) agents.Status {
	var st agents.Status
	data, _ := os.ReadFile(filepath.Join(e.Workspace, ".ctx/state/agents", id, "status.json"))
	_ = json.Unmarshal(data, &st)
	return st
}

// No handoff while a permission prompt waits: refused (exit 3, the reason said), the
// agent untouched. A paused agent does not hand off; an agent started with
// --handoff compact crosses 90% without a request.
func TestAgentHandoffRefusals(t *testing.T) {
	e := handoffEnv(t)
	e.Model.Script(Call(20_000, Bash("touch asked.txt")))
	e.MustCtx("agents", "start", "1", "--name", "asker", "--permission-mode", "default")
	deadline := time.Now().Add(30 * time.Second)
	for e.show("asker").Activity.Activity != "needs_input" {
		if time.Now().After(deadline) {
			t.Fatalf("no permission prompt: %+v", e.show("asker"))
		}
		time.Sleep(200 * time.Millisecond)
	}
	before := e.handoffView("asker")
	_, errs, code := e.Ctx("agents", "handoff", "asker", "--wait", "1s")
	if code != 3 || !strings.Contains(errs, "permission") {
		t.Fatalf("handoff at a permission prompt: exit %d, %q; want 3 naming the prompt", code, errs)
	}
	if after := e.handoffView("asker"); after.Claude.SessionID != before.Claude.SessionID || after.State != "active" || after.Op != nil || len(after.Chain) != 1 {
		t.Errorf("a refused handoff changed the agent: %+v", after)
	}
	e.MustCtx("agents", "rm", "asker", "--force")

	e.Model.Script(Call(890_000, Bash("echo heavy")), Say("compact-agent-done", 891_000))
	e.MustCtx("agents", "start", "1", "--name", "compactor", "--handoff", "compact", "--auto-approve", "--permission-mode", "default")
	e.waitTurn("compactor", time.Time{})
	time.Sleep(time.Second)
	if v := e.handoffView("compactor"); len(v.Chain) != 1 {
		t.Errorf("an agent with --handoff compact handed off: %+v", v.Chain)
	}
	for _, r := range e.Model.Requests(KindMain) {
		if strings.Contains(r.Text(), handoffAsk) {
			t.Errorf("an agent with --handoff compact was asked to hand off")
		}
	}
	e.MustCtx("agents", "pause", "compactor")
	if _, errs, code := e.Ctx("agents", "handoff", "compactor"); code != 2 || !strings.Contains(errs, "nothing to hand off") {
		t.Errorf("handoff of a paused agent: exit %d, %q; want 2", code, errs)
	}
	if _, errs, code := e.Ctx("agents", "handoff", "compactor", "--policy", "sometimes"); code != 2 || !strings.Contains(errs, "fresh or compact") {
		t.Errorf("a bad policy: exit %d, %q; want 2", code, errs)
	}
	var set struct {
		Handoff string `json:"handoff"`
	}
	if out := e.MustCtx("agents", "handoff", "compactor", "--policy", "fresh", "--json"); json.Unmarshal([]byte(out), &set) != nil || set.Handoff != "fresh" {
		t.Errorf("--policy fresh did not set the agent's policy:\n%s", out)
	}
}
