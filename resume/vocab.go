package resume

import (
	"slices"
	"strings"
	"unicode"

	"github.com/ctxtools/ctx/markdown"
)

// The save point's vocabulary, each word once: its section titles and the titles
// people give the same sections, its header labels, the frontmatter keys ctx owns, and
// ctx's markers.

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

// Header labels of the Quick Context lines at the top of the body, in their order.
const (
	LastSession  = "Last Session"
	CurrentPhase = "Current Phase"
	NextAction   = "Next Action"
)

var headerLabels = [...]string{LastSession, CurrentPhase, NextAction}

// FrontmatterKeys are the frontmatter keys ctx owns, in template order: a missing key
// is inserted after the nearest key before it in this order.
var FrontmatterKeys = []string{
	"resume_version", "last_updated", "compaction_count", "total_tokens_approx", "session_count",
	"project_id", "project_name", "project_status",
	"current_phase", "current_skill", "current_workflow_step",
	"current_section", "current_section_name", "next_task_number", "next_task_description",
	"progress_tasks_completed", "progress_tasks_total", "progress_percentage",
	"planning_completed",
}

// The names of ctx's marked blocks.
const (
	blockCompaction = "compaction"
	blockLoading    = "loading-sequence"
)

// Block markers delimit the lines ctx owns inside a section that may also hold a
// person's text; the session marker tags the Session History entry of one agent session.
func blockBegin(name string) string   { return "<!-- ctx:begin " + name + " -->" }
func blockEnd(name string) string     { return "<!-- ctx:end " + name + " -->" }
func sessionMarker(key string) string { return "<!-- ctx:session " + key + " -->" }

// The Next Action texts ctx writes when there is no open task.
const (
	allDoneText = "All tasks in the steps file are done"
	noStepsText = "Write the steps file"
)

// equivalents lists, for each section title of a save point, the other titles people
// give the same section. Titles are compared after normalTitle.
var equivalents = map[string][]string{
	"quick context":                {"quick context", "context", "session continuity", "current state", "current status"},
	"session history":              {"session history", "sessions", "session log", "history", "previous sessions"},
	"critical context to remember": {"critical context to remember", "critical context", "context to remember"},
	"key decisions":                {"key decisions", "decisions", "decisions made", "key decisions made"},
	"important assumptions":        {"important assumptions", "assumptions"},
	"blockers risks":               {"blockers risks", "blockers", "risks", "blockers and risks", "open blockers"},
	"files modified this project":  {"files modified this project", "files modified", "files changed", "modified files", "changed files", "files touched", "files created modified", "files modified created"},
	"loading sequence for resume":  {"loading sequence for resume", "loading sequence", "files to load", "resume loading sequence"},
	"compaction detection":         {"compaction detection"},
}

// isSavePointSection reports whether a heading names one of the save point's sections.
func isSavePointSection(title string) bool {
	t := normalTitle(title)
	for _, alts := range equivalents {
		if slices.Contains(alts, t) {
			return true
		}
	}
	return false
}

// SameTitle reports whether a heading's title names the save point section canonical:
// the same words in any case and punctuation, with or without a leading number or an
// emoji ("## 2. Files changed" names "Files Modified This Project").
func SameTitle(title, canonical string) bool {
	t, c := normalTitle(title), normalTitle(canonical)
	if t == c {
		return true
	}
	for _, alt := range equivalents[c] {
		if t == alt {
			return true
		}
	}
	return false
}

// FindEquivalent returns the first section, at any level, whose title names title
// (SameTitle); a level-2 section wins over a deeper one.
func FindEquivalent(sections []markdown.Section, title string) (markdown.Section, bool) {
	if title == "" {
		return markdown.Section{}, false
	}
	var found markdown.Section
	ok := false
	for _, s := range sections {
		if s.Level < 2 || !SameTitle(s.Title, title) {
			continue
		}
		if s.Level == 2 {
			return s, true
		}
		if !ok {
			found, ok = s, true
		}
	}
	return found, ok
}

// normalTitle lowercases a title, drops HTML comments (ctx's markers), punctuation,
// symbols and a leading number, and joins the words with single spaces.
func normalTitle(title string) string {
	for {
		i := strings.Index(title, "<!--")
		if i < 0 {
			break
		}
		j := strings.Index(title[i:], "-->")
		if j < 0 {
			title = title[:i]
			break
		}
		title = title[:i] + " " + title[i+j+3:]
	}
	words := strings.FieldsFunc(strings.ToLower(title), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
	for len(words) > 0 && strings.IndexFunc(words[0], func(r rune) bool { return !unicode.IsDigit(r) }) < 0 {
		words = words[1:]
	}
	return strings.Join(words, " ")
}
