package agents

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ctxtools/ctx/internal/claude"
	"github.com/ctxtools/ctx/internal/state"
	"github.com/ctxtools/ctx/internal/testkit/fixture"
	"github.com/ctxtools/ctx/loader"
)

// The hooks' side of a handoff, on real files: no request below the threshold; at it,
// one request and the text asking the agent to save; handoffBound more tool calls end
// the turn and start the handoff; a Stop starts it at once; a session that is not the
// agent's current one, a paused agent and the compact policy change nothing.
func TestOnHookAsksThenHandsOff(t *testing.T) {
	var spawned []string
	spawn = func(_ *loader.Workspace, _ Store, id, session, reason string) error {
		spawned = append(spawned, id+" "+session+" "+reason)
		return nil
	}
	t.Cleanup(func() { spawn = spawnHandoff })
	s := newStore(t)
	st := state.Open(s.WS, os.Getenv)
	rec := &Record{ID: "a-hand01", Name: "h", Cwd: s.WS.Root, State: Active, Claude: Claude{SessionID: "s1"},
		Chain: []Link{{SessionID: "s1", Reason: ReasonStart}}}
	if err := s.Create(rec); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	hook := func(event string) HookReply {
		return OnHook(s.WS, st, rec.ID, HookEvent{Event: event, SessionID: "s1", Tool: "Bash", Cwd: s.WS.Root, Now: now})
	}
	if r := hook(claude.EventPostToolUse); r.Text != "" || s.readRequest(rec.ID) != nil {
		t.Fatalf("a request below the threshold: %+v", r)
	}
	if _, err := st.Session("s1").UpdateCycle(func(c *state.Cycle) error {
		c.AutoSaved, c.LastPercent, c.LastTokens = true, 90.4, 874_000
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	// Another session of the same agent id (a subagent, an old one) asks nothing.
	if r := OnHook(s.WS, st, rec.ID, HookEvent{Event: claude.EventPostToolUse, SessionID: "s0", Now: now}); r.Text != "" {
		t.Fatalf("another session was asked: %q", r.Text)
	}
	r := hook(claude.EventPostToolUse)
	if !strings.Contains(r.Text, "ctx save --summary") || s.readRequest(rec.ID) == nil {
		t.Fatalf("at the threshold: %+v, request %+v", r, s.readRequest(rec.ID))
	}
	for i := 1; i < handoffBound; i++ {
		if r := hook(claude.EventPostToolUse); r.Stop != "" || r.Text != "" {
			t.Fatalf("call %d after the request: %+v", i, r)
		}
	}
	r = hook(claude.EventPostToolUse)
	if !strings.Contains(r.Stop, "handing off") || len(spawned) != 1 || !strings.HasSuffix(spawned[0], " s1 bound") {
		t.Fatalf("at the bound: %+v, spawned %v", r, spawned)
	}
	// Launched: neither another call nor the Stop starts a second one.
	hook(claude.EventPostToolUse)
	hook(claude.EventStop)
	if len(spawned) != 1 {
		t.Fatalf("a second handoff started: %v", spawned)
	}
	// A request not launched yet goes at the Stop.
	req := s.readRequest(rec.ID)
	req.Launched = time.Time{}
	if err := s.writeRequest(rec.ID, req); err != nil {
		t.Fatal(err)
	}
	hook(claude.EventStop)
	if len(spawned) != 2 || !strings.HasSuffix(spawned[1], " s1 context") {
		t.Fatalf("at the Stop: %v", spawned)
	}
	// Paused, or with the compact policy: nothing.
	_ = os.Remove(s.requestPath(rec.ID))
	for _, change := range []func(*Record){
		func(r *Record) { r.State = Paused },
		func(r *Record) { r.State, r.Handoff = Active, HandoffCompact },
	} {
		if _, err := s.Update(rec.ID, func(r *Record) error { change(r); return nil }); err != nil {
			t.Fatal(err)
		}
		if r := hook(claude.EventPostToolUse); r.Text != "" || s.readRequest(rec.ID) != nil {
			t.Errorf("asked anyway: %+v", r)
		}
	}
}

// The checks of a handoff's fresh session: the note as its first prompt and a first
// tool call in the agent's folder make it ok; a first turn that touches nothing, or a
// note that never arrived, puts the agent in attention.
func TestHandoffCheck(t *testing.T) {
	s := newStore(t)
	st := state.Open(s.WS, os.Getenv)
	cases := []struct {
		name   string
		events []HookEvent
		want   string
	}{
		{"took", []HookEvent{
			{Event: claude.EventUserPromptSubmit, Prompt: "ctx: handoff note. This is a fresh session…"},
			{Event: claude.EventPostToolUse, Tool: "Write", File: filepath.Join(s.WS.Root, "02-projects/x.md")},
		}, CheckOK},
		{"idle", []HookEvent{
			{Event: claude.EventUserPromptSubmit, Prompt: "ctx: handoff note. …"},
			{Event: claude.EventStop},
		}, "failed: its first turn ended without touching the project"},
		{"no note", []HookEvent{
			{Event: claude.EventUserPromptSubmit, Prompt: "hello"},
			{Event: claude.EventPostToolUse, Tool: "Bash", Cwd: s.WS.Root},
		}, "failed: the handoff note never reached the fresh session's first prompt"},
		{"elsewhere", []HookEvent{
			{Event: claude.EventUserPromptSubmit, Prompt: "ctx: handoff note. …"},
			{Event: claude.EventPostToolUse, Tool: "Write", File: "/etc/elsewhere"},
			{Event: claude.EventPostToolUse, Tool: "Write", File: "/etc/elsewhere"},
			{Event: claude.EventPostToolUse, Tool: "Write", File: "/etc/elsewhere"},
		}, "failed: its first tool calls worked outside the agent's folder"},
	}
	for i, c := range cases {
		id := "a-chk00" + string(rune('a'+i))
		rec := &Record{ID: id, Name: "c" + id, Cwd: s.WS.Root, State: Active, Claude: Claude{SessionID: "s2"},
			Chain: []Link{{SessionID: "s1"}, {SessionID: "s2", Check: CheckPending}}}
		if err := s.Create(rec); err != nil {
			t.Fatal(err)
		}
		for _, ev := range c.events {
			ev.SessionID, ev.Now = "s2", time.Now()
			OnHook(s.WS, st, id, ev)
		}
		got, _ := s.Load(id)
		if l := got.Chain[1]; l.Check != c.want {
			t.Errorf("%s: check %q, want %q", c.name, l.Check, c.want)
		}
		if (c.want == CheckOK) != (got.Attention == "") {
			t.Errorf("%s: attention %q", c.name, got.Attention)
		}
	}
}

func TestPolicy(t *testing.T) {
	s := newStore(t)
	if p, err := Policy(s.WS, &Record{}); p != DefaultHandoff || err != nil {
		t.Errorf("default %q %v", p, err)
	}
	if p, _ := Policy(s.WS, &Record{Handoff: HandoffCompact}); p != HandoffCompact {
		t.Errorf("the agent's own %q", p)
	}
	cfg := filepath.Join(s.WS.Root, ".ctx", "config.yaml")
	_ = os.MkdirAll(filepath.Dir(cfg), 0o755)
	for body, want := range map[string]string{"agents:\n  handoff: compact\n": HandoffCompact, "agents:\n  handoff: sometimes\n": "error"} {
		if err := os.WriteFile(cfg, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		ws, err := loader.Discover(loader.DiscoverOptions{Cwd: s.WS.Root})
		if err != nil {
			t.Fatal(err)
		}
		p, err := Policy(ws, &Record{})
		if want == "error" {
			if err == nil || p != DefaultHandoff {
				t.Errorf("a bad agents.handoff: %q, %v", p, err)
			}
		} else if p != want || err != nil {
			t.Errorf("agents.handoff %q: %q, %v", want, p, err)
		}
	}
}

// The fresh session's first save must not go back from the tasks done at the handoff.
func TestHandoffCheckOfTheFirstSave(t *testing.T) {
	root := t.TempDir()
	if err := fixture.Workspace(root, 1); err != nil {
		t.Fatal(err)
	}
	ws, err := loader.Discover(loader.DiscoverOptions{Cwd: root})
	if err != nil {
		t.Fatal(err)
	}
	p, err := ws.Resolve("1")
	if err != nil {
		t.Fatal(err)
	}
	s, st := NewStore(ws), state.Open(ws, os.Getenv)
	done := p.Progress.TasksCompleted
	for i, back := range []bool{false, true} {
		id := fmt.Sprintf("a-save0%d", i)
		sid := fmt.Sprintf("s-save%d", i)
		rec := &Record{ID: id, Name: id, Cwd: root, ProjectPath: p.Path, State: Active, Claude: Claude{SessionID: sid},
			Chain: []Link{{SessionID: "s0"}, {SessionID: sid, Check: CheckPending, TasksDone: done}}}
		if back {
			rec.Chain[1].TasksDone = done + 3 // the handoff saw three more done than there are now
		}
		if err := s.Create(rec); err != nil {
			t.Fatal(err)
		}
		hook := func(ev HookEvent) { ev.SessionID, ev.Now = sid, time.Now(); OnHook(ws, st, id, ev) }
		hook(HookEvent{Event: claude.EventUserPromptSubmit, Prompt: "ctx: handoff note. …"})
		hook(HookEvent{Event: claude.EventPostToolUse, Tool: "Bash", Cwd: root})
		if got, _ := s.Load(id); got.Chain[1].Check != CheckOK || got.Chain[1].SaveChecked {
			t.Fatalf("before its save: %+v", got.Chain[1])
		}
		if err := st.Session(sid).RecordSave(time.Now(), "did a step", "the next", nil, nil); err != nil {
			t.Fatal(err)
		}
		hook(HookEvent{Event: claude.EventPostToolUse, Tool: "Bash", Cwd: root})
		got, _ := s.Load(id)
		l := got.Chain[1]
		if !l.SaveChecked || (back != strings.HasPrefix(l.Check, "failed: its first save went back")) || back == (got.Attention == "") {
			t.Errorf("back=%v: %+v, attention %q", back, l, got.Attention)
		}
	}
}

// Two commands that find the same dead handoff at once: one claims it, the other leaves
// it; neither panics, and the op is settled once.
func TestRecoverHandoffIsClaimedOnce(t *testing.T) {
	s := newStore(t)
	a := &Agents{Store: s, State: state.Open(s.WS, os.Getenv), Getenv: os.Getenv, Now: time.Now}
	rec := &Record{ID: "a-rec001", Name: "r", Cwd: s.WS.Root, State: HandingOff, Claude: Claude{SessionID: "s-new"},
		Tmux: TmuxInfo{Kind: "tmux", Session: "ctx-a-rec001"},
		Op:   &Op{Kind: "handoff", Step: "confirm", PID: 1 << 30, Session: "s-new"}}
	if err := s.Create(rec); err != nil {
		t.Fatal(err)
	}
	panes := map[string]Pane{"ctx-a-rec001": {Session: "ctx-a-rec001"}}
	done := make(chan error, 2)
	for i := 0; i < 2; i++ {
		go func() {
			r, _ := s.Load(rec.ID)
			_, err := a.recoverHandoff(r, panes)
			done <- err
		}()
	}
	for i := 0; i < 2; i++ {
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
	if got, _ := s.Load(rec.ID); got.Op != nil {
		t.Errorf("the op is still there: %+v", got.Op)
	}
	// A record whose op another process took over is left alone.
	if _, err := s.Update(rec.ID, func(r *Record) error {
		r.Op = &Op{Kind: "handoff", Step: "note", PID: os.Getpid(), Session: "s-other"}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	stale := *rec
	stale.Op = &Op{Kind: "handoff", Step: "note", PID: 1 << 30}
	if out, err := a.recoverHandoff(&stale, panes); err != nil || out.Op == nil || out.Op.Session != "s-other" {
		t.Errorf("a handoff another process runs was touched: %+v, %v", out, err)
	}
}
