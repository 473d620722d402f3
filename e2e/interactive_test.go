//go:build e2e

package e2e

import (
	"strings"
	"testing"
	"time"
)

// An interactive session in tmux: the prompt box comes up, a typed prompt gets the
// stand-in's reply, /exit ends it, and every ctx hook on the way ran and exited 0.
func TestInteractiveSessionRunsTheHooks(t *testing.T) {
	e := New(t, Options{})
	e.Model.Script(Call(5000, Bash("ctx load 1 >/dev/null")), Say("interactive-reply-ok", 6000))
	s := e.Tmux()
	s.WaitFor("❯", 20*time.Second)
	s.Type("load project 1")
	s.WaitFor("interactive-reply-ok", 30*time.Second)
	s.Type("/exit")
	s.WaitExit(20 * time.Second)
	seen := map[string]bool{}
	for _, h := range s.Hooks() {
		if !strings.Contains(h.Command, "ctx system") {
			continue
		}
		seen[h.Event] = true
		if h.Status != 0 {
			t.Errorf("%s exited %d", h.Event, h.Status)
		}
	}
	for _, ev := range []string{"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop", "SessionEnd"} {
		if !seen[ev] {
			t.Errorf("%s did not run in the interactive session (ran: %v)", ev, seen)
		}
	}
}

// /compact typed by the person: PreCompact fires with trigger manual, ctx saves before
// the compaction, and the next request carries the briefing.
func TestInteractiveManualCompactSavesFirst(t *testing.T) {
	e := New(t, Options{})
	e.Model.Script(Call(5000, Bash("ctx load 1 >/dev/null")), Say("loaded-ok", 40_000), Say("after-compact-ok", 0))
	s := e.Tmux()
	s.WaitFor("❯", 20*time.Second)
	s.Type("load project 1")
	s.WaitFor("loaded-ok", 30*time.Second)
	s.Type("/compact")
	deadline := time.Now().Add(30 * time.Second)
	for len(e.Model.Requests(KindSummary)) == 0 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	if len(e.Model.Requests(KindSummary)) == 0 {
		t.Fatalf("/compact made no summary request:\n%s", s.Screen())
	}
	// Wait for the compaction's own SessionStart to be done, then one more prompt.
	s.WaitFor("❯", 20*time.Second)
	time.Sleep(500 * time.Millisecond)
	s.Type("carry on")
	s.WaitFor("after-compact-ok", 30*time.Second)
	if got := e.Triggers(); index(got, "pre-compact") < 0 {
		t.Errorf("no save before the manual compaction: %v", got)
	}
	first, ok := e.Model.FirstAfterCompaction()
	if !ok || !strings.Contains(first.Text(), "01-checkout-redesign") {
		t.Errorf("the first request after /compact lacks the briefing")
	}
	s.Type("/exit")
	s.WaitExit(20 * time.Second)
}

// /clear typed by the person after loading a project: the fresh context is not empty
// but starts from the handoff note of the session cleared. ctx carries the binding to
// the new session (same claude process) and its SessionStart gives the note, so the
// next request names the session it continues, the project and its next action: a
// handoff instead of waiting for a compaction.
func TestInteractiveClearBriefsTheFreshContext(t *testing.T) {
	e := New(t, Options{})
	e.Model.Script(Call(5000, Bash("ctx load 1 >/dev/null")), Say("loaded-ok", 6000), Say("after-clear-ok", 0))
	s := e.Tmux()
	s.WaitFor("❯", 20*time.Second)
	s.Type("load project 1")
	s.WaitFor("loaded-ok", 30*time.Second)
	before := len(e.Model.Requests(KindMain))
	s.Type("/clear")
	time.Sleep(time.Second)
	s.WaitFor("❯", 20*time.Second)
	s.Type("carry on")
	s.WaitFor("after-clear-ok", 30*time.Second)
	reqs := e.Model.Requests(KindMain)
	if len(reqs) <= before {
		t.Fatalf("no request after /clear:\n%s", s.Screen())
	}
	after := reqs[len(reqs)-1]
	if after.SessionID == reqs[0].SessionID {
		t.Errorf("/clear kept the session id %s", after.SessionID)
	}
	text := after.Text()
	if !strings.Contains(text, "ctx: handoff note.") || !strings.Contains(text, reqs[0].SessionID) ||
		!strings.Contains(text, "you are working on project 01-checkout-redesign") || !strings.Contains(text, "Next action") {
		t.Errorf("the first request after /clear is not briefed:\n%.3000s", text)
	}
	s.Type("/exit")
	s.WaitExit(20 * time.Second)
}
