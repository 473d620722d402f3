package usage

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Transcripts whose lines are valid JSON but not written the way Claude Code writes
// them: spaces after the separators (Python's json.dumps, jq without -c) or characters
// written as \u escapes. The byte markers miss such lines; the usage must not.
func TestReadLinesNotWrittenCompactly(t *testing.T) {
	const (
		user = `{"type": "user", "message": {"role": "user", "content": "go on"}}` + "\n"
		// The main chain's last assistant line: 5 + 100 + 1000 tokens.
		spaced = `{"parentUuid": "a", "isSidechain": false, "type": "assistant", "message": {"model": "claude-sonnet-4-5", "role": "assistant", "content": [{"type": "text", "text": "ok"}], "usage": {"input_tokens": 5, "cache_creation_input_tokens": 100, "cache_read_input_tokens": 1000, "output_tokens": 7}}}` + "\n"
		older  = `{"type":"assistant","message":{"model":"claude-sonnet-4-5","usage":{"input_tokens":1,"cache_read_input_tokens":1}}}` + "\n"
	)
	tests := []struct {
		name   string
		text   string
		tokens int
		source string
	}{
		{name: "spaces after the separators", text: older + user + spaced + user, tokens: 1105, source: SourceAssistant},
		{name: "tabs and newlines escaped in a value, spaces around colons",
			text:   older + `{ "type" : "assistant" , "message" : { "model" : "claude-sonnet-4-5" , "content" : "a\tb" , "usage" : { "input_tokens" : 2 , "cache_read_input_tokens" : 40 } } }` + "\n",
			tokens: 42, source: SourceAssistant},
		{name: "an escaped value", text: older + `{"type":"\u0061ssistant","message":{"model":"claude-sonnet-4-5","usage":{"input_tokens":3,"cache_read_input_tokens":300}}}` + "\n",
			tokens: 303, source: SourceAssistant},
		{name: "escaped keys", text: older + `{"\u0074ype":"assistant","message":{"model":"claude-sonnet-4-5","\u0075sage":{"input_tokens":4,"cache_read_input_\u0074okens":400}}}` + "\n",
			tokens: 404, source: SourceAssistant},
		{name: "an escaped compaction", text: spaced + `{"type": "system", "subtype": "compact_bound\u0061ry", "compactMetadata": {"trigger": "auto", "preTokens": 150000, "postTokens": 9000}}` + "\n",
			tokens: 9000, source: SourceCompactBoundary},
		{name: "a spaced sidechain line after is skipped",
			text:   spaced + strings.Replace(spaced, `"isSidechain": false`, `"isSidechain": true`, 1) + user,
			tokens: 1105, source: SourceAssistant},
		{name: "a spaced API error after is skipped",
			text:   spaced + `{"type": "assistant", "isApiErrorMessage": true, "message": {"model": "<synthetic>", "usage": {"input_tokens": 0}}}` + "\n",
			tokens: 1105, source: SourceAssistant},
		{name: "an escaped API error after is skipped",
			text:   spaced + `{"type": "\u0061ssistant", "message": {"model": "\u003csynthetic>", "usage": {"input_tokens": 0}}}` + "\n",
			tokens: 1105, source: SourceAssistant},
		{name: "quoted assistant text in a user line is not a line that counts",
			text:   spaced + `{"type": "user", "message": {"content": "{\"type\": \"\\u0061ssistant\", \"usage\": {\"input_tokens\": 9}}"}}` + "\n",
			tokens: 1105, source: SourceAssistant},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "t.jsonl")
			if err := os.WriteFile(path, []byte(tt.text), 0o600); err != nil {
				t.Fatal(err)
			}
			u, err := Read(path, Config{}, Client{})
			if err != nil {
				t.Fatal(err)
			}
			if u.TokensUsed != tt.tokens || u.Source != tt.source {
				t.Errorf("got %d tokens from %q, want %d from %q", u.TokensUsed, u.Source, tt.tokens, tt.source)
			}
		})
	}
}
