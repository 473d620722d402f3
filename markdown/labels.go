package markdown

import (
	"regexp"
	"strings"
	"sync"
)

// Label is a "**Name:** value" line at the head of a document, such as the Quick Context
// lines of a save point. Offsets are into the source given to FindLabel.
type Label struct {
	Start      int // the start of the line's match
	ValueStart int
	ValueEnd   int // the end of the value, before the line ending
}

var labelREs sync.Map // name → *regexp.Regexp

func labelRE(name string) *regexp.Regexp {
	if re, ok := labelREs.Load(name); ok {
		return re.(*regexp.Regexp)
	}
	q := regexp.QuoteMeta(name)
	// "**Name:** v", "**Name**: v", "- **Name:** v" and plain "Name: v".
	re := regexp.MustCompile(`(?im)^([ \t]*(?:[-*+][ \t]+)?(?:\*\*)?[ \t]*` + q + `[ \t]*(?::[ \t]*(?:\*\*)?|\*\*[ \t]*:)[ \t]?)([^\r\n]*)`)
	labelREs.Store(name, re)
	return re
}

// FindLabel finds the first name line where such lines live: between the frontmatter
// and the first level-2 heading, or inside the level-2 section titled inSection; never
// in a code block. The writer and the reader of a save point both find it here.
func FindLabel(src []byte, name, inSection string) (Label, bool) {
	start := FrontmatterEnd(src)
	end := len(src)
	for _, s := range Sections(src) {
		if s.Level != 2 {
			continue
		}
		end = s.Start
		if strings.EqualFold(s.Title, inSection) {
			end = s.End
		}
		break
	}
	if end <= start {
		return Label{}, false
	}
	code := CodeBlocks(src)
	for _, loc := range labelRE(name).FindAllSubmatchIndex(src[start:end], -1) {
		if !InCode(code, start+loc[0], start+loc[1]) {
			return Label{Start: start + loc[0], ValueStart: start + loc[4], ValueEnd: start + loc[5]}, true
		}
	}
	return Label{}, false
}

// InCode reports whether the bytes [start, end) touch one of the code ranges that
// CodeBlocks returned. Overlap, not a start inside: goldmark's segment of an indented
// code line begins after its indentation.
func InCode(code [][2]int, start, end int) bool {
	for _, c := range code {
		if start < c[1] && c[0] < end {
			return true
		}
	}
	return false
}
