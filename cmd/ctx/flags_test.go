package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

func TestSaveAndCloseFlagsReachTheOptions(t *testing.T) {
	app := &App{Getenv: func(string) string { return "" }}
	for _, closing := range []bool{false, true} {
		var got *saveOptions
		capture := func(o *saveOptions) error { got = o; return nil }
		cmd := newSaveCmd(app, capture)
		if closing {
			cmd = newCloseCmd(app, capture)
		}
		cmd.SetArgs([]string{"-p", "3", "--summary", "s", "--next", "n", "--phase", "build", "--skill", "tdd",
			"--decision", "d1", "--decision", "d2, with a comma", "--assumption", "a", "--blocker", "b",
			"--file", "x.go", "--file", "y.go", "--json"})
		if err := cmd.Execute(); err != nil {
			t.Fatal(err)
		}
		if got == nil || got.Close != closing || got.Project != "3" || got.Summary != "s" || got.Next != "n" ||
			got.Phase != "build" || got.Skill != "tdd" || !got.JSON ||
			!slices.Equal(got.Decisions, []string{"d1", "d2, with a comma"}) ||
			!slices.Equal(got.Assumptions, []string{"a"}) || !slices.Equal(got.Blockers, []string{"b"}) ||
			!slices.Equal(got.Files, []string{"x.go", "y.go"}) {
			t.Errorf("close=%v: options %+v", closing, got)
		}
	}
}

// Every command's help shows an example; cobra's own help and completion commands aside.
func TestEveryCommandHasAnExample(t *testing.T) {
	root := newRootCmd(&App{Getenv: func(string) string { return "" }})
	root.InitDefaultCompletionCmd()
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Name() == "completion" || c.Name() == "help" {
			return
		}
		if strings.TrimSpace(c.Example) == "" {
			t.Errorf("%q has no example", c.CommandPath())
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}
