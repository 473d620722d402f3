package state

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestFirstRunOncePerEvent(t *testing.T) {
	parent := t.TempDir()
	rt := &Runtime{Dir: filepath.Join(parent, "rt")}
	if err := os.Mkdir(rt.Dir, 0o700); err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		hook, session, event string
		want                 bool
	}{
		{"record-action", "s1", "tool:t1", true},
		{"record-action", "s1", "tool:t1", false}, // the second registration's run
		{"record-action", "s1", "tool:t2", true},
		{"check-context-size", "s1", "tool:t2", true}, // another hook
		{"record-action", "s2", "tool:t2", true},      // another session
		{"record-action", "s1", "", true},             // no id: always acts
		{"record-action", "s1", "", true},
	}
	for i, s := range steps {
		got, err := rt.FirstRun(s.hook, s.session, s.event)
		if err != nil || got != s.want {
			t.Errorf("step %d: FirstRun(%s, %s, %s) = %v, %v; want %v", i, s.hook, s.session, s.event, got, err, s.want)
		}
	}
	// A hostile session id stays a file name inside the runtime folder.
	if _, err := rt.FirstRun("stop", "../../x", "prompt:p"); err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(parent); len(entries) != 1 {
		t.Errorf("FirstRun wrote outside its folder: %v", entries)
	}
}

func TestWorkFiles(t *testing.T) {
	st := testStore(t)
	for _, f := range []string{"a.md", "02-projects/01-x/b.md", "a.md"} {
		if err := st.Session("s1").AddWork(f); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Session(UnknownSession).AddWork("c.md"); err != nil {
		t.Fatal(err)
	}
	got, err := st.Session("s1").Work()
	if err != nil || strings.Join(got, ",") != "a.md,02-projects/01-x/b.md" {
		t.Errorf("Files = %v, %v", got, err)
	}
	if got, _ := st.Session(UnknownSession).Work(); len(got) != 0 {
		t.Errorf("the unknown session kept files: %v", got)
	}
	if got, _ := st.Session("s2").Work(); len(got) != 0 {
		t.Errorf("another session's files: %v", got)
	}
	if n := st.Prune(context.Background(), time.Now().Add(-time.Hour)); n != 0 {
		t.Errorf("Prune removed %d fresh files", n)
	}
	st.Prune(context.Background(), time.Now().Add(60*24*time.Hour))
	if got, _ := st.Session("s1").Work(); len(got) != 0 {
		t.Errorf("a month-old list survived Prune: %v", got)
	}
}
