package markdown

import (
	"strings"
	"unicode"
)

// equivalents lists, for each section title of a save point, the other titles people
// give the same section. Titles are compared after normalTitle.
var equivalents = map[string][]string{
	"quick context":                {"quick context", "context"},
	"session history":              {"session history", "sessions", "session log", "history", "previous sessions"},
	"critical context to remember": {"critical context to remember", "critical context", "context to remember"},
	"key decisions":                {"key decisions", "decisions", "decisions made", "key decisions made"},
	"important assumptions":        {"important assumptions", "assumptions"},
	"blockers risks":               {"blockers risks", "blockers", "risks", "blockers and risks", "open blockers"},
	"files modified this project":  {"files modified this project", "files modified", "files changed", "modified files", "changed files", "files touched", "files created modified", "files modified created"},
	"loading sequence for resume":  {"loading sequence for resume", "loading sequence", "files to load", "resume loading sequence"},
	"compaction detection":         {"compaction detection"},
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
func FindEquivalent(sections []Section, title string) (Section, bool) {
	if title == "" {
		return Section{}, false
	}
	var found Section
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
