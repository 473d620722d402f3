package main

import (
	"regexp"
	"strings"
	"testing"

	"github.com/ctxtools/ctx/skills"
)

var skillSpanRE = regexp.MustCompile("`ctx ([^`]+)`")

// fencedCalls returns the `ctx ...` lines inside the fenced code blocks of a skill.
func fencedCalls(content string) []string {
	var out []string
	inFence := false
	for _, line := range strings.Split(content, "\n") {
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "```") {
			inFence = !inFence
			continue
		}
		if call, ok := strings.CutPrefix(t, "ctx "); ok && inFence {
			out = append(out, call)
		}
	}
	return out
}

// Every `ctx ...` a skill tells the agent to run names a real command of this binary,
// with flags the command has.
func TestSkillsNameRealCommands(t *testing.T) {
	all, err := skills.All()
	if err != nil {
		t.Fatal(err)
	}
	root := newRootCmd(&App{Getenv: func(string) string { return "" }})
	checked := 0
	for _, s := range all {
		var calls []string
		for _, m := range skillSpanRE.FindAllStringSubmatch(string(s.Content), -1) {
			calls = append(calls, m[1])
		}
		calls = append(calls, fencedCalls(string(s.Content))...)
		for _, call := range calls {
			words := strings.Fields(call)
			cmd, _, err := root.Find(words)
			if err != nil || (cmd == root && !strings.HasPrefix(words[0], "-")) {
				t.Errorf("%s: `ctx %s` is not a ctx command", s.Name, call)
				continue
			}
			for _, w := range words {
				name, ok := strings.CutPrefix(w, "--")
				if !ok {
					continue
				}
				name, _, _ = strings.Cut(name, "=")
				if cmd.Flags().Lookup(name) == nil && cmd.InheritedFlags().Lookup(name) == nil {
					t.Errorf("%s: `ctx %s`: %s has no flag --%s", s.Name, call, cmd.CommandPath(), name)
				}
			}
			checked++
		}
	}
	if checked < len(all) {
		t.Errorf("checked %d invocations in %d skills; every skill names at least one", checked, len(all))
	}
}
