//go:build e2e

package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// dashboard is `ctx serve` running for an Env, and a headless Chromium logged in to it.
type dashboard struct {
	e       *Env
	login   string // the login URL ctx serve printed
	base    string
	browser context.Context
	shots   string
}

// chromium finds the browser or skips (fails with CI=true).
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	Missing(t, "chromium (apt-get install chromium)")
	return ""
}

// startDashboard runs `ctx serve` on a free loopback port, as a person would, and a
// headless Chromium with a fresh profile. Both end with the test; ctx serve must stop
// cleanly on SIGINT (exit 0, serve.json gone).
func startDashboard(t *testing.T, e *Env, chrome string) *dashboard {
	t.Helper()
	cmd := exec.Command(filepath.Join(e.CtxDir, "ctx"), "serve", "--addr", "127.0.0.1:0")
	cmd.Dir = e.Workspace
	cmd.Env = e.environ(true)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		if sc.Scan() {
			lines <- sc.Text()
		}
		for sc.Scan() {
		}
		exited <- cmd.Wait()
	}()
	d := &dashboard{e: e}
	select {
	case d.login = <-lines:
	case err := <-exited:
		t.Fatalf("ctx serve ended at once: %v\n%s", err, stderr.String())
	case <-time.After(10 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("ctx serve printed no login URL in 10 s\n%s", stderr.String())
	}
	d.base, _, _ = strings.Cut(d.login, "/login?")
	info := filepath.Join(e.Runtime, "ctx", "serve.json")
	if fi, err := os.Stat(info); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("serve.json: %v %v", fi, err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGINT)
		select {
		case err := <-exited:
			if err != nil {
				t.Errorf("ctx serve did not stop cleanly: %v\n%s", err, stderr.String())
			}
		case <-time.After(40 * time.Second):
			_ = cmd.Process.Kill()
			t.Errorf("ctx serve did not stop in 40 s after SIGINT\n%s", stderr.String())
		}
		if _, err := os.Stat(info); err == nil {
			t.Error("serve.json left behind")
		}
	})

	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chrome), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1200, 900),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	bctx, cancelBrowser := chromedp.NewContext(actx)
	t.Cleanup(func() { cancelBrowser(); cancelAlloc() })
	if err := chromedp.Do(bctx); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	d.browser = bctx
	d.shots = os.Getenv("CTX_E2E_SCREENSHOTS")
	if d.shots == "" {
		d.shots = t.TempDir()
	}
	if err := os.MkdirAll(d.shots, 0o755); err != nil {
		t.Fatal(err)
	}
	return d
}

// do runs browser steps with a time limit; a failure shows the page.
func (d *dashboard) do(t *testing.T, limit time.Duration, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(d.browser, limit)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		d.fail(t, what, err)
	}
}

func (d *dashboard) fail(t *testing.T, what string, err error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(d.browser, 5*time.Second)
	defer cancel()
	html, _ := chromedp.Run(ctx, chromedp.OuterHTML(chromedp.CSS("main")))
	flash, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#flash")))
	t.Fatalf("%s: %v\nflash: %q\npage:\n%s", what, err, flash, tail(html, 4000))
}

// get runs one browser action that reads a value, within 20 s.
func get[T any](t *testing.T, d *dashboard, what string, a chromedp.Action[T]) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(d.browser, 20*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		d.fail(t, what, err)
	}
	return v
}

// shot writes a PNG of the whole page.
func (d *dashboard) shot(t *testing.T, name string) {
	t.Helper()
	png := get(t, d, "screenshot "+name, chromedp.FullScreenshot(100))
	p := filepath.Join(d.shots, name+".png")
	if err := os.WriteFile(p, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", p)
}

func rowIn(group, id string) string {
	return fmt.Sprintf(`section[data-group=%q] li.row[data-id=%q]`, group, id)
}

func css(sel string) chromedp.CSS { return chromedp.CSS(sel) }

// wait waits for an element to be in the page (hidden or not).
func wait(sel string) chromedp.Action[chromedp.Void] { return chromedp.WaitReady(css(sel)) }

func click(sel string) chromedp.Action[chromedp.Void] { return chromedp.Click(css(sel)) }

// The dashboard with the real Claude Code agents and a real browser: log in by the
// token URL; rows in their groups; Pause pressed in the page moves the row to Paused
// through the event stream, without a reload, and Resume brings it back; bulk pause;
// a summary holding <script> stays text; the page fits 400 px; a screenshot of each
// page.
func TestDashboard(t *testing.T) {
	chrome := chromium(t)
	e := agentsEnv(t)
	e.Model.Script(Say("alpha is ready", 20_000))
	e.MustCtx("agents", "start", "1", "--name", "alpha")
	alpha := e.waitTurn("alpha", time.Time{})
	const evil = `<script>window.pwned=1</script><img src=x onerror="window.pwned=2"> beta done`
	e.Model.Script(Say(evil, 20_000))
	e.MustCtx("agents", "start", "1", "--name", "beta")
	beta := e.waitTurn("beta", time.Time{})
	// An agent waiting at a permission prompt: Bash is not allowed in default mode.
	e.Model.Script(Call(20_000, Bash("touch asked.txt")))
	e.MustCtx("agents", "start", "1", "--name", "asker", "--permission-mode", "default")
	asker := e.show("asker")
	deadline := time.Now().Add(30 * time.Second)
	for asker.Activity.Activity != "needs_input" && time.Now().Before(deadline) {
		time.Sleep(200 * time.Millisecond)
		asker = e.show("asker")
	}
	if asker.Activity.Activity != "needs_input" {
		t.Fatalf("asker never needed input: %+v", asker.Activity)
	}

	d := startDashboard(t, e, chrome)
	// A second ctx serve on the same port says where the first runs; an address that is
	// not loopback is bad input.
	addr := strings.TrimPrefix(d.base, "http://")
	if _, errs, code := e.Ctx("serve", "--addr", addr); code != 3 || !strings.Contains(errs, "already running at "+d.base) {
		t.Errorf("a second ctx serve: exit %d, %q; want 3 and where the first runs", code, errs)
	}
	if _, errs, code := e.Ctx("serve", "--addr", "0.0.0.0:7177"); code != 2 || !strings.Contains(errs, "loopback") {
		t.Errorf("--addr 0.0.0.0: exit %d, %q; want 2", code, errs)
	}
	d.do(t, 20*time.Second, "log in", chromedp.Navigate(d.login), wait(`#live.on`))
	if loc := get(t, d, "location", chromedp.Location()); loc != d.base+"/" {
		t.Errorf("after login the browser is at %q, want %q (no token in the URL)", loc, d.base+"/")
	}
	d.do(t, 10*time.Second, "rows in their groups",
		wait(rowIn("idle", alpha.ID)), wait(rowIn("idle", beta.ID)), wait(rowIn("needs_input", asker.ID)))
	// How full each active agent's context is, read from its transcript.
	if pct := get(t, d, "context", chromedp.Text(css(rowIn("idle", alpha.ID)+` [data-f=context]`))); !regexp.MustCompile(`^context \d+%$`).MatchString(pct) {
		t.Errorf("the row shows context %q, want a percentage", pct)
	}
	if title := get(t, d, "title", chromedp.Title()); title != "(1) ctx" {
		t.Errorf("title %q, want (1) ctx", title)
	}

	// The summary is agent text: shown as text, never run.
	summary := get(t, d, "summary", chromedp.Text(css(rowIn("idle", beta.ID)+` [data-f=summary]`)))
	pwned := get(t, d, "script ran?", chromedp.Evaluate[bool](`window.pwned !== undefined || document.querySelector('main script, main img') !== null`))
	if !strings.Contains(summary, "<script>window.pwned=1</script>") || pwned {
		t.Errorf("the summary is not shown as text: %q (script ran or element made: %v)", summary, pwned)
	}
	d.shot(t, "agents")

	// Pause in the page: the row moves through the event stream; a marker in the page
	// shows it was never reloaded.
	stillHere := func(what string) {
		if !get(t, d, "marker", chromedp.Evaluate[bool](`window.noReload === true`)) {
			t.Errorf("the page reloaded during the %s", what)
		}
	}
	get(t, d, "set marker", chromedp.Evaluate[bool](`window.noReload = true`))
	d.do(t, 90*time.Second, "pause from the page",
		click(rowIn("idle", alpha.ID)+` button[data-act=pause]`), wait(rowIn("paused", alpha.ID)))
	stillHere("pause")
	if v := e.show("alpha"); v.State != "paused" {
		t.Errorf("after Pause in the page the agent is %s", v.State)
	}
	d.shot(t, "agents-paused")

	e.Model.Script(Say("alpha is back", 20_000))
	d.do(t, 90*time.Second, "resume from the page",
		click(rowIn("paused", alpha.ID)+` button[data-act=resume]`), wait(rowIn("idle", alpha.ID)))
	stillHere("resume")
	if v := e.waitTurn("alpha", time.Time{}); v.State != "active" || len(v.Claude.PreviousSessionIDs) != 0 {
		t.Errorf("after Resume in the page: %+v", v)
	}
	// The status line names the agent and says the resume finished, not that it started.
	waitJS(t, d, 10*time.Second, "the status line after the resume", `document.getElementById('flash').textContent === 'alpha resumed'`)
	// The row's values say what they are.
	for f, prefix := range map[string]string{"for": "for ", "context": "context ", "tokens": ""} {
		text := get(t, d, "row "+f, chromedp.Text(css(rowIn("idle", alpha.ID)+` [data-f=`+f+`]`)))
		if !strings.HasPrefix(text, prefix) || (f == "tokens" && !strings.HasSuffix(text, "tokens today")) {
			t.Errorf("the row's %s reads %q", f, text)
		}
	}

	// Bulk: select both idle agents, pause them at once.
	d.do(t, 120*time.Second, "bulk pause",
		click(rowIn("idle", alpha.ID)+` input.pick`), click(rowIn("idle", beta.ID)+` input.pick`),
		click(`button[data-bulk=pause]`),
		wait(rowIn("paused", alpha.ID)), wait(rowIn("paused", beta.ID)))
	stillHere("bulk pause")

	// The agent page of a paused agent: the saved screen, the resume prompt to edit,
	// and no tmux attach command (no tmux session exists while it is paused).
	d.do(t, 20*time.Second, "agent page", chromedp.Navigate(d.base+"/agents/"+alpha.ID), wait(`#live.on`))
	// The timeline is in sentences.
	if tl := get(t, d, "timeline", chromedp.Text(css(`.timeline`))); !strings.Contains(tl, "paused (user), freed") || !strings.Contains(tl, "resumed in the same conversation") || strings.Contains(tl, "=") {
		t.Errorf("the timeline:\n%s", tl)
	}
	screen := get(t, d, "screen", chromedp.TextContent(css(`#screen`)))
	prompt := get(t, d, "prompt", chromedp.Value(css(`#prompt`)))
	page := get(t, d, "page text", chromedp.Evaluate[string](`document.body.innerText`))
	if !strings.Contains(screen, "alpha is back") || strings.Contains(page, "attach-session") || strings.TrimSpace(prompt) == "" {
		t.Errorf("agent page: screen %q, prompt %q, an attach command shown: %v", tail(screen, 300), tail(prompt, 200), strings.Contains(page, "attach-session"))
	}
	d.shot(t, "agent")

	d.do(t, 20*time.Second, "projects page", chromedp.Navigate(d.base+"/projects"), wait(`form#start`))
	d.shot(t, "projects")

	// A phone: 400 px wide, nothing wider than the screen.
	d.do(t, 20*time.Second, "400 px",
		chromedp.EmulateViewport(400, 860), chromedp.Navigate(d.base+"/"), wait(rowIn("paused", beta.ID)))
	if width := get(t, d, "width", chromedp.Evaluate[int](`document.documentElement.scrollWidth`)); width > 400 {
		t.Errorf("at 400 px the page is %d px wide", width)
	}
	d.shot(t, "agents-400px")

	// A laptop and a small phone, the list and an agent's page: nothing wider than the
	// screen (CTX_E2E_SCREENSHOTS=DIR keeps the pictures to look at).
	for _, vp := range []struct {
		name          string
		width, height int64
	}{{"1280px", 1280, 800}, {"360px", 360, 740}} {
		for _, page := range []struct{ name, path, ready string }{
			{"agents", "/", rowIn("paused", beta.ID)},
			{"agent", "/agents/" + alpha.ID, `#live.on`},
		} {
			d.do(t, 20*time.Second, page.name+" at "+vp.name,
				chromedp.EmulateViewport(vp.width, vp.height), chromedp.Navigate(d.base+page.path), wait(page.ready))
			if width := get(t, d, "width", chromedp.Evaluate[int](`document.documentElement.scrollWidth`)); int64(width) > vp.width {
				t.Errorf("%s at %s is %d px wide", page.name, vp.name, width)
			}
			d.shot(t, page.name+"-"+vp.name)
		}
	}

	// The page's own origin without the CSRF token is still refused.
	status := get(t, d, "fetch without the CSRF token",
		chromedp.Evaluate[int](`fetch('/api/agents/pause', {method: 'POST', body: '{"all":true}'}).then(r => r.status)`, chromedp.EvalAwaitPromise))
	if status != 403 {
		t.Errorf("a POST without the CSRF token answered %d, want 403", status)
	}
	var views []map[string]any
	if err := json.Unmarshal([]byte(e.MustCtx("agents", "list", "--json")), &views); err != nil || len(views) != 3 {
		t.Errorf("agents after the test: %d %v", len(views), err)
	}
}

// serve.notify_command through the real binary and the real client: an agent that
// stops at a permission prompt while `ctx serve` runs makes the server run the
// configured command, with the event in its environment.
func TestServeNotifyCommand(t *testing.T) {
	e := agentsEnv(t)
	log := filepath.Join(t.TempDir(), "notified")
	config := filepath.Join(e.Workspace, ".ctx", "config.yaml")
	old, _ := os.ReadFile(config)
	cfg := string(old) + "\nserve:\n  notify_command: printf '%s|%s|%s\\n' \"$CTX_EVENT\" \"$CTX_AGENT_NAME\" \"$CTX_NOTIFY_TITLE\" >> " + log + "\n"
	if err := os.WriteFile(config, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(filepath.Join(e.CtxDir, "ctx"), "serve", "--addr", "127.0.0.1:0")
	cmd.Dir, cmd.Env = e.Workspace, e.environ(true)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Signal(os.Interrupt); _ = cmd.Wait() }()
	time.Sleep(500 * time.Millisecond) // the server's first look: what is there is no news

	e.Model.Script(Call(20_000, Bash("touch notified-by-ctx.txt")))
	e.MustCtx("agents", "start", "1", "--name", "pinger", "--permission-mode", "default")
	deadline := time.Now().Add(30 * time.Second)
	for {
		b, _ := os.ReadFile(log)
		if strings.Contains(string(b), "agent.needs_input|pinger|pinger needs input\n") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the notify command did not run for the agent's permission prompt: %q\nserver: %s", b, stderr.String())
		}
		time.Sleep(200 * time.Millisecond)
	}
	e.MustCtx("agents", "rm", "pinger", "--force")
}
