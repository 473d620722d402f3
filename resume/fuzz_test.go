package resume

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"
)

func fuzzSeeds(f *testing.F) {
	for _, seed := range []string{
		sample,
		"---\r\na: 1\r\n---\r\n## Session History\r\n- x\r\n",
		"\ufeff---\nkey: 'q'\n---\n# T\n",
		"# No frontmatter\n## Files Modified This Project\n",
		"---\nx: |\n  block\ny: [1, 2]\n---\n```\n## Loading Sequence for Resume\n```\n## Loading Sequence for Resume\n",
		"---\n---\n",
	} {
		f.Add([]byte(seed), "session_count", "value", uint8(0))
	}
}

// FuzzEdits checks every edit primitive: outside the span it reports, the bytes are
// identical, and the result still parses.
func FuzzEdits(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, src []byte, key, value string, op uint8) {
		d, err := Parse(src)
		if err != nil {
			return
		}
		if !utf8.ValidString(value) || !utf8.ValidString(key) {
			return
		}
		nd, span, err := fuzzEdit(d, key, value, op)
		var stats inPlaceStats
		stats.check(t, d, nd, err, func(d *Document) (*Document, error) {
			nd, _, err := fuzzEdit(d, key, value, op)
			return nd, err
		})
		if err == nil && op%4 == 0 {
			if got := nd.Frontmatter()[safeKey(key)]; got != value {
				t.Fatalf("SetField(%q, %q) reads back %#v\n%s", safeKey(key), value, got, nd.Bytes())
			}
		}
		if err != nil {
			return
		}
		old, cur := d.Bytes(), nd.Bytes()
		if !bytes.Equal(old[:span.Start], cur[:span.Start]) || !bytes.Equal(old[span.End:], cur[span.Start+span.Len:]) {
			t.Fatalf("op %d changed bytes outside %+v:\nold %q\nnew %q", op%4, span, old, cur)
		}
		if _, err := Parse(cur); err != nil {
			t.Fatalf("op %d produced a document that does not parse: %v\n%q", op%4, err, cur)
		}
	})
}

// fuzzEdit makes one of FuzzEdits' edits.
func fuzzEdit(d *Document, key, value string, op uint8) (*Document, Span, error) {
	switch op % 4 {
	case 0:
		return d.SetField(safeKey(key), value)
	case 1:
		return d.AppendItem(value, SectionFilesModified)
	case 2:
		return d.ReplaceBlock(SectionLoadingSequence, "loading-sequence", oneLine(value)+"\n")
	}
	return d.SetHeader(NextAction, value)
}

func safeKey(k string) string {
	var b strings.Builder
	for _, r := range k {
		if r >= 'a' && r <= 'z' || r == '_' {
			b.WriteRune(r)
		}
	}
	if b.Len() == 0 {
		return "k"
	}
	return b.String()
}
