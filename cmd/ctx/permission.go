package main

import (
	"cmp"
	"errors"
	"strings"

	"github.com/ctxtools/ctx/gitstate"
	"github.com/ctxtools/ctx/guard"
	"github.com/ctxtools/ctx/internal/claude"
	"github.com/ctxtools/ctx/loader"
	"github.com/ctxtools/ctx/session"
)

// envAutoApprove turns auto-approve on ("1") or off ("0") for the session whose
// Claude Code carries it, over the workspace's auto_approve.enabled; `ctx agents start
// --auto-approve` sets it.
const envAutoApprove = "CTX_AUTO_APPROVE"

// autoApproveOn reports whether auto-approve answers for this session: the variable,
// when it says yes or no, else the workspace's config.
func autoApproveOn(env string, enabled bool) bool {
	switch strings.ToLower(strings.TrimSpace(env)) {
	case "1", "true", "yes", "on":
		return true
	case "0", "false", "no", "off":
		return false
	}
	return enabled
}

// hookPermissionRequest answers Claude Code's permission dialog when auto-approve is
// on (docs/guard.md has the decision table): Bash the guard refuses, or that matches
// auto_approve.deny, is denied with the reason; other Bash is allowed; edits inside
// the workspace are allowed; anything else gets no answer, and Claude Code asks the
// person. Every answer, and every request left to the person, is a line of the
// session's audit log, .ctx/state/audit/<session>.jsonl.
func hookPermissionRequest(h *hookRun) error {
	if h.WS == nil {
		return nil
	}
	cfg, cfgErr := approveConfig(h.WS)
	if !autoApproveOn(h.Getenv(envAutoApprove), cfg.Enabled) {
		if cfgErr != nil {
			h.configProblem(cfgErr, "auto-approve stays off until it is fixed; Claude Code asks as usual")
		}
		return nil
	}
	rules, guardErr := guardFor(h.App, h.WS, h.Payload.Cwd, gitstate.Dirty)
	ap, apErr := guard.NewApprover(rules, cfg)
	if problems := errors.Join(append([]error{cfgErr, guardErr}, prefixEach(configName(h.WS), apErr)...)...); problems != nil {
		h.configProblem(problems, "what is broken is left out; the built-in guard rules stay in force")
	}
	req := guard.Request{Tool: h.Payload.ToolName, Command: h.Payload.Command(), File: h.Payload.ToolInput.File(),
		Cwd: cmp.Or(h.Payload.Cwd, h.WS.Root)}
	a := ap.Decide(req)
	auditErr := h.audit(req, a)
	var err error
	switch a.Decision {
	case guard.Allow:
		err = claude.WritePermissionDecision(h.Out, true, "")
	case guard.Deny:
		err = claude.WritePermissionDecision(h.Out, false, "ctx: "+a.Reason)
	}
	return errors.Join(err, auditErr)
}

// audit appends the decision to the session's audit log.
func (h *hookRun) audit(req guard.Request, a guard.Approval) error {
	safe, err := session.SafeID(h.SessionID)
	if err != nil {
		return err
	}
	dir := h.WS.StatePath("state")
	if err := loader.EnsureStateDir(dir); err != nil {
		return err
	}
	return guard.AppendAudit(h.WS.StatePath("state", "audit", safe+".jsonl"), guard.AuditEntry{
		Time: h.Now().UTC(), Session: h.SessionID, Tool: req.Tool, Summary: req.Summary(),
		Decision: a.Decision, Rule: a.Rule, Reason: a.Reason,
	})
}
