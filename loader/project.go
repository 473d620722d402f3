package loader

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"unicode/utf8"

	"github.com/ctxtools/ctx/markdown"
)

// Size limits for the files ctx parses. Larger files are listed as problems instead of
// being read, so one runaway file cannot make a load slow or large.
const (
	maxOverviewBytes = 1 << 20
	maxStepsBytes    = 8 << 20
	maxResumeBytes   = 4 << 20
)

// Project is one project folder with what ctx read of it.
type Project struct {
	ID          string            `json:"id"`
	Number      int               `json:"number"`
	Name        string            `json:"name"`
	Status      string            `json:"status"`
	Description string            `json:"description,omitempty"`
	Path        string            `json:"path"`
	Progress    markdown.Progress `json:"progress"`
	Problems    []string          `json:"problems"`

	// Dir is the absolute folder; Slug is the id without its number.
	Dir  string `json:"-"`
	Slug string `json:"-"`
	// Absolute paths of the planning files found ("" when missing).
	Overview string `json:"-"`
	Plan     string `json:"-"`
	Steps    string `json:"-"`
	// Pending holds the first PendingKept open tasks of the steps file, in order, filled
	// when progress was read.
	Pending []markdown.Task `json:"-"`
	// StepsProblem says why the steps file could not be read (unreadable, over the size
	// limit, not UTF-8): Progress is then unknown, not zero.
	StepsProblem string `json:"-"`
}

// Folder is a project folder found by listing, before any of its files are read.
type Folder struct {
	ID     string
	Number int
	Slug   string
	Dir    string
	Rel    string
	// Onboarding marks a project below the 00-onboarding folder.
	Onboarding bool
	// Err is set when the folder cannot be used (a broken link, a symlink loop, a file
	// where a folder should be); the project is still listed with this problem.
	Err error
}

// splitFolderName splits a project folder's name, NN-slug, into its digits and slug;
// ok is false for any other name.
func splitFolderName(name string) (digits, slug string, ok bool) {
	i := 0
	for i < len(name) && name[i] >= '0' && name[i] <= '9' {
		i++
	}
	if i == 0 || i+1 >= len(name) || name[i] != '-' {
		return "", "", false
	}
	return name[:i], name[i+1:], true
}

// BuildsDir is the newer layout's folder of projects, by state: 02-builds/active/NN-slug
// and 02-builds/complete/NN-slug (and NN-slug directly below it). It is found without
// configuration and listed together with the projects folder.
const BuildsDir = "02-builds"

// buildStates are the folders of BuildsDir that hold projects.
var buildStates = []string{"active", "complete"}

// Folders lists the project folders: NN-slug below the projects folder and below its
// 00-onboarding folder, and below 02-builds/active and 02-builds/complete, sorted by
// number then path.
func (ws *Workspace) Folders() ([]Folder, error) { return ws.folders(nil) }

// folders lists the project folders whose number keep accepts (all for nil). The
// onboarding folder is always looked into. A filtered listing makes a record only for
// the folders it keeps and follows no other's link: resolving a number among thousands
// of projects costs one read of the projects folder.
func (ws *Workspace) folders(keep func(number int) bool) ([]Folder, error) {
	cache := ws.openFolderCache()
	defer cache.save()
	base := ws.ProjectsPath()
	top, err := listFolders(base, ws, cache, func(name string, n int) bool { return keep == nil || keep(n) || name == OnboardingDir })
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%s: %w", ws.Config.ProjectsDir, err)
	}
	var out []Folder
	for _, f := range top {
		if f.ID == OnboardingDir && f.Err == nil {
			nested, err := listFolders(f.Dir, ws, cache, numbered(keep))
			if err != nil {
				f.Err = err
				out = append(out, f)
				continue
			}
			for i := range nested {
				nested[i].Onboarding = true
			}
			out = append(out, nested...)
			continue
		}
		if keep == nil || keep(f.Number) {
			out = append(out, f)
		}
	}
	out = append(out, ws.buildFolders(cache, keep)...)
	slices.SortFunc(out, func(a, b Folder) int {
		if a.Number != b.Number {
			return cmp.Compare(a.Number, b.Number)
		}
		return strings.Compare(a.Rel, b.Rel)
	})
	return out, nil
}

// buildFolders lists the projects of the 02-builds layout, when the workspace has it
// and it is not the configured projects folder itself.
func (ws *Workspace) buildFolders(cache *folderCache, keep func(number int) bool) []Folder {
	builds := filepath.Join(ws.Root, BuildsDir)
	if filepath.Clean(ws.Config.ProjectsDir) == BuildsDir || !isDir(builds) {
		return nil
	}
	out, _ := listFolders(builds, ws, cache, numbered(keep))
	for _, state := range buildStates {
		nested, err := listFolders(filepath.Join(builds, state), ws, cache, numbered(keep))
		if err == nil {
			out = append(out, nested...)
		}
	}
	return out
}

// numbered adapts a filter on numbers to listFolders' filter on names.
func numbered(keep func(number int) bool) func(string, int) bool {
	return func(_ string, n int) bool { return keep == nil || keep(n) }
}

// listFolders makes a Folder of every entry of dir named like a project (NN-slug) whose
// name and number keep accepts, unsorted: Folders sorts once, for every folder listed.
func listFolders(dir string, ws *Workspace, cache *folderCache, keep func(name string, number int) bool) ([]Folder, error) {
	entries, err := cache.entries(dir)
	if err != nil {
		return nil, err
	}
	relDir := ws.Rel(dir) + "/"
	if relDir == "./" {
		relDir = ""
	}
	var out []Folder
	for _, e := range entries {
		name := e.name
		digits, slug, ok := splitFolderName(name)
		if !ok {
			continue
		}
		n, err := strconv.Atoi(digits)
		if err != nil || !keep(name, n) {
			continue // a number too long for an int is no project number
		}
		f := Folder{ID: name, Number: n, Slug: slug, Dir: filepath.Join(dir, name)}
		f.Rel = relDir + name
		if !utf8.ValidString(name) {
			// Shown escaped, never with replacement characters that name no file.
			f.ID, f.Slug, f.Rel = EscapeName(f.ID), EscapeName(f.Slug), EscapeName(f.Rel)
			f.Err = fmt.Errorf("%s: the folder name is not UTF-8; not read (rename it)", f.Rel)
		}
		if e.kind == entryLink { // files named like a project are not listed at all
			fi, err := os.Stat(f.Dir)
			if msg := ws.outsideLink(f.Dir); msg != "" {
				f.Err = errors.New(msg)
			} else if err != nil {
				f.Err = fmt.Errorf("%s: %w", f.Rel, unwrapPathError(err))
			} else if !fi.IsDir() {
				continue
			}
		}
		out = append(out, f)
	}
	return out, nil
}

// EscapeName writes a file name that is not UTF-8 with Go escapes (\xe9) for the bytes
// that are not, so that it can be shown, and told apart, without losing bytes.
func EscapeName(name string) string {
	if utf8.ValidString(name) {
		return name
	}
	q := strconv.Quote(name)
	return q[1 : len(q)-1]
}

// ReadOptions choose how much of a project is read.
type ReadOptions struct {
	Progress bool // read and count the steps file
}

// ReadProject reads a project folder: metadata from the overview frontmatter and, when
// asked, progress from the steps file. Every problem is recorded, never returned: a
// project with problems is still a project.
func (ws *Workspace) ReadProject(f Folder, opts ReadOptions) *Project {
	p := &Project{ID: f.ID, Number: f.Number, Slug: f.Slug, Dir: f.Dir, Path: f.Rel, Problems: []string{}}
	if f.Err != nil {
		p.Problems = append(p.Problems, f.Err.Error())
		p.Name = humanName(f.Slug)
		return p
	}
	if msg := ws.outsideLink(filepath.Join(f.Dir, ws.Config.PlanningDir)); msg != "" {
		p.addProblem(msg)
		p.Name = humanName(f.Slug)
		return p
	}
	planning, err := readPlanning(filepath.Join(f.Dir, ws.Config.PlanningDir))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		p.problem(ws.Rel(planning.dir), unwrapPathError(err))
	}
	p.Overview = ws.findPlanningFile(p, planning, "overview.md", "01-overview.md")
	p.Plan = ws.findPlanningFile(p, planning, "plan.md", "03-plan.md")
	p.Steps = ws.findPlanningFile(p, planning, "steps.md", "04-steps.md")
	ws.readOverview(p)
	if p.Name == "" {
		p.Name = humanName(f.Slug)
	}
	if opts.Progress && p.Steps != "" {
		r, err := ws.readSteps(p.Steps, stampOf(p.Steps), func() ([]byte, error) {
			data, err := readRegular(p.Steps, maxStepsBytes)
			if err == nil && !utf8.Valid(data) {
				err = errors.New("not UTF-8 text; not read")
			}
			return data, err
		})
		if err != nil {
			p.problem(ws.Rel(p.Steps), err)
			p.StepsProblem = markdown.Locate(ws.Rel(p.Steps), err)
		} else {
			p.Progress, p.Pending = r.Progress, r.Pending
		}
	}
	return p
}

// problem records a problem once, however many readers meet it.
func (p *Project) problem(where string, err error) {
	p.addProblem(markdown.Locate(where, err))
}

func (p *Project) addProblem(msg string) {
	for _, have := range p.Problems {
		if have == msg {
			return
		}
	}
	p.Problems = append(p.Problems, msg)
}

// planningFiles lists the regular files of a planning folder, and the names that are
// something else (a folder, a pipe) so they can be reported. One directory read is far
// cheaper than a stat for every name a file may have.
type planningFiles struct {
	dir   string
	files map[string]bool
	other map[string]error
}

func readPlanning(dir string) (planningFiles, error) {
	pf := planningFiles{dir: dir, files: map[string]bool{}, other: map[string]error{}}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return pf, err
	}
	for _, e := range entries {
		mode := e.Type()
		if mode&os.ModeSymlink != 0 {
			if why := outsideReason(filepath.Join(dir, e.Name())); why != "" {
				pf.other[e.Name()] = errors.New(why)
				continue
			}
			fi, err := os.Stat(filepath.Join(dir, e.Name()))
			if err != nil {
				pf.other[e.Name()] = unwrapPathError(err)
				continue
			}
			mode = fi.Mode().Type()
		}
		if mode.IsRegular() {
			pf.files[e.Name()] = true
		} else {
			pf.other[e.Name()] = errNotRegularMode(mode)
		}
	}
	return pf, nil
}

// findPlanningFile returns the first of names that is a file of the planning folder.
// A name that exists but is not a regular file is recorded as a problem.
func (ws *Workspace) findPlanningFile(p *Project, pf planningFiles, names ...string) string {
	for _, name := range names {
		path := filepath.Join(pf.dir, name)
		if pf.files[name] {
			return path
		}
		if err, ok := pf.other[name]; ok {
			p.problem(ws.Rel(path), err)
		}
	}
	return ""
}

func (ws *Workspace) readOverview(p *Project) {
	if p.Overview == "" {
		return
	}
	data, err := readRegular(p.Overview, maxOverviewBytes)
	if err != nil {
		p.problem(ws.Rel(p.Overview), err)
		return
	}
	fm, err := markdown.ReadFrontmatter(data)
	if err != nil {
		p.Problems = append(p.Problems, markdown.Locate(ws.Rel(p.Overview), err))
		return
	}
	if !fm.Present {
		p.problem(ws.Rel(p.Overview), errors.New("no frontmatter (name, status) at the top"))
		return
	}
	p.Name = strings.TrimSpace(fm.String("name"))
	p.Status = strings.TrimSpace(fm.String("status"))
	p.Description = strings.TrimSpace(fm.String("description"))
}

// Scan reads every project, in parallel, in the order of Folders. With progress, the
// projects come from the index where it is fresh (index.go), without their task lists.
func (ws *Workspace) Scan(opts ReadOptions) ([]*Project, error) {
	folders, err := ws.Folders()
	if err != nil {
		return nil, err
	}
	if opts.Progress {
		return ws.scanIndexed(folders, opts), nil
	}
	out := make([]*Project, len(folders))
	parallel(len(folders), func(i int) {
		out[i] = ws.ReadProject(folders[i], opts)
	})
	return out, nil
}

// parallel runs fn(0..n-1) on a few workers; the work is file reads, so a little more
// than one worker a core keeps the disk busy.
func parallel(n int, fn func(i int)) {
	workers := min(runtime.GOMAXPROCS(0)*2, n)
	var wg sync.WaitGroup
	next := make(chan int)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				fn(i)
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
}

// readRegular reads a regular file of at most limit bytes. Anything else (a folder, a
// pipe that would block, a device) or a larger file is an error, so reading never hangs
// and never balloons.
func readRegular(path string, limit int64) ([]byte, error) {
	// O_NONBLOCK: opening a pipe for reading would otherwise wait for a writer.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, unwrapPathError(err)
	}
	defer func() { _ = f.Close() }()
	fi, err := f.Stat()
	if err != nil {
		return nil, unwrapPathError(err)
	}
	if !fi.Mode().IsRegular() {
		return nil, errNotRegular(fi)
	}
	if fi.Size() > limit {
		return nil, fmt.Errorf("%s is over the %s limit; not read", byteSize(fi.Size()), byteSize(limit))
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, unwrapPathError(err)
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("over the %s limit; not read", byteSize(limit))
	}
	return data, nil
}

func errNotRegular(fi os.FileInfo) error { return errNotRegularMode(fi.Mode().Type()) }

func errNotRegularMode(mode os.FileMode) error {
	if mode.IsDir() {
		return errors.New("is a folder, expected a file")
	}
	return fmt.Errorf("is not a regular file (%s)", mode.Type())
}

// unwrapPathError drops the path from an *os.PathError: ctx names the file itself,
// relative to the workspace.
func unwrapPathError(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

func byteSize(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// humanName turns a slug into a readable name: "checkout-redesign" → "Checkout redesign".
func humanName(slug string) string {
	s := strings.ReplaceAll(slug, "-", " ")
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
