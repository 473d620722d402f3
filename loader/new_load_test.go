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

// A file of the workspace listed as the save writes it (relative to the project, with
// ../..) is that file, not the project's file of the same name.
func TestListedWorkspaceFileIsNotTheProjects(t *testing.T) {
	root := t.TempDir()
	planning := filepath.Join(root, "02-projects", "01-a", "01-planning")
	for _, dir := range []string{planning, filepath.Join(root, "src"), filepath.Join(root, "02-projects", "01-a", "src")} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for path, text := range map[string]string{
		filepath.Join(root, "src", "main.go"):                        "package main // the workspace's\n",
		filepath.Join(root, "02-projects", "01-a", "src", "main.go"): "package main // the project's\n",
		filepath.Join(planning, "_resume.md"):                        "# R\n\n## Files Modified This Project\n- `../../src/main.go`\n",
	} {
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ws, err := Open(root)
	if err != nil {
		t.Fatal(err)
	}
	p, err := ws.Resolve("1")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range ws.Load(p, LoadOptions{}).RecommendedReads {
		if r.Why == "modified in an earlier session" {
			got = append(got, r.Path)
		}
	}
	if len(got) != 1 || got[0] != "src/main.go" {
		t.Errorf("modified reads %v, want the workspace's src/main.go", got)
	}
}
