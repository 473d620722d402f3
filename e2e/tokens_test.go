//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxtools/ctx/usage"
)

// ccusageVersion is the pinned ccusage, another project's reader of Claude Code
// transcripts (its later versions need a native binary not published for every
// platform).
const ccusageVersion = "17.2.1"

// ccusage installs the pinned ccusage from npm into the e2e cache once.
func ccusage(t *testing.T) string {
	t.Helper()
	bin, err := npmInstall("ccusage", ccusageVersion, "node_modules/ccusage/dist/index.js", func(path string) bool {
		_, err := os.Stat(path)
		return err == nil
	})
	if err != nil {
		Missing(t, "ccusage %s: %v (install Node and npm: apt-get install nodejs npm)", ccusageVersion, err)
	}
	return bin
}

// Tokens spent, with ccusage as the oracle, on every real transcript: input, cache
// writes and cache reads agree exactly. Output agrees wherever each request's lines
// carry one usage; where Claude Code wrote a request's answer over several lines with
// the output growing (2.1.38), ccusage keeps the first line's count and ctx the
// largest, which is what the request was billed: ctx's is then the larger, and the
// figures are logged.
func TestTokensAgreeWithCcusage(t *testing.T) {
	bin := ccusage(t)
	files, _ := filepath.Glob("../../shared/transcripts/*.jsonl")
	if len(files) == 0 {
		Missing(t, "the real transcripts in ../shared/transcripts")
	}
	cfg := t.TempDir()
	for i, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join(cfg, "projects", fmt.Sprintf("p%02d", i))
		_ = os.MkdirAll(dir, 0o755)
		if err := os.WriteFile(filepath.Join(dir, "s.jsonl"), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("node", bin, "session", "--json", "--offline")
	cmd.Env = append(os.Environ(), "CLAUDE_CONFIG_DIR="+cfg, "TZ=UTC")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("ccusage: %v\n%s", err, out)
	}
	var report struct {
		Sessions []struct {
			SessionID           string `json:"sessionId"`
			InputTokens         int64  `json:"inputTokens"`
			OutputTokens        int64  `json:"outputTokens"`
			CacheCreationTokens int64  `json:"cacheCreationTokens"`
			CacheReadTokens     int64  `json:"cacheReadTokens"`
		} `json:"sessions"`
	}
	if err := json.Unmarshal(out, &report); err != nil {
		t.Fatalf("ccusage's report: %v\n%s", err, out)
	}
	theirs := map[string]usage.Tokens{}
	for _, s := range report.Sessions {
		theirs[s.SessionID] = usage.Tokens{Input: s.InputTokens, CacheWrite: s.CacheCreationTokens, CacheRead: s.CacheReadTokens, Output: s.OutputTokens}
	}
	var l usage.Ledger
	compared := 0
	for i, f := range files {
		days, err := l.Spent(filepath.Join(cfg, "projects", fmt.Sprintf("p%02d", i), "s.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		var ours usage.Tokens
		for _, d := range days {
			ours = ours.Add(d)
		}
		want, ok := theirs[fmt.Sprintf("p%02d", i)]
		if !ok {
			if ours.Total() != 0 {
				t.Errorf("%s: ccusage counts nothing, ctx %+v", filepath.Base(f), ours)
			}
			continue
		}
		compared++
		name := filepath.Base(f)
		if ours.Input != want.Input || ours.CacheWrite != want.CacheWrite || ours.CacheRead != want.CacheRead {
			t.Errorf("%s: ctx %+v, ccusage %+v", name, ours, want)
		}
		switch {
		case ours.Output < want.Output:
			t.Errorf("%s: ctx counts %d output tokens, fewer than ccusage's %d", name, ours.Output, want.Output)
		case ours.Output > want.Output:
			t.Logf("%s: output %d (the largest of each request's lines), ccusage %d (the first line's)", name, ours.Output, want.Output)
		}
		// The naive sum: every line's usage, a request counted once per line it wrote.
		var naive int64
		for line := range strings.Lines(string(mustRead(t, f))) {
			var l struct {
				Type    string `json:"type"`
				Message struct {
					Usage map[string]any `json:"usage"`
				} `json:"message"`
			}
			if json.Unmarshal([]byte(line), &l) == nil && l.Type == "assistant" {
				for _, k := range []string{"input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens", "output_tokens"} {
					n, _ := l.Message.Usage[k].(float64)
					naive += int64(n)
				}
			}
		}
		t.Logf("%s: billed %d tokens (%+v); every line's usage summed: %d (%.1f×)", name, ours.Total(), ours, naive, float64(naive)/float64(max(1, ours.Total())))
	}
	if compared < len(files)/2 {
		t.Errorf("only %d of %d transcripts compared", compared, len(files))
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
