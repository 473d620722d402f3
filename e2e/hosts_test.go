//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// remoteView is what the tests read of an agent in `ctx agents list --json`.
type remoteView struct {
	ID     string `json:"id"`
	Name   string `json:"name"`
	Host   string `json:"host"`
	State  string `json:"state"`
	Claude struct {
		SessionID string `json:"session_id"`
	} `json:"claude"`
	Activity struct {
		Event string `json:"event"`
	} `json:"activity"`
	Pause *struct {
		RSSFreedKB int64 `json:"rss_freed_kb"`
	} `json:"pause"`
}

// fleet lists every host's agents, as JSON, and the command's exit code and stderr.
func (e *Env) fleet() ([]remoteView, string, int) {
	e.T.Helper()
	out, errs, code := e.Ctx("agents", "list", "--json")
	var vs []remoteView
	if err := json.Unmarshal([]byte(out), &vs); err != nil {
		e.T.Fatalf("agents list --json: %v\n%s\n%s", err, out, errs)
	}
	return vs, errs, code
}

func (e *Env) fleetAgent(name string) remoteView {
	e.T.Helper()
	vs, errs, _ := e.fleet()
	for _, v := range vs {
		if v.Name == name {
			return v
		}
	}
	e.T.Fatalf("no agent %s in the list (%s)", name, errs)
	return remoteView{}
}

// waitFleet polls the list until ok holds for the agent.
func (e *Env) waitFleet(name, what string, ok func(remoteView) bool) remoteView {
	e.T.Helper()
	deadline := time.Now().Add(40 * time.Second)
	for {
		v := e.fleetAgent(name)
		if ok(v) {
			return v
		}
		if time.Now().After(deadline) {
			e.T.Fatalf("agent %s: %s did not happen: %+v", name, what, v)
		}
		time.Sleep(300 * time.Millisecond)
	}
}

// claudeOf lists the live claude processes of a user.
func claudeOf(user string) string {
	out, _ := exec.Command("pgrep", "-u", user, "-a", "-f", "claude").Output()
	var keep []string
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		// A zombie holds no memory: it waits for a parent that may be gone (pid 1 of a
		// container need not reap).
		if l != "" && !strings.Contains(l, "pgrep") && !strings.Contains(l, "<defunct>") {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n")
}

// An agent on another machine, from this one: the host checked, the agent started
// there, listed here with its host's name, paused (its processes there gone, memory
// freed), resumed in the same conversation; the ssh login that started it can end
// without ending it.
func TestRemoteAgentStartPauseResume(t *testing.T) {
	e := New(t, Options{Git: true})
	r := e.NewRemote("build")
	out, errs, code := e.Ctx("hosts", "add", "build", "--remote-workspace", r.Workspace)
	if code != 0 || !strings.Contains(out, "build: reachable") || !strings.Contains(out, "a clone of this repository") {
		t.Fatalf("hosts add: exit %d\n%s\n%s", code, out, errs)
	}
	e.Model.Script(Say("remote-ready", 20_000))
	out, errs, code = e.Ctx("agents", "start", "1", "--host", "build", "--name", "far")
	if code != 0 || !strings.Contains(out, "on host build: active") || !strings.Contains(out, "attach: ctx agents open far --host build") {
		t.Fatalf("start on build: exit %d\n%s\n%s", code, out, errs)
	}
	v := e.waitFleet("far", "a first turn", func(v remoteView) bool { return v.State == "active" && v.Activity.Event == "Stop" })
	if text := e.MustCtx("agents", "show", "far", "--host", "build"); !strings.Contains(text, "on build") || !strings.Contains(text, "attach     ctx agents open far --host build") {
		t.Errorf("show on the host, rendered here:\n%s", text)
	}
	// open without a terminal prints the command that attaches over ssh -t.
	if text := e.MustCtx("agents", "open", "far", "--host", "build"); !strings.Contains(text, " -t -- build ") || !strings.Contains(text, "agents open far --host local") {
		t.Errorf("open on the host without a terminal:\n%s", text)
	}
	if v.Host != "build" {
		t.Errorf("the agent's host is %q, want build", v.Host)
	}
	if claudeOf(r.User) == "" {
		t.Fatalf("no claude runs as %s", r.User)
	}
	if text := e.MustCtx("agents", "list"); !strings.Contains(text, "build") || !strings.Contains(text, "far") {
		t.Errorf("the list does not name the host:\n%s", text)
	}
	// The login that started it ends: the agent runs on.
	cmd := exec.Command(e.Root+"/claude-bin/ssh", "-o", "ControlPath="+e.Runtime+"/ctx/ssh/%C", "-O", "exit", "build")
	cmd.Env = e.environ(true)
	_ = cmd.Run()
	_ = exec.Command("pkill", "-u", r.User, "-x", "sshd").Run() // every login of the user ends
	time.Sleep(time.Second)
	if v := e.fleetAgent("far"); v.State != "active" || claudeOf(r.User) == "" {
		t.Fatalf("after the logins ended the agent is %s, claude %q", v.State, claudeOf(r.User))
	}

	// The connection breaks in the middle of the pause: the master connection and
	// every login of the user there are killed. A retry finds nothing half done: it
	// answers as a pause does (exit 0) and the agent is paused, once.
	pause := exec.Command(e.CtxDir+"/ctx", "agents", "pause", "far", "--host", "build")
	pause.Dir, pause.Env = e.Workspace, e.environ(true)
	if err := pause.Start(); err != nil {
		t.Fatal(err)
	}
	// The pause is under way on the host once its op is in the record there.
	deadline := time.Now().Add(10 * time.Second)
	for {
		b, _ := os.ReadFile(filepath.Join(r.Workspace, ".ctx/state/agents", v.ID, "agent.json"))
		if strings.Contains(string(b), `"kind": "pause"`) || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	_ = exec.Command("pkill", "-KILL", "-u", r.User, "-x", "sshd").Run()
	_ = exec.Command("pkill", "-KILL", "-f", "ControlPersist=60.*build").Run()
	if err := pause.Wait(); err == nil {
		t.Logf("the pause's answer came back before the connection broke")
	} else {
		t.Logf("the interrupted pause: %v", err)
	}
	out, errs, code = e.Ctx("agents", "pause", "far", "--host", "build")
	if code != 0 || !strings.Contains(out, "paused") {
		t.Fatalf("the retried pause: exit %d\n%s\n%s", code, out, errs)
	}
	p := e.fleetAgent("far")
	if p.State != "paused" || p.Pause == nil || p.Pause.RSSFreedKB <= 0 {
		t.Errorf("after pause: %+v", p)
	}
	if left := claudeOf(r.User); left != "" {
		t.Errorf("claude still runs on the host after pause:\n%s", left)
	}
	e.Model.Script(Say("remote-back", 21_000))
	since := time.Now()
	if out, errs, code := e.Ctx("agents", "resume", "far", "--host", "build"); code != 0 {
		t.Fatalf("resume on build: exit %d\n%s\n%s", code, out, errs)
	}
	back := e.waitFleet("far", "the resumed turn", func(v remoteView) bool { return v.State == "active" && v.Activity.Event == "Stop" })
	if back.Claude.SessionID != v.Claude.SessionID {
		t.Errorf("resumed in session %s, want the same conversation %s", back.Claude.SessionID, v.Claude.SessionID)
	}
	_ = since
	// show and bad input, through the host.
	if out := e.MustCtx("agents", "show", "far", "--host", "build", "--json"); !strings.Contains(out, `"host":"build"`) {
		t.Errorf("show --json does not name the host:\n%.400s", out)
	}
	if _, errs, code := e.Ctx("agents", "pause", "nobody", "--host", "build"); code != 2 || !strings.Contains(errs, "host build") {
		t.Errorf("an unknown agent on the host: exit %d, %q; want 2", code, errs)
	}
	if _, errs, code := e.Ctx("agents", "list", "--host", "nowhere"); code != 2 || !strings.Contains(errs, "no host") {
		t.Errorf("an unknown host: exit %d, %q; want 2", code, errs)
	}
	// pause --all covers every host.
	var paused []remoteView
	if out := e.MustCtx("agents", "pause", "--all", "--json"); json.Unmarshal([]byte(out), &paused) != nil || len(paused) != 1 ||
		paused[0].Name != "far" || paused[0].Host != "build" || paused[0].State != "paused" {
		t.Errorf("pause --all over the hosts: %s", out)
	}
	if left := claudeOf(r.User); left != "" {
		t.Errorf("claude still runs on the host after pause --all:\n%s", left)
	}
}

// One host refuses connections and another has gone silent: the list still answers
// with the agents of the hosts that answer, a line for each host that does not, exit
// 3, within the connect timeout.
func TestRemoteHostsDownDoNotHoldTheList(t *testing.T) {
	e := New(t, Options{Git: true})
	e.seedClaudeJSON()
	r := e.NewRemote("build")
	e.MustCtx("hosts", "add", "build", "--remote-workspace", r.Workspace)
	e.addSSHHost("down", fmt.Sprintf("  HostName 127.0.0.1\n  Port %d\n  User nobody\n", freePort(t)))
	e.addSSHHost("hole", fmt.Sprintf("  HostName 127.0.0.1\n  Port %d\n  User nobody\n", blackHole(t)))
	e.MustCtx("hosts", "add", "down", "--no-check", "--remote-workspace", "/srv/ws")
	e.MustCtx("hosts", "add", "hole", "--no-check", "--remote-workspace", "/srv/ws")
	e.Model.Script(Say("here", 20_000), Say("there", 20_000))
	e.MustCtx("agents", "start", "1", "--name", "near")
	e.MustCtx("agents", "start", "1", "--host", "build", "--name", "far")
	start := time.Now()
	vs, errs, code := e.fleet()
	took := time.Since(start)
	names := map[string]string{}
	for _, v := range vs {
		names[v.Name] = v.Host
	}
	if names["near"] != "local" || names["far"] != "build" {
		t.Errorf("the hosts that answer: %v", names)
	}
	if code != 3 || !strings.Contains(errs, "host down: unreachable") || !strings.Contains(errs, "host hole: unreachable") {
		t.Errorf("exit %d, stderr %q; want 3 and a line for each host down", code, errs)
	}
	if took > 9*time.Second {
		t.Errorf("the list took %s with a silent host (connect timeout 5 s)", took)
	}
	t.Logf("list over 3 hosts, 2 down: %s", took)
}

// A host without ctx: `hosts add --install` copies this one there with scp, records its
// path, and the host checks clean; an agent then runs there.
func TestRemoteHostAddInstallsCtx(t *testing.T) {
	e := New(t, Options{Git: true})
	r := e.NewRemote("bare")
	if err := os.Remove(filepath.Join(r.Home, "bin", "ctx")); err != nil {
		t.Fatal(err)
	}
	out, errs, code := e.Ctx("hosts", "add", "bare", "--remote-workspace", r.Workspace, "--no-check")
	if code != 0 {
		t.Fatalf("add: %d %s %s", code, out, errs)
	}
	if out, _, code := e.Ctx("hosts", "check", "bare"); code != 1 || !strings.Contains(out, "ctx not found") {
		t.Errorf("check of a host without ctx: exit %d\n%s", code, out)
	}
	e.MustCtx("hosts", "rm", "bare")
	out, errs, code = e.Ctx("hosts", "add", "bare", "--remote-workspace", r.Workspace, "--install")
	if code != 0 || !strings.Contains(out, "installed ctx on bare: "+r.Home+"/.local/bin/ctx") {
		t.Fatalf("add --install: exit %d\n%s\n%s", code, out, errs)
	}
	if got, err := e.RemoteRun(r, r.Home+"/.local/bin/ctx --version"); err != nil || !strings.HasPrefix(got, "ctx ") {
		t.Errorf("the installed ctx: %q %v", got, err)
	}
	var hs []struct {
		Name string `json:"name"`
		Ctx  string `json:"ctx"`
	}
	if err := json.Unmarshal([]byte(e.MustCtx("hosts", "list", "--json")), &hs); err != nil || len(hs) != 1 || hs[0].Ctx != r.Home+"/.local/bin/ctx" {
		t.Errorf("the host's ctx is not recorded: %+v %v", hs, err)
	}
}

// The dashboard shows every host's agents, streamed over one ssh connection each: the
// remote agent's row names its host, Pause pressed on the page pauses it there, and when
// the host goes away its row stays, greyed, marked unreachable.
func TestRemoteAgentsOnTheDashboard(t *testing.T) {
	chrome := chromium(t)
	e := New(t, Options{Git: true})
	e.seedClaudeJSON()
	r := e.NewRemote("build")
	e.MustCtx("hosts", "add", "build", "--remote-workspace", r.Workspace)
	e.Model.Script(Say("near-ready", 20_000), Say("far-ready", 20_000))
	e.MustCtx("agents", "start", "1", "--name", "near")
	e.MustCtx("agents", "start", "1", "--host", "build", "--name", "far")
	far := e.waitFleet("far", "a first turn", func(v remoteView) bool { return v.State == "active" && v.Activity.Event == "Stop" })
	near := e.waitFleet("near", "a first turn", func(v remoteView) bool { return v.State == "active" && v.Activity.Event == "Stop" })

	d := startDashboard(t, e, chrome)
	farRow := fmt.Sprintf(`li.row[data-id=%q][data-host="build"]`, far.ID)
	d.do(t, 20*time.Second, "log in; both hosts' rows", chromedp.Navigate(d.login), wait(`#live.on`),
		wait(rowIn("idle", near.ID)), wait(`section[data-group="idle"] `+farRow))
	if host := get(t, d, "host label", chromedp.Text(css(farRow+` [data-f=host]`))); host != "build" {
		t.Errorf("the remote row's host label is %q", host)
	}
	d.shot(t, "fleet")
	// The remote agent's page: its screen and how to attach, asked of its host.
	d.do(t, 20*time.Second, "the remote agent's page", click(farRow+` a.name`), wait(`#screen`))
	if screen := get(t, d, "screen", chromedp.Text(css(`#screen`))); !strings.Contains(screen, "far-ready") {
		t.Errorf("the remote agent's screen:\n%s", screen)
	}
	if hint := get(t, d, "attach", chromedp.Text(css(`p.hint code`))); hint != "ctx agents open far --host build" {
		t.Errorf("the attach hint of a remote agent: %q", hint)
	}
	d.do(t, 20*time.Second, "back to the list", chromedp.Navigate(d.base+"/"), wait(`#live.on`), wait(farRow))
	d.do(t, 60*time.Second, "pause on the host from the page",
		click(farRow+` button[data-act=pause]`), wait(`section[data-group="paused"] `+farRow))
	if v := e.fleetAgent("far"); v.State != "paused" || claudeOf(r.User) != "" {
		t.Errorf("after Pause on the page: %s, claude there %q", v.State, claudeOf(r.User))
	}
	// The host goes away: the row stays, greyed.
	r.Stop()
	d.do(t, 30*time.Second, "the host unreachable", wait(farRow+`[data-unreachable]`))
	d.shot(t, "fleet-unreachable")
}

// An agent on its own branch moves to another machine and back, its work with it: the
// file it wrote is in its worktree there, it runs there (and nowhere else), the
// branch and checkpoint stay where it left; then back here. An agent working in the
// checkout itself is refused, with the command that gives it a branch.
func TestRemoteAgentMovesThereAndBack(t *testing.T) {
	e := New(t, Options{Git: true})
	e.seedClaudeJSON()
	r := e.NewRemote("build")
	e.MustCtx("hosts", "add", "build", "--remote-workspace", r.Workspace)
	wt := filepath.Join(e.Workspace, ".ctx", "worktrees", "mover")
	e.Model.Script(Call(20_000, Write(filepath.Join(wt, "moved-work.md"), "work in progress\n")), Say("mover-ready", 21_000))
	e.MustCtx("agents", "start", "1", "--name", "mover", "--worktree", "ctx/mover", "--auto-approve", "--permission-mode", "default")
	e.waitFleet("mover", "a first turn", func(v remoteView) bool { return v.State == "active" && v.Activity.Event == "Stop" })

	out, errs, code := e.Ctx("agents", "move", "mover", "--to", "build")
	if code != 0 || !strings.Contains(out, "moved mover from local to build") {
		t.Fatalf("move to build: exit %d\n%s\n%s", code, out, errs)
	}
	there := e.waitFleet("mover", "running on build", func(v remoteView) bool { return v.Host == "build" && v.State == "active" })
	vs, _, _ := e.fleet()
	for _, v := range vs {
		if v.Name == "mover" && v.Host != "build" {
			t.Errorf("the agent is also on %s (%s)", v.Host, v.State)
		}
	}
	if b, err := os.ReadFile(filepath.Join(r.Workspace, ".ctx", "worktrees", "mover", "moved-work.md")); err != nil || string(b) != "work in progress\n" {
		t.Errorf("the work did not travel: %q %v", b, err)
	}
	if e.Git("branch", "--list", "ctx/mover") == "" || e.Git("for-each-ref", "refs/ctx/agents/") == "" {
		t.Errorf("the branch or the checkpoint is gone here")
	}
	if _, err := os.Stat(wt); !os.IsNotExist(err) {
		t.Errorf("the clean worktree here was kept: %v", err)
	}
	if text := e.MustCtx("agents", "show", "mover", "--host", "build", "--json"); !strings.Contains(text, `"from":"local"`) {
		t.Errorf("the record there does not say where it came from:\n%.600s", text)
	}

	out, errs, code = e.Ctx("agents", "move", "mover", "--host", "build", "--to", "local")
	if code != 0 || !strings.Contains(out, "moved mover from build to local") {
		t.Fatalf("move back: exit %d\n%s\n%s", code, out, errs)
	}
	back := e.waitFleet("mover", "running here", func(v remoteView) bool { return v.Host == "local" && v.State == "active" })
	if back.ID == there.ID {
		t.Errorf("the same record on both machines")
	}
	if b, err := os.ReadFile(filepath.Join(wt, "moved-work.md")); err != nil || string(b) != "work in progress\n" {
		t.Errorf("the work did not come back: %q %v", b, err)
	}
	if left := claudeOf(r.User); left != "" {
		t.Errorf("claude still runs there:\n%s", left)
	}

	e.Model.Script(Say("plain-ready", 20_000))
	e.MustCtx("agents", "start", "1", "--name", "plain")
	if _, errs, code := e.Ctx("agents", "move", "plain", "--to", "build"); code != 2 || !strings.Contains(errs, "--worktree") {
		t.Errorf("moving an agent without a branch of its own: exit %d, %q; want 2", code, errs)
	}
}

// A move killed at each step: the agent runs or resumes on one machine only (marked
// as moving, it does not resume where it was), and the same move run again finishes.
func TestRemoteMoveKilledAtEachStep(t *testing.T) {
	e := New(t, Options{Git: true})
	e.seedClaudeJSON()
	r := e.NewRemote("build")
	e.MustCtx("hosts", "add", "build", "--remote-workspace", r.Workspace)
	for _, step := range []string{"marked", "refs", "started"} {
		t.Run(step, func(t *testing.T) {
			name := "mv-" + step
			e.Model.Script(Say(name+"-ready", 20_000))
			e.MustCtx("agents", "start", "1", "--name", name, "--worktree", "ctx/"+name)
			e.waitFleet(name, "a first turn", func(v remoteView) bool { return v.State == "active" && v.Activity.Event == "Stop" })
			e.Vars["CTX_TEST_CRASH_AT"] = "move:" + step
			if _, _, code := e.Ctx("agents", "move", name, "--to", "build"); code == 0 {
				t.Fatalf("the injected crash did not happen")
			}
			delete(e.Vars, "CTX_TEST_CRASH_AT")
			// Where it was, it is marked: it does not resume there.
			if _, errs, code := e.Ctx("agents", "resume", name); code != 3 || !strings.Contains(errs, "moving to host build") {
				t.Errorf("resume where it was during the move: exit %d, %q; want 3", code, errs)
			}
			running := 0
			vs, _, _ := e.fleet()
			for _, v := range vs {
				if v.Name == name && v.State == "active" {
					running++
				}
			}
			if running > 1 {
				t.Errorf("the agent runs on %d machines", running)
			}
			if out, errs, code := e.Ctx("agents", "move", name, "--to", "build"); code != 0 {
				t.Fatalf("the move run again: exit %d\n%s\n%s", code, out, errs)
			}
			v := e.waitFleet(name, "running on build", func(v remoteView) bool { return v.Host == "build" && v.State == "active" })
			vs, _, _ = e.fleet()
			for _, w := range vs {
				if w.Name == name && w.Host != "build" {
					t.Errorf("after the move the agent is also on %s", w.Host)
				}
			}
			e.MustCtx("agents", "rm", v.ID, "--host", "build", "--force")
		})
	}
}
