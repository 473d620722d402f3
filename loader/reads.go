package loader

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"unicode/utf8"
)

// Read is one recommended read of the load, in the order the agent should read them.
type Read struct {
	Path   string `json:"path"` // relative to the workspace
	Why    string `json:"why"`
	Exists bool   `json:"exists"`
	Bytes  int64  `json:"bytes"`
	Tokens int    `json:"tokens"`
	// Curated marks a read the save point lists (files_to_load, research, its own
	// Loading Sequence lines): it comes before what ctx picks itself, and a --budget
	// cut drops ctx's picks first.
	Curated bool `json:"curated"`
	// Directory marks a listed folder: it exists, and its files are the agent's to choose.
	Directory bool `json:"directory,omitempty"`
}

// EstimateTokens is ctx's token estimate for n bytes of text: about four bytes a token.
func EstimateTokens(n int64) int {
	return int((n + 3) / 4)
}

// maxWorkingFiles bounds the work-in-progress files recommended from 03-working.
const maxWorkingFiles = 3

// WorkingDir is the project folder of work in progress.
const WorkingDir = "03-working"

// readList collects recommended reads without duplicates.
type readList struct {
	ws    *Workspace
	p     *Project
	reads []Read
	seen  map[string]bool
}

func (l *readList) addAbs(abs, why string) {
	l.add(abs, why, false)
}

func (l *readList) add(abs, why string, curated bool) {
	rel := l.ws.Rel(abs)
	if !utf8.ValidString(rel) {
		l.p.addProblem(EscapeName(rel) + ": the name is not UTF-8; not listed (rename it)")
		return
	}
	if l.seen[rel] {
		return
	}
	l.seen[rel] = true
	r := Read{Path: rel, Why: why, Curated: curated}
	if fi, err := os.Stat(abs); err == nil && fi.Mode().IsRegular() {
		r.Exists, r.Bytes, r.Tokens = true, fi.Size(), EstimateTokens(fi.Size())
	} else if err == nil && fi.IsDir() {
		r.Exists, r.Directory = true, true
	}
	l.reads = append(l.reads, r)
}

// addListed adds a path named by the save point, resolved against the project folder
// and then the workspace root, refusing anything that leads outside the workspace. A
// listed file that no longer exists is a problem, reported once, and not a read.
func (l *readList) addListed(entry, why, source, list string, curated bool) {
	abs, err := l.ws.ResolveListed(l.p, entry)
	if err != nil {
		l.p.addProblem(fmt.Sprintf("%s: %s entry %q is %v; not read", source, list, entry, err))
		return
	}
	rel := l.ws.Rel(abs)
	if l.seen[rel] {
		return
	}
	if _, err := os.Stat(abs); err != nil {
		l.seen[rel] = true
		l.p.addProblem(fmt.Sprintf("%s: %s entry %q: %v; not read", source, list, entry, unwrapPathError(err)))
		return
	}
	l.add(abs, why, curated)
}

// ErrOutside is the reason a listed path is refused.
var ErrOutside = errors.New("outside the workspace")

// ResolveListed turns a path named in a project's files into an absolute path inside
// the workspace: tried against the project folder, then the workspace root. A path that
// leads outside (through "..", an absolute path elsewhere or a symlink) is ErrOutside.
func (ws *Workspace) ResolveListed(p *Project, entry string) (string, error) {
	entry = filepath.FromSlash(strings.TrimSpace(entry))
	if entry == "" || strings.ContainsRune(entry, 0) {
		return "", errors.New("not a usable path")
	}
	var candidates []string
	if filepath.IsAbs(entry) {
		candidates = []string{filepath.Clean(entry)}
	} else {
		candidates = []string{filepath.Join(p.Dir, entry), filepath.Join(ws.Root, entry)}
	}
	chosen := ""
	for _, c := range candidates {
		if _, err := os.Lstat(c); err == nil {
			chosen = c
			break
		}
	}
	if chosen == "" {
		chosen = candidates[0]
	}
	if !ws.inside(p, chosen) {
		return "", ErrOutside
	}
	return chosen, nil
}

// inside reports whether path stays inside the workspace (or the project's own folder,
// which may be linked in from elsewhere), both as written and with links followed.
func (ws *Workspace) inside(p *Project, path string) bool {
	within := func(base, target string) bool {
		rel, err := filepath.Rel(base, target)
		return err == nil && filepath.IsLocal(rel)
	}
	if !within(ws.Root, path) && !within(p.Dir, path) {
		return false
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		// A missing file cannot lead anywhere; a loop or similar is refused.
		return errors.Is(err, fs.ErrNotExist)
	}
	root, err := filepath.EvalSymlinks(ws.Root)
	if err != nil {
		return false
	}
	if within(root, real) {
		return true
	}
	dir, err := filepath.EvalSymlinks(p.Dir)
	return err == nil && within(dir, real)
}

// workingFiles returns up to n regular files of the project's 03-working folder (and
// its direct subfolders), newest first.
func workingFiles(dir string, n int) []string {
	type file struct {
		path string
		mod  int64
	}
	var files []file
	seen := 0
	_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		seen++
		if seen > 2000 {
			return filepath.SkipAll
		}
		rel, _ := filepath.Rel(dir, path)
		if strings.HasPrefix(d.Name(), ".") && path != dir {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			if strings.Count(rel, string(filepath.Separator)) >= 1 {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		if info, err := d.Info(); err == nil {
			files = append(files, file{path, info.ModTime().UnixNano()})
		}
		return nil
	})
	sort.SliceStable(files, func(i, j int) bool { return files[i].mod > files[j].mod })
	out := make([]string, 0, n)
	for _, f := range files[:min(n, len(files))] {
		out = append(out, f.path)
	}
	return out
}
