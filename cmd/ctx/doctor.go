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
	"github.com/ctxtools/ctx/session"
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
current), the installed skills, the runtime folder for the pause flag, and
whether the ctx on PATH is the binary the hooks call. Exits 1 when something
needs fixing, and says how.`,
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
	if err != nil {
		report(false, "workspace", err.Error())
		return &exitError{code: exitFailure, err: errors.New("doctor: problems found"), silent: true}
	}
	report(true, "workspace", ws.Root)

	bin := hookBinary(opts.Global)
	settings, skillsDir := opts.claudeDirs(ws.Root, opts.Global)
	data, err := os.ReadFile(settings)
	hookBins := map[string]bool{}
	switch {
	case errors.Is(err, os.ErrNotExist):
		report(false, "hooks", settings+" does not exist: run `ctx init`")
	case err != nil:
		report(false, "hooks", err.Error())
	default:
		regs := hook.Registrations(bin)
		present, current, err := hook.InstalledHooks(data, regs)
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
			report(false, "hooks", "missing in "+settings+": "+strings.Join(missing, ", ")+"; run `ctx init`")
		case len(stale) > 0:
			report(false, "hooks", "outdated in "+settings+": "+strings.Join(stale, ", ")+"; run `ctx init`")
		default:
			report(true, "hooks", fmt.Sprintf("all %d registered in %s", len(regs), settings))
		}
		bins, _ := hook.InstalledBinaries(data)
		for _, b := range bins {
			hookBins[b] = true
		}
	}

	results, err := skills.Status(skillsDir)
	if err != nil {
		report(false, "skills", err.Error())
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
		report(ok, "skill", r.Name+"  "+detail)
	}

	if rt, err := session.OpenRuntime(opts.Getenv); err != nil {
		report(false, "runtime", err.Error())
	} else {
		report(true, "runtime", rt.Dir)
	}

	onPath, err := exec.LookPath("ctx")
	switch {
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
	if problems > 0 {
		return &exitError{code: exitFailure, err: fmt.Errorf("doctor: %d problem(s)", problems), silent: true}
	}
	return nil
}

func keys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
