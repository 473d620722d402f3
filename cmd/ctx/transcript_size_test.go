package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// timedRun is one run of the real ctx binary, timed.
type timedRun struct {
	stdout, stderr string
	code           int
	took           time.Duration
}

// runTimed runs bin with args in ws, stdin as its input, and env on top of a cleaned
// environment. A run past 30 s is killed: the test reports it as too slow.
func runTimed(t *testing.T, bin, ws, stdin string, env []string, args ...string) timedRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = ws
	cmd.Env = append(slices.DeleteFunc(os.Environ(), func(kv string) bool {
		key, _, _ := strings.Cut(kv, "=")
		return strings.HasPrefix(key, "CTX_") || strings.HasPrefix(key, "CLAUDE") ||
			key == "HOME" || key == "XDG_RUNTIME_DIR" || key == "NO_COLOR"
	}), append([]string{"CTX_WORKSPACE=" + ws, "NO_COLOR=1"}, env...)...)
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	r := timedRun{stdout: stdout.String(), stderr: stderr.String(), took: time.Since(start)}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	case err != nil:
		t.Fatalf("ctx %s: %v", strings.Join(args, " "), err)
	}
	return r
}

// TestGiantTranscriptHooksStayFast runs the hooks that read usage, and `ctx usage`, on
// a 64 GB transcript (sparse: it costs no disk) whose only assistant line is at its
// start and says 96% of the budget. Past the scan bound the usage is unknown: each
// run ends in well under the hook's budget, the prompt and tool hooks say nothing and
// change nothing (no auto-save), and `ctx usage` says why it cannot tell.
func TestGiantTranscriptHooksStayFast(t *testing.T) {
	bin := ctxBinary(t)
	ws := procWorkspace(t)
	dir := t.TempDir()
	runtimeDir := filepath.Join(dir, "run")
	if err := os.Mkdir(runtimeDir, 0o700); err != nil {
		t.Fatal(err)
	}
	env := []string{"HOME=" + filepath.Join(dir, "home"), "XDG_RUNTIME_DIR=" + runtimeDir}

	const session = "giant-1"
	if r := runTimed(t, bin, ws, "", append(env, "CLAUDE_CODE_SESSION_ID="+session), "load", "1"); r.code != 0 {
		t.Fatalf("ctx load 1: exit %d\n%s", r.code, r.stderr)
	}

	// 160,000 tokens of claude-sonnet-4-5's 167,000 budget: an auto-save, were it read.
	head := `{"type":"user","isSidechain":false,"message":{"role":"user","content":"start"},"uuid":"u1","timestamp":"2026-11-20T09:00:00Z","sessionId":"giant-1"}` + "\n" +
		`{"parentUuid":"u1","isSidechain":false,"type":"assistant","message":{"model":"claude-sonnet-4-5","id":"msg_1","role":"assistant","content":[{"type":"text","text":"ok"}],"usage":{"input_tokens":10,"cache_creation_input_tokens":10000,"cache_read_input_tokens":149990,"output_tokens":40}},"uuid":"a1","timestamp":"2026-11-20T09:00:05Z","sessionId":"giant-1"}` + "\n"
	tail := "\n" + `{"type":"user","isSidechain":false,"message":{"role":"user","content":"go on"},"uuid":"u2","timestamp":"2026-11-20T18:00:00Z","sessionId":"giant-1"}` + "\n"
	transcript := filepath.Join(dir, "giant-1.jsonl")
	if err := os.WriteFile(transcript, []byte(head), 0o600); err != nil {
		t.Fatal(err)
	}
	// Reading 64 GB of holes takes the old reader 30 s or more; the bound, milliseconds.
	if err := os.Truncate(transcript, 64<<30); err != nil {
		t.Skipf("no sparse 64 GB file here: %v", err)
	}
	f, err := os.OpenFile(transcript, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(tail); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}

	const fast = 5 * time.Second
	payload := func(event string, extra map[string]any) string {
		p := map[string]any{"session_id": session, "transcript_path": transcript, "cwd": ws, "hook_event_name": event}
		for k, v := range extra {
			p[k] = v
		}
		b, _ := json.Marshal(p)
		return string(b)
	}
	for _, h := range []struct{ sub, input string }{
		{"check-context-size", payload("UserPromptSubmit", map[string]any{"prompt": "go on", "prompt_id": "p-1"})},
		{"record-action", payload("PostToolUse", map[string]any{"tool_name": "Read", "tool_input": map[string]any{"file_path": "/etc/hostname"}})},
	} {
		before := treeDigest(t, ws)
		r := runTimed(t, bin, ws, h.input, env, "system", h.sub)
		t.Logf("%s: %v", h.sub, r.took)
		if r.code != 0 || r.took > fast || r.stdout != "" || strings.Count(r.stderr, "\n") > 1 {
			t.Errorf("%s: exit %d after %v, want 0 within %v, nothing on stdout, at most one line on stderr\nstdout:\n%s\nstderr:\n%s",
				h.sub, r.code, r.took, fast, r.stdout, r.stderr)
		}
		if after := treeDigest(t, ws); after != before {
			t.Errorf("%s changed the workspace (an auto-save?):\nbefore:\n%safter:\n%s", h.sub, before, after)
		}
	}

	// A compaction is counted and saved whatever the usage; it must not wait on it.
	r := runTimed(t, bin, ws, payload("PreCompact", map[string]any{"trigger": "auto", "prompt_id": "p-2"}), env, "system", "pre-compact")
	t.Logf("pre-compact: %v", r.took)
	if r.code != 0 || r.took > fast || r.stdout != "" || r.stderr != "" {
		t.Errorf("pre-compact: exit %d after %v, want 0 within %v and silence\nstdout:\n%s\nstderr:\n%s", r.code, r.took, fast, r.stdout, r.stderr)
	}

	for _, args := range [][]string{{"usage", "--transcript", transcript}, {"usage", "--transcript", transcript, "--json"}} {
		r := runTimed(t, bin, ws, "", env, args...)
		t.Logf("%s: %v", strings.Join(args, " "), r.took)
		want := "ctx: transcript " + transcript + ": usage unknown: no assistant line in its last 32 MiB"
		if r.code != exitFailure || r.took > fast || r.stdout != "" || !strings.HasPrefix(r.stderr, want) || strings.Count(r.stderr, "\n") != 1 {
			t.Errorf("ctx %s: exit %d after %v, want %d within %v and one line on stderr starting %q\nstdout:\n%s\nstderr:\n%s",
				strings.Join(args, " "), r.code, r.took, exitFailure, fast, want, r.stdout, r.stderr)
		}
	}
}
