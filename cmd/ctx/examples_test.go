package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// TestExamplesStayCommands: fitted to 80 columns, every command's examples still
// copy as the same commands. A long example is continued with " \" (the shell joins
// the lines back), a long comment moves to its own line, and no line is wider than
// 80 columns unless a single quoted word is.
func TestExamplesStayCommands(t *testing.T) {
	app := &App{Getenv: func(string) string { return "" }}
	var walk func(c *cobra.Command)
	fitted := 0
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			walk(sub)
		}
		if c.Example == "" {
			return
		}
		got := fitExamples(c.Example, 80)
		if got != c.Example {
			fitted++
		}
		// The commands, comments dropped, with continued lines joined as a shell
		// joins them.
		commands := func(text string) [][]string {
			var out [][]string
			text = strings.ReplaceAll(text, " \\\n", " ")
			for _, l := range strings.Split(text, "\n") {
				words := shellWords(strings.TrimSpace(l))
				if i := slices.Index(words, "#"); i >= 0 {
					words = words[:i]
				}
				if len(words) > 0 {
					out = append(out, words)
				}
			}
			return out
		}
		if a, b := commands(c.Example), commands(got); !slices.EqualFunc(a, b, slices.Equal[[]string]) {
			t.Errorf("%s: fitting changed the commands:\n%q\n%q", c.CommandPath(), a, b)
		}
		for _, l := range strings.Split(got, "\n") {
			if w := len([]rune(l)); w > 80 && len(shellWords(strings.TrimSpace(strings.TrimSuffix(l, " \\")))) > 1 {
				t.Errorf("%s: an example line of %d columns: %q", c.CommandPath(), w, l)
			}
		}
	}
	walk(newRootCmdFor(app, []string{"--help"}))
	if fitted < 5 {
		t.Fatalf("only %d commands' examples needed fitting at 80 columns; the test shows nothing", fitted)
	}
}
