package loader

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"go.yaml.in/yaml/v3"
)

func TestSurvey(t *testing.T) {
	if _, err := Survey("/", ""); !errors.Is(err, ErrWorkspaceRoot) {
		t.Errorf("/: %v, want ErrWorkspaceRoot", err)
	}
	if _, err := Survey(os.TempDir(), ""); os.TempDir() == "/tmp" && !errors.Is(err, ErrWorkspaceRoot) {
		t.Errorf("/tmp: %v, want ErrWorkspaceRoot", err)
	}
	home := t.TempDir()
	if _, err := Survey(filepath.Dir(home), home); !errors.Is(err, ErrWorkspaceRoot) {
		t.Errorf("above home: %v, want ErrWorkspaceRoot", err)
	}
	if _, err := Survey(home, home); !errors.Is(err, ErrWorkspaceRoot) {
		t.Errorf("home: %v, want ErrWorkspaceRoot", err)
	}

	mk := func(root string, dirs ...string) {
		for _, d := range dirs {
			if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	// One folder of numbered projects is adopted; a numbered folder without a planning
	// folder is no project.
	one := t.TempDir()
	mk(one, "my work/01-a/01-planning", "my work/02-b/01-planning", "my work/03-c", "misc/notes")
	l, err := Survey(one, home)
	if err != nil || !l.Adopted || l.ProjectsDir != "my work" || l.Projects != 2 || l.Entries != 2 || !slices.Equal(l.Unplanned, []string{"03-c"}) {
		t.Fatalf("one folder of projects: %+v %v", l, err)
	}
	if err := l.Create(); err != nil {
		t.Fatal(err)
	}
	ws, err := Open(one)
	if err != nil || ws.Config.ProjectsDir != "my work" {
		t.Fatalf("the written config: %+v %v", ws, err)
	}
	if IsWorkspace(filepath.Join(one, "misc")) || !IsWorkspace(one) {
		t.Error("IsWorkspace")
	}

	// Two candidates: ctx does not guess; the folder gets 02-projects/ and init names
	// both.
	two := t.TempDir()
	mk(two, "a/01-x/01-planning", "b/01-y/01-planning")
	if l, err := Survey(two, home); err != nil || l.Adopted || l.ProjectsDir != DefaultProjectsDir || !slices.Equal(l.Elsewhere, []string{"a", "b"}) {
		t.Errorf("two folders of projects: %+v %v", l, err)
	}

	// Numbered folders here, some of them projects and one not (yet): adopted in
	// place, the stray one named (a new user's notes folder, where "all or nothing"
	// silently made an empty 02-projects/).
	mixed := t.TempDir()
	mk(mixed, "01-alpha/01-planning", "02-beta/01-planning", "03-gamma/misc", "journal")
	if l, err := Survey(mixed, home); err != nil || !l.Adopted || l.ProjectsDir != "." || l.Projects != 2 || !slices.Equal(l.Unplanned, []string{"03-gamma"}) {
		t.Errorf("a notes folder with a numbered folder that is no project: %+v %v", l, err)
	}
}

func TestYAMLStringRoundTrips(t *testing.T) {
	for _, s := range []string{"work", "my work", "a: b", "#x", "yes", "off", " lead", "quote\"d", "back\\slash", "[x]"} {
		var v struct {
			P string `yaml:"projects_dir"`
		}
		if err := yaml.Unmarshal([]byte("projects_dir: "+yamlString(s)+"\n"), &v); err != nil || v.P != s {
			t.Errorf("%q: read back %q, %v", s, v.P, err)
		}
	}
}
