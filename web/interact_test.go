package web

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ctxtools/ctx/agents"
	"github.com/ctxtools/ctx/internal/screen"
	"github.com/ctxtools/ctx/internal/state"
)

func needTmux(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("tmux not installed (apt-get install tmux); CI=true: a skipped real component is a failure")
		}
		t.Skip("tmux not installed (apt-get install tmux)")
	}
}

// liveAgent is an active agent record whose tmux session (on the server's private
// socket) runs script with sh.
func liveAgent(t *testing.T, ts *testServer, id, script string) *agents.Record {
	t.Helper()
	needTmux(t)
	socket := ts.agents.Tmux.Socket
	session := "ctx-" + id
	sh := filepath.Join(t.TempDir(), "pane.sh")
	if err := os.WriteFile(sh, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("tmux", "-L", socket, "new-session", "-d", "-s", session, "-x", "120", "-y", "30", "sh", sh).CombinedOutput(); err != nil {
		t.Fatalf("tmux: %v %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("tmux", "-L", socket, "kill-session", "-t", "="+session).Run() })
	now := time.Now().UTC()
	rec := &agents.Record{ID: id, Name: "name-" + id, Project: "01-checkout-redesign", State: agents.Active, StateSince: now, CreatedAt: now,
		Cwd: ts.ws.Root, Tmux: agents.TmuxInfo{Kind: "tmux", Socket: socket, Session: session}}
	if err := ts.store.Create(rec); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { ts.pokeWatch(); _, ok := ts.hub.rowByID(id); return ok })
	return rec
}

// screens opens the event stream for some agents' screens.
func (ts *testServer) screens(ids ...string) *sse {
	ts.t.Helper()
	q := url.Values{"screen": ids}
	resp := ts.req("GET", "/events?"+q.Encode(), map[string]string{"Authorization": "Bearer " + ts.Token()}, "") //nolint:bodyclose // closed through sse.resp
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		ts.t.Fatalf("events: %d %s", resp.StatusCode, b)
	}
	return &sse{resp: resp, rd: bufio.NewReader(resp.Body)}
}

// screenWith waits for an agent.screen event of id whose text holds want.
func (s *sse) screenWith(t *testing.T, id, want string) screenEvent {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		ev, _ := s.next(t)
		if ev.name != "agent.screen" {
			continue
		}
		var d screenEvent
		if err := json.Unmarshal([]byte(ev.data), &d); err != nil {
			t.Fatal(err)
		}
		if d.ID == id && strings.Contains(d.Lines.Plain(), want) {
			return d
		}
	}
	t.Fatalf("no screen of %s showing %q", id, want)
	return screenEvent{}
}

func (ts *testServer) postJSON(path string, body any) (int, string) {
	ts.t.Helper()
	b, _ := json.Marshal(body)
	resp := ts.req("POST", path, map[string]string{"Authorization": "Bearer " + ts.Token(), "Content-Type": "application/json"}, string(b))
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(out)
}

// The terminal: a pane's output reaches the stream as it is printed (tmux's control
// mode, not the server's poll, which is slowed to a minute here), with its colours;
// a second watcher gets the screen at once; keys typed through the API reach the pane.
func TestTerminalFollowsThePane(t *testing.T) {
	ts := startServerWith(t, func(o *Options) { o.Poll = time.Minute })
	// The pane echoes what is typed, in colour.
	rec := liveAgent(t, ts, "a-term01", "printf 'ready\\n'; while read -r line; do printf '\\033[38;2;215;119;87mgot\\033[0m %s\\n' \"$line\"; done\n")
	ts.pokeWatch()
	s := ts.screens(rec.ID)
	defer s.resp.Body.Close()
	s.screenWith(t, rec.ID, "ready")

	start := time.Now()
	if code, body := ts.postJSON("/api/agents/"+rec.ID+"/keys", map[string]any{"keys": []map[string]string{{"text": "hello <b>"}, {"key": "Enter"}}}); code != 200 {
		t.Fatalf("keys: %d %s", code, body)
	}
	d := s.screenWith(t, rec.ID, "got hello <b>")
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("the screen took %v to arrive; pushed, it takes milliseconds", took)
	}
	var styled *screen.Span
	for _, line := range d.Lines {
		for _, sp := range line {
			if sp.Text == "got" {
				styled = &sp
			}
		}
	}
	if styled == nil || styled.FG != "#d77757" {
		t.Errorf("the colour was lost: %+v", styled)
	}

	// A second page gets the current screen first thing.
	s2 := ts.screens(rec.ID)
	defer s2.resp.Body.Close()
	s2.screenWith(t, rec.ID, "got hello <b>")

	// Bad keys and a stopped agent are refused; nothing reaches the pane.
	for _, c := range []struct {
		keys []map[string]string
		code int
	}{
		{[]map[string]string{{"key": "F13"}}, 409},
		{[]map[string]string{{"text": "a\x1b[2Jb"}}, 409},
		{[]map[string]string{{"text": "x", "key": "Enter"}}, 400},
		{nil, 409},
	} {
		if code, body := ts.postJSON("/api/agents/"+rec.ID+"/keys", map[string]any{"keys": c.keys}); code != c.code {
			t.Errorf("keys %v: %d %s, want %d", c.keys, code, body, c.code)
		}
	}
	if code, _ := ts.postJSON("/api/agents/nobody/keys", map[string]any{"keys": []map[string]string{{"text": "x"}}}); code != 404 {
		t.Errorf("keys to an unknown agent: %d, want 404", code)
	}
}

// A permission prompt answered from the page: the answer reaches the pane only while
// the status is that prompt and the screen shows the dialog with Yes chosen; it is
// written to the session's audit log; the row says what the guard makes of the
// command.
func TestPermissionAnsweredFromThePage(t *testing.T) {
	ts := startServer(t)
	dialog := "printf ' Bash command\\n rm -rf /\\n Do you want to proceed?\\n \\342\\235\\257 1. Yes\\n   2. No\\n'\n" +
		"IFS= read -r answer; printf '\\033[2J\\033[H'; printf 'answered [%s]\\n' \"$answer\"; sleep 60\n"
	rec := liveAgent(t, ts, "a-perm01", dialog)
	at := time.Now().UTC().Truncate(time.Millisecond)
	session := "0f0e0d0c-0000-4000-8000-000000000001"
	if err := agents.RecordHook(ts.ws, rec.ID, agents.Status{Activity: "needs_input", Detail: "permission", Tool: "Bash",
		Summary: "rm -rf /", Input: "rm -rf /", SessionID: session, Event: "PermissionRequest", At: at}); err != nil {
		t.Fatal(err)
	}
	var row Row
	waitFor(t, func() bool { row, _ = ts.hub.rowByID(rec.ID); return row.Guard != "" })
	if row.Input != "rm -rf /" || !strings.Contains(row.GuardText, "would refuse") {
		t.Errorf("the row: input %q, guard %q; want the command and the guard's refusal", row.Input, row.GuardText)
	}
	waitFor(t, func() bool {
		out, _ := exec.Command("tmux", "-L", ts.agents.Tmux.Socket, "capture-pane", "-p", "-t", "="+rec.Tmux.Session+":").Output()
		return agents.PermissionDialog(string(out))
	})

	// An answer to an older prompt is refused.
	if code, body := ts.postJSON("/api/agents/"+rec.ID+"/permission", map[string]any{"allow": true, "at": at.Add(-time.Second)}); code != 409 {
		t.Errorf("an answer to another prompt: %d %s, want 409", code, body)
	}
	if code, body := ts.postJSON("/api/agents/"+rec.ID+"/permission", map[string]any{"allow": true}); code != 400 {
		t.Errorf("an answer naming no prompt: %d %s, want 400", code, body)
	}
	if code, body := ts.postJSON("/api/agents/"+rec.ID+"/permission", map[string]any{"allow": true, "at": at}); code != 200 {
		t.Fatalf("allow: %d %s", code, body)
	}
	waitFor(t, func() bool {
		out, _ := exec.Command("tmux", "-L", ts.agents.Tmux.Socket, "capture-pane", "-p", "-t", "="+rec.Tmux.Session+":").Output()
		return strings.Contains(string(out), "answered []") // Enter, and nothing else
	})
	path, err := state.Open(ts.ws, nil).Session(session).AuditFile()
	if err != nil {
		t.Fatal(err)
	}
	audit, _ := os.ReadFile(path)
	if !strings.Contains(string(audit), `"decision":"allow","rule":"dashboard"`) || !strings.Contains(string(audit), `"summary":"rm -rf /"`) {
		t.Errorf("the audit log: %s", audit)
	}
	// The screen no longer shows the dialog: a second answer is refused, and no key is
	// sent.
	if code, body := ts.postJSON("/api/agents/"+rec.ID+"/permission", map[string]any{"allow": false, "at": at}); code != 409 || !strings.Contains(body, "no permission dialog") {
		t.Errorf("an answer with no dialog on the screen: %d %s, want 409", code, body)
	}
}

// Without the token a browser gets a sign-in page (its stylesheet too), whose form
// signs in without the token ever being in a URL; a wrong token gets the page again.
func TestSignInPage(t *testing.T) {
	ts := startServer(t)
	page := map[string]string{"Accept": "text/html,application/xhtml+xml"}
	resp := ts.req("GET", "/", page, "")
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 401 || !strings.Contains(string(body), `<form method="post" action="/login"`) || resp.Header.Get("Content-Security-Policy") == "" {
		t.Errorf("a browser without the token: %d\n%s", resp.StatusCode, body)
	}
	if resp := ts.req("GET", "/static/style.css", nil, ""); resp.StatusCode != 200 {
		t.Errorf("the sign-in page's stylesheet: %d", resp.StatusCode)
	} else {
		resp.Body.Close()
	}
	if resp := ts.req("GET", "/static/app.js", nil, ""); resp.StatusCode != 401 {
		t.Errorf("the script without the token: %d, want 401", resp.StatusCode)
	} else {
		resp.Body.Close()
	}
	if resp := ts.req("GET", "/api/agents", page, ""); resp.StatusCode != 401 || resp.Header.Get("Content-Type") == "text/html; charset=utf-8" {
		t.Errorf("the API without the token: %d %s, want a 401 line", resp.StatusCode, resp.Header.Get("Content-Type"))
	} else {
		resp.Body.Close()
	}
	form := map[string]string{"Content-Type": "application/x-www-form-urlencoded", "Origin": ts.URL()}
	wrong := ts.req("POST", "/login", form, "token=00")
	wb, _ := io.ReadAll(wrong.Body)
	wrong.Body.Close()
	if wrong.StatusCode != 401 || !strings.Contains(string(wb), "not this server") || len(wrong.Cookies()) != 0 {
		t.Errorf("a wrong token: %d %v\n%s", wrong.StatusCode, wrong.Cookies(), wb)
	}
	if r := ts.req("POST", "/login", map[string]string{"Content-Type": "application/x-www-form-urlencoded", "Origin": "http://evil.example"}, "token="+ts.Token()); r.StatusCode != 403 {
		t.Errorf("a sign-in from another site: %d, want 403", r.StatusCode)
	} else {
		r.Body.Close()
	}
	ok := ts.req("POST", "/login", form, "token="+ts.Token())
	ok.Body.Close()
	if ok.StatusCode != http.StatusSeeOther || ok.Header.Get("Location") != "/" || len(ok.Cookies()) != 1 || !ok.Cookies()[0].HttpOnly {
		t.Errorf("the right token: %d %q %v", ok.StatusCode, ok.Header.Get("Location"), ok.Cookies())
	}
}

// --read-only: everything shows, nothing changes; --url: the other device's host and
// origin are served.
func TestReadOnlyAndPublicURL(t *testing.T) {
	ts := startServerWith(t, func(o *Options) { o.ReadOnly, o.PublicURL = true, "https://box.tail1234.ts.net" })
	bearer := map[string]string{"Authorization": "Bearer " + ts.Token()}
	if r := ts.req("GET", "/api/agents", bearer, ""); r.StatusCode != 200 {
		t.Errorf("read-only list: %d", r.StatusCode)
	} else {
		r.Body.Close()
	}
	for _, path := range []string{"/api/agents/a-x/pause", "/api/agents/a-x/keys", "/api/agents/a-x/permission", "/api/agents"} {
		if code, body := ts.postJSON(path, map[string]any{}); code != 403 || !strings.Contains(body, "read-only") {
			t.Errorf("read-only POST %s: %d %s", path, code, body)
		}
	}
	cookie := map[string]string{"Cookie": ts.cookie(), "Host": "box.tail1234.ts.net", "Origin": "https://box.tail1234.ts.net",
		"Sec-Fetch-Site": "same-origin"}
	if r := ts.req("GET", "/events", cookie, ""); r.StatusCode != 200 {
		t.Errorf("the event stream through the public URL: %d", r.StatusCode)
	} else {
		r.Body.Close()
	}
	// The --url host over plain http is not the page's own origin.
	cookie["Origin"] = "http://box.tail1234.ts.net"
	if r := ts.req("GET", "/events", cookie, ""); r.StatusCode != 403 {
		t.Errorf("the --url host over http: %d, want 403", r.StatusCode)
	} else {
		r.Body.Close()
	}
	// Signed in through the https --url, the cookie is Secure; on loopback it is not.
	for host, secure := range map[string]bool{"box.tail1234.ts.net": true, "127.0.0.1:" + strconv.Itoa(ts.port): false} {
		r := ts.req("GET", "/login?t="+ts.Token(), map[string]string{"Host": host}, "")
		r.Body.Close()
		if len(r.Cookies()) != 1 || r.Cookies()[0].Secure != secure {
			t.Errorf("the cookie signed in at %s: %v, want Secure %v", host, r.Cookies(), secure)
		}
	}
	cookie["Origin"] = "https://box.tail1234.ts.net.evil.example"
	if r := ts.req("GET", "/events", cookie, ""); r.StatusCode != 403 {
		t.Errorf("a look-alike origin: %d, want 403", r.StatusCode)
	} else {
		r.Body.Close()
	}
	if got, want := ts.PublicLoginURL(), "https://box.tail1234.ts.net/login?t="+ts.Token(); got != want {
		t.Errorf("PublicLoginURL %q, want %q", got, want)
	}
	for _, bad := range []string{"ftp://x", "https://", "https://x/path", "https://u:p@x", "box.ts.net"} {
		if _, err := New(ts.ws, ts.agents, Options{PublicURL: bad}); err == nil {
			t.Errorf("--url %q accepted", bad)
		}
	}
}

// The review from the page: the diff of an agent on its own branch, and its merge
// (git is the oracle); a conflict is refused with the file named and nothing changed.
func TestDiffAndMergeAPI(t *testing.T) {
	ts := startServer(t)
	// The server's own git makes the merge commit: it needs an identity too.
	for k, v := range map[string]string{"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"} {
		t.Setenv(k, v)
	}
	repo := t.TempDir()
	git := func(dir string, args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	write := func(path, text string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git(repo, "init", "-q", "-b", "main")
	write(filepath.Join(repo, "a.txt"), "a\n")
	git(repo, "add", "-A")
	git(repo, "commit", "-qm", "start")
	wt := filepath.Join(t.TempDir(), "wt")
	git(repo, "worktree", "add", "-q", "-b", "ctx/x", wt)
	write(filepath.Join(wt, "a.txt"), "a, the agent's\n")
	git(wt, "commit", "-qam", "agent: a")
	now := time.Now().UTC()
	rec := &agents.Record{ID: "a-merge1", Name: "merger", Project: "01-checkout-redesign", State: agents.Paused, StateSince: now, CreatedAt: now,
		Cwd: wt, Worktree: &agents.Worktree{Repo: repo, Path: wt, Branch: "ctx/x", FromBranch: "main"}}
	if err := ts.store.Create(rec); err != nil {
		t.Fatal(err)
	}
	bearer := map[string]string{"Authorization": "Bearer " + ts.Token()}
	resp := ts.req("GET", "/api/agents/a-merge1/diff", bearer, "")
	var rv agents.Review
	_ = json.NewDecoder(resp.Body).Decode(&rv)
	resp.Body.Close()
	if resp.StatusCode != 200 || rv.Into != "main" || len(rv.Files) != 1 || !strings.Contains(rv.Patch, "+a, the agent's") {
		t.Errorf("diff: %d %+v", resp.StatusCode, rv)
	}
	page := ts.req("GET", "/agents/a-merge1", map[string]string{"Cookie": ts.cookie()}, "")
	html, _ := io.ReadAll(page.Body)
	page.Body.Close()
	if !strings.Contains(string(html), `<span class="add">&#43;a, the agent&#39;s</span>`) || !strings.Contains(string(html), `data-merge="squash"`) {
		t.Errorf("the agent page lacks the diff or the merge buttons:\n%s", html)
	}
	// A conflicting change on main: refused, named, nothing changed.
	write(filepath.Join(repo, "a.txt"), "a, the person's\n")
	git(repo, "commit", "-qam", "person: a")
	head := git(repo, "rev-parse", "main")
	if code, body := ts.postJSON("/api/agents/a-merge1/merge", map[string]any{}); code != 409 || !strings.Contains(body, "a.txt") {
		t.Errorf("a conflicting merge: %d %s", code, body)
	}
	if git(repo, "rev-parse", "main") != head || git(repo, "status", "--porcelain") != "" {
		t.Error("a refused merge changed main")
	}
	git(repo, "reset", "-q", "--hard", "HEAD~1")
	code, body := ts.postJSON("/api/agents/a-merge1/merge", map[string]any{"squash": true})
	if code != 200 || !strings.Contains(body, `"how": "squash"`) || git(repo, "show", "main:a.txt") != "a, the agent's" {
		t.Errorf("squash merge: %d %s", code, body)
	}
	if code, _ := ts.postJSON("/api/agents/a-merge1/merge", map[string]any{"bogus": 1}); code != 400 {
		t.Errorf("an unknown field: %d, want 400", code)
	}
}

// A follower that cannot attach (a tmux whose control mode refuses, here a wrapper
// around the real one) is not started again every second: it waits followRetry.
func TestFollowerThatCannotAttachWaits(t *testing.T) {
	needTmux(t)
	real, _ := exec.LookPath("tmux")
	bin := t.TempDir()
	wrapper := "#!/bin/sh\nfor a in \"$@\"; do [ \"$a\" = -C ] && { echo 'no control mode here' >&2; exit 1; }; done\nexec " + real + " \"$@\"\n"
	if err := os.WriteFile(filepath.Join(bin, "tmux"), []byte(wrapper), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	ts := startServer(t)
	rec := liveAgent(t, ts, "a-nocm01", "sleep 60\n")
	s := ts.screens(rec.ID)
	defer s.resp.Body.Close()
	failedAt := func() time.Time {
		ts.terms.mu.Lock()
		defer ts.terms.mu.Unlock()
		return ts.terms.failed[rec.ID]
	}
	waitFor(t, func() bool { ts.pokeWatch(); return !failedAt().IsZero() })
	first := failedAt()
	for range 5 {
		ts.pokeWatch()
		time.Sleep(100 * time.Millisecond)
	}
	if got := failedAt(); !got.Equal(first) {
		t.Errorf("the follower was tried again %v after it failed", got.Sub(first))
	}
}
