package web

import (
	"bufio"
	"bytes"
	"cmp"
	"embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/ctxtools/ctx/agents"
	"github.com/ctxtools/ctx/hosts"
	"github.com/ctxtools/ctx/internal/shquote"
	"github.com/ctxtools/ctx/loader"
	"github.com/ctxtools/ctx/usage"
)

//go:embed assets
var assets embed.FS

// staticFS is the CSS and the script, served under /static/.
var staticFS, _ = fs.Sub(assets, "assets/static")

// pages are the templates. Agent text reaches them only as strings, which
// html/template escapes: no template.HTML is ever made from agent data.
type pages struct {
	agents, agent, projects, terminals, signin *template.Template
}

func newPages() (*pages, error) {
	funcs := template.FuncMap{
		"ago":   func(t time.Time) string { return agents.Age(time.Since(t)) },
		"time":  func(t time.Time) string { return t.Local().Format(time.DateTime) },
		"mb":    func(kb int64) int64 { return kb / 1024 },
		"sha":   agents.ShortSHA,
		"patch": patchLines,
	}
	parse := func(name string) (*template.Template, error) {
		return template.New("layout.html").Funcs(funcs).ParseFS(assets, "assets/layout.html", "assets/row.html", "assets/"+name)
	}
	var p pages
	var err error
	if p.agents, err = parse("agents.html"); err != nil {
		return nil, err
	}
	if p.agent, err = parse("agent.html"); err != nil {
		return nil, err
	}
	if p.projects, err = parse("projects.html"); err != nil {
		return nil, err
	}
	if p.terminals, err = parse("terminals.html"); err != nil {
		return nil, err
	}
	if p.signin, err = template.ParseFS(assets, "assets/signin.html"); err != nil {
		return nil, err
	}
	return &p, nil
}

// signIn is the page a browser without the token gets: a field for the token, posted
// to /login (security.go).
func (s *Server) signIn(w http.ResponseWriter, code int, problem string) {
	var b bytes.Buffer
	if err := s.pages.signin.Execute(&b, struct{ Error string }{problem}); err != nil {
		refuse(w, http.StatusInternalServerError, "ctx serve: render: "+err.Error())
		return
	}
	securityHeaders(w)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(code)
	_, _ = w.Write(b.Bytes())
}

// page is what every page's layout needs.
type page struct {
	Title      string
	Page       string
	AgentID    string
	CSRF       string
	NeedsInput int
	Data       any
}

func (s *Server) render(w http.ResponseWriter, t *template.Template, p page) {
	p.CSRF = s.csrf
	p.NeedsInput = snapshotOf(s.hub.Rows()).NeedsInput
	var b bytes.Buffer
	if err := t.Execute(&b, p); err != nil {
		http.Error(w, "ctx serve: render: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = w.Write(b.Bytes())
}

type groupView struct {
	Key, Title string
	Rows       []Row
}

func (s *Server) agentsPage(w http.ResponseWriter, r *http.Request) {
	rows := s.hub.Rows()
	var gs []groupView
	for _, g := range groups {
		gv := groupView{Key: g.Key, Title: g.Title}
		for _, row := range rows {
			if row.Group == g.Key {
				gv.Rows = append(gv.Rows, row)
			}
		}
		gs = append(gs, gv)
	}
	s.render(w, s.pages.agents, page{Title: "ctx", Page: "agents", Data: struct {
		Groups []groupView
		Empty  bool
		Blank  Row
	}{gs, len(rows) == 0, Row{}}})
}

// agentView is the Agent page: the row, the screen, what the pause kept, the resume
// prompt, the timeline and the project's next steps.
type agentView struct {
	Row    Row
	Rec    *agents.Record
	Detail agents.Detail
	Screen string
	// Interactive: keys may be typed into its terminal (a local agent, a server that
	// is not read-only).
	Interactive bool
	// Review is what an agent on its own branch changed (nil without a worktree),
	// and ReviewError why it could not be read.
	Review      *agents.Review
	ReviewError string
	Timeline    []feedLine
	Next        string
	Tasks       []loader.PendingTask
	Blank       Row
}

func (s *Server) agentPage(w http.ResponseWriter, r *http.Request) {
	rec, err := s.agents.Get(r.PathValue("id"))
	if err != nil {
		if h, ok := s.hostOf(r.PathValue("id")); ok {
			s.remoteAgentPage(w, r, h, r.PathValue("id"))
			return
		}
		http.Error(w, "ctx serve: "+err.Error(), errorCode(err))
		return
	}
	v := agentView{Rec: rec, Detail: s.agents.Detail(rec)}
	v.Row = rowOf(agents.View{Record: rec, Activity: v.Detail.Activity})
	if row, ok := s.hub.rowByID(rec.ID); ok {
		v.Row.RSSKB, v.Row.Context, v.Row.Guard, v.Row.Tokens = row.RSSKB, row.Context, row.Guard, row.Tokens
		v.Row.texts()
	}
	if rec.State.Running() {
		v.Screen, _ = s.agents.Tmux.Capture(rec.Tmux.Session, false)
	} else if text, err := s.agents.Logs(rec); err == nil {
		v.Screen = lastLines(text, 60)
	}
	v.Screen = strings.TrimRight(v.Screen, "\n ")
	v.Interactive = !s.opts.ReadOnly
	if rec.Worktree != nil {
		if rv, err := s.agents.Review(rec, ""); err != nil {
			v.ReviewError = err.Error()
		} else {
			v.Review = rv
		}
	}
	v.Timeline = s.timeline(rec.ID, 30)
	if p, err := s.ws.Resolve(rec.Project); err == nil {
		res := s.ws.Load(p, loader.LoadOptions{})
		if res.Resume != nil {
			v.Next = res.Resume.NextAction
		}
		v.Tasks = res.PendingTasks[:min(5, len(res.PendingTasks))]
	}
	s.render(w, s.pages.agent, page{Title: rec.Name + " · ctx", Page: "agent", AgentID: rec.ID, Data: v})
}

// remoteAgentPage is the Agent page of an agent on another host: its detail and its
// screen asked of the host (ctx agents show and logs there), the project's next steps
// from this workspace (the same repository).
func (s *Server) remoteAgentPage(w http.ResponseWriter, r *http.Request, h *hosts.Host, id string) {
	out, err := s.opts.SSH.Run(r.Context(), *h, "agents", "show", "--host", hosts.Local, id, "--json")
	var d agents.Detail
	if err == nil {
		err = json.Unmarshal(out, &d)
	}
	if err != nil {
		http.Error(w, "ctx serve: "+err.Error(), http.StatusBadGateway)
		return
	}
	d.Host = h.Name
	d.Attach = shquote.Join([]string{"ctx", "agents", "open", d.Name, "--host", h.Name})
	v := agentView{Rec: d.Record, Detail: d}
	v.Row = rowOf(agents.View{Record: d.Record, Activity: d.Activity})
	if text, err := s.opts.SSH.Run(r.Context(), *h, "agents", "logs", "--host", hosts.Local, id); err == nil {
		v.Screen = strings.TrimRight(lastLines(string(text), 60), "\n ")
	}
	if p, err := s.ws.Resolve(d.Project); err == nil {
		res := s.ws.Load(p, loader.LoadOptions{})
		if res.Resume != nil {
			v.Next = res.Resume.NextAction
		}
		v.Tasks = res.PendingTasks[:min(5, len(res.PendingTasks))]
	}
	s.render(w, s.pages.agent, page{Title: d.Name + " on " + h.Name + " · ctx", Page: "agent", AgentID: d.ID, Data: v})
}

func lastLines(text string, n int) string {
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// feedLine is one line of the agents' feed, as the timeline shows it.
type feedLine struct {
	At    time.Time      `json:"at"`
	Agent string         `json:"agent"`
	Event string         `json:"event"`
	Rest  map[string]any `json:"-"`
}

// Text is the line as a sentence: what happened, with the details that matter.
func (f feedLine) Text() string {
	str := func(k string) string { s, _ := f.Rest[k].(string); return s }
	num := func(k string) int64 { n, _ := f.Rest[k].(float64); return int64(n) }
	from := func() string {
		switch str("source") {
		case "web":
			return " from the dashboard"
		case "":
			return ""
		}
		return " (" + str("source") + ")"
	}
	if st := str("state"); st != "" && !strings.HasPrefix(f.Event, "agent.") {
		// A transition: its own "event" (what moved it) shadows the line's.
		return "now " + st + " (" + f.Event + ")"
	}
	switch f.Event {
	case "agent.created":
		return "started on " + str("project")
	case "agent.state":
		return "now " + str("state") + " (" + str("event") + ")"
	case "agent.action":
		return str("op") + " asked" + from()
	case "agent.paused":
		out := "paused (" + str("reason") + ")"
		if kb := num("rss_freed_kb"); kb > 0 {
			out += fmt.Sprintf(", freed %d MB", kb/1024)
		}
		return out
	case "agent.resumed":
		if b, _ := f.Rest["fresh"].(bool); b {
			return "resumed in a fresh session"
		}
		return "resumed in the same conversation"
	case "agent.sent":
		return fmt.Sprintf("a line of %d characters sent", num("chars"))
	case "agent.typed":
		return fmt.Sprintf("typed into: %d characters, %d keys", num("chars"), num("keys"))
	case "agent.permission":
		verb := "denied"
		if b, _ := f.Rest["allow"].(bool); b {
			verb = "allowed once"
		}
		return verb + " from the dashboard: " + str("tool") + " " + str("summary")
	case "agent.handoff_requested":
		return fmt.Sprintf("handoff asked at %d%% of the context", num("percent"))
	case "agent.handoff":
		return "handing off (" + str("reason") + ")"
	case "agent.handed_off":
		return fmt.Sprintf("handed off to a fresh session with a note of %d tokens", num("note_tokens"))
	case "agent.handoff_checked":
		return "the fresh session took the note"
	case "agent.handoff_deferred", "agent.attention":
		return strings.TrimPrefix(f.Event, "agent.") + ": " + cmp.Or(str("why"), str("error"))
	case "agent.op_failed":
		return str("op") + " failed: " + str("error")
	case "agent.removed":
		return "removed"
	}
	var parts []string
	for k, v := range f.Rest {
		if k == "at" || k == "agent" || k == "event" {
			continue
		}
		b, _ := json.Marshal(v)
		parts = append(parts, k+"="+string(b))
	}
	sort.Strings(parts)
	return strings.TrimSpace(strings.TrimPrefix(f.Event, "agent.") + " " + strings.Join(parts, " "))
}

// timeline is the newest n feed lines of an agent, newest first. A torn or foreign
// line is skipped.
func (s *Server) timeline(id string, n int) []feedLine {
	f, err := os.Open(filepath.Join(s.agents.Store.Dir, "feed.jsonl"))
	if err != nil {
		return nil
	}
	defer func() { _ = f.Close() }()
	var out []feedLine
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if !bytes.Contains(sc.Bytes(), []byte(`"`+id+`"`)) {
			continue
		}
		var l feedLine
		if json.Unmarshal(sc.Bytes(), &l) != nil || l.Agent != id {
			continue
		}
		_ = json.Unmarshal(sc.Bytes(), &l.Rest)
		out = append(out, l)
	}
	out = out[max(0, len(out)-n):]
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}

type projectRow struct {
	*loader.Project
	Agents                  int
	TokensText, TokensTitle string
}

func (s *Server) projectsPage(w http.ResponseWriter, r *http.Request) {
	all, err := s.ws.Scan(loader.ReadOptions{Progress: true})
	if err != nil {
		http.Error(w, "ctx serve: "+err.Error(), http.StatusInternalServerError)
		return
	}
	count := map[string]int{}
	spent := map[string]agents.Spent{}
	var today usage.Tokens
	for _, row := range s.hub.Rows() {
		count[row.Project]++
		sp := spent[row.Project]
		sp.All, sp.Today = sp.All.Add(row.Tokens.All), sp.Today.Add(row.Tokens.Today)
		spent[row.Project] = sp
		today = today.Add(row.Tokens.Today)
	}
	var rows []projectRow
	for _, p := range all {
		pr := projectRow{Project: p, Agents: count[p.ID]}
		if sp := spent[p.ID]; sp.All.Total() > 0 {
			pr.TokensText = usage.Brief(sp.Today.Total()) + " tokens today, " + usage.Brief(sp.All.Total()) + " in all"
			pr.TokensTitle = "as billed, today: " + sp.Today.Parts() + "; in all: " + sp.All.Parts()
		}
		rows = append(rows, pr)
	}
	data := struct {
		Projects          []projectRow
		Root              string
		Today, TodayTitle string
	}{Projects: rows, Root: s.ws.Root}
	if today.Total() > 0 {
		data.Today, data.TodayTitle = usage.Brief(today.Total())+" tokens ("+today.Parts()+")", "as billed: four counts at four prices"
	}
	s.render(w, s.pages.projects, page{Title: "Projects · ctx", Page: "projects", Data: data})
}

// patchLine is a line of a patch and how the page marks it.
type patchLine struct{ Class, Text string }

// patchLines splits a patch for the page, each line marked (agents.PatchLine).
func patchLines(patch string) []patchLine {
	var out []patchLine
	for line := range strings.Lines(patch) {
		line = strings.TrimRight(line, "\n")
		out = append(out, patchLine{agents.PatchLine(line), line})
	}
	return out
}

// terminalsPage shows the terminal of every agent running here, read-only, at most
// maxScreens of them (one event stream carries them all).
func (s *Server) terminalsPage(w http.ResponseWriter, r *http.Request) {
	var live []Row
	for _, row := range s.hub.Rows() {
		if row.Host == agents.LocalHost && agents.State(row.State).Running() && len(live) < maxScreens {
			live = append(live, row)
		}
	}
	s.render(w, s.pages.terminals, page{Title: "Terminals · ctx", Page: "terminals", Data: live})
}
