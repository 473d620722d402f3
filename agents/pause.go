package agents

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/ctxtools/ctx/internal/durable"
	"github.com/ctxtools/ctx/internal/events"
	"github.com/ctxtools/ctx/internal/state"
)

// TriggerAgentPause is the snapshot trigger of a pause's save.
const TriggerAgentPause state.Trigger = "agent-pause"

// maxScrollback caps the scrollback a pause keeps: the end of it, where work stopped.
const maxScrollback = 2 << 20

// PauseOptions say how to pause.
type PauseOptions struct {
	Wait   time.Duration // how long to wait for a working agent to reach a safe point
	Force  bool          // interrupt a working agent (Escape) rather than refuse
	Reason string        // user, idle, bulk, recovered
	Git    string        // keep (default), stash or commit (gitstrategy.go)
}

// Pause takes an active agent to paused (a paused one is returned as it is: a retry): a safe point, the save point and snapshot
// through ctx's auto-save, a checkpoint of the working tree, the scrollback, then every
// process of the agent ended and the memory it held recorded (AGENTS.md §5.5). Each step
// is recorded before it runs and is idempotent, so a pause interrupted at any step is
// finished by the next command that looks at the agent.
func (a *Agents) Pause(rec *Record, o PauseOptions) (*Record, error) {
	panes, err := a.Tmux.Panes()
	if err != nil {
		return nil, err
	}
	if rec, err = a.reconcile(rec, panes); err != nil {
		return nil, err
	}
	if rec.Op != nil && rec.Op.Kind == "pause" {
		// Another pause of it is under way (the first try of a retried one, its
		// connection broken): its outcome is this one's.
		if rec, err = a.awaitOp(rec, o.Wait); err != nil {
			return nil, err
		}
	}
	if rec.State == Paused && rec.Op == nil && rec.Pause != nil {
		// A pause retried after it completed (a connection that broke before the
		// answer came back) answers as it did the first time.
		return rec, nil
	}
	if err := ready(rec, EvPause); err != nil {
		return nil, err
	}
	// The safe point comes before the lock is taken for the operation: waiting for a
	// turn to end must not hold other commands off.
	interrupted, last, err := a.safePoint(rec, o)
	if err != nil {
		return nil, err
	}
	now := a.Now().UTC()
	rec, err = a.begin(rec.ID, EvPause, Op{Kind: "pause", Step: "save", Started: now}, func(r *Record) {
		r.Pause = &PauseInfo{Reason: firstOf(o.Reason, "user"), PausedAt: now, Stamp: now.Format("20060102T150405Z"),
			Interrupted: interrupted, LastActivity: last, GitStrategy: o.Git}
	})
	if err != nil {
		return nil, err
	}
	return a.finishPause(rec, o)
}

// awaitOp waits up to wait for the operation in flight on rec to end, and returns the
// record then; an operation whose process died is settled by reconcile.
func (a *Agents) awaitOp(rec *Record, wait time.Duration) (*Record, error) {
	deadline := time.Now().Add(max(wait, 5*time.Second))
	for rec.Op != nil && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
		panes, err := a.Tmux.Panes()
		if err != nil {
			return nil, err
		}
		if rec, err = a.Store.Load(rec.ID); err != nil {
			return nil, err
		}
		if rec, err = a.reconcile(rec, panes); err != nil {
			return nil, err
		}
	}
	return rec, nil
}

// safePoint waits until the agent is idle or needs input. A working agent is waited
// for up to o.Wait; then, with Force, interrupted with Escape.
func (a *Agents) safePoint(rec *Record, o PauseOptions) (interrupted bool, last string, err error) {
	deadline := time.Now().Add(o.Wait)
	for {
		st := a.Store.ReadStatus(rec.ID)
		last = st.Activity
		if st.Activity != "working" && st.Activity != "compacting" {
			return false, last, nil
		}
		if time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	st := a.Store.ReadStatus(rec.ID)
	if !o.Force {
		what := st.Activity
		if st.Tool != "" {
			what += " (" + st.Tool + ")"
		}
		return false, last, &NotNowError{Msg: fmt.Sprintf("pause %s: agent is %s since %s; wait with --wait 10m or interrupt with --force",
			rec.ID, what, st.At.Local().Format("15:04:05"))}
	}
	_ = a.Tmux.Key(rec.Tmux.Session, "Escape")
	time.Sleep(2 * time.Second)
	return true, "working", nil
}

// finishPause runs the pause's steps from the save point on. Each is idempotent: a
// snapshot already recorded is not written again, the checkpoint ref of the pause's
// stamp is reused, a scrollback file already there is kept, a tmux session already gone
// is skipped.
func (a *Agents) finishPause(rec *Record, o PauseOptions) (*Record, error) {
	id := rec.ID
	if rec.Pause == nil {
		now := a.Now().UTC()
		rec.Pause = &PauseInfo{Reason: firstOf(o.Reason, "recovered"), PausedAt: now, Stamp: now.Format("20060102T150405Z")}
	}
	p := *rec.Pause
	var errs []error

	if err := a.setStep(id, "pause", "save"); err != nil {
		return nil, err
	}
	if p.SnapshotID == "" {
		res, err := events.AutoSave(a.State, rec.Claude.SessionID, TriggerAgentPause, nil, 0, a.Now())
		if err != nil {
			errs = append(errs, fmt.Errorf("save point: %w", err))
		} else {
			p.SnapshotID = res.SnapshotID
		}
		_, _, _ = events.FinalizeJournal(context.Background(), a.State, rec.Claude.SessionID, TriggerAgentPause, nil, false, a.Now())
	}

	if err := a.setStep(id, "pause", "checkpoint"); err != nil {
		return nil, err
	}
	if p.Git == nil {
		cp, err := TakeCheckpoint(rec.Cwd, id, p.Stamp)
		if err != nil {
			// Without a checkpoint nothing may go further: the tree is the person's work.
			return a.abortPause(id, fmt.Errorf("checkpoint: %w", err))
		}
		// The strategy's step comes after the checkpoint, so the person's work is in a
		// ref before a stash or a commit moves it.
		if cp != nil {
			if err := cp.applyStrategy(p.GitStrategy, id, rec.Name, p.Stamp); err != nil {
				return a.abortPause(id, fmt.Errorf("git %s: %w (the checkpoint %s holds the tree)", p.GitStrategy, err, cp.Ref))
			}
		}
		p.Git = cp
	}

	if err := a.setStep(id, "pause", "scrollback"); err != nil {
		return nil, err
	}
	if p.Scrollback == "" {
		name := "scrollback-" + p.Stamp + ".txt"
		if text, err := a.Tmux.Capture(rec.Tmux.Session, true); err == nil {
			if len(text) > maxScrollback {
				text = text[len(text)-maxScrollback:]
			}
			if err := durable.WriteFile(filepath.Join(a.Store.AgentDir(id), name), []byte(text), 0o600); err == nil {
				p.Scrollback = name
			}
		}
	}

	if err := a.setStep(id, "pause", "end"); err != nil {
		return nil, err
	}
	pids := Marked(id)
	if rss := RSSKB(pids); rss > p.RSSFreedKB {
		p.RSSFreedKB = rss
	}
	p.ProcessesEnded = max(p.ProcessesEnded, len(pids))
	a.endClaude(rec, p.LastActivity)
	_ = a.Tmux.Kill(rec.Tmux.Session)
	if _, left := EndMarked(id, 2*time.Second); len(left) > 0 {
		errs = append(errs, fmt.Errorf("processes %v of the agent did not end", left))
	}

	if err := a.setStep(id, "pause", "record"); err != nil {
		return nil, err
	}
	out, err := a.Store.Update(id, func(r *Record) error {
		r.State, r.StateSince, r.Op, r.Pause = Paused, a.Now().UTC(), nil, &p
		r.LastError = ""
		if err := errors.Join(errs...); err != nil {
			r.LastError = err.Error()
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	a.Store.Feed(id, "agent.paused", map[string]any{"reason": p.Reason, "rss_freed_kb": p.RSSFreedKB,
		"snapshot_id": p.SnapshotID, "interrupted": p.Interrupted})
	return out, errors.Join(errs...)
}

// endClaude asks an idle claude to exit (/exit: its SessionEnd hooks run and close the
// journal cleanly) and waits a moment for the pane to die. A claude at a permission
// prompt is not sent /exit, which would approve the tool (CLAUDE-CODE.md §4): the
// session is killed instead.
func (a *Agents) endClaude(rec *Record, activity string) {
	if activity != "idle" {
		return
	}
	panes, err := a.Tmux.Panes()
	if err != nil {
		return
	}
	if p, ok := panes[rec.Tmux.Session]; !ok || p.Dead {
		return
	}
	if a.Tmux.Type(rec.Tmux.Session, "/exit") != nil {
		return
	}
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		panes, err := a.Tmux.Panes()
		if p, ok := panes[rec.Tmux.Session]; err != nil || !ok || p.Dead {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// abortPause undoes a pause that could not keep the tree safe: the agent goes back to
// active, untouched, and the error says why.
func (a *Agents) abortPause(id string, cause error) (*Record, error) {
	out, err := a.Store.Update(id, func(r *Record) error {
		r.State, r.StateSince, r.Op, r.Pause = Active, a.Now().UTC(), nil, nil
		r.LastError = cause.Error()
		return nil
	})
	a.Store.Feed(id, "agent.op_failed", map[string]any{"op": "pause", "error": cause.Error()})
	return out, errors.Join(fmt.Errorf("pause %s: %w; the agent keeps running", id, cause), err)
}

func firstOf(values ...string) string {
	for _, v := range values {
		if strings.TrimSpace(v) != "" {
			return v
		}
	}
	return ""
}
