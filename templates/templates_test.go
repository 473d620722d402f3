package templates

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

var update = flag.Bool("update", false, "rewrite the golden files")

func sampleData() Data {
	return Data{
		Project:     Project{ID: "07-checkout", Number: 7, Name: "Checkout: v2", Status: "IN_PROGRESS", Description: "Faster checkout"},
		Progress:    Progress{TasksTotal: 14, TasksCompleted: 6, Percent: 42, CurrentTask: "Validate card expiry", CurrentSection: "Phase 2: Payment", CurrentTaskNumber: 7, CurrentSectionNumber: 2},
		Now:         "2026-11-21T09:30:00Z",
		Today:       "2026-11-21",
		Phase:       "implementation",
		LastSession: "2026-11-21 — wired the form",
		NextAction:  "Task 7 — Validate card expiry",
	}
}

func TestRenderGolden(t *testing.T) {
	for _, name := range Names() {
		t.Run(name, func(t *testing.T) {
			got, err := Set{}.Render(name, sampleData())
			if err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join("testdata", strings.TrimSuffix(name, ".tmpl")+".golden")
			if *update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test ./templates -update)", err)
			}
			if string(got) != string(want) {
				t.Errorf("%s differs from %s:\n%s", name, golden, got)
			}
		})
	}
}

// The frontmatter the templates write must parse and hold the values as given, even
// when names need quoting.
func TestRenderedFrontmatterParses(t *testing.T) {
	for _, name := range []string{Resume, Overview} {
		out, err := Set{}.Render(name, sampleData())
		if err != nil {
			t.Fatal(err)
		}
		parts := strings.SplitN(string(out), "---\n", 3)
		var fm map[string]any
		if err := yaml.Unmarshal([]byte(parts[1]), &fm); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		key := "name"
		if name == Resume {
			key = "project_name"
		}
		if fm[key] != "Checkout: v2" {
			t.Errorf("%s: %s = %#v", name, key, fm[key])
		}
	}
}

func TestOverrides(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, Steps), []byte("# Mine for {{.Project.Name}}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	set := Set{Dir: dir}
	got, err := set.Render(Steps, sampleData())
	if err != nil || string(got) != "# Mine for Checkout: v2\n" {
		t.Errorf("override: %q, %v", got, err)
	}
	if _, from, _ := set.Source(Plan); from != "embedded" {
		t.Errorf("plan came from %s, want embedded", from)
	}
	if err := os.WriteFile(filepath.Join(dir, Plan), []byte("{{.Nope}}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := set.Render(Plan, sampleData()); err == nil || !strings.Contains(err.Error(), filepath.Join(dir, Plan)) {
		t.Errorf("a broken override: err = %v, want it to name the file", err)
	}
	if _, _, err := set.Source("../../etc/passwd"); err == nil {
		t.Errorf("an unknown template name was accepted")
	}
}
