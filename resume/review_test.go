package resume

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ctxtools/ctx/markdown"
)

// saveBytes saves src as a save point with c, twice when twice is set, through the
// whole save (SaveUnlocked), and returns what each save wrote.
func saveBytes(t *testing.T, src string, c Change, twice bool) []string {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "_resume.md")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	target := Target{
		Path: path, Current: func() string { return path }, Rel: filepath.Base,
		LockDir: filepath.Join(dir, "locks"),
		Project: Project{ID: "01-x", Name: "X", Number: 1, Path: "p",
			Progress: markdown.Progress{TasksTotal: 3, TasksCompleted: 1, Percent: 33, CurrentTask: "two", CurrentTaskNumber: 2}},
		Reads: func(*Document) []Read { return []Read{{Path: "p/overview.md", Why: "overview", Exists: true}} },
	}
	c.Now = time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	var out []string
	for range map[bool]int{false: 1, true: 2}[twice] {
		if _, err := SaveUnlocked(target, c); err != nil {
			t.Fatalf("save: %v", err)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(b))
	}
	if twice && out[0] != out[1] {
		t.Errorf("a second identical save changed the document:\n%s\n---\n%s", out[0], out[1])
	}
	return out
}

// Documents a review of the batch edits found a save got wrong; each keeps the
// person's words and reads the same after a second save.
func TestReviewedDocuments(t *testing.T) {
	keeps := func(t *testing.T, got string, want ...string) {
		t.Helper()
		for _, w := range want {
			if !strings.Contains(got, w) {
				t.Errorf("lost %q:\n%s", w, got)
			}
		}
	}
	t.Run("a lone CR: the text after it stays", func(t *testing.T) {
		got := saveBytes(t, "# T\n\n**Last Session:** old\rmy notes after a stray CR\n", Change{Summary: "s"}, true)[0]
		keeps(t, got, "old\rmy notes after a stray CR\n")
	})
	t.Run("a BOM without frontmatter stays first", func(t *testing.T) {
		got := saveBytes(t, "\ufeffhello\n", Change{Summary: "s"}, true)[0]
		if !strings.HasPrefix(got, "\ufeff---\n") || !strings.Contains(got, "hello\n") {
			t.Errorf("got %q", got)
		}
	})
	t.Run("an assumption goes under its own subsection", func(t *testing.T) {
		got := saveBytes(t, "# T\n\n## Critical Context to Remember\n### Important Assumptions\n- old\n\n## Files Modified\n", Change{Decisions: []string{"d"}, Assumptions: []string{"a"}}, true)[0]
		keeps(t, got, "### Important Assumptions\n- old\n- a\n")
		if i, j := strings.Index(got, "### Key Decisions"), strings.Index(got, "- a\n"); i < 0 || j > i {
			t.Errorf("the assumption is not above Key Decisions:\n%s", got)
		}
	})
	t.Run("a shorter fence does not close a longer one", func(t *testing.T) {
		got := saveBytes(t, "# T\n\n## Files Modified\n- `a.go`\n\n````\ncode\n```\n", Change{Files: []string{"src/b.go"}}, true)[0]
		if i, j := strings.Index(got, "- `src/b.go`"), strings.Index(got, "````"); i < 0 || i > j {
			t.Errorf("the item went into the code block:\n%s", got)
		}
	})
	t.Run("markers inside an HTML block are the person's", func(t *testing.T) {
		got := saveBytes(t, "# T\n\n## Compaction Detection\n<div>\n<!-- ctx:begin compaction -->\nmy example text\n<!-- ctx:end compaction -->\n</div>\n", Change{Summary: "s"}, true)[0]
		keeps(t, got, "<div>\n<!-- ctx:begin compaction -->\nmy example text\n<!-- ctx:end compaction -->\n</div>\n")
	})
	t.Run("comments beside owned values stay", func(t *testing.T) {
		got := saveBytes(t, "---\ncurrent_phase: [design, build] # note\nnext_task_description: |\n    text\n  # comment\nnext_task_number: 1\n  # under\n---\n# T\n", Change{Phase: "build"}, true)[0]
		keeps(t, got, "# note\n", "  # comment\n", "  # under\n")
	})
	t.Run("ctx's own entry does not age the person's log", func(t *testing.T) {
		saveBytes(t, "# T\n\n## Session History\n### Session 3 (2026-01-03)\n**Next Action:** do x\n\n### Session 2 (2026-01-02)\n- old\n", Change{Next: "X", SessionKey: "k"}, true)
	})
	t.Run("a marker in a list does not make the document ctx's", func(t *testing.T) {
		got := saveBytes(t, "# T\n\n**Next Action:** my own plan\n\n## Notes\n- example:\n\n  <!-- ctx:begin compaction -->\n", Change{Summary: "s"}, true)[0]
		keeps(t, got, "**Next Action:** my own plan\n")
	})
	t.Run("an item goes before a list item's open code, not into it", func(t *testing.T) {
		got := saveBytes(t, "# T\n\n## Files Modified\n- notes on a:\n  ```\n  unclosed code of item a\n", Change{Files: []string{"src/b.go"}}, true)[0]
		if strings.Index(got, "- `src/b.go`") > strings.Index(got, "- notes on a:") {
			t.Errorf("the item took the person's code block in:\n%s", got)
		}
	})
	t.Run("a missing header copies a whole-line bold form", func(t *testing.T) {
		got := saveBytes(t, "# T\n\n**Next Action: keep me**\n", Change{Summary: "s"}, true)[0]
		keeps(t, got, "**Last Session: 2026-03-01 — s**\n", "**Next Action: keep me**\n")
	})
	t.Run("a BOM before a header line", func(t *testing.T) {
		got := saveBytes(t, "\ufeff**Last Session:** old\n", Change{Summary: "s"}, true)[0]
		if !strings.HasPrefix(got, "\ufeff---\n") || !strings.Contains(got, "\n**Last Session:** 2026-03-01 — s\n") {
			t.Errorf("got %q", got)
		}
	})
	t.Run("a quote after a second level-1 heading is the person's", func(t *testing.T) {
		got := saveBytes(t, "# Title\n\n**Next Action:** mine\n\nOlder notes\n===\n\n> **Last Session:** my quoted line\n", Change{Summary: "s"}, true)[0]
		keeps(t, got, "> **Last Session:** my quoted line\n", "**Next Action:** mine\n")
	})
	t.Run("sections are added before the last section when the document ends open", func(t *testing.T) {
		got := saveBytes(t, "# T\n\n## Key Decisions\n- decided\n\n````\ncode\n```\n", Change{Summary: "s"}, true)[0]
		if i, j := strings.Index(got, "## Compaction Detection"), strings.Index(got, "## Key Decisions"); i < 0 || i > j {
			t.Errorf("a section was added where the person's open block follows it:\n%s", got)
		}
	})
	t.Run("an indented --- is a block scalar's, not the frontmatter's end", func(t *testing.T) {
		got := saveBytes(t, "---\nnotes: |\n  ---\n  more\n---\n# T\n", Change{Summary: "s"}, true)[0]
		keeps(t, got, "notes: |\n  ---\n  more\n")
	})
}

func TestOtherLineBreaksInFrontmatterAreRefused(t *testing.T) {
	d := Parse([]byte("---\ntitle: \"pasted\u2028text\"\nlast_updated: 2026-01-01\nk: v # a long comment\n---\n"))
	if err := d.editable(); err == nil || !strings.Contains(err.Error(), "2: frontmatter: a line break") {
		t.Errorf("err = %v", err)
	}
}
