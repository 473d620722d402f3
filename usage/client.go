package usage

// Client is what Claude Code's own configuration says about the session's context: the
// window it reported, the model it was started with, and what moves or turns off its
// automatic compaction. The zero Client stands for Claude Code's defaults; the
// package that knows Claude Code's files (internal/claude, DetectClient) fills it.
// Each value has a Source saying where it was found, for `ctx usage` to show.
type Client struct {
	// KnownWindow is the window Claude Code itself reported (its status line); 0 when
	// unknown. It wins over every other source of the window.
	KnownWindow int

	// Model is the model Claude Code was started with ("sonnet[1m]", "claude-opus-5-5"):
	// the transcript's own model id wins, but it drops a "[1m]" suffix, and a new
	// session's transcript names no model yet.
	Model       string
	ModelSource string // "flag --model", "env ANTHROPIC_MODEL", "setting model in .claude/settings.json"

	// CompactWindow is the window automatic compaction counts against when it is smaller
	// than the model's; 0 when not set.
	CompactWindow       int
	CompactWindowSource string // "env CLAUDE_CODE_AUTO_COMPACT_WINDOW=400000", "flag --autocompact 400000", "setting autoCompactWindow in .claude/settings.json"

	// CompactPercent (CLAUDE_AUTOCOMPACT_PCT_OVERRIDE) moves compaction to that percentage
	// of the effective window when it is lower than the default point; 0 when not set.
	CompactPercent       float64
	CompactPercentSource string

	// AutoCompactOff is true when automatic compaction is turned off: only a manual
	// /compact compacts, and the whole window is the budget.
	AutoCompactOff       bool
	AutoCompactOffSource string // "env DISABLE_AUTO_COMPACT=1", "autoCompactEnabled false in ~/.claude.json"

	// Disable1M (CLAUDE_CODE_DISABLE_1M_CONTEXT) runs the 1M models at 200k.
	Disable1M       bool
	Disable1MSource string

	// Problems lists the settings found but not understood (a file that is not JSON, a
	// value of the wrong kind); their values are ignored, as Claude Code ignores them.
	Problems []string
}
