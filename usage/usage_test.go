package usage

import (
	"math"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

func TestCompute(t *testing.T) {
	tests := []struct {
		name   string
		tokens int
		model  string
		cfg    Config
		want   Usage
	}{
		{
			name: "defaults", tokens: 125_250, model: "claude-sonnet-4-5",
			want: Usage{TokensUsed: 125_250, Window: 200_000, Reserve: 33_000, Budget: 167_000,
				PercentOfBudget: 75, PercentOfWindow: 62.63, Model: "claude-sonnet-4-5", Source: SourceAssistant,
				WarnAt: 0.75, AutoSaveAt: 0.9},
		},
		{
			name: "1m model", tokens: 50_000, model: "claude-sonnet-4-5-20250929[1m]",
			want: Usage{TokensUsed: 50_000, Window: 1_000_000, Reserve: 33_000, Budget: 967_000,
				PercentOfBudget: 5.17, PercentOfWindow: 5, Model: "claude-sonnet-4-5-20250929[1m]", Source: SourceAssistant,
				WarnAt: 0.75, AutoSaveAt: 0.9},
		},
		{
			name: "past 200k on a model that does not say 1m", tokens: 200_001, model: "claude-opus-4-6",
			want: Usage{TokensUsed: 200_001, Window: 1_000_000, Reserve: 33_000, Budget: 967_000,
				PercentOfBudget: 20.68, PercentOfWindow: 20, Model: "claude-opus-4-6", Source: SourceAssistant,
				WarnAt: 0.75, AutoSaveAt: 0.9},
		},
		{
			name: "configured window wins", tokens: 300_000, model: "claude-sonnet-4-5[1m]",
			cfg: Config{Window: 400_000, Reserve: 50_000, WarnAt: 0.5, AutoSaveAt: 0.8},
			want: Usage{TokensUsed: 300_000, Window: 400_000, Reserve: 50_000, Budget: 350_000,
				PercentOfBudget: 85.71, PercentOfWindow: 75, Model: "claude-sonnet-4-5[1m]", Source: SourceAssistant,
				WarnAt: 0.5, AutoSaveAt: 0.8},
		},
		{
			name: "invalid settings fall back", tokens: -5, model: "",
			cfg: Config{Window: 10_000, Reserve: 20_000, WarnAt: 2, AutoSaveAt: math.NaN()},
			want: Usage{TokensUsed: 0, Window: 10_000, Reserve: 0, Budget: 10_000,
				Source: SourceAssistant, WarnAt: 0.75, AutoSaveAt: 0.9},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Compute(tt.tokens, tt.model, SourceAssistant, tt.cfg)
			if *got != tt.want {
				t.Errorf("got  %+v\nwant %+v", *got, tt.want)
			}
		})
	}
	if got := Compute(0, "", "", Config{}).Source; got != SourceNone {
		t.Errorf("empty source: got %q, want %q", got, SourceNone)
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
	src := "window: 1000000\nreserve: 40000\nwarn_at: 0.7\nauto_save_at: 0.85\n"
	if err := yaml.Unmarshal([]byte(src), &cfg); err != nil {
		t.Fatal(err)
	}
	want := Config{Window: 1_000_000, Reserve: 40_000, WarnAt: 0.7, AutoSaveAt: 0.85}
	if cfg != want {
		t.Errorf("got %+v, want %+v", cfg, want)
	}
}
