package guard

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ctxtools/ctx/internal/durable"
)

// ApproveConfig is what a workspace's .ctx/config.yaml says about auto-approve, under
// its `auto_approve:` key.
type ApproveConfig struct {
	// Enabled answers Claude Code's permission requests for every session in the
	// workspace; $CTX_AUTO_APPROVE turns it on or off for one session.
	Enabled bool `yaml:"enabled"`
	// Deny lists Bash commands never to approve, as guard.deny patterns: words matched
	// against the start of every simple command, "*" standing for any one word.
	Deny []string `yaml:"deny"`
}

// Decisions of an Approver. Ask is no decision: Claude Code asks the person.
const (
	Allow = "allow"
	Deny  = "deny"
	Ask   = "ask"
)

// Rule names an Approval reports besides the guard's own.
const (
	RuleAutoApproveDeny = "auto-approve-deny" // a pattern of auto_approve.deny
	RuleBash            = "bash"              // a Bash command the guard lets through
	RuleEditInside      = "edit-in-workspace" // a file edit inside the workspace
	RuleEditProtected   = "edit-protected"    // an edit of ctx's or Claude Code's own settings, or of .git
	RuleEditOutside     = "edit-outside"      // an edit outside the workspace
	RuleOtherTool       = "other-tool"        // web, MCP and any other tool
)

// Request is a tool call Claude Code asks permission for.
type Request struct {
	Tool    string // Bash, Write, Edit, NotebookEdit, WebFetch, mcp__…
	Command string // Bash's command
	File    string // the file an edit names (absolute, or relative to Cwd)
	Cwd     string
}

// Approval is an Approver's answer.
type Approval struct {
	Decision string // Allow, Deny or Ask
	Rule     string
	Reason   string // for Deny, what the agent is told
}

// Approver answers permission requests as auto-approve does: the guard refuses what it
// refuses, auto_approve.deny refuses its patterns, every other Bash command is
// approved, edits inside the workspace are approved (apart from the settings that
// govern ctx and Claude Code, and .git), and anything else is left to the person.
type Approver struct {
	guard     *Rules
	deny      *Rules
	workspace string
}

// NewApprover binds the decision to guard (the rules the PreToolUse hook applies) and
// to cfg's deny patterns. Like New, it always returns a usable Approver; a bad pattern
// is left out and reported in the error.
func NewApprover(guard *Rules, cfg ApproveConfig) (*Approver, error) {
	a := &Approver{guard: guard, workspace: guard.env.Workspace}
	if len(cfg.Deny) == 0 {
		return a, nil
	}
	deny := make([]DenyRule, 0, len(cfg.Deny))
	for _, p := range cfg.Deny {
		deny = append(deny, DenyRule{Pattern: p, Reason: "auto-approve never approves it; ask the user to run it or to approve it"})
	}
	// Only the patterns matter here: the built-in rules have had their say through
	// a.guard, so an empty Env suffices.
	r, err := New(Config{Deny: deny, Key: "auto_approve"}, Env{Home: guard.env.Home, Workspace: guard.env.Workspace, Dirty: func(string) bool { return false }})
	a.deny = r
	return a, err
}

// Decide answers one request.
func (a *Approver) Decide(req Request) Approval {
	switch req.Tool {
	case "Bash":
		if req.Command == "" {
			return Approval{Decision: Ask, Rule: RuleOtherTool}
		}
		if v := a.guard.Check(req.Command); v.Deny {
			return Approval{Decision: Deny, Rule: v.Rule, Reason: v.Reason}
		}
		if a.deny != nil {
			if v := a.deny.Check(req.Command); v.Deny && v.Rule == ruleConfigDeny {
				return Approval{Decision: Deny, Rule: RuleAutoApproveDeny, Reason: v.Reason}
			}
		}
		return Approval{Decision: Allow, Rule: RuleBash}
	case "Write", "Edit", "MultiEdit", "NotebookEdit":
		return a.edit(req)
	}
	return Approval{Decision: Ask, Rule: RuleOtherTool}
}

func (a *Approver) edit(req Request) Approval {
	if a.workspace == "" || req.File == "" {
		return Approval{Decision: Ask, Rule: RuleEditOutside}
	}
	p := req.File
	if !filepath.IsAbs(p) {
		if req.Cwd == "" {
			return Approval{Decision: Ask, Rule: RuleEditOutside}
		}
		p = filepath.Join(req.Cwd, p)
	}
	rel, ok := within(a.workspace, p)
	if !ok {
		return Approval{Decision: Ask, Rule: RuleEditOutside}
	}
	if protectedEdit(rel) {
		return Approval{Decision: Ask, Rule: RuleEditProtected}
	}
	return Approval{Decision: Allow, Rule: RuleEditInside}
}

// within reports whether p lies inside root, after resolving the symbolic links of
// both as far as they exist (a link inside the workspace may point out of it), and
// p's path relative to root.
func within(root, p string) (string, bool) {
	root, p = resolveExisting(root), resolveExisting(filepath.Clean(p))
	rel, err := filepath.Rel(root, p)
	if err != nil || !filepath.IsLocal(rel) {
		return "", false
	}
	return filepath.ToSlash(rel), true
}

// resolveExisting resolves the symbolic links of the longest existing prefix of p and
// appends the rest unchanged.
func resolveExisting(p string) string {
	rest := ""
	for dir := p; ; dir = filepath.Dir(dir) {
		if real, err := filepath.EvalSymlinks(dir); err == nil {
			return filepath.Join(real, rest)
		}
		if filepath.Dir(dir) == dir {
			return p
		}
		rest = filepath.Join(filepath.Base(dir), rest)
	}
}

// protectedEdit reports whether an edit of rel (inside the workspace) could switch off
// the protection itself: Claude Code's settings and hooks, ctx's config, or git's
// internals. Those are left to the person.
func protectedEdit(rel string) bool {
	first, _, _ := strings.Cut(rel, "/")
	return first == ".claude" || first == ".git" || rel == ".ctx/config.yaml" || rel == ".mcp.json"
}

// AuditEntry is one line of the auto-approve audit log.
type AuditEntry struct {
	Time     time.Time `json:"time"`
	Session  string    `json:"session"`
	Tool     string    `json:"tool"`
	Summary  string    `json:"summary"`
	Decision string    `json:"decision"`
	Rule     string    `json:"rule,omitempty"`
	Reason   string    `json:"reason,omitempty"`
}

// auditSummaryMax bounds the summary of a tool call in the audit log.
const auditSummaryMax = 200

// Summary is how the audit log names a request: the command or the file, on one line,
// shortened.
func (req Request) Summary() string {
	s := req.Command
	if req.Tool != "Bash" {
		s = req.File
	}
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > auditSummaryMax {
		s = strings.ToValidUTF8(s[:auditSummaryMax], "") + "…"
	}
	return s
}

// AppendAudit appends e as one JSON line to path, creating its folder.
func AppendAudit(path string, e AuditEntry) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // a summary reads as the command: `a > b`, not `a \u003e b`
	if err := enc.Encode(e); err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	line := b.Bytes()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	return durable.AppendLine(path, line)
}

// Denies returns the auto_approve.deny patterns in force, word by word.
func (a *Approver) Denies() []string {
	if a.deny == nil {
		return nil
	}
	var out []string
	for _, d := range a.deny.Denies() {
		out = append(out, d.Pattern)
	}
	return out
}
