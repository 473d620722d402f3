// Package hook reads the JSON that Claude Code sends a hook on stdin, writes the
// answers a hook may give, and registers ctx's hooks in Claude Code's settings.
package hook

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// MaxPayloadBytes bounds what a hook reads from stdin. A payload carries one tool call's
// input and output; past this, the rest is drained unread.
const MaxPayloadBytes = 8 << 20

// Payload is what Claude Code sends a hook. Common fields first, then the ones of
// particular events; a field an event does not send stays empty.
type Payload struct {
	SessionID      string `json:"session_id"`
	TranscriptPath string `json:"transcript_path"`
	Cwd            string `json:"cwd"`
	HookEventName  string `json:"hook_event_name"`
	PermissionMode string `json:"permission_mode"`

	Prompt               string          `json:"prompt"`    // UserPromptSubmit
	ToolName             string          `json:"tool_name"` // PreToolUse, PostToolUse
	ToolInput            json.RawMessage `json:"tool_input"`
	ToolResponse         json.RawMessage `json:"tool_response"`
	Source               string          `json:"source"`  // SessionStart: startup, resume, clear, compact
	Trigger              string          `json:"trigger"` // PreCompact: manual, auto
	CustomInstructions   string          `json:"custom_instructions"`
	Reason               string          `json:"reason"` // SessionEnd
	StopHookActive       bool            `json:"stop_hook_active"`
	LastAssistantMessage string          `json:"last_assistant_message"` // Stop
}

// ErrNoPayload is returned for empty input.
var ErrNoPayload = errors.New("hook payload: empty")

// ReadPayload reads all of r (up to MaxPayloadBytes, draining the rest so the writer
// never blocks) and decodes it. Unknown fields are ignored, and so is a known field of
// the wrong type: one odd field must not cost the hook the rest. Input that is not a
// JSON object is an error.
func ReadPayload(r io.Reader) (*Payload, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxPayloadBytes))
	if err != nil {
		return nil, fmt.Errorf("hook payload: %w", err)
	}
	_, _ = io.Copy(io.Discard, r)
	return ParsePayload(data)
}

// ParsePayload decodes a payload from data, as ReadPayload does.
func ParsePayload(data []byte) (*Payload, error) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return nil, ErrNoPayload
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		return nil, fmt.Errorf("hook payload: not a JSON object: %w", err)
	}
	p := &Payload{}
	str := func(key string, dst *string) {
		if raw, ok := fields[key]; ok {
			_ = json.Unmarshal(raw, dst)
		}
	}
	str("session_id", &p.SessionID)
	str("transcript_path", &p.TranscriptPath)
	str("cwd", &p.Cwd)
	str("hook_event_name", &p.HookEventName)
	str("permission_mode", &p.PermissionMode)
	str("prompt", &p.Prompt)
	str("tool_name", &p.ToolName)
	str("source", &p.Source)
	str("trigger", &p.Trigger)
	str("custom_instructions", &p.CustomInstructions)
	str("reason", &p.Reason)
	str("last_assistant_message", &p.LastAssistantMessage)
	if raw, ok := fields["stop_hook_active"]; ok {
		_ = json.Unmarshal(raw, &p.StopHookActive)
	}
	p.ToolInput = fields["tool_input"]
	p.ToolResponse = fields["tool_response"]
	return p, nil
}

// Command returns the command of a Bash tool call ("" for any other input).
func (p *Payload) Command() string {
	var in struct {
		Command string `json:"command"`
	}
	if len(p.ToolInput) == 0 || json.Unmarshal(p.ToolInput, &in) != nil {
		return ""
	}
	return in.Command
}
