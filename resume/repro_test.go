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

// saveDoc writes src as the save point of project 1 of a new workspace, saves it with
// c (twice when twice is set) and returns the bytes after each save.
func saveDoc(t *testing.T, src string, c resume.Change, times int) []string {
	t.Helper()
	root := t.TempDir()
	planning := filepath.Join(root, "02-projects", "01-a", "01-planning")
	if err := os.MkdirAll(planning, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{"overview.md": "---\nname: A\n---\n", "steps.md": "## Phase 1\n- [x] one\n- [ ] two\n", "_resume.md": src} {
		if err := os.WriteFile(filepath.Join(planning, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ws, err := loader.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for range times {
		p, err := ws.Resolve("1")
		if err != nil {
			t.Fatal(err)
		}
		c.Now = time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC)
		if _, err := ws.Save(p, c); err != nil {
			t.Fatalf("save: %v", err)
		}
		b, err := os.ReadFile(filepath.Join(planning, "_resume.md"))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(b))
	}
	return out
}

// The six reproductions of the issue "Save points: one model" (each failed before the
// save point was edited by Markdown structure).
func TestIssueReproductions(t *testing.T) {
	t.Run("a short Loading Sequence heading is the loading sequence", func(t *testing.T) {
		src := "---\nlast_updated: 2026-02-10\n---\n# Resume\n\n## Loading Sequence\n\n1. **This file first** (`_resume.md`)\n2. `overview.md`\n"
		got := saveDoc(t, src, resume.Change{Summary: "x"}, 2)
		if strings.Contains(got[0], "Loading Sequence for Resume") {
			t.Errorf("a second loading sequence was added:\n%s", got[0])
		}
		if !strings.Contains(got[0], "## Loading Sequence\n<!-- ctx:begin loading-sequence -->\n") || !strings.Contains(got[0], "1. **This file first** (`_resume.md`)\n2. `overview.md`\n") {
			t.Errorf("the block is not in the person's section, or their list changed:\n%s", got[0])
		}
		if got[0] != got[1] {
			t.Errorf("a second save changed the document")
		}
	})
	t.Run("an indented code block in a CRLF file is an example", func(t *testing.T) {
		src := "# Resume\r\n\r\n**Last Session:** old\r\n**Next Action:** real\r\n\r\n## Notes\r\n\r\nPasted:\r\n\r\n    **Next Action:** indented decoy\r\n    **Last Session:** indented decoy\r\n"
		got := saveDoc(t, src, resume.Change{Summary: "two", SessionKey: "s1"}, 1)[0]
		if !strings.Contains(got, "\r\n    **Next Action:** indented decoy\r\n    **Last Session:** indented decoy\r\n") {
			t.Errorf("the code block changed:\n%q", got)
		}
		if !strings.Contains(got, "**Last Session:** 2026-11-21 — two\r\n") {
			t.Errorf("the real header lacks the summary:\n%q", got)
		}
	})
	t.Run("a quotation further down is the person's", func(t *testing.T) {
		src := "# Resume\n\n**Last Session:** old\n\n## Notes\n\n> **Next Action:** quoted decoy\n"
		got := saveDoc(t, src, resume.Change{Summary: "s"}, 1)[0]
		if !strings.Contains(got, "\n> **Next Action:** quoted decoy\n") || strings.Contains(got, "> **Last Session:**") {
			t.Errorf("the quotation changed:\n%s", got)
		}
	})
	t.Run("a comment under a multi-line value stays", func(t *testing.T) {
		src := "---\nlast_updated: first part\n  continued plain\n   # indented comment\nmine: 1\n---\n# Resume\n"
		got := saveDoc(t, src, resume.Change{Summary: "s"}, 1)[0]
		if !strings.Contains(got, "\n   # indented comment\nmine: 1\n") || strings.Contains(got, "continued plain") {
			t.Errorf("the value was not replaced by its own span:\n%s", got)
		}
	})
	t.Run("an unclosed ctx marker", func(t *testing.T) {
		src := "# Resume\n\n## Compaction Detection\n<!-- ctx:begin compaction -->\nmy note\n\n## Later\ntext\n"
		got := saveDoc(t, src, resume.Change{Summary: "s"}, 2)
		if strings.Count(got[0], "<!-- ctx:begin compaction -->") != 2 || strings.Count(got[0], "<!-- ctx:end compaction -->") != 1 {
			t.Errorf("markers:\n%s", got[0])
		}
		if i, j := strings.Index(got[0], "<!-- ctx:end compaction -->"), strings.Index(got[0], "my note"); i > j {
			t.Errorf("ctx's block wraps the person's line:\n%s", got[0])
		}
		if got[0] != got[1] {
			t.Errorf("a second save changed the document:\n%s\n---\n%s", got[0], got[1])
		}
	})
	t.Run("a decision goes under Critical Context, not another section's Key Decisions", func(t *testing.T) {
		src := "# Resume\n\n## Files Modified This Project\n- `a.md`\n\n### Key Decisions\n- an old one\n"
		got := saveDoc(t, src, resume.Change{Decisions: []string{"new one"}}, 1)[0]
		crit := strings.Index(got, "## Critical Context to Remember")
		if crit < 0 || strings.Index(got, "new one") < crit {
			t.Errorf("the decision is not under Critical Context:\n%s", got)
		}
	})
}

// A file without a header and without steps gets no made-up next action.
func TestNoMadeUpNextAction(t *testing.T) {
	root := t.TempDir()
	planning := filepath.Join(root, "02-projects", "01-a", "01-planning")
	if err := os.MkdirAll(planning, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(planning, "_resume.md"), []byte("# Handoff\n\nWhere I was.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ws, _ := loader.Open(root)
	p, _ := ws.Resolve("1")
	saved, err := ws.Save(p, resume.Change{Summary: "s", Now: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := saved.Document.Header(resume.NextAction); ok {
		t.Errorf("made up a next action: %q", v)
	}
}

// Two closes on one day without an agent session count two sessions.
func TestTwoManualClosesCountTwo(t *testing.T) {
	src := "---\nsession_count: 0\n---\n# R\n\n## Session History\n"
	root := t.TempDir()
	planning := filepath.Join(root, "02-projects", "01-a", "01-planning")
	if err := os.MkdirAll(planning, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(planning, "_resume.md"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	ws, _ := loader.Open(root)
	now := time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC)
	for _, summary := range []string{"morning", "evening"} {
		p, _ := ws.Resolve("1")
		if _, err := ws.Save(p, resume.Change{Summary: summary, Close: true, SessionKey: "manual-2026-11-21", NoAgentSession: true, Now: now}); err != nil {
			t.Fatal(err)
		}
	}
	b, _ := os.ReadFile(filepath.Join(planning, "_resume.md"))
	if !strings.Contains(string(b), "session_count: 2") || !strings.Contains(string(b), "morning") || !strings.Contains(string(b), "evening") {
		t.Errorf("two closes:\n%s", b)
	}
}
