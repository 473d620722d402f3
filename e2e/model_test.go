//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// Usage is the token figures a scripted reply reports. Claude Code records them in the
// transcript as they are, so a test sets the context level exactly: the level is
// Input + CacheRead + CacheCreation (ctx's rule, CLAUDE-CODE.md §2).
type Usage struct {
	Input         int `json:"input_tokens"`
	CacheRead     int `json:"cache_read_input_tokens"`
	CacheCreation int `json:"cache_creation_input_tokens"`
	Output        int `json:"output_tokens"`
}

// At is a Usage whose context level is tokens.
func At(tokens int) Usage { return Usage{Input: tokens, Output: 20} }

// ToolUse is one tool call the model asks for.
type ToolUse struct {
	Name  string
	Input map[string]any
}

// Bash is a Bash tool call.
func Bash(command string) ToolUse {
	return ToolUse{Name: "Bash", Input: map[string]any{"command": command, "description": "run " + firstWord(command)}}
}

// Write is a Write tool call.
func Write(path, content string) ToolUse {
	return ToolUse{Name: "Write", Input: map[string]any{"file_path": path, "content": content}}
}

// Edit is an Edit tool call.
func Edit(path, old, new string) ToolUse {
	return ToolUse{Name: "Edit", Input: map[string]any{"file_path": path, "old_string": old, "new_string": new}}
}

func firstWord(s string) string {
	if f := strings.Fields(s); len(f) > 0 {
		return f[0]
	}
	return "command"
}

// Reply is one scripted answer to a main-chain request: text, tool calls, or both, at a
// context level. Refuse makes the stand-in answer as the API does when the prompt is
// over the window ("prompt is too long"), which Claude Code answers with a compaction.
type Reply struct {
	Text   string
	Tools  []ToolUse
	Usage  Usage
	Refuse bool
	// Delay holds the answer back: a model still thinking, a turn that is busy.
	Delay time.Duration
}

// Say is a text reply at a context level.
func Say(text string, tokens int) Reply { return Reply{Text: text, Usage: At(tokens)} }

// Call is a reply that asks for tools at a context level.
func Call(tokens int, tools ...ToolUse) Reply { return Reply{Tools: tools, Usage: At(tokens)} }

// Request kinds, as the stand-in classified them.
const (
	KindMain    = "main"    // the conversation: carries the tools
	KindSummary = "summary" // the compaction's summary request
	KindSide    = "side"    // a title, a classifier: no tools
	KindCount   = "count"   // count_tokens
)

// Request is one request the client sent, kept so a test can assert what the model was
// told.
type Request struct {
	Kind      string
	SessionID string    // the x-claude-code-session-id header
	At        time.Time // when it arrived
	Model     string
	Body      map[string]any
	raw       []byte
}

// Text is every text the request carried (system prompt and messages), joined: what
// the model was told.
func (r Request) Text() string {
	var b strings.Builder
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			if s, ok := x["text"].(string); ok {
				b.WriteString(s)
				b.WriteByte('\n')
			}
			if s, ok := x["content"].(string); ok {
				b.WriteString(s)
				b.WriteByte('\n')
			}
			for k, e := range x {
				if k != "text" && k != "tools" {
					walk(e)
				}
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(r.Body["system"])
	walk(r.Body["messages"])
	return b.String()
}

// LastUserText is the text of the request's last user message: the newest prompt or
// tool results, with what hooks added beside them.
func (r Request) LastUserText() string {
	msgs, _ := r.Body["messages"].([]any)
	for i := len(msgs) - 1; i >= 0; i-- {
		m, _ := msgs[i].(map[string]any)
		if m["role"] == "user" {
			return Request{Body: map[string]any{"messages": []any{m}}}.Text()
		}
	}
	return ""
}

// Model is a loopback stand-in for the model API, scripted per test: main-chain
// requests get the scripted replies in order (then a plain "done" at the last level),
// the compaction's summary request gets a summary, side requests get short text.
type Model struct {
	URL string

	t        testing.TB
	srv      *http.Server
	mu       sync.Mutex
	script   []Reply
	requests []Request
	last     Usage
	nextID   int
	// Summary is the text the compaction summary request is answered with.
	Summary string
	// AfterCompaction is the level reported by the first reply after a compaction
	// when the script does not say (the summary's size).
	AfterCompaction int
	// Summarize, when set, writes the compaction's summary from its request (as a
	// model would, from the conversation); else Summary is used.
	Summarize func(Request) string
	// Respond, when set, answers main-chain requests once the script is used up: a
	// stand-in that acts on what it was told, as a model does (handoff_test.go).
	Respond func(Request) Reply
}

// NewModel starts a stand-in on 127.0.0.1 and stops it when the test ends.
func NewModel(t testing.TB) *Model {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("model stand-in: %v", err)
	}
	m := &Model{t: t, URL: "http://" + ln.Addr().String(), Summary: "Summary: the session worked on the project.", last: At(1000)}
	m.srv = &http.Server{Handler: http.HandlerFunc(m.serve)}
	go func() { _ = m.srv.Serve(ln) }()
	t.Cleanup(func() { _ = m.srv.Close() })
	return m
}

// Script appends replies for the coming main-chain requests.
func (m *Model) Script(replies ...Reply) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.script = append(m.script, replies...)
}

// Pending is how many scripted replies have not been asked for yet.
func (m *Model) Pending() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.script)
}

// Requests returns the requests of a kind ("" for all) in the order they came.
func (m *Model) Requests(kind string) []Request {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []Request
	for _, r := range m.requests {
		if kind == "" || r.Kind == kind {
			out = append(out, r)
		}
	}
	return out
}

// Reset forgets the recorded requests (the script stays).
func (m *Model) Reset() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.requests = nil
}

func (m *Model) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	req := Request{SessionID: r.Header.Get("x-claude-code-session-id"), At: time.Now(), raw: body}
	_ = json.Unmarshal(body, &req.Body)
	req.Model, _ = req.Body["model"].(string)
	switch {
	case strings.HasSuffix(r.URL.Path, "/count_tokens"):
		req.Kind = KindCount
		m.record(req)
		writeJSON(w, map[string]any{"input_tokens": m.level()})
		return
	case !strings.HasSuffix(r.URL.Path, "/v1/messages"):
		http.NotFound(w, r)
		return
	}
	req.Kind = classify(req)
	m.record(req)
	switch req.Kind {
	case KindSide:
		m.stream(w, req.Model, Reply{Text: "ok", Usage: Usage{Input: 50, Output: 2}})
	case KindSummary:
		m.mu.Lock()
		m.last = At(max(m.AfterCompaction, 2000))
		summary, summarize := m.Summary, m.Summarize
		m.mu.Unlock()
		if summarize != nil {
			summary = summarize(req)
		}
		// Claude Code takes the summary from a <summary> block and asks again without one.
		m.stream(w, req.Model, Reply{Text: "<analysis>scripted</analysis>\n<summary>\n" + summary + "\n</summary>", Usage: Usage{Input: 3000, Output: 400}})
	default:
		reply := m.next(req)
		if reply.Refuse {
			w.Header().Set("content-type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			writeJSON(w, map[string]any{"type": "error", "error": map[string]any{
				"type": "invalid_request_error", "message": fmt.Sprintf("prompt is too long: %d tokens > 200000 maximum", 200_500)}})
			return
		}
		time.Sleep(reply.Delay)
		m.stream(w, req.Model, reply)
	}
}

func (m *Model) record(r Request) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.requests = append(m.requests, r)
}

func (m *Model) level() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.last.Input + m.last.CacheRead + m.last.CacheCreation
}

// next pops the next scripted reply; past the script the model says "done" at the level
// it was last at, so a test that runs one more turn than it scripted sees no jump.
func (m *Model) next(req Request) Reply {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.script) == 0 && m.Respond != nil {
		m.mu.Unlock()
		r := m.Respond(req)
		m.mu.Lock()
		if r.Usage == (Usage{}) {
			r.Usage = m.last
		}
		m.last = r.Usage
		return r
	}
	if len(m.script) == 0 {
		return Reply{Text: "done", Usage: m.last}
	}
	r := m.script[0]
	m.script = m.script[1:]
	if r.Usage == (Usage{}) {
		r.Usage = m.last
	}
	if !r.Refuse {
		m.last = r.Usage
	}
	return r
}

// classify tells the conversation from the compaction's summary request and from side
// requests. The conversation carries the tools; so does the summary request (2.1.330),
// whose last user message tells the model to answer with text only and no tools.
func classify(r Request) string {
	tools, _ := r.Body["tools"].([]any)
	last := strings.ToLower(r.LastUserText())
	if strings.Contains(last, "respond with text only") || strings.Contains(last, "create a detailed summary") {
		return KindSummary
	}
	if len(tools) == 0 {
		return KindSide
	}
	return KindMain
}

func writeJSON(w http.ResponseWriter, v any) {
	b, _ := json.Marshal(v)
	_, _ = w.Write(b)
}

// stream answers with server-sent events in the order the API uses.
func (m *Model) stream(w http.ResponseWriter, model string, r Reply) {
	m.mu.Lock()
	m.nextID++
	id := fmt.Sprintf("msg_standin_%d", m.nextID)
	m.mu.Unlock()
	w.Header().Set("content-type", "text/event-stream")
	flusher, _ := w.(http.Flusher)
	send := func(event string, data map[string]any) {
		data["type"] = event
		b, _ := json.Marshal(data)
		_, _ = fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, b)
	}
	send("message_start", map[string]any{"message": map[string]any{
		"id": id, "type": "message", "role": "assistant", "model": model, "content": []any{},
		"stop_reason": nil, "usage": r.Usage,
	}})
	index := 0
	if r.Text != "" || len(r.Tools) == 0 {
		text := r.Text
		if text == "" {
			text = "ok"
		}
		send("content_block_start", map[string]any{"index": index, "content_block": map[string]any{"type": "text", "text": ""}})
		send("content_block_delta", map[string]any{"index": index, "delta": map[string]any{"type": "text_delta", "text": text}})
		send("content_block_stop", map[string]any{"index": index})
		index++
	}
	for i, tu := range r.Tools {
		input, _ := json.Marshal(tu.Input)
		send("content_block_start", map[string]any{"index": index, "content_block": map[string]any{
			"type": "tool_use", "id": fmt.Sprintf("toolu_%s_%d", id, i), "name": tu.Name, "input": map[string]any{}}})
		send("content_block_delta", map[string]any{"index": index, "delta": map[string]any{"type": "input_json_delta", "partial_json": string(input)}})
		send("content_block_stop", map[string]any{"index": index})
		index++
	}
	stop := "end_turn"
	if len(r.Tools) > 0 {
		stop = "tool_use"
	}
	send("message_delta", map[string]any{"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]any{"output_tokens": r.Usage.Output}})
	send("message_stop", map[string]any{})
	if flusher != nil {
		flusher.Flush()
	}
}
