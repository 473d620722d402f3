package agents

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ctxtools/ctx/internal/claude"
	"github.com/ctxtools/ctx/internal/events"
	"github.com/ctxtools/ctx/loader"
	"github.com/ctxtools/ctx/usage"
)

// ResumeOptions say how to resume.
type ResumeOptions struct {
	Prompt string // replaces the resume prompt ctx builds
	Fresh  bool   // start a new conversation with the full briefing
	NoWait bool
	// WithConflicts goes on when the pause's stash conflicts (the prompt lists the
	// files); without it the agent stays paused and the stash is kept.
	WithConflicts bool
}

// ResumePlan is what a resume will do: the prompt, whether the conversation comes back,
// and what changed while the agent was away. `ctx agents show` prints it; Resume
// carries it out.
type ResumePlan struct {
	Prompt     string   `json:"prompt"`
	Fresh      bool     `json:"fresh"`
	FreshWhy   string   `json:"fresh_why,omitempty"`
	Transcript string   `json:"transcript"`
	Changes    *Changes `json:"changes,omitempty"`
}

// Plan works out a resume without changing anything.
func (a *Agents) Plan(rec *Record, o ResumeOptions) (*ResumePlan, error) {
	plan := &ResumePlan{Fresh: o.Fresh, Transcript: a.transcriptPath(rec)}
	if rec.Pause != nil && rec.Pause.Git != nil {
		ch, err := rec.Pause.Git.Compare()
		if err != nil {
			return nil, fmt.Errorf("compare with the checkpoint: %w", err)
		}
		plan.Changes = ch
	}
	if !plan.Fresh {
		if _, err := os.Stat(plan.Transcript); err != nil {
			plan.Fresh, plan.FreshWhy = true, "the conversation's transcript is gone ("+plan.Transcript+")"
		}
	}
	switch {
	case o.Prompt != "":
		plan.Prompt = o.Prompt
	case plan.Fresh:
		plan.Prompt = a.briefing(rec, plan)
	default:
		plan.Prompt = a.resumePrompt(rec, plan)
	}
	return plan, nil
}

// Resume brings a paused, exited, lost or failed agent back in the same conversation
// (`claude --resume <id>`) with a short prompt saying what happened meanwhile, or, when
// the transcript is gone, in a fresh one with the full briefing (AGENTS.md §5.6).
func (a *Agents) Resume(rec *Record, o ResumeOptions) (*Record, *ResumePlan, error) {
	if err := a.hooksFindCtx(); err != nil {
		return nil, nil, err
	}
	panes, err := a.Tmux.Panes()
	if err != nil {
		return nil, nil, err
	}
	if rec, err = a.reconcile(rec, panes); err != nil {
		return nil, nil, err
	}
	if (rec.State == Active || rec.State == Resuming) && rec.Op == nil && rec.Pause != nil && rec.StateSince.After(rec.Pause.PausedAt) {
		// A resume retried after it completed answers as it did the first time.
		return rec, &ResumePlan{Transcript: a.transcriptPath(rec)}, nil
	}
	if rec.MovingTo != "" {
		return nil, nil, &NotNowError{Msg: fmt.Sprintf("agent %s is moving to host %s: finish with `ctx agents move %s --to %s`, or cancel with `ctx agents move %s --cancel`",
			rec.Name, rec.MovingTo, rec.Name, rec.MovingTo, rec.Name)}
	}
	if err := ready(rec, EvResume); err != nil {
		return nil, nil, err
	}
	if rec.Worktree != nil {
		// A worktree removed while the agent was paused is added again from its branch.
		if readded, err := rec.Worktree.ensure(); err != nil {
			return nil, nil, fmt.Errorf("resume %s: %w", rec.ID, err)
		} else if readded {
			a.Store.Feed(rec.ID, "agent.worktree_readded", map[string]any{"path": rec.Worktree.Path, "branch": rec.Worktree.Branch})
		}
	}
	if fi, err := os.Stat(rec.Cwd); err != nil || !fi.IsDir() {
		return nil, nil, fmt.Errorf("resume %s: its folder %s is gone; recreate it (or `ctx agents rm %s`)", rec.ID, rec.Cwd, rec.ID)
	}
	if bin, err := a.ClaudeBinary(); err != nil {
		return nil, nil, err
	} else if _, err := os.Stat(rec.Claude.Binary); err != nil {
		rec.Claude.Binary = bin
	}
	// Processes of the agent's previous run (a claude still dying after tmux went,
	// a child that outlived it) would hold the conversation open: end them first.
	if found, left := EndMarked(rec.ID, 2*time.Second); len(left) > 0 {
		return nil, nil, fmt.Errorf("resume %s: %d processes of its previous run did not end: %v", rec.ID, found, left)
	}
	plan, err := a.Plan(rec, o)
	if err != nil {
		return nil, nil, err
	}
	if !plan.Fresh {
		if pid := a.liveElsewhere(rec.Claude.SessionID); pid > 0 {
			return nil, nil, &NotNowError{Msg: fmt.Sprintf("resume %s: its conversation %s is open in another claude (pid %d); end that one first, or start fresh with --fresh",
				rec.ID, rec.Claude.SessionID, pid)}
		}
	}
	// The stash or WIP commit of a `--git stash|commit` pause goes back first: on a
	// conflict the agent stays paused, its stash kept.
	undone := false
	if g := rec.Pause; g != nil && g.Git != nil && !g.Git.Undone && (g.Git.Stash != "" || g.Git.WIPCommit != "") {
		note, err := g.Git.undoStrategy(o.WithConflicts)
		if err != nil {
			return nil, plan, fmt.Errorf("resume %s: %w", rec.ID, err)
		}
		if note != "" && o.Prompt == "" {
			plan.Prompt += "\n\n" + note
		}
		undone = true
	}
	from := rec.State
	since := a.Now().UTC()
	rec, err = a.begin(rec.ID, EvResume, Op{Kind: "resume", Step: "launch", Started: since}, func(r *Record) {
		if undone && r.Pause != nil && r.Pause.Git != nil {
			r.Pause.Git.Undone = true
		}
		r.Claude.Binary = rec.Claude.Binary
		if plan.Fresh {
			closeLink(a.State, r, since)
			r.Claude.PreviousSessionIDs = append(r.Claude.PreviousSessionIDs, r.Claude.SessionID)
			r.Claude.SessionID = NewSessionID()
			r.Chain = append(r.Chain, Link{SessionID: r.Claude.SessionID, Reason: ReasonFresh, StartedAt: since})
		}
	})
	if err != nil {
		return nil, nil, err
	}
	a.crashAt("resume", "launch")
	args := []string{"--resume", rec.Claude.SessionID}
	if plan.Fresh {
		args = []string{"--session-id", rec.Claude.SessionID}
	}
	args = append(args, launchFlags(rec.Claude)...)
	_ = a.Tmux.Kill(rec.Tmux.Session) // a dead pane kept from an exit
	if err := a.launch(rec, args, plan.Prompt); err != nil {
		out, _ := a.Store.Update(rec.ID, func(r *Record) error {
			r.State, r.StateSince, r.Op, r.LastError = from, a.Now().UTC(), nil, err.Error()
			return nil
		})
		return out, plan, fmt.Errorf("resume %s: %w", rec.ID, err)
	}
	if err := a.setStep(rec.ID, "resume", "confirm"); err != nil {
		return nil, plan, err
	}
	if _, err := a.Store.Update(rec.ID, func(r *Record) error { r.Op = nil; return nil }); err != nil {
		return nil, plan, err
	}
	a.Store.Feed(rec.ID, "agent.resumed", map[string]any{"fresh": plan.Fresh, "session_id": rec.Claude.SessionID})
	if o.NoWait {
		return rec, plan, nil
	}
	out, err := a.confirm(rec.ID, since)
	return out, plan, err
}

// rollbackResume settles a resume whose ctx process died: a live pane with the agent
// stays (the confirmation comes with the next look), anything else goes back to the
// state the resume started from.
func (a *Agents) rollbackResume(r *Record, panes map[string]Pane) (*Record, error) {
	p, ok := panes[r.Tmux.Session]
	return a.Store.Update(r.ID, func(rr *Record) error {
		if rr.Op == nil || rr.Op.Kind != "resume" {
			return nil
		}
		if !ok || p.Dead {
			rr.State = rr.Op.From
			rr.StateSince = a.Now().UTC()
		}
		rr.Op = nil
		return nil
	})
}

// transcriptPath is where Claude Code keeps the agent's conversation; "" when no home
// folder is known.
func (a *Agents) transcriptPath(rec *Record) string {
	dir, err := claude.ConfigDir(a.Getenv)
	if err != nil {
		return ""
	}
	return claude.TranscriptPath(dir, rec.Cwd, rec.Claude.SessionID)
}

// liveElsewhere returns the pid of a live claude that has the session open (Claude
// Code's ~/.claude/sessions/<pid>.json), or 0. Two claudes on one conversation branch
// its transcript, and nothing in Claude Code prevents it.
func (a *Agents) liveElsewhere(sessionID string) int {
	for _, s := range claude.SessionRecords(a.Getenv) {
		if s.SessionID == sessionID && pidAlive(s.PID) {
			return s.PID
		}
	}
	return 0
}

// resumePrompt is the short prompt of a resume in the same conversation: the
// conversation comes back by itself, and ctx's SessionStart hook adds the project
// briefing, so it says only what happened while the agent was away.
func (a *Agents) resumePrompt(rec *Record, plan *ResumePlan) string {
	var b strings.Builder
	away := ""
	if rec.Pause != nil {
		away = " after " + roundDuration(a.Now().Sub(rec.Pause.PausedAt)) + " paused"
	} else if rec.Exit != nil {
		away = " after it ended (status " + fmt.Sprint(rec.Exit.Status) + ")"
	}
	fmt.Fprintf(&b, "ctx: resumed%s.\n", away)
	if ch := plan.Changes; ch != nil {
		if ch.HeadMoved {
			fmt.Fprintf(&b, "While paused: HEAD moved %s→%s.\n", ShortSHA(ch.OldHead), ShortSHA(ch.NewHead))
		}
		if ch.BranchMove {
			fmt.Fprintf(&b, "While paused: the branch is now %s.\n", ch.Branch)
		}
		if len(ch.Files) > 0 {
			fmt.Fprintf(&b, "While paused, %d file(s) changed: %s.\n", len(ch.Files), listUpTo(ch.Files, 10))
		}
		if len(ch.Overlap) > 0 {
			fmt.Fprintf(&b, "%d file(s) you had changed were also changed by someone else: %s; re-read them before going on.\n",
				len(ch.Overlap), listUpTo(ch.Overlap, 10))
		}
	}
	if rec.Pause != nil && rec.Pause.Interrupted {
		b.WriteString("You were interrupted in the middle of a turn: check what the last step left behind.\n")
	}
	if res := a.load(rec); res != nil {
		if res.Resume != nil && res.Resume.NextAction != "" {
			fmt.Fprintf(&b, "Next action from the save point: %s.\n", strings.TrimSuffix(res.Resume.NextAction, "."))
		}
		for i, t := range res.PendingTasks {
			if i == 3 {
				break
			}
			fmt.Fprintf(&b, "Pending: task %d, %s.\n", t.Number, t.Text)
		}
	}
	b.WriteString("Carry on from where you stopped.")
	return b.String()
}

// briefing is the prompt of a fresh start: ctx's full resume prompt for the project.
func (a *Agents) briefing(rec *Record, plan *ResumePlan) string {
	prefix := "ctx: this agent's earlier conversation could not be resumed"
	if plan.FreshWhy != "" {
		prefix += ": " + plan.FreshWhy
	}
	prefix += ". Start again from the project's save point.\n"
	if res := a.load(rec); res != nil {
		return prefix + res.Instructions
	}
	return prefix
}

func (a *Agents) load(rec *Record) *loader.Result {
	p, err := a.Store.WS.Resolve(rec.ProjectPath)
	if err != nil {
		return nil
	}
	return a.Store.WS.Load(p, loader.LoadOptions{})
}

// ShortSHA is a commit as people quote it: its first 7 hex digits.
func ShortSHA(sha string) string {
	if len(sha) > 7 {
		return sha[:7]
	}
	if sha == "" {
		return "(none)"
	}
	return sha
}

func listUpTo(items []string, n int) string {
	if len(items) <= n {
		return strings.Join(items, ", ")
	}
	return strings.Join(items[:n], ", ") + fmt.Sprintf(" and %d more", len(items)-n)
}

func roundDuration(d time.Duration) string {
	if d < time.Minute {
		return d.Round(time.Second).String()
	}
	return d.Round(time.Minute).String()
}

// ContextPercent reads how full a running agent's context is, as a percentage of the
// budget before compaction (what ctx's hooks measure): from the tail of its
// conversation's transcript, with Claude Code's configuration for the agent's folder.
// ok is false when the transcript says nothing yet.
func (a *Agents) ContextPercent(rec *Record) (pct float64, ok bool) {
	path := a.transcriptPath(rec)
	fi, err := os.Stat(path)
	if err != nil {
		return 0, false
	}
	key := rec.ID + "\x00" + path
	a.contextsMu.Lock()
	c, hit := a.contexts[key]
	a.contextsMu.Unlock()
	if hit && c.size == fi.Size() && c.modTime.Equal(fi.ModTime()) {
		return c.pct, c.ok
	}
	client := claude.DetectClient(a.Getenv, rec.Cwd)
	c = contextEntry{size: fi.Size(), modTime: fi.ModTime()}
	if u, err := events.ReadUsage(a.State, path, client); err == nil && u != nil {
		c.pct, c.ok = u.PercentOfBudget, true
	}
	a.contextsMu.Lock()
	if a.contexts == nil {
		a.contexts = map[string]contextEntry{}
	}
	a.contexts[key] = c
	a.contextsMu.Unlock()
	return c.pct, c.ok
}

// Spent is what an agent's sessions cost, as the API bills it (usage.Ledger): all of
// them (each session of its chain, and their subagents), and today's part, by the
// local date.
type Spent struct {
	All   usage.Tokens `json:"all"`
	Today usage.Tokens `json:"today"`
}

// Spent reads what rec's sessions spent, from their transcripts.
func (a *Agents) Spent(rec *Record, now time.Time) Spent {
	var out Spent
	dir, err := claude.ConfigDir(a.Getenv)
	if err != nil {
		return out
	}
	today := now.Local().Format(time.DateOnly)
	seen := map[string]bool{}
	sessions := append([]string{rec.Claude.SessionID}, rec.Claude.PreviousSessionIDs...)
	for _, l := range rec.Chain {
		sessions = append(sessions, l.SessionID)
	}
	for _, sid := range sessions {
		if sid == "" || seen[sid] {
			continue
		}
		seen[sid] = true
		main := claude.TranscriptPath(dir, rec.Cwd, sid)
		subagents, _ := filepath.Glob(filepath.Join(strings.TrimSuffix(main, ".jsonl"), "subagents", "*.jsonl"))
		for _, path := range append([]string{main}, subagents...) {
			days, err := a.ledger.Spent(path)
			if err != nil {
				continue
			}
			for day, t := range days {
				out.All = out.All.Add(t)
				if day == today {
					out.Today = out.Today.Add(t)
				}
			}
		}
	}
	return out
}
