package usage

import (
	"math"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

const ccDefault = "claude code default: window - 20000 - 13000"

func TestCompute(t *testing.T) {
	tests := []struct {
		name   string
		tokens int
		model  string
		cfg    Config
		cl     Client
		want   Usage
	}{
		{
			name: "200k model", tokens: 125_250, model: "claude-sonnet-4-5",
			want: Usage{TokensUsed: 125_250, Window: 200_000, Reserve: 33_000, Budget: 167_000,
				PercentOfBudget: 75, PercentOfWindow: 62.63, Model: "claude-sonnet-4-5", Source: SourceAssistant,
				WarnAt: 0.75, AutoSaveAt: 0.9,
				WindowSource: "model claude-sonnet-4-5", MaxOutput: 32_000, AutoCompact: true, BudgetSource: ccDefault},
		},
		{
			name: "the default model: 126k is 13% of the budget, not 75%", tokens: 126_000, model: "claude-opus-5-5",
			want: Usage{TokensUsed: 126_000, Window: 1_000_000, Reserve: 33_000, Budget: 967_000,
				PercentOfBudget: 13.03, PercentOfWindow: 12.6, Model: "claude-opus-5-5", Source: SourceAssistant,
				WarnAt: 0.75, AutoSaveAt: 0.9,
				WindowSource: "model claude-opus-5-5", MaxOutput: 128_000, AutoCompact: true, BudgetSource: ccDefault},
		},
		{
			name: "1m model", tokens: 50_000, model: "claude-sonnet-4-5-20250929[1m]",
			want: Usage{TokensUsed: 50_000, Window: 1_000_000, Reserve: 33_000, Budget: 967_000,
				PercentOfBudget: 5.17, PercentOfWindow: 5, Model: "claude-sonnet-4-5-20250929[1m]", Source: SourceAssistant,
				WarnAt: 0.75, AutoSaveAt: 0.9,
				WindowSource: "model claude-sonnet-4-5-20250929[1m]", MaxOutput: 32_000, AutoCompact: true, BudgetSource: ccDefault},
		},
		{
			name: "past 200k on a model that does not say 1m", tokens: 200_001, model: "claude-opus-4-6",
			want: Usage{TokensUsed: 200_001, Window: 1_000_000, Reserve: 33_000, Budget: 967_000,
				PercentOfBudget: 20.68, PercentOfWindow: 20, Model: "claude-opus-4-6", Source: SourceAssistant,
				WarnAt: 0.75, AutoSaveAt: 0.9,
				WindowSource: "tokens past 200000", MaxOutput: 32_000, AutoCompact: true, BudgetSource: ccDefault},
		},
		{
			name: "configured window and reserve, for a model ctx does not know", tokens: 300_000, model: "gpt-x",
			cfg: Config{Window: 400_000, Reserve: 50_000, WarnAt: 0.5, AutoSaveAt: 0.8},
			want: Usage{TokensUsed: 300_000, Window: 400_000, Reserve: 50_000, Budget: 350_000,
				PercentOfBudget: 85.71, PercentOfWindow: 75, Model: "gpt-x", Source: SourceAssistant,
				WarnAt: 0.5, AutoSaveAt: 0.8,
				WindowSource: WindowFromConfig, AutoCompact: true, BudgetSource: "config usage.reserve: window - 50000"},
		},
		{
			name: "configured window and reserve do not override a known model", tokens: 300_000, model: "claude-opus-5-5",
			cfg: Config{Window: 400_000, Reserve: 50_000},
			want: Usage{TokensUsed: 300_000, Window: 1_000_000, Reserve: 33_000, Budget: 967_000,
				PercentOfBudget: 31.02, PercentOfWindow: 30, Model: "claude-opus-5-5", Source: SourceAssistant,
				WarnAt: 0.75, AutoSaveAt: 0.9,
				WindowSource: "model claude-opus-5-5", MaxOutput: 128_000, AutoCompact: true, BudgetSource: ccDefault},
		},
		{
			name: "Claude Code's compaction window beats the configured reserve", tokens: 100_000, model: "gpt-x",
			cfg: Config{Window: 500_000, Reserve: 50_000},
			cl:  Client{CompactWindow: 300_000, CompactWindowSource: "env CLAUDE_CODE_AUTO_COMPACT_WINDOW=300000"},
			want: Usage{TokensUsed: 100_000, Window: 500_000, Reserve: 233_000, Budget: 267_000,
				PercentOfBudget: 37.45, PercentOfWindow: 20, Model: "gpt-x", Source: SourceAssistant,
				WarnAt: 0.75, AutoSaveAt: 0.9,
				WindowSource: WindowFromConfig, AutoCompact: true,
				BudgetSource: "env CLAUDE_CODE_AUTO_COMPACT_WINDOW=300000: min(300000, window) - 20000 - 13000"},
		},
		{
			name: "invalid settings fall back", tokens: -5, model: "",
			cfg: Config{Window: 10_000, Reserve: 20_000, WarnAt: 2, AutoSaveAt: math.NaN()},
			want: Usage{TokensUsed: 0, Window: 10_000, Reserve: 0, Budget: 10_000,
				Source: SourceAssistant, WarnAt: 0.75, AutoSaveAt: 0.9,
				WindowSource: WindowFromConfig, AutoCompact: true, BudgetSource: ccDefault + ", below 0: the whole window instead"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Compute(tt.tokens, tt.model, SourceAssistant, tt.cfg, tt.cl)
			if *got != tt.want {
				t.Errorf("got  %+v\nwant %+v", *got, tt.want)
			}
		})
	}
	if got := Compute(0, "", "", Config{}, Client{}).Source; got != SourceNone {
		t.Errorf("empty source: got %q, want %q", got, SourceNone)
	}
}

// TestComputeBudget checks Claude Code's compaction arithmetic and what moves it.
func TestComputeBudget(t *testing.T) {
	const (
		envWindow  = "env CLAUDE_CODE_AUTO_COMPACT_WINDOW=400000"
		envPercent = "env CLAUDE_AUTOCOMPACT_PCT_OVERRIDE=50"
		envOff     = "env DISABLE_AUTO_COMPACT=1"
		env200k    = "env CLAUDE_CODE_DISABLE_1M_CONTEXT=1"
	)
	window400k := Client{CompactWindow: 400_000, CompactWindowSource: envWindow}
	percent50 := Client{CompactPercent: 50, CompactPercentSource: envPercent}
	tests := []struct {
		name         string
		model        string
		tokens       int
		cfg          Config
		cl           Client
		window       int
		windowSource string
		budget       int
		budgetSource string
		auto         bool
	}{
		{name: "1M model", model: "claude-opus-5-5",
			window: 1_000_000, windowSource: "model claude-opus-5-5", budget: 967_000, budgetSource: ccDefault, auto: true},
		{name: "200k model", model: "claude-sonnet-4-5",
			window: 200_000, windowSource: "model claude-sonnet-4-5", budget: 167_000, budgetSource: ccDefault, auto: true},
		{name: "claude-3: an 8k output limit", model: "claude-3-5-haiku-20241022",
			window: 200_000, windowSource: "model claude-3-5-haiku-20241022", budget: 178_808,
			budgetSource: "claude code default: window - 8192 - 13000", auto: true},
		{name: "unknown model", model: "gpt-x",
			window: 200_000, windowSource: WindowFromDefault, budget: 167_000, budgetSource: ccDefault, auto: true},
		{name: "compaction window 400k on a 1M model", model: "claude-opus-5-5", cl: window400k,
			window: 1_000_000, windowSource: "model claude-opus-5-5", budget: 367_000,
			budgetSource: envWindow + ": min(400000, window) - 20000 - 13000", auto: true},
		{name: "compaction window past a 200k model's window", model: "claude-sonnet-4-5", cl: window400k,
			window: 200_000, windowSource: "model claude-sonnet-4-5", budget: 167_000,
			budgetSource: envWindow + ": min(400000, window) - 20000 - 13000", auto: true},
		{name: "percent 50 on the default model", model: "claude-opus-5-5", cl: percent50,
			window: 1_000_000, windowSource: "model claude-opus-5-5", budget: 490_000,
			budgetSource: envPercent + ": 50% of 980000", auto: true},
		{name: "percent 99 is past the default point", model: "claude-opus-5-5",
			cl:     Client{CompactPercent: 99, CompactPercentSource: "env CLAUDE_AUTOCOMPACT_PCT_OVERRIDE=99"},
			window: 1_000_000, windowSource: "model claude-opus-5-5", budget: 967_000, budgetSource: ccDefault, auto: true},
		{name: "percent of the compaction window", model: "claude-opus-5-5",
			cl:     Client{CompactWindow: 400_000, CompactWindowSource: envWindow, CompactPercent: 50, CompactPercentSource: envPercent},
			window: 1_000_000, windowSource: "model claude-opus-5-5", budget: 190_000,
			budgetSource: envPercent + ": 50% of 380000", auto: true},
		{name: "auto-compaction off: the whole window", model: "claude-opus-5-5", tokens: 970_000,
			cl:     Client{AutoCompactOff: true, AutoCompactOffSource: envOff, CompactWindow: 400_000, CompactWindowSource: envWindow},
			window: 1_000_000, windowSource: "model claude-opus-5-5", budget: 1_000_000,
			budgetSource: "auto-compaction disabled (" + envOff + ")"},
		{name: "1M turned off", model: "claude-opus-5-5", cl: Client{Disable1M: true, Disable1MSource: env200k},
			window: 200_000, windowSource: env200k, budget: 167_000, budgetSource: ccDefault, auto: true},
		{name: "1M turned off does not touch a 200k model", model: "claude-sonnet-4-5", cl: Client{Disable1M: true, Disable1MSource: env200k},
			window: 200_000, windowSource: "model claude-sonnet-4-5", budget: 167_000, budgetSource: ccDefault, auto: true},
		{name: "the status line's window wins", model: "claude-opus-5-5",
			cl:     Client{KnownWindow: 500_000, Disable1M: true, Disable1MSource: env200k},
			window: 500_000, windowSource: WindowFromStatusLine, budget: 467_000, budgetSource: ccDefault, auto: true},
		{name: "the status line's window is not second-guessed by the count", model: "claude-sonnet-4-5", tokens: 250_000,
			cl:     Client{KnownWindow: 200_000},
			window: 200_000, windowSource: WindowFromStatusLine, budget: 167_000, budgetSource: ccDefault, auto: true},
		{name: "no model in the transcript: the one Claude Code was started with", model: "",
			cl:     Client{Model: "opus", ModelSource: "flag --model"},
			window: 1_000_000, windowSource: "model opus (flag --model)", budget: 967_000, budgetSource: ccDefault, auto: true},
		{name: "the transcript's model wins over the flag", model: "claude-sonnet-4-5",
			cl:     Client{Model: "opus", ModelSource: "flag --model"},
			window: 200_000, windowSource: "model claude-sonnet-4-5", budget: 167_000, budgetSource: ccDefault, auto: true},
		{name: "the [1m] the transcript drops, from the setting", model: "claude-sonnet-4-5-20250929",
			cl:     Client{Model: "claude-sonnet-4-5[1m]", ModelSource: "setting model in .claude/settings.json"},
			window: 1_000_000, windowSource: "model claude-sonnet-4-5-20250929 with [1m] (setting model in .claude/settings.json)",
			budget: 967_000, budgetSource: ccDefault, auto: true},
		{name: "a [1m] for another model does not count", model: "claude-haiku-4-5",
			cl:     Client{Model: "claude-sonnet-4-5[1m]", ModelSource: "flag --model"},
			window: 200_000, windowSource: "model claude-haiku-4-5", budget: 167_000, budgetSource: ccDefault, auto: true},
		{name: "configured window for no model", model: "", cfg: Config{Window: 300_000},
			window: 300_000, windowSource: WindowFromConfig, budget: 267_000, budgetSource: ccDefault, auto: true},
		{name: "configured reserve with the status line's window, model unknown", model: "",
			cfg: Config{Reserve: 40_000}, cl: Client{KnownWindow: 500_000},
			window: 500_000, windowSource: WindowFromStatusLine, budget: 460_000, budgetSource: "config usage.reserve: window - 40000", auto: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := Compute(tt.tokens, tt.model, SourceAssistant, tt.cfg, tt.cl)
			if u.Window != tt.window || u.WindowSource != tt.windowSource || u.Budget != tt.budget ||
				u.BudgetSource != tt.budgetSource || u.AutoCompact != tt.auto || u.Reserve != u.Window-u.Budget {
				t.Errorf("got window %d (%s), budget %d (%s), auto %v, reserve %d\nwant window %d (%s), budget %d (%s), auto %v",
					u.Window, u.WindowSource, u.Budget, u.BudgetSource, u.AutoCompact, u.Reserve,
					tt.window, tt.windowSource, tt.budget, tt.budgetSource, tt.auto)
			}
		})
	}
}

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		cfg  Config
		want string // a part of the error, "" for none
	}{
		{Config{}, ""},
		{Config{Window: 1_000_000, Reserve: 40_000, WarnAt: 0.6, AutoSaveAt: 1}, ""},
		{Config{Reserve: -1}, "reserve: must be above 0"},
		{Config{Window: -1}, "window: must be above 0"},
		{Config{Window: 30_000}, "window: must be above reserve (33000)"},
		{Config{Window: 100_000, Reserve: 100_000}, "window: must be above reserve (100000)"},
		{Config{Reserve: 200_000}, "reserve: must be below the automatic window"},
		{Config{WarnAt: 1}, "warn_at: must be a fraction"},
		{Config{WarnAt: -0.2}, "warn_at: must be a fraction"},
		{Config{WarnAt: math.NaN()}, "warn_at: must be a fraction"},
		{Config{AutoSaveAt: 1.5}, "auto_save_at: must be a fraction"},
		{Config{WarnAt: 0.95}, "warn_at: must be below auto_save_at (0.9), got 0.95"},
		{Config{WarnAt: 0.5, AutoSaveAt: 0.5}, "warn_at: must be below auto_save_at"},
		{Config{AutoSaveAt: 0.7}, "warn_at: must be below auto_save_at (0.7), got 0.75"},
		{Config{MaxScanBytes: 1 << 30}, ""},
		{Config{MaxScanBytes: -1}, "max_scan_bytes: must be above 0 (or 0 for 32 MiB), got -1"},
	}
	for _, tt := range tests {
		err := tt.cfg.Validate()
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%+v: unexpected error %v", tt.cfg, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%+v: got error %v, want one containing %q", tt.cfg, err, tt.want)
		}
	}

	err := Config{Reserve: -1, WarnAt: 3, AutoSaveAt: 2}.Validate()
	for _, key := range []string{"reserve:", "warn_at:", "auto_save_at:"} {
		if err == nil || !strings.Contains(err.Error(), key) {
			t.Errorf("several bad settings: got %v, want every key named (%s missing)", err, key)
		}
	}
}

func TestConfigYAML(t *testing.T) {
	var cfg Config
	src := "window: 1000000\nreserve: 40000\nwarn_at: 0.7\nauto_save_at: 0.85\nmax_scan_bytes: 67108864\n"
	if err := yaml.Unmarshal([]byte(src), &cfg); err != nil {
		t.Fatal(err)
	}
	want := Config{Window: 1_000_000, Reserve: 40_000, WarnAt: 0.7, AutoSaveAt: 0.85, MaxScanBytes: 64 << 20}
	if cfg != want {
		t.Errorf("got %+v, want %+v", cfg, want)
	}
}
