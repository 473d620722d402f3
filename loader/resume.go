package loader

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ctxtools/ctx/markdown"
	"github.com/ctxtools/ctx/resume"
	"github.com/ctxtools/ctx/templates"
)

// LegacyResumeFile is the older name of the save point (schema v2), read when the
// canonical file is missing.
const LegacyResumeFile = "resume-context.md"

// ResumePath returns the canonical save point path of a project.
func (ws *Workspace) ResumePath(p *Project) string {
	return filepath.Join(p.Dir, ws.Config.PlanningDir, ws.Config.ResumeFile)
}

// resumeCandidates lists where a save point may be, canonical first, then the legacy
// locations.
func (ws *Workspace) resumeCandidates(p *Project) []string {
	return []string{
		ws.ResumePath(p),
		filepath.Join(p.Dir, ws.Config.ResumeFile),
		filepath.Join(p.Dir, ws.Config.PlanningDir, LegacyResumeFile),
	}
}

// FindResume returns the path of the save point in use (canonical or legacy) and whether
// it is a legacy file; "" when there is none. When several exist, the newest (by
// last_updated, else the file's time) is in use and each other one is recorded as a
// problem of the project; on a tie the canonical file wins.
func (ws *Workspace) FindResume(p *Project) (string, bool) {
	path, legacy, _ := ws.findResume(p)
	return path, legacy
}

// findResume is FindResume that also returns the chosen file's parse when choosing
// needed one, so that it is not parsed again.
func (ws *Workspace) findResume(p *Project) (string, bool, *markdown.Document) {
	var found []int
	candidates := ws.resumeCandidates(p)
	for i, c := range candidates {
		if msg := ws.outsideLink(c); msg != "" {
			p.addProblem(msg)
			continue
		}
		if fi, err := os.Stat(c); err == nil && fi.Mode().IsRegular() {
			found = append(found, i)
		} else if err == nil {
			p.problem(ws.Rel(c), errNotRegular(fi))
		} else if !errors.Is(err, os.ErrNotExist) {
			p.problem(ws.Rel(c), unwrapPathError(err))
		}
	}
	switch len(found) {
	case 0:
		return "", false, nil
	case 1:
		return candidates[found[0]], found[0] > 0, nil
	}
	best, bestAt := -1, time.Time{}
	docs := map[int]*markdown.Document{}
	for _, i := range found {
		at, doc := savedTime(candidates[i])
		docs[i] = doc
		if best < 0 || at.After(bestAt) {
			best, bestAt = i, at
		}
	}
	for _, i := range found {
		if i != best {
			p.problem(ws.Rel(candidates[i]), fmt.Errorf("an older save point beside %s, which is the one read; merge what it holds and delete it", ws.Rel(candidates[best])))
		}
	}
	return candidates[best], best > 0, docs[best]
}

// savedTime is when the save point at path was saved: its last_updated (or the older
// updated), else the file's modification time; with the parse it read, if any.
func savedTime(path string) (time.Time, *markdown.Document) {
	fi, err := os.Stat(path)
	if err != nil {
		return time.Time{}, nil
	}
	data, err := readRegular(path, maxResumeBytes)
	if err != nil {
		return fi.ModTime(), nil
	}
	doc := markdown.Parse(data)
	if t, ok := ParseTime(cmp.Or(strings.TrimSpace(doc.FM.String("last_updated")), strings.TrimSpace(doc.FM.String("updated")))); ok {
		return t, doc
	}
	return fi.ModTime(), doc
}

// ReadResume reads a project's save point. Problems with it are recorded on the project.
func (ws *Workspace) ReadResume(p *Project) *resume.State {
	r := &resume.State{Path: ws.Rel(ws.ResumePath(p)), Frontmatter: map[string]any{}}
	path, legacy, doc := ws.findResume(p)
	if path == "" {
		r.Note = "no save point yet: run `ctx save --project " + p.ID + "` to create " + r.Path
		return r
	}
	r.Abs, r.Path, r.Legacy = path, ws.Rel(path), legacy
	if doc == nil {
		data, err := readRegular(path, maxResumeBytes)
		if err != nil {
			p.problem(r.Path, err)
			r.Note = "the save point could not be read: " + err.Error()
			return r
		}
		doc = markdown.Parse(data)
	}
	ws.fillResume(p, r, resume.FromMarkdown(doc))
	return r
}

// resumeFromDocument is the state of d as if it were the save point at path: what a
// save computes its Loading Sequence from before it writes.
func (ws *Workspace) resumeFromDocument(p *Project, path string, d *resume.Document) *resume.State {
	r := &resume.State{Abs: path, Path: ws.Rel(path), Frontmatter: map[string]any{}}
	ws.fillResume(p, r, d)
	return r
}

func (ws *Workspace) fillResume(p *Project, r *resume.State, d *resume.Document) {
	r.Read(d)
	if err := d.FrontmatterErr(); err != nil {
		p.Problems = append(p.Problems, markdown.Locate(r.Path, err))
		r.Note = "the save point's frontmatter does not parse; its body is still listed"
	}
	if r.Legacy {
		r.Note = "read from the legacy location " + r.Path + "; `ctx save` writes " + ws.Rel(ws.ResumePath(p))
	}
}

// SaveTarget is what a save of project p's save point needs of the workspace.
func (ws *Workspace) SaveTarget(p *Project) resume.Target {
	path := ws.ResumePath(p)
	return resume.Target{
		Path: path, Rel: ws.Rel,
		Current: func() string {
			found, _ := ws.FindResume(p)
			return found
		},
		LockDir:   ws.StatePath("state", "locks"),
		Templates: templates.Set{Dir: ws.StatePath("templates")},
		Project: resume.Project{
			ID: p.ID, Name: p.Name, Status: p.Status, Description: p.Description, Number: p.Number,
			Path: p.Path, Progress: p.Progress, StepsProblem: p.StepsProblem,
		},
		Reads: func(d *resume.Document) []resume.Read {
			var out []resume.Read
			for _, r := range ws.RecommendedReads(p, ws.resumeFromDocument(p, path, d)) {
				out = append(out, resume.Read{Path: r.Path, Why: r.Why, Exists: r.Exists})
			}
			return out
		},
		Prepare: func() error { return EnsureStateDir(ws.StatePath("state")) },
	}
}

// Save saves project p's save point (resume.Save with the workspace's target).
func (ws *Workspace) Save(p *Project, c resume.Change) (*resume.Saved, error) {
	return resume.Save(ws.SaveTarget(p), c)
}
