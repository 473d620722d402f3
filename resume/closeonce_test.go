package resume_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ctxtools/ctx/demo"
	"github.com/ctxtools/ctx/loader"
	"github.com/ctxtools/ctx/resume"
)

// A close counts its session once (DESIGN: "close-session: also counts the session"):
// closing the same session again, as an agent may or as a rerun after a close that was
// killed once the save point was written, leaves session_count where the first close
// put it, and updates the entry in place; another session counts again. A person's
// closed heading reworded by hand is no longer ctx's, and a close counts again.
func TestCloseCountsASessionOnce(t *testing.T) {
	root := filepath.Join(t.TempDir(), "ws")
	if err := demo.Write(root); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC)
	project := func() (*loader.Workspace, *loader.Project) {
		t.Helper()
		ws, err := loader.Open(root)
		if err != nil {
			t.Fatal(err)
		}
		p, err := ws.Resolve("1")
		if err != nil {
			t.Fatal(err)
		}
		return ws, p
	}
	count := func() int {
		t.Helper()
		ws, p := project()
		v := ws.ReadResume(p).Frontmatter["session_count"]
		n, err := strconv.Atoi(fmt.Sprint(v))
		if err != nil {
			t.Fatalf("session_count is %v", v)
		}
		return n
	}
	save := func(key, summary string, closing bool) *resume.Saved {
		t.Helper()
		ws, p := project()
		now = now.Add(time.Minute)
		saved, err := ws.Save(p, resume.Change{Now: now, SessionKey: key, Summary: summary, Close: closing, Trigger: "close"})
		if err != nil {
			t.Fatal(err)
		}
		return saved
	}
	start := count()
	save("s1", "first half", false)
	if got := count(); got != start {
		t.Fatalf("a save counted a session: %d → %d", start, got)
	}
	first := save("s1", "done", true)
	if got := count(); got != start+1 {
		t.Fatalf("the first close: session_count %d, want %d", got, start+1)
	}
	again := save("s1", "done, really", true)
	if got := count(); got != start+1 {
		t.Errorf("the same session closed again: session_count %d, want %d", got, start+1)
	}
	if again.SessionNumber != first.SessionNumber {
		t.Errorf("the same session got number %d, then %d", first.SessionNumber, again.SessionNumber)
	}
	save("s2", "next session", true)
	if got := count(); got != start+2 {
		t.Errorf("another session's close: session_count %d, want %d", got, start+2)
	}

	// The heading reworded by a person: ctx no longer knows the session closed.
	data, err := os.ReadFile(first.Path)
	if err != nil {
		t.Fatal(err)
	}
	old := fmt.Sprintf("Session %d: done, really, 2026-11-21", first.SessionNumber)
	if !strings.Contains(string(data), old) {
		t.Fatalf("no closed heading %q in\n%s", old, data)
	}
	reworded := strings.Replace(string(data), old, "Our kickoff", 1)
	if err := os.WriteFile(first.Path, []byte(reworded), 0o644); err != nil {
		t.Fatal(err)
	}
	save("s1", "reopened", true)
	if got := count(); got != start+3 {
		t.Errorf("after the heading was reworded: session_count %d, want %d", got, start+3)
	}
}
