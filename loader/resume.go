package loader

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ctxtools/ctx/markdown"
)

// LegacyResumeFile is the older name of the save point (schema v2), read when the
// canonical file is missing.
const LegacyResumeFile = "resume-context.md"

// ResumeState is what the load reports of a project's save point.
type ResumeState struct {
	// Path is the file read, relative to the workspace; when none exists, the canonical
	// path where it will be created.
	Path         string         `json:"path"`
	Exists       bool           `json:"exists"`
	Legacy       bool           `json:"legacy"`
	Frontmatter  map[string]any `json:"frontmatter"`
	LastSession  string         `json:"last_session"`
	CurrentPhase string         `json:"current_phase"`
	NextAction   string         `json:"next_action"`
	LastUpdated  string         `json:"last_updated"`
	// CurrentSkill and WorkflowStep are what the save point's frontmatter says the agent
	// was running (current_skill, or the older last_skill; current_workflow_step).
	CurrentSkill string `json:"current_skill,omitempty"`
	WorkflowStep string `json:"current_workflow_step,omitempty"`
	// Note explains a missing or unreadable save point and what to do about it.
	Note string `json:"note,omitempty"`

	abs string
	// doc is the one parse of the save point that every reader of this state uses.
	doc *markdown.Document
}

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
	if t, ok := ParseTime(firstNonEmpty(doc.FM.String("last_updated"), doc.FM.String("updated"))); ok {
		return t, doc
	}
	return fi.ModTime(), doc
}

// ReadResume reads a project's save point. Problems with it are recorded on the project.
func (ws *Workspace) ReadResume(p *Project) *ResumeState {
	r := &ResumeState{Path: ws.Rel(ws.ResumePath(p)), Frontmatter: map[string]any{}}
	path, legacy, doc := ws.findResume(p)
	if path == "" {
		r.Note = "no save point yet: run `ctx save --project " + p.ID + "` to create " + r.Path
		return r
	}
	r.abs, r.Path, r.Legacy = path, ws.Rel(path), legacy
	if doc == nil {
		data, err := readRegular(path, maxResumeBytes)
		if err != nil {
			p.problem(r.Path, err)
			r.Note = "the save point could not be read: " + err.Error()
			return r
		}
		doc = markdown.Parse(data)
	}
	ws.fillResume(p, r, doc)
	return r
}

// ResumeFromDocument is the resume state of doc as if it were the save point at path:
// what a save computes its Loading Sequence from before it writes.
func (ws *Workspace) ResumeFromDocument(p *Project, path string, doc *markdown.Document) *ResumeState {
	r := &ResumeState{abs: path, Path: ws.Rel(path), Frontmatter: map[string]any{}}
	ws.fillResume(p, r, doc)
	return r
}

// The Quick Context header labels and the section they may sit in.
const (
	labelLastSession  = "Last Session"
	labelCurrentPhase = "Current Phase"
	labelNextAction   = "Next Action"
	quickContext      = "Quick Context"
)

func (ws *Workspace) fillResume(p *Project, r *ResumeState, doc *markdown.Document) {
	r.Exists = true
	r.doc = doc
	fm := doc.FM
	if doc.FMErr != nil {
		p.Problems = append(p.Problems, Locate(r.Path, doc.FMErr))
		r.Note = "the save point's frontmatter does not parse; its body is still listed"
	}
	if fm.Values != nil {
		r.Frontmatter = fm.Values
	}
	header := func(name string) string {
		if l, ok := doc.Label(name, quickContext); ok {
			return strings.TrimSpace(string(doc.Bytes()[l.ValueStart:l.ValueEnd]))
		}
		return ""
	}
	// The older keys real save points use count as the current ones.
	r.LastUpdated = firstNonEmpty(fm.String("last_updated"), fm.String("updated"))
	r.LastSession = header(labelLastSession)
	r.CurrentPhase = firstNonEmpty(header(labelCurrentPhase), fm.String("current_phase"), fm.String("phase"))
	r.NextAction = firstNonEmpty(header(labelNextAction), nextFromFrontmatter(fm))
	r.CurrentSkill = firstNonEmpty(fm.String("current_skill"), fm.String("last_skill"))
	r.WorkflowStep = strings.TrimSpace(fm.String("current_workflow_step"))
	if r.Legacy {
		r.Note = "read from the legacy location " + r.Path + "; `ctx save` writes " + ws.Rel(ws.ResumePath(p))
	}
}

// nextFromFrontmatter is the next action the proposal's keys give when no header line
// does: "Task 4 — Validate expiry (Phase 2: Payment)".
func nextFromFrontmatter(fm markdown.Frontmatter) string {
	desc := strings.TrimSpace(fm.String("next_task_description"))
	if desc == "" {
		return ""
	}
	if n := strings.TrimSpace(fm.String("next_task_number")); n != "" && n != "0" {
		desc = "Task " + n + " — " + desc
	}
	if s := strings.TrimSpace(fm.String("current_section_name")); s != "" {
		desc += " (" + s + ")"
	}
	return desc
}

// progressFromFrontmatter is the progress the save point last recorded, for a project
// whose steps file is missing: the proposal's progress_* and next_task_* keys.
func progressFromFrontmatter(fm map[string]any) (Progress, bool) {
	num := func(key string) int {
		switch v := fm[key].(type) {
		case int64:
			return int(v)
		case float64:
			return int(v)
		}
		return 0
	}
	text := func(key string) string {
		if s, ok := fm[key].(string); ok {
			return strings.TrimSpace(s)
		}
		return ""
	}
	p := Progress{
		TasksTotal: num("progress_tasks_total"), TasksCompleted: num("progress_tasks_completed"), Percent: num("progress_percentage"),
		CurrentTask: text("next_task_description"), CurrentSection: text("current_section_name"),
		CurrentTaskNumber: num("next_task_number"), CurrentSectionNumber: num("current_section"),
	}
	if p.TasksTotal <= 0 || p.TasksCompleted < 0 || p.TasksCompleted > p.TasksTotal {
		return Progress{}, false
	}
	if p.Percent <= 0 || p.Percent > 100 {
		p.Percent = p.TasksCompleted * 100 / p.TasksTotal
	}
	return p, true
}

// Section returns the body of the save point's section with the given title ("" when
// absent). Equivalent titles at any level count (markdown.SameTitle).
func (r *ResumeState) Section(title string) string {
	if r.doc == nil {
		return ""
	}
	if s, ok := r.doc.Section(title); ok {
		return string(s.Body(r.doc.Bytes()))
	}
	return ""
}

// FrontmatterStrings returns a frontmatter list (or single string) value.
func (r *ResumeState) FrontmatterStrings(key string) []string {
	if r.doc == nil {
		return nil
	}
	return r.doc.FM.Strings(key)
}

// Document returns the save point's one parse (nil when there is none).
func (r *ResumeState) Document() *markdown.Document { return r.doc }

func firstNonEmpty(values ...string) string {
	for _, v := range values {
		if strings.TrimSpace(v) != "" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// ResumeSection is a heading of the save point with its own text (up to the next
// heading of any level).
type ResumeSection struct {
	Title string
	Level int
	Body  string
}

// Sections returns the save point's headings in order, each with its own text.
func (r *ResumeState) Sections() []ResumeSection {
	if r.doc == nil {
		return nil
	}
	src := r.doc.Bytes()
	all := r.doc.Sections()
	out := make([]ResumeSection, 0, len(all))
	for i, s := range all {
		end := s.End
		if i+1 < len(all) && all[i+1].Start < end {
			end = all[i+1].Start
		}
		out = append(out, ResumeSection{Title: s.Title, Level: s.Level, Body: string(src[s.BodyStart:end])})
	}
	return out
}
