// Package claude reads the JSON that Claude Code sends a hook on stdin, writes the
// answers a hook may give, and registers ctx's hooks in Claude Code's settings.
package claude

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
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
	PromptID       string `json:"prompt_id"`   // the prompt the event belongs to (2.1.x)
	ToolUseID      string `json:"tool_use_id"` // PreToolUse, PostToolUse

	Prompt               string    `json:"prompt"`    // UserPromptSubmit
	ToolName             string    `json:"tool_name"` // PreToolUse, PostToolUse
	ToolInput            ToolInput `json:"tool_input"`
	Source               string    `json:"source"`  // SessionStart: startup, resume, clear, compact
	Trigger              string    `json:"trigger"` // PreCompact: manual, auto
	CustomInstructions   string    `json:"custom_instructions"`
	Reason               string    `json:"reason"` // SessionEnd
	StopHookActive       bool      `json:"stop_hook_active"`
	LastAssistantMessage string    `json:"last_assistant_message"` // Stop

	// skipped is the first field of the wrong type, which decoding passed over.
	skipped *json.UnmarshalTypeError
}

// WrongType says what was wrong with field (its JSON name) when it was passed over
// for being of the wrong type, else nil: a session_id of 123 reads as no session id,
// and the warning should say why.
func (p *Payload) WrongType(field string) error {
	if p.skipped == nil || p.skipped.Field != field {
		return nil
	}
	return fmt.Errorf("%s is a JSON %s, not a %s", field, p.skipped.Value, p.skipped.Type)
}

// ErrNoPayload is returned for empty input.
var ErrNoPayload = errors.New("hook payload: empty")

// ParsePayload decodes a payload in one pass. Unknown fields are ignored, and so is a
// known field of the wrong type: one odd field must not cost the hook the rest
// (encoding/json skips it and reports an *UnmarshalTypeError, which is dropped). Input
// that is not a JSON object is an error.
func ParsePayload(data []byte) (*Payload, error) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return nil, ErrNoPayload
	}
	if data[0] != '{' {
		return nil, errors.New("hook payload: not a JSON object")
	}
	p := &Payload{}
	if err := json.Unmarshal(data, p); err != nil {
		var te *json.UnmarshalTypeError
		if !errors.As(err, &te) {
			return nil, fmt.Errorf("hook payload: not a JSON object: %w", err)
		}
		p.skipped = te
	}
	return p, nil
}

// EventStatus is the hook_event_name of the JSON Claude Code sends a status line.
const EventStatus = "Status"

// CheckEvent reports whether the payload may be an event of the kind want: a payload
// that names another event (hook_event_name) was sent to the wrong hook. One that
// names none passes: the field is not needed to act.
func (p *Payload) CheckEvent(want string) error {
	if err := CheckEventName(p.HookEventName, want); err != nil {
		return fmt.Errorf("hook payload: %w", err)
	}
	return nil
}

// CheckEventName refuses an event name got that is set and is not want: the payload
// of another event (as Claude Code gives every hook and the status line).
func CheckEventName(got, want string) error {
	if got != "" && got != want {
		return fmt.Errorf("a %s event, not %s", quote(got), want)
	}
	return nil
}

// quote quotes s for a one-line message, its first 40 bytes at most.
func quote(s string) string {
	const keep = 40
	if len(s) > keep {
		return fmt.Sprintf("%q…", s[:keep])
	}
	return fmt.Sprintf("%q", s)
}

// ToolInput holds the fields of a tool call's input that ctx reads. Decoding into it,
// in the same pass as the payload, skips the rest (a Write's whole file) without a copy:
// hooks run on every tool call, and a second pass over a large input costs
// milliseconds.
type ToolInput struct {
	Command      string `json:"command"` // Bash
	FilePath     string `json:"file_path"`
	NotebookPath string `json:"notebook_path"`
	Path         string `json:"path"`
	Pattern      string `json:"pattern"`
	URL          string `json:"url"`
	Query        string `json:"query"`
	Description  string `json:"description"`
	Prompt       string `json:"prompt"`
}

// EventID names the one event a payload is about, for the events that carry an id:
// a tool call's id, else the prompt's. Two runs of the same hook with the same EventID
// are one event delivered twice (ctx installed at two settings levels). "" when the
// payload carries no id.
func (p *Payload) EventID() string {
	if p.ToolUseID != "" {
		return "tool:" + p.ToolUseID
	}
	if p.PromptID != "" {
		return "prompt:" + p.PromptID
	}
	return ""
}

// Command returns the command of a Bash tool call ("" for any other input).
func (p *Payload) Command() string { return p.ToolInput.Command }

// File returns the file a tool call names, if any.
func (in ToolInput) File() string {
	for _, f := range []string{in.FilePath, in.NotebookPath, in.Path} {
		if f != "" {
			return f
		}
	}
	return ""
}

// Subject returns what a tool call is about, for a short summary: the file, command,
// pattern, address or question it names ("" when none).
func (in ToolInput) Subject() string {
	for _, s := range []string{in.FilePath, in.NotebookPath, in.Command, in.Pattern, in.URL, in.Query, in.Path, in.Description, in.Prompt} {
		if s != "" {
			return s
		}
	}
	return ""
}
