package loader

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ctxtools/ctx/markdown"
)

// bigSteps is a steps file over stepsCacheMin: n tasks in two sections, the first done
// tasks checked, and a fenced example that is not a task.
func bigSteps(n, done int) string {
	var b strings.Builder
	b.WriteString("# Steps\n\n```markdown\n- [ ] not a task\n```\n\n## Phase 1\n\n")
	for i := range n {
		if i == n/2 {
			b.WriteString("\n## Phase 2\n\n")
		}
		box := " "
		if i < done {
			box = "x"
		}
		fmt.Fprintf(&b, "- [%s] Task %04d of the big plan\n", box, i+1)
	}
	return b.String()
}

// The steps cache never changes what reading a project gives: cold, warm, after an
// edit that keeps the size, after one moments ago (not cached), with a cache that is
// garbage or was made for another file.
func TestStepsCacheNeverChangesProgress(t *testing.T) {
	withAndWithoutCtx(t, stepsCacheNeverChangesProgress)
}

func stepsCacheNeverChangesProgress(t *testing.T, files map[string]string) {
	root := t.TempDir()
	steps := filepath.Join(root, "02-projects", "01-big", "01-planning", "steps.md")
	files["02-projects/01-big/01-planning/steps.md"] = bigSteps(600, 10)
	files["02-projects/02-small/01-planning/steps.md"] = "- [x] one\n- [ ] two\n"
	writeTree(t, root, files)
	if fi, err := os.Stat(steps); err != nil || fi.Size() < stepsCacheMin {
		t.Fatalf("the fixture is too small to be cached: %v", err)
	}
	old := time.Now().Add(-time.Hour)
	settle := func() {
		t.Helper()
		must(t, os.Chtimes(steps, old, old))
		old = old.Add(time.Minute)
	}
	ws, err := Open(root)
	must(t, err)
	cache := ws.stepsCachePath(steps)
	read := func(n string) *Project {
		t.Helper()
		p, err := ws.Resolve(n)
		must(t, err)
		return p
	}
	check := func(what string) {
		t.Helper()
		warm := read("1")
		must(t, os.RemoveAll(filepath.Dir(cache)))
		cold := read("1")
		if !reflect.DeepEqual(warm.Progress, cold.Progress) || !reflect.DeepEqual(warm.Pending, cold.Pending) {
			t.Errorf("%s: with the cache %+v %+v\nwithout %+v %+v", what, warm.Progress, warm.Pending, cold.Progress, cold.Pending)
		}
		if len(cold.Pending) != PendingKept || cold.Progress.TasksTotal != 600 {
			t.Errorf("%s: read %d pending of %d tasks", what, len(cold.Pending), cold.Progress.TasksTotal)
		}
	}

	settle()
	read("1")
	if _, err := os.Stat(cache); err != nil {
		t.Fatalf("no cache entry for a large settled steps file: %v", err)
	}
	check("settled")

	// Checking a task keeps the file's size: only the stamp's time tells.
	must(t, os.WriteFile(steps, []byte(bigSteps(600, 11)), 0o644))
	settle()
	if p := read("1"); p.Progress.TasksCompleted != 11 {
		t.Errorf("after a task was checked: %d done, want 11", p.Progress.TasksCompleted)
	}
	check("a task checked")

	// Swapped for a file of the same size and the same modification time, as tar,
	// rsync -a or cp -p leave one: the inode and the status change time tell.
	if stampsSeeCtime {
		fi, err := os.Stat(steps)
		must(t, err)
		swap := steps + ".new"
		must(t, os.WriteFile(swap, []byte(bigSteps(600, 9)), 0o644))
		must(t, os.Chtimes(swap, fi.ModTime(), fi.ModTime()))
		read("1") // the cache holds the file before the swap
		must(t, os.Rename(swap, steps))
		if p := read("1"); p.Progress.TasksCompleted != 9 {
			t.Errorf("after a same-size, same-time swap: %d done, want 9", p.Progress.TasksCompleted)
		}
		check("a file swapped with the same size and time")
	}

	// Edited moments ago: read, and not cached.
	must(t, os.Remove(cache))
	must(t, os.WriteFile(steps, []byte(bigSteps(600, 12)), 0o644))
	if p := read("1"); p.Progress.TasksCompleted != 12 {
		t.Errorf("after an edit just now: %d done, want 12", p.Progress.TasksCompleted)
	}
	if _, err := os.Stat(cache); !os.IsNotExist(err) {
		t.Errorf("a steps file edited moments ago was cached: %v", err)
	}

	settle()
	read("1")
	good, err := os.ReadFile(cache)
	must(t, err)
	changed := append([]byte(nil), good...)
	changed[len(changed)/2] ^= 0x5a
	for what, data := range map[string][]byte{"cut short": good[:len(good)-1], "garbage": []byte("steps"), "a byte changed": changed} {
		must(t, os.WriteFile(cache, data, 0o644))
		check(what + " cache")
	}
	// A whole entry, for another file whose path has the same hash.
	lie := stepsReading{Progress: markdown.Progress{TasksTotal: 1}}
	ws.saveStepsCache(cache, steps+"-elsewhere", stampOf(steps), lie)
	if _, ok := loadStepsCache(cache, steps+"-elsewhere", stampOf(steps)); !ok {
		t.Fatal("the other file's entry was not written")
	}
	check("another file's cache")

	// A listing that read projects removes the entries of steps files that are gone.
	orphan := filepath.Join(filepath.Dir(cache), "00000000deadbeef.bin")
	must(t, os.WriteFile(orphan, []byte("x"), 0o644))
	read("1")
	must(t, os.MkdirAll(filepath.Join(root, "02-projects", "03-new"), 0o755)) // read, not indexed
	if _, err := ws.Scan(ReadOptions{Progress: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(orphan); !os.IsNotExist(err) {
		t.Errorf("an orphan entry survived a listing: %v", err)
	}
	if _, err := os.Stat(cache); err != nil {
		t.Errorf("a listing removed a live entry: %v", err)
	}

	// A small steps file is parsed, never cached.
	small := filepath.Join(root, "02-projects", "02-small", "01-planning", "steps.md")
	read("2")
	if _, err := os.Stat(ws.stepsCachePath(small)); !os.IsNotExist(err) {
		t.Errorf("a small steps file was cached: %v", err)
	}
}
