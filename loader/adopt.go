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
	// Entries is how many files and folders the root holds today: none of them is
	// moved or changed.
	Entries int
}

// ErrWorkspaceRoot says a folder must not become a workspace: every folder below a
// workspace root finds it, so the home folder or / would swallow everything.
var ErrWorkspaceRoot = errors.New("not a place for a workspace")

// Survey looks at dir, which is not a workspace, and says how it would become one:
// a folder holding exactly one folder of numbered projects (NN-slug folders with a
// planning folder, as ctx new makes them) is adopted with that folder as its projects
// folder; any other folder gets a new, empty 02-projects/. Nothing is written.
func Survey(dir, home string) (*Layout, error) {
	root, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if real, err := filepath.EvalSymlinks(root); err == nil {
		root = real
	}
	if root == filepath.Dir(root) {
		return nil, fmt.Errorf("%s is the file system's root: %w; make one in a folder of its own", root, ErrWorkspaceRoot)
	}
	if home != "" {
		if h, err := filepath.EvalSymlinks(home); err == nil && h == root {
			return nil, fmt.Errorf("%s is your home folder: %w (every folder below it would belong to it); make one in a folder of its own, e.g. ~/work", root, ErrWorkspaceRoot)
		}
	}
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil, err
	}
	l := &Layout{Root: root, ProjectsDir: DefaultProjectsDir, Entries: len(entries)}
	var found []string
	counts := map[string]int{}
	for _, e := range entries {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		if n := countProjects(filepath.Join(root, e.Name())); n > 0 {
			found = append(found, e.Name())
			counts[e.Name()] = n
		}
	}
	if len(found) == 1 {
		l.ProjectsDir, l.Adopted, l.Projects = found[0], true, counts[found[0]]
	}
	return l, nil
}

// countProjects counts the NN-slug folders in dir that hold a planning folder.
func countProjects(dir string) int {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0
	}
	n := 0
	for _, e := range entries {
		if _, _, ok := splitFolderName(e.Name()); ok && e.IsDir() && isDir(filepath.Join(dir, e.Name(), DefaultPlanningDir)) {
			n++
		}
	}
	return n
}

// Create makes the surveyed folder a workspace: .ctx/ with its git-ignored state
// folder, the projects folder when it is new, and, for an adopted projects folder,
// .ctx/config.yaml naming it. Nothing that was there is moved or changed; a config
// that exists is left alone.
func (l *Layout) Create() error {
	if err := EnsureStateDir(filepath.Join(l.Root, StateDir, "state")); err != nil {
		return err
	}
	if !l.Adopted {
		return durable.MkdirAll(filepath.Join(l.Root, DefaultProjectsDir), 0o755)
	}
	config := filepath.Join(l.Root, StateDir, "config.yaml")
	if _, err := os.Lstat(config); err == nil {
		return nil
	}
	text := fmt.Sprintf("# Written by ctx init: your projects live in %s/.\nprojects_dir: %s\n", l.ProjectsDir, yamlString(l.ProjectsDir))
	return durable.WriteFile(config, []byte(text), 0o644)
}

// yamlString quotes a folder name for YAML when it needs it.
func yamlString(s string) string {
	if s == "" || strings.ContainsAny(s, ":#{}[],&*?|<>=!%@`'\"\\") || slices.Contains([]string{"true", "false", "null", "yes", "no", "on", "off", "~"}, strings.ToLower(s)) || strings.TrimSpace(s) != s {
		return fmt.Sprintf("%q", s)
	}
	return s
}
