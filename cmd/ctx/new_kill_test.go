package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ctxtools/ctx/loader"
)

// TestKilledNewLeavesWholeOrNothing kills `ctx new` at random moments of its run and
// checks after each kill that every project folder is whole (planning files and save
// point, all parseable) or not there, and that `ctx projects` lists only whole projects.
// The next whole `ctx new` then removes what killed ones left behind.
func TestKilledNewLeavesWholeOrNothing(t *testing.T) {
	bin := ctxBinary(t)
	tail := checklistTail(t)
	ws := t.TempDir()
	projectsDir := filepath.Join(ws, "02-projects")
	if err := os.MkdirAll(projectsDir, 0o755); err != nil {
		t.Fatal(err)
	}

	// A few whole runs time one, so that the kills below spread over a whole run:
	// startup, numbering, the folders, the planning files, the save point, the rename.
	maxDelay, rng := killSchedule(t, "a new", func(i int) { runCtx(t, bin, ws, "new", fmt.Sprintf("Whole %d", i)) })

	const runs = 200
	deadline := time.Now().Add(12 * time.Second) // fewer runs on a slow machine, not a slow test
	var done, finished int
	half := map[string]string{} // folder → what is missing, over all runs
	shownBroken := map[string]bool{}
	mostTemps, leftTemps := 0, 0 // the most temporary folders after a kill, and how often any
	for n := 1; n <= runs && time.Now().Before(deadline); n++ {
		done++
		delay := time.Duration(rng.Int64N(int64(maxDelay) + 1))
		r := startCtx(t, bin, ws, "", "new", fmt.Sprintf("Name %d", n))
		time.Sleep(delay)
		_ = r.cmd.Process.Signal(syscall.SIGKILL)
		err := r.cmd.Wait()
		var exit *exec.ExitError
		switch {
		case err == nil:
			finished++
		case errors.As(err, &exit) && exit.Sys().(syscall.WaitStatus).Signal() == syscall.SIGKILL:
		default:
			t.Fatalf("run %d (killed after %v): %v\nstderr:\n%s", n, delay, err, &r.stderr)
		}

		onDisk, temps := projectFolders(t, projectsDir)
		// Each run sweeps the folders of killed runs before it builds its own, so only
		// the run just killed may have left one.
		if len(temps) > mostTemps {
			mostTemps = len(temps)
		}
		if len(temps) > 0 {
			leftTemps++
		}
		for _, id := range onDisk {
			if _, seen := half[id]; seen {
				continue
			}
			if err := checkWholeProject(filepath.Join(projectsDir, id), id, tail); err != nil {
				half[id] = fmt.Sprintf("run %d (killed after %v): %v", n, delay, err)
			}
		}
		listed := listProjects(t, bin, ws)
		var ids []string
		for _, p := range listed {
			ids = append(ids, p.ID)
			if len(p.Problems) == 0 && p.Progress.TasksTotal > 0 {
				continue
			}
			if _, isHalf := half[p.ID]; isHalf {
				shownBroken[p.ID] = true
				continue
			}
			t.Errorf("run %d (killed after %v): ctx projects lists %s with problems %q and %d tasks, though its files are whole", n, delay, p.ID, p.Problems, p.Progress.TasksTotal)
		}
		if !slices.Equal(ids, onDisk) {
			t.Fatalf("run %d (killed after %v): ctx projects lists %v, the folder holds %v (and temporary %v)", n, delay, ids, onDisk, temps)
		}
	}
	onDisk, _ := projectFolders(t, projectsDir)
	t.Logf("%d runs: %d finished before the kill, %d projects on disk, %d left a temporary folder, %d half-made projects (%d of them listed by ctx projects with problems or no tasks)",
		done, finished, len(onDisk), leftTemps, len(half), len(shownBroken))
	if mostTemps > 1 {
		t.Errorf("after a kill, %d temporary folders: the killed runs' folders were not swept by the runs after them", mostTemps)
	}
	if len(half) > 0 {
		var examples []string
		for _, id := range onDisk {
			if why, ok := half[id]; ok && len(examples) < 5 {
				examples = append(examples, why)
			}
		}
		t.Errorf("%d of %d runs left a half-made project, e.g.\n%s", len(half), done, strings.Join(examples, "\n"))
	}
	numbers := map[int]string{}
	for _, id := range onDisk {
		n := leadingInt(id)
		if other, dup := numbers[n]; dup {
			t.Errorf("two projects share number %d: %s and %s", n, other, id)
		}
		numbers[n] = id
	}

	// The next whole `ctx new` removes the temporary folders of killed runs at once,
	// young as they are: their writers are gone. Besides what the last kill may have
	// left, one more as a killed run names it (the process that made it has ended); and
	// one whose writer runs (here the test, as far as its name says), which is kept.
	ended := exec.Command(bin, "version")
	if err := ended.Run(); err != nil {
		t.Fatal(err)
	}
	live := filepath.Join(projectsDir, fmt.Sprintf("%s%d-%d", loader.NewTempPrefix, os.Getpid(), time.Now().UnixNano()))
	for _, dir := range []string{
		filepath.Join(projectsDir, fmt.Sprintf("%s%d-%d", loader.NewTempPrefix, ended.Process.Pid, time.Now().UnixNano())),
		live,
	} {
		if err := os.MkdirAll(filepath.Join(dir, "01-planning"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	runCtx(t, bin, ws, "new", "After the kills")
	onDisk, left := projectFolders(t, projectsDir)
	if !slices.Equal(left, []string{filepath.Base(live)}) {
		t.Errorf("after a whole ctx new, temporary folders left: %v; want only the live writer's %s", left, filepath.Base(live))
	}
	for _, id := range onDisk {
		if _, known := half[id]; known {
			continue // reported above
		}
		if err := checkWholeProject(filepath.Join(projectsDir, id), id, tail); err != nil {
			t.Errorf("after the last ctx new: %v", err)
		}
	}
	if last := onDisk[len(onDisk)-1]; !strings.HasSuffix(last, "-after-the-kills") {
		t.Errorf("the last ctx new made no project: the last is %s", last)
	}
}

// projectFolders lists the numbered project folders of dir, in number order, and
// the temporary folders ctx new builds projects in; anything else fails the test.
func projectFolders(t *testing.T, dir string) (projects, temps []string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		switch {
		case strings.HasPrefix(e.Name(), loader.NewTempPrefix):
			temps = append(temps, e.Name())
		case regexp.MustCompile(`^\d+-`).MatchString(e.Name()):
			projects = append(projects, e.Name())
		default:
			t.Fatalf("%s: unexpected entry %s", dir, e.Name())
		}
	}
	slices.SortStableFunc(projects, func(a, b string) int { return leadingInt(a) - leadingInt(b) })
	return projects, temps
}

func leadingInt(name string) int {
	n, _ := strconv.Atoi(name[:strings.IndexByte(name, '-')])
	return n
}

// checkWholeProject says what makes the project folder dir not one a whole `ctx new`
// makes: its four folders, its planning files with a parseable overview, and a
// complete save point naming the project.
func checkWholeProject(dir, id, tail string) error {
	for _, sub := range []string{"01-planning", "02-resources", "03-working", "04-outputs"} {
		if fi, err := os.Stat(filepath.Join(dir, sub)); err != nil || !fi.IsDir() {
			return fmt.Errorf("%s: no folder %s", id, sub)
		}
	}
	planning := filepath.Join(dir, "01-planning")
	for _, name := range []string{"overview.md", "plan.md", "steps.md", "_resume.md"} {
		data, err := os.ReadFile(filepath.Join(planning, name))
		if err != nil {
			return fmt.Errorf("%s: %w", id, err)
		}
		if len(data) == 0 {
			return fmt.Errorf("%s: %s is empty", id, name)
		}
		switch name {
		case "overview.md":
			if _, err := frontmatterOf(data); err != nil {
				return fmt.Errorf("%s: overview.md: %w", id, err)
			}
		case "_resume.md":
			fm, err := frontmatterOf(data)
			if err != nil {
				return fmt.Errorf("%s: _resume.md: %w", id, err)
			}
			if fm["project_id"] != id {
				return fmt.Errorf("%s: _resume.md names project %v", id, fm["project_id"])
			}
			if !bytes.HasSuffix(data, []byte("\n"+tail)) {
				return fmt.Errorf("%s: _resume.md does not end with the template's last section", id)
			}
		}
	}
	return nil
}

// listedProject is what the test reads of a project in `ctx projects --json`.
type listedProject struct {
	ID       string   `json:"id"`
	Problems []string `json:"problems"`
	Progress struct {
		TasksTotal int `json:"tasks_total"`
	} `json:"progress"`
}

func listProjects(t *testing.T, bin, ws string) []listedProject {
	t.Helper()
	r := startCtx(t, bin, ws, "", "projects", "--json")
	r.mustSucceed(t)
	var out struct {
		Projects []listedProject `json:"projects"`
	}
	if err := json.Unmarshal(r.stdout.Bytes(), &out); err != nil {
		t.Fatalf("ctx projects --json: %v\n%s", err, &r.stdout)
	}
	return out.Projects
}
