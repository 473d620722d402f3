package resume

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"
)

// realShaped returns the save points of the corpus, plus documents that hold what is
// hardest to leave alone: fenced code with ctx's own markers and header lines, and YAML
// comments after multi-line values.
func realShaped(t testing.TB) map[string][]byte {
	docs := map[string][]byte{
		"fenced markers": []byte("---\nresume_version: 3\nnotes: >\n  folded\n  text\n# after a folded value\nsession_count: 1 # counted\n---\n# R\n\n**Next Action:** real\n\n" +
			"## Loading Sequence for Resume\n```md\n<!-- ctx:begin loading-sequence -->\n**Next Action:** fake\n## Session History\n<!-- ctx:end loading-sequence -->\n```\n\n## Compaction Detection\n    <!-- ctx:begin compaction -->\n    indented code\n"),
		"yaml comments": []byte("---\nlist:\n  - a\n  - b\n# comment after a list\nblock: |\n  x\n\n  y\n# comment after a block\nlast_updated: 2026-01-01 # when\n---\n> **Next Action**: quoted\n\n## Key Decisions\n- one\n"),
	}
	files, _ := filepath.Glob(filepath.Join("testdata", "corpus", "*.txtar"))
	for _, file := range files {
		ar, err := txtar.ParseFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range ar.Files {
			if strings.HasSuffix(f.Name, "_resume.md") || strings.HasSuffix(f.Name, "resume-context.md") {
				docs[filepath.Base(file)+":"+f.Name] = f.Data
			}
		}
	}
	return docs
}

// randomEdit applies one random edit of a save: a frontmatter field, a header line, an
// item, a marked block, a session entry.
func randomEdit(r *rand.Rand, d *Document) (*Document, Span, bool, error) {
	values := []string{"x", "", "a: b", "## not a heading", "```", "<!-- ctx:end compaction -->", "line\nbreak", "'quoted'", "#", "- [ ] task", "é ü", "2026-11-21"}
	v := values[r.Intn(len(values))] + fmt.Sprint(r.Intn(3))
	switch r.Intn(6) {
	case 0:
		nd, span, err := d.SetField(FrontmatterKeys[r.Intn(len(FrontmatterKeys))], v)
		return nd, span, true, err
	case 1:
		nd, span, err := d.SetField(FrontmatterKeys[r.Intn(len(FrontmatterKeys))], r.Intn(1000))
		return nd, span, true, err
	case 2:
		nd, span, err := d.SetHeader(headerLabels[r.Intn(len(headerLabels))], v)
		return nd, span, true, err
	case 3:
		paths := [][]string{{SectionFilesModified}, {SectionCriticalContext, SubsectionDecisions}, {SectionCriticalContext, SubsectionBlockers}}
		nd, span, err := d.AppendItem(v, paths[r.Intn(len(paths))]...)
		return nd, span, true, err
	case 4:
		blocks := [][2]string{{SectionLoadingSequence, "loading-sequence"}, {SectionCompaction, "compaction"}}
		b := blocks[r.Intn(len(blocks))]
		nd, span, err := d.ReplaceBlock(b[0], b[1], oneLine(v)+"\n")
		return nd, span, true, err
	default:
		nd, err := d.SetSessionEntry(fmt.Sprintf("s%d", r.Intn(3)), "Session 1 — 2026-11-21", v, r.Intn(2) == 0)
		return nd, Span{}, false, err
	}
}

// TestRandomEditsKeepEveryByte runs 10,000 random edits over real-shaped save points:
// each edit changes bytes only inside the span it reports, and after any run of edits
// every line ctx does not own is still there, in order.
func TestRandomEditsKeepEveryByte(t *testing.T) {
	docs := realShaped(t)
	names := make([]string, 0, len(docs))
	for n := range docs {
		names = append(names, n)
	}
	r := rand.New(rand.NewSource(13))
	const edits = 10_000
	var cur *Document
	var original []byte
	var inPlace inPlaceStats
	defer func() {
		t.Logf("in place: %d edits followed, %d refused (parsed instead)", inPlace.followed, inPlace.refused)
	}()
	for i := 0; i < edits; i++ {
		if i%40 == 0 {
			name := names[(i/40)%len(names)]
			original = docs[name]
			var err error
			if cur, err = Parse(original); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			sanity(t, cur)
		}
		seed := r.Int63()
		nd, span, hasSpan, err := randomEdit(rand.New(rand.NewSource(seed)), cur)
		inPlace.check(t, cur, nd, err, func(d *Document) (*Document, error) {
			nd, _, _, err := randomEdit(rand.New(rand.NewSource(seed)), d)
			return nd, err
		})
		if err != nil {
			continue // an edit ctx refuses leaves the document as it was
		}
		if hasSpan {
			old, next := cur.Bytes(), nd.Bytes()
			if !bytes.Equal(old[:span.Start], next[:span.Start]) || !bytes.Equal(old[span.End:], next[span.Start+span.Len:]) {
				t.Fatalf("edit %d changed bytes outside %+v:\nold %q\nnew %q", i, span, old, next)
			}
		}
		if _, err := Parse(nd.Bytes()); err != nil {
			t.Fatalf("edit %d left a document that does not parse: %v\n%s", i, err, nd.Bytes())
		}
		cur = nd
		assertKept(t, fmt.Sprintf("edit %d", i), string(original), string(cur.Bytes()))
		if t.Failed() {
			t.FailNow()
		}
	}
}

func sanity(t *testing.T, d *Document) {
	t.Helper()
	if len(d.Bytes()) == 0 {
		t.Fatal("empty document")
	}
}

// FuzzRealShapedEdits is the same invariant under the fuzzer's inputs: the seed corpus
// is the real-shaped documents.
func FuzzRealShapedEdits(f *testing.F) {
	for _, doc := range realShaped(f) {
		f.Add(doc, int64(1))
	}
	f.Fuzz(func(t *testing.T, src []byte, seed int64) {
		d, err := Parse(src)
		if err != nil {
			return
		}
		r := rand.New(rand.NewSource(seed))
		var inPlace inPlaceStats
		for range 5 {
			editSeed := r.Int63()
			nd, span, hasSpan, err := randomEdit(rand.New(rand.NewSource(editSeed)), d)
			inPlace.check(t, d, nd, err, func(d *Document) (*Document, error) {
				nd, _, _, err := randomEdit(rand.New(rand.NewSource(editSeed)), d)
				return nd, err
			})
			if err != nil {
				return
			}
			if hasSpan {
				old, next := d.Bytes(), nd.Bytes()
				if !bytes.Equal(old[:span.Start], next[:span.Start]) || !bytes.Equal(old[span.End:], next[span.Start+span.Len:]) {
					t.Fatalf("changed bytes outside %+v:\nold %q\nnew %q", span, old, next)
				}
			}
			d = nd
		}
	})
}

// inPlaceStats counts the edits made in place that check found equal to a parse.
type inPlaceStats struct{ followed, refused int }

// check makes edit to d edited in place and compares it with the same edit made with
// a parse (exact, exactErr): the in-place edit either refuses (errNeedsParse) or gives
// the same bytes and a model equal to a parse of them.
func (s *inPlaceStats) check(t testing.TB, d, exact *Document, exactErr error, edit func(*Document) (*Document, error)) {
	t.Helper()
	got, err := edit(d.editedInPlace())
	switch {
	case errors.Is(err, errNeedsParse):
		s.refused++
		return
	case err != nil && exactErr == nil:
		t.Fatalf("in place: %v; with a parse: no error\n%q", err, d.Bytes())
	case err != nil:
		return
	case exactErr != nil:
		// The exact edit's parse refused the result; the save's verify must too.
		if _, err := got.verify(); err == nil {
			t.Fatalf("in place: no error; with a parse: %v; verify accepts\n%q", exactErr, got.Bytes())
		}
		return
	}
	if !bytes.Equal(got.Bytes(), exact.Bytes()) {
		t.Fatalf("in place gives other bytes:\n%q\nwith a parse:\n%q", got.Bytes(), exact.Bytes())
	}
	if _, err := got.verify(); err != nil {
		t.Fatalf("in-place model differs from a parse: %v\nbefore %q\nafter  %q", err, d.Bytes(), got.Bytes())
	}
	s.followed++
}
