//go:build e2e

package e2e

import (
	"strings"
	"testing"
)

// thresholdCase runs one process of four prompts whose replies put the context at
// levels[0..3], and checks what ctx did on the prompt after each: nothing, nothing
// (still below the warning), a warning, an auto-save.
type thresholdCase struct {
	name   string
	model  string
	args   []string
	vars   map[string]string
	levels [4]int // the level after each prompt's reply
	budget int    // the compaction point the thresholds are fractions of
}

func TestWarningAndAutoSaveAtTheRealBudget(t *testing.T) {
	cases := []thresholdCase{
		// Claude Code's default model: 1M window, compaction at 967,000. ctx used to
		// warn at 126k here and save at 151k.
		{name: "default model", levels: [4]int{126_000, 600_000, 730_000, 875_000}, budget: 967_000},
		// A 200k model: compaction point 167,000.
		{name: "200k model", model: "claude-sonnet-4-5", levels: [4]int{60_000, 120_000, 126_000, 151_000}, budget: 167_000},
		// Claude Code's own settings move the point: 400,000 → 367,000.
		{name: "autocompact flag", args: []string{"--autocompact", "400000"}, levels: [4]int{126_000, 250_000, 276_000, 331_000}, budget: 367_000},
		{name: "autocompact env", vars: map[string]string{"CLAUDE_CODE_AUTO_COMPACT_WINDOW": "400000"}, levels: [4]int{126_000, 250_000, 276_000, 331_000}, budget: 367_000},
		{name: "autocompact percent", vars: map[string]string{"CLAUDE_AUTOCOMPACT_PCT_OVERRIDE": "50"}, levels: [4]int{126_000, 300_000, 368_000, 442_000}, budget: 490_000},
		// Automatic compaction off: ctx saves at its thresholds of the whole window.
		{name: "auto-compaction off", vars: map[string]string{"DISABLE_AUTO_COMPACT": "1"}, levels: [4]int{126_000, 700_000, 755_000, 905_000}, budget: 1_000_000},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := New(t, Options{Git: true})
			for k, v := range c.vars {
				e.Vars[k] = v
			}
			e.Model.Script(
				Call(5000, Bash("ctx load 1 >/dev/null")), Say("loaded", c.levels[0]),
				Say("two", c.levels[1]),
				Say("three", c.levels[2]),
				Say("four", c.levels[3]),
				Say("five", c.levels[3]+100),
			)
			res := e.MustRun(Run{Prompts: []string{"p1", "p2", "p3", "p4", "p5"}, Model: c.model, Args: c.args})
			out := res.HookOutputs("UserPromptSubmit")
			if len(out) != 5 {
				t.Fatalf("UserPromptSubmit ran %d times, want 5", len(out))
			}
			// Prompt n+1 sees the level of reply n.
			if out[1] != "" || out[2] != "" {
				t.Errorf("ctx spoke below 75%% of the %d budget (at %d and %d tokens): %q, %q", c.budget, c.levels[0], c.levels[1], out[1], out[2])
			}
			if out[3] == "" {
				t.Errorf("no warning at %d tokens (%.0f%% of %d)", c.levels[2], 100*float64(c.levels[2])/float64(c.budget), c.budget)
			}
			var autos []Snapshot
			for _, s := range e.Snapshots() {
				if s.Trigger == "auto" {
					autos = append(autos, s)
				}
			}
			if len(autos) != 1 {
				t.Fatalf("want one auto-save, got triggers %v", e.Triggers())
			}
			u := autos[0].ContextUsage
			if u == nil || u.TokensUsed != c.levels[3] || u.TokensTotal != c.budget {
				t.Errorf("auto-save usage = %+v, want %d of %d", u, c.levels[3], c.budget)
			}
			if out[4] == "" {
				t.Error("the auto-save told the agent nothing")
			}
			// The warning and the auto-save reached the model with the prompts.
			mains := e.Model.Requests(KindMain)
			if !told(mains, out[3]) || !told(mains, out[4]) {
				t.Error("a ctx warning did not reach the model")
			}
		})
	}
}

// told reports whether some request carried the hook's words.
func told(reqs []Request, words string) bool {
	words = strings.TrimSpace(words)
	for _, r := range reqs {
		if words != "" && strings.Contains(r.Text(), firstLine(words)) {
			return true
		}
	}
	return false
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
