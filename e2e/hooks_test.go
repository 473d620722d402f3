//go:build e2e

package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// everyEvent runs one session that passes through every hook event ctx installs: a
// start, prompts, Bash and Write calls, replies, an automatic compaction and the end.
func everyEvent(t *testing.T, e *Env) *Result {
	t.Helper()
	e.Model.Script(
		Call(5000, Bash("ctx load 1 >/dev/null"), Write(filepath.Join(e.Workspace, ProjectPath("03-working/e2e-notes.md")), "notes\n")),
		Say("first prompt done", 6000),
		Call(975_000, Bash("echo after")),
		Say("second prompt done", 0),
	)
	return e.MustRun(Run{Prompts: []string{"load project 1 and take notes", "carry on"}})
}

// Every hook ctx installs fires in the real client, exits 0 and says nothing on stderr.
func TestEveryHookFiresAndExitsZero(t *testing.T) {
	e := New(t, Options{Git: true})
	res := everyEvent(t, e)
	seen := map[string]int{}
	for _, h := range res.Hooks {
		if !strings.Contains(h.Command, "ctx") {
			continue
		}
		seen[h.Event]++
		if h.Status != 0 {
			t.Errorf("%s [%s] exited %d", h.Event, h.Command, h.Status)
		}
	}
	for _, ev := range []string{"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop", "PreCompact", "SessionEnd"} {
		if seen[ev] == 0 {
			t.Errorf("hook %s never ran; ran: %v", ev, seen)
		}
	}
	for _, ev := range res.HookEvents() {
		if s, _ := ev["stderr"].(string); s != "" {
			t.Errorf("%v wrote to stderr: %s", ev["hook_name"], s)
		}
		if c, _ := ev["exit_code"].(float64); c != 0 {
			t.Errorf("%v exited %v", ev["hook_name"], c)
		}
	}
	if strings.Contains(res.Debug, "Invalid setting skipped") {
		t.Errorf("Claude Code skipped part of ctx's settings:\n%s", grepLines(res.Debug, "Invalid setting"))
	}
}

// ctx's skills are discovered by the client after `ctx init`.
func TestSkillsAreDiscovered(t *testing.T) {
	e := New(t, Options{})
	res := e.MustRun(Run{Prompts: []string{"hello"}})
	var skills []any
	for _, ev := range res.Events {
		if ev["type"] == "system" && ev["subtype"] == "init" {
			skills, _ = ev["skills"].([]any)
		}
	}
	names := map[string]bool{}
	for _, s := range skills {
		names[s.(string)] = true
	}
	entries, err := os.ReadDir(filepath.Join(e.Workspace, ".claude", "skills"))
	if err != nil || len(entries) == 0 {
		t.Fatalf("ctx init installed no skills: %v", err)
	}
	for _, d := range entries {
		if !names[d.Name()] {
			t.Errorf("skill %s installed by ctx init is not offered by the client (offered: %v)", d.Name(), skills)
		}
	}
}

// Outside a workspace, with ctx installed for the user, the project hooks stay silent
// and write nothing.
func TestOutsideWorkspaceHooksWriteNothing(t *testing.T) {
	e := New(t, Options{NoInit: true})
	e.MustCtx("init", "--global")
	dir := filepath.Join(e.Root, "elsewhere")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	e.Model.Script(Call(5000, Write(filepath.Join(dir, "a.txt"), "a\n")), Say("done", 6000))
	res := e.MustRun(Run{Prompts: []string{"write a file"}, Dir: dir})
	ran := 0
	for _, h := range res.Hooks {
		if strings.Contains(h.Command, "ctx") {
			ran++
			if h.Status != 0 {
				t.Errorf("%s exited %d", h.Event, h.Status)
			}
		}
	}
	if ran == 0 {
		t.Fatal("no ctx hook ran from the user's settings")
	}
	for _, ev := range res.HookEvents() {
		if s, _ := ev["stdout"].(string); s != "" && ev["hook_event"] != "PreToolUse" {
			t.Errorf("%v printed outside a workspace: %s", ev["hook_name"], s)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, ".ctx")); err == nil {
		t.Error("a hook created .ctx outside a workspace")
	}
}

func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
