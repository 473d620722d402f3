package events

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ctxtools/ctx/internal/state"
	"github.com/ctxtools/ctx/internal/testkit/fixture"
	"github.com/ctxtools/ctx/loader"
)

// A handoff note stays within NoteBytes however much the session said and did, keeps
// the project's briefing and the journal reference whole, and gives the agent's own
// next step.
func TestHandoffNoteBounded(t *testing.T) {
	root := t.TempDir()
	if err := fixture.Workspace(root, 3); err != nil {
		t.Fatal(err)
	}
	ws, err := loader.Discover(loader.DiscoverOptions{Cwd: root})
	if err != nil {
		t.Fatal(err)
	}
	st := state.Open(ws, os.Getenv)
	p, err := ws.Resolve("1")
	if err != nil {
		t.Fatal(err)
	}
	se := st.Session("s1")
	if err := se.Bind(state.Binding{ProjectID: p.ID, Path: p.Path, BoundAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("wörds ", 400)
	var many []string
	for i := 0; i < 40; i++ {
		many = append(many, long)
	}
	if err := se.RecordSave(time.Now(), long, "step 4: wire the form", many, many); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 200; i++ {
		if err := se.AddWork(filepath.ToSlash(filepath.Join(p.Path, "src", strings.Repeat("deep/", 20), "file.go")) + string(rune('a'+i%26))); err != nil {
			t.Fatal(err)
		}
	}
	note := HandoffNote(st, Handoff{From: "s1", Why: "its context reached 91%", Journal: ".ctx/sessions/j.jsonl"})
	if len(note) > NoteBytes {
		t.Errorf("note of %d bytes, over %d", len(note), NoteBytes)
	}
	for _, want := range []string{NoteFirstLine, "- Next: step 4: wire the form", "you are working on project " + p.ID, "Read first, in order", "The last session's whole journal: .ctx/sessions/j.jsonl.\n"} {
		if !strings.Contains(note, want) {
			t.Errorf("note lacks %q", want)
		}
	}
	if !strings.HasSuffix(note, "\n") || strings.Count(note, "- Decision: ") > noteItems {
		t.Errorf("note cut mid-line or with every decision:\n%s", note)
	}
	// A session that never saved: no "own note", the rest as before.
	bare := HandoffNote(st, Handoff{From: "s9", Why: "x"})
	if strings.Contains(bare, "own note") || !strings.HasPrefix(bare, NoteFirstLine) {
		t.Errorf("the note of a session that never saved:\n%s", bare)
	}
}
