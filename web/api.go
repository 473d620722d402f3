package web

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/ctxtools/ctx/agents"
	"github.com/ctxtools/ctx/hosts"
	"github.com/ctxtools/ctx/loader"
)

// maxBody bounds a request body: a prompt, a few ids.
const maxBody = 1 << 20

// routes are the pages, the API and the event stream. Everything here sits behind the
// security chain (Handler).
func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", s.agentsPage)
	mux.HandleFunc("GET /agents/{id}", s.agentPage)
	mux.HandleFunc("GET /projects", s.projectsPage)
	mux.HandleFunc("GET /terminals", s.terminalsPage)
	mux.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(staticFS)))
	mux.HandleFunc("GET /events", s.events)

	mux.HandleFunc("GET /api/agents", s.apiList)
	mux.HandleFunc("GET /api/agents/{id}", s.apiShow)
	mux.HandleFunc("POST /api/agents", s.apiStart)
	mux.HandleFunc("POST /api/agents/{id}/pause", s.apiPause)
	mux.HandleFunc("POST /api/agents/{id}/resume", s.apiResume)
	mux.HandleFunc("POST /api/agents/{id}/send", s.apiSend)
	mux.HandleFunc("POST /api/agents/{id}/keys", s.apiKeys)
	mux.HandleFunc("POST /api/agents/{id}/permission", s.apiPermission)
	mux.HandleFunc("GET /api/agents/{id}/diff", s.apiDiff)
	mux.HandleFunc("POST /api/agents/{id}/merge", s.apiMerge)
	mux.HandleFunc("DELETE /api/agents/{id}", s.apiRemove)
	mux.HandleFunc("POST /api/agents/pause", s.apiBulk("pause"))
	mux.HandleFunc("POST /api/agents/resume", s.apiBulk("resume"))
	return mux
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}

func writeError(w http.ResponseWriter, code int, err error) {
	writeJSON(w, code, map[string]string{"error": err.Error()})
}

// errorCode gives agent errors the HTTP codes of the CLI's exit codes: unknown agent
// 404, wrong state or "not now" 409.
func errorCode(err error) int {
	var pnf *loader.NotFoundError
	if errors.As(err, &pnf) {
		return http.StatusNotFound
	}
	switch agents.KindOf(err) {
	case agents.KindNotFound:
		return http.StatusNotFound
	case agents.KindBadInput, agents.KindNotNow:
		return http.StatusConflict
	}
	return http.StatusInternalServerError
}

// decode reads a JSON body into v; unknown keys are refused, so a typo is not ignored.
func decode(r *http.Request, v any) error {
	dec := json.NewDecoder(io.LimitReader(r.Body, maxBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("request body: %w", err)
	}
	return nil
}

// apiList is `ctx agents list --json`.
func (s *Server) apiList(w http.ResponseWriter, r *http.Request) {
	views, _ := s.agents.List()
	s.agents.AddSpent(views)
	remote, _ := s.fleet.views()
	views = append(views, remote...)
	if views == nil {
		views = []agents.View{}
	}
	writeJSON(w, http.StatusOK, views)
}

func (s *Server) apiShow(w http.ResponseWriter, r *http.Request) {
	rec, err := s.agents.Get(r.PathValue("id"))
	if err != nil {
		writeError(w, errorCode(err), err)
		return
	}
	writeJSON(w, http.StatusOK, s.agents.Detail(rec))
}

// startRequest is what the API may choose of a start: never the program, never its
// flags beyond these, each checked.
type startRequest struct {
	Project        string `json:"project"`
	Name           string `json:"name"`
	Cwd            string `json:"cwd"`
	Prompt         string `json:"prompt"`
	PermissionMode string `json:"permission_mode"`
	Model          string `json:"model"`
	AutoApprove    bool   `json:"auto_approve"`
}

// webModes are the permission modes the dashboard may start claude in:
// bypassPermissions is left to the command line.
var webModes = map[string]bool{"": true, "default": true, "acceptEdits": true, "plan": true, "auto": true, "dontAsk": true}

var modelRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:\[\]-]{0,79}$`) })

// apiStart starts an agent: the configured claude, with the arguments ctx builds. It
// answers once claude is launched (201); its session start comes as an event.
func (s *Server) apiStart(w http.ResponseWriter, r *http.Request) {
	var req startRequest
	if err := decode(r, &req); err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	if !webModes[req.PermissionMode] {
		writeError(w, http.StatusBadRequest, fmt.Errorf("permission_mode %q: one of default, acceptEdits, plan, auto, dontAsk", req.PermissionMode))
		return
	}
	if req.Model != "" && !modelRe().MatchString(req.Model) {
		writeError(w, http.StatusBadRequest, fmt.Errorf("model %q: not a model name", req.Model))
		return
	}
	cwd, err := s.insideWorkspace(req.Cwd)
	if err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	p, err := s.ws.Resolve(req.Project)
	if err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	if s.opsCtx.Err() != nil {
		writeError(w, http.StatusServiceUnavailable, errors.New("the server is stopping"))
		return
	}
	rec, err := s.agents.Start(agents.StartOptions{Project: p, Name: req.Name, Cwd: cwd, Prompt: req.Prompt,
		PermissionMode: req.PermissionMode, Model: req.Model, AutoApprove: req.AutoApprove, NoWait: true})
	if err != nil {
		code := errorCode(err)
		if code == http.StatusInternalServerError && rec == nil {
			code = http.StatusBadRequest
		}
		writeError(w, code, err)
		return
	}
	s.agents.Store.Feed(rec.ID, "agent.action", map[string]any{"op": "start", "source": "web"})
	s.pokeWatch()
	writeJSON(w, http.StatusCreated, rec)
}

// insideWorkspace keeps a start from the page in the workspace: "" is its root.
func (s *Server) insideWorkspace(cwd string) (string, error) {
	if strings.TrimSpace(cwd) == "" {
		return s.ws.Root, nil
	}
	if !filepath.IsAbs(cwd) {
		cwd = filepath.Join(s.ws.Root, cwd)
	}
	real, err := filepath.EvalSymlinks(cwd)
	if err != nil {
		return "", fmt.Errorf("cwd %s: %w", cwd, err)
	}
	root, err := filepath.EvalSymlinks(s.ws.Root)
	if err != nil {
		return "", err
	}
	if rel, err := filepath.Rel(root, real); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(os.PathSeparator)) {
		return "", fmt.Errorf("cwd %s: outside the workspace; start agents elsewhere with `ctx agents start --cwd`", cwd)
	}
	return real, nil
}

type pauseRequest struct {
	Force bool `json:"force"`
}

type resumeRequest struct {
	Prompt string `json:"prompt"`
	Fresh  bool   `json:"fresh"`
}

// accepted is the answer to an operation that finishes later, through events.
type accepted struct {
	ID string `json:"id"`
	Op string `json:"op"`
}

func (s *Server) apiPause(w http.ResponseWriter, r *http.Request) {
	var req pauseRequest
	if err := decode(r, &req); err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	if h, ok := s.remote(r.PathValue("id")); ok {
		args := []string{}
		if req.Force {
			args = append(args, "--force")
		}
		s.acceptRemote(w, h, r.PathValue("id"), "pause", args...)
		return
	}
	rec, err := s.agents.Get(r.PathValue("id"))
	if err == nil {
		err = s.pause(rec, req.Force)
	}
	if err != nil {
		writeError(w, errorCode(err), err)
		return
	}
	writeJSON(w, http.StatusAccepted, accepted{ID: rec.ID, Op: "pause"})
}

func (s *Server) apiResume(w http.ResponseWriter, r *http.Request) {
	var req resumeRequest
	if err := decode(r, &req); err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	if h, ok := s.remote(r.PathValue("id")); ok {
		args := []string{}
		if p := strings.TrimSpace(req.Prompt); p != "" {
			args = append(args, "--prompt", p)
		}
		if req.Fresh {
			args = append(args, "--fresh")
		}
		s.acceptRemote(w, h, r.PathValue("id"), "resume", args...)
		return
	}
	rec, err := s.agents.Get(r.PathValue("id"))
	if err == nil {
		err = s.resume(rec, agents.ResumeOptions{Prompt: strings.TrimSpace(req.Prompt), Fresh: req.Fresh})
	}
	if err != nil {
		writeError(w, errorCode(err), err)
		return
	}
	writeJSON(w, http.StatusAccepted, accepted{ID: rec.ID, Op: "resume"})
}

// remote reports whether id names an agent of another host (none of this machine's).
func (s *Server) remote(id string) (*hosts.Host, bool) {
	// Only an agent this machine does not have is looked for elsewhere: an ambiguous
	// name or a broken record here is this machine's answer.
	if _, err := s.agents.Get(id); agents.KindOf(err) != agents.KindNotFound {
		return nil, false
	}
	return s.hostOf(id)
}

// acceptRemote runs op on an agent of another host in the background: 202, and the
// outcome comes with the host's next event (or an agent.op_failed).
func (s *Server) acceptRemote(w http.ResponseWriter, h *hosts.Host, id, op string, args ...string) {
	if err := s.remoteOp(h, id, op, args...); err != nil {
		writeError(w, errorCode(err), err)
		return
	}
	writeJSON(w, http.StatusAccepted, accepted{ID: id, Op: op})
}

// pause checks what can be checked now and runs the pause in the background.
func (s *Server) pause(rec *agents.Record, force bool) error {
	if _, err := agents.Next(rec.State, agents.EvPause); err != nil {
		return err
	}
	return s.startOp(rec.ID, "pause", func() error {
		_, err := s.agents.Pause(rec, agents.PauseOptions{Wait: s.opts.PauseWait, Force: force, Reason: "user"})
		return err
	})
}

func (s *Server) resume(rec *agents.Record, o agents.ResumeOptions) error {
	if _, err := agents.Next(rec.State, agents.EvResume); err != nil {
		return err
	}
	return s.startOp(rec.ID, "resume", func() error {
		_, _, err := s.agents.Resume(rec, o)
		return err
	})
}

// startOp runs an operation on an agent in a goroutine the server owns (Shutdown
// waits for it); one operation per agent at a time. A failure becomes an
// agent.op_failed event; the outcome otherwise shows in the record.
func (s *Server) startOp(id, op string, run func() error) error {
	s.opMu.Lock()
	defer s.opMu.Unlock()
	if s.opsCtx.Err() != nil {
		return errors.New("the server is stopping")
	}
	if cur, busy := s.inFlight[id]; busy {
		return &agents.NotNowError{Msg: fmt.Sprintf("agent %s: a %s from the dashboard is in progress", id, cur)}
	}
	s.inFlight[id] = op
	s.agents.Store.Feed(id, "agent.action", map[string]any{"op": op, "source": "web"})
	s.ops.Add(1)
	go func() {
		defer s.ops.Done()
		err := run()
		s.opMu.Lock()
		delete(s.inFlight, id)
		s.opMu.Unlock()
		if err != nil {
			s.hub.publish("agent.op_failed", map[string]any{"id": id, "op": op, "error": err.Error()})
		}
		s.pokeWatch()
	}()
	s.pokeWatch()
	return nil
}

func (s *Server) busy() map[string]string {
	s.opMu.Lock()
	defer s.opMu.Unlock()
	out := make(map[string]string, len(s.inFlight))
	for k, v := range s.inFlight {
		out[k] = v
	}
	return out
}

type sendRequest struct {
	Text string `json:"text"`
}

// apiSend types one line into an idle agent; anything else is refused by agents.Send.
func (s *Server) apiSend(w http.ResponseWriter, r *http.Request) {
	var req sendRequest
	if err := decode(r, &req); err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	if h, ok := s.remote(r.PathValue("id")); ok {
		if strings.ContainsAny(req.Text, "\r\n") || strings.TrimSpace(req.Text) == "" {
			writeError(w, http.StatusBadRequest, fmt.Errorf("send: one line of text"))
			return
		}
		s.acceptRemote(w, h, r.PathValue("id"), "send", "--", req.Text)
		return
	}
	rec, err := s.agents.Get(r.PathValue("id"))
	if err == nil {
		err = s.agents.Send(rec, req.Text)
	}
	if err != nil {
		code := errorCode(err)
		if code == http.StatusInternalServerError {
			code = http.StatusBadRequest
		}
		writeError(w, code, err)
		return
	}
	s.agents.Store.Feed(rec.ID, "agent.action", map[string]any{"op": "send", "source": "web"})
	writeJSON(w, http.StatusOK, map[string]any{"id": rec.ID, "sent": true})
}

// apiRemove stops an agent and deletes its record; a working agent is refused (409).
func (s *Server) apiRemove(w http.ResponseWriter, r *http.Request) {
	if h, ok := s.remote(r.PathValue("id")); ok {
		s.acceptRemote(w, h, r.PathValue("id"), "rm")
		return
	}
	rec, err := s.agents.Get(r.PathValue("id"))
	if err == nil {
		if op := s.busy()[rec.ID]; op != "" {
			err = &agents.NotNowError{Msg: fmt.Sprintf("agent %s: a %s is in progress", rec.ID, op)}
		}
	}
	if err == nil {
		s.agents.Store.Feed(rec.ID, "agent.action", map[string]any{"op": "remove", "source": "web"})
		err = s.agents.Remove(rec, false)
	}
	if err != nil {
		writeError(w, errorCode(err), err)
		return
	}
	s.pokeWatch()
	writeJSON(w, http.StatusOK, map[string]any{"id": rec.ID, "removed": true})
}

type bulkRequest struct {
	IDs []string `json:"ids"`
	All bool     `json:"all"` // every active agent (pause) or every paused one (resume)
}

type bulkResult struct {
	Accepted []string          `json:"accepted"`
	Refused  map[string]string `json:"refused"`
}

// apiBulk pauses or resumes several agents: each accepted one finishes through
// events, each refused one says why.
func (s *Server) apiBulk(op string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var req bulkRequest
		if err := decode(r, &req); err != nil {
			writeError(w, http.StatusBadRequest, err)
			return
		}
		ids := req.IDs
		if req.All {
			views, _ := s.agents.List()
			for _, v := range views {
				if op == "pause" && v.State == agents.Active || op == "resume" && v.State == agents.Paused {
					ids = append(ids, v.ID)
				}
			}
		}
		if len(ids) == 0 {
			writeError(w, http.StatusBadRequest, errors.New("no agents: give ids, or all"))
			return
		}
		res := bulkResult{Accepted: []string{}, Refused: map[string]string{}}
		for _, id := range ids {
			rec, err := s.agents.Get(id)
			if err == nil {
				if op == "pause" {
					err = s.pause(rec, false)
				} else {
					err = s.resume(rec, agents.ResumeOptions{})
				}
			}
			if err != nil {
				res.Refused[id] = err.Error()
				continue
			}
			res.Accepted = append(res.Accepted, rec.ID)
		}
		writeJSON(w, http.StatusAccepted, res)
	}
}
