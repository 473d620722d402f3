package resume

import (
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/ctxtools/ctx/markdown"
)

// Section titles of the save point that ctx reads or writes.
const (
	SectionQuickContext    = "Quick Context"
	SectionSessionHistory  = "Session History"
	SectionCriticalContext = "Critical Context to Remember"
	SectionFilesModified   = "Files Modified This Project"
	SectionLoadingSequence = "Loading Sequence for Resume"
	SectionCompaction      = "Compaction Detection"
	SubsectionDecisions    = "Key Decisions"
	SubsectionAssumptions  = "Important Assumptions"
	SubsectionBlockers     = "Blockers/Risks"
)

// findSection finds a section by its path of titles, recognising the titles people
// give the same section (markdown.SameTitle) at any heading level: a subsection inside
// its parent first, else anywhere ("## Key Decisions" with no Critical Context above).
func (d *Document) findSection(path ...string) (markdown.Section, bool) {
	last := path[len(path)-1]
	if len(path) > 1 {
		if parent, ok := d.findSection(path[:len(path)-1]...); ok {
			for _, s := range d.Sections() {
				if s.Start >= parent.BodyStart && s.Start < parent.End && s.Level > parent.Level && markdown.SameTitle(s.Title, last) {
					return s, true
				}
			}
		}
	}
	return markdown.FindEquivalent(d.Sections(), last)
}

// contentEndOf is the end of a section's last non-blank line: where an appended item
// goes, keeping the blank lines that separate it from the next heading.
func (d *Document) contentEndOf(s markdown.Section) int {
	end := s.End
	for end > s.BodyStart {
		ls := lineStart(d.src, end-1)
		if strings.TrimSpace(string(d.src[ls:end])) != "" {
			break
		}
		end = ls
	}
	return end
}

// AppendItem adds "- item" at the end of the section named by path, unless a list item
// with the same text is already there. A missing subsection is created at the end of
// its parent section.
func (d *Document) AppendItem(item string, path ...string) (*Document, Span, error) {
	item = oneLine(item)
	s, ok := d.findSection(path...)
	if !ok {
		if len(path) < 2 {
			return nil, Span{}, fmt.Errorf("no section %q", path[0])
		}
		parent, ok := d.findSection(path[:len(path)-1]...)
		if !ok {
			return nil, Span{}, fmt.Errorf("no section %q", strings.Join(path[:len(path)-1], " / "))
		}
		at := d.contentEndOf(parent)
		text := strings.Repeat("#", parent.Level+1) + " " + path[len(path)-1] + "\n- " + item + "\n"
		return d.insertLines(at, text)
	}
	if hasItem(d.src[s.BodyStart:s.End], item) {
		return d, Span{Start: s.BodyStart, End: s.BodyStart}, nil
	}
	return d.insertLines(d.contentEndOf(s), "- "+item+"\n")
}

// insertLines inserts text (whole lines) at offset at, starting a new line first when
// at is not at one.
func (d *Document) insertLines(at int, text string) (*Document, Span, error) {
	if at > 0 && d.src[at-1] != '\n' {
		text = "\n" + text
	}
	return d.splice(at, at, d.lines(text))
}

// hasItem reports whether body holds a list item whose text is item, ignoring a
// leading "YYYY-MM-DD: " date and backticks.
func hasItem(body []byte, item string) bool {
	want := normalItem(item)
	for _, line := range strings.Split(string(body), "\n") {
		t := strings.TrimSpace(line)
		if len(t) < 2 || !strings.ContainsRune("-*+", rune(t[0])) || t[1] != ' ' {
			continue
		}
		if normalItem(t[2:]) == want {
			return true
		}
	}
	return false
}

func normalItem(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > 12 && s[4] == '-' && s[7] == '-' && s[10] == ':' {
		s = strings.TrimSpace(s[11:])
	}
	return strings.Trim(s, "` ")
}

// sessionMarker tags the Session History entry of one agent session.
func sessionMarker(id string) string { return "<!-- ctx:session " + id + " -->" }

// SetSessionEntry writes the Session History entry of one agent session: heading is
// the entry's title line (without "### "), item an optional line to add under it. The
// entry of the same session is updated in place, never duplicated. Only the entry's
// heading line and the end of the entry change, and the heading only when closing or
// while it is still the open heading ctx wrote: a person's words in it stay.
func (d *Document) SetSessionEntry(sessionKey, heading, item string, closing bool) (*Document, error) {
	s, ok := d.findSection(SectionSessionHistory)
	if !ok {
		return nil, fmt.Errorf("no section %q", SectionSessionHistory)
	}
	marker := sessionMarker(sessionKey)
	// An entry is one level below its section, whatever level the person gave it.
	headLine := strings.Repeat("#", min(s.Level+1, 6)) + " " + oneLine(heading) + " " + marker
	i := d.markerAt(s.BodyStart, s.End, marker)
	if i < 0 {
		text := headLine + "\n"
		if item != "" {
			text += "- " + oneLine(item) + "\n"
		}
		at := d.contentEndOf(s)
		if at > s.BodyStart {
			text = "\n" + text
		}
		nd, _, err := d.insertLines(at, text)
		return nd, err
	}
	ls := lineStart(d.src, i)
	le := contentEnd(d.src, ls, lineEnd(d.src, ls))
	nd := d
	current := string(d.src[ls:le])
	if current != headLine && (closing || openSessionHeadingRE().MatchString(current)) {
		var err error
		if nd, _, err = d.splice(ls, le, headLine); err != nil {
			return nil, err
		}
	}
	if item == "" {
		return nd, nil
	}
	// The entry runs to the next heading of the section.
	s2, _ := nd.findSection(SectionSessionHistory)
	entryStart := lineEnd(nd.src, ls)
	entryEnd := s2.End
	for _, sub := range nd.Sections() {
		if sub.Start >= entryStart && sub.Start < s2.End {
			entryEnd = sub.Start
			break
		}
	}
	if hasItem(nd.src[entryStart:entryEnd], item) {
		return nd, nil
	}
	at := entryEnd
	for at > entryStart {
		prev := lineStart(nd.src, at-1)
		if strings.TrimSpace(string(nd.src[prev:at])) != "" {
			break
		}
		at = prev
	}
	nd, _, err := nd.insertLines(at, "- "+oneLine(item)+"\n")
	return nd, err
}

// openSessionHeadingRE matches the heading ctx writes for a session still open.
var openSessionHeadingRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^#{2,6} Session \d+ — \d{4}-\d{2}-\d{2} <!-- ctx:session [^ ]+ -->$`)
})

// EnsureSections adds those of the named level-2 sections of the template that the
// document lacks under any equivalent title, in template order, each with its template
// body up to its first subsection; nothing else changes. A save names only the
// sections it is about to write into, so a person's file never fills up with empty
// template sections.
func (d *Document) EnsureSections(template func() ([]byte, error), titles ...string) (*Document, []string, error) {
	want := map[string]bool{}
	missing := false
	for _, t := range titles {
		want[strings.ToLower(t)] = true
		if _, ok := d.findSection(t); !ok {
			missing = true
		}
	}
	if !missing {
		return d, nil, nil // the template is not even rendered
	}
	src, err := template()
	if err != nil {
		return nil, nil, err
	}
	tmplSections := markdown.Parse(src).Sections()
	var order []markdown.Section
	for _, s := range tmplSections {
		if s.Level == 2 {
			order = append(order, s)
		}
	}
	var added []string
	cur := d
	for i, ts := range order {
		if !want[strings.ToLower(ts.Title)] {
			continue
		}
		if _, ok := cur.findSection(ts.Title); ok {
			continue
		}
		end := ts.End
		for _, sub := range tmplSections {
			if sub.Start > ts.Start && sub.Start < end && sub.Level > ts.Level {
				end = sub.Start
			}
		}
		text := string(src[ts.Start:end])
		if !strings.HasSuffix(text, "\n") {
			text += "\n"
		}
		at := -1
		// After the nearest earlier template section the document has...
		for j := i - 1; j >= 0 && at < 0; j-- {
			if s, ok := cur.findSection(order[j].Title); ok {
				at = s.End
			}
		}
		// ...else before the nearest later one, else at the end.
		for j := i + 1; j < len(order) && at < 0; j++ {
			if s, ok := cur.findSection(order[j].Title); ok {
				at = s.Start
			}
		}
		if at < 0 {
			at = len(cur.src)
		}
		if at > 0 && !endsWithBlankLine(cur.src[:at]) {
			text = "\n" + text
		}
		nd, _, err := cur.insertLines(at, text)
		if err != nil {
			return nil, nil, err
		}
		cur = nd
		added = append(added, ts.Title)
	}
	return cur, added, nil
}

// WithoutMarkers drops ctx's marker comments from text, which mean nothing to a reader:
// the block markers on lines of their own, and the session marker after a heading.
func WithoutMarkers(text string) string {
	var out []string
	for _, line := range strings.Split(text, "\n") {
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "<!-- ctx:") && strings.HasSuffix(t, "-->") {
			continue
		}
		if i := strings.Index(line, "<!-- ctx:session "); i >= 0 {
			line = strings.TrimRight(line[:i], " ")
		}
		out = append(out, line)
	}
	return strings.Join(out, "\n")
}
