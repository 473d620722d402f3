package web

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ctxtools/ctx/agents"
	"github.com/ctxtools/ctx/internal/events"
	"github.com/ctxtools/ctx/internal/state"
	"github.com/ctxtools/ctx/resume"
)

// TestHookWakesTheServer: with polling practically off, an agent's hook (RecordHook,
// what `ctx system …` calls when CTX_AGENT_ID is set) reaches the page's event stream
// through the wake socket alone, in milliseconds.
func TestHookWakesTheServer(t *testing.T) {
	runtime := t.TempDir()
	t.Setenv("XDG_RUNTIME_DIR", runtime)
	wakeDir := filepath.Join(runtime, "ctx")
	if err := os.Mkdir(wakeDir, 0o700); err != nil {
		t.Fatal(err)
	}
	ts := startServerWith(t, func(o *Options) { o.Poll = time.Hour; o.WakeDir = wakeDir })
	s := ts.events("")
	defer s.resp.Body.Close()
	if first, _ := s.next(t); first.name != "snapshot" {
		t.Fatalf("first event %+v", first)
	}
	now := time.Now().UTC()
	rec := &agents.Record{ID: "a-wake01", Name: "woken", Project: "01-checkout-redesign", State: agents.Active, StateSince: now, CreatedAt: now}
	if err := ts.store.Create(rec); err != nil {
		t.Fatal(err)
	}
	var lat []time.Duration
	activities := []agents.Status{{Activity: "needs_input", Detail: "permission", Event: "PermissionRequest"},
		{Activity: "working", Event: "UserPromptSubmit"}, {Activity: "idle", Event: "Stop"}}
	for i := range 30 {
		start := time.Now()
		st := activities[i%len(activities)]
		st.SessionID, st.Summary, st.At = "s", "step", time.Now()
		if err := agents.RecordHook(ts.ws, rec.ID, st); err != nil {
			t.Fatal(err)
		}
		ev, _ := s.next(t)
		lat = append(lat, time.Since(start))
		if !strings.HasPrefix(ev.name, "agent.") {
			t.Fatalf("after a hook: %+v", ev)
		}
	}
	slices.Sort(lat)
	p95 := lat[len(lat)*95/100]
	t.Logf("hook → event: median %v, p95 %v over %d hooks (poll 1 h: the wake socket alone)", lat[len(lat)/2], p95, len(lat))
	if p95 > time.Second {
		t.Errorf("p95 %v: the wake did not arrive (the poll is an hour)", p95)
	}
}

// A save anywhere in the workspace (a person's ctx save, an agent's hook) reaches the
// page as project.saved.
func TestProjectSavedEvent(t *testing.T) {
	ts := startServer(t)
	s := ts.events("")
	defer s.resp.Body.Close()
	if first, _ := s.next(t); first.name != "snapshot" {
		t.Fatalf("first event %+v", first)
	}
	p, err := ts.ws.Resolve("1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := events.SaveProgress(state.Open(ts.ws, nil), p, events.SaveRequest{Change: resume.Change{Summary: "from the test"}, Trigger: state.TriggerSave}); err != nil {
		t.Fatal(err)
	}
	for {
		ev, _ := s.next(t)
		if ev.name != "project.saved" {
			continue
		}
		if !strings.Contains(ev.data, `"project":"01-checkout-redesign"`) || !strings.Contains(ev.data, `"trigger":"save"`) {
			t.Errorf("project.saved: %s", ev.data)
		}
		return
	}
}
