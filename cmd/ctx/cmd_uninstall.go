package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ctxtools/ctx/internal/claude"
	"github.com/ctxtools/ctx/loader"
	"github.com/ctxtools/ctx/skills"
)

type uninstallOptions struct {
	*App
	Global bool
	Local  bool
	Force  bool
	Purge  bool
	DryRun bool
}

func newUninstallCmd(app *App) *cobra.Command {
	opts := &uninstallOptions{App: app}
	cmd := &cobra.Command{
		Use:   "uninstall",
		Short: "Take ctx out of Claude Code: its hooks, status line and skills",
		Long: `Remove what ctx init installed, at the level init used: ctx's hook entries and
the status line ctx set from the settings file (a status line of yours that ctx
wrapped gets its own command back), and the skills ctx installed. Your own
settings and hooks stay: when nothing else changed since ctx init, the file is
given back byte for byte as it was (from the <file>.ctx-backup init kept), and a
settings file ctx init created is deleted.

A skill file you changed is kept unless --force. The workspace's .ctx/ folder
(save-point snapshots, state, your config and templates) stays unless --purge.
Every removal is printed; --dry-run only says what would go. ctx init --uninstall
does the same.`,
		Example: `  ctx uninstall --dry-run
  ctx uninstall
  ctx uninstall --local
  ctx uninstall --global
  ctx uninstall --purge     # and delete the workspace's .ctx/ folder`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runUninstall(opts)
		},
	}
	cmd.Flags().BoolVar(&opts.Global, "global", false, "remove ctx from the user's Claude Code settings")
	cmd.Flags().BoolVar(&opts.Local, "local", false, "remove ctx from the workspace's .claude/settings.local.json")
	cmd.Flags().BoolVar(&opts.Force, "force", false, "remove skill files you changed too")
	cmd.Flags().BoolVar(&opts.Purge, "purge", false, "also delete the workspace's .ctx/ folder: snapshots, state, config and templates")
	cmd.Flags().BoolVar(&opts.DryRun, "dry-run", false, "say what would be removed, remove nothing")
	return cmd
}

func runUninstall(opts *uninstallOptions) error {
	if opts.Global && opts.Local {
		return inputError(errors.New("uninstall: --global and --local name different files; choose one"))
	}
	if opts.Global && opts.Purge {
		return inputError(errors.New("uninstall: --purge deletes a workspace's .ctx/ folder; run it in the workspace without --global"))
	}
	root := ""
	ws, err := opts.Workspace()
	switch {
	case ws != nil:
		// A config ctx cannot read does not stop a removal.
		root = ws.Root
	case errors.Is(err, loader.ErrNoWorkspace) && !opts.Purge:
		if root, err = os.Getwd(); err != nil {
			return err
		}
	default:
		return err
	}
	level := settingsLevel(opts.Global, opts.Local)
	settings, skillsDir, err := opts.claudeDirs(root, level)
	if err != nil {
		return err
	}
	prefix := "removed"
	if opts.DryRun {
		prefix = "would remove"
	}
	w := opts.Out

	res, err := claude.UninstallSettings(settings, opts.DryRun)
	if err != nil {
		return inputError(err)
	}
	switch {
	case !res.Changed:
		fmt.Fprintf(w, "hooks     none of ctx's in %s\n", settings)
	case res.Removed:
		fmt.Fprintf(w, "hooks     %s ctx's hooks and status line; %s held nothing else and is %s\n", prefix, settings, map[bool]string{true: "would be deleted", false: "deleted"}[opts.DryRun])
	case res.Restored:
		fmt.Fprintf(w, "hooks     %s ctx's hooks and status line from %s: it is as it was before ctx init\n", prefix, settings)
	default:
		fmt.Fprintf(w, "hooks     %s ctx's hooks and status line from %s; your own entries stay\n", prefix, settings)
	}

	for _, o := range claude.CtxHookFiles(claude.SettingsFiles(root, opts.Getenv), settings) {
		fmt.Fprintf(w, "note      ctx's hooks are still in %s (%s settings): `%s` removes them\n", o.Path, o.Level, strings.Replace(initCommand(o.Level), "ctx init", "ctx uninstall", 1))
	}

	results, err := skills.Uninstall(skillsDir, opts.Force, opts.DryRun)
	for _, r := range results {
		switch r.Action {
		case skills.ActionRemoved:
			fmt.Fprintf(w, "skill     %-20s %s  %s\n", r.Name, prefix, r.Path)
		case skills.ActionKept:
			fmt.Fprintf(w, "skill     %-20s kept (%s)  %s\n", r.Name, r.Reason, r.Path)
		}
	}
	if err != nil {
		return err
	}
	removeIfEmpty(skillsDir, opts.DryRun)
	if level != claude.LevelUser {
		removeIfEmpty(filepath.Dir(settings), opts.DryRun)
	}

	if level != claude.LevelUser {
		dir := filepath.Join(root, loader.StateDir)
		if _, err := os.Stat(dir); err == nil {
			if opts.Purge {
				if !opts.DryRun {
					if err := os.RemoveAll(dir); err != nil {
						return fmt.Errorf("uninstall: %w", err)
					}
				}
				fmt.Fprintf(w, "workspace %s %s\n", prefix, dir)
			} else {
				fmt.Fprintf(w, "workspace %s stays (snapshots, state, your config); --purge deletes it\n", dir)
			}
		}
	}
	return nil
}

// removeIfEmpty deletes a folder ctx init may have created (.claude/skills, the
// workspace's .claude) when nothing is left in it.
func removeIfEmpty(dir string, dryRun bool) {
	if dryRun {
		return
	}
	if entries, err := os.ReadDir(dir); err == nil && len(entries) == 0 {
		_ = os.Remove(dir)
	}
}
