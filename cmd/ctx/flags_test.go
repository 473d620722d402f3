package main

import (
	"slices"
	"testing"
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
