package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/ctxtools/ctx/loader"
)

// TestProjectsJSONStreamed: in a pipe, ctx projects --json writes a project at a time,
// and what it writes is byte for byte what encoding the whole listing at once gives.
func TestProjectsJSONStreamed(t *testing.T) {
	ws := demoWorkspace(t)
	w, err := loader.Open(ws)
	if err != nil {
		t.Fatal(err)
	}
	projects, err := w.Scan(loader.ReadOptions{})
	if err != nil || len(projects) < 3 {
		t.Fatalf("%d projects, %v", len(projects), err)
	}
	// A name with what JSON escapes, and HTML it must not.
	projects[0].Name = "Café <b>\"quoted\"</b> & \\ \u2028"
	out := projectsOutput{SchemaVersion: loader.SchemaVersion, Workspace: ws, Projects: projects}
	var whole, streamed bytes.Buffer
	if err := (&App{Streams: Streams{Out: &whole}}).writeJSON(out); err != nil {
		t.Fatal(err)
	}
	if err := (&App{Streams: Streams{Out: &streamed}}).writeProjectsJSON(out); err != nil {
		t.Fatal(err)
	}
	if whole.String() != streamed.String() {
		t.Errorf("streamed JSON differs:\nwhole:    %s\nstreamed: %s", whole.String(), streamed.String())
	}
	if !strings.Contains(streamed.String(), "<b>") {
		t.Errorf("HTML escaped: %s", streamed.String())
	}
	out.Projects = nil
	whole.Reset()
	streamed.Reset()
	_ = (&App{Streams: Streams{Out: &whole}}).writeJSON(out)
	_ = (&App{Streams: Streams{Out: &streamed}}).writeProjectsJSON(out)
	if whole.String() != streamed.String() {
		t.Errorf("no projects: %q, want %q", streamed.String(), whole.String())
	}
}
