//go:build e2e

package e2e

import (
	"strings"
	"testing"
)

// `ctx pause` from the agent's Bash tool outlives the process: `claude --resume` of the
// same session (and every `claude -p` loop) stays paused until `ctx resume`, a warning
// that fell due while paused is delivered after it, and then ctx is quiet again.
func TestPauseSurvivesResumeUntilCtxResume(t *testing.T) {
	e := New(t, Options{})
	e.Model.Script(Call(5000, Bash("ctx load 1 >/dev/null"), Bash("ctx pause")), Say("paused", 6000))
	first := e.MustRun(Run{Prompts: []string{"pause ctx"}})
	id := first.SessionID
	if id == "" {
		t.Fatal("no session id")
	}

	// A new process continues the session: still paused. Its reply crosses 75%.
	e.Model.Script(Say("working quietly", 730_000))
	second := e.MustRun(Run{Prompts: []string{"keep going"}, Resume: id})
	out := second.HookOutputs("UserPromptSubmit")
	if len(out) != 1 || !strings.HasPrefix(out[0], "ctx:paused") {
		t.Fatalf("after --resume the session is not paused: %q", out)
	}

	// The warning falls due while paused: only the reminder is shown. Then the agent
	// runs ctx resume.
	e.Model.Script(Call(731_000, Bash("ctx resume")), Say("resumed", 731_500))
	third := e.MustRun(Run{Prompts: []string{"resume ctx"}, Resume: id})
	out = third.HookOutputs("UserPromptSubmit")
	if len(out) != 1 || strings.TrimSpace(out[0]) != "ctx:paused" {
		t.Fatalf("while paused ctx said more than the reminder: %q", out)
	}

	// After ctx resume the warning that waited is given once: right after the resume
	// (with the tool's result) or on the next prompt, and never again.
	e.Model.Script(Say("ok", 732_000))
	fourth := e.MustRun(Run{Prompts: []string{"next"}, Resume: id})
	e.Model.Script(Say("ok", 733_000))
	fifth := e.MustRun(Run{Prompts: []string{"again"}, Resume: id})
	var given []string
	for _, o := range append(append(third.HookOutputs("PostToolUse"), fourth.HookOutputs("UserPromptSubmit")...), fifth.HookOutputs("UserPromptSubmit")...) {
		if o != "" {
			given = append(given, o)
		}
	}
	if len(given) != 1 || strings.Contains(given[0], "ctx:paused") {
		t.Fatalf("after ctx resume the warning that waited was given %d times: %q", len(given), given)
	}
}

// While paused the auto-save still happens, quietly.
func TestPausedSessionStillAutoSaves(t *testing.T) {
	e := New(t, Options{})
	e.Model.Script(Call(5000, Bash("ctx load 1 >/dev/null"), Bash("ctx pause")), Say("paused", 880_000), Say("quiet", 881_000))
	res := e.MustRun(Run{Prompts: []string{"pause", "work"}})
	out := res.HookOutputs("UserPromptSubmit")
	if len(out) != 2 || !strings.HasPrefix(out[1], "ctx:paused") || strings.Contains(out[1], "\n"+"ctx:") {
		t.Errorf("paused prompt output: %q", out)
	}
	if count(e.Triggers(), "auto") != 1 {
		t.Errorf("want the auto-save while paused, got %v", e.Triggers())
	}
}

// Pausing one session leaves another in the same workspace unpaused.
func TestPauseIsPerSession(t *testing.T) {
	e := New(t, Options{})
	e.Model.Script(Call(5000, Bash("ctx pause")), Say("paused", 6000))
	e.MustRun(Run{Prompts: []string{"pause"}})
	e.Model.Script(Say("hi", 6000), Say("hi", 6000))
	other := e.MustRun(Run{Prompts: []string{"a", "b"}})
	for _, o := range other.HookOutputs("UserPromptSubmit") {
		if strings.HasPrefix(o, "ctx:paused") {
			t.Fatalf("another session is paused too: %q", o)
		}
	}
}
