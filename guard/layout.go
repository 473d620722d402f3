package guard

import (
	"path"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// layout is what the guard knows of a workspace beyond its root: the projects folders,
// the planning folders, and the files that hold a project's save point and plan. Losing
// any of them loses the save points ctx exists to keep, so they are protected like the
// workspace itself.
type layout struct {
	projects   [][]string // projects folders, as path elements below the workspace root
	containers []string   // folders of projects inside a projects folder
	planning   []string   // base names of planning folders
	resume     []string   // base names of save points, wherever they are
	planFiles  []string   // base names of plan files, inside a planning folder
}

// Kinds of projectsTarget.
const (
	kindProjects = "projects"
	kindProject  = "project"
	kindPlanning = "planning"
)

// projectFolder is loader's test for a project folder's name: NN-slug.
var projectFolder = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\d+-.`) })

func newLayout(env Env) layout {
	l := layout{
		projects:   [][]string{{"02-projects"}, {"02-builds"}},
		containers: []string{"00-onboarding", "active", "complete"},
		planning:   []string{"01-planning"},
		resume:     []string{"_resume.md", "resume-context.md"},
		planFiles:  []string{"overview.md", "01-overview.md", "plan.md", "03-plan.md", "steps.md", "04-steps.md"},
	}
	if e := splitPath(path.Clean(env.ProjectsDir)); len(e) > 0 && !slices.Contains(e, "..") {
		l.projects = append(l.projects, e)
	}
	if e := splitPath(path.Clean(env.PlanningDir)); len(e) > 0 && !slices.Contains(e, "..") {
		l.planning = append(l.planning, e[len(e)-1])
	}
	if b := path.Base(env.ResumeFile); env.ResumeFile != "" && b != "." && b != "/" {
		l.resume = append(l.resume, b)
	}
	return l
}

// projectsTarget reports whether deleting target would remove a projects folder (or a
// folder of projects inside it), a project folder, or a planning folder, itself or all
// its contents, with the path as the reason will name it. Inside a known workspace the
// path is placed exactly; where the folder is unknown (after cd "$X") the names the path
// spells decide, so that cd "$X" && rm -rf 02-projects is still refused. A path outside
// the workspace is never a project: a copy in /tmp is the user's to delete.
func (c *checker) projectsTarget(target string, sc *scope) (string, string) {
	p := holder(target)
	if p == "" {
		return "", ""
	}
	l := &c.rules.layout
	ws := c.rules.env.Workspace
	abs := sc.abs(p)
	if abs != "" && ws != "" {
		rel, ok := inside(ws, abs)
		if !ok {
			return "", ""
		}
		return abs, l.classify(splitPath(rel), true)
	}
	name := abs
	if name == "" {
		name = p
	}
	return name, l.classify(splitPath(name), false)
}

// classify names what the folder at elems is. Anchored, elems start at the workspace
// root; otherwise only their last three elements are read.
func (l *layout) classify(elems []string, anchored bool) string {
	if len(elems) > 0 && matchAny(elems[len(elems)-1], l.planning) {
		return kindPlanning
	}
	for _, pd := range l.projects {
		n := len(pd)
		for below := 0; below <= 2; below++ {
			start := len(elems) - n - below
			if start < 0 || anchored && start != 0 {
				continue
			}
			if !matchAll(elems[start:start+n], pd) {
				continue
			}
			rest := elems[start+n:]
			switch {
			case len(rest) == 0:
				return kindProjects
			case len(rest) == 1 && matchAny(rest[0], l.containers):
				return kindProjects
			case len(rest) == 1 && projectLike(rest[0]):
				return kindProject
			case len(rest) == 2 && matchAny(rest[0], l.containers) && projectLike(rest[1]):
				return kindProject
			}
		}
	}
	return ""
}

// projectsWhat describes a projectsTarget for a reason.
func projectsWhat(p, kind string) string {
	switch kind {
	case kindProjects:
		return p + " holds the workspace's projects"
	case kindProject:
		return p + " is a project folder"
	default:
		return p + " holds a project's plan, steps and save point"
	}
}

// savePoint reports whether target is a file whose loss in place cannot be undone by
// ctx or git: a save point, a plan file in a planning folder, the workspace's
// .ctx/config.yaml, a .env file of secrets, or a file in ~/.ssh. It returns the path and
// what the file is, for the reason.
func (c *checker) savePoint(target string, sc *scope) (string, string) {
	if target == "" {
		return "", ""
	}
	l := &c.rules.layout
	abs := sc.abs(target)
	name := abs
	if name == "" {
		name = path.Clean(target)
	}
	base := path.Base(name)
	parent := path.Base(path.Dir(name))
	home := c.rules.env.Home
	switch {
	case slices.Contains(l.resume, base):
		return name, "a ctx save point"
	case slices.Contains(l.planFiles, base) && (matchAny(parent, l.planning) || abs == "" && parent == "."):
		return name, "a project's plan file"
	case name == ".ctx/config.yaml" || strings.HasSuffix(name, "/.ctx/config.yaml"):
		return name, "the workspace's ctx settings"
	case secretsFile(base):
		return name, "a file of secrets"
	case home != "" && strings.HasPrefix(abs, home+"/.ssh/"):
		return name, "an SSH key or setting"
	}
	return "", ""
}

// secretsFile reports whether base is a .env file, such as .env or .env.local, rather
// than a template of one, such as .env.example.
func secretsFile(base string) bool {
	if base == ".env" {
		return true
	}
	suffix, ok := strings.CutPrefix(base, ".env.")
	if !ok {
		return false
	}
	switch suffix {
	case "example", "sample", "template", "dist", "defaults", "schema":
		return false
	}
	return true
}

// generatedPatterns are the name patterns of files that builds, interpreters and tools
// make and remake: deleting them loses nothing that cannot be regenerated. A find that
// deletes only files matching one of them (by -name, -iname or the last element of
// -path) is allowed anywhere, as is truncating such a file.
var generatedPatterns = []string{
	"*.pyc", "*.pyo", "*.py[co]", "__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache",
	"*.o", "*.obj", "*.class", "*.gcda", "*.gcno",
	"*.tmp", "*.temp", "*.log", "nohup.out", "*.swp", "*.swo", "*~", "*.orig", "*.rej",
	".DS_Store", "._*", "Thumbs.db", "node_modules", "*.egg-info", ".coverage",
}

// generatedFile reports whether the file name base matches a generated pattern.
func generatedFile(base string) bool {
	for _, g := range generatedPatterns {
		if ok, _ := path.Match(g, base); ok {
			return true
		}
	}
	return false
}

// projectLike reports whether elem names, or as a glob may name, a project folder.
func projectLike(elem string) bool {
	if hasMeta(elem) {
		return elem[0] >= '0' && elem[0] <= '9' || strings.ContainsRune("*?[", rune(elem[0]))
	}
	return projectFolder().MatchString(elem)
}

func matchAll(elems, names []string) bool {
	for i, n := range names {
		if !elemMatch(elems[i], n) {
			return false
		}
	}
	return true
}

func matchAny(elem string, names []string) bool {
	for _, n := range names {
		if elemMatch(elem, n) {
			return true
		}
	}
	return false
}

// elemMatch reports whether a path element, which may be a glob, names name.
func elemMatch(elem, name string) bool {
	if !hasMeta(elem) {
		return elem == name
	}
	ok, _ := path.Match(elem, name)
	return ok
}

func hasMeta(s string) bool { return strings.ContainsAny(s, "*?[") }

// inside reports whether abs is ws or below it, and its path relative to ws.
func inside(ws, abs string) (string, bool) {
	switch {
	case abs == ws:
		return "", true
	case ws == "/":
		return strings.TrimPrefix(abs, "/"), true
	case strings.HasPrefix(abs, ws+"/"):
		return abs[len(ws)+1:], true
	}
	return "", false
}

// splitPath is the elements of a clean path, without empty and "." ones.
func splitPath(p string) []string {
	var out []string
	for _, e := range strings.Split(p, "/") {
		if e != "" && e != "." {
			out = append(out, e)
		}
	}
	return out
}
