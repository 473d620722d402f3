package loader

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/ctxtools/ctx/internal/durable"
	"github.com/ctxtools/ctx/markdown"
)

// The project index makes a listing of thousands of projects cheap: for each project
// it keeps what reading it gave (name, status, progress, problems) with the size,
// modification time and mode of every file and folder that reading looked at. A later
// Scan stats those instead of reading and parsing them, and reads again only the
// projects where a stamp differs. The index is machine-local state
// (.ctx/state/projects-index.bin, a compact binary encoding of its own, indexcodec.go: a
// JSON index of 20,000 projects took longer to decode than the listing it saved) and is
// never trusted blindly:
//
//   - a file that is missing, unreadable, of another version, or made for another
//     layout or workspace is ignored and rebuilt;
//   - a stamp is compared for equality, so a clock set back or forward misses, never
//     hits;
//   - an entry whose files changed within racyWindow of the scan is not stored: an
//     edit in the same clock tick could keep size and time, so it is read next time.
//
// A listing from the index is byte for byte the listing a cold read gives (tested).

// IndexFile is the index's name in .ctx/state.
const IndexFile = "projects-index.bin"

// indexVersion changes whenever what the index stores or how a project is read does.
const indexVersion = 3

// racyWindow: files changed this recently are read again on the next scan.
const racyWindow = 2 * time.Second

type projectIndex struct {
	Version int
	Key     string // the workspace and layout it was made for
	Entries map[string]indexEntry
}

// indexEntry is one project as reading gave it, with the stamps it depends on.
type indexEntry struct {
	Stamps       []fileStamp
	Name         string
	Status       string
	Description  string
	Progress     markdown.Progress
	Problems     []string
	Overview     string
	Plan         string
	Steps        string
	StepsProblem string
}

// fileStamp is what a stat says of a path: when its content or its entries last
// changed, its size and its mode (through links); Missing when it does not exist. On
// Unix it also holds the inode and the status change time (ctime), which no tool can
// set: a file swapped in with the same size and an old modification time (tar, rsync
// -a, cp -p), or one whose owner changed, has another stamp.
type fileStamp struct {
	Path    string
	Size    int64
	ModTime int64
	Ctime   int64 // 0 where the system does not say (stamp_other.go)
	Ino     uint64
	Mode    fs.FileMode
	Link    bool
	Missing bool
}

func stampOf(path string) fileStamp {
	s := fileStamp{Path: path}
	fi, err := os.Lstat(path) // one stat for all but links
	if err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		s.Link = true
		fi, err = os.Stat(path)
	}
	if err != nil {
		s.Missing = true
		return s
	}
	s.Size, s.ModTime, s.Mode = fi.Size(), fi.ModTime().UnixNano(), fi.Mode()
	s.Ctime, s.Ino = statExtra(fi)
	if fi.IsDir() {
		s.Size = 0 // a folder's size says nothing its modification time does not
	}
	return s
}

// stampsOf are the stamps a project read depends on: its folder, its planning folder
// (whose time changes when a file is added, removed or renamed) and the planning files
// read.
func (ws *Workspace) stampsOf(p *Project, dir string) []fileStamp {
	rels := []string{".", ws.Config.PlanningDir}
	for _, f := range []string{p.Overview, p.Steps} {
		if f != "" {
			rels = append(rels, relTo(dir, f))
		}
	}
	out := make([]fileStamp, len(rels))
	for i, rel := range rels {
		out[i] = stampOf(filepath.Join(dir, rel))
		out[i].Path = rel
	}
	return out
}

func (e *indexEntry) fresh(dir string) bool {
	for _, s := range e.Stamps {
		now := stampOf(filepath.Join(dir, s.Path))
		now.Path = s.Path
		if now != s {
			return false
		}
	}
	return true
}

// relTo is path relative to dir ("" for ""); the index keeps no absolute paths but
// the folder's own.
func relTo(dir, path string) string {
	if path == "" {
		return ""
	}
	rel, err := filepath.Rel(dir, path)
	if err != nil {
		return path
	}
	return rel
}

// absIn is relTo undone.
func absIn(dir, rel string) string {
	if rel == "" || filepath.IsAbs(rel) {
		return rel
	}
	return filepath.Join(dir, rel)
}

// racy reports whether a stamp is too recent (or in the future) to vouch for content.
func (e *indexEntry) racy(now time.Time) bool {
	limit := now.Add(-racyWindow).UnixNano()
	for _, s := range e.Stamps {
		if s.ModTime > limit {
			return true
		}
	}
	return false
}

func (e *indexEntry) project(f Folder) *Project {
	problems := make([]string, len(e.Problems)) // never nil: JSON says [], as a read does
	copy(problems, e.Problems)
	return &Project{
		ID: f.ID, Number: f.Number, Slug: f.Slug, Dir: f.Dir, Path: f.Rel,
		Name: e.Name, Status: e.Status, Description: e.Description, Progress: e.Progress,
		Problems: problems, Overview: absIn(f.Dir, e.Overview), Plan: absIn(f.Dir, e.Plan), Steps: absIn(f.Dir, e.Steps),
		StepsProblem: e.StepsProblem,
	}
}

func entryOf(p *Project, stamps []fileStamp) indexEntry {
	return indexEntry{
		Stamps: stamps, Name: p.Name, Status: p.Status, Description: p.Description,
		Progress: p.Progress, Problems: append([]string(nil), p.Problems...),
		Overview: relTo(p.Dir, p.Overview), Plan: relTo(p.Dir, p.Plan), Steps: relTo(p.Dir, p.Steps), StepsProblem: p.StepsProblem,
	}
}

// indexKey names what an index was made for: the workspace, its layout and the
// folders links may lead to. Another key means another index.
func (ws *Workspace) indexKey() string {
	return strings.Join(append([]string{ws.Root, ws.Config.ProjectsDir, ws.Config.PlanningDir, ws.Config.ResumeFile}, ws.AllowOutside...), "\x00")
}

// indexPath is where the index lives (CacheDir); "" when there is no place for it.
func (ws *Workspace) indexPath() string {
	dir := ws.CacheDir()
	if dir == "" {
		return ""
	}
	return filepath.Join(dir, IndexFile)
}

// loadIndex reads the index, or an empty one when there is none it can trust.
func (ws *Workspace) loadIndex(path string) *projectIndex {
	empty := &projectIndex{Version: indexVersion, Key: ws.indexKey(), Entries: map[string]indexEntry{}}
	if path == "" {
		return empty
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return empty
	}
	idx, err := decodeIndex(data)
	if err != nil || idx.Version != indexVersion || idx.Key != empty.Key {
		return empty
	}
	return idx
}

// saveIndex writes the index atomically. A failure is not an error of the listing: the
// next scan reads the projects again.
func (ws *Workspace) saveIndex(path string, idx *projectIndex) {
	if path == "" {
		return
	}
	data := encodeIndex(idx)
	if err := ws.ensureCacheDir(filepath.Dir(path)); err != nil {
		return
	}
	_ = durable.ReplaceFile(path, data, 0o644)
	for _, old := range []string{"projects-index.json", "projects-index.gob"} { // an earlier ctx's
		_ = os.Remove(filepath.Join(filepath.Dir(path), old))
	}
}

// scanIndexed reads every project of folders, from the index where it is fresh.
func (ws *Workspace) scanIndexed(folders []Folder, opts ReadOptions) []*Project {
	path := ws.indexPath()
	idx := ws.loadIndex(path)
	now := time.Now()
	out := make([]*Project, len(folders))
	entries := make([]*indexEntry, len(folders)) // read now, to be stored
	hits := make([]bool, len(folders))           // served from the index
	parallel(len(folders), func(i int) {
		f := folders[i]
		if f.Err != nil {
			out[i] = ws.ReadProject(f, opts)
			return
		}
		if e, ok := idx.Entries[f.Dir]; ok && e.fresh(f.Dir) {
			out[i], hits[i] = e.project(f), true
			return
		}
		p := ws.ReadProject(f, opts)
		p.Pending = nil // a listing keeps no task lists: indexed or not, the same
		e := entryOf(p, ws.stampsOf(p, f.Dir))
		if !e.racy(now) {
			entries[i] = &e
		}
		out[i] = p
	})
	changed := false
	next := make(map[string]indexEntry, len(folders))
	for i, f := range folders {
		if entries[i] != nil {
			next[f.Dir] = *entries[i]
			changed = true
		} else if hits[i] {
			next[f.Dir] = idx.Entries[f.Dir]
		}
	}
	for dir := range idx.Entries {
		if _, ok := next[dir]; !ok {
			changed = true
		}
	}
	if changed {
		idx.Entries = next
		ws.saveIndex(path, idx)
	}
	if slices.Contains(hits, false) {
		ws.pruneStepsCache(out) // a listing that read projects: drop what it did not meet
	}
	return out
}
