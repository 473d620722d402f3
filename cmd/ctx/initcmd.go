package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ctxtools/ctx/hook"
	"github.com/ctxtools/ctx/loader"
	"github.com/ctxtools/ctx/skills"
)

type initOptions struct {
	*App
	Global bool
	Force  bool
	DryRun bool
}

func newInitCmd(app *App, runF func(*initOptions) error) *cobra.Command {
	opts := &initOptions{App: app}
	cmd := &cobra.Command{
		Use:   "init",
		Short: "Plug ctx into Claude Code: hooks, skills and the .ctx folder",
		Long: `Register ctx's hooks in Claude Code's settings and install its skills.

Hooks go into the workspace's .claude/settings.json (with --global, the user's
settings: $CLAUDE_CONFIG_DIR/settings.json or ~/.claude/settings.json). Your
other settings and hooks stay exactly as they were, a second run changes
nothing, and the previous file is kept as settings.json.ctx-backup. A settings
file that is not valid JSON is refused and left alone.

Skills go into .claude/skills/<name>/SKILL.md; a skill file you changed is kept
unless --force. The workspace gets a .ctx/ folder whose state/ is git-ignored.`,
		Example: `  ctx init
  ctx init --dry-run
  ctx init --global`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return runInit(opts)
		},
	}
	cmd.Flags().BoolVar(&opts.Global, "global", false, "register in the user's Claude Code settings instead of the workspace's")
	cmd.Flags().BoolVar(&opts.Force, "force", false, "replace skill files you changed")
	cmd.Flags().BoolVar(&opts.DryRun, "dry-run", false, "say what would change, change nothing")
	return cmd
}

// claudeDirs returns the settings file and skills folder init writes to.
func (a *App) claudeDirs(root string, global bool) (settings, skillsDir string) {
	home, _ := os.UserHomeDir()
	settings = hook.SettingsPath(root, global, a.Getenv, home)
	return settings, filepath.Join(filepath.Dir(settings), "skills")
}

func runInit(opts *initOptions) error {
	root := ""
	ws, err := opts.Workspace()
	switch {
	case err == nil:
		root = ws.Root
	case errors.Is(err, loader.ErrNoWorkspace):
		// ctx init is how a folder becomes a workspace.
		if root, err = os.Getwd(); err != nil {
			return err
		}
	default:
		return err
	}
	bin := hookBinary(opts.Global)
	settings, skillsDir := opts.claudeDirs(root, opts.Global)
	prefix := ""
	if opts.DryRun {
		prefix = "would "
	}
	w := opts.Out

	changed, backup, err := hook.WriteSettings(settings, hook.Registrations(bin), opts.DryRun)
	if err != nil {
		return inputError(err)
	}
	if changed {
		fmt.Fprintf(w, "hooks     %sregister %d hooks calling %s in %s\n", prefix, len(hook.Registrations(bin)), bin, settings)
		if backup != "" {
			fmt.Fprintf(w, "          previous file kept as %s\n", backup)
		}
	} else {
		fmt.Fprintf(w, "hooks     already current in %s\n", settings)
	}

	results, err := skills.Install(skillsDir, opts.Force, opts.DryRun)
	if err != nil {
		return err
	}
	for _, r := range results {
		fmt.Fprintf(w, "skill     %-20s %s%s\n", r.Name, actionWord(r.Action, opts.DryRun), "  "+r.Path)
	}

	if !opts.Global {
		state := filepath.Join(root, loader.StateDir, "state")
		if _, err := os.Stat(state); errors.Is(err, os.ErrNotExist) {
			if !opts.DryRun {
				if err := loader.EnsureStateDir(state); err != nil {
					return err
				}
			}
			fmt.Fprintf(w, "workspace %screate %s (state/ is git-ignored)\n", prefix, filepath.Join(root, loader.StateDir))
		}
	}
	if !opts.DryRun {
		fmt.Fprintf(w, "\nDone. Start a Claude Code session here and say \"continue project 1\"; `ctx doctor` checks the setup.\n")
	}
	return nil
}

func actionWord(action string, dryRun bool) string {
	if !dryRun {
		return action
	}
	switch action {
	case "installed":
		return "would install"
	case "updated":
		return "would update"
	}
	return action
}

// hookBinary is the command the hooks run. A project's settings are usually committed,
// so they say plain "ctx" when a ctx is on PATH: an absolute path would break on a
// teammate's machine. The user's own settings name this binary's absolute path, so
// they work whatever PATH Claude Code has. A throwaway `go run` build is never named.
func hookBinary(global bool) string {
	if !global {
		if _, err := exec.LookPath("ctx"); err == nil {
			return "ctx"
		}
	}
	exe, err := os.Executable()
	if err == nil && !strings.Contains(exe, string(filepath.Separator)+"go-build") {
		if real, err := filepath.EvalSymlinks(exe); err == nil {
			return real
		}
		return exe
	}
	if path, err := exec.LookPath("ctx"); err == nil {
		if abs, err := filepath.Abs(path); err == nil {
			return abs
		}
	}
	return "ctx"
}
