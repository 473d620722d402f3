package web

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ctxtools/ctx/agents"
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
	events := []string{"PermissionRequest", "UserPromptSubmit", "Stop"}
	for i := range 30 {
		start := time.Now()
		if err := agents.RecordHook(ts.ws, rec.ID, events[i%len(events)], "s", "", "", "step", time.Now()); err != nil {
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
