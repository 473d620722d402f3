package main

import (
	"cmp"
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/ctxtools/ctx/guard"
	"github.com/ctxtools/ctx/loader"
)

func newGuardCmd(app *App) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "guard",
		Short: "Test the command guard and list its rules",
		Long: `The guard is the PreToolUse hook that refuses destructive Bash commands an agent
is about to run (see docs/guard.md). These commands let a person ask it about a
command, and review the rules in force for this workspace: the built-in rule
classes and the guard: section of .ctx/config.yaml.`,
		Example: `  ctx guard check -- rm -rf 02-projects
  ctx guard rules`,
		Args: usageArgs(cobra.NoArgs),
	}
	cmd.AddCommand(newGuardCheckCmd(app, nil), newGuardRulesCmd(app, nil))
	return cmd
}

// guardFor builds the guard as it judges commands that run in cwd: the built-in rules
// bound to the home folder and, inside a workspace, to the workspace and its layout,
// plus the workspace's guard: section. The rules are always usable: a guard: section
// that cannot be read is left out and a bad entry is dropped, and err says so, one
// line per problem, naming the file. dirty answers whether a repository has
// uncommitted changes.
func guardFor(app *App, ws *loader.Workspace, cwd string, dirty func(string) bool) (*guard.Rules, error) {
	env := guard.Env{Home: app.Getenv("HOME"), Cwd: cwd, Dirty: dirty}
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
	rules, err := guard.New(cfg, env)
	errs = append(errs, prefixEach(configName(ws), err)...)
	return rules, errors.Join(errs...)
}

// configName is the workspace's config file as messages name it.
func configName(ws *loader.Workspace) string {
	if ws == nil {
		return loader.StateDir + "/config.yaml"
	}
	return ws.Rel(ws.StatePath("config.yaml"))
}

// prefixEach splits err (possibly joined) into its parts, each prefixed with file.
func prefixEach(file string, err error) []error {
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
