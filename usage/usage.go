// Package usage tells how full an agent's context window is, from the session transcript
// Claude Code writes, and where that stands against the budget up to compaction.
package usage

import (
	"errors"
	"fmt"
	"math"
)

// Defaults for a Config left at its zero value.
const (
	// DefaultWindow is the context window of a model ctx does not know.
	DefaultWindow = 200_000
	// LargeWindow is the window of the 1M models, and of any model id carrying "[1m]".
	LargeWindow = 1_000_000
	// DefaultReserve is what Claude Code keeps free below the window of a model whose
	// output limit is 20k or more: 20k for the compaction summary's output and a 13k
	// buffer, so auto-compaction starts at 167k of a 200k window, 967k of 1M.
	DefaultReserve = outputReserveCap + compactBuffer
	// DefaultWarnAt is the fraction of the budget at which an agent is nudged to save.
	DefaultWarnAt = 0.75
	// DefaultAutoSaveAt is the fraction of the budget at which ctx saves by itself.
	DefaultAutoSaveAt = 0.90
	// DefaultMaxScanBytes is how far back from a transcript's end Read looks for the
	// line that tells the usage. In real transcripts the assistant lines are at most a
	// few hundred kilobytes apart (the longest stretch measured: 349 KB); 32 MiB leaves
	// room for a turn of several multi-megabyte tool results and keeps a hook's worst
	// case to tens of milliseconds, whatever the file's size.
	DefaultMaxScanBytes = 32 << 20
)

// Claude Code's compaction arithmetic (CLAUDE-CODE.md §2): the effective window is the
// window less the model's output limit, counted up to outputReserveCap; automatic
// compaction starts compactBuffer below it.
const (
	outputReserveCap = 20_000
	compactBuffer    = 13_000
)

// Where a Usage's token count came from.
const (
	SourceAssistant       = "assistant"        // the latest main-chain assistant line
	SourceCompactBoundary = "compact_boundary" // a compaction newer than any assistant line
	SourceNone            = "none"             // nothing usable in the transcript yet
)

// ErrUnknown says that a transcript's usage cannot be told: no line that tells it lies
// within the last MaxScanBytes of the file. Hooks treat it as no usage at all.
var ErrUnknown = errors.New("usage unknown")

// UnknownError is ErrUnknown with how far back the reader looked.
type UnknownError struct {
	Scanned int64 // bytes from the end of the file
}

func (e *UnknownError) Error() string {
	return fmt.Sprintf("%v: no assistant line in its last %s; usage.max_scan_bytes in .ctx/config.yaml sets how far back ctx looks",
		ErrUnknown, byteSize(e.Scanned))
}

// Is makes errors.Is(err, ErrUnknown) true.
func (e *UnknownError) Is(target error) bool { return target == ErrUnknown }

// byteSize writes n in MiB when it is a whole number of them, else in bytes.
func byteSize(n int64) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}

// Where a Usage's window came from, besides "model <id>" and Claude Code's settings.
const (
	WindowFromStatusLine = "statusline" // Client.KnownWindow
	WindowFromConfig     = "config"     // usage.window of .ctx/config.yaml
	WindowFromDefault    = "default"    // DefaultWindow
)

// Usage is how full the context is, read from a transcript.
type Usage struct {
	TokensUsed      int     `json:"tokens_used"`
	Window          int     `json:"window"`
	Reserve         int     `json:"reserve"` // Window - Budget
	Budget          int     `json:"budget"`  // where automatic compaction starts, or Window when it is off
	PercentOfBudget float64 `json:"percent_of_budget"`
	PercentOfWindow float64 `json:"percent_of_window"`
	Model           string  `json:"model"` // as the transcript names it; "" when it does not
	Source          string  `json:"source"`
	WarnAt          float64 `json:"warn_at"`      // fraction of the budget
	AutoSaveAt      float64 `json:"auto_save_at"` // fraction of the budget

	// WindowSource says where Window came from: "statusline", "model claude-opus-5-5",
	// "model sonnet (flag --model)", "env CLAUDE_CODE_DISABLE_1M_CONTEXT=1", "config",
	// "default", or "tokens past 200000" when the count itself shows a larger window.
	WindowSource string `json:"window_source"`
	// MaxOutput is the model's output limit, which sets Claude Code's reserve; 0 when
	// the model is unknown (the reserve then counts it as 20k or more).
	MaxOutput int `json:"max_output"`
	// AutoCompact is false when Claude Code's automatic compaction is off: compaction is
	// manual, and the budget is the whole window.
	AutoCompact bool `json:"auto_compact"`
	// BudgetSource says how Budget was computed: "claude code default: window - 20000 -
	// 13000", "env CLAUDE_CODE_AUTO_COMPACT_WINDOW=400000: min(400000, window) - 20000 -
	// 13000", "env CLAUDE_AUTOCOMPACT_PCT_OVERRIDE=50: 50% of 980000",
	// "config usage.reserve: window - 50000", "auto-compaction disabled (env
	// DISABLE_AUTO_COMPACT=1)".
	BudgetSource string `json:"budget_source"`
}

// Config is the usage part of .ctx/config.yaml. A zero field means its default.
//
// Window and Reserve are for models ctx does not know. A known model's window comes from
// the model table (models.go), and its reserve from Claude Code's own arithmetic and
// compaction settings, which Window and Reserve never override. For an unknown model,
// Window replaces the 200k default, and Reserve, when set, replaces Claude Code's
// default reserve (33k), unless a Claude Code setting (CLAUDE_CODE_AUTO_COMPACT_WINDOW,
// --autocompact, autoCompactWindow, CLAUDE_AUTOCOMPACT_PCT_OVERRIDE, or compaction
// turned off) says where compaction starts: what Claude Code does wins.
//
// MaxScanBytes bounds how far back from the transcript's end Read looks for the line
// that tells the usage (DefaultMaxScanBytes when 0); past it the usage is unknown.
type Config struct {
	Window       int     `yaml:"window"`
	Reserve      int     `yaml:"reserve"`
	WarnAt       float64 `yaml:"warn_at"`
	AutoSaveAt   float64 `yaml:"auto_save_at"`
	MaxScanBytes int64   `yaml:"max_scan_bytes"`
}

// scanBytes is MaxScanBytes, or its default.
func (c Config) scanBytes() int64 {
	if c.MaxScanBytes > 0 {
		return c.MaxScanBytes
	}
	return DefaultMaxScanBytes
}

// Validate reports every setting out of range, each error naming its key, with the
// defaults standing in for fields left at zero.
func (c Config) Validate() error {
	var errs []error
	reserve := c.Reserve
	if reserve == 0 {
		reserve = DefaultReserve
	}
	if c.Reserve < 0 {
		errs = append(errs, fmt.Errorf("reserve: must be above 0, got %d", c.Reserve))
	}
	if c.Window < 0 {
		errs = append(errs, fmt.Errorf("window: must be above 0 (or 0 for automatic), got %d", c.Window))
	}
	if c.Window > 0 && reserve > 0 && c.Window <= reserve {
		errs = append(errs, fmt.Errorf("window: must be above reserve (%d), got %d", reserve, c.Window))
	}
	if c.MaxScanBytes < 0 {
		errs = append(errs, fmt.Errorf("max_scan_bytes: must be above 0 (or 0 for %s), got %d", byteSize(DefaultMaxScanBytes), c.MaxScanBytes))
	}
	if c.Window == 0 && reserve >= DefaultWindow {
		errs = append(errs, fmt.Errorf("reserve: must be below the automatic window (%d), got %d; set window as well", DefaultWindow, reserve))
	}

	warn, save := c.WarnAt, c.AutoSaveAt
	if warn == 0 {
		warn = DefaultWarnAt
	}
	if save == 0 {
		save = DefaultAutoSaveAt
	}
	// Tested as being in range, so that NaN, which compares false both ways, is refused.
	warnOK := warn > 0 && warn < 1
	saveOK := save > 0 && save <= 1
	if !warnOK {
		errs = append(errs, fmt.Errorf("warn_at: must be a fraction of the budget above 0 and below 1, got %v", c.WarnAt))
	}
	if !saveOK {
		errs = append(errs, fmt.Errorf("auto_save_at: must be a fraction of the budget above 0 and at most 1, got %v", c.AutoSaveAt))
	}
	if warnOK && saveOK && warn >= save {
		errs = append(errs, fmt.Errorf("warn_at: must be below auto_save_at (%v), got %v", save, warn))
	}
	return errors.Join(errs...)
}

// Compute builds a Usage from a known token count and the transcript's model id, as
// Read does from a transcript's, with Claude Code's configuration cl. It does not
// validate cfg: a setting that Validate would refuse falls back to its default.
func Compute(tokens int, model string, source string, cfg Config, cl Client) *Usage {
	return compute(tokens, 0, model, source, cfg, cl)
}

// compute is Compute with a second token count that only informs the window: the size a
// session reached before its last compaction, which shows a 1M window that the small
// count after it no longer does.
func compute(tokens, reached int, model, source string, cfg Config, cl Client) *Usage {
	tokens = max(tokens, 0)
	window, maxOutput, windowSource := resolveWindow(model, cfg, cl)
	// The transcript's model id rarely carries the "[1m]" the user chose (the API answers
	// with the bare id), so a count past the window is the surer sign.
	if windowSource != WindowFromStatusLine && window < LargeWindow && max(tokens, reached) > window {
		window, windowSource = LargeWindow, fmt.Sprintf("tokens past %d", window)
	}
	budget, budgetSource := compactionPoint(window, maxOutput, cfg, cl)
	warn, save := cfg.WarnAt, cfg.AutoSaveAt
	if !(save > 0 && save <= 1) {
		save = DefaultAutoSaveAt
	}
	if !(warn > 0 && warn < save) {
		warn = DefaultWarnAt
		if warn >= save {
			warn = save * DefaultWarnAt / DefaultAutoSaveAt
		}
	}
	if source == "" {
		source = SourceNone
	}
	return &Usage{
		TokensUsed:      tokens,
		Window:          window,
		Reserve:         window - budget,
		Budget:          budget,
		PercentOfBudget: percent(tokens, budget),
		PercentOfWindow: percent(tokens, window),
		Model:           model,
		Source:          source,
		WarnAt:          warn,
		AutoSaveAt:      save,
		WindowSource:    windowSource,
		MaxOutput:       maxOutput,
		AutoCompact:     !cl.AutoCompactOff,
		BudgetSource:    budgetSource,
	}
}

// resolveWindow returns the context window, the model's output limit (0 when unknown)
// and where the window came from: the window Claude Code reported, then
// CLAUDE_CODE_DISABLE_1M_CONTEXT for a 1M model, then the model table (the
// transcript's model, else the one Claude Code was started with), then the config, then
// the default.
func resolveWindow(model string, cfg Config, cl Client) (window, maxOutput int, source string) {
	id, from := model, ""
	if id == "" {
		id, from = cl.Model, cl.ModelSource
	}
	m, known := LookupModel(id)
	source = "model " + id
	if from != "" {
		source += " (" + from + ")"
	}
	// The transcript drops the "[1m]" a session was started with: Claude Code's own
	// setting still says it.
	if known && from == "" && m.Window < LargeWindow && sameModel(cl.Model, id) {
		if _, large := cleanModel(cl.Model); large {
			m.Window = LargeWindow
			source += " with " + suffix1M + " (" + cl.ModelSource + ")"
		}
	}
	switch {
	case cl.KnownWindow > 0:
		return cl.KnownWindow, m.MaxOutput, WindowFromStatusLine
	case known && m.Window >= LargeWindow && cl.Disable1M:
		return DefaultWindow, m.MaxOutput, cl.Disable1MSource
	case known:
		return m.Window, m.MaxOutput, source
	case cfg.Window > 0:
		return cfg.Window, 0, WindowFromConfig
	}
	return DefaultWindow, 0, WindowFromDefault
}

// compactionPoint returns where Claude Code compacts automatically, and how that was
// computed: the effective window (the window, or the compaction window the settings
// give when smaller, less the output limit up to 20k) less a 13k buffer, or a
// percentage of the effective window when CLAUDE_AUTOCOMPACT_PCT_OVERRIDE makes it
// lower; the whole window when automatic compaction is off.
func compactionPoint(window, maxOutput int, cfg Config, cl Client) (int, string) {
	if cl.AutoCompactOff {
		return window, "auto-compaction disabled (" + cl.AutoCompactOffSource + ")"
	}
	out := outputReserveCap
	if maxOutput > 0 {
		out = min(maxOutput, outputReserveCap)
	}
	compactWindow := window
	source := fmt.Sprintf("claude code default: window - %d - %d", out, compactBuffer)
	if cl.CompactWindow > 0 {
		compactWindow = min(cl.CompactWindow, window)
		source = fmt.Sprintf("%s: min(%d, window) - %d - %d", cl.CompactWindowSource, cl.CompactWindow, out, compactBuffer)
	}
	effective := compactWindow - out
	budget := effective - compactBuffer
	// ctx's own reserve stands in for the output limit and buffer of a model it does
	// not know, unless Claude Code's settings say where compaction starts.
	if maxOutput == 0 && cl.CompactWindow == 0 && cfg.Reserve > 0 && cfg.Reserve < window {
		budget = window - cfg.Reserve
		source = fmt.Sprintf("config usage.reserve: window - %d", cfg.Reserve)
	}
	if cl.CompactPercent > 0 {
		if b := int(float64(effective) * cl.CompactPercent / 100); b < budget {
			budget = b
			source = fmt.Sprintf("%s: %v%% of %d", cl.CompactPercentSource, cl.CompactPercent, effective)
		}
	}
	if budget <= 0 {
		return window, source + ", below 0: the whole window instead"
	}
	return budget, source
}

// percent rounds to a hundredth so that JSON output stays short and stable.
func percent(part, whole int) float64 {
	if whole <= 0 {
		return 0
	}
	return math.Round(float64(part)/float64(whole)*10_000) / 100
}
