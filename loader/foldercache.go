package loader

import (
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/ctxtools/ctx/internal/durable"
)

// The folder cache spares a read of the projects folder. Reading the names of 2,000
// project folders costs the kernel about 0.8 ms (ext4), which was most of what
// `ctx load 12` did. The cache keeps, for each folder that holds projects (the projects
// folder, its onboarding folder, the builds folders), the project-like names in it and
// whether each is a folder or a link, with the folder's stamp. A folder whose stamp
// still matches has the same entries: creating, removing or renaming an entry changes
// its folder's modification time. Like the project index it is machine-local
// (.ctx/state/projects-folders.bin), kept only where .ctx exists, and never trusted
// blindly: a folder changed within racyWindow of a read is not cached, a stamp is
// compared for equality, and a file that does not decode is ignored and rewritten.
// Links are followed afresh at every listing; only the names are cached.

// FoldersFile is the folder cache's name in .ctx/state.
const FoldersFile = "projects-folders.bin"

const (
	foldersMagic   = "ctx project folders\n"
	foldersVersion = 2
)

// Kinds of a cached entry.
const (
	entryDir  byte = 1
	entryLink byte = 2
)

// dirEntry is one project-like entry of a folder: its name and whether it is a folder
// or a link (other entries are not kept).
type dirEntry struct {
	name string
	kind byte
}

type dirListing struct {
	stamp   fileStamp
	entries []dirEntry
}

// folderCache is the cache as read, with the listings found stale replaced.
type folderCache struct {
	ws    *Workspace
	path  string // "" when there is no place for it
	key   string
	dirs  map[string]dirListing // by absolute folder path
	dirty bool
	now   time.Time
}

func (ws *Workspace) openFolderCache() *folderCache {
	c := &folderCache{ws: ws, key: ws.indexKey(), dirs: map[string]dirListing{}, now: time.Now()}
	dir := ws.CacheDir()
	if dir == "" {
		return c
	}
	c.path = filepath.Join(dir, FoldersFile)
	if data, err := os.ReadFile(c.path); err == nil {
		if dirs, ok := decodeFolders(data, c.key); ok {
			c.dirs = dirs
		}
	}
	return c
}

// entries lists the project-like entries of dir, from the cache when dir's stamp is
// the cached one.
func (c *folderCache) entries(dir string) ([]dirEntry, error) {
	stamp := stampOf(dir)
	if l, ok := c.dirs[dir]; ok && !stamp.Missing && l.stamp == stamp {
		return l.entries, nil
	}
	d, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	list, err := d.ReadDir(-1)
	_ = d.Close()
	if err != nil {
		return nil, err
	}
	var out []dirEntry
	for _, e := range list {
		if _, _, ok := splitFolderName(e.Name()); !ok {
			continue
		}
		switch {
		case e.IsDir():
			out = append(out, dirEntry{e.Name(), entryDir})
		case e.Type()&fs.ModeSymlink != 0:
			out = append(out, dirEntry{e.Name(), entryLink})
		}
	}
	if stamp.ModTime <= c.now.Add(-racyWindow).UnixNano() {
		c.dirs[dir] = dirListing{stamp: stamp, entries: out}
		c.dirty = true
	} else if _, ok := c.dirs[dir]; ok {
		delete(c.dirs, dir) // changed moments ago: listed afresh until it settles
		c.dirty = true
	}
	return out, nil
}

// save writes the cache when a listing changed. A failure is not an error of the
// listing: the next one reads the folders again.
func (c *folderCache) save() {
	if c.path == "" || !c.dirty {
		return
	}
	if c.ws.ensureCacheDir(filepath.Dir(c.path)) != nil {
		return
	}
	_ = durable.ReplaceFile(c.path, encodeFolders(c.key, c.dirs), 0o644)
}

func encodeFolders(key string, dirs map[string]dirListing) []byte {
	var e indexEncoder
	e.buf = append(e.buf, foldersMagic...)
	e.int(foldersVersion)
	e.str(key)
	e.uint(uint64(len(dirs)))
	for dir, l := range dirs {
		e.str(dir)
		e.stamp(l.stamp)
		e.uint(uint64(len(l.entries)))
		for _, en := range l.entries {
			e.str(en.name)
			e.buf = append(e.buf, en.kind)
		}
	}
	return e.finish()
}

// decodeFolders reads what encodeFolders wrote for the workspace key; false for
// anything else.
func decodeFolders(data []byte, key string) (map[string]dirListing, bool) {
	d, ok := newDecoder(data, foldersMagic)
	if !ok {
		return nil, false
	}
	if d.smallInt() != foldersVersion || d.str() != key {
		return nil, false
	}
	n := d.count(8)
	dirs := make(map[string]dirListing, n)
	for range n {
		dir := d.str()
		l := dirListing{stamp: d.stamp()}
		l.entries = make([]dirEntry, d.count(2))
		for i := range l.entries {
			l.entries[i].name = d.str()
			if l.entries[i].kind = d.byte(); l.entries[i].kind != entryDir && l.entries[i].kind != entryLink {
				d.err = errIndexCorrupt
			}
		}
		if d.err != nil {
			return nil, false
		}
		dirs[dir] = l
	}
	return dirs, d.done()
}
