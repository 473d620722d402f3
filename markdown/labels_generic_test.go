package markdown

import (
	"testing"
	"unicode/utf8"
)

var labelCorpus = []string{
	"Next Action: write it\n",
	"**Next Action:** write it\n",
	"**Next Action**: write it\n",
	"- **Next Action:** write it\n",
	"> - Next Action : spaced\n",
	"Next Action**: odd bold\n",
	"Status: Next Action: not at the start\n",
	"- [ ] Next Action: a task\n",
	"*Next Action*: italic\n",
	"next action: lower case\n",
	"NEXT ACTION:upper\n",
	"Next Actions: another name\n",
	"Next Action: one: two\n",
	"**Status:** **Next Action:** two on a line\n",
	"```\nNext Action: in code\n```\nNext Action: after code\n",
	"intro\n\n## Quick Context\n\n**Next Action:** in a section\n",
	"## Other\n\nNext Action: plain after a heading\n**Next Action:** bold later\n",
	"Next Action:\n",
	"  \t> >  + ** Next Action ** : x\n",
	"Next Action\t:\tx\r\nLast Session: y\r\n",
	"Status : x\n",
}

func TestGenericLabelsFindWhatOwnPatternsFind(t *testing.T) {
	for _, name := range []string{"Next Action", "Last Session", "Current Phase", "Status", "Status "} {
		for _, doc := range labelCorpus {
			compareLabels(t, doc, name)
		}
	}
}

func compareLabels(t *testing.T, doc, name string) {
	t.Helper()
	src := []byte(doc)
	sections, code := structure(src)
	// The reference: the name's own patterns, as findLabel used before the generic ones.
	want, wantOK := findLabelWith(src, sections, code, labelPatterns(name), "", "Quick Context")
	got, gotOK := findLabel(src, sections, code, name, "Quick Context")
	if want != got || wantOK != gotOK {
		t.Errorf("%q in %q: generic %+v %v, own pattern %+v %v", name, doc, got, gotOK, want, wantOK)
	}
}

func FuzzGenericLabels(f *testing.F) {
	for _, doc := range labelCorpus {
		f.Add(doc, "Next Action")
	}
	f.Fuzz(func(t *testing.T, doc, name string) {
		if !genericName(name) || len(name) > 40 || !utf8.ValidString(name) {
			return
		}
		compareLabels(t, doc, name)
	})
}
