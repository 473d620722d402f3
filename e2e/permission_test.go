//go:build e2e

package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// auditLines are the lines of the auto-approve audit log of a session.
func auditLines(t *testing.T, e *Env, sessionID string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(e.Workspace, ".ctx", "state", "sessions", sessionID, "audit.jsonl"))
	if err != nil {
		return nil
	}
	return strings.Split(strings.TrimSpace(string(b)), "\n")
}

func ranHook(res *Result, event string) int {
	n := 0
	for _, h := range res.Hooks {
		if h.Event == event {
			n++
		}
	}
	return n
}

// With no tool allowed up front, print mode in the default permission mode cannot ask
// anyone: a Bash call is refused. With auto-approve on for the session, ctx's
// PermissionRequest hook answers instead: the command and the edit run, and each
// answer is in the audit log.
func TestAutoApproveAnswersThePermissionRequest(t *testing.T) {
	for _, on := range []bool{false, true} {
		name := map[bool]string{false: "off", true: "on"}[on]
		t.Run(name, func(t *testing.T) {
			e := New(t, Options{Git: true})
			if on {
				e.Vars["CTX_AUTO_APPROVE"] = "1"
			}
			written := filepath.Join(e.Workspace, "written.txt")
			e.Model.Script(
				Call(5000, Bash("echo approved > approved.txt")),
				Call(5500, Write(written, "by the Write tool\n")),
				Say("done", 6000),
			)
			res := e.MustRun(Run{Prompts: []string{"go"}, NoAllowedTools: true})
			results := res.ToolResults()
			if len(results) != 2 {
				t.Fatalf("%d tool results, want 2: %+v", len(results), results)
			}
			_, bashErr := os.Stat(filepath.Join(e.Workspace, "approved.txt"))
			_, writeErr := os.Stat(written)
			if !on {
				if bashErr == nil || writeErr == nil || !results[0].IsError {
					t.Fatalf("without auto-approve the tools ran: bash %v, write %v, %+v", bashErr, writeErr, results)
				}
				if lines := auditLines(t, e, res.SessionID); len(lines) != 0 {
					t.Errorf("audit lines without auto-approve: %q", lines)
				}
				return
			}
			if bashErr != nil || writeErr != nil {
				t.Fatalf("auto-approve did not let the tools run: bash %v, write %v, results %+v\nhooks %+v", bashErr, writeErr, results, res.Hooks)
			}
			if n := ranHook(res, "PermissionRequest"); n != 2 {
				t.Errorf("PermissionRequest ran %d times, want 2: %+v", n, res.Hooks)
			}
			lines := auditLines(t, e, res.SessionID)
			if len(lines) != 2 || !strings.Contains(lines[0], `"tool":"Bash","summary":"echo approved > approved.txt","decision":"allow"`) ||
				!strings.Contains(lines[1], `"tool":"Write"`) || !strings.Contains(lines[1], `"decision":"allow"`) {
				t.Errorf("audit log:\n%s", strings.Join(lines, "\n"))
			}
		})
	}
}

// With auto-approve on, a command auto_approve.deny names is denied by the
// PermissionRequest hook with ctx's reason, and a command the guard refuses never gets
// that far: the PreToolUse guard refuses it first, whatever the mode.
func TestAutoApproveDeniesThroughTheGuard(t *testing.T) {
	e := New(t, Options{Git: true})
	e.Vars["CTX_AUTO_APPROVE"] = "1"
	cfg := "auto_approve:\n  deny:\n    - touch\n"
	if err := os.WriteFile(filepath.Join(e.Workspace, ".ctx", "config.yaml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	before := workTree(t, e)
	e.Model.Script(
		Call(5000, Bash("touch denied.txt")),
		Call(5500, Bash("rm -rf 02-projects")),
		Say("done", 6000),
	)
	res := e.MustRun(Run{Prompts: []string{"go"}, NoAllowedTools: true})
	results := res.ToolResults()
	if len(results) != 2 || !results[0].IsError || !results[1].IsError {
		t.Fatalf("tool results %+v, want two refusals", results)
	}
	if !strings.Contains(results[0].Content, "auto_approve.deny") {
		t.Errorf("the model was not told why touch was denied: %s", results[0].Content)
	}
	if diff := TreeDiff(before, workTree(t, e)); len(diff) > 0 {
		t.Errorf("the workspace changed: %v", diff)
	}
	if n := ranHook(res, "PermissionRequest"); n != 1 {
		t.Errorf("PermissionRequest ran %d times, want 1 (the guard refuses rm first): %+v", n, res.Hooks)
	}
	lines := auditLines(t, e, res.SessionID)
	if len(lines) != 1 || !strings.Contains(lines[0], `"decision":"deny","rule":"auto-approve-deny"`) {
		t.Errorf("audit log:\n%s", strings.Join(lines, "\n"))
	}
}
