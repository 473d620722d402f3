package claude

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

var hook0 ToolInput

func TestParsePayload(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want Payload
		err  bool
	}{
		{"pre tool use", `{"session_id":"s1","transcript_path":"/t.jsonl","cwd":"/w","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls","description":"list"},"tool_use_id":"toolu_1","future":{"x":1}}`,
			Payload{SessionID: "s1", TranscriptPath: "/t.jsonl", Cwd: "/w", HookEventName: "PreToolUse", ToolUseID: "toolu_1", ToolName: "Bash"}, false},
		{"session start", `{"session_id":"s2","hook_event_name":"SessionStart","source":"compact"}`, Payload{SessionID: "s2", HookEventName: "SessionStart", Source: "compact"}, false},
		{"wrong type kept out", `{"session_id":42,"prompt":"hi","stop_hook_active":"yes"}`, Payload{Prompt: "hi"}, false},
		{"missing everything", `{}`, Payload{}, false},
		{"empty", "  \n", Payload{}, true},
		{"garbage", "\x00\xffnot json", Payload{}, true},
		{"array", `[1,2]`, Payload{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := ParsePayload([]byte(tt.in))
			if (err != nil) != tt.err {
				t.Fatalf("err = %v", err)
			}
			if err != nil {
				return
			}
			p.ToolInput = hook0
			p.skipped = nil // WrongType's, tested below
			if !reflect.DeepEqual(*p, tt.want) {
				t.Errorf("got %+v\nwant %+v", *p, tt.want)
			}
		})
	}
	p, _ := ParsePayload([]byte(`{"session_id":42,"prompt":"hi"}`))
	if err := p.WrongType("session_id"); err == nil || err.Error() != "session_id is a JSON number, not a string" {
		t.Errorf("WrongType(session_id) = %v", err)
	}
	if err := p.WrongType("prompt"); err != nil {
		t.Errorf("WrongType(prompt) = %v, want nil", err)
	}
	p, _ = ParsePayload([]byte(`{"tool_input":{"command":"rm -rf /tmp/x"}}`))
	if p.Command() != "rm -rf /tmp/x" {
		t.Errorf("Command() = %q", p.Command())
	}
	p, _ = ParsePayload([]byte(`{"tool_name":"Write","tool_input":{"file_path":"/w/a.md","content":"SECRET","command":7}}`))
	if p.ToolInput.File() != "/w/a.md" || p.ToolInput.Subject() != "/w/a.md" || p.ToolName != "Write" {
		t.Errorf("write input: %+v", p.ToolInput)
	}
	if _, err := ParsePayload(nil); !errors.Is(err, ErrNoPayload) {
		t.Errorf("nil: %v", err)
	}
}

func TestOutputs(t *testing.T) {
	var b bytes.Buffer
	if err := WriteDeny(&b, "no"); err != nil {
		t.Fatal(err)
	}
	var out struct {
		HookSpecificOutput struct {
			HookEventName, PermissionDecision, PermissionDecisionReason string
		}
	}
	if err := json.Unmarshal(b.Bytes(), &out); err != nil || out.HookSpecificOutput.PermissionDecision != "deny" || out.HookSpecificOutput.PermissionDecisionReason != "no" || out.HookSpecificOutput.HookEventName != "PreToolUse" {
		t.Errorf("deny: %s %v", b.String(), err)
	}
	b.Reset()
	_ = WriteAdditionalContext(&b, EventSessionStart, "ctx")
	if !strings.Contains(b.String(), `"additionalContext":"ctx"`) || !strings.Contains(b.String(), `"hookEventName":"SessionStart"`) {
		t.Errorf("additional context: %s", b.String())
	}
}

func FuzzParsePayload(f *testing.F) {
	f.Add([]byte(`{"session_id":"s","tool_input":{"command":"ls"}}`))
	f.Add([]byte(`{"prompt":1}`))
	f.Add([]byte("garbage"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := ParsePayload(data)
		if err == nil {
			_ = p.Command()
		}
	})
}

func TestEventID(t *testing.T) {
	for _, c := range []struct {
		p    Payload
		want string
	}{
		{Payload{ToolUseID: "toolu_1", PromptID: "p1"}, "tool:toolu_1"},
		{Payload{PromptID: "p1"}, "prompt:p1"},
		{Payload{}, ""},
	} {
		if got := c.p.EventID(); got != c.want {
			t.Errorf("EventID(%+v) = %q, want %q", c.p, got, c.want)
		}
	}
}

func TestCheckEvent(t *testing.T) {
	for _, tt := range []struct {
		named, want string
		err         string // a part of the error, "" for none
	}{
		{"PreCompact", "PreCompact", ""},
		{"", "PreCompact", ""}, // not named: not needed to act
		{"PostCompact", "PreCompact", `hook payload: a "PostCompact" event, not PreCompact`},
		{"precompact", "PreCompact", `a "precompact" event`},
		{strings.Repeat("x", 100) + "\n", "Stop", `a "` + strings.Repeat("x", 40) + `"… event, not Stop`},
	} {
		err := (&Payload{HookEventName: tt.named}).CheckEvent(tt.want)
		switch {
		case tt.err == "" && err != nil:
			t.Errorf("%q for %s: unexpected error %v", tt.named, tt.want, err)
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("%q for %s: got %v, want an error containing %q", tt.named, tt.want, err, tt.err)
		}
	}
}
