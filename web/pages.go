package web

import (
	"bufio"
	"bytes"
	"embed"
	"encoding/json"
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
)

//go:embed assets
var assets embed.FS

// staticFS is the CSS and the script, served under /static/.
var staticFS, _ = fs.Sub(assets, "assets/static")

// pages are the templates. Agent text reaches them only as strings, which
// html/template escapes: no template.HTML is ever made from agent data.
type pages struct {
	agents, agent, projects *template.Template
}

func newPages() (*pages, error) {
	funcs := template.FuncMap{
		"ago":  func(t time.Time) string { return agents.Age(time.Since(t)) },
		"time": func(t time.Time) string { return t.Local().Format(time.DateTime) },
		"mb":   func(kb int64) int64 { return kb / 1024 },
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
	return &p, nil
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
	Row      Row
	Rec      *agents.Record
	Detail   agents.Detail
	Screen   string
	Timeline []feedLine
	Next     string
	Tasks    []loader.PendingTask
	Blank    Row
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
		v.Row.RSSKB = row.RSSKB
	}
	if rec.State.Running() {
		v.Screen, _ = s.agents.Tmux.Capture(rec.Tmux.Session, false)
	} else if text, err := s.agents.Logs(rec); err == nil {
		v.Screen = lastLines(text, 60)
	}
	v.Screen = strings.TrimRight(v.Screen, "\n ")
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

// Text is the line's details as key=value pairs.
func (f feedLine) Text() string {
	var parts []string
	for k, v := range f.Rest {
		if k == "at" || k == "agent" || k == "event" {
			continue
		}
		b, _ := json.Marshal(v)
		parts = append(parts, k+"="+string(b))
	}
	sort.Strings(parts)
	return strings.Join(parts, " ")
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
	Agents int
}

func (s *Server) projectsPage(w http.ResponseWriter, r *http.Request) {
	all, err := s.ws.Scan(loader.ReadOptions{Progress: true})
	if err != nil {
		http.Error(w, "ctx serve: "+err.Error(), http.StatusInternalServerError)
		return
	}
	count := map[string]int{}
	for _, row := range s.hub.Rows() {
		count[row.Project]++
	}
	var rows []projectRow
	for _, p := range all {
		rows = append(rows, projectRow{Project: p, Agents: count[p.ID]})
	}
	s.render(w, s.pages.projects, page{Title: "Projects · ctx", Page: "projects", Data: struct {
		Projects []projectRow
		Root     string
	}{rows, s.ws.Root}})
}
