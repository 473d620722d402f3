package demo

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const (
	checkout       = "02-projects/01-checkout-redesign/"
	checkoutResume = checkout + "01-planning/_resume.md"
	checkoutSteps  = checkout + "01-planning/steps.md"
)

func embeddedFile(t *testing.T, rel string) []byte {
	t.Helper()
	data, err := embedded.ReadFile(root + "/" + rel)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestFiles(t *testing.T) {
	files := Files()
	if !slices.IsSorted(files) {
		t.Errorf("Files() is not sorted: %q", files)
	}
	for _, want := range []string{
		checkoutResume,
		checkoutSteps,
		".ctx/config.yaml",
		"02-projects/02-search-relevance/01-planning/04-steps.md",
		"02-projects/03-docs-site-migration/01-planning/resume-context.md",
		"02-projects/00-onboarding/01-team-handbook/01-planning/overview.md",
	} {
		if !slices.Contains(files, want) {
			t.Errorf("Files() lacks %s", want)
		}
	}
	total := 0
	for _, f := range files {
		if strings.Contains(f, `\`) || path.IsAbs(f) || path.Clean(f) != f {
			t.Errorf("Files() entry %q is not a clean relative slash path", f)
		}
		data := embeddedFile(t, f)
		total += len(data)
		if bytes.ContainsRune(data, '\r') {
			t.Errorf("%s has CR line ends", f)
		}
		if len(data) > 0 && data[len(data)-1] != '\n' {
			t.Errorf("%s does not end with a newline", f)
		}
	}
	if total >= 20_000 {
		t.Errorf("the workspace is %d bytes; keep it under 20 KB", total)
	}
}

func TestWrite(t *testing.T) {
	for name, dir := range map[string]func(t *testing.T) string{
		"new folder": func(t *testing.T) string { return filepath.Join(t.TempDir(), "ws") },
		"empty folder": func(t *testing.T) string {
			dir := filepath.Join(t.TempDir(), "ws")
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			return dir
		},
	} {
		t.Run(name, func(t *testing.T) {
			dir := dir(t)
			if err := Write(dir); err != nil {
				t.Fatal(err)
			}
			var written []string
			err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
				if err != nil {
					return err
				}
				info, err := d.Info()
				if err != nil {
					return err
				}
				if runtime.GOOS != "windows" {
					want := os.FileMode(fileMode)
					if d.IsDir() {
						want = dirMode
					}
					if info.Mode().Perm()&^want != 0 {
						t.Errorf("%s has mode %v, more than %v", p, info.Mode().Perm(), want)
					}
				}
				if !d.IsDir() {
					rel, err := filepath.Rel(dir, p)
					if err != nil {
						return err
					}
					written = append(written, filepath.ToSlash(rel))
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			slices.Sort(written)
			if !slices.Equal(written, Files()) {
				t.Fatalf("written files:\n%q\nwant:\n%q", written, Files())
			}
			for _, f := range Files() {
				got, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(f)))
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, embeddedFile(t, f)) {
					t.Errorf("%s differs from the embedded file", f)
				}
			}
		})
	}
}

func TestWriteRefusesNonEmpty(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ws")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	mine := filepath.Join(dir, "notes.md")
	const content = "my own notes\n"
	if err := os.WriteFile(mine, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	err := Write(dir)
	if !errors.Is(err, ErrNotEmpty) {
		t.Fatalf("Write into a non-empty folder: err = %v, want ErrNotEmpty", err)
	}
	if want := fmt.Sprintf("demo: %s is not empty", dir); err.Error() != want {
		t.Errorf("error = %q, want %q", err, want)
	}
	if got, err := os.ReadFile(mine); err != nil || string(got) != content {
		t.Errorf("existing file changed: %q, %v", got, err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 {
		t.Errorf("Write left %d entries in the folder, want only the existing file", len(entries))
	}
}

func TestWriteRefusesFile(t *testing.T) {
	file := filepath.Join(t.TempDir(), "ws")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := Write(file)
	if err == nil || !strings.HasPrefix(err.Error(), "demo: ") {
		t.Fatalf("Write onto a file: err = %v, want a demo: error", err)
	}
	if got, _ := os.ReadFile(file); string(got) != "x" {
		t.Errorf("the file changed: %q", got)
	}
}

// tally is a plain line-based count of a steps file, independent of ctx's Markdown
// parser: checkbox lines outside fenced code blocks, and the first open one.
type tally struct {
	done, total   int
	fencedBoxes   int    // checkbox lines inside fences (examples, not tasks)
	next          int    // ordinal of the first open task, 0 when none
	nextText      string // its text
	section       int    // ordinal of the ## heading above it
	sectionName   string
	sectionsSoFar int
}

func count(steps string) tally {
	var c tally
	fenced := false
	name := ""
	for _, line := range strings.Split(steps, "\n") {
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~") {
			fenced = !fenced
			continue
		}
		box := strings.HasPrefix(trimmed, "- [ ] ") || strings.HasPrefix(trimmed, "- [x] ") || strings.HasPrefix(trimmed, "- [X] ")
		switch {
		case fenced:
			if box {
				c.fencedBoxes++
			}
		case strings.HasPrefix(line, "## "):
			c.sectionsSoFar++
			name = strings.TrimSpace(line[3:])
		case box:
			c.total++
			if trimmed[3] != ' ' {
				c.done++
			} else if c.next == 0 {
				c.next, c.nextText = c.total, strings.TrimSpace(trimmed[6:])
				c.section, c.sectionName = c.sectionsSoFar, name
			}
		}
	}
	return c
}

// frontmatter reads the flat "key: value" lines between the opening and closing ---.
func frontmatter(t *testing.T, doc string) map[string]string {
	t.Helper()
	rest, ok := strings.CutPrefix(doc, "---\n")
	if !ok {
		t.Fatal("no opening --- line")
	}
	block, _, ok := strings.Cut(rest, "\n---\n")
	if !ok {
		t.Fatal("no closing --- line")
	}
	fm := map[string]string{}
	for _, line := range strings.Split(block, "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && !strings.HasPrefix(line, " ") {
			fm[k] = strings.Trim(strings.TrimSpace(v), `"`)
		}
	}
	return fm
}

func TestCheckoutResumeMatchesSteps(t *testing.T) {
	c := count(string(embeddedFile(t, checkoutSteps)))
	if c.fencedBoxes == 0 {
		t.Error("steps.md should show a checkbox inside a fenced block, as an example that is not a task")
	}
	if c.next == 0 {
		t.Fatal("steps.md has no open task")
	}
	resume := string(embeddedFile(t, checkoutResume))
	fm := frontmatter(t, resume)
	// Percent rounds down, as ctx computes it (markdown.ProgressOf).
	for key, want := range map[string]string{
		"progress_tasks_completed": strconv.Itoa(c.done),
		"progress_tasks_total":     strconv.Itoa(c.total),
		"progress_percentage":      strconv.Itoa(c.done * 100 / c.total),
		"next_task_number":         strconv.Itoa(c.next),
		"next_task_description":    c.nextText,
		"current_section":          strconv.Itoa(c.section),
		"current_section_name":     c.sectionName,
		"project_id":               "01-checkout-redesign",
		"resume_version":           "3",
	} {
		if got := fm[key]; got != want {
			t.Errorf("_resume.md %s = %q, steps.md says %q", key, got, want)
		}
	}
	if want := fmt.Sprintf("**Next Action:** Task %d — %s\n", c.next, c.nextText); !strings.Contains(resume, want) {
		t.Errorf("_resume.md lacks the line %q", want)
	}
	// The brief of the demo: 14 tasks, 6 done, task 7 in Phase 2 next.
	if c.total != 14 || c.done != 6 || c.next != 7 || c.sectionName != "Phase 2: Payment form" {
		t.Errorf("steps.md: %d/%d done, next task %d in %q; want 6/14, task 7 in Phase 2: Payment form",
			c.done, c.total, c.next, c.sectionName)
	}
}

// TestResumeListsExistingFiles checks that every path the save point names is in the
// workspace, so the demo's reading list has no missing entries.
func TestResumeListsExistingFiles(t *testing.T) {
	resume := string(embeddedFile(t, checkoutResume))
	files := Files()
	var named []string
	for _, line := range strings.Split(resume, "\n") {
		if p, ok := strings.CutPrefix(line, "  - "); ok {
			named = append(named, p) // files_to_load
		}
		if _, rest, ok := strings.Cut(line, "`"); ok {
			if p, _, ok := strings.Cut(rest, "`"); ok && strings.HasSuffix(p, ".md") {
				named = append(named, p)
			}
		}
	}
	if len(named) < 6 {
		t.Fatalf("found only %d named files in _resume.md: %q", len(named), named)
	}
	for _, p := range named {
		if !slices.Contains(files, checkout+p) {
			t.Errorf("_resume.md names %s, which is not in the workspace", p)
		}
	}
}

func TestOtherProjects(t *testing.T) {
	for _, p := range []struct {
		overview, steps string
		status          string
		done, total     int
	}{
		{"02-search-relevance/01-planning/01-overview.md", "02-search-relevance/01-planning/04-steps.md", "PLANNING", 0, 5},
		{"03-docs-site-migration/01-planning/overview.md", "03-docs-site-migration/01-planning/steps.md", "COMPLETE", 6, 6},
		{"00-onboarding/01-team-handbook/01-planning/overview.md", "00-onboarding/01-team-handbook/01-planning/steps.md", "ACTIVE", 2, 4},
		{"01-checkout-redesign/01-planning/overview.md", "01-checkout-redesign/01-planning/steps.md", "IN_PROGRESS", 6, 14},
	} {
		fm := frontmatter(t, string(embeddedFile(t, "02-projects/"+p.overview)))
		if id := path.Base(path.Dir(path.Dir(p.overview))); fm["id"] != id {
			t.Errorf("%s: id = %q, want the folder name %q", p.overview, fm["id"], id)
		}
		for _, key := range []string{"name", "description", "created"} {
			if fm[key] == "" {
				t.Errorf("%s: no %s", p.overview, key)
			}
		}
		if fm["status"] != p.status {
			t.Errorf("%s: status = %q, want %q", p.overview, fm["status"], p.status)
		}
		c := count(string(embeddedFile(t, "02-projects/"+p.steps)))
		if c.done != p.done || c.total != p.total {
			t.Errorf("%s: %d/%d done, want %d/%d", p.steps, c.done, c.total, p.done, p.total)
		}
	}
	legacy := frontmatter(t, string(embeddedFile(t, "02-projects/03-docs-site-migration/01-planning/resume-context.md")))
	if legacy["resume_version"] != "2" || legacy["current_phase"] != "done" {
		t.Errorf("legacy save point frontmatter = %v, want resume_version 2 and current_phase done", legacy)
	}
}
