//go:build e2e

package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A teammate who cloned a repository with ctx's hooks committed, but has no ctx, sees no
// hook failure: every hook exits 0 quietly.
func TestTeammateWithoutCtxSeesNoHookFailure(t *testing.T) {
	e := New(t, Options{Git: true})
	e.NoCtx = true
	e.Model.Script(Call(5000, Bash("ls"), Write(filepath.Join(e.Workspace, "notes.md"), "n\n")), Say("done", 6000))
	res := e.MustRun(Run{Prompts: []string{"look"}})
	if len(res.HookEvents()) == 0 {
		t.Fatal("no hook ran: the committed settings were not read")
	}
	for _, ev := range res.HookEvents() {
		if c, _ := ev["exit_code"].(float64); c != 0 {
			t.Errorf("%v exited %v: %v", ev["hook_name"], c, ev["stderr"])
		}
		if s, _ := ev["stderr"].(string); s != "" {
			t.Errorf("%v wrote to stderr: %s", ev["hook_name"], s)
		}
	}
	if strings.Contains(res.Debug, "ctx: not found") || strings.Contains(res.Debug, "command not found") {
		t.Errorf("the client logged a missing command:\n%s", grepLines(res.Debug, "not found"))
	}
}

// ctx installed both for the project and for the user does everything once: one
// journal line per tool call, one auto-save, one message to the agent. With identical
// command strings Claude Code runs the hook once; with different ones (an older
// install naming ctx by its path) it runs both, and ctx's second run does nothing.
func TestDoubleInstallRunsEveryHookOnce(t *testing.T) {
	for _, variant := range []string{"identical commands", "different commands"} {
		t.Run(variant, func(t *testing.T) {
			e := New(t, Options{})
			if variant == "identical commands" {
				// init refuses a second registration unless forced.
				e.MustCtx("init", "--global", "--force")
			} else {
				writeUserHooks(t, e, filepath.Join(e.CtxDir, "ctx"))
			}
			e.Model.Script(
				Call(5000, Bash("ctx load 1 >/dev/null")),
				Say("loaded", 880_000),
				Call(881_000, Bash("echo step")),
				Say("done", 882_000),
			)
			res := e.MustRun(Run{Prompts: []string{"load", "work"}})
			runs := 0
			for _, h := range res.Hooks {
				if h.Event == "UserPromptSubmit" {
					runs++
				}
			}
			if variant == "different commands" && runs != 4 {
				t.Fatalf("the scenario needs the client to run both registrations: UserPromptSubmit ran %d times for 2 prompts", runs)
			}
			if n := count(e.Triggers(), "auto"); n != 1 {
				t.Errorf("want one auto-save, got triggers %v", e.Triggers())
			}
			// The journal opened at the auto-save; the process's end finalized it.
			journals, _ := filepath.Glob(filepath.Join(e.Workspace, ".ctx", "sessions", "*-incremental*.jsonl"))
			if len(journals) != 1 {
				t.Fatalf("want one journal, got %v", journals)
			}
			b, _ := os.ReadFile(journals[0])
			if n := strings.Count(string(b), `"tool_call"`); n != 1 {
				t.Errorf("the journal has %d tool_call lines for one tool call:\n%s", n, b)
			}
			told := 0
			for _, o := range res.HookOutputs("UserPromptSubmit") {
				if o != "" {
					told++
				}
			}
			if told != 1 {
				t.Errorf("the agent was told %d times, want once", told)
			}
		})
	}
}

// writeUserHooks registers ctx's hooks in the user's settings by hand, naming ctx by its
// path, as an older ctx init did.
func writeUserHooks(t *testing.T, e *Env, bin string) {
	t.Helper()
	hooks := map[string]any{}
	for event, sub := range map[string]string{
		"UserPromptSubmit": "check-context-size", "PostToolUse": "record-action", "Stop": "stop",
		"PreCompact": "pre-compact", "SessionStart": "session-start", "SessionEnd": "session-end",
	} {
		hooks[event] = []any{map[string]any{"matcher": "*", "hooks": []any{map[string]any{"type": "command", "command": bin + " system " + sub}}}}
	}
	b, err := json.MarshalIndent(map[string]any{"hooks": hooks}, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(e.Home, ".claude")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "settings.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
}
