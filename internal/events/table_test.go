package events

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the event table in docs/hooks.md from Table")

// hooksDoc is the page whose table Table generates, between these markers.
const (
	hooksDoc   = "../../docs/hooks.md"
	tableStart = "<!-- events.Table: go test ./internal/events -run TestHooksDocTable -update -->"
	tableEnd   = "<!-- end of events.Table -->"
)

// docTable renders Table as docs/hooks.md shows it.
func docTable() string {
	var b strings.Builder
	b.WriteString("| event | command | what ctx does | Claude Code's timeout | once per event |\n|---|---|---|---|---|\n")
	for _, ev := range Table {
		name := ev.Name
		switch {
		case name == "":
			name = "(none: run by hand or from cron)"
		case ev.Matcher != "" && ev.Matcher != "*":
			name += " (" + ev.Matcher + ")"
		}
		timeout := "—"
		if ev.Timeout > 0 {
			timeout = fmt.Sprintf("%d s", ev.Timeout)
		}
		if ev.Budget > 0 {
			timeout += fmt.Sprintf("; ctx stops its own work after %s", ev.Budget.Round(100*time.Millisecond))
		}
		once := ""
		if ev.OnceOnly {
			once = "yes"
		}
		fmt.Fprintf(&b, "| %s | `%s` | %s | %s | %s |\n", name, ev.Command, ev.Doc, timeout, once)
	}
	return b.String()
}

// TestHooksDocTable keeps the table of docs/hooks.md the one Table generates: the
// page cannot drift from what `ctx init` registers.
func TestHooksDocTable(t *testing.T) {
	checkGenerated(t, hooksDoc, tableStart, tableEnd, docTable())
	checkGenerated(t, claudeCodeDoc, briefStart, tableEnd, briefTable())
}

// claudeCodeDoc is the user's page on ctx in Claude Code, whose short table of the
// events ctx init registers Table generates too.
const (
	claudeCodeDoc = "../../docs/claude-code.md"
	briefStart    = "<!-- events.Table, brief: go test ./internal/events -run TestHooksDocTable -update -->"
)

// briefTable is one row per event ctx init registers: the event and what ctx does.
func briefTable() string {
	var b strings.Builder
	b.WriteString("| event | ctx does |\n|---|---|\n")
	for _, ev := range Table {
		if ev.Name == "" {
			continue
		}
		event, does, _ := strings.Cut(ev.Short, ": ")
		fmt.Fprintf(&b, "| %s | %s |\n", event, does)
	}
	return b.String()
}

// checkGenerated compares the text of path between the markers with want; -update
// writes it.
func checkGenerated(t *testing.T, path, start, end, want string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	i := strings.Index(doc, start)
	j := strings.Index(doc[max(i, 0):], end) + max(i, 0)
	if i < 0 || j < i {
		t.Fatalf("%s lacks the markers %q … %q", path, start, end)
	}
	whole := doc[:i+len(start)] + "\n" + want + doc[j:]
	if *update {
		if err := os.WriteFile(path, []byte(whole), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if whole != doc {
		t.Errorf("%s's table is not Table's; run: go test ./internal/events -run TestHooksDocTable -update", path)
	}
}

// Every row is complete, every command and event is one row's, and the registrations
// are the rows with an event, in order, with their matchers and timeouts.
func TestTableRows(t *testing.T) {
	seen := map[string]bool{}
	for _, ev := range Table {
		if ev.Command == "" || ev.Short == "" || ev.Example == "" || ev.Doc == "" || ev.Run == nil {
			t.Errorf("row %q is incomplete: %+v", ev.Command, ev)
		}
		for _, key := range []string{"cmd:" + ev.Command, "event:" + ev.Name} {
			if key != "event:" && seen[key] {
				t.Errorf("%s is in two rows", key)
			}
			seen[key] = true
		}
		if ev.Name != "" && ev.Timeout == 0 {
			t.Errorf("%s has no timeout", ev.Name)
		}
	}
	regs := Registrations("/opt/ctx dir/ctx")
	n := 0
	for _, ev := range Table {
		if ev.Name == "" {
			continue
		}
		r := regs[n]
		n++
		if r.Event != ev.Name || r.Matcher != ev.Matcher || r.Timeout != ev.Timeout || r.Subcommand() != ev.Command {
			t.Errorf("registration %+v is not row %s", r, ev.Command)
		}
	}
	if n != len(regs) {
		t.Errorf("%d registrations for %d events", len(regs), n)
	}
}

// The registrations ctx init writes, as Claude Code's settings name them: the
// settings tests of internal/claude use the same list as their input.
func TestRegistrationsAreTheDocumentedOnes(t *testing.T) {
	var got []string
	for _, r := range Registrations("") {
		got = append(got, fmt.Sprintf("%s/%s/%s/%d", r.Event, r.Matcher, r.Subcommand(), r.Timeout))
	}
	want := []string{"SessionStart//session-start/10", "UserPromptSubmit//check-context-size/10",
		"PreToolUse/Bash/block-dangerous-commands/10", "PostToolUse/*/record-action/10", "Stop//stop/10",
		"PreCompact//pre-compact/10", "PostCompact//post-compact/10", "SessionEnd//session-end/2",
		"PermissionRequest/*/permission-request/10"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("registrations:\n got %v\nwant %v", got, want)
	}
}
