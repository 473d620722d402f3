package guard

import (
	"bufio"
	"os"
	"strings"
	"testing"
)

// tableCase is one line of testdata/commands.txt.
type tableCase struct {
	line    int
	deny    bool
	rule    string
	clean   bool
	cwd     string
	command string
}

// readTable reads testdata/commands.txt; its header describes the format.
func readTable(t *testing.T) []tableCase {
	t.Helper()
	f, err := os.Open("testdata/commands.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var cases []tableCase
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		n++
		text := sc.Text()
		if rest, ok := strings.CutPrefix(text, "    "); ok {
			if len(cases) == 0 {
				t.Fatalf("commands.txt:%d: a continuation line with no command above", n)
			}
			cases[len(cases)-1].command += "\n" + rest
			continue
		}
		if strings.TrimSpace(text) == "" || strings.HasPrefix(text, "#") {
			continue
		}
		head, command, ok := strings.Cut(text, "|")
		if !ok {
			t.Fatalf("commands.txt:%d: no | between the verdict and the command", n)
		}
		c := tableCase{line: n, command: strings.TrimPrefix(command, " ")}
		fields := strings.Fields(head)
		if len(fields) == 0 {
			t.Fatalf("commands.txt:%d: no verdict", n)
		}
		switch fields[0] {
		case "deny":
			if len(fields) < 2 {
				t.Fatalf("commands.txt:%d: deny needs a rule", n)
			}
			c.deny, c.rule, fields = true, fields[1], fields[2:]
		case "allow":
			fields = fields[1:]
		default:
			t.Fatalf("commands.txt:%d: verdict %q, want deny or allow", n, fields[0])
		}
		for _, opt := range fields {
			switch {
			case opt == "clean":
				c.clean = true
			case strings.HasPrefix(opt, "cwd="):
				c.cwd = strings.TrimPrefix(opt, "cwd=")
			default:
				t.Fatalf("commands.txt:%d: unknown option %q", n, opt)
			}
		}
		cases = append(cases, c)
	}
	if err := sc.Err(); err != nil {
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
		Cwd:       c.cwd,
		Dirty: func(dir string) bool {
			return !c.clean && (dir == "/ws" || strings.HasPrefix(dir, "/ws/"))
		},
	}
}

func TestCommandTable(t *testing.T) {
	cases := readTable(t)
	denied, allowed := 0, 0
	for _, c := range cases {
		r, err := New(Config{}, tableEnv(c))
		if err != nil {
			t.Fatal(err)
		}
		v := r.Check(c.command)
		switch {
		case c.deny && (!v.Deny || v.Rule != c.rule):
			t.Errorf("commands.txt:%d: Check(%q) = %+v, want denied by %s", c.line, c.command, v, c.rule)
		case !c.deny && v.Deny:
			t.Errorf("commands.txt:%d: Check(%q) = %+v, want allowed", c.line, c.command, v)
		case c.deny:
			denied++
			if !strings.HasPrefix(v.Reason, "Refused ") || !strings.HasSuffix(v.Reason, ".") || strings.Contains(v.Reason, "\n") {
				t.Errorf("commands.txt:%d: reason %q: want one line starting with Refused and ending with a period", c.line, v.Reason)
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
		seen[c.rule] = true
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
		if !c.deny {
			continue
		}
		r, _ := New(Config{}, tableEnv(c))
		reason := r.Check(c.command).Reason
		if rest, ok := strings.CutPrefix(reason, "Refused `"); ok {
			if i := strings.Index(rest, "`: "); i >= 0 {
				reason = rest[i+3:]
			}
		}
		parts := strings.Split(reason, "`")
		for i := 1; i < len(parts); i += 2 {
			if v := r.Check(parts[i]); v.Deny {
				t.Errorf("commands.txt:%d: the reason advises `%s`, which the guard refuses: %s", c.line, parts[i], v.Reason)
			}
		}
	}
}

// TestClassesListEveryRule keeps the exported catalog and the package's rules in step:
// every class the table proves is listed once, and nothing else is.
func TestClassesListEveryRule(t *testing.T) {
	listed := map[string]bool{}
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
		if c.deny {
			proven[c.rule] = true
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
