package loader

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/ctxtools/ctx/internal/editdist"
)

// NotFoundError says that no project matches a query.
type NotFoundError struct {
	Query       string
	Suggestions []string
}

func (e *NotFoundError) Error() string {
	msg := fmt.Sprintf("no project matches %q", e.Query)
	if isNumber(e.Query) {
		msg = "no project " + e.Query
	}
	if len(e.Suggestions) > 0 {
		return msg + "; did you mean " + strings.Join(e.Suggestions, ", ") + "?"
	}
	return msg + "; run `ctx projects` to list them"
}

// AmbiguousError says that several projects match a query; Candidates lists them all.
type AmbiguousError struct {
	Query      string
	Candidates []string
}

func (e *AmbiguousError) Error() string {
	return fmt.Sprintf("%q matches %d projects: %s; name one by its id or path",
		e.Query, len(e.Candidates), strings.Join(e.Candidates, ", "))
}

// ErrNoSavePoint is returned by Newest when no project has a save point.
var ErrNoSavePoint = errors.New("no project has a save point yet: name one, e.g. `ctx load 1`")

// Resolve finds the one project a query names: its number (1, 01 and 001 mean project 1,
// never 10; a top-level project before an onboarding one), its id or path, or a case-insensitive part of its slug or name. The exact
// forms win over parts; several matches at the same level are an *AmbiguousError, none a
// *NotFoundError. The project is returned with its progress read.
func (ws *Workspace) Resolve(query string) (*Project, error) {
	q := strings.TrimSpace(query)
	if q == "" {
		return nil, errors.New("empty project name: give a number, an id or part of a name")
	}
	if isNumber(q) {
		return ws.resolveNumber(q)
	}
	folders, err := ws.Folders()
	if err != nil {
		return nil, err
	}
	q = strings.TrimSuffix(path.Clean(strings.ReplaceAll(q, `\`, "/")), "/")
	projectsPrefix := path.Clean(ws.Config.ProjectsDir) + "/"
	if m := matchFolders(folders, func(f Folder) bool {
		return strings.EqualFold(f.ID, q) || strings.EqualFold(f.Rel, q) ||
			strings.EqualFold(strings.TrimPrefix(f.Rel, projectsPrefix), q)
	}); len(m) > 0 {
		return ws.pick(query, m)
	}
	if m := matchFolders(folders, func(f Folder) bool { return strings.EqualFold(f.Slug, q) }); len(m) > 0 {
		return ws.pick(query, m)
	}
	// The start of an id, number included ("24-project-skills" for
	// 24-project-skills-research): the number must be the project's own.
	if _, _, ok := splitFolderName(q); ok {
		lq := strings.ToLower(q)
		if m := matchFolders(folders, func(f Folder) bool {
			id := strings.ToLower(f.ID)
			return strings.HasPrefix(id, lq) && (len(id) == len(lq) || !isDigit(id[len(lq)-1]) || !isDigit(id[len(lq)]))
		}); len(m) > 0 {
			return ws.pick(query, m)
		}
	}
	// Names live in the overview files: read them all, so that a part that also
	// matches another project's name is reported as ambiguous, not guessed.
	projects := make([]*Project, len(folders))
	parallel(len(folders), func(i int) { projects[i] = ws.ReadProject(folders[i], ReadOptions{}) })
	lq := strings.ToLower(q)
	var exact, partial []Folder
	for i, p := range projects {
		if strings.EqualFold(p.Name, q) {
			exact = append(exact, folders[i])
		}
		if strings.Contains(strings.ToLower(p.Slug), lq) || strings.Contains(strings.ToLower(p.Name), lq) {
			partial = append(partial, folders[i])
		}
	}
	if len(exact) > 0 {
		return ws.pick(query, exact)
	}
	if len(partial) > 0 {
		return ws.pick(query, partial)
	}
	return nil, &NotFoundError{Query: query, Suggestions: suggest(lq, projects)}
}

// resolveNumber lists only the folders of number q; the whole list only when there is
// none, for the suggestions.
func (ws *Workspace) resolveNumber(q string) (*Project, error) {
	n, err := strconv.Atoi(q)
	if err != nil {
		return nil, &NotFoundError{Query: q}
	}
	folders, err := ws.folders(func(number int) bool { return number == n })
	if err != nil {
		return nil, err
	}
	// Onboarding projects keep their own numbering, which often repeats the top-level
	// numbers; a number names a top-level project first.
	for _, onboarding := range []bool{false, true} {
		if m := matchFolders(folders, func(f Folder) bool { return f.Number == n && f.Onboarding == onboarding }); len(m) > 0 {
			return ws.pick(q, m)
		}
	}
	if folders, err = ws.Folders(); err != nil {
		return nil, err
	}
	return nil, &NotFoundError{Query: q, Suggestions: nearestNumbers(n, folders)}
}

func (ws *Workspace) pick(query string, m []Folder) (*Project, error) {
	if len(m) > 1 {
		names := make([]string, len(m))
		for i, f := range m {
			names[i] = f.Rel
		}
		return nil, &AmbiguousError{Query: query, Candidates: names}
	}
	return ws.ReadProject(m[0], ReadOptions{Progress: true}), nil
}

func matchFolders(folders []Folder, match func(Folder) bool) []Folder {
	var out []Folder
	for _, f := range folders {
		if match(f) {
			out = append(out, f)
		}
	}
	return out
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isNumber(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// nearestNumbers suggests the ids of up to three projects with the closest numbers.
func nearestNumbers(n int, folders []Folder) []string {
	sorted := append([]Folder(nil), folders...)
	dist := func(f Folder) int {
		if f.Number > n {
			return f.Number - n
		}
		return n - f.Number
	}
	sort.SliceStable(sorted, func(i, j int) bool { return dist(sorted[i]) < dist(sorted[j]) })
	var out []string
	for _, f := range sorted[:min(3, len(sorted))] {
		out = append(out, f.ID)
	}
	return out
}

// suggest returns up to three project ids whose slug or name is close to q.
func suggest(q string, projects []*Project) []string {
	type scored struct {
		id   string
		dist int
	}
	var close []scored
	limit := max(2, len(q)/3)
	for _, p := range projects {
		d := min(editdist.Distance(q, strings.ToLower(p.Slug)), editdist.Distance(q, strings.ToLower(p.Name)))
		for _, word := range strings.FieldsFunc(strings.ToLower(p.Slug+" "+p.Name), func(r rune) bool { return r == '-' || r == ' ' }) {
			d = min(d, editdist.Distance(q, word))
		}
		if d <= limit {
			close = append(close, scored{p.ID, d})
		}
	}
	sort.SliceStable(close, func(i, j int) bool { return close[i].dist < close[j].dist })
	var out []string
	for _, s := range close[:min(3, len(close))] {
		out = append(out, s.id)
	}
	return out
}

// Newest returns the project whose save point is newest by its last_updated (the file's
// modification time when that is missing or unreadable).
func (ws *Workspace) Newest() (*Project, error) {
	folders, err := ws.Folders()
	if err != nil {
		return nil, err
	}
	stamps := make([]time.Time, len(folders))
	parallel(len(folders), func(i int) {
		if folders[i].Err == nil {
			stamps[i] = ws.savedAt(folders[i])
		}
	})
	best := -1
	for i, t := range stamps {
		if !t.IsZero() && (best < 0 || t.After(stamps[best])) {
			best = i
		}
	}
	if best < 0 {
		return nil, ErrNoSavePoint
	}
	return ws.ReadProject(folders[best], ReadOptions{Progress: true}), nil
}

func (ws *Workspace) savedAt(f Folder) time.Time {
	p := &Project{Dir: f.Dir}
	path, _, doc := ws.findResume(p)
	if path == "" {
		return time.Time{}
	}
	if doc == nil {
		t, _ := savedTime(path)
		return t
	}
	if t, ok := ParseTime(cmp.Or(strings.TrimSpace(doc.FM.String("last_updated")), strings.TrimSpace(doc.FM.String("updated")))); ok {
		return t
	}
	if fi, err := os.Stat(path); err == nil {
		return fi.ModTime()
	}
	return time.Time{}
}

// ParseTime reads the timestamps people and ctx write in frontmatter: RFC 3339, with or
// without seconds or zone, or a plain date.
func ParseTime(s string) (time.Time, bool) {
	s = strings.TrimSpace(s)
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02 15:04:05", "2006-01-02T15:04", "2006-01-02 15:04", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}
