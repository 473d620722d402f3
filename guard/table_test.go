package guard

import (
	"strings"
	"testing"

	"github.com/ctxtools/ctx/internal/testkit/guardtable"
)

// tableCase is one line of testdata/commands.txt.
type tableCase = guardtable.Case

// readTable reads testdata/commands.txt; its header describes the format.
func readTable(t *testing.T) []tableCase {
	t.Helper()
	cases, err := guardtable.Read("testdata/commands.txt")
	if err != nil {
		t.Fatal(err)
	}
	return cases
}

// tableEnv is the machine of commands.txt: a workspace at /ws whose repository has
// uncommitted changes, unless the case says clean.
func tableEnv(c tableCase) Env {
	return Env{
		Workspace: "/ws",
		Home:      "/home/u",
		Cwd:       c.Cwd,
		Dirty: func(dir string) bool {
			return !c.Clean && (dir == "/ws" || strings.HasPrefix(dir, "/ws/"))
		},
	}
}

func TestCommandTable(t *testing.T) {
	cases := readTable(t)
	denied, allowed := 0, 0
	for _, c := range cases {
		r, err := New(Config{Presets: c.Presets}, tableEnv(c))
		if err != nil {
			t.Fatal(err)
		}
		v := r.Check(c.Command)
		switch {
		case c.Deny && (!v.Deny || v.Rule != c.Rule):
			t.Errorf("commands.txt:%d: Check(%q) = %+v, want denied by %s", c.Line, c.Command, v, c.Rule)
		case !c.Deny && v.Deny:
			t.Errorf("commands.txt:%d: Check(%q) = %+v, want allowed", c.Line, c.Command, v)
		case c.Deny:
			denied++
			if !strings.HasPrefix(v.Reason, "Refused ") || !strings.HasSuffix(v.Reason, ".") || strings.Contains(v.Reason, "\n") {
				t.Errorf("commands.txt:%d: reason %q: want one line starting with Refused and ending with a period", c.Line, v.Reason)
			}
		default:
			allowed++
		}
	}
	if denied < 80 || allowed < 80 {
		t.Errorf("commands.txt has %d dangerous and %d harmless commands that pass, want at least 80 of each", denied, allowed)
	}
	t.Logf("%d dangerous commands refused, %d harmless ones allowed", denied, allowed)
}

// TestTableCoversEveryRule makes sure commands.txt refuses at least one command under
// each rule the package documents, apart from config-deny, which needs a config.
func TestTableCoversEveryRule(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range readTable(t) {
		seen[c.Rule] = true
	}
	for _, rule := range []string{
		ruleRmRoot, ruleRmHome, ruleRmWorkspace, ruleRmParent, ruleRmSystem, ruleRmNoPreserveRoot,
		ruleRmProjects, ruleRmUnsetVar, ruleFindDelete, ruleXargsRm, ruleGitForcePush,
		ruleGitDeleteMain, ruleGitResetHard, ruleGitClean, ruleGitCheckoutDiscard,
		ruleGitRestoreDiscard, ruleGitSwitchDiscard, ruleGitStashDrop, ruleOverwriteInPlace,
		ruleChmodRecursive, ruleChownRecursive, rulePipeToShell, ruleSQLDrop, ruleSQLTruncate,
		ruleSQLDeleteAll, ruleMkfs, ruleDdDevice, ruleDeviceWrite, ruleForkBomb, ruleTooDeep,
		ruleUnjudgeable,
	} {
		if !seen[rule] {
			t.Errorf("commands.txt refuses nothing under %s", rule)
		}
	}
}

// TestAdviceIsAllowed checks that what a refusal tells the agent to run instead, the
// commands in backquotes after the quoted command, is not itself refused: an agent
// following the advice must not hit the guard again, or lose the work it was told to
// keep.
func TestAdviceIsAllowed(t *testing.T) {
	for _, c := range readTable(t) {
		if !c.Deny {
			continue
		}
		r, _ := New(Config{}, tableEnv(c))
		reason := r.Check(c.Command).Reason
		if rest, ok := strings.CutPrefix(reason, "Refused `"); ok {
			if i := strings.Index(rest, "`: "); i >= 0 {
				reason = rest[i+3:]
			}
		}
		parts := strings.Split(reason, "`")
		for i := 1; i < len(parts); i += 2 {
			if v := r.Check(parts[i]); v.Deny {
				t.Errorf("commands.txt:%d: the reason advises `%s`, which the guard refuses: %s", c.Line, parts[i], v.Reason)
			}
		}
	}
}

// TestClassesListEveryRule keeps the exported catalog and the package's rules in step:
// every class the table proves is listed once, and nothing else is.
func TestClassesListEveryRule(t *testing.T) {
	listed := map[string]bool{}
	for _, p := range Presets {
		listed["preset-"+p.Name] = true
	}
	for _, c := range Classes {
		if listed[c.Rule] {
			t.Errorf("Classes lists %s twice", c.Rule)
		}
		listed[c.Rule] = true
		if c.Refuses == "" {
			t.Errorf("Classes: %s says nothing about what it refuses", c.Rule)
		}
	}
	proven := map[string]bool{}
	for _, c := range readTable(t) {
		if c.Deny {
			proven[c.Rule] = true
		}
	}
	for rule := range proven {
		if !listed[rule] {
			t.Errorf("commands.txt refuses under %s, which Classes does not list", rule)
		}
	}
	for rule := range listed {
		if !proven[rule] {
			t.Errorf("Classes lists %s, which commands.txt never refuses under", rule)
		}
	}
}
