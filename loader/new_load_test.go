package loader

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// A new project's load names one next task: the action is the task the progress names.
func TestNewProjectNextAgrees(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "02-projects"), 0o755); err != nil {
		t.Fatal(err)
	}
	ws, err := Open(root)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ws.Create(NewProject{Name: "Alpha", Now: time.Now()}); err != nil {
		t.Fatal(err)
	}
	p, err := ws.Resolve("1")
	if err != nil {
		t.Fatal(err)
	}
	res := ws.Load(p, LoadOptions{})
	want := "Task 1 — " + res.Project.Progress.CurrentTask
	if res.Project.Progress.CurrentTaskNumber != 1 || res.Resume.NextAction != want {
		t.Errorf("next task %d %q, action %q", res.Project.Progress.CurrentTaskNumber, res.Project.Progress.CurrentTask, res.Resume.NextAction)
	}
}
