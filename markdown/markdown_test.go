package markdown

import (
	"bytes"
	"strings"
	"testing"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	extast "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/text"
)

func TestTasksGrammar(t *testing.T) {
	tests := []struct {
		name      string
		src       string
		total     int
		done      int
		firstOpen string
	}{
		{"dash", "- [ ] a\n- [x] b\n", 2, 1, "a"},
		{"star and plus", "* [X] a\n+ [ ] b\n", 2, 1, "b"},
		{"ordered", "1. [x] a\n2. [ ] b\n", 2, 1, "b"},
		{"nested", "- [x] a\n  - [ ] b\n", 2, 1, "b"},
		{"fenced code is not tasks", "```\n- [ ] no\n```\n- [ ] yes\n", 1, 0, "yes"},
		{"tilde fence", "~~~md\n- [x] no\n~~~\n", 0, 0, ""},
		{"indented code is not tasks", "para\n\n    - [ ] no\n", 0, 0, ""},
		{"not a list item", "[ ] no\ntext [x] no\n", 0, 0, ""},
		{"frontmatter is not tasks", "---\nx: |\n  - [ ] no\n---\n- [ ] yes\n", 1, 0, "yes"},
		{"crlf", "- [x] a\r\n- [ ] b\r\n", 2, 1, "b"},
		{"bom", "\ufeff- [ ] a\n", 1, 0, "a"},
		{"html block", "<div>\n- [ ] no\n</div>\n", 0, 0, ""},
		{"empty", "", 0, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tasks := Tasks([]byte(tt.src))
			done, open := 0, ""
			for _, task := range tasks {
				if task.Done {
					done++
				} else if open == "" {
					open = task.Text
				}
			}
			if len(tasks) != tt.total || done != tt.done || open != tt.firstOpen {
				t.Errorf("got total %d done %d first open %q; want %d %d %q", len(tasks), done, open, tt.total, tt.done, tt.firstOpen)
			}
		})
	}
}

func TestTaskSectionAndLine(t *testing.T) {
	src := "---\na: 1\n---\n# Steps\n- [ ] intro\n## Phase 1: Setup\n- [x] one\n### Detail\n- [ ] two\n## Phase 2: Build\n- [ ] three\n"
	tasks := Tasks([]byte(src))
	want := []struct {
		line    int
		section Heading
	}{
		{5, Heading{0, "Steps"}},
		{7, Heading{1, "Phase 1: Setup"}},
		{9, Heading{1, "Detail"}},
		{11, Heading{2, "Phase 2: Build"}},
	}
	if len(tasks) != len(want) {
		t.Fatalf("got %d tasks, want %d", len(tasks), len(want))
	}
	for i, w := range want {
		if tasks[i].Line != w.line || tasks[i].Section != w.section || tasks[i].Number != i+1 {
			t.Errorf("task %d: got line %d section %+v number %d; want line %d section %+v", i, tasks[i].Line, tasks[i].Section, tasks[i].Number, w.line, w.section)
		}
	}
}

func TestSections(t *testing.T) {
	src := "---\na: 1\n---\n# Title\nintro\n## One\nbody one\n```\n## not a heading\n```\n##\n## Two ##\n### Sub\nsub body\n\nSetext\n------\nlast\n"
	got := Sections([]byte(src))
	want := []struct {
		level int
		title string
		body  string
	}{
		{1, "Title", "intro\n## One\nbody one\n```\n## not a heading\n```\n##\n## Two ##\n### Sub\nsub body\n\nSetext\n------\nlast\n"},
		{2, "One", "body one\n```\n## not a heading\n```\n"},
		{2, "", ""},
		{2, "Two", "### Sub\nsub body\n\n"},
		{3, "Sub", "sub body\n\n"},
		{2, "Setext", "last\n"},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d sections, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		if got[i].Level != w.level || got[i].Title != w.title || string(got[i].Body([]byte(src))) != w.body {
			t.Errorf("section %d: got %d %q %q; want %d %q %q", i, got[i].Level, got[i].Title, got[i].Body([]byte(src)), w.level, w.title, w.body)
		}
	}
	if s, ok := Find(got, " two "); !ok || s.Title != "Two" {
		t.Errorf("Find(two) = %+v, %v", s, ok)
	}
}

func TestReadFrontmatter(t *testing.T) {
	tests := []struct {
		name    string
		src     string
		present bool
		key     string
		value   any
		err     string
	}{
		{"plain", "---\nname: A\n---\nbody", true, "name", "A", ""},
		{"bom and crlf", "\ufeff---\r\nname: B\r\n---\r\nbody", true, "name", "B", ""},
		{"dates stay strings", "---\ncreated: 2026-01-02\n---\n", true, "created", "2026-01-02", ""},
		{"numbers", "---\nn: 3\n---\n", true, "n", int64(3), ""},
		{"none", "# Title\n", false, "", nil, ""},
		{"empty", "---\n---\nbody", true, "", nil, ""},
		{"unclosed", "---\nname: A\n", false, "", nil, "1: frontmatter: no closing --- line"},
		{"bad yaml line", "\n---\nname: A\nx: y: z\n---\n", false, "", nil, "4: frontmatter: mapping values are not allowed"},
		{"not a mapping", "---\n- a\n---\n", false, "", nil, "frontmatter: expected key: value lines"},
		// The opening --- deleted by hand: refused, not read as text (a writer would add
		// a second frontmatter above it).
		{"no opening", "name: A\nstatus: DONE\nfiles:\n  - a.md\n- b.md\n---\nbody\n", false, "", nil, "6: frontmatter: this --- closes key: value lines that no --- opens"},
		// Text that only looks a little like it stays text.
		{"setext heading", "Title: a subtitle\n---\nbody\n", false, "", nil, ""},
		{"prose then a rule", "Note: first\nand more prose\n---\n", false, "", nil, ""},
		{"keys then a blank line", "a: 1\nb: 2\n\n---\n", false, "", nil, ""},
		{"alias bomb", "---\na: &a [x,x,x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d,*d]\nf: [*e,*e,*e,*e,*e,*e,*e,*e,*e,*e]\n---\n", false, "", nil, "too many values"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fm, err := ReadFrontmatter([]byte(tt.src))
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want it to contain %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if fm.Present != tt.present {
				t.Errorf("present = %v, want %v", fm.Present, tt.present)
			}
			if tt.key != "" && fm.Values[tt.key] != tt.value {
				t.Errorf("%s = %#v, want %#v", tt.key, fm.Values[tt.key], tt.value)
			}
		})
	}
}

func FuzzReadFrontmatter(f *testing.F) {
	for _, seed := range []string{"---\nname: A\n---\nbody", "\ufeff---\r\na: [1, 2]\r\n---\r\n", "---\n", "---\n---\n", "x", "---\na: &a [*a]\n---\n"} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fm, err := ReadFrontmatter(data)
		if err != nil {
			return
		}
		if len(fm.Body) > len(data) {
			t.Fatalf("body longer than input")
		}
		if !bytes.HasSuffix(data, fm.Body) {
			t.Fatalf("body is not a suffix of the input")
		}
		if fm.Present && fm.Values == nil {
			t.Fatalf("present frontmatter without values")
		}
	})
}

func FuzzTasks(f *testing.F) {
	for _, seed := range []string{"- [ ] a\n- [x] b\n", "1. [X] a\n   * [ ] b\n```\n- [ ] c\n```\n", "---\nx: 1\n---\n+ [ ] y", "\ufeff# h\n- [ ]"} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		tasks := Tasks(data)
		lines := bytes.Count(data, []byte("\n")) + 1
		if len(tasks) > bytes.Count(data, []byte("[")) {
			t.Fatalf("%d tasks from %d brackets", len(tasks), bytes.Count(data, []byte("[")))
		}
		for i, task := range tasks {
			if task.Number != i+1 || task.Line < 1 || task.Line > lines {
				t.Fatalf("task %d: number %d line %d of %d", i, task.Number, task.Line, lines)
			}
		}
	})
}

func FuzzSections(f *testing.F) {
	for _, seed := range []string{"# a\n## b\ntext\n", "##\n", "a\n---\n", "```\n## x\n```\n## y", "---\na: 1\n---\n# t"} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		prev := 0
		for _, s := range Sections(data) {
			if s.Start < prev || s.Start > s.BodyStart || s.BodyStart > s.End || s.End > len(data) {
				t.Fatalf("bad span %+v (prev %d, len %d)", s, prev, len(data))
			}
			prev = s.Start
		}
	})
}

// FuzzTasksMatchGoldmark checks ctx's checkbox parser against goldmark's own task-list
// extension: the same tasks, in the same state, on the same lines.
func FuzzTasksMatchGoldmark(f *testing.F) {
	for _, seed := range []string{"- [0]\n- # [X]000", "- [ ] a\n- [x] b\n", "1. [X] a\n   * [\t] b\n", "- [y] no\n- [ ]\n- []\n", "> - [ ] quoted\n", "- a\n  - [x] nested\n"} {
		f.Add([]byte(seed))
	}
	reference := goldmark.New(goldmark.WithExtensions(extension.TaskList)).Parser()
	f.Fuzz(func(t *testing.T, src []byte) {
		type task struct {
			line int
			done bool
		}
		var want []task
		doc := reference.Parse(text.NewReader(src))
		lines := newLineIndex(src)
		_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
			// A checkbox opening a heading ("- # [x] a") is a heading's text, not a task,
			// to ctx as to GitHub; goldmark's extension marks it, so it is left out.
			if _, inHeading := n.Parent().(*ast.Heading); inHeading {
				return ast.WalkContinue, nil
			}
			if cb, ok := n.(*extast.TaskCheckBox); ok && entering {
				l := 0
				if seg := cb.Parent().Lines(); seg.Len() > 0 {
					l = lines.lineOf(seg.At(0).Start)
				}
				want = append(want, task{l, cb.IsChecked})
			}
			return ast.WalkContinue, nil
		})
		var got []task
		for _, tk := range Tasks(src) {
			got = append(got, task{tk.Line, tk.Done})
		}
		if FindFrontmatter(src).Open != 0 || bytes.HasPrefix(src, bom) {
			return // ctx blanks a frontmatter and a BOM first; the reference does not
		}
		if len(got) != len(want) {
			t.Fatalf("%d tasks, goldmark's extension finds %d in %q", len(got), len(want), src)
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("task %d: %+v, goldmark's extension: %+v in %q", i, got[i], want[i], src)
			}
		}
	})
}

func TestDocumentParsesOnce(t *testing.T) {
	src := []byte("---\na: 1\n---\n# T\n**Next Action:** x\n## Session History\n- y\n```\n## no\n```\n")
	before := Parses()
	d := Parse(src)
	for range 3 {
		_ = d.Sections()
		_ = d.Lines()
		_ = d.Sections()
	}
	if got := Parses() - before; got != 1 {
		t.Errorf("%d parses, want 1", got)
	}
	if len(d.Sections()) != 2 || d.FM.String("a") != "1" || d.FM.Node == nil {
		t.Errorf("sections %+v, fm %+v", d.Sections(), d.FM)
	}
}
