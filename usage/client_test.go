package usage

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadWithClient checks that Read hands Claude Code's configuration to the budget.
func TestReadWithClient(t *testing.T) {
	path := filepath.Join(t.TempDir(), "session.jsonl")
	if err := os.WriteFile(path, []byte(strings.ReplaceAll(laterAssistant, "claude-sonnet-4-5", "claude-opus-5-5")), 0o644); err != nil {
		t.Fatal(err)
	}
	u, err := Read(path, Config{}, Client{CompactWindow: 400_000, CompactWindowSource: "flag --autocompact 400000"})
	if err != nil {
		t.Fatal(err)
	}
	if u.TokensUsed != 30_010 || u.Window != 1_000_000 || u.Budget != 367_000 || u.MaxOutput != 128_000 {
		t.Errorf("got %+v, want 30010 tokens of a 367000 budget in a 1M window", *u)
	}
}
