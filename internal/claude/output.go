package claude

import (
	"encoding/json"
	"fmt"
	"io"
)

// Event names ctx answers.
const (
	EventSessionStart      = "SessionStart"
	EventUserPromptSubmit  = "UserPromptSubmit"
	EventPreToolUse        = "PreToolUse"
	EventPostToolUse       = "PostToolUse"
	EventStop              = "Stop"
	EventPreCompact        = "PreCompact"
	EventPostCompact       = "PostCompact"
	EventSessionEnd        = "SessionEnd"
	EventPermissionRequest = "PermissionRequest"
)

// WriteText writes plain text that Claude Code adds to the agent's context
// (SessionStart and UserPromptSubmit).
func WriteText(w io.Writer, text string) error {
	if text == "" {
		return nil
	}
	_, err := fmt.Fprintln(w, text)
	return err
}

type specificOutput struct {
	HookSpecificOutput map[string]string `json:"hookSpecificOutput"`
}

// WriteAdditionalContext writes text as hookSpecificOutput.additionalContext for event.
func WriteAdditionalContext(w io.Writer, event, text string) error {
	return json.NewEncoder(w).Encode(specificOutput{map[string]string{
		"hookEventName":     event,
		"additionalContext": text,
	}})
}

// WriteDeny answers a PreToolUse hook with a denial; reason is shown to the agent.
func WriteDeny(w io.Writer, reason string) error {
	return json.NewEncoder(w).Encode(specificOutput{map[string]string{
		"hookEventName":            EventPreToolUse,
		"permissionDecision":       "deny",
		"permissionDecisionReason": reason,
	}})
}

// permissionOutput is a PermissionRequest hook's answer, as Claude Code documents it:
// hookSpecificOutput.decision with behavior allow or deny, and for deny the message
// the agent is told.
type permissionOutput struct {
	HookSpecificOutput struct {
		HookEventName string `json:"hookEventName"`
		Decision      struct {
			Behavior string `json:"behavior"`
			Message  string `json:"message,omitempty"`
		} `json:"decision"`
	} `json:"hookSpecificOutput"`
}

// WritePermissionDecision answers a PermissionRequest hook: allow, or deny with
// message. A hook that leaves the request to the person writes nothing.
func WritePermissionDecision(w io.Writer, allow bool, message string) error {
	var out permissionOutput
	out.HookSpecificOutput.HookEventName = EventPermissionRequest
	out.HookSpecificOutput.Decision.Behavior = "deny"
	if allow {
		out.HookSpecificOutput.Decision.Behavior = "allow"
		message = ""
	}
	out.HookSpecificOutput.Decision.Message = message
	return json.NewEncoder(w).Encode(out)
}

// stopOutput ends the agent's turn after the hook (measured on 2.1.330: after a
// PostToolUse the turn ends, no further request is made, and no Stop hook fires).
type stopOutput struct {
	Continue           bool              `json:"continue"`
	StopReason         string            `json:"stopReason"`
	HookSpecificOutput map[string]string `json:"hookSpecificOutput,omitempty"`
}

// WriteStop ends the turn with reason (shown to the person), with text as the event's
// additionalContext when there is any.
func WriteStop(w io.Writer, event, reason, text string) error {
	out := stopOutput{StopReason: reason}
	if text != "" {
		out.HookSpecificOutput = map[string]string{"hookEventName": event, "additionalContext": text}
	}
	return json.NewEncoder(w).Encode(out)
}
