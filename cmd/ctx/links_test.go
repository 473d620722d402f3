package main

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Links: one workspace reached through a link and directly is one workspace (one lock
// per file), and no link takes a read or a write of ctx outside the workspace unless
// .ctx/config.yaml allows the folder it leads to (docs/architecture.md, "Links").

// TestTwoSpellingsOfOneWorkspaceSaveTogether: saves through a linked path and the real
// path at once keep every decision.
func TestTwoSpellingsOfOneWorkspaceSaveTogether(t *testing.T) {
	bin := ctxBinary(t)
	real := procWorkspace(t)
	link := filepath.Join(t.TempDir(), "linked-workspace")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	runCtx(t, bin, real, "save", "-p", "1")
	const procs = 24
	runs := make([]*procRun, procs)
	for i := range runs {
		ws := real
		if i%2 == 1 {
			ws = link
		}
		runs[i] = startCtx(t, bin, ws, "", "save", "-p", "1", "--decision", fmt.Sprintf("decision %d", i+1))
	}
	for _, r := range runs {
		r.mustSucceed(t)
	}
	doc := readResume(t, real)
	for i := 1; i <= procs; i++ {
		line := regexp.MustCompile(fmt.Sprintf(`(?m)^- \d{4}-\d\d-\d\d: decision %d$`, i))
		if n := len(line.FindAllIndex(doc, -1)); n != 1 {
			t.Errorf("decision %d is in the save point %d times, want once", i, n)
		}
	}
	if t.Failed() {
		t.Logf("_resume.md:\n%s", doc)
	}
}

// TestLinksOutsideTheWorkspace: for each kind of link that leads out of the workspace,
// every command that reads or writes there runs, and not one byte changes in the
// folder the link leads to; the link is reported by projects, load and doctor.
func TestLinksOutsideTheWorkspace(t *testing.T) {
	bin := ctxBinary(t)
	cases := []struct {
		name string
		// link makes the link in ws to a folder (or file) in outside and returns the
		// path, relative to ws, that the reports name.
		link func(t *testing.T, ws, outside string) string
		// project is the project the commands work on.
		project string
	}{
		{"project folder", func(t *testing.T, ws, outside string) string {
			copyTree(t, filepath.Join(ws, "02-projects", "01-alpha"), filepath.Join(outside, "ext"))
			mustSymlink(t, filepath.Join(outside, "ext"), filepath.Join(ws, "02-projects", "05-ext"))
			return "02-projects/05-ext"
		}, "5"},
		{"planning folder", func(t *testing.T, ws, outside string) string {
			planning := filepath.Join(ws, "02-projects", "01-alpha", "01-planning")
			copyTree(t, planning, filepath.Join(outside, "planning"))
			must(t, os.RemoveAll(planning))
			mustSymlink(t, filepath.Join(outside, "planning"), planning)
			return "02-projects/01-alpha/01-planning"
		}, "1"},
		{"save point", func(t *testing.T, ws, outside string) string {
			must(t, os.WriteFile(filepath.Join(outside, "resume.md"), []byte("---\nproject: x\n---\n# Mine\n"), 0o644))
			mustSymlink(t, filepath.Join(outside, "resume.md"), procResumePath(ws))
			return "02-projects/01-alpha/01-planning/_resume.md"
		}, "1"},
		{"overview", func(t *testing.T, ws, outside string) string {
			overview := filepath.Join(ws, "02-projects", "01-alpha", "01-planning", "overview.md")
			must(t, os.Rename(overview, filepath.Join(outside, "overview.md")))
			mustSymlink(t, filepath.Join(outside, "overview.md"), overview)
			return "02-projects/01-alpha/01-planning/overview.md"
		}, "1"},
		{".ctx", func(t *testing.T, ws, outside string) string {
			must(t, os.MkdirAll(filepath.Join(outside, "dotctx"), 0o755))
			mustSymlink(t, filepath.Join(outside, "dotctx"), filepath.Join(ws, ".ctx"))
			return ".ctx"
		}, "1"},
		{".ctx/sessions", func(t *testing.T, ws, outside string) string {
			must(t, os.MkdirAll(filepath.Join(ws, ".ctx"), 0o755))
			must(t, os.MkdirAll(filepath.Join(outside, "sessions"), 0o755))
			// What a tidy or a prune would remove, were it to follow the link: a set
			// without its JSON, a temporary file, and a whole old set.
			for _, name := range []string{"session-20260101T000000Z-000001.md", ".ctx-tmp-session-x-1-1",
				"session-20250101T000000Z-000001.json", "session-20250101T000000Z-000001.yaml"} {
				must(t, os.WriteFile(filepath.Join(outside, "sessions", name), []byte("x"), 0o644))
			}
			mustSymlink(t, filepath.Join(outside, "sessions"), filepath.Join(ws, ".ctx", "sessions"))
			return ".ctx/sessions"
		}, "1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ws := procWorkspace(t)
			outside := t.TempDir()
			named := tc.link(t, ws, outside)
			before := treeDigest(t, outside)

			projects := startCtx(t, bin, ws, "", "projects")
			_ = projects.cmd.Wait()
			// A listing reads no save point; every other link it meets, it reports.
			if tc.name != "save point" && !strings.Contains(projects.stderr.String()+projects.stdout.String(), named+": a link leads it to") {
				t.Errorf("ctx projects does not report %s:\nstdout:\n%s\nstderr:\n%s", named, &projects.stdout, &projects.stderr)
			}
			doctor := startCtx(t, bin, ws, "", "doctor")
			_ = doctor.cmd.Wait()
			load := startCtx(t, bin, ws, "", "load", tc.project)
			_ = load.cmd.Wait()
			if !strings.Contains(load.stderr.String()+doctor.stdout.String(), named+": a link leads it to") {
				t.Errorf("load and doctor do not report %s:\nload stderr:\n%s\ndoctor:\n%s", named, &load.stderr, &doctor.stdout)
			}
			for _, args := range [][]string{
				{"save", "-p", tc.project, "--summary", "s", "--decision", "d"},
				{"close", "-p", tc.project, "--summary", "c"},
				{"new", "Another one"},
				{"sessions", "prune", "--keep", "0", "--yes"},
			} {
				r := startCtx(t, bin, ws, "", args...)
				// Done, or refused for the link: a command that failed for another reason
				// would leave the outside folder alone and prove nothing.
				if err := r.cmd.Wait(); err != nil && !strings.Contains(r.stderr.String(), "a link leads it to") &&
					!strings.Contains(r.stderr.String(), "outside the workspace") {
					t.Errorf("ctx %s: %v, and not for the link:\n%s", strings.Join(args, " "), err, &r.stderr)
				}
			}
			if after := treeDigest(t, outside); after != before {
				t.Errorf("a write went through the link into the outside folder:\nbefore:\n%s\nafter:\n%s", before, after)
			}
		})
	}
}

// TestLinksAllowedOutside: links.allow_outside lets a project kept on another disk be
// read and saved like any other.
func TestLinksAllowedOutside(t *testing.T) {
	bin := ctxBinary(t)
	ws := procWorkspace(t)
	outside := t.TempDir()
	copyTree(t, filepath.Join(ws, "02-projects", "01-alpha"), filepath.Join(outside, "ext"))
	mustSymlink(t, filepath.Join(outside, "ext"), filepath.Join(ws, "02-projects", "05-ext"))
	must(t, os.MkdirAll(filepath.Join(ws, ".ctx"), 0o755))
	must(t, os.WriteFile(filepath.Join(ws, ".ctx", "config.yaml"), []byte("links:\n  allow_outside:\n    - "+outside+"\n"), 0o644))

	runCtx(t, bin, ws, "save", "-p", "5", "--summary", "on the other disk")
	data, err := os.ReadFile(filepath.Join(outside, "ext", "01-planning", "_resume.md"))
	if err != nil || !strings.Contains(string(data), "on the other disk") {
		t.Fatalf("the allowed project was not saved: %v\n%s", err, data)
	}
	r := startCtx(t, bin, ws, "", "projects")
	r.mustSucceed(t)
	if strings.Contains(r.stderr.String(), "a link leads it to") {
		t.Errorf("an allowed link is reported:\n%s", &r.stderr)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func mustSymlink(t *testing.T, target, link string) {
	t.Helper()
	must(t, os.Symlink(target, link))
}

// copyTree copies the regular files and folders below src to dst.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
	must(t, err)
}
