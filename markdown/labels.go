package markdown

import (
	"bytes"
	"regexp"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// Label is a "**Name:** value" line of a document, such as the Quick Context lines of
// a save point. Offsets are into the source given to FindLabel; src[Start:NameStart]
// and src[NameEnd:ValueStart] are the line's own form (a blockquote, a list marker,
// bold), which a writer keeps.
type Label struct {
	Start      int // the start of the line
	NameStart  int
	NameEnd    int
	ValueStart int
	ValueEnd   int // the end of the value, before the line ending
}

type labelRegexps struct{ any, bold *regexp.Regexp }

var labelREs sync.Map // name → labelRegexps

// The forms people write, each optionally quoted ("> ") and as a list item ("- "):
// "**Name:** v", "**Name**: v", and, where header lines live, plain "Name: v".
const (
	labelLead = `^([ \t]*(?:>[ \t]?)*[ \t]*(?:[-*+][ \t]+)?`
	labelTail = `)([^\r\n]*)`
)

// labelPatterns builds the patterns of one name. findLabel uses them only for a name
// the generic patterns cannot stand for.
func labelPatterns(name string) labelRegexps {
	if re, ok := labelREs.Load(name); ok {
		return re.(labelRegexps)
	}
	p := compileLabel("(" + regexp.QuoteMeta(name) + ")")
	labelREs.Store(name, p)
	return p
}

func compileLabel(name string) labelRegexps {
	return labelRegexps{
		any:  regexp.MustCompile(`(?im)` + labelLead + `(?:\*\*)?[ \t]*)` + name + `([ \t]*(?::[ \t]*(?:\*\*)?|\*\*[ \t]*:)[ \t]?` + labelTail),
		bold: regexp.MustCompile(`(?im)` + labelLead + `\*\*[ \t]*)` + name + `([ \t]*(?::[ \t]*\*\*|\*\*[ \t]*:)[ \t]?` + labelTail),
	}
}

// genericLabels match the label line of any name: the name is what lies between the
// line's form and the first separator, and findLabel compares it. For a name that
// starts with a letter or digit, ends in neither space nor tab and holds no ':', '*' or
// line end (every name ctx looks for), they find exactly what the name's own patterns find
// (TestGenericLabelsFindWhatOwnPatternsFind), with two compilations per process
// instead of two per name: a regular expression is compiled at first use in each
// process, and a save point's three names cost every load and save 0.1–0.3 ms.
var genericLabels = sync.OnceValue(func() labelRegexps { return compileLabel(`([^\r\n]*?)`) })

// genericName reports whether the generic patterns stand for name.
func genericName(name string) bool {
	first, _ := utf8.DecodeRuneInString(name)
	if !unicode.IsLetter(first) && !unicode.IsDigit(first) {
		return false // also "" and a name that is not UTF-8
	}
	last := name[len(name)-1]
	return last != ' ' && last != '\t' && !strings.ContainsAny(name, ":*\r\n")
}

// FindLabel finds the first name line of a document, never in a code block: in any form
// where header lines live (between the frontmatter and the first level-2 heading, or
// in the section titled inSection or its equivalents), else in bold form anywhere, as
// a hand-written "**Next Action**:" further down. The writer and the reader of a save
// point both find it here.
func FindLabel(src []byte, name, inSection string) (Label, bool) {
	sections, code := structure(src)
	return findLabel(src, sections, code, name, inSection)
}

func findLabel(src []byte, sections []Section, code [][2]int, name, inSection string) (Label, bool) {
	if !genericName(name) {
		return findLabelWith(src, sections, code, labelPatterns(name), "", inSection)
	}
	return findLabelWith(src, sections, code, genericLabels(), name, inSection)
}

// findLabelWith is findLabel with the patterns given, and the name they must have
// matched ("" when they are the name's own).
func findLabelWith(src []byte, sections []Section, code [][2]int, re labelRegexps, want, inSection string) (Label, bool) {
	start := FrontmatterEnd(src)
	preambleEnd := len(src)
	for _, s := range sections {
		if s.Level == 2 {
			preambleEnd = s.Start
			break
		}
	}
	regions := [][2]int{{start, preambleEnd}}
	if s, ok := FindEquivalent(sections, inSection); ok && s.Start >= preambleEnd {
		regions = append(regions, [2]int{s.BodyStart, s.End})
	}
	for _, r := range regions {
		if l, ok := firstLabel(src, re.any, want, r[0], r[1], code); ok {
			return l, true
		}
	}
	return firstLabel(src, re.bold, want, start, len(src), code)
}

// firstLabel finds the first match of re in src[start:end] outside code whose name is
// want ("" for any: re names one already).
func firstLabel(src []byte, re *regexp.Regexp, want string, start, end int, code [][2]int) (Label, bool) {
	if end <= start {
		return Label{}, false
	}
	for _, loc := range re.FindAllSubmatchIndex(src[start:end], -1) {
		if want != "" && !bytes.EqualFold(src[start+loc[4]:start+loc[5]], []byte(want)) {
			continue
		}
		if InCode(code, start+loc[0], start+loc[1]) {
			continue
		}
		l := Label{
			Start: start + loc[0], NameStart: start + loc[4], NameEnd: start + loc[5],
			ValueStart: start + loc[8], ValueEnd: start + loc[9],
		}
		// "**Name: value**": the closing bold belongs to the line's form, not the value.
		if bytes.Contains(src[l.Start:l.NameStart], []byte("**")) && !bytes.Contains(src[l.NameEnd:l.ValueStart], []byte("**")) {
			v := bytes.TrimRight(src[l.ValueStart:l.ValueEnd], " \t")
			if bytes.HasSuffix(v, []byte("**")) {
				l.ValueEnd = l.ValueStart + len(v) - 2
			}
		}
		return l, true
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
