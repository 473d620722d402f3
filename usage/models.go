package usage

import "strings"

// Model is what ctx knows of a Claude model: its context window and its output limit,
// which together set where Claude Code compacts.
type Model struct {
	Window    int
	MaxOutput int
}

// models is the table of model ids, matched by prefix on the id as LookupModel cleans
// it, the first match winning: keep longer prefixes above shorter ones. Measured on
// Claude Code 2.1.330 (CLAUDE-CODE.md §2); update it when a model family is added.
var models = []struct {
	prefix string
	model  Model
}{
	// Claude Code's default model and its family: 1M windows.
	{"claude-opus-5", Model{Window: 1_000_000, MaxOutput: 128_000}},
	{"claude-sonnet-5", Model{Window: 1_000_000, MaxOutput: 128_000}},
	{"claude-haiku-5", Model{Window: 1_000_000, MaxOutput: 128_000}},
	// Claude Code's aliases, which name the 5.5 models ("default" is Opus).
	{"opus", Model{Window: 1_000_000, MaxOutput: 128_000}},
	{"sonnet", Model{Window: 1_000_000, MaxOutput: 128_000}},
	{"haiku", Model{Window: 1_000_000, MaxOutput: 128_000}},
	{"default", Model{Window: 1_000_000, MaxOutput: 128_000}},
	// The 4.x models: 200k unless chosen with "[1m]".
	{"claude-opus-4", Model{Window: 200_000, MaxOutput: 32_000}},
	{"claude-sonnet-4", Model{Window: 200_000, MaxOutput: 32_000}},
	{"claude-haiku-4", Model{Window: 200_000, MaxOutput: 32_000}},
	{"claude-3", Model{Window: 200_000, MaxOutput: 8_192}},
}

// suffix1M is what a model id chosen with the 1M window ends with ("sonnet[1m]",
// "claude-sonnet-4-5[1m]"). Claude Code drops it from the transcript.
const suffix1M = "[1m]"

// LookupModel returns the window and output limit of a model id as a transcript, the
// --model flag or a setting spells it: case aside, with or without a date
// ("claude-sonnet-4-5-20250929"), a "[1m]" suffix (which makes the window 1M), a
// provider's prefix or version ("us.anthropic.claude-sonnet-4-5-20250929-v1:0",
// "claude-sonnet-4-5@20250929"). ok is false for an id the table does not know.
func LookupModel(id string) (m Model, ok bool) {
	base, large := cleanModel(id)
	for _, row := range models {
		if rest, found := strings.CutPrefix(base, row.prefix); found && (rest == "" || rest[0] == '-') {
			m, ok = row.model, true
			break
		}
	}
	if large {
		m.Window, ok = LargeWindow, true
	}
	return m, ok
}

// cleanModel lowers id and strips what does not name the model: a provider's prefix up
// to "claude-", an "@version" or "-v1:0", a "-20250929" date, and the "[1m]" suffix,
// reported apart.
func cleanModel(id string) (base string, large bool) {
	base = strings.ToLower(strings.TrimSpace(id))
	base, large = strings.CutSuffix(base, suffix1M)
	if i := strings.Index(base, "claude-"); i > 0 {
		base = base[i:]
	}
	if i := strings.IndexByte(base, '@'); i >= 0 {
		base = base[:i]
	}
	if i := strings.LastIndex(base, "-v"); i >= 0 && isVersion(base[i+2:]) {
		base = base[:i]
	}
	if i := strings.LastIndexByte(base, '-'); i >= 0 && len(base)-i-1 == 8 && isDigits(base[i+1:]) {
		base = base[:i]
	}
	return base, large
}

// isVersion reports whether s is a provider's model version such as "1" or "1:0".
func isVersion(s string) bool {
	major, minor, _ := strings.Cut(s, ":")
	return isDigits(major) && (minor == "" || isDigits(minor))
}

func isDigits(s string) bool {
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return false
		}
	}
	return s != ""
}

// sameModel reports whether two ids name the same model, dates, providers and "[1m]"
// aside; an alias names the model it stands for.
func sameModel(a, b string) bool {
	x, _ := cleanModel(a)
	y, _ := cleanModel(b)
	if full, ok := aliases[x]; ok {
		x = full
	}
	if full, ok := aliases[y]; ok {
		y = full
	}
	return x != "" && x == y
}

// aliases maps Claude Code's model aliases to the model ids they stand for.
var aliases = map[string]string{
	"opus":    "claude-opus-5-5",
	"sonnet":  "claude-sonnet-5-5",
	"haiku":   "claude-haiku-5-5",
	"default": "claude-opus-5-5",
}
