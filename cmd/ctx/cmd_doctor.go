package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ctxtools/ctx/guard"
	"github.com/ctxtools/ctx/internal/claude"
	"github.com/ctxtools/ctx/internal/durable"
	"github.com/ctxtools/ctx/internal/events"
	"github.com/ctxtools/ctx/loader"
	"github.com/ctxtools/ctx/skills"
)

type doctorOptions struct {
	*App
	Global bool
}

func newDoctorCmd(app *App) *cobra.Command {
	opts := &doctorOptions{App: app}
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Check that ctx is plugged into Claude Code and working",
		Long: `Check the setup: the workspace, the hooks in Claude Code's settings (present and
current, and registered at one level only: the project's .claude/settings.json,
its .claude/settings.local.json, or the user's settings), the installed skills,
the runtime folder for the pause flag, and whether the ctx on PATH is the
binary the hooks call. Exits 1 when something needs fixing, and says how.`,
		Example: `  ctx doctor
  ctx doctor --global`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error { return runDoctor(opts) },
	}
	cmd.Flags().BoolVar(&opts.Global, "global", false, "check the user's Claude Code settings instead of the workspace's")
	return cmd
}

func runDoctor(opts *doctorOptions) error {
	s := style{opts.Color()}
	problems := 0
	report := func(ok bool, what, detail string) {
		mark := s.green("ok  ")
		if !ok {
			mark = s.wrap("31", "FAIL")
			problems++
		}
		fmt.Fprintf(opts.Out, "%s  %-10s %s\n", mark, what, detail)
	}
	ws, err := opts.Workspace()
	var cfgErr *loader.ConfigError
	if err != nil && !errors.As(err, &cfgErr) {
		report(false, "workspace", err.Error())
		return &exitError{code: exitFailure, err: errors.New("doctor: problems found"), silent: true}
	}
	report(true, "workspace", ws.Root)
	switch dir := ws.CacheDir(); {
	case dir == "":
		report(true, "cache", "none: no .ctx/ here and no user cache folder (HOME); listings read every project")
	case !strings.HasPrefix(dir, ws.StatePath()):
		report(true, "cache", dir+" (no .ctx/ here: the listing's caches are in your cache folder)")
	default:
		report(true, "cache", dir)
	}
	for _, problem := range ws.LinkProblems() {
		report(false, "link", problem)
	}
	for _, problem := range configProblems(opts.App, ws, cfgErr) {
		report(false, "config", problem)
	}
	if cfgErr == nil && problems == 0 {
		if _, err := os.Stat(ws.StatePath("config.yaml")); err == nil {
			report(true, "config", events.ConfigName(ws))
		}
	}
	reportProjects(ws, report)

	// The level to check: --global's, else the project's own file, else wherever ctx's
	// hooks are registered for this project.
	registered := claude.CtxHookFiles(claude.SettingsFiles(ws.Root, opts.Getenv), "")
	level := claude.LevelProject
	if opts.Global {
		level = claude.LevelUser
	} else {
		for _, want := range []claude.Level{claude.LevelProject, claude.LevelLocal, claude.LevelUser} {
			if hookFilesHold(registered, want) {
				level = want
				break
			}
		}
	}
	bin, _ := hookBinary(level)
	settings, skillsDir, err := opts.claudeDirs(ws.Root, level)
	if err != nil {
		return err
	}
	fix := initCommand(level)
	data, err := os.ReadFile(settings)
	hookBins := map[string]bool{}
	switch {
	case errors.Is(err, os.ErrNotExist):
		report(false, "hooks", settings+" does not exist: run `"+fix+"`")
	case err != nil:
		report(false, "hooks", err.Error())
	default:
		regs := events.Registrations(bin)
		present, current, err := claude.InstalledHooks(data, regs)
		if err != nil {
			report(false, "hooks", fmt.Sprintf("%s: %v", settings, err))
			break
		}
		var missing, stale []string
		for _, r := range regs {
			key := r.Key()
			switch {
			case !present[key]:
				missing = append(missing, key)
			case !current[key]:
				stale = append(stale, key)
			}
		}
		switch {
		case len(missing) > 0:
			report(false, "hooks", "missing in "+settings+": "+strings.Join(missing, ", ")+"; run `"+fix+"`")
		case len(stale) > 0:
			report(false, "hooks", "outdated in "+settings+": "+strings.Join(stale, ", ")+"; run `"+fix+"`")
		default:
			report(true, "hooks", fmt.Sprintf("all %d registered in %s (%s)", len(regs), settings, levelWords(level)))
		}
		bins, _ := claude.InstalledBinaries(data)
		for _, b := range bins {
			hookBins[b] = true
		}
	}

	if len(registered) > 1 {
		var where []string
		for _, f := range registered {
			where = append(where, f.Path+" ("+f.Level.String()+" settings)")
		}
		report(false, "hooks", "registered at more than one settings level, so Claude Code may run each twice: "+
			strings.Join(where, " and ")+"; keep one: remove ctx's entries from the others")
	}

	results, err := skills.Status(skillsDir)
	if err != nil {
		report(false, "skills", err.Error())
	}
	nameW := 0
	for _, r := range results {
		nameW = max(nameW, len(r.Name))
	}
	for _, r := range results {
		ok := r.Action == skills.StatusCurrent
		detail := r.Action + "  " + r.Path
		switch r.Action {
		case skills.StatusMissing, skills.StatusOutdated:
			detail += "  (run `ctx init`)"
		case skills.StatusChanged:
			detail += "  (changed by you; `ctx init --force` replaces it)"
		}
		report(ok, "skill", fmt.Sprintf("%-*s  %s", nameW, r.Name, detail))
	}

	if rt, err := opts.State(nil).Runtime(); err != nil {
		report(false, "runtime", err.Error())
	} else {
		report(true, "runtime", rt.Dir)
	}

	onPath, err := exec.LookPath("ctx")
	switch {
	case level == claude.LevelLocal && namedBinariesExist(hookBins):
		// `ctx init --local` names a development build on purpose; the PATH is not
		// what runs it.
		report(true, "PATH", "the hooks call "+strings.Join(keys(hookBins), ", ")+", named in your local settings")
	case err != nil:
		report(false, "PATH", "no ctx on PATH (hooks call "+bin+"); `make install` puts it there")
	default:
		abs, _ := filepath.Abs(onPath)
		if real, err := filepath.EvalSymlinks(abs); err == nil {
			abs = real
		}
		switch {
		case len(hookBins) == 0:
			report(false, "PATH", abs+" is on PATH, but no hook calls a ctx yet: run `ctx init`")
		case hookBins[abs] || hookBins["ctx"]:
			report(true, "PATH", abs+" is the ctx the hooks call")
		default:
			report(false, "PATH", fmt.Sprintf("ctx on PATH is %s but the hooks call %s; run `ctx init` with the ctx you want", abs, strings.Join(keys(hookBins), ", ")))
		}
	}
	checkStatusLine(opts.Out, s, ws.Root, opts.Getenv)
	checkClient(opts.Out, s)
	if note := cgoNote(readBuildInfo()); note != "" {
		fmt.Fprintf(opts.Out, "%s  %-10s %s\n", s.wrap("33", "note"), "build", note)
	}
	if problems > 0 {
		return &exitError{code: exitFailure, err: fmt.Errorf("doctor: %d problem(s)", problems), silent: true}
	}
	return nil
}

// clientVersionWait bounds `claude --version`: it answers in a fraction of a second.
const clientVersionWait = 5 * time.Second

// reportProjects says how many projects the workspace's projects folder holds, and
// fails when it holds none while other folders of the workspace hold some: a
// projects_dir that names the wrong folder, and every listing empty.
func reportProjects(ws *loader.Workspace, report func(ok bool, what, detail string)) {
	folders, err := ws.Folders()
	if err != nil {
		report(false, "projects", err.Error())
		return
	}
	where := ws.Rel(ws.ProjectsPath()) + "/"
	if where == "./" {
		where = "the workspace's numbered folders"
	}
	if len(folders) > 0 {
		report(true, "projects", count(len(folders), "project")+" in "+where)
		return
	}
	var elsewhere []string
	for _, dir := range loader.ProjectFolders(ws.Root) {
		if abs := filepath.Join(ws.Root, dir); !durable.SameFile(abs, ws.ProjectsPath()) {
			elsewhere = append(elsewhere, dir)
		}
	}
	if len(elsewhere) == 0 {
		report(true, "projects", "none yet in "+where+": `ctx new \"Name\"` makes one")
		return
	}
	report(false, "projects", fmt.Sprintf("none in %s, but %s/ holds numbered projects: set projects_dir: %s in .ctx/config.yaml", where, elsewhere[0], elsewhere[0]))
}

// checkClient says which Claude Code is installed and whether ctx has been proven
// against it (docs/compatibility.md). It is a note, never a failure: a newer client
// probably works, but nothing has checked it yet.
func checkClient(out io.Writer, s style) {
	note := func(detail string) { fmt.Fprintf(out, "%s  %-10s %s\n", s.wrap("33", "note"), "claude", detail) }
	bin, err := exec.LookPath("claude")
	if err != nil {
		note("not on PATH; ctx's hooks run inside Claude Code (proven with " + claude.ProvenClaudeVersion + ")")
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), clientVersionWait)
	defer cancel()
	raw, err := exec.CommandContext(ctx, bin, "--version").Output()
	version, ok := claude.ClientVersion(string(raw))
	switch {
	case err != nil || !ok:
		note(bin + " --version gave no version; ctx is proven with Claude Code " + claude.ProvenClaudeVersion)
	case claude.NewerThanProven(version):
		note(fmt.Sprintf("%s is newer than %s, the newest version ctx is proven against: it probably works; see docs/compatibility.md", version, claude.ProvenClaudeVersion))
	default:
		fmt.Fprintf(out, "%s  %-10s %s\n", s.green("ok  "), "claude", version+" (proven: "+claude.ProvenClaudeVersion+")")
	}
}

// namedBinariesExist reports whether the hooks call binaries by path only, each of
// them an existing file.
func namedBinariesExist(bins map[string]bool) bool {
	if len(bins) == 0 || bins["ctx"] {
		return false
	}
	for b := range bins {
		if info, err := os.Stat(b); err != nil || info.IsDir() {
			return false
		}
	}
	return true
}

// hookFilesHold reports whether files has one at level.
func hookFilesHold(files []claude.SettingsFile, level claude.Level) bool {
	for _, f := range files {
		if f.Level == level {
			return true
		}
	}
	return false
}

func keys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// configProblems lists, one line each, what in the workspace's .ctx/config.yaml ctx
// cannot use: the file as a whole (cfgErr), or the sections the hooks read.
func configProblems(app *App, ws *loader.Workspace, cfgErr *loader.ConfigError) []string {
	if cfgErr != nil {
		return []string{events.OneLine(cfgErr.Error()) + ": ctx uses its defaults and the built-in guard rules until it is fixed"}
	}
	var errs []error
	if _, err := events.GuardFor(ws, events.GuardAt{Home: app.Getenv("HOME"), Cwd: ws.Root}); err != nil {
		errs = append(errs, err)
	}
	if _, err := events.UsageConfig(ws); err != nil {
		errs = append(errs, err)
	}
	cfg, err := events.ApproveConfig(ws)
	if err != nil {
		errs = append(errs, err)
	}
	rules, _ := guard.New(guard.Config{}, guard.Env{Workspace: ws.Root})
	if _, err := guard.NewApprover(rules, cfg); err != nil {
		errs = append(errs, events.PrefixEach(events.ConfigName(ws), err)...)
	}
	var out []string
	for _, e := range errs {
		out = append(out, strings.Split(e.Error(), "\n")...)
	}
	return out
}

// readBuildInfo is how this binary was built (nil when it does not say).
func readBuildInfo() *debug.BuildInfo {
	info, _ := debug.ReadBuildInfo()
	return info
}

// cgoNote warns of a binary built with cgo: its dynamic loader and libc cost every
// start, so every hook, about 1.5 ms (BENCHMARKS.md); "" for a static build.
func cgoNote(info *debug.BuildInfo) string {
	if info == nil {
		return ""
	}
	for _, kv := range info.Settings {
		if kv.Key == "CGO_ENABLED" && kv.Value == "1" {
			return "this ctx was built with cgo, which costs every hook about 1.5 ms: reinstall it with `CGO_ENABLED=0 go install github.com/ctxtools/ctx/cmd/ctx@latest` (or `make install`)"
		}
	}
	return ""
}
