package resume

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ctxtools/ctx/markdown"
)

const sample = `---
# a comment the person wrote
resume_version: 3
last_updated: 2026-11-20T17:42:00Z   # kept comment
session_count: 3
project_name: "Checkout \"v2\""
current_phase: 'build'
custom_key: {a: 1}
progress_percentage:
files_to_load:
  - a.md
  - b.md
---

# Resume: Checkout

**Last Session:** 2026-11-20 — did things
**Next Action:** something

## Quick Context
Hand-written text.

## Session History
### Session 1 — 2026-11-19 <!-- ctx:session s1 -->
- first

## Critical Context to Remember
### Key Decisions
- 2026-11-18: Use Stripe

## Files Modified This Project
- ` + "`a.md`" + `

## My Own Heading
keep me

## Loading Sequence for Resume
A note the person wrote.
`

func mustParse(t *testing.T, src string) *Document {
	t.Helper()
	d, err := parseEditable([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// assertSurgical checks that only old[span] changed.
func assertSurgical(t *testing.T, old, new []byte, s Span) {
	t.Helper()
	if !bytes.Equal(old[:s.Start], new[:s.Start]) || !bytes.Equal(old[s.End:], new[s.Start+s.Len:]) {
		t.Fatalf("bytes outside the span %+v changed:\n--- old\n%s\n--- new\n%s", s, old, new)
	}
}

func TestSetField(t *testing.T) {
	tests := []struct {
		key   string
		value any
		want  string // a line that must appear
	}{
		{"last_updated", time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC), "last_updated: 2026-11-21T09:00:00Z   # kept comment\n"},
		{"current_phase", time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC), "current_phase: '2026-11-21T09:00:00Z'\n"},
		{"session_count", 4, "session_count: 4\n"},
		{"project_name", `New "name"`, `project_name: "New \"name\""` + "\n"},
		{"current_phase", "review", "current_phase: 'review'\n"},
		{"progress_percentage", 50, "progress_percentage: 50\n"},
		{"files_to_load", "x.md", "files_to_load: x.md\n---\n"},
		{"compaction_count", 1, "last_updated: 2026-11-20T17:42:00Z   # kept comment\ncompaction_count: 1\nsession_count: 3\n"},
		{"planning_completed", true, "progress_percentage:\nplanning_completed: true\nfiles_to_load:\n"},
		{"resume_version", 4, "# a comment the person wrote\nresume_version: 4\n"},
	}
	for _, tt := range tests {
		t.Run(tt.key, func(t *testing.T) {
			d := mustParse(t, sample)
			nd, span, err := d.SetField(tt.key, tt.value)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(nd.Bytes()), tt.want) {
				t.Fatalf("want %q in:\n%s", tt.want, nd.Bytes())
			}
			assertSurgical(t, d.Bytes(), nd.Bytes(), span)
			if got, _ := nd.Field("custom_key"); got != "" {
				t.Errorf("custom_key changed")
			}
		})
	}
}

func TestSetFieldKeepsCRLFAndBOM(t *testing.T) {
	src := "\ufeff---\r\nsession_count: 1\r\nother: x\r\n---\r\n# T\r\n"
	d := mustParse(t, src)
	nd, _, err := d.SetField("session_count", 2)
	if err != nil {
		t.Fatal(err)
	}
	nd, _, err = nd.SetField("resume_version", 3)
	if err != nil {
		t.Fatal(err)
	}
	want := "\ufeff---\r\nresume_version: 3\r\nsession_count: 2\r\nother: x\r\n---\r\n# T\r\n"
	if string(nd.Bytes()) != want {
		t.Errorf("got %q\nwant %q", nd.Bytes(), want)
	}
}

func TestSetFieldWithoutFrontmatter(t *testing.T) {
	d := mustParse(t, "# Title\n")
	nd, _, err := d.SetField("session_count", 1)
	if err != nil {
		t.Fatal(err)
	}
	if string(nd.Bytes()) != "---\nsession_count: 1\n---\n# Title\n" {
		t.Errorf("got %q", nd.Bytes())
	}
}

func TestParseErrors(t *testing.T) {
	for src, want := range map[string]string{
		"---\na: 1\nb: c: d\n---\n": "3: frontmatter: mapping values are not allowed in this context",
		"---\na: 1\n":               "1: frontmatter: no closing --- line",
		"\n\n---\n- x\n---\n":       "4: frontmatter: expected key: value lines",
	} {
		_, err := parseEditable([]byte(src))
		if err == nil || err.Error() != want || !errors.Is(err, ErrFrontmatter) {
			t.Errorf("Parse(%q) = %v, want %q", src, err, want)
		}
	}
}

func TestReplaceBlock(t *testing.T) {
	d := mustParse(t, sample)
	nd, span, err := d.ReplaceBlock(SectionLoadingSequence, "loading-sequence", "1. `x.md`\n")
	if err != nil {
		t.Fatal(err)
	}
	assertSurgical(t, d.Bytes(), nd.Bytes(), span)
	if !strings.Contains(string(nd.Bytes()), "## Loading Sequence for Resume\n<!-- ctx:begin loading-sequence -->\n1. `x.md`\n<!-- ctx:end loading-sequence -->\n\nA note the person wrote.\n") {
		t.Fatalf("got:\n%s", nd.Bytes())
	}
	again, span, err := nd.ReplaceBlock(SectionLoadingSequence, "loading-sequence", "1. `y.md`\n2. `z.md`\n")
	if err != nil {
		t.Fatal(err)
	}
	assertSurgical(t, nd.Bytes(), again.Bytes(), span)
	if got, _ := again.BlockContent(SectionLoadingSequence, "loading-sequence"); got != "1. `y.md`\n2. `z.md`\n" {
		t.Errorf("block = %q", got)
	}
	if !strings.Contains(string(again.Bytes()), "A note the person wrote.") {
		t.Errorf("person's text lost")
	}
}

func TestSetHeader(t *testing.T) {
	d := mustParse(t, sample)
	nd, span, err := d.SetHeader(NextAction, "Task 7 — expiry")
	if err != nil {
		t.Fatal(err)
	}
	assertSurgical(t, d.Bytes(), nd.Bytes(), span)
	nd, _, err = nd.SetHeader(CurrentPhase, "build")
	if err != nil {
		t.Fatal(err)
	}
	want := "**Last Session:** 2026-11-20 — did things\n**Current Phase:** build\n**Next Action:** Task 7 — expiry\n"
	if !strings.Contains(string(nd.Bytes()), want) {
		t.Errorf("got:\n%s", nd.Bytes())
	}
	if v, ok := nd.Header(NextAction); !ok || v != "Task 7 — expiry" {
		t.Errorf("Header = %q %v", v, ok)
	}
}

func TestAppendItem(t *testing.T) {
	d := mustParse(t, sample)
	nd, span, err := d.AppendItem("2026-11-21: Keep Stripe Elements", SectionCriticalContext, SubsectionDecisions)
	if err != nil {
		t.Fatal(err)
	}
	assertSurgical(t, d.Bytes(), nd.Bytes(), span)
	if !strings.Contains(string(nd.Bytes()), "- 2026-11-18: Use Stripe\n- 2026-11-21: Keep Stripe Elements\n\n## Files") {
		t.Fatalf("got:\n%s", nd.Bytes())
	}
	same, span, _ := nd.AppendItem("2026-11-22: Keep Stripe Elements", SectionCriticalContext, SubsectionDecisions)
	if !bytes.Equal(same.Bytes(), nd.Bytes()) || span.Len != 0 {
		t.Errorf("a repeated decision was added again")
	}
	nd, _, err = nd.AppendItem("Card data never touches our servers", SectionCriticalContext, SubsectionAssumptions)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(nd.Bytes()), "- 2026-11-21: Keep Stripe Elements\n\n### Important Assumptions\n- Card data never touches our servers\n\n## Files") {
		t.Errorf("got:\n%s", nd.Bytes())
	}
	if _, _, err := nd.AppendItem("x", "No Such Section"); err == nil {
		t.Errorf("missing section: no error")
	}
}

func TestSetSessionEntry(t *testing.T) {
	d := mustParse(t, sample)
	nd, err := d.SetSessionEntry("s2", "Session 2 — 2026-11-21", "wired the form", false)
	if err != nil {
		t.Fatal(err)
	}
	nd, err = nd.SetSessionEntry("s2", "Session 2 — 2026-11-22", "added tests", false)
	if err != nil {
		t.Fatal(err)
	}
	nd, err = nd.SetSessionEntry("s2", "Session 2: wired the form, 2026-11-21", "added tests", true)
	if err != nil {
		t.Fatal(err)
	}
	want := "### Session 1 — 2026-11-19 <!-- ctx:session s1 -->\n- first\n\n### Session 2: wired the form, 2026-11-21 <!-- ctx:session s2 -->\n- wired the form\n- added tests\n\n## Critical"
	if !strings.Contains(string(nd.Bytes()), want) {
		t.Errorf("got:\n%s", nd.Bytes())
	}
	if strings.Count(string(nd.Bytes()), "ctx:session s2") != 1 {
		t.Errorf("entry duplicated")
	}
}

func TestEnsureSections(t *testing.T) {
	d := mustParse(t, sample)
	src := []byte("# T\n## Quick Context\nq\n## Session History\n## Critical Context to Remember\n### Key Decisions\n## Files Modified This Project\n## Loading Sequence for Resume\n## Quick Start Commands\n```bash\nctx load 1\n```\n## Compaction Detection\nc\n")
	rendered := 0
	tmpl := func() ([]byte, error) { rendered++; return src, nil }
	nd, added, err := d.EnsureSections(tmpl, "Quick Start Commands", "Compaction Detection", "Session History", "Critical Context to Remember")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(added, ",") != "Quick Start Commands,Compaction Detection" {
		t.Errorf("added %v", added)
	}
	if !strings.HasPrefix(string(nd.Bytes()), sample) {
		t.Errorf("existing bytes changed:\n%s", nd.Bytes())
	}
	if !strings.HasSuffix(string(nd.Bytes()), "A note the person wrote.\n\n## Quick Start Commands\n```bash\nctx load 1\n```\n\n## Compaction Detection\nc\n") {
		t.Errorf("got:\n%s", nd.Bytes())
	}
	// Only Session History missing: inserted between Quick Context and Critical Context.
	d = mustParse(t, "# T\n## Quick Context\nq\n\n## Critical Context to Remember\nx\n")
	nd, _, err = d.EnsureSections(tmpl, "Session History")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(nd.Bytes()), "# T\n## Quick Context\nq\n\n## Session History\n\n## Critical Context to Remember\nx\n") {
		t.Errorf("got:\n%s", nd.Bytes())
	}
	// A section that is not named is never added; one under another title or level is
	// recognised; a parent comes without its template subsections.
	d = mustParse(t, "# T\n### Sessions\n- s\n## Files changed\n- x\n")
	nd, added, err = d.EnsureSections(tmpl, "Session History", "Files Modified This Project", "Critical Context to Remember")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(added, ",") != "Critical Context to Remember" || !strings.Contains(string(nd.Bytes()), "## Critical Context to Remember\n") || strings.Contains(string(nd.Bytes()), "Key Decisions") {
		t.Errorf("added %v:\n%s", added, nd.Bytes())
	}
	// Nothing missing: the template is not rendered at all.
	before := rendered
	if _, _, err := nd.EnsureSections(tmpl, "Critical Context to Remember"); err != nil || rendered != before {
		t.Errorf("a document lacking nothing rendered the template (%d times), err %v", rendered-before, err)
	}
}

func TestSetFieldUnusualValues(t *testing.T) {
	tests := []struct {
		name, src, key string
		value          any
		want           string
	}{
		{"wrapped plain value", "---\ncurrent_section_name: Phase two of\n  the payment form\nnext_task_number: 7\n---\n", "current_section_name", "Phase 3",
			"---\ncurrent_section_name: Phase 3\nnext_task_number: 7\n---\n"},
		{"comment after a block value", "---\ncurrent_section_name: >-\n  Phase 2\n# keep: the person's note\nnext_task_number: 7\n---\n", "current_section_name", "Phase 3",
			"---\ncurrent_section_name: Phase 3\n# keep: the person's note\nnext_task_number: 7\n---\n"},
		{"anchor kept", "---\ncurrent_phase: &ph build\nalias_phase: *ph\n---\n", "current_phase", "review",
			"---\ncurrent_phase: &ph review\nalias_phase: *ph\n---\n"},
		{"plain value then a comment line", "---\ncurrent_phase: build\n# note\nsession_count: 1\n---\n", "current_phase", "review",
			"---\ncurrent_phase: review\n# note\nsession_count: 1\n---\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := mustParse(t, tt.src)
			nd, span, err := d.SetField(tt.key, tt.value)
			if err != nil {
				t.Fatal(err)
			}
			if string(nd.Bytes()) != tt.want {
				t.Errorf("got %q\nwant %q", nd.Bytes(), tt.want)
			}
			assertSurgical(t, d.Bytes(), nd.Bytes(), span)
		})
	}
}

func TestHeadersOnlyWhereCtxKeepsThem(t *testing.T) {
	src := "# Resume\n\n````md\n**Last Session:** an example in a four-backtick fence\n```bash\nnot a closing fence\n```\n````\n\n## Notes\n**Next Action:** a person's note in another section\n"
	d := mustParse(t, src)
	if _, ok := d.Header(LastSession); ok {
		t.Errorf("a header inside a code block was found")
	}
	if v, ok := d.Header(NextAction); !ok || v != "a person's note in another section" {
		t.Errorf("the hand-written bold line in a later section was not found: %q", v)
	}
	nd, _, err := d.SetHeader(LastSession, "2026-11-21 — real")
	if err != nil {
		t.Fatal(err)
	}
	// The missing line goes under the title, not into the code block, and the header
	// further down stays where it is.
	if !strings.HasPrefix(string(nd.Bytes()), "# Resume\n\n**Last Session:** 2026-11-21 — real\n\n````md\n") || !strings.HasSuffix(string(nd.Bytes()), "## Notes\n**Next Action:** a person's note in another section\n") {
		t.Errorf("got:\n%s", nd.Bytes())
	}
	if !strings.Contains(string(nd.Bytes()), "**Next Action:** a person's note in another section\n") {
		t.Errorf("the person's line changed")
	}
	// It is edited where it is; no second line appears.
	nd2, _, err := nd.SetHeader(NextAction, "ship")
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Count(string(nd2.Bytes()), "Next Action:"); got != 1 || !strings.HasSuffix(string(nd2.Bytes()), "**Next Action:** ship\n") {
		t.Errorf("got %d Next Action lines:\n%s", got, nd2.Bytes())
	}
}

func TestSetHeaderKeepsTheDocumentsForm(t *testing.T) {
	tests := []struct{ name, src, label, value, want string }{
		{"blockquote proposal header", "# R\n\n> **Last Session**: old\n> **Current Phase**: build\n> **Next Action**: old next\n\n## Quick Context\n",
			NextAction, "new next", "# R\n\n> **Last Session**: old\n> **Current Phase**: build\n> **Next Action**: new next\n\n## Quick Context\n"},
		{"missing line in the blockquote's form", "# R\n\n> **Last Session**: old\n> **Next Action**: n\n\n## Quick Context\n",
			CurrentPhase, "review", "# R\n\n> **Last Session**: old\n> **Current Phase**: review\n> **Next Action**: n\n\n## Quick Context\n"},
		{"plain line above the first heading", "Next action: call Sam\n\n# R\n",
			NextAction, "write docs", "Next action: write docs\n\n# R\n"},
		// A list item is the person's, whatever it says: the header goes under the title.
		{"a list item is not a header", "# R\n## Status\n- **Next Action**: n\n",
			LastSession, "today", "# R\n\n**Last Session:** today\n\n## Status\n- **Next Action**: n\n"},
		{"bold wrapping the whole line", "# R\n**Next Action: old**\n", NextAction, "new", "# R\n**Next Action: new**\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := mustParse(t, tt.src)
			nd, span, err := d.SetHeader(tt.label, tt.value)
			if err != nil {
				t.Fatal(err)
			}
			if string(nd.Bytes()) != tt.want {
				t.Errorf("got  %q\nwant %q", nd.Bytes(), tt.want)
			}
			assertSurgical(t, d.Bytes(), nd.Bytes(), span)
		})
	}
}

func TestSessionHeadingKeepsAPersonsWords(t *testing.T) {
	src := "## Session History\n### Session 4 — 2026-11-21 (paired with Sam) <!-- ctx:session s8 -->\n- a\n"
	d := mustParse(t, src)
	nd, err := d.SetSessionEntry("s8", "Session 4 — 2026-11-22", "b", false)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(nd.Bytes()), "(paired with Sam) <!-- ctx:session s8 -->\n- a\n- b\n") {
		t.Errorf("got:\n%s", nd.Bytes())
	}
	closed, err := nd.SetSessionEntry("s8", "Session 4: done, 2026-11-22", "", true)
	if err != nil || !strings.Contains(string(closed.Bytes()), "### Session 4: done, 2026-11-22 <!-- ctx:session s8 -->") {
		t.Errorf("close: %v\n%s", err, closed.Bytes())
	}
}

// BlockContent (for the tests) returns the lines between the ctx markers name in the section, and
// whether the block exists.
func (d *Document) BlockContent(title, name string) (string, bool) {
	s, ok := markdown.Find(d.Sections(), title)
	if !ok {
		return "", false
	}
	body := string(d.src[s.BodyStart:s.End])
	b := strings.Index(body, blockBegin(name))
	if b < 0 {
		return "", false
	}
	rest := body[b+len(blockBegin(name)):]
	e := strings.Index(rest, blockEnd(name))
	if e < 0 {
		return "", false
	}
	return strings.TrimPrefix(strings.TrimPrefix(rest[:e], "\r"), "\n"), true
}
