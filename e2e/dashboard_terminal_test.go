//go:build e2e

package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// The agent page as a person lives in it, with the real Claude Code in tmux and a
// real browser: its terminal is drawn with colours and follows new output without a
// reload; a prompt typed in the page reaches the model; a permission prompt is
// answered from the page, and the tool runs after Allow and not after Deny; each
// answer is in the session's audit log.
func TestDashboardTerminalAndPermissions(t *testing.T) {
	chrome := chromium(t)
	e := agentsEnv(t)
	e.Model.Script(Say("typist is ready", 20_000))
	e.MustCtx("agents", "start", "1", "--name", "typist", "--permission-mode", "default")
	v := e.waitTurn("typist", time.Time{})
	var detail struct {
		Cwd string `json:"cwd"`
	}
	if err := json.Unmarshal([]byte(e.MustCtx("agents", "show", "typist", "--json")), &detail); err != nil {
		t.Fatal(err)
	}

	d := startDashboard(t, e, chrome)
	d.do(t, 20*time.Second, "log in", chromedp.Navigate(d.login), wait(`#live.on`))
	page := d.base + "/agents/" + v.ID
	screenHas := func(text string) string {
		return `[...document.querySelectorAll('#screen .ln')].some(l => l.textContent.includes(` + jsString(text) + `))`
	}
	d.do(t, 20*time.Second, "the terminal", chromedp.EmulateViewport(1280, 900), chromedp.Navigate(page), wait(`#live.on`))
	waitJS(t, d, 10*time.Second, "the live terminal shows the reply", screenHas("typist is ready"))
	if !get(t, d, "colours", chromedp.Evaluate[bool](`[...document.querySelectorAll('#screen span')].some(s => s.style.color !== '')`)) {
		t.Error("the terminal has no colours")
	}
	if state := get(t, d, "terminal state", chromedp.Text(css(`#term-state`))); state != "live" {
		t.Errorf("the terminal says %q, want live", state)
	}
	get(t, d, "set marker", chromedp.Evaluate[bool](`window.noReload = true`))

	// A prompt typed in the page's key bar reaches the model; the tool it asks for
	// waits on a permission prompt, shown in the page with the guard's opinion.
	e.Model.Script(Call(21_000, Bash("touch allowed.txt")), Say("allowed and done", 21_500))
	d.do(t, 10*time.Second, "type a prompt",
		click(`#term-keys`), wait(`#keybar:not([hidden])`),
		chromedp.SendKeys(css(`#term-line input`), "please run the allowed step\r"))
	waitFor(t, 20*time.Second, "the model to receive the typed prompt", func() bool {
		for _, r := range e.Model.Requests(KindMain) {
			if strings.Contains(r.LastUserText(), "please run the allowed step") {
				return true
			}
		}
		return false
	})
	ask := `li.row[data-id="` + v.ID + `"] [data-f=ask]`
	d.do(t, 20*time.Second, "the permission prompt in the page", wait(ask+`:not([hidden])`))
	if input := get(t, d, "the command", chromedp.Text(css(ask+` [data-f=input]`))); input != "touch allowed.txt" {
		t.Errorf("the prompt shows %q, want the command", input)
	}
	if guard := get(t, d, "the guard", chromedp.Text(css(ask+` [data-f=guard]`))); !strings.Contains(guard, "no objection") {
		t.Errorf("the guard's opinion: %q", guard)
	}
	waitJS(t, d, 10*time.Second, "the dialog on the terminal", screenHas("Do you want to proceed?"))
	d.shot(t, "agent-permission-1280px")
	d.do(t, 10*time.Second, "allow once", click(ask+` button[data-act=allow]`))
	waitFor(t, 20*time.Second, "the allowed tool to run", func() bool {
		_, err := os.Stat(filepath.Join(detail.Cwd, "allowed.txt"))
		return err == nil
	})
	waitJS(t, d, 20*time.Second, "the turn's end on the terminal, without a reload", screenHas("allowed and done"))
	d.do(t, 10*time.Second, "the prompt leaves the page", wait(ask+`[hidden]`))
	// The row's summary (the agent's last words) starts under its name, not floated to
	// the right.
	waitJS(t, d, 10*time.Second, "the summary", `document.querySelector('.row .summary').textContent.includes('allowed and done')`)
	if dx := get(t, d, "summary's place", chromedp.Evaluate[float64](`document.querySelector('.row .summary').getBoundingClientRect().left - document.querySelector('.row .name').getBoundingClientRect().left`)); dx < -2 || dx > 2 {
		t.Errorf("the summary starts %.0f px from the name", dx)
	}

	// Typed into the focused terminal itself this time; then Deny: the tool never runs.
	e.Model.Script(Call(22_000, Bash("touch denied.txt")), Say("should not be asked", 22_000))
	d.do(t, 10*time.Second, "type into the terminal", chromedp.Focus(css(`#screen`)), chromedp.SendKeys(css(`#screen`), "now the denied step\r"))
	d.do(t, 30*time.Second, "the second prompt", wait(ask+`:not([hidden])`))
	waitJS(t, d, 10*time.Second, "the second dialog", screenHas("touch denied.txt"))
	d.do(t, 10*time.Second, "deny", click(ask+` button[data-act=deny]`), wait(ask+`[hidden]`))
	time.Sleep(2 * time.Second)
	if _, err := os.Stat(filepath.Join(detail.Cwd, "denied.txt")); err == nil {
		t.Error("the denied tool ran")
	}
	if e.Model.Pending() != 1 {
		t.Errorf("after Deny the model was asked again (%d scripted replies left, want 1)", e.Model.Pending())
	}
	if !get(t, d, "marker", chromedp.Evaluate[bool](`window.noReload === true`)) {
		t.Error("the page reloaded")
	}
	audit, _ := filepath.Glob(filepath.Join(e.Workspace, ".ctx", "state", "sessions", "*", "audit*"))
	var log string
	for _, p := range audit {
		b, _ := os.ReadFile(p)
		log += string(b)
	}
	if !strings.Contains(log, `"decision":"allow","rule":"dashboard"`) || !strings.Contains(log, `"decision":"deny","rule":"dashboard"`) {
		t.Errorf("the audit log lacks the page's answers: %v\n%s", audit, log)
	}
	// Tokens spent, from the transcripts the real client wrote of the stand-in's
	// usage: each request counted once, input and output apart.
	var listed []struct {
		ID     string `json:"id"`
		Tokens struct {
			All, Today struct{ Input, Output int64 }
		} `json:"tokens"`
	}
	if err := json.Unmarshal([]byte(e.MustCtx("agents", "list", "--json")), &listed); err != nil || len(listed) != 1 {
		t.Fatalf("agents list --json: %v %d", err, len(listed))
	}
	if tk := listed[0].Tokens; tk.All.Input < 20_000 || tk.All.Output == 0 || tk.Today != tk.All {
		t.Errorf("tokens in agents list --json: %+v", tk)
	}
	waitJS(t, d, 10*time.Second, "the row's tokens", `document.querySelector('li.row [data-f=tokens]').textContent.endsWith('tokens today')`)
	d.shot(t, "agent-terminal-1280px")
	d.do(t, 20*time.Second, "the Terminals page", chromedp.Navigate(d.base+"/terminals"), wait(`#live.on`))
	waitJS(t, d, 10*time.Second, "the Terminals page draws the agent", `document.querySelector('pre.term[data-id="`+v.ID+`"]').dataset.drawn === '1'`)
	d.shot(t, "terminals-1280px")
	d.do(t, 20*time.Second, "360 px", chromedp.EmulateViewport(360, 740), chromedp.Navigate(page), wait(`#live.on`))
	waitJS(t, d, 10*time.Second, "the terminal at 360 px", screenHas("touch denied.txt"))
	if width := get(t, d, "width", chromedp.Evaluate[int](`document.documentElement.scrollWidth`)); width > 360 {
		t.Errorf("the agent page at 360 px is %d px wide", width)
	}
	d.shot(t, "agent-terminal-360px")
}

// waitJS waits until a script in the page returns true.
func waitJS(t *testing.T, d *dashboard, limit time.Duration, what, script string) {
	t.Helper()
	deadline := time.Now().Add(limit)
	// A page being loaded has no elements yet: that is a "not yet", not a failure.
	guarded := `(() => { try { return !!(` + script + `); } catch (e) { return false; } })()`
	for !get(t, d, what, chromedp.Evaluate[bool](guarded)) {
		if time.Now().After(deadline) {
			text := get(t, d, "screen", chromedp.Evaluate[string](`(document.getElementById('screen') || document.body).textContent`))
			t.Fatalf("%s: not within %v; the terminal shows:\n%s", what, limit, tail(text, 3000))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// waitFor polls ok until it holds, failing the test after limit.
func waitFor(t *testing.T, limit time.Duration, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("waited %v for %s", limit, what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Review and merge with the real client and a real browser: an agent on its own
// worktree writes a file; its page shows the diff with the uncommitted part marked,
// and the merge is refused while it is uncommitted; once committed, Merge in the page
// brings it into the branch the agent started from (git is the oracle) and the
// worktree stays. From the CLI: diff --stat, and a conflict refused with exit 3.
func TestDashboardReviewAndMerge(t *testing.T) {
	chrome := chromium(t)
	e := agentsEnv(t)
	wtRoot := filepath.Join(e.Workspace, ".ctx", "worktrees", "builder")
	rel := ProjectPath("03-working/feature.md")
	e.Model.Script(Call(20_000, Write(filepath.Join(wtRoot, rel), "the agent's feature\n")), Say("feature written", 21_000))
	e.MustCtx("agents", "start", "1", "--name", "builder", "--worktree", "ctx/builder", "--permission-mode", "acceptEdits")
	v := e.waitTurn("builder", time.Time{})
	into := strings.TrimSpace(e.Git("-C", e.Workspace, "branch", "--show-current"))

	if out := e.MustCtx("agents", "diff", "builder", "--stat"); !strings.Contains(out, rel+" *") || !strings.Contains(out, "against "+into) {
		t.Errorf("diff --stat:\n%s", out)
	}
	d := startDashboard(t, e, chrome)
	d.do(t, 20*time.Second, "log in", chromedp.Navigate(d.login), wait(`#live.on`))
	d.do(t, 20*time.Second, "the agent's changes", chromedp.EmulateViewport(1280, 900), chromedp.Navigate(d.base+"/agents/"+v.ID), wait(`#changes .files`))
	files := get(t, d, "files", chromedp.Text(css(`#changes .files`)))
	if !strings.Contains(files, rel) || !strings.Contains(files, "not committed") {
		t.Errorf("the page's files: %q", files)
	}
	if patch := get(t, d, "patch", chromedp.Text(css(`#changes .patch .add`))); !strings.Contains(patch, "the agent's feature") {
		t.Errorf("the page's patch: %q", patch)
	}
	// Nothing committed yet: no merge button; the CLI says why, exit 3.
	if n := get(t, d, "merge buttons", chromedp.Evaluate[int](`document.querySelectorAll('#changes button[data-merge]').length`)); n != 0 {
		t.Errorf("%d merge buttons with nothing committed", n)
	}
	if _, errs, code := e.Ctx("agents", "merge", "builder"); code != 3 || !strings.Contains(errs, rel) {
		t.Errorf("merge with the work uncommitted: exit %d, %q", code, errs)
	}
	e.Git("-C", wtRoot, "add", "-A")
	e.Git("-C", wtRoot, "commit", "-qm", "the agent's feature")
	d.do(t, 20*time.Second, "reload", chromedp.Reload(), wait(`#changes button[data-merge=merge]`))
	d.shot(t, "agent-changes-1280px")
	d.do(t, 20*time.Second, "merge from the page", click(`#changes button[data-merge=merge]`), wait(`#changes`))
	waitJS(t, d, 10*time.Second, "the merge's flash", `document.getElementById('flash').textContent.includes('merged ctx/builder into `+into+`')`)
	if got := e.Git("-C", e.Workspace, "show", into+":"+rel); got != "the agent's feature\n" {
		t.Errorf("%s after the merge holds %q", into, got)
	}
	if b, err := os.ReadFile(filepath.Join(e.Workspace, rel)); err != nil || string(b) != "the agent's feature\n" {
		t.Errorf("the main checkout after the merge: %q %v", b, err)
	}
	if _, err := os.Stat(wtRoot); err != nil {
		t.Errorf("the worktree went with the merge: %v", err)
	}

	// A conflict: exit 3, the file named, nothing changed.
	if err := os.WriteFile(filepath.Join(e.Workspace, rel), []byte("the person's version\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	e.Git("-C", e.Workspace, "commit", "-qam", "the person's version")
	if err := os.WriteFile(filepath.Join(wtRoot, rel), []byte("the agent's other version\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	e.Git("-C", wtRoot, "commit", "-qam", "the agent's other version")
	head := e.Git("-C", e.Workspace, "rev-parse", into)
	if _, errs, code := e.Ctx("agents", "merge", "builder", "--squash"); code != 3 || !strings.Contains(errs, rel) {
		t.Errorf("a conflicting merge: exit %d, %q", code, errs)
	}
	if e.Git("-C", e.Workspace, "rev-parse", into) != head {
		t.Error("a refused merge moved the branch")
	}
}
