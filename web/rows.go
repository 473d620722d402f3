package web

import (
	"cmp"
	"fmt"
	"strings"
	"time"

	"github.com/ctxtools/ctx/agents"
	"github.com/ctxtools/ctx/usage"
)

// Row is an agent as the Agents page shows it, and the data of its events: the page's
// script redraws a row from it alone. Every string in it is agent data, so it is only
// ever rendered escaped (html/template, or textContent in the script).
type Row struct {
	ID   string `json:"id"`
	Host string `json:"host"` // "local", or the host it runs on
	// Unreachable: its host does not answer; the row is what was last heard.
	Unreachable bool   `json:"unreachable,omitempty"`
	Name        string `json:"name"`
	Project     string `json:"project"`
	Context     string `json:"context,omitempty"` // how full an active agent's context is: "42%"
	State       string `json:"state"`
	Group       string `json:"group"`
	Label       string `json:"label"` // state, and the activity of an active agent
	Activity    string `json:"activity"`
	Detail      string `json:"detail,omitempty"`
	Tool        string `json:"tool,omitempty"`
	Summary     string `json:"summary"`
	// Input is what a tool waiting on a permission prompt would run or change, and
	// Guard what ctx's guard says of a command: "ok" or why it would refuse it.
	Input     string `json:"input,omitempty"`
	Guard     string `json:"guard,omitempty"`
	GuardText string `json:"guard_text,omitempty"`
	// Memory is what the agent holds ("312 MB") or its pause freed ("freed 245 MB").
	Memory string `json:"memory,omitempty"`
	// Tokens is what its sessions spent, as billed; TokensText says today's part in
	// brief and TokensTitle the four counts.
	Tokens      agents.Spent `json:"tokens"`
	TokensText  string       `json:"tokens_text,omitempty"`
	TokensTitle string       `json:"tokens_title,omitempty"`
	Since       time.Time    `json:"since"`
	ActivityAt  time.Time    `json:"activity_at"`
	RSSKB       int64        `json:"rss_kb"`
	FreedKB     int64        `json:"freed_kb"`
	Branch      string       `json:"branch,omitempty"`
	Dirty       int          `json:"dirty"`
	LastError   string       `json:"last_error,omitempty"`
	Attention   string       `json:"attention,omitempty"` // a handoff that did not take
	Busy        string       `json:"busy,omitempty"`      // an operation this server runs on it
	CanPause    bool         `json:"can_pause"`
	CanResume   bool         `json:"can_resume"`
}

// The groups of the Agents page, in the order shown.
var groups = []struct{ Key, Title string }{
	{"needs_input", "Needs input"},
	{"working", "Working"},
	{"idle", "Idle"},
	{"paused", "Paused"},
	{"gone", "Exited and lost"},
	{"failed", "Failed"},
}

func rowOf(v agents.View) Row {
	r := Row{ID: v.ID, Host: cmp.Or(v.Host, agents.LocalHost), Name: v.Name, Project: v.Project, State: string(v.State), Activity: v.Activity.Activity,
		Detail: v.Activity.Detail, Tool: v.Activity.Tool, Summary: v.Activity.Summary, Since: v.StateSince,
		ActivityAt: v.Activity.At, RSSKB: v.RSSKB, Tokens: v.Tokens, LastError: v.LastError,
		CanPause: v.State == agents.Active && v.Op == nil, CanResume: v.State.Resumable() && v.Op == nil}
	if v.Pause != nil {
		r.FreedKB = v.Pause.RSSFreedKB
		if g := v.Pause.Git; g != nil {
			r.Branch, r.Dirty = g.Branch, len(g.Dirty)
		}
	}
	r.Label = r.State
	switch v.State {
	case agents.Active:
		switch r.Activity {
		case "needs_input":
			r.Group, r.Label = "needs_input", "needs input"
			if r.Detail != "" {
				r.Label += " (" + r.Detail + ")"
			}
		case "working", "compacting":
			r.Group, r.Label = "working", r.Activity
		case "", "idle":
			r.Group, r.Label = "idle", "idle"
		default:
			r.Group, r.Label = "idle", strings.ReplaceAll(r.Activity, "_", " ")
		}
	case agents.Starting, agents.Pausing, agents.Resuming, agents.HandingOff:
		r.Group, r.Label = "working", r.State+"…"
	case agents.Paused:
		r.Group = "paused"
	case agents.Exited, agents.Lost:
		r.Group = "gone"
	default:
		r.Group = "failed"
	}
	if v.Attention != "" && v.State.Running() {
		// A person should look: among the agents that need input (a prompt that waits
		// keeps its own label).
		r.Attention, r.Group = v.Attention, "needs_input"
		if r.Activity != "needs_input" {
			r.Label = "attention"
		}
	}
	if r.Group == "needs_input" && r.Detail == "permission" {
		r.Input = v.Activity.Input
	}
	if r.Summary == "" && r.Tool != "" {
		r.Summary = r.Tool
	}
	r.texts()
	return r
}

// texts sets the row's words as the page shows them; the script only copies them.
func (r *Row) texts() {
	switch {
	case r.RSSKB > 0:
		r.Memory = fmt.Sprintf("%d MB", r.RSSKB/1024)
	case r.State == string(agents.Paused) && r.FreedKB > 0:
		r.Memory = fmt.Sprintf("freed %d MB", r.FreedKB/1024)
	default:
		r.Memory = ""
	}
	switch all, today := r.Tokens.All.Total(), r.Tokens.Today.Total(); {
	case today > 0:
		r.TokensText = usage.Brief(today) + " tokens today"
	case all > 0:
		r.TokensText = usage.Brief(all) + " tokens, none today"
	default:
		r.TokensText = ""
	}
	r.TokensTitle = "tokens as billed, today: " + r.Tokens.Today.Parts() + "; in all: " + r.Tokens.All.Parts()
	switch r.Guard {
	case "":
		r.GuardText = ""
	case "ok":
		r.GuardText = "ctx's guard has no objection."
	default:
		r.GuardText = "ctx's guard would refuse it: " + r.Guard
	}
}

// For is how long the agent has been in its state, as "3m".
func (r Row) For() string { return agents.Age(time.Since(r.Since)) }
