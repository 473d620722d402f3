package loader

import (
	"errors"
	"os"
	"path/filepath"
	"strings"

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
	// Note explains a missing or unreadable save point and what to do about it.
	Note string `json:"note,omitempty"`

	abs  string
	body []byte
	fm   markdown.Frontmatter
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
// it is a legacy file; "" when there is none.
func (ws *Workspace) FindResume(p *Project) (string, bool) {
	for i, c := range ws.resumeCandidates(p) {
		if fi, err := os.Stat(c); err == nil && fi.Mode().IsRegular() {
			return c, i > 0
		} else if err == nil {
			p.problem(ws.Rel(c), errNotRegular(fi))
		} else if !errors.Is(err, os.ErrNotExist) {
			p.problem(ws.Rel(c), unwrapPathError(err))
		}
	}
	return "", false
}

// ReadResume reads a project's save point. Problems with it are recorded on the project.
func (ws *Workspace) ReadResume(p *Project) *ResumeState {
	r := &ResumeState{Path: ws.Rel(ws.ResumePath(p)), Frontmatter: map[string]any{}}
	path, legacy := ws.FindResume(p)
	if path == "" {
		r.Note = "no save point yet: run `ctx save --project " + p.ID + "` to create " + r.Path
		return r
	}
	r.abs, r.Path, r.Legacy = path, ws.Rel(path), legacy
	data, err := readRegular(path, maxResumeBytes)
	if err != nil {
		p.problem(r.Path, err)
		r.Note = "the save point could not be read: " + err.Error()
		return r
	}
	ws.fillResume(p, r, data)
	return r
}

// ResumeFromBytes is the resume state of data as if it were the save point at path:
// what a save computes its Loading Sequence from before it writes.
func (ws *Workspace) ResumeFromBytes(p *Project, path string, data []byte) *ResumeState {
	r := &ResumeState{abs: path, Path: ws.Rel(path), Frontmatter: map[string]any{}}
	ws.fillResume(p, r, data)
	return r
}

func (ws *Workspace) fillResume(p *Project, r *ResumeState, data []byte) {
	r.Exists = true
	fm, err := markdown.ReadFrontmatter(data)
	if err != nil {
		p.Problems = append(p.Problems, Locate(r.Path, err))
		r.Note = "the save point's frontmatter does not parse; its body is still listed"
	}
	r.fm, r.body = fm, fm.Body
	if fm.Values != nil {
		r.Frontmatter = fm.Values
	}
	r.LastUpdated = fm.String("last_updated")
	header := func(name string) string {
		if l, ok := markdown.FindLabel(data, name, "Quick Context"); ok {
			return strings.TrimSpace(string(data[l.ValueStart:l.ValueEnd]))
		}
		return ""
	}
	r.LastSession = header("Last Session")
	r.CurrentPhase = firstNonEmpty(header("Current Phase"), fm.String("current_phase"))
	r.NextAction = firstNonEmpty(header("Next Action"), fm.String("next_task_description"))
	if r.Legacy {
		r.Note = "read from the legacy location " + r.Path + "; `ctx save` writes " + ws.Rel(ws.ResumePath(p))
	}
}

// Section returns the body of the save point's section with the given title ("" when
// absent).
func (r *ResumeState) Section(title string) string {
	if s, ok := markdown.Find(markdown.Sections(r.body), title); ok {
		return string(s.Body(r.body))
	}
	return ""
}

// FrontmatterStrings returns a frontmatter list (or single string) value.
func (r *ResumeState) FrontmatterStrings(key string) []string {
	return r.fm.Strings(key)
}

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
	all := markdown.Sections(r.body)
	out := make([]ResumeSection, 0, len(all))
	for i, s := range all {
		end := s.End
		if i+1 < len(all) && all[i+1].Start < end {
			end = all[i+1].Start
		}
		out = append(out, ResumeSection{Title: s.Title, Level: s.Level, Body: string(r.body[s.BodyStart:end])})
	}
	return out
}
