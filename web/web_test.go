package web

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/ctxtools/ctx/agents"
	"github.com/ctxtools/ctx/demo"
	"github.com/ctxtools/ctx/loader"
)

// testServer is a real server on a loopback port over ctx's demo workspace, with a
// tmux socket of its own (no agent runs: records are written directly).
type testServer struct {
	*Server
	t      *testing.T
	store  agents.Store
	client *http.Client
	tr     *http.Transport
	done   chan error
	cancel context.CancelFunc
}

func startServer(t *testing.T) *testServer {
	t.Helper()
	return startServerWith(t, nil)
}

// startServerWith is startServer with its options changed by set.
func startServerWith(t *testing.T, set func(*Options)) *testServer {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "ws")
	if err := demo.Write(dir); err != nil {
		t.Fatal(err)
	}
	ws, err := loader.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	socket := fmt.Sprintf("ctx-web-test-%d", os.Getpid())
	getenv := func(k string) string {
		if k == "CTX_TMUX_SOCKET" {
			return socket
		}
		return ""
	}
	a, err := agents.New(ws, getenv, nil)
	if err != nil {
		t.Fatal(err)
	}
	o := Options{Addr: "127.0.0.1:0", Poll: 50 * time.Millisecond, Heartbeat: 200 * time.Millisecond}
	if set != nil {
		set(&o)
	}
	s, err := New(ws, a, o)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Listen(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ts := &testServer{Server: s, t: t, store: a.Store, done: make(chan error, 1), cancel: cancel}
	ts.tr = &http.Transport{}
	ts.client = &http.Client{Transport: ts.tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	go func() { ts.done <- s.Run(ctx, 5*time.Second) }()
	t.Cleanup(ts.stop)
	return ts
}

func (ts *testServer) stop() {
	ts.cancel()
	select {
	case err := <-ts.done:
		if err != nil {
			ts.t.Errorf("Run: %v", err)
		}
		ts.done <- nil // stop may be called again
	case <-time.After(10 * time.Second):
		ts.t.Fatal("the server did not stop in 10 s")
	}
	ts.tr.CloseIdleConnections()
}

// req is one request with the headers a case sets.
func (ts *testServer) req(method, path string, hdr map[string]string, body string) *http.Response {
	ts.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	r, err := http.NewRequest(method, ts.URL()+path, rd)
	if err != nil {
		ts.t.Fatal(err)
	}
	for k, v := range hdr {
		if k == "Host" {
			r.Host = v
			continue
		}
		r.Header.Set(k, v)
	}
	resp, err := ts.client.Do(r)
	if err != nil {
		ts.t.Fatalf("%s %s: %v", method, path, err)
	}
	return resp
}

func (ts *testServer) cookie() string { return ts.cookieName() + "=" + ts.Token() }

// A plain HTTP client against the real server: every way in without the right
// token, Host or Origin is refused with its code; the right ones get through.
func TestSecurityMatrix(t *testing.T) {
	ts := startServer(t)
	port := strings.TrimPrefix(ts.URL(), "http://127.0.0.1:")
	own := ts.URL()
	bearer := "Bearer " + ts.Token()
	cases := []struct {
		name   string
		method string
		path   string
		hdr    map[string]string
		body   string
		want   int
	}{
		{"no token", "GET", "/", nil, "", 401},
		{"no token, API", "GET", "/api/agents", nil, "", 401},
		{"no token, events", "GET", "/events", nil, "", 401},
		{"wrong cookie", "GET", "/", map[string]string{"Cookie": ts.cookieName() + "=" + strings.Repeat("0", 64)}, "", 401},
		{"wrong bearer", "GET", "/api/agents", map[string]string{"Authorization": "Bearer " + strings.Repeat("f", 64)}, "", 401},
		{"token of another port's cookie", "GET", "/", map[string]string{"Cookie": "ctx_token_1=" + ts.Token()}, "", 401},
		{"wrong login link", "GET", "/login?t=" + strings.Repeat("a", 64), nil, "", 401},
		{"token only in a query", "GET", "/api/agents?t=" + ts.Token(), nil, "", 401},
		{"token in a query of a page", "GET", "/?token=" + ts.Token(), nil, "", 401},
		{"token in a query beside a good bearer", "GET", "/api/agents?t=" + ts.Token(), map[string]string{"Authorization": bearer}, "", 401},
		{"foreign Host (DNS rebinding)", "GET", "/", map[string]string{"Host": "evil.example:" + port, "Cookie": ts.cookie()}, "", 421},
		{"foreign Host, bearer", "GET", "/api/agents", map[string]string{"Host": "evil.example", "Authorization": bearer}, "", 421},
		{"own name, other port", "GET", "/", map[string]string{"Host": "127.0.0.1:1", "Cookie": ts.cookie()}, "", 421},
		{"foreign Host on login", "GET", "/login?t=" + ts.Token(), map[string]string{"Host": "evil.example:" + port}, "", 421},
		{"foreign Origin on a POST", "POST", "/api/agents/pause", map[string]string{"Cookie": ts.cookie(), "Origin": "http://evil.example", "X-Ctx-Csrf": ts.csrf}, `{"ids":["a-x"]}`, 403},
		{"null Origin on a POST", "POST", "/api/agents/pause", map[string]string{"Cookie": ts.cookie(), "Origin": "null", "X-Ctx-Csrf": ts.csrf}, `{"ids":["a-x"]}`, 403},
		{"https Origin of the own host", "POST", "/api/agents/pause", map[string]string{"Cookie": ts.cookie(), "Origin": "https://127.0.0.1:" + port, "X-Ctx-Csrf": ts.csrf}, `{"ids":["a-x"]}`, 403},
		{"foreign Origin on a DELETE", "DELETE", "/api/agents/a-x", map[string]string{"Cookie": ts.cookie(), "Origin": "http://evil.example", "X-Ctx-Csrf": ts.csrf}, "", 403},
		{"no Origin on a cookie POST", "POST", "/api/agents/pause", map[string]string{"Cookie": ts.cookie(), "X-Ctx-Csrf": ts.csrf}, `{"ids":["a-x"]}`, 403},
		{"no CSRF token on a cookie POST", "POST", "/api/agents/pause", map[string]string{"Cookie": ts.cookie(), "Origin": own}, `{"ids":["a-x"]}`, 403},
		{"foreign Origin on events", "GET", "/events", map[string]string{"Cookie": ts.cookie(), "Origin": "http://evil.example"}, "", 403},
		{"no Origin on events with a cookie", "GET", "/events", map[string]string{"Cookie": ts.cookie()}, "", 403},
		{"cross-site fetch metadata on events", "GET", "/events", map[string]string{"Cookie": ts.cookie(), "Sec-Fetch-Site": "cross-site"}, "", 403},
		// The ways in.
		{"login link", "GET", "/login?t=" + ts.Token(), nil, "", 303},
		{"page with the cookie", "GET", "/", map[string]string{"Cookie": ts.cookie()}, "", 200},
		{"page by localhost", "GET", "/projects", map[string]string{"Cookie": ts.cookie(), "Host": "localhost:" + port}, "", 200},
		{"API with bearer", "GET", "/api/agents", map[string]string{"Authorization": bearer}, "", 200},
		{"bearer POST without Origin", "POST", "/api/agents/pause", map[string]string{"Authorization": bearer}, `{"ids":["a-x"]}`, 202},
		{"page POST: own Origin and CSRF", "POST", "/api/agents/pause", map[string]string{"Cookie": ts.cookie(), "Origin": own, "X-Ctx-Csrf": ts.csrf}, `{"ids":["a-x"]}`, 202},
		{"unknown agent", "GET", "/api/agents/a-nobody", map[string]string{"Authorization": bearer}, "", 404},
	}
	refused, admitted := map[int]int{}, 0
	var matrix strings.Builder
	for _, c := range cases {
		resp := ts.req(c.method, c.path, c.hdr, c.body)
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		ok := resp.StatusCode == c.want
		mark := "ok  "
		if !ok {
			mark = "FAIL"
			t.Errorf("%s: %s %s → %d, want %d", c.name, c.method, c.path, resp.StatusCode, c.want)
		}
		fmt.Fprintf(&matrix, "  %s %-42s %-6s %-28.28s → %d\n", mark, c.name, c.method, c.path, resp.StatusCode)
		if c.want >= 400 && c.want != 404 {
			refused[c.want]++
		} else {
			admitted++
		}
		// Every answer, refusals included, carries the security headers and no CORS.
		h := resp.Header
		if !strings.Contains(h.Get("Content-Security-Policy"), "frame-ancestors 'none'") || h.Get("X-Content-Type-Options") != "nosniff" ||
			h.Get("Referrer-Policy") != "no-referrer" || h.Get("Access-Control-Allow-Origin") != "" {
			t.Errorf("%s: headers %v", c.name, h)
		}
		if c.want == 303 {
			ck := resp.Cookies()
			if len(ck) != 1 || !ck[0].HttpOnly || ck[0].SameSite != http.SameSiteStrictMode || ck[0].Path != "/" || resp.Header.Get("Location") != "/" {
				t.Errorf("login: cookie %+v, location %q", ck, resp.Header.Get("Location"))
			}
		}
	}
	t.Logf("security matrix: %d refused (401: %d, 421: %d, 403: %d), %d admitted\n%s",
		refused[401]+refused[421]+refused[403], refused[401], refused[421], refused[403], admitted, matrix.String())
}

// Agent text is rendered as text: a summary holding markup is escaped in the page
// and in the API's JSON it stays a string.
func TestAgentTextIsEscaped(t *testing.T) {
	ts := startServer(t)
	const evil = `<script>alert("x")</script><img src=x onerror=alert(1)>`
	now := time.Now().UTC()
	rec := &agents.Record{ID: "a-evil22", Name: "evil", Project: "01-checkout-redesign", State: agents.Paused, StateSince: now, CreatedAt: now,
		Tmux: agents.TmuxInfo{Kind: "tmux", Session: "ctx-a-evil22"}, LastError: evil}
	if err := ts.store.Create(rec); err != nil {
		t.Fatal(err)
	}
	if err := ts.store.WriteStatus(rec.ID, agents.Status{Activity: "idle", Summary: evil, At: now}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { _, ok := ts.hub.rowByID(rec.ID); return ok })
	for _, path := range []string{"/", "/agents/" + rec.ID} {
		resp := ts.req("GET", path, map[string]string{"Cookie": ts.cookie()}, "")
		b, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		page := string(b)
		if resp.StatusCode != 200 || strings.Contains(page, "<script>alert") || strings.Contains(page, "<img src=x") ||
			!strings.Contains(page, "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;") {
			t.Errorf("%s: %d, the summary is not escaped:\n%s", path, resp.StatusCode, page)
		}
	}
}

// sse reads one event stream.
type sse struct {
	resp *http.Response
	rd   *bufio.Reader
}

type sseEvent struct{ id, name, data string }

func (ts *testServer) events(lastID string) *sse {
	ts.t.Helper()
	hdr := map[string]string{"Authorization": "Bearer " + ts.Token()}
	if lastID != "" {
		hdr["Last-Event-ID"] = lastID
	}
	resp := ts.req("GET", "/events", hdr, "") //nolint:bodyclose // closed by the caller through sse.resp
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		ts.t.Fatalf("events: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	return &sse{resp: resp, rd: bufio.NewReader(resp.Body)}
}

// next returns the next event (comments counted in beats), failing after 5 s.
func (s *sse) next(t *testing.T) (ev sseEvent, beats int) {
	t.Helper()
	got := make(chan struct{})
	var err error
	go func() {
		defer close(got)
		for {
			var line string
			if line, err = s.rd.ReadString('\n'); err != nil {
				return
			}
			line = strings.TrimRight(line, "\n")
			switch {
			case line == "" && ev.name != "":
				return
			case strings.HasPrefix(line, ":"):
				beats++
			case strings.HasPrefix(line, "id: "):
				ev.id = line[4:]
			case strings.HasPrefix(line, "event: "):
				ev.name = line[7:]
			case strings.HasPrefix(line, "data: "):
				ev.data = line[6:]
			}
		}
	}()
	select {
	case <-got:
	case <-time.After(5 * time.Second):
		_ = s.resp.Body.Close()
		<-got
		t.Fatal("no event in 5 s")
	}
	if err != nil {
		t.Fatalf("event stream: %v", err)
	}
	return ev, beats
}

// The event stream: a snapshot first, then numbered events as the records change,
// heartbeats, the backlog after Last-Event-ID, and a snapshot for an id of another
// boot.
func TestEventStream(t *testing.T) {
	ts := startServer(t)
	s := ts.events("")
	defer s.resp.Body.Close()
	first, _ := s.next(t)
	if first.name != "snapshot" || !strings.HasPrefix(first.id, ts.hub.boot+"-") {
		t.Fatalf("first event %+v", first)
	}
	now := time.Now().UTC()
	rec := &agents.Record{ID: "a-watch2", Name: "watched", Project: "01-checkout-redesign", State: agents.Paused, StateSince: now, CreatedAt: now}
	if err := ts.store.Create(rec); err != nil {
		t.Fatal(err)
	}
	created, _ := s.next(t)
	if created.name != "agent.created" || !strings.Contains(created.data, `"group":"paused"`) {
		t.Fatalf("after a record appeared: %+v", created)
	}
	if err := ts.store.WriteStatus(rec.ID, agents.Status{Activity: "needs_input", Detail: "permission", At: now}); err != nil {
		t.Fatal(err)
	}
	changed, _ := s.next(t)
	if changed.name != "agent.state" {
		t.Fatalf("after a status change: %+v", changed)
	}
	// Reconnecting with the id of agent.created replays what came after it.
	r := ts.events(created.id)
	replay, _ := r.next(t)
	_ = r.resp.Body.Close()
	if replay.name != "agent.state" || replay.id != changed.id {
		t.Errorf("resume after %s got %+v, want %s", created.id, replay, changed.id)
	}
	o := ts.events("0000dead-3")
	other, _ := o.next(t)
	_ = o.resp.Body.Close()
	if other.name != "snapshot" || !strings.Contains(other.data, rec.ID) {
		t.Errorf("an id of another boot got %+v, want a snapshot with the agent", other)
	}
	if err := ts.store.Remove(rec.ID); err != nil {
		t.Fatal(err)
	}
	removed, _ := s.next(t)
	if removed.name != "agent.removed" {
		t.Errorf("after the record went: %+v", removed)
	}
	s.heartbeat(t)
	var snap snapshot
	if err := json.Unmarshal([]byte(first.data), &snap); err != nil {
		t.Errorf("snapshot data: %v", err)
	}
}

// heartbeat reads until a comment line (the heartbeat), failing after 2 s.
func (s *sse) heartbeat(t *testing.T) {
	t.Helper()
	got := make(chan bool, 1)
	go func() {
		for {
			line, err := s.rd.ReadString('\n')
			if err != nil || strings.HasPrefix(line, ":") {
				got <- err == nil
				return
			}
		}
	}()
	select {
	case ok := <-got:
		if !ok {
			t.Error("the stream ended before a heartbeat")
		}
	case <-time.After(2 * time.Second):
		_ = s.resp.Body.Close()
		<-got
		t.Error("no heartbeat in 2 s")
	}
}

// The server stops cleanly: Run returns when its context ends, with an event stream
// open, and leaves no goroutine behind.
func TestServerStopsCleanly(t *testing.T) {
	before := runtime.NumGoroutine()
	ts := startServer(t)
	s := ts.events("")
	if ev, _ := s.next(t); ev.name != "snapshot" {
		t.Fatalf("first event %+v", ev)
	}
	ts.stop()
	if _, err := io.ReadAll(s.resp.Body); err != nil {
		t.Logf("stream ended with %v", err)
	}
	_ = s.resp.Body.Close()
	ts.tr.CloseIdleConnections()
	var after int
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if after = runtime.NumGoroutine(); after <= before {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	buf := make([]byte, 1<<20)
	t.Fatalf("%d goroutines before, %d after the server stopped:\n%s", before, after, buf[:runtime.Stack(buf, true)])
}

func waitFor(t *testing.T, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met in 5 s")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// An agent that handed off shows its chain of sessions on its page: each link's
// reason, note size, check and the usage it handed off at.
func TestAgentPageShowsTheChain(t *testing.T) {
	ts := startServer(t)
	now := time.Now().UTC()
	ended := now.Add(-time.Minute)
	rec := &agents.Record{ID: "a-chain1", Name: "relay", Project: "01-checkout-redesign", State: agents.Paused, StateSince: now, CreatedAt: now,
		Tmux: agents.TmuxInfo{Kind: "tmux", Session: "ctx-a-chain1"},
		Chain: []agents.Link{
			{SessionID: "s-one", Reason: agents.ReasonStart, StartedAt: now.Add(-time.Hour), EndedAt: &ended, EndPercent: 91.2, EndTokens: 882000},
			{SessionID: "s-two", Reason: agents.ReasonContext, StartedAt: ended, NoteTokens: 457, Check: agents.CheckOK},
		}}
	if err := ts.store.Create(rec); err != nil {
		t.Fatal(err)
	}
	resp := ts.req("GET", "/agents/"+rec.ID, map[string]string{"Cookie": ts.cookie()}, "")
	b, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	page := string(b)
	for _, want := range []string{"<h2>Sessions</h2>", "<code>s-one</code> start", "handed off at 91% (882000 tokens)", "<code>s-two</code> context", "note 457 tokens, check ok"} {
		if !strings.Contains(page, want) {
			t.Errorf("the agent page lacks %q", want)
		}
	}
}
