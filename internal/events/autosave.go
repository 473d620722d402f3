package events

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/ctxtools/ctx/gitstate"
	"github.com/ctxtools/ctx/internal/state"
	"github.com/ctxtools/ctx/loader"
	"github.com/ctxtools/ctx/markdown"
	"github.com/ctxtools/ctx/resume"
)

// snapshotWriteTime is what a deadline keeps back from the git read for writing the
// snapshot set (five fsynced files, a few milliseconds each on a slow disk).
const snapshotWriteTime = 300 * time.Millisecond

// orphanAge is how long another session's open journal must have been left untouched
// before a session start takes it for a crash's leftover; a younger one may belong to
// a session still running beside this one.
const orphanAge = 6 * time.Hour

// BoundProject returns the project this session is bound to, or nil when there is none
// (or it no longer resolves).
func BoundProject(st *state.Store, sessionID string) *loader.Project {
	ws := st.WS
	binding, err := st.Session(sessionID).Binding()
	if err != nil || binding == nil {
		return nil
	}
	p, err := ws.Resolve(binding.Path)
	if err != nil {
		return nil
	}
	return p
}

// AutoSaveResult reports an automatic save.
type AutoSaveResult struct {
	Project    *loader.Project // nil: no project bound, a workspace-level snapshot only
	ResumePath string          // workspace-relative; "" without a project
	SnapshotID string
}

// AutoSave saves without being asked: the bound project's save point (progress,
// last_updated, total_tokens_approx, and compactions when compactionDelta is set) and a
// snapshot set with the trigger and usage; without a bound project, a workspace-level
// snapshot only.
func AutoSave(st *state.Store, sessionID string, trigger state.Trigger, usage *state.ContextUsage, compactionDelta int, now time.Time) (*AutoSaveResult, error) {
	ws := st.WS
	p := BoundProject(st, sessionID)
	if p == nil {
		id, err := st.Snapshots().Write(context.Background(), CurrentSnapshot(context.Background(), ws, nil, sessionID, trigger, usage, now))
		return &AutoSaveResult{SnapshotID: id}, err
	}
	res, err := SaveProgress(st, p, SaveRequest{
		SessionID: sessionID, Trigger: trigger, Usage: usage, Now: now,
		Change: resume.Change{CompactionDelta: compactionDelta},
	})
	if err != nil {
		return nil, err
	}
	return &AutoSaveResult{Project: p, ResumePath: ws.Rel(res.Saved.Path), SnapshotID: res.SnapshotID}, nil
}

// CountCompaction adds one to the bound project's compaction_count without a snapshot:
// the compaction's snapshot is the one its journal's finalization writes.
func CountCompaction(st *state.Store, sessionID string, usage *state.ContextUsage, now time.Time) error {
	ws := st.WS
	p := BoundProject(st, sessionID)
	if p == nil {
		return nil
	}
	// No SessionKey: a compaction has nothing to say in Session History, and an entry
	// with no words would hide the session's real one from the briefing.
	c := resume.Change{CompactionDelta: 1, Trigger: string(state.TriggerPreCompact), Now: now}
	if usage != nil {
		c.TokensApprox = usage.TokensUsed
	}
	_, err := ws.Save(p, c)
	return err
}

// CurrentSnapshot describes the session's state now without saving anything: the
// project's save point as it is on disk (p may be nil for a workspace-level snapshot).
// A deadline of ctx bounds the git read, for hooks with a time budget.
func CurrentSnapshot(ctx context.Context, ws *loader.Workspace, p *loader.Project, sessionID string, trigger state.Trigger, usage *state.ContextUsage, now time.Time) *state.Snapshot {
	snap := &state.Snapshot{
		SchemaVersion: state.SnapshotSchemaVersion,
		SessionID:     sessionID,
		SavedAt:       now.UTC(),
		Trigger:       trigger,
		ContextUsage:  usage,
		Resume:        map[string]any{},
		ResumePrompt:  state.ResumePrompt{PendingTasks: []string{}},
	}
	bound := time.Now().Add(gitstate.Timeout)
	if deadline, ok := ctx.Deadline(); ok {
		// Leave the snapshot and the archive time to be written before the deadline.
		bound = deadline.Add(-snapshotWriteTime)
	}
	ctx, cancel := context.WithDeadline(ctx, bound)
	defer cancel()
	snap.Git, _ = gitstate.Read(ctx, ws.Root)
	if p == nil {
		snap.ResumePrompt.CurrentState = "no project is bound to this session; `ctx load N` binds one"
		return snap
	}
	rs := ws.ReadResume(p)
	snap.Project = &state.SnapshotProject{ID: p.ID, Name: p.Name, Path: p.Path, Progress: p.Progress}
	snap.Resume = rs.Frontmatter
	if rs.Exists {
		snap.ResumePath = rs.Path
	}
	snap.ResumePrompt.LastAction = rs.LastSession
	state := fmt.Sprintf("%d/%d tasks done (%d%%)", p.Progress.TasksCompleted, p.Progress.TasksTotal, p.Progress.Percent)
	if rs.NextAction != "" {
		state += "; next action: " + rs.NextAction
	}
	snap.ResumePrompt.CurrentState = state
	for _, t := range markdown.Pending(p.Pending, pendingInSnapshot) {
		snap.ResumePrompt.PendingTasks = append(snap.ResumePrompt.PendingTasks, t.Text)
	}
	return snap
}

// FinalizeJournal finalizes the session's wind-down journal, if one is open, with a
// snapshot of the session's state; minimal only archives it. A deadline of ctx bounds
// the slow part (git).
func FinalizeJournal(ctx context.Context, st *state.Store, sessionID string, trigger state.Trigger, usage *state.ContextUsage, minimal bool, now time.Time) (archived, snapshotID string, err error) {
	j := st.Journal(sessionID)
	if active, err := j.Active(); !active {
		if err != nil {
			return "", "", fmt.Errorf("finalize journal: %w", err)
		}
		return "", "", nil
	}
	var snap *state.Snapshot
	if !minimal {
		snap = CurrentSnapshot(ctx, st.WS, BoundProject(st, sessionID), sessionID, trigger, usage, now)
	}
	return j.Finalize(ctx, now, snap, minimal)
}

// RecoverJournals finalizes journals a crash left behind: this session's own (a new
// start means its last cycle never finished) and other sessions' untouched for hours.
// It returns the archives it made.
func RecoverJournals(ctx context.Context, st *state.Store, sessionID string, now time.Time) ([]string, error) {
	ws := st.WS
	all, err := st.Orphans("")
	if err != nil {
		return nil, err
	}
	var archived []string
	for _, j := range all {
		if ctx.Err() != nil {
			break
		}
		if j.SessionID != sessionID && RecentlyActive(j, now) {
			continue
		}
		snap := CurrentSnapshot(ctx, ws, BoundProject(st, j.SessionID), j.SessionID, state.TriggerSessionEnd, lastUsage(st, j.SessionID), now)
		path, _, err := j.Finalize(ctx, now, snap, false)
		if err != nil {
			return archived, err
		}
		if path != "" {
			archived = append(archived, path)
		}
	}
	return archived, nil
}

// RecentlyActive reports whether a journal was written to within the last hours, so
// that it may belong to a session still running; one that cannot be read counts as
// active, so nothing acts on it.
func RecentlyActive(j *state.Journal, now time.Time) bool {
	fi, err := os.Stat(j.Path())
	return err != nil || now.Sub(fi.ModTime()) < orphanAge
}

// lastUsage is the usage the hooks last recorded for a session, nil when none.
func lastUsage(st *state.Store, sessionID string) *state.ContextUsage {
	c, err := st.Session(sessionID).Cycle()
	if err != nil || c.UpdatedAt.IsZero() || c.LastPercent <= 0 {
		return nil
	}
	total := int(float64(c.LastTokens) * 100 / c.LastPercent)
	return &state.ContextUsage{TokensUsed: c.LastTokens, TokensTotal: total, Percentage: round1(c.LastPercent)}
}
