package loader

import (
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ctxtools/ctx/internal/durable"
	"github.com/ctxtools/ctx/markdown"
)

// The steps cache spares a parse of a large steps file that has not changed. Goldmark
// reads about 4 µs per task: a 5,000-task steps file is 20 ms of every load, save and
// autosave of its project. For a steps file of stepsCacheMin bytes or more, what
// reading it gives (the progress and the first PendingKept open tasks) is kept in
// .ctx/state/steps/<hash of its path>.bin with the file's stamp, and used while the
// stamp is the same. Smaller files are parsed: that is quicker than any cache. Like the
// project index, the cache is machine-local, never trusted blindly (a stamp compared for
// equality, a file changed within racyWindow not cached, a cache that does not decode,
// or was made for another path, ignored) and a failure to write it is no error.

// PendingKept is how many open tasks reading a project's progress keeps, in order.
const PendingKept = 5

// stepsCacheMin is the size from which a steps file's reading is cached: about 250
// tasks, 1 ms of parsing, against about 50 µs to read a cache entry.
const stepsCacheMin = 8 << 10

const (
	stepsDir     = "steps"
	stepsMagic   = "ctx steps\n"
	stepsVersion = 2
)

// stepsReading is what a steps file gave: its progress and first open tasks.
type stepsReading struct {
	Progress markdown.Progress
	Pending  []markdown.Task
}

// readSteps gives what the steps file at path says, from the cache when its stamp is
// the cached one, else from read.
func (ws *Workspace) readSteps(path string, stamp fileStamp, read func() ([]byte, error)) (stepsReading, error) {
	cache := ""
	if stamp.Size >= stepsCacheMin && !stamp.Missing {
		cache = ws.stepsCachePath(path)
	}
	if cache != "" {
		if r, ok := loadStepsCache(cache, path, stamp); ok {
			return r, nil
		}
	}
	data, err := read()
	if err != nil {
		return stepsReading{}, err
	}
	tasks := markdown.Tasks(data)
	r := stepsReading{Progress: markdown.ProgressOf(tasks), Pending: markdown.Pending(tasks, PendingKept)}
	if cache != "" && stamp.ModTime <= time.Now().Add(-racyWindow).UnixNano() {
		ws.saveStepsCache(cache, path, stamp, r)
	}
	return r, nil
}

// stepsCachePath names the cache entry of a steps file by a hash of its path; the path
// itself is inside, so two paths with one hash never share an entry.
func (ws *Workspace) stepsCachePath(path string) string {
	h := fnv.New64a()
	_, _ = h.Write([]byte(path))
	dir := ws.CacheDir()
	if dir == "" {
		return ""
	}
	return filepath.Join(dir, stepsDir, fmt.Sprintf("%016x.bin", h.Sum64()))
}

func loadStepsCache(cache, path string, stamp fileStamp) (stepsReading, bool) {
	data, err := os.ReadFile(cache)
	if err != nil {
		return stepsReading{}, false
	}
	d, ok := newDecoder(data, stepsMagic)
	if !ok {
		return stepsReading{}, false
	}
	if d.smallInt() != stepsVersion || d.str() != path || d.stamp() != stamp {
		return stepsReading{}, false
	}
	r := stepsReading{Progress: d.progress()}
	r.Pending = make([]markdown.Task, d.count(6))
	for i := range r.Pending {
		t := &r.Pending[i]
		t.Number, t.Line, t.Text, t.Done = d.smallInt(), d.smallInt(), d.str(), d.bool()
		t.Section = markdown.Heading{Number: d.smallInt(), Name: d.str()}
	}
	if !d.done() {
		return stepsReading{}, false
	}
	return r, true
}

func (ws *Workspace) saveStepsCache(cache, path string, stamp fileStamp, r stepsReading) {
	var e indexEncoder
	e.buf = append(e.buf, stepsMagic...)
	e.int(stepsVersion)
	e.str(path)
	e.stamp(stamp)
	e.progress(r.Progress)
	e.uint(uint64(len(r.Pending)))
	for _, t := range r.Pending {
		e.int(int64(t.Number))
		e.int(int64(t.Line))
		e.str(t.Text)
		e.bool(t.Done)
		e.int(int64(t.Section.Number))
		e.str(t.Section.Name)
	}
	dir := filepath.Dir(cache)
	if ws.ensureCacheDir(filepath.Dir(dir)) != nil || durable.MkdirAll(dir, 0o755) != nil {
		return
	}
	_ = durable.ReplaceFile(cache, e.finish(), 0o644)
}

// pruneStepsCache removes the cache entries of steps files none of projects has (a
// project renamed, renumbered or deleted), after a full listing that read projects: the
// folder never grows past the steps files there are.
func (ws *Workspace) pruneStepsCache(projects []*Project) {
	cacheDir := ws.CacheDir()
	if cacheDir == "" {
		return
	}
	dir := filepath.Join(cacheDir, stepsDir)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	keep := make(map[string]bool, len(projects))
	for _, p := range projects {
		if p != nil && p.Steps != "" {
			keep[filepath.Base(ws.stepsCachePath(p.Steps))] = true
		}
	}
	for _, e := range entries {
		if name := e.Name(); strings.HasSuffix(name, ".bin") && !keep[name] && e.Type().IsRegular() {
			_ = os.Remove(filepath.Join(dir, name))
		}
	}
}
