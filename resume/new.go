package resume

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/ctxtools/ctx/internal/durable"
	"github.com/ctxtools/ctx/loader"
	"github.com/ctxtools/ctx/templates"
)

// NewProject describes a project to create.
type NewProject struct {
	Name        string
	Status      string // default PLANNING
	Description string
	Now         time.Time
}

// maxSlug bounds the slug of a new project folder.
const maxSlug = 48

// ErrBadName says that a project name gives no usable folder name.
var ErrBadName = errors.New("project name has no letters or digits to make a folder name from")

// Create makes a new project: the next free number (archived projects count, so
// numbers never repeat), a slugged folder, the planning files and the save point, all
// from templates. It holds a workspace lock so two creations never take one number.
func Create(ws *loader.Workspace, np NewProject) (*loader.Project, error) {
	slug := Slug(np.Name)
	if slug == "" {
		return nil, ErrBadName
	}
	if np.Status == "" {
		np.Status = "PLANNING"
	}
	if err := loader.EnsureStateDir(ws.StatePath("state")); err != nil {
		return nil, err
	}
	var created *loader.Project
	err := durable.WithLock(ws.StatePath("state", "new-project"), func() error {
		n, err := nextNumber(ws)
		if err != nil {
			return err
		}
		id := fmt.Sprintf("%02d-%s", n, slug)
		dir := filepath.Join(ws.ProjectsPath(), id)
		if err := durable.MkdirAll(ws.ProjectsPath(), 0o755); err != nil {
			return err
		}
		if err := os.Mkdir(dir, 0o755); err != nil {
			return fmt.Errorf("create %s: %w", ws.Rel(dir), err)
		}
		created, err = fill(ws, dir, id, n, np)
		if err != nil {
			_ = os.RemoveAll(dir) // a half-made project helps no one
		}
		return err
	})
	return created, err
}

func fill(ws *loader.Workspace, dir, id string, n int, np NewProject) (*loader.Project, error) {
	planning := filepath.Join(dir, ws.Config.PlanningDir)
	for _, sub := range []string{ws.Config.PlanningDir, "02-resources", loader.WorkingDir, "04-outputs"} {
		if err := durable.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
			return nil, err
		}
	}
	set := templates.Set{Dir: ws.StatePath("templates")}
	data := templates.Data{
		Project: templates.Project{ID: id, Number: n, Name: strings.TrimSpace(np.Name), Status: np.Status, Description: strings.TrimSpace(np.Description)},
		Now:     np.Now.UTC().Format(time.RFC3339),
		Today:   np.Now.Format("2006-01-02"),
	}
	for name, file := range map[string]string{templates.Overview: "overview.md", templates.Plan: "plan.md", templates.Steps: "steps.md"} {
		text, err := set.Render(name, data)
		if err != nil {
			return nil, err
		}
		if err := durable.WriteFile(filepath.Join(planning, file), text, 0o644); err != nil {
			return nil, err
		}
	}
	p := ws.ReadProject(loader.Folder{ID: id, Number: n, Slug: strings.TrimPrefix(id, fmt.Sprintf("%02d-", n)), Dir: dir, Rel: ws.Rel(dir)}, loader.ReadOptions{Progress: true})
	if _, err := Save(ws, p, Change{Now: np.Now, Trigger: "new", Summary: "project created"}); err != nil {
		return nil, err
	}
	return p, nil
}

// Slug turns a name into a folder slug: lowercase letters and digits (of any script)
// joined by '-', at most maxSlug runes.
func Slug(name string) string {
	var b strings.Builder
	n, dash := 0, false
	for _, r := range strings.ToLower(name) {
		if n == maxSlug {
			break
		}
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
				n++
			}
			b.WriteRune(r)
			n++
			dash = false
			continue
		}
		dash = true
	}
	return strings.TrimRight(b.String(), "-")
}

// nextNumber is one more than the highest project number in use, counting projects in
// archive folders (any folder of the projects folder whose name holds "archive").
func nextNumber(ws *loader.Workspace) (int, error) {
	folders, err := ws.Folders()
	if err != nil {
		return 0, err
	}
	highest := 0
	for _, f := range folders {
		if !f.Onboarding {
			highest = max(highest, f.Number)
		}
	}
	entries, _ := os.ReadDir(ws.ProjectsPath())
	for _, e := range entries {
		if !e.IsDir() || !strings.Contains(strings.ToLower(e.Name()), "archive") {
			continue
		}
		archived, _ := os.ReadDir(filepath.Join(ws.ProjectsPath(), e.Name()))
		for _, a := range archived {
			highest = max(highest, leadingNumber(a.Name()))
		}
	}
	return highest + 1, nil
}

func leadingNumber(name string) int {
	i := 0
	for i < len(name) && name[i] >= '0' && name[i] <= '9' {
		i++
	}
	if i == 0 || i >= len(name) || name[i] != '-' {
		return 0
	}
	n, err := strconv.Atoi(name[:i])
	if err != nil {
		return 0
	}
	return n
}
