package usage

import "testing"

func TestLookupModel(t *testing.T) {
	large := Model{Window: 1_000_000, MaxOutput: 128_000}
	four := Model{Window: 200_000, MaxOutput: 32_000}
	tests := []struct {
		id   string
		want Model
		ok   bool
	}{
		{"claude-opus-5-5", large, true},
		{"claude-opus-5-5-20260301", large, true},
		{"claude-opus-5", large, true},
		{"claude-sonnet-5-5", large, true},
		{"claude-haiku-5-1", large, true},
		{"Claude-Opus-5-5", large, true},
		{"opus", large, true},
		{"sonnet", large, true},
		{"haiku", large, true},
		{"default", large, true},
		{"sonnet[1m]", large, true},
		{"claude-sonnet-4-5", four, true},
		{"claude-sonnet-4-5-20250929", four, true},
		{"claude-haiku-4-5", four, true},
		{"claude-sonnet-4-0", four, true},
		{"claude-sonnet-4-20250514", four, true},
		{"claude-opus-4-1-20250805", four, true},
		{"claude-opus-4-6", four, true},
		{"us.anthropic.claude-sonnet-4-5-20250929-v1:0", four, true},
		{"claude-sonnet-4-5@20250929", four, true},
		{"claude-sonnet-4-5[1m]", Model{Window: 1_000_000, MaxOutput: 32_000}, true},
		{"claude-sonnet-4-5-20250929[1M]", Model{Window: 1_000_000, MaxOutput: 32_000}, true},
		{"claude-3-5-sonnet-20241022", Model{Window: 200_000, MaxOutput: 8_192}, true},
		{"claude-3-opus-20240229", Model{Window: 200_000, MaxOutput: 8_192}, true},
		{"something[1m]", Model{Window: 1_000_000}, true},
		{"", Model{}, false},
		{"<synthetic>", Model{}, false},
		{"gpt-5", Model{}, false},
		{"claude-opus-55", Model{}, false},
		{"opusplan", Model{}, false},
		{"claude-next-1", Model{}, false},
	}
	for _, tt := range tests {
		got, ok := LookupModel(tt.id)
		if got != tt.want || ok != tt.ok {
			t.Errorf("LookupModel(%q) = %+v, %v; want %+v, %v", tt.id, got, ok, tt.want, tt.ok)
		}
	}
}

func TestSameModel(t *testing.T) {
	tests := []struct {
		a, b string
		want bool
	}{
		{"claude-sonnet-4-5[1m]", "claude-sonnet-4-5-20250929", true},
		{"claude-sonnet-4-5", "us.anthropic.claude-sonnet-4-5-20250929-v1:0", true},
		{"opus[1m]", "claude-opus-5-5", true},
		{"default", "claude-opus-5-5-20260301", true},
		{"claude-sonnet-4[1m]", "claude-sonnet-4-5", false},
		{"sonnet[1m]", "claude-sonnet-4-5", false},
		{"", "", false},
	}
	for _, tt := range tests {
		if got := sameModel(tt.a, tt.b); got != tt.want {
			t.Errorf("sameModel(%q, %q) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
}
