package events

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/ctxtools/ctx/guard"
	"github.com/ctxtools/ctx/loader"
)

// GuardFor builds the guard as it judges commands that run in cwd: the built-in rules
// bound to the home folder and, inside a workspace, to the workspace and its layout,
// plus the workspace's guard: section. The rules are always usable: a guard: section
// that cannot be read is left out and a bad entry is dropped, and err says so, one
// line per problem, naming the file.
func GuardFor(ws *loader.Workspace, at GuardAt) (*guard.Rules, error) {
	env := guard.Env{Home: at.Home, Cwd: at.Cwd, Dirty: at.Dirty, Unique: at.Unique}
	cwd := at.Cwd
	if env.Home == "" {
		env.Home, _ = os.UserHomeDir()
	}
	var cfg guard.Config
	var errs []error
	if ws != nil {
		env.Workspace = ws.Root
		env.Cwd = cmp.Or(cwd, ws.Root)
		env.ProjectsDir = ws.Config.ProjectsDir
		env.PlanningDir = ws.Config.PlanningDir
		env.ResumeFile = ws.Config.ResumeFile
		// A config ctx cannot read never lowers protection: the built-in rules apply.
		if err := ws.ConfigSection("guard", &cfg); err != nil {
			cfg = guard.Config{}
			errs = append(errs, err)
		}
	}
	cfg.Presets = append(cfg.Presets, at.Presets...)
	rules, err := guard.New(cfg, env)
	errs = append(errs, PrefixEach(ConfigName(ws), err)...)
	return rules, errors.Join(errs...)
}

// GuardAt is where and how the guard judges: the home folder, the folder the command
// runs in, what git says of a repository (Dirty: uncommitted changes; Unique: a
// branch's commits nothing else holds; nil asks Dirty), and presets switched on beyond
// the workspace's own (ctx guard check --preset).
type GuardAt struct {
	Home, Cwd string
	Dirty     func(dir string) bool
	Unique    func(dir, branch string) bool
	Presets   []string
}

// ApproveConfig is the workspace's auto_approve: section.
func ApproveConfig(ws *loader.Workspace) (guard.ApproveConfig, error) {
	var cfg guard.ApproveConfig
	if err := ws.ConfigSection("auto_approve", &cfg); err != nil {
		return guard.ApproveConfig{}, err
	}
	return cfg, nil
}

// EnvAutoApprove turns auto-approve on ("1") or off ("0") for the session whose
// Claude Code carries it, over the workspace's auto_approve.enabled; `ctx agents start
// --auto-approve` sets it.
const EnvAutoApprove = "CTX_AUTO_APPROVE"

// AutoApproveOn reports whether auto-approve answers for this session: the variable,
// when it says yes or no, else the workspace's config.
func AutoApproveOn(env string, enabled bool) bool {
	switch strings.ToLower(strings.TrimSpace(env)) {
	case "1", "true", "yes", "on":
		return true
	case "0", "false", "no", "off":
		return false
	}
	return enabled
}

// ConfigName is the workspace's config file as messages name it.
func ConfigName(ws *loader.Workspace) string {
	if ws == nil {
		return loader.StateDir + "/config.yaml"
	}
	return ws.Rel(ws.StatePath("config.yaml"))
}

// PrefixEach splits err (possibly joined) into its parts, each prefixed with file.
func PrefixEach(file string, err error) []error {
	if err == nil {
		return nil
	}
	parts := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		parts = j.Unwrap()
	}
	out := make([]error, 0, len(parts))
	for _, p := range parts {
		out = append(out, fmt.Errorf("%s: %w", file, p))
	}
	return out
}
