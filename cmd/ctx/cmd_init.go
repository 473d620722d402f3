package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ctxtools/ctx/internal/claude"
	"github.com/ctxtools/ctx/internal/durable"
	"github.com/ctxtools/ctx/internal/events"
	"github.com/ctxtools/ctx/internal/state"
	"github.com/ctxtools/ctx/loader"
	"github.com/ctxtools/ctx/skills"
)

type initOptions struct {
	*App
	Global bool
	Local  bool
	Force  bool
	DryRun bool
	// StatusLine wraps the person's own status line with `ctx statusline`.
	StatusLine bool
	// Uninstall removes what init installed instead (ctx uninstall).
	Uninstall bool
	Purge     bool
}

func newInitCmd(app *App) *cobra.Command {
	opts := &initOptions{App: app}
	cmd := &cobra.Command{
		Use:   "init",
		Short: "Make this folder a workspace and plug ctx into Claude Code",
		Long: `Register ctx's hooks in Claude Code's settings and install its skills; in a
folder that is not a workspace yet, make it one first.

A folder that is not a workspace (none at or above it holds 02-projects/ or
.ctx/) becomes one: it gets .ctx/ and an empty 02-projects/, or, when numbered
folders in it are projects (NN-slug/01-planning/) or it holds exactly one folder
of them, a .ctx/config.yaml that reads them where they are. Nothing in
the folder is moved or deleted. On a terminal init asks first. The home folder,
a folder above it, a system folder, a folder inside a workspace and a folder
holding workspaces are refused.

Hooks go into the workspace's .claude/settings.json, which the team shares
(committed). With --local they go into .claude/settings.local.json instead,
which is yours alone (not committed); with --global, into the user's settings
($CLAUDE_CONFIG_DIR/settings.json or ~/.claude/settings.json), for every
project. Your other settings and hooks stay exactly as they were, ctx's
entries from an older version are updated in place, a second run changes
nothing, and the previous file is kept as <file>.ctx-backup. A settings file
that is not valid JSON is refused and left alone.

Each hook runs "ctx" from the PATH and does nothing, quietly, where there is
no ctx: a teammate without ctx is not bothered. Only --local may name this
binary's own path, when it is not the ctx on the PATH (a development build).
Hooks registered at two levels (the project's and the user's) could run
twice, so init refuses to add them where another level has them; --force
installs them anyway.

The status line: where no statusLine is set, init sets 'ctx statusline', which
records the context window Claude Code reports for the session (the one figure
of the window only Claude Code knows for sure). Your own statusLine is never
replaced: --statusline wraps it, so it still shows, unchanged.

Skills go into .claude/skills/<name>/SKILL.md; a skill file you changed is kept
unless --force. The workspace gets a .ctx/ folder whose state/ and sessions/
are git-ignored. ctx uninstall (or init --uninstall) takes it all out again.`,
		Example: `  mkdir -p ~/work && cd ~/work && ctx init
  ctx init --dry-run
  ctx init --local
  ctx init --global
  ctx init --uninstall      # the same as ctx uninstall`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.Global && opts.Local {
				return inputError(errors.New("init: --global and --local name different files; choose one"))
			}
			if opts.Uninstall {
				return runUninstall(&uninstallOptions{App: opts.App, Global: opts.Global, Local: opts.Local, Force: opts.Force, Purge: opts.Purge, DryRun: opts.DryRun})
			}
			if opts.Purge {
				return inputError(errors.New("init: --purge goes with --uninstall"))
			}
			return runInit(opts)
		},
	}
	cmd.Flags().BoolVar(&opts.Global, "global", false, "register in the user's Claude Code settings instead of the workspace's")
	cmd.Flags().BoolVar(&opts.Local, "local", false, "register in the workspace's .claude/settings.local.json (yours, not committed)")
	cmd.Flags().BoolVar(&opts.Force, "force", false, "replace skill files you changed; register even where another settings level has ctx's hooks")
	cmd.Flags().BoolVar(&opts.DryRun, "dry-run", false, "say what would change, change nothing")
	cmd.Flags().BoolVar(&opts.Uninstall, "uninstall", false, "remove what init installed instead: the same as `ctx uninstall`")
	cmd.Flags().BoolVar(&opts.Purge, "purge", false, "with --uninstall, also delete the workspace's .ctx/ folder")
	cmd.Flags().BoolVar(&opts.StatusLine, "statusline", false, "wrap your own status line with `ctx statusline`, which records the real context window")
	return cmd
}

// settingsLevel is the settings level the flags choose.
func settingsLevel(global, local bool) claude.Level {
	switch {
	case global:
		return claude.LevelUser
	case local:
		return claude.LevelLocal
	}
	return claude.LevelProject
}

// home is the user's home folder, from the environment ctx was given.
// claudeDirs returns the settings file and skills folder of a settings level; the
// user's level fails when no home folder is known.
func (a *App) claudeDirs(root string, level claude.Level) (settings, skillsDir string, err error) {
	if settings, err = claude.SettingsPath(root, level, a.Getenv); err != nil {
		return "", "", err
	}
	return settings, filepath.Join(filepath.Dir(settings), "skills"), nil
}

// levelWords says whose a settings file is, for init's and doctor's output.
func levelWords(level claude.Level) string {
	switch level {
	case claude.LevelLocal:
		return "personal: not committed"
	case claude.LevelUser:
		return "personal: your user settings, for every project"
	}
	return "shared with your team: committed with the project"
}

// initCommand is the init command that registers hooks at a level.
func initCommand(level claude.Level) string {
	switch level {
	case claude.LevelLocal:
		return "ctx init --local"
	case claude.LevelUser:
		return "ctx init --global"
	}
	return "ctx init"
}

func runInit(opts *initOptions) error {
	level := settingsLevel(opts.Global, opts.Local)
	root, layout, err := initRoot(opts, level)
	if err != nil || root == "" {
		return err
	}
	bin, note := hookBinary(level)
	settings, skillsDir, err := opts.claudeDirs(root, level)
	if err != nil {
		return err
	}
	did := func(verb string) string { return reportVerb(opts.DryRun, verb) }
	w := opts.Out
	// Claude Code runs a hook registered at two levels twice unless the two commands
	// are byte for byte the same, which an older ctx or another binary breaks.
	if !opts.Force {
		others := claude.CtxHookFiles(claude.SettingsFiles(root, opts.Getenv), settings)
		if len(others) > 0 {
			o := others[0]
			if layout != nil {
				// The hooks are in place at another level (the user's, usually): the
				// new workspace needs none of its own.
				if err := makeWorkspace(opts, layout); err != nil {
					return err
				}
				fmt.Fprintf(w, "hooks     already registered in %s (%s settings):\n          nothing added here\n", o.Path, o.Level)
				return nil
			}
			return inputError(fmt.Errorf("init: ctx's hooks are already in %s (%s settings); here too, each hook could run twice: remove them there, or pass --force", o.Path, o.Level))
		}
	}

	regs := events.Registrations(bin)
	if layout != nil {
		// A settings file init cannot write stops it before the folder becomes a
		// workspace, not halfway.
		if _, _, err := claude.WriteSettings(settings, regs, true); err != nil {
			return inputError(err)
		}
		if err := makeWorkspace(opts, layout); err != nil {
			return err
		}
	}
	changed, backup, err := claude.WriteSettings(settings, regs, opts.DryRun)
	if err != nil {
		return inputError(err)
	}
	if changed {
		fmt.Fprintf(w, "hooks     %s %d hooks calling %s in %s\n", did("register"), len(regs), bin, shortPath(root, settings))
		if backup != "" {
			fmt.Fprintf(w, "          previous file kept as %s\n", shortPath(root, backup))
		}
	} else {
		fmt.Fprintf(w, "hooks     already current in %s\n", shortPath(root, settings))
	}
	fmt.Fprintf(w, "          %s\n", levelWords(level))
	if note != "" {
		fmt.Fprintf(w, "note      %s\n", strings.ReplaceAll(note, "\n", "\n          "))
	}
	if err := installStatusLine(opts, root, level, settings, bin, changed); err != nil {
		return err
	}

	results, err := skills.Install(skillsDir, opts.Force, opts.DryRun)
	if err != nil {
		return err
	}
	for _, r := range results {
		fmt.Fprintf(w, "skill     %-20s %s\n", r.Name, actionWord(r.Action, opts.DryRun))
	}
	if len(results) > 0 {
		fmt.Fprintf(w, "          in %s\n", filepath.Join(shortPath(root, skillsDir), "<name>", "SKILL.md"))
	}

	if level != claude.LevelUser {
		stateDir := filepath.Join(root, loader.StateDir, "state")
		if _, err := os.Stat(stateDir); errors.Is(err, os.ErrNotExist) && layout == nil {
			if !opts.DryRun {
				if err := loader.EnsureStateDir(stateDir); err != nil {
					return err
				}
			}
			fmt.Fprintf(w, "workspace %s %s/ (its state/ is git-ignored)\n", did("create"), loader.StateDir)
		}
		sessions := filepath.Join(root, loader.StateDir, "sessions")
		if _, err := os.Lstat(filepath.Join(sessions, ".gitignore")); errors.Is(err, os.ErrNotExist) {
			if !opts.DryRun {
				if _, err := state.EnsureSessionsDir(sessions); err != nil {
					return err
				}
			}
			fmt.Fprintf(w, "workspace %s %s/ out of git (snapshots quote prompts)\n", did("keep"), shortPath(root, sessions))
		}
	}
	if opts.DryRun {
		return nil
	}
	if level == claude.LevelUser {
		fmt.Fprintf(w, "\nDone: every Claude Code session of yours runs ctx's hooks.\n"+
			"`ctx doctor` checks the set-up.\n")
		return nil
	}
	where := "here"
	if cwd, err := os.Getwd(); err == nil && !durable.SameFile(cwd, root) {
		where = "in " + root
	}
	if !hasProjects(opts.App, root, layout) {
		fmt.Fprintf(w, "\nDone. Next: `ctx new \"My first project\"`, then start Claude Code %s\n"+
			"and say \"continue project 1\". `ctx doctor` checks the set-up.\n", where)
		return nil
	}
	fmt.Fprintf(w, "\nDone. Start Claude Code %s and say \"continue project 1\".\n"+
		"`ctx doctor` checks the set-up.\n", where)
	return nil
}

// hasProjects reports whether the workspace at root holds a project yet; layout is
// what init surveyed there, nil for a workspace that already was one.
func hasProjects(app *App, root string, layout *loader.Layout) bool {
	if layout != nil {
		return layout.Projects > 0
	}
	ws, err := app.Workspace()
	if err != nil || ws.Root != root {
		return true // cannot tell: say what a workspace with projects is told
	}
	folders, err := ws.Folders()
	return err != nil || len(folders) > 0
}

// initRoot returns the folder init works on and, when that folder is not yet a
// workspace, what making it one takes (nil for a workspace, and for --global, which
// makes none). On a terminal init asks first; "" means the person said no.
func initRoot(opts *initOptions, level claude.Level) (string, *loader.Layout, error) {
	root := ""
	ws, err := opts.Workspace()
	switch {
	case err == nil:
		root = ws.Root
	case errors.Is(err, loader.ErrNoWorkspace):
		if root, err = os.Getwd(); err != nil {
			return "", nil, err
		}
		// Inside Claude Code (an agent's Bash, in a subfolder), the folder Claude
		// Code reads .claude/ from is the one to make a workspace.
		if project := opts.Getenv("CLAUDE_PROJECT_DIR"); project != "" {
			if abs, err := filepath.Abs(project); err == nil && durable.Within(root, abs) {
				root = abs
			}
		}
	default:
		return "", nil, err
	}
	if level == claude.LevelUser || loader.IsWorkspace(root) {
		return root, nil, nil
	}
	layout, err := loader.Survey(root, opts.Getenv("HOME"))
	if err != nil {
		return "", nil, inputError(fmt.Errorf("init: %w", err))
	}
	if opts.DryRun || !opts.InIsTTY {
		return layout.Root, layout, nil
	}
	settings, _, err := opts.claudeDirs(layout.Root, level)
	if err != nil {
		return "", nil, err
	}
	what := fmt.Sprintf("%s is not a ctx workspace yet. Make it one?\n"+
		"  %s/ for projects, .ctx/ for ctx's state\n", layout.Root, layout.ProjectsDir)
	if layout.Adopted {
		where := "in " + layout.ProjectsDir + "/"
		if layout.ProjectsDir == "." {
			where = "in its numbered folders"
		}
		what = fmt.Sprintf("%s holds %s %s.\nMake it a ctx workspace that reads them there?\n"+
			"  .ctx/ for ctx's state\n", layout.Root, count(layout.Projects, "project"), where)
	}
	question := what + fmt.Sprintf("  ctx's hooks in %s, its skills in .claude/skills/\n"+
		"  nothing here is moved or deleted\n[y/N] ", shortPath(layout.Root, settings))
	if !opts.confirm(question) {
		fmt.Fprintln(opts.Out, "Nothing changed.")
		return "", nil, nil
	}
	return layout.Root, layout, nil
}

// makeWorkspace makes the surveyed folder a workspace (ctx init outside one) and says
// what it made.
func makeWorkspace(opts *initOptions, l *loader.Layout) error {
	if !opts.DryRun {
		if err := l.Create(); err != nil {
			return err
		}
	}
	did := func(verb string) string { return reportVerb(opts.DryRun, verb) }
	w := opts.Out
	if l.Adopted {
		where := l.ProjectsDir + "/"
		if l.ProjectsDir == "." {
			where = "its numbered folders"
		}
		fmt.Fprintf(w, "workspace %s %s: %s in %s\n", did("adopt"), l.Root, count(l.Projects, "project"), where)
		fmt.Fprintf(w, "          %s .ctx/config.yaml: projects_dir: %s\n", did("write"), l.ProjectsDir)
		if len(l.Unplanned) > 0 {
			fmt.Fprintf(w, "          listed too, with no tasks until they have %s/:\n          %s\n",
				loader.DefaultPlanningDir, strings.Join(l.Unplanned, ", "))
		}
		return nil
	}
	fmt.Fprintf(w, "workspace %s %s a workspace\n", did("make"), l.Root)
	fmt.Fprintf(w, "          %s %s/ for projects and .ctx/ for ctx's state\n", did("create"), loader.DefaultProjectsDir)
	switch {
	case l.Entries == 1:
		fmt.Fprintf(w, "          the file or folder already here is not moved\n")
	case l.Entries > 1:
		fmt.Fprintf(w, "          the %d files and folders already here are not moved\n", l.Entries)
	}
	if len(l.Elsewhere) > 0 {
		fmt.Fprintf(w, "note      projects in %s: ctx reads one folder of them;\n"+
			"          name it in .ctx/config.yaml (projects_dir: %s)\n", strings.Join(l.Elsewhere, "/, ")+"/", l.Elsewhere[0])
	}
	return nil
}

// reportVerb is a verb of init's report: "would create" in a dry run, "created" once
// done.
func reportVerb(dryRun bool, verb string) string {
	if dryRun {
		return "would " + verb
	}
	switch verb {
	case "make":
		return "made"
	case "keep":
		return "kept"
	case "write":
		return "wrote"
	case "set":
		return "set"
	case "create":
		return "created"
	}
	return verb + "ed"
}

// shortPath is path relative to root when it lies inside it, else path itself.
func shortPath(root, path string) string {
	if durable.Within(path, root) {
		if rel, err := filepath.Rel(root, path); err == nil {
			return rel
		}
	}
	return path
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

// hookBinary returns the ctx the hooks at level call, and, when that is not this
// binary, one line saying what that means. The project's and the user's settings
// always call "ctx" from the PATH: the project's are committed, where a path would
// break on a teammate's machine, and the same bytes at both levels let Claude Code run
// a hook registered at both once. Only the local settings, which are one person's and
// never committed, name this binary's real path, and only when it is not the ctx on
// the PATH (a development build, a renamed copy). A throwaway `go run` build is never
// named.
func hookBinary(level claude.Level) (bin, note string) {
	self := thisBinary()
	onPath := ""
	if p, err := exec.LookPath("ctx"); err == nil {
		if abs, err := filepath.Abs(p); err == nil {
			p = abs
		}
		if real, err := filepath.EvalSymlinks(p); err == nil {
			p = real
		}
		onPath = p
	}
	if self != "" && onPath != "" && durable.SameFile(self, onPath) {
		return "ctx", ""
	}
	if level == claude.LevelLocal && self != "" {
		return self, ""
	}

	var path string // what the PATH gives the hooks here
	switch {
	case onPath == "":
		path = "yours has no ctx yet; until it has, the hooks do nothing (make install)"
	case self == "":
		path = "yours finds " + onPath + ", not this go run build"
	default:
		path = "yours finds " + onPath + ",\nnot this binary, " + self
	}
	switch level {
	case claude.LevelProject:
		return "ctx", "the hooks run ctx from the PATH, on your teammates' machines too;\n" + path
	case claude.LevelLocal:
		return "ctx", "a go run build cannot be named, so the hooks run ctx from your PATH;\n" + path
	}
	return "ctx", "the hooks run ctx from your PATH;\n" + path
}

// thisBinary returns the real path of the running ctx, or "" when it has none worth
// naming (a `go run` build lives in a temporary folder).
func thisBinary() string {
	exe, err := os.Executable()
	if err != nil || strings.Contains(exe, string(filepath.Separator)+"go-build") {
		return ""
	}
	if real, err := filepath.EvalSymlinks(exe); err == nil {
		return real
	}
	return exe
}
