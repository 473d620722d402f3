package loader

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ctxtools/ctx/markdown"
)

// TestIndexNeverChangesTheListing: after every kind of change, a scan served by the
// index gives exactly what a cold scan (no index) gives, and an unchanged workspace is
// served without parsing anything.
func TestIndexNeverChangesTheListing(t *testing.T) { withAndWithoutCtx(t, indexNeverChangesTheListing) }

func indexNeverChangesTheListing(t *testing.T, files map[string]string) {
	root := t.TempDir()
	for i := 1; i <= 6; i++ {
		dir := fmt.Sprintf("02-projects/%02d-p%d/01-planning/", i, i)
		files[dir+"overview.md"] = fmt.Sprintf("---\nname: P%d\nstatus: ACTIVE\n---\n", i)
		files[dir+"steps.md"] = "- [x] one\n- [ ] two\n- [ ] three\n"
	}
	files["02-projects/07-broken/01-planning/overview.md"] = "---\nname: [unclosed\n---\n"
	writeTree(t, root, files)
	cacheDir := openCacheDir(t, root)
	old := time.Now().Add(-time.Hour)
	age := func() {
		t.Helper()
		err := filepath.Walk(root, func(path string, fi os.FileInfo, err error) error {
			if err != nil {
				return err
			}
			if filepath.Base(path) == IndexFile {
				return nil
			}
			return os.Chtimes(path, old, old)
		})
		if err != nil {
			t.Fatal(err)
		}
		old = old.Add(time.Minute) // every change gets a time of its own
	}
	listing := func(useIndex bool) string {
		t.Helper()
		if !useIndex {
			for _, name := range []string{IndexFile, FoldersFile} {
				if err := os.Remove(filepath.Join(cacheDir, name)); err != nil && !os.IsNotExist(err) {
					t.Fatal(err)
				}
			}
		}
		ws, err := Open(root)
		if err != nil {
			t.Fatal(err)
		}
		ps, err := ws.Scan(ReadOptions{Progress: true})
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(ps)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	check := func(step string) {
		t.Helper()
		warm := listing(true)
		cold := listing(false)
		if warm != cold {
			t.Fatalf("%s: the index changed the listing:\nindexed: %s\ncold:    %s", step, warm, cold)
		}
		listing(true) // rebuild the index for the next step
	}

	age()
	check("first scan")
	before := markdown.Parses()
	listing(true)
	if n := markdown.Parses() - before; n != 0 {
		t.Errorf("an unchanged workspace was parsed %d times; the index should serve it", n)
	}

	steps := filepath.Join(root, "02-projects/01-p1/01-planning/steps.md")
	must(t, os.WriteFile(steps, []byte("- [x] one\n- [x] two\n- [ ] three\n"), 0o644)) // same size
	age()
	check("a task ticked, same size")

	overview := filepath.Join(root, "02-projects/02-p2/01-planning/overview.md")
	must(t, os.WriteFile(overview, []byte("---\nname: Q2\nstatus: DONE!\n---\n"), 0o644))
	age()
	check("an overview edited")

	must(t, os.Rename(filepath.Join(root, "02-projects/03-p3"), filepath.Join(root, "02-projects/09-renamed")))
	age()
	check("a project renamed")

	must(t, os.RemoveAll(filepath.Join(root, "02-projects/04-p4")))
	must(t, os.Remove(filepath.Join(root, "02-projects/05-p5/01-planning/steps.md")))
	age()
	check("a project and a steps file deleted")

	// Clock skew: a file from the future is never vouched for, and when the clock comes
	// back with the same size, the change is still seen.
	future := time.Now().Add(24 * time.Hour)
	must(t, os.WriteFile(steps, []byte("- [ ] one\n- [x] two\n- [x] three\n"), 0o644))
	must(t, os.Chtimes(steps, future, future))
	check("a file from the future")
	must(t, os.WriteFile(steps, []byte("- [ ] one\n- [ ] two\n- [x] three\n"), 0o644))
	must(t, os.Chtimes(steps, future, future))
	check("the future file edited at the same future time")
	age()
	check("the clock set back")

	// A broken or foreign index is rebuilt, never trusted: cut short, a byte changed,
	// not an index at all, or made for another workspace.
	index := filepath.Join(cacheDir, IndexFile)
	good, err := os.ReadFile(index)
	must(t, err)
	flipped := append([]byte(nil), good...)
	flipped[len(flipped)/2] ^= 0xff
	foreign, err := decodeIndex(good)
	must(t, err)
	foreign.Key = "elsewhere"
	for what, data := range map[string][]byte{
		"cut short": good[:len(good)-3], "a byte changed": flipped, "not an index": []byte("{not json"),
		"another workspace's": encodeIndex(foreign),
	} {
		must(t, os.WriteFile(index, data, 0o644))
		if got, want := listing(true), listing(false); got != want {
			t.Errorf("an index %s changed the listing", what)
		}
	}
}

// TestIndexNotCreatedWithoutCtx: listing a folder ctx keeps no state in writes nothing.
func TestIndexNotCreatedWithoutCtx(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	root := t.TempDir()
	writeTree(t, root, map[string]string{"02-projects/01-a/01-planning/steps.md": "- [ ] a\n"})
	old := time.Now().Add(-time.Hour) // a workspace at rest: what changed just now is not cached
	must(t, filepath.Walk(root, func(path string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Chtimes(path, old, old)
	}))
	ws, err := Open(root)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ws.Scan(ReadOptions{Progress: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, ".ctx")); !os.IsNotExist(err) {
		t.Errorf("a listing created .ctx: %v", err)
	}
	// The caches are in the user's cache folder instead, with a note of the workspace.
	dir := ws.CacheDir()
	if !strings.HasPrefix(dir, filepath.Join(cache, "ctx")+string(filepath.Separator)) {
		t.Fatalf("CacheDir %q, want a folder in %s", dir, cache)
	}
	if _, err := os.Stat(filepath.Join(dir, IndexFile)); err != nil {
		t.Errorf("no index in the user cache: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "workspace")); strings.TrimSpace(string(b)) != ws.Root {
		t.Errorf("the cache's note says %q", b)
	}
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("the cache folder: %v %v", fi, err)
	}
	// The workspace gets .ctx/: its caches move there, the user-cache folder goes.
	writeTree(t, root, map[string]string{".ctx/config.yaml": "# ctx\n"})
	ws, err = Open(root)
	if err != nil {
		t.Fatal(err)
	}
	if got := ws.CacheDir(); got != filepath.Join(root, ".ctx", "state") {
		t.Errorf("with .ctx, CacheDir %q", got)
	}
	if _, err := os.Stat(filepath.Join(root, ".ctx", "state", IndexFile)); err != nil {
		t.Errorf("the index did not move into .ctx/state: %v", err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("the user-cache folder stayed: %v", err)
	}
}

// withAndWithoutCtx runs a cache test for a workspace with .ctx/ (caches in
// .ctx/state) and one without (caches in the user's cache folder, here a temporary
// one): the files it gets are the workspace's, .ctx/config.yaml added for the first.
func withAndWithoutCtx(t *testing.T, test func(t *testing.T, files map[string]string)) {
	t.Run("with .ctx", func(t *testing.T) { test(t, map[string]string{".ctx/config.yaml": "# ctx\n"}) })
	t.Run("without .ctx", func(t *testing.T) {
		t.Setenv("XDG_CACHE_HOME", t.TempDir())
		test(t, map[string]string{})
	})
}

// openCacheDir is the cache folder of the workspace at root.
func openCacheDir(t *testing.T, root string) string {
	t.Helper()
	ws, err := Open(root)
	if err != nil {
		t.Fatal(err)
	}
	dir := ws.CacheDir()
	if dir == "" {
		t.Fatal("no cache folder")
	}
	return dir
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
