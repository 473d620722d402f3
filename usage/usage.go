// Package usage tells how full an agent's context window is, from the session transcript
// Claude Code writes, and where that stands against the budget up to compaction.
package usage

import (
	"errors"
	"fmt"
	"math"
	"strings"
)

// Defaults for a Config left at its zero value.
const (
	// DefaultWindow is the context window of a model that does not say it has more.
	DefaultWindow = 200_000
	// LargeWindow is the window of a model whose id carries "[1m]".
	LargeWindow = 1_000_000
	// DefaultReserve is what Claude Code keeps free below the window: about 20k for the
	// compaction summary's output and a 13k buffer, so auto-compaction starts near 167k
	// of a 200k window.
	DefaultReserve = 33_000
	// DefaultWarnAt is the fraction of the budget at which an agent is nudged to save.
	DefaultWarnAt = 0.75
	// DefaultAutoSaveAt is the fraction of the budget at which ctx saves by itself.
	DefaultAutoSaveAt = 0.90
)

// Where a Usage's token count came from.
const (
	SourceAssistant       = "assistant"        // the latest main-chain assistant line
	SourceCompactBoundary = "compact_boundary" // a compaction newer than any assistant line
	SourceNone            = "none"             // nothing usable in the transcript yet
)

// Usage is how full the context is, read from a transcript.
type Usage struct {
	TokensUsed      int     `json:"tokens_used"`
	Window          int     `json:"window"`
	Reserve         int     `json:"reserve"`
	Budget          int     `json:"budget"` // Window - Reserve: the compaction point
	PercentOfBudget float64 `json:"percent_of_budget"`
	PercentOfWindow float64 `json:"percent_of_window"`
	Model           string  `json:"model"`
	Source          string  `json:"source"`
	WarnAt          float64 `json:"warn_at"`      // fraction of the budget
	AutoSaveAt      float64 `json:"auto_save_at"` // fraction of the budget
}

// Config is the usage part of .ctx/config.yaml. A zero field means its default; a zero
// Window means automatic (200k, or 1M for a "[1m]" model or past 200k tokens).
type Config struct {
	Window     int     `yaml:"window"`
	Reserve    int     `yaml:"reserve"`
	WarnAt     float64 `yaml:"warn_at"`
	AutoSaveAt float64 `yaml:"auto_save_at"`
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

// Compute builds a Usage from a known token count, as Read does from a transcript's. It
// does not validate cfg: a setting that Validate would refuse falls back
// to its default.
func Compute(tokens int, model string, source string, cfg Config) *Usage {
	return compute(tokens, 0, model, source, cfg)
}

// compute is Compute with a second token count that only informs the window: the size a
// session reached before its last compaction, which shows a 1M window that the small
// count after it no longer does.
func compute(tokens, reached int, model, source string, cfg Config) *Usage {
	tokens = max(tokens, 0)
	window := cfg.Window
	if window <= 0 {
		window = DefaultWindow
		// The transcript's model id rarely carries the "[1m]" the user chose (the API
		// answers with the bare id), so a count past 200k is the surer sign.
		if strings.Contains(strings.ToLower(model), "[1m]") || max(tokens, reached) > DefaultWindow {
			window = LargeWindow
		}
	}
	reserve := cfg.Reserve
	if reserve <= 0 || reserve >= window {
		reserve = DefaultReserve
	}
	if reserve >= window {
		reserve = 0
	}
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
	budget := window - reserve
	return &Usage{
		TokensUsed:      tokens,
		Window:          window,
		Reserve:         reserve,
		Budget:          budget,
		PercentOfBudget: percent(tokens, budget),
		PercentOfWindow: percent(tokens, window),
		Model:           model,
		Source:          source,
		WarnAt:          warn,
		AutoSaveAt:      save,
	}
}

// percent rounds to a hundredth so that JSON output stays short and stable.
func percent(part, whole int) float64 {
	if whole <= 0 {
		return 0
	}
	return math.Round(float64(part)/float64(whole)*10_000) / 100
}
