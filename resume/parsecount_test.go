package resume_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ctxtools/ctx/demo"
	"github.com/ctxtools/ctx/loader"
	"github.com/ctxtools/ctx/markdown"
	"github.com/ctxtools/ctx/resume"
)

// TestSaveParsesOnce counts markdown.Parses around a save. A save parses the save point
// once when it reads it, once for the result of its edits (which checks them and is the
// document the Loading Sequence is derived from) and once for the result of the Loading
// Sequence's edit: 3. Only a save that adds a section it lacks parses the template and
// the document with the sections added: 2 more.
func TestSaveParsesOnce(t *testing.T) {
	root := filepath.Join(t.TempDir(), "ws")
	if err := demo.Write(root); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC)
	fresh := filepath.Join(root, "02-projects", "09-fresh")
	if err := os.MkdirAll(filepath.Join(fresh, "01-planning"), 0o755); err != nil {
		t.Fatal(err)
	}
	lacking := filepath.Join(root, "02-projects", "10-lacking", "01-planning")
	if err := os.MkdirAll(lacking, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(lacking, "_resume.md"), []byte("---\nresume_version: 3\n---\n# Lacking\n\n**Last Session:** 2026-11-20\n**Next Action:** write it\n\n## Notes\nmine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	const read, verify, template = 1, 2, 2
	tests := []struct {
		name, project string
		change        resume.Change
		want          int
	}{
		{"typical save", "1", resume.Change{Summary: "expiry validated", Trigger: "save"}, read + verify},
		{"agent save with items", "1", resume.Change{Summary: "errors inline", SessionKey: "s9", Decisions: []string{"show errors under the field"},
			Blockers: []string{"sandbox down"}, Files: []string{"03-working/errors.md"}, CompactionDelta: 1, TokensApprox: 90000, Phase: "review", Trigger: "pre-compact"}, read + verify},
		{"second save of the session", "1", resume.Change{SessionKey: "s9", Summary: "more", Next: "ship it", Trigger: "save"}, read + verify},
		{"close", "1", resume.Change{SessionKey: "s9", Summary: "done", Close: true, Trigger: "close"}, read + verify},
		{"fresh project, no save point", "9", resume.Change{Trigger: "save"}, read + verify},
		{"save point lacking ctx's sections", "10", resume.Change{SessionKey: "s1", Trigger: "save"}, read + template + verify},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws, err := loader.Open(root)
			if err != nil {
				t.Fatal(err)
			}
			p, err := ws.Resolve(tt.project)
			if err != nil {
				t.Fatal(err)
			}
			tt.change.Now = now
			before := markdown.Parses()
			saved, err := ws.Save(p, tt.change)
			if err != nil {
				t.Fatal(err)
			}
			if got := markdown.Parses() - before; got > int64(tt.want) || got < 2 {
				t.Errorf("save parsed %d times, want at most %d", got, tt.want)
			}
			// The document the save returns answers its readers without a parse.
			before = markdown.Parses()
			_, _ = saved.Document.Header(resume.NextAction)
			_ = saved.Document.Frontmatter()
			if got := markdown.Parses() - before; got != 0 {
				t.Errorf("reading the saved document parsed %d times", got)
			}
			written, _ := os.ReadFile(saved.Path)
			if string(written) != string(saved.Document.Bytes()) {
				t.Errorf("the file differs from the saved document")
			}
			if tt.project == "10" && !strings.Contains(string(written), "## Notes\nmine\n") {
				t.Errorf("a person's section changed:\n%s", written)
			}
		})
	}
}
