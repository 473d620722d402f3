package loader

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/ctxtools/ctx/internal/durable"
	"github.com/ctxtools/ctx/resume"
	"github.com/ctxtools/ctx/templates"
)

// NewProject describes a project to create.
type NewProject struct {
	Name        string
	Status      string // default PLANNING
	Description string
	Now         time.Time
}

// NewTempPrefix begins the name of the folder a new project is built in, inside the
// projects folder, before it is renamed into place. The loader lists only numbered
// folders, so a folder a killed creation left is never taken for a project.
const NewTempPrefix = ".ctx-new-"

// maxSlug bounds the slug of a new project folder.
const maxSlug = 48

// ErrBadName says that a project name gives no usable folder name.
var ErrBadName = errors.New("project name has no letters or digits to make a folder name from")

// ErrNameTaken says that a project of the same folder name (the slug, whatever its
// number) exists: a second one would make that name match two projects, so neither
// could be loaded by it.
var ErrNameTaken = errors.New("a project of that name exists")

// Create makes a new project: the next free number (archived projects count, so
// numbers never repeat), a slugged folder, the planning files and the save point, all
// from templates. It holds a workspace lock so two creations never take one number.
//
// The project appears whole or not at all: it is built in a temporary folder of the
// projects folder (NewTempPrefix, a name the loader never lists), every file synced,
// then renamed into place in one step. A creation killed before the rename leaves
// only that temporary folder, which a later Create removes.
func (ws *Workspace) Create(np NewProject) (*Project, error) {
	slug := Slug(np.Name)
	if slug == "" {
		return nil, ErrBadName
	}
	if np.Status == "" {
		np.Status = "PLANNING"
	}
	if err := EnsureStateDir(ws.StatePath("state")); err != nil {
		return nil, err
	}
	var created *Project
	err := durable.WithLock(context.Background(), ws.StatePath("state", "new-project"), func() error {
		projects := ws.ProjectsPath()
		if err := durable.MkdirAll(projects, 0o755); err != nil {
			return err
		}
		durable.RemoveStaleDirs(projects, NewTempPrefix, time.Now())
		if taken, ok := ws.folderOf(slug); ok {
			return fmt.Errorf("%w: %s; give this one another name", ErrNameTaken, taken.Rel)
		}
		n, err := ws.nextNumber()
		if err != nil {
			return err
		}
		id := fmt.Sprintf("%02d-%s", n, slug)
		dir := filepath.Join(projects, id)
		err = durable.BuildDir(dir, NewTempPrefix, func(tmp string) error { return ws.fill(tmp, id, n, np) })
		if err != nil {
			if errors.Is(err, os.ErrExist) {
				return fmt.Errorf("create %s: %w", ws.Rel(dir), err)
			}
			return err
		}
		// The project is whole from here on: should this sync fail, a crash of the machine
		// could at worst undo the rename, and the temporary folder would be removed by the
		// next creation. Reporting a failure for a project that exists would mislead.
		_ = durable.SyncDir(projects)
		created = ws.ReadProject(ws.projectFolder(dir, id, n), ReadOptions{Progress: true})
		return nil
	})
	return created, err
}

// fill writes the folders, planning files and save point of project id into dir.
func (ws *Workspace) fill(dir, id string, n int, np NewProject) error {
	planning := filepath.Join(dir, ws.Config.PlanningDir)
	for _, sub := range []string{ws.Config.PlanningDir, "02-resources", WorkingDir, "04-outputs"} {
		if err := durable.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
			return err
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
			return err
		}
		if err := durable.WriteFile(filepath.Join(planning, file), text, 0o644); err != nil {
			return err
		}
	}
	// The save point names its reads relative to the project folder, so writing it
	// in the temporary folder gives the bytes it has once renamed. No other process
	// knows that folder: the save point's lock (Save) is not needed, and would leave a
	// lock file named after a path that is gone.
	p := ws.ReadProject(ws.projectFolder(dir, id, n), ReadOptions{Progress: true})
	t := ws.SaveTarget(p)
	t.Prepare = nil
	_, err := resume.SaveUnlocked(t, resume.Change{Now: np.Now, Trigger: "new", Summary: "project created"})
	return err
}

// projectFolder is the folder of project id, as the loader would list it, kept in dir.
func (ws *Workspace) projectFolder(dir, id string, n int) Folder {
	return Folder{ID: id, Number: n, Slug: strings.TrimPrefix(id, fmt.Sprintf("%02d-", n)), Dir: dir, Rel: ws.Rel(dir)}
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

// folderOf returns the project folder whose slug is slug, if there is one.
func (ws *Workspace) folderOf(slug string) (Folder, bool) {
	folders, _ := ws.Folders()
	for _, f := range folders {
		if f.Slug == slug {
			return f, true
		}
	}
	return Folder{}, false
}

// nextNumber is one more than the highest project number in use, counting projects in
// archive folders (any folder of the projects folder whose name holds "archive").
func (ws *Workspace) nextNumber() (int, error) {
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
