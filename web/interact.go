package web

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/ctxtools/ctx/agents"
	"github.com/ctxtools/ctx/gitstate"
	"github.com/ctxtools/ctx/guard"
	"github.com/ctxtools/ctx/internal/events"
	"github.com/ctxtools/ctx/internal/state"
)

// What a person does to an agent's session from the page, beyond the lifecycle: type
// into its terminal, and answer the permission prompt it waits on.

// keysRequest is POST /api/agents/{id}/keys: what was typed, in order. Each item is
// text ({"text": "fix the tests"}) or a named key ({"key": "Enter"}, "C-c").
type keysRequest struct {
	Keys []struct {
		Text string `json:"text,omitempty"`
		Key  string `json:"key,omitempty"`
	} `json:"keys"`
}

// maxKeys bounds one request's items (a paste is one text item).
const maxKeys = 256

func (s *Server) apiKeys(w http.ResponseWriter, r *http.Request) {
	var req keysRequest
	if err := decode(r, &req); err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	if len(req.Keys) > maxKeys {
		writeError(w, http.StatusBadRequest, fmt.Errorf("keys: at most %d in one request", maxKeys))
		return
	}
	keys := make([]agents.Keystroke, 0, len(req.Keys))
	for _, k := range req.Keys {
		if (k.Text == "") == (k.Key == "") {
			writeError(w, http.StatusBadRequest, errors.New(`keys: each item is {"text": …} or {"key": …}`))
			return
		}
		keys = append(keys, agents.Keystroke{Value: k.Text + k.Key, Named: k.Key != ""})
	}
	if _, ok := s.remote(r.PathValue("id")); ok {
		writeError(w, http.StatusBadRequest, errors.New("keys: the terminal of an agent on another host is read-only here; open it with ctx agents open --host"))
		return
	}
	rec, err := s.agents.Get(r.PathValue("id"))
	if err == nil {
		err = s.agents.Type(rec, keys)
	}
	if err != nil {
		writeError(w, apiCode(err), err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"id": rec.ID, "typed": len(keys)})
}

// permissionRequest is POST /api/agents/{id}/permission: the answer, and the prompt
// it answers (the row's activity_at).
type permissionRequest struct {
	Allow bool      `json:"allow"`
	At    time.Time `json:"at"`
}

func (s *Server) apiPermission(w http.ResponseWriter, r *http.Request) {
	var req permissionRequest
	if err := decode(r, &req); err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	if req.At.IsZero() {
		writeError(w, http.StatusBadRequest, errors.New(`permission: "at" names the prompt answered (the row's activity_at)`))
		return
	}
	if _, ok := s.remote(r.PathValue("id")); ok {
		writeError(w, http.StatusBadRequest, errors.New("permission: answer the prompt of an agent on another host in its terminal (ctx agents open --host)"))
		return
	}
	rec, err := s.agents.Get(r.PathValue("id"))
	var st agents.Status
	if err == nil {
		st, err = s.agents.AnswerPermission(rec, agents.PermissionAnswer{Allow: req.Allow, At: req.At})
	}
	if err != nil {
		writeError(w, apiCode(err), err)
		return
	}
	decision := guard.Deny
	if req.Allow {
		decision = guard.Allow
	}
	// The session's audit log holds every answer to a permission prompt: ctx's own
	// (auto-approve) and now the person's.
	if path, err := state.Open(s.ws, nil).Session(st.SessionID).AuditFile(); err == nil {
		_ = guard.AppendAudit(path, guard.AuditEntry{Time: time.Now().UTC(), Session: st.SessionID, Tool: st.Tool,
			Summary: guard.Request{Tool: st.Tool, Command: st.Input, File: st.Input}.Summary(), Decision: decision,
			Rule: "dashboard", Reason: "answered in ctx serve"})
	}
	s.pokeWatch()
	writeJSON(w, http.StatusOK, map[string]any{"id": rec.ID, "allow": req.Allow, "tool": st.Tool})
}

// apiCode is an agent operation's error as a status code; a failure that is not the
// server's is the request's.
func apiCode(err error) int {
	if code := errorCode(err); code != http.StatusInternalServerError {
		return code
	}
	return http.StatusBadRequest
}

var errReadOnly = errors.New("this dashboard is read-only (ctx serve --read-only)")

// guardOpinions says, for each agent waiting to run a Bash command, what ctx's guard
// makes of it: "" when it has no objection, else its reason. The answer is kept per
// agent and command, so the rules are read once per prompt.
func (s *Server) guardOpinions(views []agents.View) map[string]string {
	out := map[string]string{}
	seen := map[string]bool{}
	for _, v := range views {
		st := v.Activity
		if v.State != agents.Active || st.Detail != "permission" || st.Tool != "Bash" || st.Input == "" {
			continue
		}
		key := v.ID + "\x00" + st.Input
		seen[key] = true
		if said, ok := s.opinions[key]; ok {
			out[v.ID] = said
			continue
		}
		rules, _ := events.GuardFor(s.ws, events.GuardAt{Cwd: v.Cwd, Dirty: gitstate.Dirty, Unique: gitstate.UniqueCommits})
		said := "ok"
		if verdict := rules.Check(st.Input); verdict.Deny {
			said = strings.TrimSpace(verdict.Reason)
		}
		s.opinions[key] = said
		out[v.ID] = said
	}
	for k := range s.opinions {
		if !seen[k] {
			delete(s.opinions, k)
		}
	}
	return out
}

// apiDiff is ctx agents diff --json: the agent's branch and worktree against the
// branch it started from.
func (s *Server) apiDiff(w http.ResponseWriter, r *http.Request) {
	if _, ok := s.remote(r.PathValue("id")); ok {
		writeError(w, http.StatusBadRequest, errors.New("diff: for an agent on another host, run ctx agents diff --host"))
		return
	}
	rec, err := s.agents.Get(r.PathValue("id"))
	var rv *agents.Review
	if err == nil {
		rv, err = s.agents.Review(rec, r.URL.Query().Get("into"))
	}
	if err != nil {
		writeError(w, apiCode(err), err)
		return
	}
	writeJSON(w, http.StatusOK, rv)
}

// mergeRequest is POST /api/agents/{id}/merge.
type mergeRequest struct {
	Squash bool   `json:"squash"`
	Into   string `json:"into,omitempty"`
}

// apiMerge is ctx agents merge: it answers when the merge is done (a few git calls).
func (s *Server) apiMerge(w http.ResponseWriter, r *http.Request) {
	var req mergeRequest
	if err := decode(r, &req); err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	if _, ok := s.remote(r.PathValue("id")); ok {
		writeError(w, http.StatusBadRequest, errors.New("merge: for an agent on another host, run ctx agents merge --host"))
		return
	}
	rec, err := s.agents.Get(r.PathValue("id"))
	var res *agents.MergeResult
	if err == nil {
		res, err = s.agents.Merge(rec, agents.MergeOptions{Squash: req.Squash, Into: req.Into})
	}
	if err != nil {
		writeError(w, apiCode(err), err)
		return
	}
	s.agents.Store.Feed(rec.ID, "agent.action", map[string]any{"op": "merge", "source": "web"})
	writeJSON(w, http.StatusOK, res)
}
