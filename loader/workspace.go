// Package loader finds the workspace, scans and resolves its projects, counts their
// progress and assembles the load result that tells an agent where work stopped.
package loader

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/ctxtools/ctx/internal/durable"
	"github.com/ctxtools/ctx/markdown"
	"go.yaml.in/yaml/v3"
)

// Default layout names, used when .ctx/config.yaml does not say otherwise.
const (
	DefaultProjectsDir = "02-projects"
	DefaultPlanningDir = "01-planning"
	DefaultResumeFile  = "_resume.md"
	// StateDir is where ctx keeps machine-local state inside the workspace.
	StateDir = ".ctx"
	// OnboardingDir is the folder of projects nested one level below the projects folder.
	OnboardingDir = "00-onboarding"
)

// Config holds the optional settings of .ctx/config.yaml. Later parts of ctx read their
// own keys from the same file; unknown keys are ignored here.
type Config struct {
	ProjectsDir string `yaml:"projects_dir"`
	PlanningDir string `yaml:"planning_dir"`
	ResumeFile  string `yaml:"resume_file"`
}

// Workspace is a discovered workspace root with its settings.
type Workspace struct {
	Root   string
	Config Config
	// sections holds config.yaml's top-level values, for the parts of ctx that read
	// their own keys (usage:, guard:).
	sections map[string]yaml.Node
	// AllowOutside are the folders outside the workspace that links in it may lead to
	// (links.allow_outside); every other link leading out is neither read nor written.
	AllowOutside []string
	// cache remembers where the listing's caches go (cachedir.go); nil in a Workspace
	// made by hand, which works it out at each call.
	cache *cacheLocation
}

// LinksConfig is the links: section of .ctx/config.yaml.
type LinksConfig struct {
	// AllowOutside lists folders outside the workspace (absolute, or relative to it)
	// that links inside it may lead to: projects kept on another disk.
	AllowOutside []string `yaml:"allow_outside"`
}

// ErrNoWorkspace is returned when no workspace can be found.
var ErrNoWorkspace = errors.New("no workspace")

// DiscoverOptions are the inputs of workspace discovery, taken from flags and environment
// by the caller so that discovery itself stays testable.
type DiscoverOptions struct {
	Flag          string // --workspace
	CtxWorkspace  string // $CTX_WORKSPACE
	ClaudeProject string // $CLAUDE_PROJECT_DIR
	Cwd           string
}

// Discover finds the workspace root: the flag, then $CTX_WORKSPACE, then
// $CLAUDE_PROJECT_DIR, then the first folder at or above Cwd holding .ctx/ or 02-projects/.
// A workspace whose config cannot be used comes with a *ConfigError (see Open).
func Discover(opts DiscoverOptions) (*Workspace, error) {
	for _, c := range []struct{ value, source string }{
		{opts.Flag, "--workspace"},
		{opts.CtxWorkspace, "$CTX_WORKSPACE"},
		{opts.ClaudeProject, "$CLAUDE_PROJECT_DIR"},
	} {
		if c.value == "" {
			continue
		}
		root, err := filepath.Abs(c.value)
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", c.source, c.value, err)
		}
		if !isDir(root) {
			return nil, fmt.Errorf("%s %s: not a folder", c.source, c.value)
		}
		if c.source == "$CLAUDE_PROJECT_DIR" && !looksLikeWorkspace(root) {
			// Claude Code sets this for every project, ctx-managed or not; fall through
			// to the walk so a workspace above it is still found.
			continue
		}
		return Open(root)
	}
	dir, err := filepath.Abs(opts.Cwd)
	if err != nil {
		return nil, fmt.Errorf("current folder: %w", err)
	}
	for {
		if looksLikeWorkspace(dir) {
			return Open(dir)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return nil, fmt.Errorf("%w at or above %s: cd into one, or `ctx init` makes this folder one", ErrNoWorkspace, opts.Cwd)
		}
		dir = parent
	}
}

func looksLikeWorkspace(dir string) bool {
	return isDir(filepath.Join(dir, StateDir)) || isDir(filepath.Join(dir, DefaultProjectsDir)) || isDir(filepath.Join(dir, BuildsDir))
}

func isDir(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}

// Open reads the workspace at root and its optional .ctx/config.yaml. When the file
// exists but cannot be used, Open returns the workspace on the defaults and a
// *ConfigError.
func Open(root string) (*Workspace, error) {
	ws, err := open(root)
	// Whatever the config says, the workspace is confined from here on: no write
	// through a link leaves it (internal/durable), except into the allowed folders.
	durable.Confine(ws.Root, ws.AllowOutside...)
	return ws, err
}

func open(root string) (*Workspace, error) {
	ws := &Workspace{Root: root, cache: &cacheLocation{}, Config: Config{
		ProjectsDir: DefaultProjectsDir,
		PlanningDir: DefaultPlanningDir,
		ResumeFile:  DefaultResumeFile,
	}}
	path := filepath.Join(root, StateDir, "config.yaml")
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return ws, nil
	case err != nil:
		return ws, &ConfigError{Path: path, Err: fmt.Errorf("%s: %w", ws.Rel(path), err)}
	}
	var c Config
	if err := yaml.Unmarshal(data, &c); err != nil {
		return ws, &ConfigError{Path: path, Err: errors.New(markdown.Locate(ws.Rel(path), markdown.YAMLError(err, 0)))}
	}
	// A file of comments only decodes to nothing, which is fine.
	if err := yaml.Unmarshal(data, &ws.sections); err != nil {
		// The top level is not a mapping of keys (a list, a plain word): nothing in it
		// can be read.
		ws.sections = nil
		return ws, &ConfigError{Path: path, Err: errors.New(markdown.Locate(ws.Rel(path), markdown.YAMLError(err, 0)))}
	}
	layout := ws.Config
	for _, f := range []struct {
		value *string
		set   string
		key   string
	}{
		{&ws.Config.ProjectsDir, c.ProjectsDir, "projects_dir"},
		{&ws.Config.PlanningDir, c.PlanningDir, "planning_dir"},
		{&ws.Config.ResumeFile, c.ResumeFile, "resume_file"},
	} {
		if f.set == "" {
			continue
		}
		if !localName(f.set) {
			ws.Config = layout
			return ws, &ConfigError{Path: path, Err: fmt.Errorf("%s: %s: %q must be a path inside the workspace", ws.Rel(path), f.key, f.set)}
		}
		*f.value = f.set
	}
	var links LinksConfig
	if err := ws.ConfigSection("links", &links); err != nil {
		return ws, &ConfigError{Path: path, Err: err}
	}
	for _, dir := range links.AllowOutside {
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(root, dir)
		}
		ws.AllowOutside = append(ws.AllowOutside, filepath.Clean(dir))
	}
	return ws, nil
}

// LinkProblems names the workspace's own folders that a link leads outside it (the
// projects folder, .ctx and its sessions and state folders): ctx neither reads nor
// writes through them, and says so in ctx projects, ctx load and ctx doctor.
func (ws *Workspace) LinkProblems() []string {
	var out []string
	for _, dir := range []string{ws.ProjectsPath(), filepath.Join(ws.Root, BuildsDir), ws.StatePath(), ws.StatePath("sessions"), ws.StatePath("state")} {
		if msg := ws.outsideLink(dir); msg != "" {
			out = append(out, msg)
		}
	}
	return out
}

// outsideLink returns "REL: why" when a link takes path outside the workspace (and the
// folders it allows), else "".
func (ws *Workspace) outsideLink(path string) string {
	if why := outsideReason(path); why != "" {
		return ws.Rel(path) + ": " + why
	}
	return ""
}

// outsideReason says why path is not followed when a link takes it out of its
// workspace, else "".
func outsideReason(path string) string {
	var oe *durable.OutsideError
	if err := durable.CheckInside(path); errors.As(err, &oe) {
		return oe.Reason()
	}
	return ""
}

// ConfigError is a .ctx/config.yaml that exists but cannot be used: unreadable, not
// YAML, or holding a value of the wrong type. Open and Discover return it together with
// the workspace on ctx's defaults (its default layout, no config sections), so that
// what must keep working (the hooks, the guard with its built-in rules, doctor) can go
// on while saying what is wrong; a command a person runs stops on it. The message names
// the file and, where YAML knows it, the line.
type ConfigError struct {
	Path string // the absolute path of the file
	Err  error
}

func (e *ConfigError) Error() string { return e.Err.Error() }
func (e *ConfigError) Unwrap() error { return e.Err }

// localName reports whether a configured name stays inside its parent folder.
func localName(name string) bool {
	return filepath.IsLocal(name)
}

// ConfigSection decodes the top-level key of .ctx/config.yaml into v, leaving v as it
// is when the key is absent. An error names the file and line.
func (ws *Workspace) ConfigSection(key string, v any) error {
	node, ok := ws.sections[key]
	if !ok {
		return nil
	}
	if err := node.Decode(v); err != nil {
		// "file:LINE: key: problem", the line first as editors and the YAML errors of
		// the whole file have it.
		yerr := markdown.YAMLError(err, 0)
		var le *markdown.LineError
		if errors.As(yerr, &le) && le.Line > 0 {
			return fmt.Errorf("%s:%d: %s: %s: %s", ws.Rel(ws.StatePath("config.yaml")), le.Line, key, le.What, le.Msg)
		}
		return fmt.Errorf("%s: %s: %w", ws.Rel(ws.StatePath("config.yaml")), key, yerr)
	}
	return nil
}

// ProjectsPath is the absolute path of the projects folder.
func (ws *Workspace) ProjectsPath() string {
	return filepath.Join(ws.Root, ws.Config.ProjectsDir)
}

// StatePath is the absolute path of .ctx/ joined with elem.
func (ws *Workspace) StatePath(elem ...string) string {
	return filepath.Join(append([]string{ws.Root, StateDir}, elem...)...)
}

// Rel returns path relative to the workspace root with forward slashes, or path itself
// when it lies outside.
func (ws *Workspace) Rel(path string) string {
	rel, err := filepath.Rel(ws.Root, path)
	if err != nil || !filepath.IsLocal(rel) {
		return path
	}
	return filepath.ToSlash(rel)
}

// stateIgnore is the .gitignore ctx keeps in .ctx/state: the state is machine-local.
const stateIgnore = "# ctx: machine-local state, not for version control\n*\n"

// EnsureStateDir creates a workspace's .ctx/state folder (dir) with its .gitignore, so
// nothing ctx keeps there ever shows up as a person's change.
func EnsureStateDir(dir string) error {
	if err := durable.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	ignore := filepath.Join(dir, ".gitignore")
	if _, err := os.Lstat(ignore); !errors.Is(err, os.ErrNotExist) {
		return nil
	}
	_, err := durable.CreateExclusive(ignore, []byte(stateIgnore), 0o644)
	return err
}
