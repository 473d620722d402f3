package resume_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/txtar"

	"github.com/ctxtools/ctx/loader"
	"github.com/ctxtools/ctx/markdown"
	"github.com/ctxtools/ctx/resume"
)

// TestRealShapedCorpus loads and saves each workspace of testdata/corpus/*.txtar, built
// from what real save points show. The archive's comment says what the load must
// report ("next:", "phase:", "reads:" relative to the project, "problem:"); then save,
// save again and close must keep every line ctx does not own, the second save must
// change nothing, and no template section ctx has nothing to write into may appear.
func TestRealShapedCorpus(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "corpus", "*.txtar"))
	if len(files) == 0 {
		t.Fatal("no corpus")
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			ar, err := txtar.ParseFile(file)
			if err != nil {
				t.Fatal(err)
			}
			want := expectations(string(ar.Comment))
			root := t.TempDir()
			for _, f := range ar.Files {
				path := filepath.Join(root, filepath.FromSlash(f.Name))
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, f.Data, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			ws, err := loader.Open(root)
			if err != nil {
				t.Fatal(err)
			}
			p, err := ws.Resolve("1")
			if err != nil {
				t.Fatal(err)
			}
			before := markdown.Parses()
			res := ws.Load(p, loader.LoadOptions{})
			if parses := markdown.Parses() - before; parses > 2 {
				t.Errorf("load parsed the save point %d times", parses)
			}
			if res.Resume.NextAction != want["next"] {
				t.Errorf("next action %q, want %q", res.Resume.NextAction, want["next"])
			}
			if res.Resume.CurrentPhase != want["phase"] {
				t.Errorf("phase %q, want %q", res.Resume.CurrentPhase, want["phase"])
			}
			var reads []string
			for _, r := range res.RecommendedReads {
				reads = append(reads, strings.TrimPrefix(r.Path, p.Path+"/"))
			}
			if got := strings.Join(reads, " "); got != want["reads"] {
				t.Errorf("reads %q\nwant  %q", got, want["reads"])
			}
			if w := want["problem"]; w != "" && !strings.Contains(strings.Join(p.Problems, "\n"), w) {
				t.Errorf("problems %q lack %q", p.Problems, w)
			}

			original, _ := os.ReadFile(filepath.Join(root, res.Resume.Path))
			canonical := ws.ResumePath(p)
			now := time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC)
			save := func(c resume.Change) string {
				t.Helper()
				c.Now, c.SessionKey, c.Trigger = now, "s1", "save"
				p2, err := ws.Resolve("1")
				if err != nil {
					t.Fatal(err)
				}
				if _, err := ws.Save(p2, c); err != nil {
					t.Fatalf("save: %v", err)
				}
				out, err := os.ReadFile(canonical)
				if err != nil {
					t.Fatal(err)
				}
				return string(out)
			}
			first := save(resume.Change{Summary: "corpus save"})
			if os.Getenv("CORPUS_DUMP") != "" {
				t.Logf("after save:\n%s", first)
			}
			second := save(resume.Change{Summary: "corpus save"})
			if first != second {
				t.Errorf("a second save with nothing new changed the document:\n%s", lineDiff(first, second))
			}
			// A person's header lines stay through saves that bring nothing new for them.
			p3, _ := ws.Resolve("1")
			again := ws.ReadResume(p3)
			if again.NextAction != want["next"] && !strings.HasPrefix(want["next"], "Task ") {
				t.Errorf("after a save, next action %q, want %q", again.NextAction, want["next"])
			}
			if want["phase"] != "" && again.CurrentPhase != want["phase"] {
				t.Errorf("after a save, phase %q, want %q", again.CurrentPhase, want["phase"])
			}
			closed := save(resume.Change{Summary: "corpus save", Close: true})
			if os.Getenv("CORPUS_DUMP") != "" {
				t.Logf("after close:\n%s", closed)
			}
			for name, doc := range map[string]string{"save": first, "close": closed} {
				assertKept(t, name, string(original), doc)
				for _, label := range []string{resume.LastSession, resume.CurrentPhase, resume.NextAction} {
					if n, was := countHeader(doc, label), countHeader(string(original), label); n > max(was, 1) {
						t.Errorf("%s: %d %q header lines (the file had %d)", name, n, label, was)
					}
				}
				for _, title := range []string{"Quick Start Commands", "Resume State Update Checklist", "Important Assumptions", "Blockers/Risks"} {
					if strings.Count(doc, "# "+title) > strings.Count(string(original), "# "+title) {
						t.Errorf("%s: added the template's empty %q", name, title)
					}
				}
			}
		})
	}
}

func expectations(comment string) map[string]string {
	out := map[string]string{}
	for _, line := range strings.Split(comment, "\n") {
		for _, key := range []string{"next", "phase", "reads", "problem"} {
			if v, ok := strings.CutPrefix(line, key+":"); ok {
				out[key] = strings.TrimSpace(v)
			}
		}
	}
	return out
}

var headerLineRE = regexp.MustCompile(`(?i)^[ \t>*+-]*\**[ \t]*(last session|current phase|next action)[ \t]*\**[ \t]*:`)

// ownedByCtx reports whether a line is one a save may rewrite: ctx's frontmatter
// fields and the Quick Context header lines, in any of their forms.
func ownedByCtx(line string) bool {
	for _, k := range resume.FrontmatterKeys {
		if strings.HasPrefix(strings.TrimSpace(line), k+":") {
			return true
		}
	}
	return headerLineRE.MatchString(line)
}

// assertKept checks that every line of before that ctx does not own is in after, in
// the same order.
func assertKept(t *testing.T, name, before, after string) {
	t.Helper()
	rest := after
	for _, line := range strings.SplitAfter(before, "\n") {
		if ownedByCtx(line) || strings.TrimSpace(line) == "" {
			continue
		}
		i := strings.Index(rest, line)
		if i < 0 {
			t.Errorf("%s: line lost or moved: %q\n%s", name, line, after)
			return
		}
		rest = rest[i+len(line):]
	}
}

func countHeader(doc, label string) int {
	n := 0
	for _, line := range strings.Split(doc, "\n") {
		if m := headerLineRE.FindStringSubmatch(line); m != nil && strings.EqualFold(m[1], label) {
			n++
		}
	}
	return n
}

func lineDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	var out []string
	for i := 0; i < max(len(al), len(bl)); i++ {
		var x, y string
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if x != y {
			out = append(out, "- "+x, "+ "+y)
		}
	}
	return strings.Join(out, "\n")
}
