package hook

import (
	"encoding/json"
	"fmt"
	"io"
)

// ExitBlock is the exit code with which a hook blocks what it was asked about; Claude
// Code shows the hook's stderr to the agent.
const ExitBlock = 2

// Event names ctx answers.
const (
	EventSessionStart     = "SessionStart"
	EventUserPromptSubmit = "UserPromptSubmit"
	EventPreToolUse       = "PreToolUse"
	EventPostToolUse      = "PostToolUse"
	EventStop             = "Stop"
	EventPreCompact       = "PreCompact"
	EventSessionEnd       = "SessionEnd"
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

// Block writes reason to stderr and returns ExitBlock, for events whose JSON answer
// cannot block.
func Block(stderr io.Writer, reason string) int {
	fmt.Fprintln(stderr, reason)
	return ExitBlock
}
