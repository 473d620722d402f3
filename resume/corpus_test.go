package resume_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ctxtools/ctx/loader"
	"github.com/ctxtools/ctx/resume"
)

// TestSaveCorpus saves each awkward document of testdata/corpus as a project's save
// point, twice, and checks that every line the person wrote is still there, that the
// result parses, and that a second save changes nothing but the clock.
func TestSaveCorpus(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "corpus", "*.md"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no corpus: %v", err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			original, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			root := t.TempDir()
			planning := filepath.Join(root, "02-projects", "01-a", "01-planning")
			if err := os.MkdirAll(planning, 0o755); err != nil {
				t.Fatal(err)
			}
			write := func(name, content string) {
				if err := os.WriteFile(filepath.Join(planning, name), []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			write("overview.md", "---\nname: A\n---\n")
			write("steps.md", "- [x] one\n- [ ] two\n")
			write("_resume.md", string(original))
			ws, err := loader.Open(root)
			if err != nil {
				t.Fatal(err)
			}
			p, err := ws.Resolve("1")
			if err != nil {
				t.Fatal(err)
			}
			now := time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC)
			save := func() []byte {
				t.Helper()
				if _, err := ws.Save(p, resume.Change{Now: now, SessionKey: "s1", Trigger: "save"}); err != nil {
					t.Fatalf("save: %v", err)
				}
				out, err := os.ReadFile(filepath.Join(planning, "_resume.md"))
				if err != nil {
					t.Fatal(err)
				}
				return out
			}
			first := save()
			if err := resume.Parse(first).FrontmatterErr(); err != nil {
				t.Fatalf("the saved document does not parse: %v", err)
			}
			for _, line := range strings.Split(strings.TrimPrefix(string(original), "\ufeff"), "\n") {
				if ownedLine(line) {
					continue
				}
				if !strings.Contains(string(first), line) {
					t.Errorf("line lost: %.80q", line)
				}
			}
			if second := save(); string(second) != string(first) {
				t.Errorf("a second save with nothing new changed the document")
			}
		})
	}
}

// ownedLine reports whether a line is one a save may rewrite: ctx's frontmatter fields
// and the Quick Context header lines.
func ownedLine(line string) bool {
	for _, k := range resume.FrontmatterKeys {
		if strings.HasPrefix(strings.TrimSpace(line), k+":") {
			return true
		}
	}
	for _, l := range []string{resume.LastSession, resume.CurrentPhase, resume.NextAction} {
		if strings.Contains(line, "**"+l+":**") {
			return true
		}
	}
	return false
}
