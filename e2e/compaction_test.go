//go:build e2e

package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// A compaction in the middle of a turn, between two tool calls with no prompt in
// between, is preceded by ctx's auto-save: usage is checked after tool calls too.
func TestMidTurnCompactionIsPrecededByTheAutoSave(t *testing.T) {
	e := New(t, Options{Git: true})
	e.Model.Script(
		Call(5000, Bash("ctx load 1 >/dev/null")),
		Call(975_000, Bash("echo step one")),
		Say("finished after the compaction", 0),
	)
	res := e.MustRun(Run{Prompts: []string{"work through the task"}})
	if len(e.Model.Requests(KindSummary)) == 0 {
		t.Fatal("the client did not compact; the scenario needs a compaction")
	}
	if n := len(res.HookOutputs("UserPromptSubmit")); n != 1 {
		t.Fatalf("UserPromptSubmit ran %d times: the compaction must come inside the turn", n)
	}
	triggers := e.Triggers()
	auto, pre := index(triggers, "auto"), index(triggers, "pre-compact")
	if auto < 0 || pre < 0 || auto > pre {
		t.Errorf("want an auto-save before the compaction's save, got %v", triggers)
	}
}

// The first request after a real compaction carries a briefing that names this
// session's own work (files it wrote, commands it ran after the auto-save), not only
// the save point's old line, and nothing of it asks the agent to wind down any more.
func TestBriefingAfterCompactionNamesTheSessionsWork(t *testing.T) {
	e := New(t, Options{})
	notes := filepath.Join(e.Workspace, ProjectPath("03-working/expiry-validation-e2e.md"))
	e.Model.Script(
		Call(5000, Bash("ctx load 1 >/dev/null")),
		Say("loaded", 880_000), // the next prompt crosses 90%: auto-save, journal opens
		Call(900_000, Write(notes, "# expiry\n"), Bash("echo ran-expiry-check-e2e")),
		Call(975_000, Bash("echo last-step")), // compaction before the next request
		Say("carrying on", 0),
	)
	e.MustRun(Run{Prompts: []string{"load", "write the expiry notes"}})
	first, ok := e.Model.FirstAfterCompaction()
	if !ok {
		t.Fatal("no request after a compaction")
	}
	text := first.Text()
	if !strings.Contains(text, "expiry-validation-e2e.md") {
		t.Errorf("the briefing does not name the file this session wrote:\n%s", briefingPart(text))
	}
	if !strings.Contains(text, "ran-expiry-check-e2e") {
		t.Errorf("the briefing does not name the session's last actions from its journal:\n%s", briefingPart(text))
	}
}

// The pre-compaction save message is not the last word: after the compaction the
// briefing comes after it and says the compaction happened.
func TestWindDownLineIsSupersededAfterCompaction(t *testing.T) {
	e := New(t, Options{})
	e.Model.Script(
		Call(5000, Bash("ctx load 1 >/dev/null")),
		Say("loaded", 880_000),
		Call(975_000, Bash("echo next")), // the auto-save prompt's turn compacts
		Say("done", 0),
	)
	res := e.MustRun(Run{Prompts: []string{"load", "go on"}})
	outs := res.HookOutputs("UserPromptSubmit")
	if len(outs) < 2 || outs[1] == "" {
		t.Fatalf("no auto-save line on the second prompt: %q", outs)
	}
	first, ok := e.Model.FirstAfterCompaction()
	if !ok {
		t.Fatal("no request after a compaction")
	}
	text := first.Text()
	stale := strings.LastIndex(text, firstLine(outs[1]))
	starts := res.HookOutputs("SessionStart")
	brief := ""
	for _, s := range starts {
		if strings.Contains(s, "additionalContext") {
			brief = s
		}
	}
	if brief == "" {
		t.Fatal("no briefing after the compaction")
	}
	at := strings.LastIndex(text, "compacted")
	if at < 0 || (stale >= 0 && at < stale) {
		t.Errorf("the briefing does not follow and supersede the pre-compaction line (line at %d, compaction note at %d)", stale, at)
	}
}

// The designed path (auto-save at 90%, then compaction) writes no empty Session
// History heading into the save point.
func TestNoEmptySessionHeadingAfterCompaction(t *testing.T) {
	e := New(t, Options{Git: true})
	e.Model.Script(
		Call(5000, Bash("ctx load 1 >/dev/null")),
		Say("loaded", 880_000),
		Call(975_000, Bash("echo more")),
		Say("done", 0),
	)
	e.MustRun(Run{Prompts: []string{"load", "go on"}})
	if len(e.Model.Requests(KindSummary)) == 0 {
		t.Fatal("no compaction")
	}
	doc := e.ReadFile(ResumeFile)
	if m := emptyHeading.FindString(doc); m != "" {
		t.Errorf("empty session heading in the save point: %q\n%s", m, doc)
	}
}

var emptyHeading = regexp.MustCompile(`(?m)^###\s+Session[^\n]*\n(\s*\n)*(##|\z)`)

// Two compactions in one session each count once, and the cycle starts again: the
// second one is also preceded by an auto-save.
func TestEveryCompactionCountsOnce(t *testing.T) {
	e := New(t, Options{})
	e.Model.Script(
		Call(5000, Bash("ctx load 1 >/dev/null")),
		Call(975_000, Bash("echo one")),
		Say("after first", 0),
		Call(975_000, Bash("echo two")),
		Say("after second", 0),
	)
	e.MustRun(Run{Prompts: []string{"first", "second"}})
	if n := len(e.Model.Requests(KindSummary)); n < 2 {
		t.Fatalf("want two compactions, the client made %d summary requests", n)
	}
	before := compactionCount(t, e)
	if before != 3 { // the demo's save point says 1
		t.Errorf("compaction_count = %d after two compactions, want 3", before)
	}
	if n := count(e.Triggers(), "auto"); n != 2 {
		t.Errorf("want an auto-save before each compaction, got %v", e.Triggers())
	}
}

func compactionCount(t *testing.T, e *Env) int {
	t.Helper()
	m := regexp.MustCompile(`(?m)^compaction_count:\s*(\d+)`).FindStringSubmatch(e.ReadFile(ResumeFile))
	if m == nil {
		t.Fatal("no compaction_count in the save point")
	}
	n := 0
	for _, c := range m[1] {
		n = n*10 + int(c-'0')
	}
	return n
}

// The journal the session wrote after its auto-save is finalized at the compaction:
// archived, and its actions kept in the compaction's snapshot.
func TestJournalIsFinalizedAtCompaction(t *testing.T) {
	e := New(t, Options{})
	e.Model.Script(
		Call(5000, Bash("ctx load 1 >/dev/null")),
		Say("loaded", 880_000),
		Call(900_000, Bash("echo journaled-step")),
		Call(975_000, Bash("echo last")),
		Say("done", 0),
	)
	e.MustRun(Run{Prompts: []string{"load", "go"}})
	active, _ := filepath.Glob(filepath.Join(e.Workspace, ".ctx", "sessions", "ACTIVE-PAUSE-*"))
	archived, _ := filepath.Glob(filepath.Join(e.Workspace, ".ctx", "sessions", "*-incremental.jsonl"))
	if len(archived) == 0 {
		t.Fatalf("no archived journal; active: %v", active)
	}
	b, err := os.ReadFile(archived[0])
	if err != nil || !strings.Contains(string(b), "journaled-step") {
		t.Errorf("the archived journal lacks the session's action: %v\n%s", err, b)
	}
	found := false
	for _, s := range e.Snapshots() {
		if s.Incremental != nil {
			found = true
		}
	}
	if !found {
		t.Errorf("no snapshot carries the journal's incremental_pause: %v", e.Triggers())
	}
}

func briefingPart(text string) string {
	if i := strings.Index(text, "SessionStart hook additional context"); i >= 0 {
		return tail(text[i:], 2500)
	}
	return tail(text, 2500)
}

func index(list []string, s string) int {
	for i, v := range list {
		if v == s {
			return i
		}
	}
	return -1
}

func count(list []string, s string) int {
	n := 0
	for _, v := range list {
		if v == s {
			n++
		}
	}
	return n
}
