package resume

import (
	"cmp"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/ctxtools/ctx/markdown"
)

// State is what the load reports of a project's save point. The loader fills in where
// the file is; everything else is read here, from the one parse.
type State struct {
	// Path is the file read, relative to the workspace; when none exists, the canonical
	// path where it will be created.
	Path         string         `json:"path"`
	Exists       bool           `json:"exists"`
	Legacy       bool           `json:"legacy"`
	Frontmatter  map[string]any `json:"frontmatter"`
	LastSession  string         `json:"last_session"`
	CurrentPhase string         `json:"current_phase"`
	NextAction   string         `json:"next_action"`
	LastUpdated  string         `json:"last_updated"`
	// CurrentSkill and WorkflowStep are what the save point's frontmatter says the agent
	// was running (current_skill, or the older last_skill; current_workflow_step).
	CurrentSkill string `json:"current_skill,omitempty"`
	WorkflowStep string `json:"current_workflow_step,omitempty"`
	// Note explains a missing or unreadable save point and what to do about it.
	Note string `json:"note,omitempty"`

	// Abs is the absolute path of the file read ("" when none exists).
	Abs string `json:"-"`
	doc *Document
}

// Read fills the state of a save point from its parse.
func (st *State) Read(d *Document) {
	st.Exists, st.doc = true, d
	fm := d.md.FM
	if fm.Values != nil {
		st.Frontmatter = fm.Values
	} else if st.Frontmatter == nil {
		st.Frontmatter = map[string]any{}
	}
	header := func(label string) string {
		v, _ := d.Header(label)
		return strings.TrimSpace(v)
	}
	// The older keys real save points use count as the current ones.
	st.LastUpdated = firstNonEmpty(fm.String("last_updated"), fm.String("updated"))
	st.LastSession = header(LastSession)
	st.CurrentPhase = firstNonEmpty(header(CurrentPhase), fm.String("current_phase"), fm.String("phase"))
	st.NextAction = firstNonEmpty(header(NextAction), nextFromFrontmatter(fm))
	st.CurrentSkill = firstNonEmpty(fm.String("current_skill"), fm.String("last_skill"))
	st.WorkflowStep = strings.TrimSpace(fm.String("current_workflow_step"))
}

// Document returns the save point's one parse (nil when there is none).
func (st *State) Document() *Document { return st.doc }

// nextFromFrontmatter is the next action the proposal's keys give when no header line
// does: "Task 4 — Validate expiry (Phase 2: Payment)".
func nextFromFrontmatter(fm markdown.Frontmatter) string {
	desc := strings.TrimSpace(fm.String("next_task_description"))
	if desc == "" {
		return ""
	}
	if n := strings.TrimSpace(fm.String("next_task_number")); n != "" && n != "0" {
		desc = "Task " + n + " — " + desc
	}
	if s := strings.TrimSpace(fm.String("current_section_name")); s != "" {
		desc += " (" + s + ")"
	}
	return desc
}

// RecordedProgress is the progress the save point last recorded, for a project whose
// steps file is missing: the proposal's progress_* and next_task_* keys.
func (st *State) RecordedProgress() (markdown.Progress, bool) {
	fm := st.Frontmatter
	num := func(key string) int {
		switch v := fm[key].(type) {
		case int64:
			return int(v)
		case float64:
			return int(v)
		}
		return 0
	}
	text := func(key string) string {
		if s, ok := fm[key].(string); ok {
			return strings.TrimSpace(s)
		}
		return ""
	}
	p := markdown.Progress{
		TasksTotal: num("progress_tasks_total"), TasksCompleted: num("progress_tasks_completed"), Percent: num("progress_percentage"),
		CurrentTask: text("next_task_description"), CurrentSection: text("current_section_name"),
		CurrentTaskNumber: num("next_task_number"), CurrentSectionNumber: num("current_section"),
	}
	if p.TasksTotal <= 0 || p.TasksCompleted < 0 || p.TasksCompleted > p.TasksTotal {
		return markdown.Progress{}, false
	}
	if p.Percent <= 0 || p.Percent > 100 {
		p.Percent = p.TasksCompleted * 100 / p.TasksTotal
	}
	return p, true
}

// FrontmatterStrings returns a frontmatter list (or single string) value.
func (st *State) FrontmatterStrings(key string) []string {
	if st.doc == nil {
		return nil
	}
	return st.doc.md.FM.Strings(key)
}

// ModifiedFiles returns the paths the Files Modified section lists, in order.
func (st *State) ModifiedFiles() []string {
	if st.doc == nil {
		return nil
	}
	return st.doc.listedIn(SectionFilesModified, "")
}

// LoadingSequence returns the paths the person's Loading Sequence lists: ctx's own
// block, derived from the reads, is left out, or reading it back would keep every file
// it ever listed.
func (st *State) LoadingSequence() []string {
	if st.doc == nil {
		return nil
	}
	return st.doc.listedIn(SectionLoadingSequence, blockLoading)
}

// listedIn returns the file paths named by the list items of a section, leaving out
// ctx's block skip: a code span, else a link target, else the item itself when it
// looks like a path. Lines in code and HTML are not items.
func (d *Document) listedIn(title, skip string) []string {
	s, ok := d.findSection(title)
	if !ok {
		return nil
	}
	from, to := -1, -1
	if skip != "" {
		if f, t, ok := d.block(s, skip); ok {
			from, to = f, t
		}
	}
	var out []string
	for _, l := range d.md.Lines() {
		if l.Start < s.BodyStart || l.Start >= s.End || (l.Start >= from && l.Start < to) {
			continue
		}
		if l.Kind != markdown.KindParagraph || l.List == 0 {
			continue
		}
		m := listItemRE().FindSubmatch(d.src[l.Start:l.End])
		if m == nil {
			continue
		}
		if p := pathInItem(string(m[1])); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// listsFile reports whether Files Modified (under any of its titles) lists path.
func (d *Document) listsFile(path string) bool {
	for _, listed := range d.listedIn(SectionFilesModified, "") {
		if cleanPath(listed) == cleanPath(path) {
			return true
		}
	}
	return false
}

func cleanPath(p string) string { return filepath.Clean(p) }

var (
	codeSpanRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile("`([^`]+)`") })
	linkRE     = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\]\(([^)\s]+)\)`) })
	listItemRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^[\s>]*(?:[-*+]|\d+[.)])\s+(?:\[[ xX]\]\s+)?(.*)$`)
	})
)

func pathInItem(item string) string {
	candidate := ""
	if m := codeSpanRE().FindStringSubmatch(item); m != nil {
		candidate = m[1]
	} else if m := linkRE().FindStringSubmatch(item); m != nil {
		candidate = m[1]
	} else {
		candidate = strings.Fields(item + " ")[0]
	}
	candidate = strings.TrimSpace(candidate)
	if candidate == "" || strings.Contains(candidate, "://") || strings.ContainsAny(candidate, " \t") {
		return ""
	}
	if !strings.ContainsAny(candidate, "/.") {
		return ""
	}
	return candidate
}

// LastActions returns up to three items of the newest Session History entry: the entry
// with the latest date in its heading, else the highest session number, else the last;
// the last items of the section when it has no entries.
func (st *State) LastActions() []string {
	out := []string{}
	if st.doc == nil {
		return out
	}
	d := st.doc
	s, ok := d.findSection(SectionSessionHistory)
	if !ok {
		return out
	}
	from, to := s.BodyStart, s.End
	var entries []markdown.Section
	for _, sub := range d.Sections() {
		if sub.Start >= s.BodyStart && sub.Start < s.End && sub.Level > s.Level {
			entries = append(entries, sub)
		}
	}
	if len(entries) > 0 {
		titles := make([]string, len(entries))
		for i, e := range entries {
			titles[i] = e.Title
		}
		best := newestEntry(titles)
		from, to = entries[best].BodyStart, entries[best].End
		if best+1 < len(entries) && entries[best+1].Start < to {
			to = entries[best+1].Start
		}
	}
	for _, l := range d.md.Lines() {
		if l.Start < from || l.Start >= to || l.Kind != markdown.KindParagraph || l.List == 0 {
			continue
		}
		if m := listItemRE().FindSubmatch(d.src[l.Start:l.End]); m != nil {
			if item := strings.TrimSpace(string(m[1])); item != "" {
				out = append(out, item)
			}
		}
	}
	if len(out) > 3 {
		out = out[len(out)-3:]
	}
	return out
}

var entryDateRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\d{4}-\d{2}-\d{2}`) })
var entryNumberRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)session\s+(\d+)`) })

// isEntryTitle reports whether a heading names an entry of a log: it carries a date or
// a session number.
func isEntryTitle(title string) bool {
	return entryDateRE().MatchString(title) || entryNumberRE().MatchString(title)
}

// newestEntry is the index of the newest of a log's entry titles: the latest date,
// then the highest session number; of equals, the last (logs are mostly appended to).
func newestEntry(titles []string) int {
	best, bestKey := 0, ""
	for i, title := range titles {
		if key := entryKey(title); key >= bestKey {
			best, bestKey = i, key
		}
	}
	return best
}

// entryKey orders entries by their heading: a date first, then a session number.
func entryKey(title string) string {
	date := cmp.Or(entryDateRE().FindString(title), "0000-00-00")
	n := 0
	if m := entryNumberRE().FindStringSubmatch(title); m != nil {
		n, _ = strconv.Atoi(m[1])
	}
	return date + "|" + strconv.Itoa(1_000_000+n)
}

// Sections returns the save point's headings in order, each with its own text (up to
// the next heading of any level).
func (st *State) Sections() []SectionText {
	if st.doc == nil {
		return nil
	}
	src := st.doc.src
	all := st.doc.Sections()
	out := make([]SectionText, 0, len(all))
	for i, s := range all {
		end := s.End
		if i+1 < len(all) && all[i+1].Start < end {
			end = all[i+1].Start
		}
		out = append(out, SectionText{Title: s.Title, Level: s.Level, Body: string(src[s.BodyStart:end])})
	}
	return out
}

// SectionText is a heading of the save point with its own text.
type SectionText struct {
	Title string
	Level int
	Body  string
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

// savedByCtx reports whether ctx has saved this document before: one of its marked
// blocks is there, whole, where ctx writes it.
func (d *Document) savedByCtx() bool {
	for title, name := range map[string]string{SectionCompaction: blockCompaction, SectionLoadingSequence: blockLoading} {
		if s, ok := d.findSection(title); ok {
			if _, _, ok := d.block(s, name); ok {
				return true
			}
		}
	}
	return false
}

func firstNonEmpty(values ...string) string {
	for _, v := range values {
		if strings.TrimSpace(v) != "" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}
