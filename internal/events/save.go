package events

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/ctxtools/ctx/gitstate"
	"github.com/ctxtools/ctx/internal/durable"
	"github.com/ctxtools/ctx/internal/state"
	"github.com/ctxtools/ctx/loader"
	"github.com/ctxtools/ctx/markdown"
	"github.com/ctxtools/ctx/resume"
)

// SaveRequest is one save: what changed, who saved, and what is known of the context.
type SaveRequest struct {
	Change    resume.Change
	SessionID string // the agent session ("" when unknown)
	Trigger   state.Trigger
	Usage     *state.ContextUsage // nil until usage is known
	Now       time.Time           // zero means now
}

// SaveResult reports a save.
type SaveResult struct {
	Saved      *resume.Saved
	SnapshotID string
	Git        *gitstate.State
}

// pendingInSnapshot is how many open tasks a snapshot lists.
const pendingInSnapshot = loader.PendingKept

// SaveProgress saves a project: it updates the save point (adding the files git shows
// changed in the project, or outside every project, to Files Modified) and then writes
// a snapshot set. The snapshot is written only after the save point, so a snapshot
// never describes a save that did not happen.
func SaveProgress(st *state.Store, p *loader.Project, req SaveRequest) (*SaveResult, error) {
	ws := st.WS
	now := req.Now
	if now.IsZero() {
		now = time.Now()
	}
	change := req.Change
	change.Now = now
	change.Trigger = string(req.Trigger)
	// A person's or an agent's save writes the session's history entry; an automatic
	// one has nothing to say there.
	if change.SessionKey == "" && (req.Trigger == state.TriggerSave || req.Trigger == state.TriggerClose) {
		change.SessionKey = sessionKey(req.SessionID, now)
		change.NoAgentSession = strings.HasPrefix(change.SessionKey, "manual-")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	git, _ := gitstate.Read(ctx, ws.Root)
	change.Files = append(change.Files, changedFiles(st, p, git)...)
	// What the session's own tool calls changed: git shows none of it in a workspace
	// that is not a repository, or once the session has committed.
	if touched, err := st.Session(req.SessionID).Work(); err == nil {
		for _, rel := range touched {
			if f, ok := workFile(ws, p, rel); ok {
				change.Files = append(change.Files, f)
			}
		}
	}
	if req.Usage != nil && change.TokensApprox == 0 {
		change.TokensApprox = req.Usage.TokensUsed
	}
	saved, err := ws.Save(p, change)
	if err != nil {
		return nil, err
	}
	if req.Trigger == state.TriggerSave || req.Trigger == state.TriggerClose {
		// What this session said, for the note a handoff gives the next one. The save
		// point is written: a record that fails is not a failed save.
		_ = st.Session(req.SessionID).RecordSave(now, change.Summary, change.Next, change.Decisions, change.Blockers)
	}
	snap := &state.Snapshot{
		SchemaVersion: state.SnapshotSchemaVersion,
		SessionID:     req.SessionID,
		Project:       &state.SnapshotProject{ID: p.ID, Name: p.Name, Path: p.Path, Progress: p.Progress},
		SavedAt:       now.UTC(),
		Trigger:       req.Trigger,
		ContextUsage:  req.Usage,
		Resume:        saved.Document.Frontmatter(),
		ResumePath:    ws.Rel(saved.Path),
		ResumePrompt:  resumePrompt(p, saved.Document, change),
		Git:           git,
	}
	id, err := st.Snapshots().Write(context.Background(), snap)
	if err != nil {
		return nil, fmt.Errorf("save point written, snapshot not: %w", err)
	}
	return &SaveResult{Saved: saved, SnapshotID: id, Git: git}, nil
}

// sessionKey names the Session History entry: the agent session, or the day when no
// agent session is known, so hand saves of one day share one entry.
func sessionKey(sessionID string, now time.Time) string {
	if sessionID != "" {
		if safe, err := state.SafeID(sessionID); err == nil {
			return safe
		}
	}
	return "manual-" + now.Format("2006-01-02")
}

func resumePrompt(p *loader.Project, doc *resume.Document, c resume.Change) state.ResumePrompt {
	rp := state.ResumePrompt{PendingTasks: []string{}}
	// The header line, dated, whether this save wrote it or an earlier one did.
	rp.LastAction, _ = doc.Header(resume.LastSession)
	state := fmt.Sprintf("%d/%d tasks done (%d%%)", p.Progress.TasksCompleted, p.Progress.TasksTotal, p.Progress.Percent)
	if p.Progress.CurrentTask != "" {
		state += fmt.Sprintf("; next is task %d, %s", p.Progress.CurrentTaskNumber, p.Progress.CurrentTask)
		if p.Progress.CurrentSection != "" {
			state += " (" + p.Progress.CurrentSection + ")"
		}
	}
	if next, ok := doc.Header(resume.NextAction); ok && next != "" {
		state += "; next action: " + next
	}
	rp.CurrentState = state
	for _, t := range markdown.Pending(p.Pending, pendingInSnapshot) {
		rp.PendingTasks = append(rp.PendingTasks, t.Text)
	}
	return rp
}

// changedFiles returns the files git shows changed that belong to this project (as
// paths relative to it) or to no project (relative to the workspace). Other projects'
// files and ctx's own folder are left out.
func changedFiles(st *state.Store, p *loader.Project, git *gitstate.State) []string {
	ws := st.WS
	if git == nil || git.Root == "" {
		return nil
	}
	var out []string
	for _, d := range git.Dirty {
		rel := ws.Rel(filepath.Join(git.Root, filepath.FromSlash(d)))
		if f, ok := workFile(ws, p, rel); ok {
			out = append(out, f)
		}
	}
	return out
}

// workFile tells whether a changed file (workspace-relative, or absolute when outside
// the workspace) is work to list under the project's Files Modified, and how: relative
// to the project when it is in it, relative to the workspace when it belongs to no
// project. Other projects' files, the save point and the tools' own folders are not.
func workFile(ws *loader.Workspace, p *loader.Project, rel string) (string, bool) {
	base := filepath.Base(rel)
	switch {
	case filepath.IsAbs(rel) || !filepath.IsLocal(filepath.FromSlash(rel)): // outside the workspace
	case toolFolder(rel):
		// ctx's state, Claude Code's settings and skills, git itself: not the work.
	case rel == ws.Rel(ws.ResumePath(p)) || strings.HasPrefix(base, durable.TempPrefix):
		// ctx's own files are not the person's work.
	case rel == p.Path: // a project folder git does not track yet, as a whole
	case strings.HasPrefix(rel, p.Path+"/"):
		return strings.TrimPrefix(rel, p.Path+"/"), true
	case strings.HasPrefix(rel, ws.Config.ProjectsDir+"/"):
	default:
		return listedForm(p, filepath.Join(ws.Root, filepath.FromSlash(rel))), true
	}
	return "", false
}

// listedForm is how a save point lists a file: relative to the project folder, where a
// listed path is looked for first. A file of the workspace outside the project is
// "../../src/main.go", so that a file of the same name in the project is never taken
// for it.
func listedForm(p *loader.Project, abs string) string {
	rel, err := filepath.Rel(p.Dir, abs)
	if err != nil {
		return filepath.ToSlash(abs)
	}
	return filepath.ToSlash(rel)
}

// toolFolders hold the tools' own files, never a person's work, even when git shows
// them changed (ctx init writes .claude/ and .ctx/).
var toolFolders = []string{loader.StateDir, ".claude", ".git"}

func toolFolder(rel string) bool {
	first, _, _ := strings.Cut(rel, "/")
	for _, f := range toolFolders {
		if first == f {
			return true
		}
	}
	return false
}

// CheckFiles validates the files a person names as changed: each must stay inside the
// workspace. They are returned as Files Modified lists them: relative to the project
// folder when inside it, else to the workspace.
func CheckFiles(ws *loader.Workspace, p *loader.Project, files []string) ([]string, error) {
	out := make([]string, 0, len(files))
	for _, f := range files {
		abs, err := ws.ResolveListed(p, f)
		if err != nil {
			return nil, fmt.Errorf("--file %q: %w", f, err)
		}
		out = append(out, listedForm(p, abs))
	}
	return out, nil
}
