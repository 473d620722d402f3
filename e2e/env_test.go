//go:build e2e

package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ctxtools/ctx/internal/testkit/ctxbin"
)

// apiKey is any key: the stand-in does not check it. Interactive runs approve its last
// 20 characters in the seeded ~/.claude.json.
const apiKey = "sk-ant-e2e-standin-0123456789abcdefghij"

// Env is one isolated world for a scenario: a private HOME and runtime folder, a
// workspace made by `ctx demo` (ctx's own example) with `ctx init` run in it, ctx on
// the PATH, the pinned client and a model stand-in. Nothing outside its temp folders is
// read or written, and the client reaches only the loopback stand-in.
type Env struct {
	T         testing.TB
	Root      string // the temp folder holding everything
	Home      string
	Runtime   string
	Workspace string
	CtxDir    string // the folder holding the ctx binary
	Claude    string
	Model     *Model
	// Vars are extra environment variables for claude (and so for the hooks it runs).
	Vars map[string]string
	// NoCtx leaves ctx off the PATH of claude and its hooks: a teammate without ctx.
	NoCtx bool
}

// Options shape a new Env.
type Options struct {
	// NoInit skips `ctx init` in the workspace.
	NoInit bool
	// InitArgs are extra arguments for `ctx init`.
	InitArgs []string
	// Git makes the workspace a git repository with everything committed.
	Git bool
}

// New makes an Env: the client (installed or skipped), ctx built, a demo workspace
// with ctx initialised in it.
func New(t testing.TB, o Options) *Env {
	t.Helper()
	claude := Client(t)
	root := t.TempDir()
	// The physical path: Claude Code names transcript folders after it.
	if r, err := filepath.EvalSymlinks(root); err == nil {
		root = r
	}
	e := &Env{
		T: t, Root: root, Claude: claude, CtxDir: filepath.Dir(ctxbin.Path(t)),
		Home:      filepath.Join(root, "home"),
		Runtime:   filepath.Join(root, "run"),
		Workspace: filepath.Join(root, "ws"),
		Model:     NewModel(t),
		Vars:      map[string]string{},
	}
	for _, d := range []string{e.Home, e.Runtime, filepath.Join(root, "tmux"), filepath.Join(root, "claude-bin")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(claude, filepath.Join(root, "claude-bin", "claude")); err != nil {
		t.Fatal(err)
	}
	// Any tmux server an agent test starts ends with the test, and so does every
	// process of this Env (its HOME in the environment), before its folder goes.
	t.Cleanup(func() {
		cmd := exec.Command("tmux", "-L", "ctx", "kill-server")
		cmd.Env = e.environ(false)
		_ = cmd.Run()
		endProcessesOf("HOME=" + e.Home)
	})
	e.MustCtx("demo", "--dir", e.Workspace)
	if o.Git {
		e.Git("init", "-q", "-b", "main")
		e.Git("add", "-A")
		e.Git("commit", "-q", "-m", "workspace")
	}
	if !o.NoInit {
		e.MustCtx(append([]string{"init"}, o.InitArgs...)...)
	}
	if o.Git && !o.NoInit {
		e.Git("add", "-A")
		e.Git("commit", "-q", "-m", "ctx init")
	}
	return e
}

// environ is the environment of every process the Env starts: nothing of the caller's
// but PATH's system folders, so no setting of the machine or of a parent Claude Code
// leaks in.
func (e *Env) environ(withCtx bool) []string {
	// claude is on the PATH too, for `ctx agents`, which starts it.
	path := filepath.Join(e.Root, "claude-bin") + ":/usr/local/bin:/usr/bin:/bin"
	if withCtx {
		path = e.CtxDir + ":" + path
	}
	env := []string{
		"PATH=" + path,
		"HOME=" + e.Home,
		"XDG_RUNTIME_DIR=" + e.Runtime,
		"XDG_CONFIG_HOME=" + filepath.Join(e.Home, ".config"),
		"TMPDIR=" + os.TempDir(),
		// ctx's tmux server (tmux -L ctx) lives here: private to this Env.
		"TMUX_TMPDIR=" + filepath.Join(e.Root, "tmux"),
		"LANG=C.UTF-8",
		"TERM=xterm-256color",
		"ANTHROPIC_BASE_URL=" + e.Model.URL,
		"ANTHROPIC_API_KEY=" + apiKey,
		"DISABLE_TELEMETRY=1",
		"DISABLE_AUTOUPDATER=1",
		"DISABLE_ERROR_REPORTING=1",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"GIT_AUTHOR_NAME=e2e", "GIT_AUTHOR_EMAIL=e2e@example.invalid",
		"GIT_COMMITTER_NAME=e2e", "GIT_COMMITTER_EMAIL=e2e@example.invalid",
	}
	keys := make([]string, 0, len(e.Vars))
	for k := range e.Vars {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		env = append(env, k+"="+e.Vars[k])
	}
	return env
}

// Ctx runs ctx in the workspace as a person would and returns its output and exit code.
func (e *Env) Ctx(args ...string) (stdout, stderr string, code int) {
	e.T.Helper()
	cmd := exec.Command(filepath.Join(e.CtxDir, "ctx"), args...)
	cmd.Dir = e.Workspace
	if _, err := os.Stat(e.Workspace); err != nil {
		cmd.Dir = e.Root
	}
	cmd.Env = e.environ(true)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code = exitCode(err)
	if code < 0 {
		e.T.Fatalf("ctx %s: %v", strings.Join(args, " "), err)
	}
	return out.String(), errb.String(), code
}

// MustCtx runs ctx and fails the test unless it exits 0.
func (e *Env) MustCtx(args ...string) string {
	e.T.Helper()
	out, errs, code := e.Ctx(args...)
	if code != 0 {
		e.T.Fatalf("ctx %s: exit %d\n%s%s", strings.Join(args, " "), code, out, errs)
	}
	return out
}

// Git runs git in the workspace and fails the test if it fails.
func (e *Env) Git(args ...string) string {
	e.T.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = e.Workspace
	cmd.Env = e.environ(false)
	out, err := cmd.CombinedOutput()
	if err != nil {
		e.T.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func exitCode(err error) int {
	if err == nil {
		return 0
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		// Killed by a signal: the shell's convention, 128 + the signal.
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return ee.ExitCode()
	}
	return -1
}

// Run options for print mode.
type Run struct {
	// Prompts are sent in order to one process (stream-json input); one prompt is sent
	// as the plain positional argument.
	Prompts []string
	// Resume continues this session id.
	Resume string
	// SessionID starts the session under this id.
	SessionID string
	// Model is the --model flag (empty: Claude Code's default model).
	Model string
	// Args are extra flags, before the prompt.
	Args []string
	// Dir is the working folder (default: the workspace).
	Dir string
	// Timeout bounds the process (default 90 s).
	Timeout time.Duration
	// NoAllowedTools leaves out the default --allowedTools, so that every tool call
	// needs a permission (and fires PermissionRequest in the default mode).
	NoAllowedTools bool
}

// Result is what a print-mode process did.
type Result struct {
	ExitCode  int
	SessionID string
	Stdout    string
	Stderr    string
	Events    []map[string]any
	Debug     string // the --debug-file log
	Hooks     []HookRun
}

// HookRun is one hook the client ran, from its debug log.
type HookRun struct {
	Event   string
	Command string
	Status  int
	Millis  int
}

// hookLine matches the debug log's line for a finished hook, in its two forms:
// "Hooks: Stop [cmd] finished with status 0 (21ms)" and
// "PreCompact:auto [cmd] completed with status 0".
var hookLine = regexp.MustCompile(`(?m)(?:Hooks: )?\b([A-Z][A-Za-z]+)(?::\S+)? \[([^\]\n]+)\] (?:finished|completed) with status (-?\d+)(?: \((\d+)ms\))?`)

func parseHooks(debug string) []HookRun {
	var out []HookRun
	for _, m := range hookLine.FindAllStringSubmatch(debug, -1) {
		status, _ := strconv.Atoi(m[3])
		ms, _ := strconv.Atoi(m[4])
		out = append(out, HookRun{Event: m[1], Command: m[2], Status: status, Millis: ms})
	}
	return out
}

// Run runs claude in print mode with the prompts and waits for it.
func (e *Env) Run(r Run) *Result {
	e.T.Helper()
	debug := filepath.Join(e.Root, fmt.Sprintf("debug-%d.log", time.Now().UnixNano()))
	args := []string{"-p", "--output-format", "stream-json", "--verbose", "--debug-file", debug,
		"--include-hook-events", "--permission-mode", "default"}
	if !r.NoAllowedTools {
		args = append(args, "--allowedTools", "Bash", "Write", "Edit", "Read", "Skill")
	}
	if r.Model != "" {
		args = append(args, "--model", r.Model)
	}
	if r.Resume != "" {
		args = append(args, "--resume", r.Resume)
	}
	if r.SessionID != "" {
		args = append(args, "--session-id", r.SessionID)
	}
	args = append(args, r.Args...)
	var lines []string
	if len(r.Prompts) == 1 {
		args = append(args, "--", r.Prompts[0])
	} else {
		args = append(args, "--input-format", "stream-json")
		for _, p := range r.Prompts {
			line, _ := json.Marshal(map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": p}})
			lines = append(lines, string(line)+"\n")
		}
	}
	timeout := r.Timeout
	if timeout == 0 {
		timeout = 90 * time.Second
	}
	cmd := exec.Command(e.Claude, args...)
	cmd.Dir = r.Dir
	if cmd.Dir == "" {
		cmd.Dir = e.Workspace
	}
	cmd.Env = e.environ(!e.NoCtx)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		e.T.Fatal(err)
	}
	stdoutPipe, err := cmd.StdoutPipe()
	if err != nil {
		e.T.Fatal(err)
	}
	var out, errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		e.T.Fatalf("claude: %v", err)
	}
	// Prompts go in one at a time: the next when the previous turn's result is out,
	// and stdin closes after the last, as a person's session would go. A client given
	// them all at once ends after the first.
	send := func() {
		if len(lines) == 0 {
			_ = stdin.Close()
			return
		}
		_, _ = io.WriteString(stdin, lines[0])
		lines = lines[1:]
	}
	send()
	read := make(chan struct{})
	go func() {
		defer close(read)
		sc := bufio.NewScanner(stdoutPipe)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		for sc.Scan() {
			out.Write(sc.Bytes())
			out.WriteByte('\n')
			var ev struct {
				Type string `json:"type"`
			}
			if json.Unmarshal(sc.Bytes(), &ev) == nil && ev.Type == "result" {
				send()
			}
		}
	}()
	done := make(chan error, 1)
	go func() {
		<-read
		done <- cmd.Wait()
	}()
	select {
	case err = <-done:
	case <-time.After(timeout):
		_ = cmd.Process.Kill()
		err = <-done
		e.T.Fatalf("claude did not finish in %s (%v)\nstdout:\n%s\nstderr:\n%s", timeout, err, tail(out.String(), 3000), errb.String())
	}
	res := &Result{ExitCode: exitCode(err), Stdout: out.String(), Stderr: errb.String()}
	sc := bufio.NewScanner(strings.NewReader(res.Stdout))
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var ev map[string]any
		if json.Unmarshal(sc.Bytes(), &ev) == nil {
			res.Events = append(res.Events, ev)
			if id, ok := ev["session_id"].(string); ok && res.SessionID == "" {
				res.SessionID = id
			}
		}
	}
	if b, err := os.ReadFile(debug); err == nil {
		res.Debug = string(b)
		res.Hooks = parseHooks(res.Debug)
	}
	return res
}

// MustRun is Run that fails the test unless claude exits 0.
func (e *Env) MustRun(r Run) *Result {
	e.T.Helper()
	res := e.Run(r)
	if res.ExitCode != 0 {
		e.T.Fatalf("claude exited %d\nstderr:\n%s\nstdout (end):\n%s", res.ExitCode, res.Stderr, tail(res.Stdout, 4000))
	}
	return res
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}

// HookEvents are the hook_response events of a print-mode run (--include-hook-events):
// each hook's name, exit code, stdout and stderr as Claude Code saw them.
func (r *Result) HookEvents() []map[string]any {
	var out []map[string]any
	for _, ev := range r.Events {
		if ev["type"] == "system" && (ev["subtype"] == "hook_response" || ev["subtype"] == "hook_result") {
			out = append(out, ev)
		}
	}
	return out
}

// Transcript is the path of a session's transcript in this Env's HOME.
func (e *Env) Transcript(sessionID, cwd string) string {
	if cwd == "" {
		cwd = e.Workspace
	}
	return filepath.Join(e.Home, ".claude", "projects", ProjectFolder(cwd), sessionID+".jsonl")
}

var nonAlnum = regexp.MustCompile(`[^A-Za-z0-9]`)

// ProjectFolder is the folder name Claude Code gives a working folder under
// ~/.claude/projects: every character that is not a letter or digit becomes "-".
func ProjectFolder(cwd string) string { return nonAlnum.ReplaceAllString(cwd, "-") }

// ReadFile reads a file under the workspace (slash path), failing the test if it
// cannot.
func (e *Env) ReadFile(rel string) string {
	e.T.Helper()
	b, err := os.ReadFile(filepath.Join(e.Workspace, filepath.FromSlash(rel)))
	if err != nil {
		e.T.Fatal(err)
	}
	return string(b)
}

// Tree is every file under dir with its content and mode, for byte-identical checks.
func Tree(t testing.TB, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if info.IsDir() {
			out[rel+"/"] = info.Mode().String()
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		out[rel] = info.Mode().String() + "\n" + string(b)
		return nil
	})
	if err != nil {
		t.Fatalf("walk %s: %v", dir, err)
	}
	return out
}

// TreeDiff names the paths that differ between two trees.
func TreeDiff(before, after map[string]string) []string {
	var diff []string
	for k, v := range before {
		if w, ok := after[k]; !ok {
			diff = append(diff, "removed "+k)
		} else if v != w {
			diff = append(diff, "changed "+k)
		}
	}
	for k := range after {
		if _, ok := before[k]; !ok {
			diff = append(diff, "added "+k)
		}
	}
	sort.Strings(diff)
	return diff
}

// Snapshot is what a test reads of one snapshot set ctx wrote (.ctx/sessions).
type Snapshot struct {
	ID           string    `json:"snapshot_id"`
	SessionID    string    `json:"session_id"`
	Trigger      string    `json:"trigger"`
	SavedAt      time.Time `json:"saved_at"`
	ContextUsage *struct {
		TokensUsed  int     `json:"tokens_used"`
		TokensTotal int     `json:"tokens_total"`
		Percentage  float64 `json:"percentage"`
	} `json:"context_usage"`
	Project *struct {
		ID string `json:"id"`
	} `json:"project"`
	Incremental map[string]any `json:"incremental_pause"`
}

// Snapshots are the snapshot sets in the workspace, oldest first.
func (e *Env) Snapshots() []Snapshot {
	e.T.Helper()
	paths, _ := filepath.Glob(filepath.Join(e.Workspace, ".ctx", "sessions", "session-*.json"))
	sort.Strings(paths)
	var out []Snapshot
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			e.T.Fatal(err)
		}
		var s Snapshot
		if err := json.Unmarshal(b, &s); err != nil {
			e.T.Fatalf("%s: %v", p, err)
		}
		out = append(out, s)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].SavedAt.Before(out[j].SavedAt) })
	return out
}

// Triggers are the triggers of the snapshot sets, oldest first.
func (e *Env) Triggers() []string {
	var out []string
	for _, s := range e.Snapshots() {
		out = append(out, s.Trigger)
	}
	return out
}

// ProjectPath is the path of a file of the demo's project 1, relative to the workspace.
func ProjectPath(rel string) string { return "02-projects/01-checkout-redesign/" + rel }

// ResumeFile is project 1's save point, relative to the workspace.
const ResumeFile = "02-projects/01-checkout-redesign/01-planning/_resume.md"

// ToolResult is the result the client gave the model for one tool call.
type ToolResult struct {
	IsError bool
	Content string
}

// ToolResults are the tool results of a print-mode run, in order.
func (r *Result) ToolResults() []ToolResult {
	var out []ToolResult
	for _, ev := range r.Events {
		if ev["type"] != "user" {
			continue
		}
		msg, _ := ev["message"].(map[string]any)
		content, _ := msg["content"].([]any)
		for _, c := range content {
			block, _ := c.(map[string]any)
			if block["type"] != "tool_result" {
				continue
			}
			isErr, _ := block["is_error"].(bool)
			out = append(out, ToolResult{IsError: isErr, Content: Request{Body: map[string]any{"messages": []any{block}}}.Text()})
		}
	}
	return out
}

// HookOutputs are the stdout of each run of a hook event that ctx installed, in order.
func (r *Result) HookOutputs(event string) []string {
	var out []string
	for _, ev := range r.HookEvents() {
		if ev["hook_event"] == event {
			s, _ := ev["stdout"].(string)
			out = append(out, s)
		}
	}
	return out
}

// FirstAfterCompaction is the first main-chain request after the newest compaction's
// summary request: the one that must carry the briefing.
func (m *Model) FirstAfterCompaction() (Request, bool) {
	all := m.Requests("")
	for i := len(all) - 1; i >= 0; i-- {
		if all[i].Kind != KindSummary {
			continue
		}
		for _, r := range all[i+1:] {
			if r.Kind == KindMain {
				return r, true
			}
		}
		return Request{}, false
	}
	return Request{}, false
}

// endProcessesOf kills every process of this user whose environment holds the entry,
// and waits (a moment) until they are gone.
func endProcessesOf(entry string) {
	find := func() []int {
		var pids []int
		dirs, _ := os.ReadDir("/proc")
		for _, d := range dirs {
			pid, err := strconv.Atoi(d.Name())
			if err != nil || pid == os.Getpid() {
				continue
			}
			b, err := os.ReadFile(filepath.Join("/proc", d.Name(), "environ"))
			if err == nil && bytes.Contains(append([]byte{0}, b...), []byte("\x00"+entry+"\x00")) {
				pids = append(pids, pid)
			}
		}
		return pids
	}
	for _, pid := range find() {
		killPID(pid)
	}
	deadline := time.Now().Add(3 * time.Second)
	for time.Now().Before(deadline) && len(find()) > 0 {
		time.Sleep(50 * time.Millisecond)
	}
}
