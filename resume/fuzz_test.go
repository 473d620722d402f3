package resume

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ctxtools/ctx/markdown"
)

// FuzzSave runs a save's edits on any document: it never panics; a document it edits
// reads back with the header it wrote, and a second identical save changes nothing.
func FuzzSave(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "corpus", "*.md"))
	for _, file := range files {
		if b, err := os.ReadFile(file); err == nil {
			f.Add(b, "summary", false)
		}
	}
	f.Add([]byte("# T\n\n**Next Action:** x\n"), "s", true)
	f.Add([]byte("\ufeff---\r\na: 1\r\n---\r\n> **Last Session**: y\r\n"), "", false)
	tmpl := []byte("# R\n## Quick Context\n## Session History\n## Critical Context to Remember\n### Key Decisions\n## Files Modified This Project\n## Loading Sequence for Resume\n## Compaction Detection\n")
	t := Target{
		Path: "/ws/p/01-planning/_resume.md", Rel: func(string) string { return "p/01-planning/_resume.md" },
		Project: Project{ID: "01-p", Name: "P", Path: "p", Progress: markdown.Progress{TasksTotal: 2, TasksCompleted: 1, CurrentTask: "b", CurrentTaskNumber: 2}},
		Reads: func(*Document) []Read {
			return []Read{{Path: "p/01-planning/overview.md", Why: "overview", Exists: true}}
		},
	}
	f.Fuzz(func(tt *testing.T, src []byte, summary string, closing bool) {
		if len(src) > 1<<16 {
			return
		}
		c := Change{Summary: summary, SessionKey: "k", Close: closing, Decisions: []string{"d"}, Files: []string{"src/a.go"}, Now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
		save := func(b []byte) (*Document, error) {
			d := Parse(b)
			if err := d.editable(); err != nil {
				return nil, err
			}
			return edit(t, c, d, func() ([]byte, error) { return tmpl, nil }, &Saved{})
		}
		out, err := save(src)
		if err != nil {
			return // a refusal names what it refused; nothing was written
		}
		if got, _ := out.Header(LastSession); summary != "" && got != "2026-01-02 — "+oneLine(summary) && oneLine(summary) != "" {
			tt.Fatalf("Last Session reads %q after the save of %q", got, src)
		}
		again, err := save(out.Bytes())
		if err != nil {
			tt.Fatalf("a saved document was refused: %v\n%q", err, out.Bytes())
		}
		if string(again.Bytes()) != string(out.Bytes()) {
			tt.Fatalf("a second identical save changed the document:\n%q\n%q", out.Bytes(), again.Bytes())
		}
	})
}
