//go:build e2e

package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// --fork-session gives the session a new id with SessionStart source fork and no
// parent id in the payload; the new transcript begins with the parent's lines, uuids
// and all. ctx finds the parent from them and carries the project binding, so the
// fork's saves go to the parent's project and it is briefed on it.
func TestForkCarriesTheBinding(t *testing.T) {
	e := New(t, Options{})
	e.Model.Script(Call(5000, Bash("ctx load 1 >/dev/null")), Say("loaded", 6000))
	first := e.MustRun(Run{Prompts: []string{"load project 1"}})
	e.Model.Script(Say("forked", 7000))
	fork := e.MustRun(Run{Prompts: []string{"go on in a fork"}, Resume: first.SessionID, Args: []string{"--fork-session"}})
	if fork.SessionID == "" || fork.SessionID == first.SessionID {
		t.Fatalf("the fork kept the id %q (first %q)", fork.SessionID, first.SessionID)
	}
	b, err := os.ReadFile(filepath.Join(e.Workspace, ".ctx", "state", "sessions", fork.SessionID, "binding.json"))
	if err != nil || !strings.Contains(string(b), "01-checkout-redesign") {
		for _, id := range []string{first.SessionID, fork.SessionID} {
			h, _ := os.ReadFile(e.Transcript(id, ""))
			t.Logf("%s:\n%.9000s", id, h)
		}
		ls, _ := os.ReadDir(filepath.Join(e.Workspace, ".ctx", "state", "sessions"))
		for _, l := range ls {
			t.Logf("binding %s", l.Name())
		}
		t.Fatalf("the fork is not bound to the parent's project: %v %s", err, b)
	}
	// At the fork's own SessionStart its transcript holds none of the parent's lines
	// yet (2.1.330 copies them with the first reply): the binding is carried at its
	// first Stop, and the fork continued later is briefed on its project.
	e.Model.Script(Say("continued", 8000))
	again := e.MustRun(Run{Prompts: []string{"continue"}, Resume: fork.SessionID})
	if out := strings.Join(again.HookOutputs("SessionStart"), "\n"); !strings.Contains(out, "01-checkout-redesign") {
		t.Errorf("the continued fork was not briefed on its project: %q", out)
	}
}

// A fresh session inside a workspace gets one line: the project last active and the
// command that resumes it. It reaches the model.
func TestStartupLineNamesTheLastProject(t *testing.T) {
	e := New(t, Options{})
	e.Model.Script(Say("hello", 5000))
	res := e.MustRun(Run{Prompts: []string{"hi"}})
	out := strings.Join(res.HookOutputs("SessionStart"), "\n")
	if !strings.Contains(out, "ctx: last active project here:") || !strings.Contains(out, "ctx load ") {
		t.Fatalf("no startup line: %q", out)
	}
	reqs := e.Model.Requests(KindMain)
	if len(reqs) == 0 || !strings.Contains(reqs[0].Text(), "last active project here") {
		t.Errorf("the startup line did not reach the model")
	}
}

// A real compaction fires PreCompact, writes its compact_boundary, then PostCompact and
// SessionStart(compact), all with one prompt_id: ctx counts it once, and remembers the
// boundary that identifies it.
func TestCompactionSignalsCountOnce(t *testing.T) {
	e := New(t, Options{})
	e.Model.Script(Call(5000, Bash("ctx load 1 >/dev/null")), Say("big", 970_000), Say("after", 20_000), Say("later", 21_000))
	res := e.MustRun(Run{Prompts: []string{"load", "go on", "more"}})
	if len(e.Model.Requests(KindSummary)) != 1 {
		t.Fatalf("want one compaction, got %d summary requests", len(e.Model.Requests(KindSummary)))
	}
	seen := map[string]bool{}
	for _, h := range res.Hooks {
		if strings.Contains(h.Command, "ctx system") {
			seen[h.Event] = true
		}
	}
	for _, ev := range []string{"PreCompact", "PostCompact", "SessionStart"} {
		if !seen[ev] {
			t.Errorf("%s did not run (ran %v)", ev, seen)
		}
	}
	if n := compactionCount(t, e); n != 2 { // the demo's save point says 1
		t.Errorf("compaction_count = %d after one compaction, want 2", n)
	}
	c, err := os.ReadFile(filepath.Join(e.Workspace, ".ctx", "state", "sessions", res.SessionID, "cycle.json"))
	if err != nil || !strings.Contains(string(c), `"cycle":1,`) || !strings.Contains(string(c), `"boundary":"`) {
		t.Errorf("cycle state: %v %s", err, c)
	}
}

// The interactive client runs the status line `ctx init` set: Claude Code 2.1.330
// passes context_window.context_window_size (1,000,000 on its default model), ctx
// records it for the session, and `ctx usage` then takes the window from it.
func TestStatusLineRecordsTheWindow(t *testing.T) {
	e := New(t, Options{})
	s := e.Tmux()
	s.WaitFor("ctx · ", 20*time.Second)
	pattern := filepath.Join(e.Workspace, ".ctx", "state", "sessions", "*", "window.json")
	var files []string
	deadline := time.Now().Add(10 * time.Second)
	for len(files) == 0 && time.Now().Before(deadline) {
		files, _ = filepath.Glob(pattern)
		time.Sleep(100 * time.Millisecond)
	}
	if len(files) != 1 {
		t.Fatalf("no window recorded as %s:\n%s", pattern, s.Screen())
	}
	b, _ := os.ReadFile(files[0])
	if !strings.Contains(string(b), `"window":1000000`) {
		t.Fatalf("recorded %s", b)
	}
	id := filepath.Base(filepath.Dir(files[0]))
	transcript := filepath.Join(e.Root, "t.jsonl")
	line := `{"type":"assistant","message":{"model":"claude-sonnet-4-5","usage":{"input_tokens":150000}},"uuid":"a1"}` + "\n"
	if err := os.WriteFile(transcript, []byte(line), 0o644); err != nil {
		t.Fatal(err)
	}
	out := e.MustCtx("usage", "--session-id", id, "--transcript", transcript, "--json")
	if !strings.Contains(out, `"window": 1000000`) && !strings.Contains(out, `"window":1000000`) || !strings.Contains(out, "statusline") {
		t.Errorf("ctx usage does not use the recorded window:\n%s", out)
	}
	s.Type("/exit")
	s.WaitExit(20 * time.Second)
}
