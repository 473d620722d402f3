package loader

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxtools/ctx/markdown"
	"github.com/ctxtools/ctx/resume"
)

// writeTree writes files (path → content) below root; a path ending in "/" is a folder.
func writeTree(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for path, content := range files {
		full := filepath.Join(root, filepath.FromSlash(path))
		if strings.HasSuffix(path, "/") {
			if err := os.MkdirAll(full, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func overview(name string) string {
	return "---\nname: " + name + "\nstatus: IN_PROGRESS\n---\n# " + name + "\n"
}

func testWorkspace(t *testing.T) *Workspace {
	t.Helper()
	root := t.TempDir()
	writeTree(t, root, map[string]string{
		"02-projects/01-alpha/01-planning/overview.md":                  overview("Alpha"),
		"02-projects/10-beta/01-planning/overview.md":                   overview("Beta"),
		"02-projects/100-gamma/01-planning/overview.md":                 overview("Gamma ray"),
		"02-projects/02-auth-service/01-planning/overview.md":           overview("Auth service"),
		"02-projects/03-oauth-login/01-planning/overview.md":            overview("OAuth login"),
		"02-projects/04-billing/01-planning/01-overview.md":             overview("Payments"),
		"02-projects/00-onboarding/01-handbook/01-planning/overview.md": overview("Handbook"),
		"02-projects/00-onboarding/07-tools/01-planning/overview.md":    overview("Tools"),
		"02-projects/notes.md":                                          "not a project",
		"02-projects/archive/":                                          "",
		"02-projects/05-file.md":                                        "a file named like a project",
	})
	ws, err := Open(root)
	if err != nil {
		t.Fatal(err)
	}
	return ws
}

func TestResolve(t *testing.T) {
	ws := testWorkspace(t)
	tests := []struct {
		query string
		want  string // id, or "" when an error is expected
		err   string
	}{
		{"1", "01-alpha", ""},
		{"01", "01-alpha", ""},
		{"001", "01-alpha", ""},
		{"10", "10-beta", ""},
		{"100", "100-gamma", ""},
		{"7", "07-tools", ""}, // onboarding, no top-level 7
		{"01-alpha", "01-alpha", ""},
		{"02-projects/10-beta", "10-beta", ""},
		{"00-onboarding/01-handbook", "01-handbook", ""},
		{"BETA", "10-beta", ""},
		{"gamma", "100-gamma", ""},
		{"ray", "100-gamma", ""},                // part of the name only
		{"payments", "04-billing", ""},          // exact name
		{"auth-service", "02-auth-service", ""}, // exact slug beats the part in oauth-login
		{"auth", "", `"auth" matches 2 projects: 02-projects/02-auth-service, 02-projects/03-oauth-login`},
		{"99", "", "no project 99; did you mean 100-gamma, 10-beta"},
		{"bta", "", `no project matches "bta"; did you mean 10-beta?`},
		{"zzzzzzzz", "", "run `ctx projects`"},
		{"", "", "empty project name"},
		{"99999999999999999999999", "", "no project"},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			p, err := ws.Resolve(tt.query)
			if tt.want == "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want it to contain %s", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if p.ID != tt.want {
				t.Errorf("got %s, want %s", p.ID, tt.want)
			}
		})
	}
	_, err := ws.Resolve("auth")
	var amb *AmbiguousError
	if !errors.As(err, &amb) || len(amb.Candidates) != 2 {
		t.Errorf("auth: want an *AmbiguousError with 2 candidates, got %v", err)
	}
	_, err = ws.Resolve("42")
	var nf *NotFoundError
	if !errors.As(err, &nf) {
		t.Errorf("42: want a *NotFoundError, got %v", err)
	}
}

func TestResolveSameNumberTwice(t *testing.T) {
	ws := testWorkspace(t)
	writeTree(t, ws.Root, map[string]string{"02-projects/1-alpha-two/01-planning/overview.md": overview("Alpha two")})
	_, err := ws.Resolve("1")
	var amb *AmbiguousError
	if !errors.As(err, &amb) || len(amb.Candidates) != 2 {
		t.Fatalf("want both projects numbered 1 listed, got %v", err)
	}
}

func TestScanKeepsProblemProjects(t *testing.T) {
	ws := testWorkspace(t)
	writeTree(t, ws.Root, map[string]string{
		"02-projects/20-broken/01-planning/overview.md": "---\nname: [x\n---\n",
		"02-projects/21-bom/01-planning/overview.md":    "\ufeff---\r\nname: With BOM\r\nstatus: ACTIVE\r\n---\r\n",
		"02-projects/22-plain/01-planning/overview.md":  "# No frontmatter\n",
		"02-projects/23-dir/01-planning/steps.md/":      "",
		"02-projects/24-bytes/01-planning/overview.md":  "---\nname: \xff\xfe\n---\n",
	})
	if err := os.Symlink("loop", filepath.Join(ws.ProjectsPath(), "25-loop")); err != nil {
		t.Fatal(err)
	}
	projects, err := ws.Scan(ReadOptions{Progress: true})
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]*Project{}
	for _, p := range projects {
		byID[p.ID] = p
	}
	for id, want := range map[string]string{
		"20-broken": "overview.md:2: frontmatter:",
		"22-plain":  "no frontmatter",
		"23-dir":    "steps.md: is a folder",
		"24-bytes":  "overview.md:",
		"25-loop":   "25-loop:",
	} {
		p := byID[id]
		if p == nil {
			t.Errorf("%s: missing from the scan", id)
			continue
		}
		if len(p.Problems) == 0 || !strings.Contains(strings.Join(p.Problems, "\n"), want) {
			t.Errorf("%s: problems %q, want one containing %q", id, p.Problems, want)
		}
	}
	if p := byID["21-bom"]; p == nil || p.Name != "With BOM" || p.Status != "ACTIVE" || len(p.Problems) != 0 {
		t.Errorf("21-bom: got %+v", p)
	}
	if _, ok := byID["05-file.md"]; ok {
		t.Errorf("a file named like a project was listed")
	}
	if len(projects) != 14 {
		t.Errorf("got %d projects, want 14", len(projects))
	}
}

func TestProgressFromNumberedSteps(t *testing.T) {
	ws := testWorkspace(t)
	writeTree(t, ws.Root, map[string]string{
		"02-projects/04-billing/01-planning/04-steps.md": "# Steps\n## Phase 1\n- [x] a\n- [X] b\n## Phase 2\n1. [ ] c\n\n```\n- [ ] not a task\n```\n",
	})
	p, err := ws.Resolve("4")
	if err != nil {
		t.Fatal(err)
	}
	want := markdown.Progress{TasksTotal: 3, TasksCompleted: 2, Percent: 66, CurrentTask: "c", CurrentSection: "Phase 2", CurrentTaskNumber: 3, CurrentSectionNumber: 2}
	if p.Progress != want {
		t.Errorf("progress = %+v, want %+v", p.Progress, want)
	}
}

func TestLargeStepsFileIsAProblem(t *testing.T) {
	ws := testWorkspace(t)
	big := strings.Repeat("- [ ] task\n", maxStepsBytes/11+10)
	writeTree(t, ws.Root, map[string]string{"02-projects/01-alpha/01-planning/steps.md": big})
	p, err := ws.Resolve("1")
	if err != nil {
		t.Fatal(err)
	}
	if p.Progress.TasksTotal != 0 || !strings.Contains(strings.Join(p.Problems, " "), "over the 8.0 MB limit") {
		t.Errorf("progress %+v problems %q", p.Progress, p.Problems)
	}
}

func TestDiscover(t *testing.T) {
	ws := testWorkspace(t)
	deep := filepath.Join(ws.Root, "02-projects", "01-alpha", "01-planning")
	other := t.TempDir()
	tests := []struct {
		name string
		opts DiscoverOptions
		want string
		err  string
	}{
		{"walk up", DiscoverOptions{Cwd: deep}, ws.Root, ""},
		{"flag wins", DiscoverOptions{Flag: ws.Root, CtxWorkspace: other, Cwd: other}, ws.Root, ""},
		{"env", DiscoverOptions{CtxWorkspace: ws.Root, Cwd: other}, ws.Root, ""},
		{"claude dir without workspace falls through", DiscoverOptions{ClaudeProject: other, Cwd: deep}, ws.Root, ""},
		{"claude dir", DiscoverOptions{ClaudeProject: ws.Root, Cwd: other}, ws.Root, ""},
		{"none", DiscoverOptions{Cwd: other}, "", "no workspace at or above"},
		{"flag not a folder", DiscoverOptions{Flag: filepath.Join(other, "nope"), Cwd: deep}, "", "not a folder"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Discover(tt.opts)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil || got.Root != tt.want {
				t.Fatalf("got %v, %v; want %s", got, err, tt.want)
			}
		})
	}
}

func TestConfig(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{
		".ctx/config.yaml":                  "projects_dir: work\nresume_file: RESUME.md\nfuture_key: 1\n",
		"work/01-a/01-planning/overview.md": overview("A"),
		"work/01-a/01-planning/RESUME.md":   "---\nlast_updated: 2026-01-01\n---\n",
	})
	ws, err := Open(root)
	if err != nil {
		t.Fatal(err)
	}
	p, err := ws.Resolve("1")
	if err != nil {
		t.Fatal(err)
	}
	if r := ws.ReadResume(p); !r.Exists || r.Path != "work/01-a/01-planning/RESUME.md" {
		t.Errorf("resume %+v", r)
	}
	writeTree(t, root, map[string]string{".ctx/config.yaml": "projects_dir: ../elsewhere\n"})
	if _, err := Open(root); err == nil || !strings.Contains(err.Error(), "inside the workspace") {
		t.Errorf("escaping projects_dir: err = %v", err)
	}
	writeTree(t, root, map[string]string{".ctx/config.yaml": "projects_dir: [\n"})
	if _, err := Open(root); err == nil || !strings.Contains(err.Error(), ".ctx/config.yaml") {
		t.Errorf("bad yaml: err = %v", err)
	}
}

func TestLoadReads(t *testing.T) {
	ws := testWorkspace(t)
	outside := t.TempDir()
	writeTree(t, outside, map[string]string{"secret.md": "secret"})
	writeTree(t, ws.Root, map[string]string{
		"02-projects/01-alpha/01-planning/plan.md":  "plan",
		"02-projects/01-alpha/01-planning/steps.md": "- [x] a\n- [ ] b\n",
		"02-projects/01-alpha/01-planning/_resume.md": "---\nfiles_to_load:\n  - 03-working/notes.md\n  - ../../../../etc/passwd\nresearch: 02-resources/r.md\n---\n" +
			"**Last Session:** yesterday\n\n## Session History\n### Session 1\n- one\n### Session 2\n- two\n- three\n\n" +
			"## Loading Sequence for Resume\n1. `01-planning/_resume.md` — itself\n2. `01-planning/plan.md`\n3. `link.md`\n\n" +
			"## Files Modified This Project\n- `shared/top.md` (workspace-relative)\n- `missing.md`\n",
		"02-projects/01-alpha/02-resources/r.md":   "research",
		"02-projects/01-alpha/03-working/notes.md": "notes",
		"shared/top.md": "top",
	})
	if err := os.Symlink(filepath.Join(outside, "secret.md"), filepath.Join(ws.Root, "02-projects/01-alpha/link.md")); err != nil {
		t.Fatal(err)
	}
	p, err := ws.Resolve("1")
	if err != nil {
		t.Fatal(err)
	}
	r := ws.Load(p, LoadOptions{})
	var paths []string
	for _, rd := range r.RecommendedReads {
		paths = append(paths, rd.Path)
	}
	// What the save point lists (files_to_load, research, its Loading Sequence) comes
	// before what ctx picks; a listed file that is gone is a problem, not a read.
	want := []string{
		"02-projects/01-alpha/01-planning/_resume.md",
		"02-projects/01-alpha/03-working/notes.md",
		"02-projects/01-alpha/02-resources/r.md",
		"02-projects/01-alpha/01-planning/plan.md",
		"02-projects/01-alpha/01-planning/overview.md",
		"02-projects/01-alpha/01-planning/steps.md",
		"shared/top.md",
	}
	if strings.Join(paths, "\n") != strings.Join(want, "\n") {
		t.Errorf("reads:\n%s\nwant:\n%s", strings.Join(paths, "\n"), strings.Join(want, "\n"))
	}
	problems := strings.Join(p.Problems, "\n")
	for _, w := range []string{`files_to_load entry "../../../../etc/passwd" is outside the workspace`, `Loading Sequence entry "link.md" is outside the workspace`,
		`Files Modified entry "missing.md": no such file or directory; not read`} {
		if !strings.Contains(problems, w) {
			t.Errorf("problems %q lack %q", problems, w)
		}
	}
	if got := strings.Join(r.LastActions, ","); got != "two,three" {
		t.Errorf("last actions %q", got)
	}
	if len(r.PendingTasks) != 1 || r.PendingTasks[0].Text != "b" {
		t.Errorf("pending %+v", r.PendingTasks)
	}

	if strings.Count(problems, "missing.md") != 1 {
		t.Errorf("a missing file is reported once: %q", problems)
	}

	budgeted := ws.Load(p, LoadOptions{Budget: 5})
	if len(budgeted.RecommendedReads) == 0 || budgeted.RecommendedReads[0].Path != want[0] || budgeted.Budget == nil || len(budgeted.Budget.Dropped) == 0 {
		t.Errorf("budget: %+v %+v", budgeted.RecommendedReads, budgeted.Budget)
	}
}

func TestBudgetDropsCtxPicksFirst(t *testing.T) {
	rs := &resume.State{Exists: true, Path: "r.md"}
	reads := []Read{
		{Path: "r.md", Tokens: 10},
		{Path: "listed-a", Tokens: 10, Curated: true},
		{Path: "listed-b", Tokens: 10, Curated: true},
		{Path: "overview", Tokens: 5},
		{Path: "plan", Tokens: 50},
		{Path: "steps", Tokens: 1},
	}
	kept, b := cut(reads, 35, rs)
	var got []string
	for _, r := range kept {
		got = append(got, r.Path)
	}
	if strings.Join(got, ",") != "r.md,listed-a,listed-b,overview" || strings.Join(b.Dropped, ",") != "plan,steps" {
		t.Errorf("kept %v dropped %v", got, b.Dropped)
	}
	kept, _ = cut(reads, 25, rs)
	if len(kept) != 2 || kept[1].Path != "listed-a" {
		t.Errorf("a curated read that does not fit stops the cut before any of ctx's picks: %+v", kept)
	}
}

func TestNewest(t *testing.T) {
	ws := testWorkspace(t)
	writeTree(t, ws.Root, map[string]string{
		"02-projects/01-alpha/01-planning/_resume.md":  "---\nlast_updated: 2026-11-01T10:00:00Z\n---\n",
		"02-projects/10-beta/01-planning/_resume.md":   "---\nlast_updated: 2026-11-20T10:00:00Z\n---\n",
		"02-projects/100-gamma/01-planning/_resume.md": "---\nlast_updated: 2026-11-05\n---\n",
	})
	p, err := ws.Newest()
	if err != nil || p.ID != "10-beta" {
		t.Fatalf("newest = %v, %v; want 10-beta", p, err)
	}
	empty, _ := Open(t.TempDir())
	if _, err := empty.Newest(); !errors.Is(err, ErrNoSavePoint) {
		t.Errorf("empty workspace: %v", err)
	}
}

func TestLegacyResume(t *testing.T) {
	ws := testWorkspace(t)
	writeTree(t, ws.Root, map[string]string{
		"02-projects/01-alpha/01-planning/resume-context.md": "---\nresume_version: 2\ncurrent_phase: build\n---\n**Next Action:** ship it\n",
		"02-projects/10-beta/_resume.md":                     "---\nresume_version: 3\n---\n",
	})
	p, _ := ws.Resolve("1")
	r := ws.ReadResume(p)
	if !r.Exists || !r.Legacy || r.Path != "02-projects/01-alpha/01-planning/resume-context.md" || r.CurrentPhase != "build" || r.NextAction != "ship it" {
		t.Errorf("legacy v2: %+v", r)
	}
	p, _ = ws.Resolve("10")
	if r := ws.ReadResume(p); !r.Exists || !r.Legacy || r.Path != "02-projects/10-beta/_resume.md" {
		t.Errorf("legacy root: %+v", r)
	}
}

func TestFilesModifiedReadsAreCapped(t *testing.T) {
	ws := testWorkspace(t)
	var items strings.Builder
	for i := 1; i <= 8; i++ {
		name := fmt.Sprintf("02-resources/f%d.md", i)
		writeTree(t, ws.Root, map[string]string{"02-projects/01-alpha/" + name: "x"})
		fmt.Fprintf(&items, "- `%s`\n", name)
	}
	writeTree(t, ws.Root, map[string]string{
		"02-projects/01-alpha/01-planning/_resume.md": "---\na: 1\n---\n## Files Modified This Project\n" + items.String(),
	})
	p, err := ws.Resolve("1")
	if err != nil {
		t.Fatal(err)
	}
	modified := 0
	for _, r := range ws.Load(p, LoadOptions{}).RecommendedReads {
		if r.Why == "modified in an earlier session" {
			modified++
			if strings.HasSuffix(r.Path, "f1.md") || strings.HasSuffix(r.Path, "f2.md") || strings.HasSuffix(r.Path, "f3.md") {
				t.Errorf("an old entry is recommended: %s", r.Path)
			}
		}
	}
	if modified != maxModifiedReads {
		t.Errorf("%d reads from Files Modified, want %d", modified, maxModifiedReads)
	}
}
