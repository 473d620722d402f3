package loader

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ctxtools/ctx/internal/durable"
)

// IsWorkspace reports whether dir is a workspace root: it holds .ctx/, the projects
// folder or the 02-builds layout.
func IsWorkspace(dir string) bool { return looksLikeWorkspace(dir) }

// Layout is what a folder that is not yet a workspace holds, as ctx init finds it:
// where its numbered projects are, if it has any, and what making it a workspace
// creates.
type Layout struct {
	Root string
	// ProjectsDir is the folder of numbered projects ctx will read: 02-projects, or a
	// folder of the person's own that already holds NN-slug/01-planning projects.
	ProjectsDir string
	// Adopted is true when ProjectsDir is a folder of the person's own, so the
	// workspace's config must name it.
	Adopted bool
	// Projects is how many numbered projects ProjectsDir holds today.
	Projects int
	// Unplanned are the numbered folders of an adopted ProjectsDir that hold no
	// planning folder yet: ctx lists them too, as projects with no tasks.
	Unplanned []string
	// Elsewhere are the folders of projects found when more than one holds them: ctx
	// reads one projects folder, so none is adopted and the person chooses.
	Elsewhere []string
	// Entries is how many files and folders the root holds today: none of them is
	// moved or deleted.
	Entries int
}

// ErrWorkspaceRoot says a folder must not become a workspace: every folder below a
// workspace root finds it, so the home folder, a folder above it or a system folder
// would swallow everything, and a folder inside or around other workspaces would hide
// them.
var ErrWorkspaceRoot = errors.New("not a place for a workspace")

// systemFolders are top-level folders that hold everyone's files, never one workspace.
var systemFolders = []string{"bin", "boot", "dev", "etc", "home", "lib", "media", "mnt", "opt", "proc", "root", "run", "srv", "sys", "tmp", "Users", "usr", "var", "Volumes"}

// Survey looks at dir, which is not a workspace, and says how it would become one. A
// folder whose numbered folders (NN-slug) hold projects, a planning folder as ctx new
// makes them, is adopted with itself as the projects folder; a folder holding exactly
// one folder of such projects is adopted with that one; any other folder gets a new,
// empty 02-projects/. Nothing is written. home is the user's home folder ("" for none).
func Survey(dir, home string) (*Layout, error) {
	root, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if real, err := filepath.EvalSymlinks(root); err == nil {
		root = real
	}
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil, err
	}
	if err := checkPlace(root, home, entries); err != nil {
		return nil, err
	}
	l := &Layout{Root: root, ProjectsDir: DefaultProjectsDir, Entries: len(entries)}
	switch found := ProjectFolders(root); len(found) {
	case 0:
	case 1:
		l.ProjectsDir, l.Adopted = found[0], true
		l.Projects, l.Unplanned = countProjects(filepath.Join(root, found[0]))
	default:
		l.Elsewhere = found
	}
	return l, nil
}

// ProjectFolders names the folders of root that hold numbered projects (NN-slug
// folders with a planning folder, as ctx new makes them): "." when root's own numbered
// folders are projects, else those of its subfolders that hold some, in order.
func ProjectFolders(root string) []string {
	if n, _ := countProjects(root); n > 0 {
		return []string{"."}
	}
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil
	}
	var found []string
	for _, e := range entries {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		if n, _ := countProjects(filepath.Join(root, e.Name())); n > 0 {
			found = append(found, e.Name())
		}
	}
	return found
}

// checkPlace refuses a root that must not become a workspace (ErrWorkspaceRoot): /,
// a system folder, the home folder or a folder above it, a folder inside a workspace
// (reached through a link, which the walk up from the typed path does not see), and a
// folder that holds workspaces (entries are root's).
func checkPlace(root, home string, entries []os.DirEntry) error {
	parent := filepath.Dir(root)
	switch {
	case root == parent:
		return fmt.Errorf("%s is the file system's root: %w; make one in a folder of its own", root, ErrWorkspaceRoot)
	case parent == string(filepath.Separator) && slices.Contains(systemFolders, filepath.Base(root)):
		return fmt.Errorf("%s holds everyone's files: %w; make one in a folder of its own", root, ErrWorkspaceRoot)
	}
	if home != "" {
		if h, err := filepath.EvalSymlinks(home); err == nil && durable.Within(h, root) {
			what := "your home folder"
			if h != root {
				what = "above your home folder"
			}
			return fmt.Errorf("%s is %s: %w; make one in a folder of its own, e.g. ~/work", root, what, ErrWorkspaceRoot)
		}
	}
	for dir := parent; ; dir = filepath.Dir(dir) {
		if looksLikeWorkspace(dir) {
			return fmt.Errorf("%s is inside the workspace %s: %w; use that one (cd there, or --workspace)", root, dir, ErrWorkspaceRoot)
		}
		if dir == filepath.Dir(dir) {
			break
		}
	}
	var inner []string
	for _, e := range entries {
		if e.IsDir() && looksLikeWorkspace(filepath.Join(root, e.Name())) {
			inner = append(inner, e.Name()+"/")
		}
	}
	if len(inner) > 0 {
		return fmt.Errorf("%s holds the workspace(s) %s: %w; run ctx init in one of them, or in a folder of its own", root, strings.Join(inner, ", "), ErrWorkspaceRoot)
	}
	return nil
}

// countProjects counts the NN-slug folders in dir that hold a planning folder, and
// names those that do not.
func countProjects(dir string) (n int, unplanned []string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0, nil
	}
	for _, e := range entries {
		if _, _, ok := splitFolderName(e.Name()); !ok || !e.IsDir() {
			continue
		}
		if isDir(filepath.Join(dir, e.Name(), DefaultPlanningDir)) {
			n++
		} else {
			unplanned = append(unplanned, e.Name())
		}
	}
	return n, unplanned
}

// Create makes the surveyed folder a workspace: .ctx/ with its git-ignored state
// folder, the projects folder when it is new, and, for an adopted projects folder,
// .ctx/config.yaml naming it. Nothing that was there is moved or changed (a surveyed
// folder has no .ctx/, so no config to keep).
func (l *Layout) Create() error {
	if err := EnsureStateDir(filepath.Join(l.Root, StateDir, "state")); err != nil {
		return err
	}
	if !l.Adopted {
		return durable.MkdirAll(filepath.Join(l.Root, DefaultProjectsDir), 0o755)
	}
	config := filepath.Join(l.Root, StateDir, "config.yaml")
	where := "in " + l.ProjectsDir + "/"
	if l.ProjectsDir == "." {
		where = "here: the numbered folders of this one"
	}
	text := fmt.Sprintf("# Written by ctx init: your projects live %s.\nprojects_dir: %s\n", where, yamlString(l.ProjectsDir))
	return durable.WriteFile(config, []byte(text), 0o644)
}

// yamlString quotes a folder name for YAML when it needs it.
func yamlString(s string) string {
	if s == "" || strings.ContainsAny(s, ":#{}[],&*?|<>=!%@`'\"\\") || slices.Contains([]string{"true", "false", "null", "yes", "no", "on", "off", "~"}, strings.ToLower(s)) || strings.TrimSpace(s) != s {
		return fmt.Sprintf("%q", s)
	}
	return s
}
