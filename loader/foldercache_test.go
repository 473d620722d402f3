package loader

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The folder cache never changes what a number resolves to or what a listing holds:
// after projects are added, removed and renamed, with a cache that is garbage or made
// for another workspace, and with a folder changed moments ago (not cached).
func TestFolderCacheNeverChangesResolution(t *testing.T) {
	withAndWithoutCtx(t, folderCacheNeverChangesResolution)
}

func folderCacheNeverChangesResolution(t *testing.T, files map[string]string) {
	root := t.TempDir()
	for i := 1; i <= 5; i++ {
		files[fmt.Sprintf("02-projects/%02d-p%d/01-planning/steps.md", i, i)] = "- [ ] one\n"
	}
	files["02-projects/00-onboarding/03-o3/01-planning/steps.md"] = "- [ ] one\n"
	writeTree(t, root, files)
	cachePath := filepath.Join(openCacheDir(t, root), FoldersFile)
	projects := filepath.Join(root, "02-projects")
	old := time.Now().Add(-time.Hour)
	settle := func() { // as a workspace at rest: nothing changed in the last seconds
		t.Helper()
		for _, dir := range []string{projects, filepath.Join(projects, "00-onboarding")} {
			if err := os.Chtimes(dir, old, old); err != nil {
				t.Fatal(err)
			}
		}
		old = old.Add(time.Minute)
	}
	state := func() string {
		t.Helper()
		ws, err := Open(root)
		if err != nil {
			t.Fatal(err)
		}
		folders, err := ws.Folders()
		if err != nil {
			t.Fatal(err)
		}
		var out string
		for _, f := range folders {
			out += f.Rel + "\n"
		}
		for _, q := range []string{"1", "3", "6", "9"} {
			p, err := ws.Resolve(q)
			if err != nil {
				out += q + ": " + err.Error() + "\n"
			} else {
				out += q + ": " + p.Path + "\n"
			}
		}
		return out
	}
	check := func(what string) {
		t.Helper()
		warm := state()
		if err := os.Remove(cachePath); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		if cold := state(); warm != cold {
			t.Errorf("%s: with the cache\n%s\nwithout\n%s", what, warm, cold)
		}
	}

	settle()
	state() // writes the cache
	if _, err := os.Stat(cachePath); err != nil {
		t.Fatalf("no cache written for a settled workspace: %v", err)
	}
	check("settled")

	must(t, os.MkdirAll(filepath.Join(projects, "06-p6"), 0o755))
	settle()
	check("a project added")
	must(t, os.Rename(filepath.Join(projects, "01-p1"), filepath.Join(projects, "09-p1")))
	settle()
	check("a project renamed")
	must(t, os.RemoveAll(filepath.Join(projects, "00-onboarding", "03-o3")))
	settle()
	check("an onboarding project removed")
	must(t, os.Remove(filepath.Join(projects, "06-p6")))
	check("a project removed moments ago")

	// A folder changed moments ago is listed afresh and not cached.
	state()
	ws, err := Open(root)
	must(t, err)
	data, err := os.ReadFile(cachePath)
	must(t, err)
	if dirs, ok := decodeFolders(data, ws.indexKey()); !ok {
		t.Error("the cache does not decode")
	} else if _, cached := dirs[projects]; cached {
		t.Error("a folder changed moments ago was cached")
	}

	settle()
	state()
	good, err := os.ReadFile(cachePath)
	must(t, err)
	other := encodeFolders("elsewhere", map[string]dirListing{projects: {stamp: stampOf(projects), entries: []dirEntry{{"42-ghost", entryDir}}}})
	for what, data := range map[string][]byte{"cut short": good[:len(good)-2], "garbage": []byte("not a cache"), "another workspace's": other} {
		must(t, os.WriteFile(cachePath, data, 0o644))
		check(what + " cache")
	}
	// A cache for this workspace whose entries do not match the folder is only ever
	// used while the folder's stamp is the one it was made with.
	ghost := encodeFolders(ws.indexKey(), map[string]dirListing{projects: {stamp: stampOf(projects), entries: []dirEntry{{"42-ghost", entryDir}}}})
	must(t, os.WriteFile(cachePath, ghost, 0o644))
	must(t, os.MkdirAll(filepath.Join(projects, "07-p7"), 0o755))
	settle()
	if got := state(); strings.Contains(got, "42-ghost") {
		t.Error("a cache made for another state of the folder was used")
	}
	check("a project added after a stale cache")
}
