//go:build torture

package torture

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/ctxtools/ctx/internal/testkit/fixture"
)

// The kinds of operation, in the order the summary lists them.
const (
	kindSave       = "save"
	kindClose      = "close"
	kindNew        = "new"
	kindPrompt     = "check-context-size"
	kindTool       = "record-action"
	kindStop       = "stop"
	kindPreCompact = "pre-compact"
	kindSessionEnd = "session-end"
	kindRead       = "read"
)

var kindOrder = []string{kindSave, kindClose, kindNew, kindPrompt, kindTool, kindStop, kindPreCompact, kindSessionEnd, kindRead}

// weights is how often each kind runs: mostly saves and the hooks an agent's turn
// fires, now and then a new project, and readers beside the writers.
var weights = []struct {
	kind   string
	weight int
}{
	{kindSave, 24}, {kindClose, 8}, {kindNew, 4},
	{kindPrompt, 14}, {kindTool, 18}, {kindStop, 4}, {kindPreCompact, 7}, {kindSessionEnd, 4},
	{kindRead, 12},
}

// maxKill is the latest a killed process is killed, after its start.
const maxKill = 30 * time.Millisecond

// op is one ctx process to run.
type op struct {
	seq       int
	kind      string
	args      []string
	env       []string
	stdin     []byte
	target    *target       // the project a save or close writes, or a session is bound to
	session   *agentSession // the hooks' session; a save's, when it runs in one
	decision  string        // the --decision token of a save or close
	summary   string        // the --summary token of a save or close
	mark      string        // the token a hook's payload carries (prompt, tool call, reply)
	killAfter time.Duration // when the process is killed after its start; < 0: never
	newID     string        // the project `ctx new` reported making
}

func (o *op) isHook() bool {
	switch o.kind {
	case kindPrompt, kindTool, kindStop, kindPreCompact, kindSessionEnd:
		return true
	}
	return false
}

// result is what became of an op.
type result struct {
	op     *op
	exit   int  // -1 when killed
	killed bool // ended by the suite's SIGKILL
	hung   bool // still running after processLimit
	err    error
	stdout string
	stderr string
	start  time.Time
	took   time.Duration
}

func (r *result) String() string {
	s := fmt.Sprintf("op #%d `ctx %s`", r.op.seq, strings.Join(quoteArgs(r.op.args), " "))
	if r.op.session != nil {
		s += " (session " + r.op.session.id + ")"
	}
	return s
}

func quoteArgs(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		if a == "" || strings.ContainsAny(a, " \"'") {
			a = fmt.Sprintf("%q", a)
		}
		out[i] = a
	}
	return out
}

// nextOp chooses the next operation and prepares it: its tokens, its payload, and the
// lines the agent's client would have written to the transcript before the hook runs.
func (w *world) nextOp(r *rand.Rand) *op {
	w.mu.Lock()
	w.seq++
	o := &op{seq: w.seq, killAfter: -1}
	targets := slices.Clone(w.targets)
	w.mu.Unlock()

	total := 0
	for _, k := range weights {
		total += k.weight
	}
	pick := r.IntN(total)
	for _, k := range weights {
		if pick < k.weight {
			o.kind = k.kind
			break
		}
		pick -= k.weight
	}
	if o.kind != kindRead && r.Float64() < w.cfg.killRate {
		o.killAfter = time.Duration(r.Int64N(int64(maxKill) + 1))
	}
	tok := func(prefix string) string { return fmt.Sprintf("%s-%s-%d-x", prefix, w.run, o.seq) }

	switch o.kind {
	case kindSave, kindClose:
		o.target = targets[r.IntN(len(targets))]
		// Half of them in an agent session bound to the project, as the skills run
		// them: the Session History entry is that session's.
		if r.IntN(2) == 0 {
			if s := w.sessionOf(o.target); s != nil {
				o.session = s
				o.env = []string{"CLAUDE_CODE_SESSION_ID=" + s.id}
			}
		}
		o.decision, o.summary = tok("dec"), tok("sum")
		o.args = []string{o.kind, "-p", o.target.ref, "--decision", o.decision, "--summary", o.summary, "--json"}
	case kindNew:
		o.mark = fmt.Sprintf("Torture %s n%d", w.run, o.seq)
		o.args = []string{"new", o.mark, "--description", "made under load by the torture suite", "--json"}
	case kindRead:
		tg := targets[r.IntN(len(targets))]
		o.args = [][]string{
			{"load", tg.id, "--json"},
			{"show", tg.id, "--json"},
			{"projects", "--json"},
			{"sessions", "list", "--json"},
		}[r.IntN(4)]
	default:
		s := w.all[r.IntN(len(w.all))]
		o.session, o.target = s, s.project
		o.args = []string{"system", o.kind}
		o.stdin = s.prepare(r, o, tok)
	}
	return o
}

// sessionOf returns the agent session bound to a project, nil when none is.
func (w *world) sessionOf(tg *target) *agentSession {
	for _, s := range w.all {
		if s.project == tg {
			return s
		}
	}
	return nil
}

// exec runs one process: killed op.killAfter after its start when that is set, and
// after processLimit in any case.
func (w *world) exec(o *op) *result {
	res := &result{op: o}
	cmd := exec.Command(w.bin, o.args...)
	cmd.Dir = w.ws
	cmd.Env = append(slices.Clone(w.env), o.env...)
	if o.stdin != nil {
		cmd.Stdin = bytes.NewReader(o.stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	// A child such as git holding the pipes open must not keep Wait from returning.
	cmd.WaitDelay = 2 * time.Second
	start := time.Now()
	res.start = start
	if err := cmd.Start(); err != nil {
		res.err, res.exit = err, -1
		return res
	}
	if o.killAfter >= 0 {
		kill := time.AfterFunc(o.killAfter, func() { _ = cmd.Process.Kill() })
		defer kill.Stop()
	}
	var hung atomic.Bool
	limit := time.AfterFunc(processLimit, func() { hung.Store(true); _ = cmd.Process.Kill() })
	defer limit.Stop()
	err := cmd.Wait()
	res.took = time.Since(start)
	res.stdout, res.stderr = stdout.String(), stderr.String()
	res.exit = cmd.ProcessState.ExitCode()
	status, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
	res.hung = hung.Load()
	res.killed = !res.hung && status.Signaled() && status.Signal() == syscall.SIGKILL
	var exitErr *exec.ExitError
	if err != nil && !errors.As(err, &exitErr) {
		res.err = err
	}
	return res
}

// agentSession is one Claude Code session the hooks run for: its id, the project it
// loaded (nil for one that never did) and its transcript, which the suite writes as the
// client would, one line per prompt, tool call and reply.
type agentSession struct {
	id         string
	project    *target
	transcript string
	ws         string

	mu     sync.Mutex // one writer of the transcript at a time
	parent string     // uuid of the last line, for the next one's parentUuid
}

// newSession makes a session with a UUID for an id and a realistic transcript whose
// context sits just under the 90% auto-save threshold of a 200k-window model.
func (w *world) newSession(r *rand.Rand, tg *target) *agentSession {
	s := &agentSession{id: uuid(r), project: tg, ws: w.ws}
	s.transcript = filepath.Join(w.root, "transcripts", s.id+".jsonl")
	if err := fixture.WriteTranscript(s.transcript, fixture.TranscriptOptions{Bytes: 48 << 10, FinalTokens: 146_000}); err != nil {
		w.t.Fatal(err)
	}
	if err := ownUUIDs(r, s.transcript, s.id); err != nil {
		w.t.Fatal(err)
	}
	w.all = append(w.all, s)
	return s
}

var (
	uuidRE      = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	sessionIDRE = regexp.MustCompile(`"sessionId":"([0-9a-f-]{36})"`)
)

// ownUUIDs gives a generated transcript uuids of its own, and the session's id. The
// generator writes the same bytes for the same options, and two transcripts that
// share a line's uuid are a fork and its parent to ctx, which then carries the
// parent's project binding to the other session, as it should for a real fork.
func ownUUIDs(r *rand.Rand, path, sessionID string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	fresh := map[string]string{}
	if m := sessionIDRE.FindSubmatch(data); m != nil {
		fresh[string(m[1])] = sessionID
	}
	data = uuidRE.ReplaceAllFunc(data, func(old []byte) []byte {
		id, ok := fresh[string(old)]
		if !ok {
			id = uuid(r)
			fresh[string(old)] = id
		}
		return []byte(id)
	})
	return os.WriteFile(path, data, 0o644)
}

// prepare writes what the client writes to the transcript before the hook of o runs,
// and returns the hook's payload. Usage moves between 89% and 96% of the budget, so
// the hooks cross the auto-save threshold again in every new compaction cycle.
func (s *agentSession) prepare(r *rand.Rand, o *op, tok func(string) string) []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	payload := map[string]any{
		"session_id":      s.id,
		"transcript_path": s.transcript,
		"cwd":             s.ws,
		"hook_event_name": hookEvents[o.kind],
	}
	switch o.kind {
	case kindPrompt:
		o.mark = tok("prm")
		prompt := o.mark + ": the expiry check still fails on the 31st; find out why, fix it and run the tests."
		promptID := uuid(r)
		s.appendLine(r, map[string]any{
			"type": "user", "promptId": promptID, "permissionMode": "default",
			"message": map[string]any{"role": "user", "content": prompt},
		})
		payload["prompt"], payload["prompt_id"], payload["permission_mode"] = prompt, promptID, "default"
	case kindTool:
		o.mark = tok("tool")
		name, input := s.toolCall(r, o.mark)
		id := "toolu_01" + strings.ReplaceAll(uuid(r), "-", "")[:22]
		tokens := 149_000 + r.IntN(11_000)
		s.appendLine(r, map[string]any{
			"type": "assistant", "requestId": "req_011C" + strings.ReplaceAll(uuid(r), "-", "")[:20],
			"message": assistantMessage(uuid(r), tokens, "tool_use", []any{map[string]any{
				"type": "tool_use", "id": id, "name": name, "input": input, "caller": map[string]any{"type": "direct"},
			}}),
		})
		s.appendLine(r, map[string]any{
			"type": "user",
			"message": map[string]any{"role": "user", "content": []any{map[string]any{
				"tool_use_id": id, "type": "tool_result", "content": "ok", "is_error": false,
			}}},
		})
		payload["tool_name"], payload["tool_input"], payload["tool_use_id"] = name, input, id
		payload["tool_response"] = map[string]any{"success": true}
		payload["permission_mode"] = "default"
	case kindStop:
		o.mark = tok("rep")
		text := o.mark + " I fixed the month overflow in Expired and the table test now covers the 29th to the 31st; all tests pass."
		s.appendLine(r, map[string]any{
			"type": "assistant", "requestId": "req_011C" + strings.ReplaceAll(uuid(r), "-", "")[:20],
			"message": assistantMessage(uuid(r), 149_000+r.IntN(11_000), "end_turn", []any{map[string]any{"type": "text", "text": text}}),
		})
		payload["stop_hook_active"], payload["last_assistant_message"] = false, text
	case kindPreCompact:
		payload["trigger"], payload["custom_instructions"], payload["prompt_id"] = "auto", "", uuid(r)
	case kindSessionEnd:
		payload["reason"] = []string{"exit", "clear", "logout", "prompt_input_exit"}[r.IntN(4)]
	}
	data, err := json.Marshal(payload)
	if err != nil {
		panic(err) // maps of strings and numbers always marshal
	}
	return data
}

// hookEvents names the Claude Code event of each hook the suite runs.
var hookEvents = map[string]string{
	kindPrompt: "UserPromptSubmit", kindTool: "PostToolUse", kindStop: "Stop",
	kindPreCompact: "PreCompact", kindSessionEnd: "SessionEnd",
}

// toolCall makes a tool call of the kinds agents make most, naming the token where a
// journal keeps it (the file, command or pattern, cut to 120 characters).
func (s *agentSession) toolCall(r *rand.Rand, mark string) (string, map[string]any) {
	dir := filepath.Join(s.ws, "notes")
	if s.project != nil {
		dir = filepath.Join(s.ws, s.project.rel, "03-working")
	}
	file := filepath.Join(dir, mark+".md")
	// The client has read, written or edited the file by the time PostToolUse runs.
	if err := os.MkdirAll(dir, 0o755); err != nil {
		panic(err)
	}
	if err := os.WriteFile(file, []byte("# "+mark+"\n"), 0o644); err != nil {
		panic(err)
	}
	switch r.IntN(5) {
	case 0:
		return "Edit", map[string]any{"file_path": file, "old_string": "a", "new_string": "b", "replace_all": false}
	case 1:
		return "Write", map[string]any{"file_path": file, "content": "# notes\n"}
	case 2:
		return "Read", map[string]any{"file_path": file}
	case 3:
		return "Grep", map[string]any{"pattern": mark, "path": s.ws, "output_mode": "files_with_matches"}
	default:
		return "Bash", map[string]any{"command": "go test ./internal/card/... -run " + mark, "description": "Run the expiry tests"}
	}
}

// assistantMessage is an assistant message as Claude Code 2.1 records it, its usage
// adding up to tokens of context.
func assistantMessage(id string, tokens int, stop string, content []any) map[string]any {
	creation := tokens / 30
	return map[string]any{
		"model": "claude-sonnet-4-5", "id": "msg_01" + strings.ReplaceAll(id, "-", "")[:22],
		"type": "message", "role": "assistant", "content": content,
		"stop_reason": stop, "stop_sequence": nil,
		"usage": map[string]any{
			"input_tokens": 6, "cache_creation_input_tokens": creation, "cache_read_input_tokens": tokens - 6 - creation,
			"output_tokens": 180, "service_tier": "standard",
			"cache_creation": map[string]any{"ephemeral_1h_input_tokens": creation, "ephemeral_5m_input_tokens": 0},
		},
	}
}

// appendLine writes one transcript line with the fields every line carries, in one
// write, as the client does. The caller holds s.mu.
func (s *agentSession) appendLine(r *rand.Rand, line map[string]any) {
	id := uuid(r)
	line["parentUuid"] = nil
	if s.parent != "" {
		line["parentUuid"] = s.parent
	}
	line["isSidechain"], line["userType"], line["entrypoint"] = false, "external", "cli"
	line["cwd"], line["sessionId"], line["version"], line["gitBranch"] = s.ws, s.id, "2.1.233", "main"
	line["uuid"], line["timestamp"] = id, time.Now().UTC().Format("2006-01-02T15:04:05.000Z")
	data, err := json.Marshal(line)
	if err != nil {
		panic(err)
	}
	f, err := os.OpenFile(s.transcript, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		panic(err) // the suite's own file in its own folder
	}
	defer func() { _ = f.Close() }()
	if _, err := f.Write(append(data, '\n')); err != nil {
		panic(err)
	}
	s.parent = id
}

// uuid returns a random version-4 UUID, the form of Claude Code's session ids.
func uuid(r *rand.Rand) string {
	hi, lo := r.Uint64(), r.Uint64()
	hi = hi&^0xf000 | 0x4000
	lo = lo&^(0xc<<60) | 0x8<<60
	return fmt.Sprintf("%08x-%04x-%04x-%04x-%012x", hi>>32, hi>>16&0xffff, hi&0xffff, lo>>48, lo&0xffffffffffff)
}
