package loader

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ctxtools/ctx/markdown"
)

func TestBuildsLayoutAndIDPrefix(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{
		"02-projects/24-project-skills-research/01-planning/overview.md": overview("Skills research"),
		"02-builds/active/31-cli/01-planning/overview.md":                overview("CLI"),
		"02-builds/complete/07-site/01-planning/overview.md":             overview("Site"),
		"02-builds/README.md": "not a project",
	})
	ws, err := Open(root)
	if err != nil {
		t.Fatal(err)
	}
	folders, err := ws.Folders()
	if err != nil {
		t.Fatal(err)
	}
	var rels []string
	for _, f := range folders {
		rels = append(rels, f.Rel)
	}
	if got := strings.Join(rels, ","); got != "02-builds/complete/07-site,02-projects/24-project-skills-research,02-builds/active/31-cli" {
		t.Errorf("folders %s", got)
	}
	for q, want := range map[string]string{"24-project-skills": "24-project-skills-research", "31": "31-cli", "site": "07-site", "02-builds/active/31-cli": "31-cli"} {
		p, err := ws.Resolve(q)
		if err != nil || p.ID != want {
			t.Errorf("Resolve(%q) = %v, %v; want %s", q, p, err, want)
		}
	}
	if _, err := ws.Resolve("2-project-skills"); err == nil {
		t.Errorf("a prefix with another number resolved")
	}
	// Found without configuration from inside the newer layout alone.
	only := t.TempDir()
	writeTree(t, only, map[string]string{"02-builds/active/01-x/01-planning/overview.md": overview("X")})
	ws2, err := Discover(DiscoverOptions{Cwd: filepath.Join(only, "02-builds", "active")})
	if err != nil || ws2.Root != only {
		t.Fatalf("discover: %v %v", ws2, err)
	}
	if p, err := ws2.Resolve("1"); err != nil || p.Path != "02-builds/active/01-x" {
		t.Errorf("resolve in builds-only workspace: %v %v", p, err)
	}
}

func TestResumeAsPeopleWriteIt(t *testing.T) {
	tests := []struct {
		name, doc                   string
		next, phase, updated, skill string
	}{
		{"proposal blockquote header",
			"---\nresume_version: 2\nlast_updated: 2026-01-02\ncurrent_skill: execute-project\n---\n# Resume\n\n> **Last Session**: 2026-01-02 - built parser\n> **Current Phase**: Execution\n> **Next Action**: Continue with task 2.3\n",
			"Continue with task 2.3", "Execution", "2026-01-02", "execute-project"},
		{"proposal frontmatter only",
			"---\nnext_task_number: 7\nnext_task_description: Write the importer\ncurrent_section_name: Phase 2\nphase: build\nupdated: 2025-12-01\nlast_skill: plan-project\n---\n# Resume\n",
			"Task 7 — Write the importer (Phase 2)", "build", "2025-12-01", "plan-project"},
		{"hand-written bold line further down",
			"# Resume\n\n## Status\nWorking on it.\n\n**Next Action**: ask Sam\n",
			"ask Sam", "", "", ""},
		{"plain line above the first heading",
			"Next action: ship the beta\n\n# Notes\n",
			"ship the beta", "", "", ""},
		{"not in code",
			"# R\n```\n**Next Action:** no\n```\n",
			"", "", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws := testWorkspace(t)
			writeTree(t, ws.Root, map[string]string{"02-projects/01-alpha/01-planning/_resume.md": tt.doc})
			p, err := ws.Resolve("1")
			if err != nil {
				t.Fatal(err)
			}
			r := ws.ReadResume(p)
			if r.NextAction != tt.next || r.CurrentPhase != tt.phase || r.LastUpdated != tt.updated || r.CurrentSkill != tt.skill {
				t.Errorf("next %q phase %q updated %q skill %q", r.NextAction, r.CurrentPhase, r.LastUpdated, r.CurrentSkill)
			}
		})
	}
}

func TestNewerLegacySavePointWins(t *testing.T) {
	ws := testWorkspace(t)
	planning := "02-projects/01-alpha/01-planning/"
	writeTree(t, ws.Root, map[string]string{
		planning + "_resume.md":        "---\nlast_updated: 2026-01-01T00:00:00Z\n---\n**Next Action:** stale\n",
		planning + "resume-context.md": "---\nupdated: 2026-03-01\n---\n**Next Action:** fresh\n",
	})
	p, _ := ws.Resolve("1")
	before := markdown.Parses()
	r := ws.ReadResume(p)
	if r.NextAction != "fresh" || !r.Legacy || r.Path != planning+"resume-context.md" {
		t.Errorf("read %+v", r)
	}
	if got := markdown.Parses() - before; got != 2 {
		t.Errorf("%d parses for two save points, want 2 (each once)", got)
	}
	if problems := strings.Join(p.Problems, "\n"); !strings.Contains(problems, planning+"_resume.md: an older save point beside "+planning+"resume-context.md") {
		t.Errorf("problems %q", problems)
	}
	// Newest goes by updated as well as last_updated.
	writeTree(t, ws.Root, map[string]string{"02-projects/10-beta/01-planning/_resume.md": "---\nupdated: 2026-02-01\n---\n"})
	if n, err := ws.Newest(); err != nil || n.ID != "01-alpha" {
		t.Errorf("newest %v %v", n, err)
	}
}

// TestLoadParsesTheSavePointOnce: one load, one parse of the save point, whatever
// its readers ask of it (headers, sections, reads, last actions).
func TestLoadParsesTheSavePointOnce(t *testing.T) {
	ws := testWorkspace(t)
	writeTree(t, ws.Root, map[string]string{
		"02-projects/01-alpha/01-planning/_resume.md": "---\nfiles_to_load: [01-planning/overview.md]\n---\n# R\n**Next Action:** x\n## Session History\n### S1\n- did\n## Loading Sequence for Resume\n1. `01-planning/overview.md`\n## Files Modified\n- `01-planning/overview.md`\n",
		"02-projects/01-alpha/02-resources/":          "",
	})
	p, _ := ws.Resolve("1")
	before := markdown.Parses()
	r := ws.Load(p, LoadOptions{Budget: 100})
	if got := markdown.Parses() - before; got != 1 {
		t.Errorf("%d parses of the save point in one load, want 1", got)
	}
	if r.Resume.NextAction != "x" || len(r.LastActions) != 1 {
		t.Errorf("%+v", r.Resume)
	}
}

func TestListedDirectoryIsARead(t *testing.T) {
	ws := testWorkspace(t)
	writeTree(t, ws.Root, map[string]string{
		"02-projects/01-alpha/01-planning/_resume.md": "---\nfiles_to_load:\n  - 02-resources\n  - gone.md\n---\n## Files Modified\n- `gone.md`\n",
		"02-projects/01-alpha/02-resources/a.md":      "a",
	})
	p, _ := ws.Resolve("1")
	r := ws.Load(p, LoadOptions{})
	if len(r.RecommendedReads) < 2 || r.RecommendedReads[1].Path != "02-projects/01-alpha/02-resources" || !r.RecommendedReads[1].Exists || !r.RecommendedReads[1].Directory || !r.RecommendedReads[1].Curated {
		t.Errorf("reads %+v", r.RecommendedReads)
	}
	for _, rd := range r.RecommendedReads {
		if strings.Contains(rd.Path, "gone.md") {
			t.Errorf("a file that is gone is a read: %+v", rd)
		}
	}
	if n := strings.Count(strings.Join(p.Problems, "\n"), "gone.md"); n != 1 {
		t.Errorf("gone.md reported %d times: %q", n, p.Problems)
	}
}

func TestStepsNotUTF8(t *testing.T) {
	ws := testWorkspace(t)
	if err := os.WriteFile(filepath.Join(ws.Root, "02-projects/01-alpha/01-planning/steps.md"), []byte("- [x] \xff\xfe\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p, _ := ws.Resolve("1")
	if !strings.Contains(p.StepsProblem, "not UTF-8") {
		t.Errorf("steps problem %q", p.StepsProblem)
	}
	_ = time.Now
}
