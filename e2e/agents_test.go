//go:build e2e

package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ctxtools/ctx/agents"
)

// agentView is what the tests read of `ctx agents show --json`.
type agentView struct {
	ID     string `json:"id"`
	Name   string `json:"name"`
	State  string `json:"state"`
	Claude struct {
		SessionID          string   `json:"session_id"`
		PreviousSessionIDs []string `json:"previous_session_ids"`
	} `json:"claude"`
	Host string `json:"host"`
	Tmux struct {
		Session string `json:"session"`
	} `json:"tmux"`
	Activity struct {
		Activity string    `json:"activity"`
		Event    string    `json:"event"`
		At       time.Time `json:"at"`
	} `json:"activity"`
	Pause *struct {
		RSSFreedKB     int64  `json:"rss_freed_kb"`
		ProcessesEnded int    `json:"processes_ended"`
		SnapshotID     string `json:"snapshot_id"`
		Scrollback     string `json:"scrollback"`
		Git            *struct {
			Ref   string   `json:"checkpoint_ref"`
			Dirty []string `json:"dirty"`
		} `json:"git"`
	} `json:"pause"`
	Exit *struct {
		Status    int      `json:"status"`
		LastLines []string `json:"last_lines"`
	} `json:"exit"`
	ResumePlan *struct {
		Prompt string `json:"prompt"`
		Fresh  bool   `json:"fresh"`
	} `json:"resume_plan"`
}

func agentsEnv(t *testing.T) *Env {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		Missing(t, "tmux (apt-get install tmux)")
	}
	e := New(t, Options{Git: true})
	e.seedClaudeJSON()
	return e
}

func (e *Env) show(name string) agentView {
	e.T.Helper()
	var v agentView
	if err := json.Unmarshal([]byte(e.MustCtx("agents", "show", name, "--json")), &v); err != nil {
		e.T.Fatal(err)
	}
	return v
}

// waitTurn waits until the agent has finished a turn (its Stop hook) after since: it
// is idle, with the stand-in's reply on its screen.
func (e *Env) waitTurn(name string, since time.Time) agentView {
	e.T.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		v := e.show(name)
		if v.State == "active" && v.Activity.Event == "Stop" && v.Activity.At.After(since) {
			return v
		}
		if time.Now().After(deadline) {
			screen, _, _ := e.Ctx("agents", "logs", name)
			e.T.Fatalf("agent %s never finished a turn: %+v\nscreen:\n%s", name, v, tail(screen, 2500))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// The whole round trip with the real client: start on a project, work (a file
// written), idle; pause with a dirty tree (save point, checkpoint, scrollback, every
// process ended, memory freed, files untouched); the person edits the agent's file;
// resume in the same conversation, told about the overlap.
func TestAgentPauseAndResumeTheSameConversation(t *testing.T) {
	e := agentsEnv(t)
	notes := filepath.Join(e.Workspace, ProjectPath("03-working/agent-notes.md"))
	e.Model.Script(Call(20_000, Write(notes, "agent's notes\n")), Say("first-turn-done", 21_000))
	out := e.MustCtx("agents", "start", "1", "--name", "expiry")
	if !strings.Contains(out, "active") {
		t.Fatalf("start: %s", out)
	}
	v := e.waitTurn("expiry", time.Time{})
	startReq := e.Model.Requests(KindMain)[0]
	if startReq.SessionID != v.Claude.SessionID || !strings.Contains(startReq.Text(), "Resume project 01-checkout-redesign") {
		t.Fatalf("the agent's first request is not ctx's resume prompt in its own session (%s vs %s)", startReq.SessionID, v.Claude.SessionID)
	}
	// The person's files as git sees them; the save point and .ctx/ are ctx's to write.
	work := func() string {
		var keep []string
		for _, l := range strings.Split(e.Git("status", "--porcelain", "--untracked-files=all"), "\n") {
			if !strings.Contains(l, ".ctx/") && !strings.Contains(l, "_resume.md") {
				keep = append(keep, l)
			}
		}
		return strings.Join(keep, "\n") + "\n" + e.Git("diff", "--cached", "--stat")
	}
	statusBefore := work()

	var paused agentView
	if err := json.Unmarshal([]byte(e.MustCtx("agents", "pause", "expiry", "--json")), &[]any{&paused}); err != nil {
		t.Fatal(err)
	}
	if paused.State != "paused" || paused.Pause == nil {
		t.Fatalf("pause: %+v", paused)
	}
	if left := agents.Marked(v.ID); len(left) > 0 {
		t.Errorf("processes of the agent left after pause: %v", left)
	}
	if paused.Pause.RSSFreedKB < 10_000 || paused.Pause.ProcessesEnded == 0 {
		t.Errorf("pause freed %d kB from %d processes", paused.Pause.RSSFreedKB, paused.Pause.ProcessesEnded)
	}
	if paused.Pause.Git == nil || !hasItem(paused.Pause.Git.Dirty, ProjectPath("03-working/agent-notes.md")) {
		t.Fatalf("the checkpoint does not list the agent's file: %+v", paused.Pause.Git)
	}
	if ref := e.Git("show-ref", paused.Pause.Git.Ref); ref == "" {
		t.Error("no checkpoint ref")
	}
	if got := work(); got != statusBefore {
		t.Errorf("pause changed the working tree or index:\nbefore %s\nafter  %s", statusBefore, got)
	}
	if paused.Pause.SnapshotID == "" || index(e.Triggers(), "agent-pause") < 0 {
		t.Errorf("no save at pause: %v", e.Triggers())
	}
	if b, err := os.ReadFile(filepath.Join(e.Workspace, ".ctx/state/agents", v.ID, paused.Pause.Scrollback)); err != nil || !strings.Contains(string(b), "first-turn-done") {
		t.Errorf("the scrollback lacks the agent's screen: %v", err)
	}

	// The person edits the agent's file while it is paused.
	if err := os.WriteFile(notes, []byte("agent's notes\nand the person's line\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	e.Model.Reset()
	e.Model.Script(Say("resumed-ok", 22_000))
	if out := e.MustCtx("agents", "resume", "expiry"); !strings.Contains(out, "same conversation") || !strings.Contains(out, "active") {
		t.Fatalf("resume: %s", out)
	}
	e.waitTurn("expiry", time.Time{})
	reqs := e.Model.Requests(KindMain)
	if len(reqs) == 0 {
		t.Fatal("the resumed agent sent nothing")
	}
	text := reqs[0].Text()
	if reqs[0].SessionID != v.Claude.SessionID {
		t.Errorf("resumed in session %s, want %s", reqs[0].SessionID, v.Claude.SessionID)
	}
	if !strings.Contains(text, "first-turn-done") {
		t.Error("the resumed conversation lacks the earlier turn")
	}
	if !strings.Contains(text, "agent-notes.md") || !strings.Contains(text, "also changed by someone else") {
		t.Errorf("the resume prompt does not name the overlap:\n%s", tail(reqs[0].LastUserText(), 1500))
	}
	e.MustCtx("agents", "rm", "expiry")
	if _, _, code := e.Ctx("agents", "show", "expiry"); code != 2 {
		t.Errorf("show of a removed agent exited %d, want 2", code)
	}
}

// tmux kill-server (a reboot): the agent is lost, and resume --lost brings it back in
// its conversation.
func TestAgentLostAndResumed(t *testing.T) {
	e := agentsEnv(t)
	e.Model.Script(Say("ready", 20_000))
	e.MustCtx("agents", "start", "1", "--name", "lost-one")
	e.waitTurn("lost-one", time.Time{})
	cmd := exec.Command("tmux", "-L", "ctx", "kill-server")
	cmd.Env = e.environ(false)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("kill-server: %v %s", err, out)
	}
	if !strings.Contains(e.MustCtx("agents", "list"), "lost") {
		t.Fatal("the agent is not lost after kill-server")
	}
	e.Model.Script(Say("back", 20_500))
	e.MustCtx("agents", "resume", "--lost")
	if v := e.waitTurn("lost-one", time.Time{}); len(v.Claude.PreviousSessionIDs) != 0 {
		t.Errorf("resume --lost started a new conversation: %+v", v.Claude)
	}
}

// A deleted transcript: the agent starts fresh, with the full briefing, and says so.
func TestAgentFreshStartWhenTheTranscriptIsGone(t *testing.T) {
	e := agentsEnv(t)
	e.Model.Script(Say("ready", 20_000))
	e.MustCtx("agents", "start", "1", "--name", "forgetful")
	v := e.waitTurn("forgetful", time.Time{})
	e.MustCtx("agents", "pause", "forgetful")
	if err := os.Remove(e.Transcript(v.Claude.SessionID, "")); err != nil {
		t.Fatal(err)
	}
	e.Model.Reset()
	e.Model.Script(Say("fresh", 20_000))
	if out := e.MustCtx("agents", "resume", "forgetful"); !strings.Contains(out, "fresh conversation") {
		t.Fatalf("resume did not say it started fresh: %s", out)
	}
	w := e.waitTurn("forgetful", time.Time{})
	if w.Claude.SessionID == v.Claude.SessionID || !hasItem(w.Claude.PreviousSessionIDs, v.Claude.SessionID) {
		t.Errorf("session ids after a fresh start: %+v", w.Claude)
	}
	if reqs := e.Model.Requests(KindMain); len(reqs) == 0 || !strings.Contains(reqs[0].Text(), "Resume project 01-checkout-redesign") {
		t.Error("the fresh start lacks the full briefing")
	}
}

// claude crashes: the agent shows as exited with its status, and resumes.
func TestAgentCrashShowsExited(t *testing.T) {
	e := agentsEnv(t)
	e.Model.Script(Say("ready", 20_000))
	e.MustCtx("agents", "start", "1", "--name", "crashy")
	v := e.waitTurn("crashy", time.Time{})
	// SIGKILL to the pane's process: claude itself (env execs it).
	cmd := exec.Command("tmux", "-L", "ctx", "list-panes", "-t", "="+v.Tmux.Session+":", "-F", "#{pane_pid}")
	cmd.Env = e.environ(false)
	out, err := cmd.Output()
	pid, perr := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil || perr != nil {
		t.Fatalf("pane pid: %v %v %q", err, perr, out)
	}
	if b, _ := os.ReadFile(filepath.Join("/proc", itoa(pid), "comm")); strings.TrimSpace(string(b)) != "claude" {
		t.Fatalf("the pane runs %q, not claude", b)
	}
	killPID(pid)
	deadline := time.Now().Add(10 * time.Second)
	var w agentView
	for time.Now().Before(deadline) {
		if w = e.show("crashy"); w.State == "exited" {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	// 137 (SIGKILL) when tmux saw the exit; -1 when the pty closed first (tmux 3.3a
	// with a status line helper still running), never 0.
	if w.State != "exited" || w.Exit == nil || (w.Exit.Status != 137 && w.Exit.Status != -1) {
		t.Fatalf("after a crash: state %s, exit %+v", w.State, w.Exit)
	}
	e.Model.Script(Say("back", 20_000))
	e.MustCtx("agents", "resume", "crashy")
	e.waitTurn("crashy", time.Time{})
}

// A child that ignores SIGHUP and leaves the process group (an MCP server, a
// background job) is gone after pause all the same: it carries the agent's marker.
func TestAgentPauseEndsEscapedChildren(t *testing.T) {
	e := agentsEnv(t)
	// The person allows Bash for this workspace, as people do.
	if err := os.WriteFile(filepath.Join(e.Workspace, ".claude", "settings.local.json"), []byte(`{"permissions":{"allow":["Bash"]}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	e.Model.Script(Call(20_000, Bash("setsid nohup sleep 600 >/dev/null 2>&1 &")), Say("spawned", 21_000))
	// Claude Code's default mode, auto, needs the real service for its checks.
	e.MustCtx("agents", "start", "1", "--name", "spawner", "--permission-mode", "default")
	v := e.waitTurn("spawner", time.Time{})
	before := agents.Marked(v.ID)
	if len(before) < 2 {
		t.Fatalf("the escaped child is not there: %v", before)
	}
	e.MustCtx("agents", "pause", "spawner")
	if left := agents.Marked(v.ID); len(left) > 0 {
		t.Errorf("processes left after pause: %v", left)
	}
}

// A ctx killed at every step of a pause leaves a record the next command finishes:
// paused, processes gone, checkpoint there.
func TestAgentPauseSurvivesACrashAtEveryStep(t *testing.T) {
	for _, step := range []string{"save", "checkpoint", "scrollback", "end", "record"} {
		t.Run(step, func(t *testing.T) {
			e := agentsEnv(t)
			e.Model.Script(Say("ready", 20_000))
			e.MustCtx("agents", "start", "1", "--name", "victim")
			v := e.waitTurn("victim", time.Time{})
			e.Vars["CTX_TEST_CRASH_AT"] = "pause:" + step
			if _, _, code := e.Ctx("agents", "pause", "victim"); code == 0 {
				t.Fatalf("the injected crash did not happen (exit %d)", code)
			}
			delete(e.Vars, "CTX_TEST_CRASH_AT")
			w := e.show("victim")
			if w.State != "paused" {
				t.Fatalf("after a crash at %s the next look shows %s", step, w.State)
			}
			if left := agents.Marked(v.ID); len(left) > 0 {
				t.Errorf("processes left: %v", left)
			}
			if w.Pause == nil || w.Pause.Git == nil || e.Git("show-ref", w.Pause.Git.Ref) == "" {
				t.Errorf("no checkpoint after recovery: %+v", w.Pause)
			}
			e.Model.Script(Say("back", 20_000))
			e.MustCtx("agents", "resume", "victim")
			e.waitTurn("victim", time.Time{})
		})
	}
}

// Bad input: one line, the documented exit code, nothing changed.
func TestAgentBadInput(t *testing.T) {
	e := agentsEnv(t)
	e.Model.Script(Say("ready", 20_000))
	e.MustCtx("agents", "start", "1", "--name", "solo")
	e.waitTurn("solo", time.Time{})
	cases := []struct {
		args []string
		code int
	}{
		{[]string{"agents", "show", "nobody"}, 2},
		{[]string{"agents", "pause", "nobody"}, 2},
		{[]string{"agents", "resume", "solo"}, 2}, // running: nothing to resume
		{[]string{"agents", "start", "99"}, 2},
		{[]string{"agents", "send", "solo", "two\nlines"}, 2},
		{[]string{"agents", "pause"}, 2},
	}
	for _, c := range cases {
		_, stderr, code := e.Ctx(c.args...)
		if code != c.code || strings.Count(strings.TrimSpace(stderr), "\n") > 0 || !strings.HasPrefix(stderr, "ctx: ") {
			t.Errorf("ctx %v: exit %d (want %d), stderr %q", c.args, code, c.code, stderr)
		}
	}
	first := e.MustCtx("agents", "pause", "solo")
	// A retry of a pause that completed (its answer lost with a connection) answers as
	// the first time did.
	if again, _, code := e.Ctx("agents", "pause", "solo"); code != 0 || again != first {
		t.Errorf("pausing a paused agent again: exit %d, %q; want 0 and %q", code, again, first)
	}
	// Sending to a paused agent is refused by its state, as pausing an exited one is.
	if _, errs, code := e.Ctx("agents", "send", "solo", "hi"); code != 2 || !strings.Contains(errs, "resume it first") {
		t.Errorf("send to a paused agent: exit %d, %q; want 2 and how to go on", code, errs)
	}
}

func hasItem(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func itoa(n int) string { return strconv.Itoa(n) }

// An agent started with --auto-approve gets its Bash permission requests answered by
// ctx's guard: a harmless command runs with no one at the keyboard, and the decision
// is in the audit log.
func TestAgentAutoApprove(t *testing.T) {
	e := agentsEnv(t)
	marker := filepath.Join(e.Workspace, "approved-by-ctx.txt")
	e.Model.Script(Call(20_000, Bash("touch "+marker)), Say("touched", 21_000))
	e.MustCtx("agents", "start", "1", "--name", "auto", "--auto-approve", "--permission-mode", "default")
	e.waitTurn("auto", time.Time{})
	if _, err := os.Stat(marker); err != nil {
		t.Fatalf("the approved command did not run: %v", err)
	}
	logs, _ := filepath.Glob(filepath.Join(e.Workspace, ".ctx", "state", "sessions", "*", "audit.jsonl"))
	if len(logs) == 0 {
		t.Fatal("no audit log")
	}
	b, _ := os.ReadFile(logs[0])
	if !strings.Contains(string(b), `"allow"`) {
		t.Errorf("the audit log lacks the allow decision:\n%s", b)
	}
}

// --idle-for pauses only the agents nobody has used for that long: an agent that just
// finished its turn stays, and once it has been idle long enough it is paused, with
// "idle" as the reason.
func TestAgentPauseIdleFor(t *testing.T) {
	e := agentsEnv(t)
	e.Model.Script(Say("idle-turn-done", 20_000))
	e.MustCtx("agents", "start", "1", "--name", "sleepy")
	e.waitTurn("sleepy", time.Time{})

	if out := strings.TrimSpace(e.MustCtx("agents", "pause", "--idle-for", "1h", "--json")); out != "[]" {
		t.Fatalf("--idle-for 1h paused an agent idle for seconds: %s", out)
	}
	if v := e.show("sleepy"); v.State != "active" {
		t.Fatalf("after --idle-for 1h: %s", v.State)
	}
	time.Sleep(1500 * time.Millisecond)
	var paused []struct {
		State string `json:"state"`
		Pause *struct {
			Reason string `json:"reason"`
		} `json:"pause"`
	}
	if err := json.Unmarshal([]byte(e.MustCtx("agents", "pause", "--idle-for", "1s", "--json")), &paused); err != nil {
		t.Fatal(err)
	}
	if len(paused) != 1 || paused[0].State != "paused" || paused[0].Pause == nil || paused[0].Pause.Reason != "idle" {
		t.Fatalf("--idle-for 1s: %+v", paused)
	}
	if _, stderr, code := e.Ctx("agents", "pause", "--idle-for", "1s", "sleepy"); code != 2 || !strings.Contains(stderr, "--idle-for") {
		t.Errorf("--idle-for with a name: exit %d, %s", code, stderr)
	}
}

// --git stash with the real client: the agent's file is put away while it is paused
// (a clean tree for the person), and resume brings it back before the conversation
// goes on; a conflicting change made meanwhile keeps the agent paused (exit 3) with
// the stash kept.
func TestAgentPauseGitStash(t *testing.T) {
	e := agentsEnv(t)
	notes := filepath.Join(e.Workspace, ProjectPath("03-working/stash-notes.md"))
	e.Model.Script(Call(20_000, Write(notes, "the agent's notes\n")), Say("stash-turn-done", 21_000))
	e.MustCtx("agents", "start", "1", "--name", "stasher")
	e.waitTurn("stasher", time.Time{})

	e.MustCtx("agents", "pause", "stasher", "--git", "stash")
	if _, err := os.Stat(notes); !os.IsNotExist(err) {
		t.Fatalf("the agent's new file is still in the tree after --git stash: %v", err)
	}
	if list := e.Git("stash", "list"); !strings.Contains(list, "ctx-pause ") {
		t.Fatalf("no named stash: %q", list)
	}

	e.Model.Reset()
	e.Model.Script(Say("stash-resumed", 22_000))
	e.MustCtx("agents", "resume", "stasher")
	e.waitTurn("stasher", time.Time{})
	if b, err := os.ReadFile(notes); err != nil || string(b) != "the agent's notes\n" {
		t.Fatalf("resume did not bring the stashed file back: %q, %v", b, err)
	}
	if list := e.Git("stash", "list"); strings.Contains(list, "ctx-pause ") {
		t.Errorf("the applied stash was not dropped: %q", list)
	}

	// Again, and this time the person commits the same file differently meanwhile.
	e.MustCtx("agents", "pause", "stasher", "--git", "stash")
	if err := os.WriteFile(notes, []byte("the person's version\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	e.Git("add", "-A")
	e.Git("commit", "-qm", "the person's notes")
	_, stderr, code := e.Ctx("agents", "resume", "stasher")
	if code != 3 || !strings.Contains(stderr, "conflicts in "+ProjectPath("03-working/stash-notes.md")+")") {
		t.Fatalf("a conflicting stash: exit %d, %s", code, stderr)
	}
	if v := e.show("stasher"); v.State != "paused" {
		t.Errorf("after the conflict the agent is %s, want paused", v.State)
	}
	if list := e.Git("stash", "list"); !strings.Contains(list, "ctx-pause ") {
		t.Errorf("the conflicting stash was not kept: %q", list)
	}
	e.MustCtx("agents", "rm", "stasher")
}

// A commit made while the agent is paused: the resumed conversation is told HEAD moved,
// and which files changed with it.
func TestAgentResumeAfterHeadMoved(t *testing.T) {
	e := agentsEnv(t)
	e.Model.Script(Say("before-the-commit", 20_000))
	e.MustCtx("agents", "start", "1", "--name", "mover")
	v := e.waitTurn("mover", time.Time{})
	e.MustCtx("agents", "pause", "mover")

	other := filepath.Join(e.Workspace, "person.txt")
	if err := os.WriteFile(other, []byte("the person's work\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	e.Git("add", "person.txt")
	e.Git("commit", "-qm", "the person's commit while the agent was paused")
	head := strings.TrimSpace(e.Git("rev-parse", "HEAD"))

	e.Model.Reset()
	e.Model.Script(Say("after-the-commit", 20_000))
	e.MustCtx("agents", "resume", "mover")
	e.waitTurn("mover", time.Time{})
	reqs := e.Model.Requests(KindMain)
	if len(reqs) == 0 || reqs[0].SessionID != v.Claude.SessionID {
		t.Fatalf("the resumed agent did not continue its conversation: %d requests", len(reqs))
	}
	prompt := reqs[0].LastUserText()
	if !strings.Contains(prompt, "HEAD moved") || !strings.Contains(prompt, head[:7]) || !strings.Contains(prompt, "person.txt") {
		t.Errorf("the resume prompt does not say HEAD moved to %s with person.txt:\n%s", head[:7], tail(prompt, 1500))
	}
	e.MustCtx("agents", "rm", "mover")
}

// A ctx killed at each step of a resume leaves an agent the next command settles: back
// to paused when claude never started, active when it did; either way resumable or
// running in its own conversation.
func TestAgentResumeSurvivesACrashAtEveryStep(t *testing.T) {
	for _, step := range []string{"launch", "confirm"} {
		t.Run(step, func(t *testing.T) {
			e := agentsEnv(t)
			e.Model.Script(Say("ready", 20_000))
			e.MustCtx("agents", "start", "1", "--name", "phoenix")
			v := e.waitTurn("phoenix", time.Time{})
			e.MustCtx("agents", "pause", "phoenix")

			e.Model.Script(Say("back-after-crash", 20_000))
			e.Vars["CTX_TEST_CRASH_AT"] = "resume:" + step
			if _, _, code := e.Ctx("agents", "resume", "phoenix"); code == 0 {
				t.Fatalf("the injected crash did not happen (exit %d)", code)
			}
			delete(e.Vars, "CTX_TEST_CRASH_AT")
			w := e.show("phoenix")
			switch step {
			case "launch": // claude never started: the agent is paused again, and resumes
				if w.State != "paused" {
					t.Fatalf("after a crash before launch the next look shows %s, want paused", w.State)
				}
				e.MustCtx("agents", "resume", "phoenix")
			default: // claude started: the agent comes up in its conversation
				if w.State != "active" && w.State != "resuming" {
					t.Fatalf("after a crash after launch the next look shows %s", w.State)
				}
			}
			if got := e.waitTurn("phoenix", time.Time{}); got.Claude.SessionID != v.Claude.SessionID {
				t.Errorf("after the crash the agent runs session %s, want its own %s", got.Claude.SessionID, v.Claude.SessionID)
			}
			e.MustCtx("agents", "rm", "phoenix")
		})
	}
}

// --worktree with the real client: the agent works on its own branch in a worktree
// (its file lands there, not in the main checkout); the worktree removed by hand while
// the agent is paused comes back on resume, in the same conversation; rm
// --remove-worktree deletes it only once it holds no work.
func TestAgentWorktree(t *testing.T) {
	e := agentsEnv(t)
	wtRoot := filepath.Join(e.Workspace, ".ctx", "worktrees", "brancher")
	inWT := filepath.Join(wtRoot, ProjectPath("03-working/branch-notes.md"))
	e.Model.Script(Call(20_000, Write(inWT, "on the branch\n")), Say("branch-turn-done", 21_000))
	e.MustCtx("agents", "start", "1", "--name", "brancher", "--worktree", "ctx/brancher", "--permission-mode", "acceptEdits")
	v := e.waitTurn("brancher", time.Time{})
	if b, err := os.ReadFile(inWT); err != nil || string(b) != "on the branch\n" {
		t.Fatalf("the agent's file is not in its worktree: %q, %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(e.Workspace, ProjectPath("03-working/branch-notes.md"))); !os.IsNotExist(err) {
		t.Errorf("the agent's file reached the main checkout: %v", err)
	}
	if got := strings.TrimSpace(e.Git("-C", wtRoot, "branch", "--show-current")); got != "ctx/brancher" {
		t.Errorf("the worktree is on %q", got)
	}

	e.MustCtx("agents", "pause", "brancher")
	e.Git("-C", wtRoot, "add", "-A")
	e.Git("-C", wtRoot, "commit", "-qm", "the agent's notes, committed by the person")
	if err := os.RemoveAll(wtRoot); err != nil {
		t.Fatal(err)
	}
	e.Model.Reset()
	e.Model.Script(Say("back-on-the-branch", 20_000))
	e.MustCtx("agents", "resume", "brancher")
	w := e.waitTurn("brancher", time.Time{})
	if w.Claude.SessionID != v.Claude.SessionID {
		t.Errorf("resumed in session %s, want %s", w.Claude.SessionID, v.Claude.SessionID)
	}
	if _, err := os.Stat(inWT); err != nil {
		t.Errorf("the re-added worktree lacks the branch's committed file: %v", err)
	}

	out := e.MustCtx("agents", "rm", "brancher", "--remove-worktree")
	if strings.Contains(out, "stays") {
		t.Errorf("rm --remove-worktree kept a clean worktree: %s", out)
	}
	if _, err := os.Stat(wtRoot); !os.IsNotExist(err) {
		t.Errorf("the worktree is still there: %v", err)
	}
	if _, stderr, code := e.Ctx("agents", "start", "1", "--worktree", "no..dots"); code != 2 || !strings.Contains(stderr, "branch name") {
		t.Errorf("a bad branch: exit %d, %s", code, stderr)
	}
}

// An agent started with --no-wait that no ctx command looks at before its first turn
// ends: the newest hook event in its status is a Stop, not its SessionStart. Any hook
// of its session after the launch proves the start, so it can be paused at once; and
// its first request hears of its own project, not of the one last active here.
func TestAgentStartedWithoutWaitingIsProvenByAnyHook(t *testing.T) {
	e := agentsEnv(t)
	e.Model.Script(Say("first-turn-done", 2_000))
	out := e.MustCtx("agents", "start", "1", "--name", "nowait", "--no-wait", "--json")
	var started struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal([]byte(out), &started); err != nil || started.ID == "" {
		t.Fatalf("start --json: %v: %s", err, out)
	}
	status := filepath.Join(e.Workspace, ".ctx", "state", "agents", started.ID, "status.json")
	deadline := time.Now().Add(30 * time.Second)
	for {
		b, _ := os.ReadFile(status) // read directly: no ctx command may reconcile first
		var st struct {
			Event string `json:"event"`
		}
		if json.Unmarshal(b, &st) == nil && st.Event == "Stop" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the agent's first turn never ended; status: %s", b)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if stdout, stderr, code := e.Ctx("agents", "pause", "nowait"); code != 0 {
		t.Fatalf("pause after an unwatched start: exit %d: %s%s", code, stdout, stderr)
	}
	reqs := e.Model.Requests(KindMain)
	if len(reqs) == 0 {
		t.Fatal("no request reached the model")
	}
	if first := reqs[0].Text(); strings.Contains(first, "last active project here") || !strings.Contains(first, "this session works on project 01-checkout-redesign") {
		t.Errorf("the agent's first request is told of another project than its own:\n%.2000s", first)
	}
}

// ctx not on the PATH the agent starts with: its hooks would find no ctx and do
// nothing, and the start would wait 20 s for a SessionStart that never comes, then
// guess at a dialog. Start fails at once, says why, and leaves no agent behind.
func TestAgentStartFailsAtOnceWithoutCtxOnThePath(t *testing.T) {
	e := agentsEnv(t)
	cmd := exec.Command(filepath.Join(e.CtxDir, "ctx"), "agents", "start", "1", "--name", "offpath")
	cmd.Dir = e.Workspace
	cmd.Env = e.environ(false) // claude, tmux and git on the PATH; ctx not
	start := time.Now()
	out, err := cmd.CombinedOutput()
	if code := exitCode(err); code != 2 || !strings.Contains(string(out), "ctx is not on the PATH the agent starts with") {
		t.Fatalf("start with ctx off the PATH: exit %d: %s", code, out)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("start took %v to fail", d)
	}
	if list := e.MustCtx("agents", "list", "--json"); strings.Contains(list, "offpath") {
		t.Errorf("a failed start left an agent: %s", list)
	}
}
