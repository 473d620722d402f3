package web

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ctxtools/ctx/agents"
)

// The notify command runs when an agent needs input, with what the event says in its
// environment only: a summary holding shell code is text, never run.
func TestNotifyCommand(t *testing.T) {
	dir := t.TempDir()
	log, pwned := filepath.Join(dir, "notified"), filepath.Join(dir, "pwned")
	ts := startServerWith(t, func(o *Options) {
		o.NotifyCommand = `printf '%s|%s|%s|%s\n' "$CTX_EVENT" "$CTX_AGENT_NAME" "$CTX_NOTIFY_TITLE" "$CTX_NOTIFY_TEXT" >> ` + log
	})
	// A live agent: its tmux session on the test's private server.
	if _, err := exec.LookPath("tmux"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("tmux not installed (apt-get install tmux); CI=true: a skipped real component is a failure")
		}
		t.Skip("tmux not installed (apt-get install tmux)")
	}
	socket := fmt.Sprintf("ctx-web-test-%d", os.Getpid())
	if out, err := exec.Command("tmux", "-L", socket, "new-session", "-d", "-s", "ctx-a-note01", "sleep", "60").CombinedOutput(); err != nil {
		t.Fatalf("tmux: %v %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("tmux", "-L", socket, "kill-session", "-t", "ctx-a-note01").Run() })
	now := time.Now().UTC()
	rec := &agents.Record{ID: "a-note01", Name: "noisy", Project: "01-checkout-redesign", State: agents.Active, StateSince: now, CreatedAt: now,
		Tmux: agents.TmuxInfo{Kind: "tmux", Socket: socket, Session: "ctx-a-note01"}}
	if err := ts.store.Create(rec); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { _, ok := ts.hub.rowByID(rec.ID); return ok })
	evil := "approve $(touch " + pwned + ") `touch " + pwned + "`"
	if err := ts.store.WriteStatus(rec.ID, agents.Status{Activity: "needs_input", Detail: "permission", Summary: evil, At: now}); err != nil {
		t.Fatal(err)
	}
	var got string
	waitFor(t, func() bool {
		b, _ := os.ReadFile(log)
		got = string(b)
		return strings.Contains(got, "\n")
	})
	if want := "agent.needs_input|noisy|noisy needs input|" + evil + "\n"; got != want {
		t.Errorf("notified %q, want %q", got, want)
	}
	if _, err := os.Stat(pwned); !os.IsNotExist(err) {
		t.Errorf("the agent's text ran as code: %v", err)
	}

	// A handoff that did not take: the person is told the agent needs attention.
	if err := ts.store.WriteStatus(rec.ID, agents.Status{Activity: "idle", At: now}); err != nil {
		t.Fatal(err)
	}
	if _, err := ts.store.Update(rec.ID, func(r *agents.Record) error { r.Attention = "the handoff did not take"; return nil }); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool {
		b, _ := os.ReadFile(log)
		got = string(b)
		return strings.Count(got, "\n") >= 2
	})
	if want := "agent.attention|noisy|noisy needs attention|the handoff did not take\n"; !strings.HasSuffix(got, want) {
		t.Errorf("notified %q, want it to end with %q", got, want)
	}

	// The agent's process ends (its pane stays, dead, as ctx's tmux keeps it): the person
	// is told it exited. Another agent whose tmux session vanished is lost, which ctx
	// reports on the page but does not notify.
	lost := &agents.Record{ID: "a-lost01", Name: "gone", Project: "01-checkout-redesign", State: agents.Active, StateSince: now, CreatedAt: now,
		Tmux: agents.TmuxInfo{Kind: "tmux", Socket: socket, Session: "ctx-a-lost01"}}
	if err := ts.store.Create(lost); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("tmux", "-L", socket, "set-option", "-t", "ctx-a-note01", "remain-on-exit", "on", ";",
		"respawn-pane", "-k", "-t", "ctx-a-note01", "true").CombinedOutput(); err != nil {
		t.Fatalf("tmux: %v %s", err, out)
	}
	waitFor(t, func() bool {
		r, _ := ts.hub.rowByID(rec.ID)
		l, _ := ts.hub.rowByID(lost.ID)
		return r.State == string(agents.Exited) && l.State == string(agents.Lost)
	})
	waitFor(t, func() bool {
		b, _ := os.ReadFile(log)
		got = string(b)
		return strings.Count(got, "\n") >= 3
	})
	time.Sleep(300 * time.Millisecond) // a notification of the lost agent would be here by now
	b, _ := os.ReadFile(log)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[2], "agent.exited|noisy|") {
		t.Errorf("notified %q, want the needs_input and attention lines, then agent.exited of noisy and nothing of the lost agent", lines)
	}
}
