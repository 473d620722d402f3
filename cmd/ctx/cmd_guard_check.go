package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"mvdan.cc/sh/v3/syntax"

	"github.com/ctxtools/ctx/gitstate"
	"github.com/ctxtools/ctx/guard"
	"github.com/ctxtools/ctx/internal/claude"
	"github.com/ctxtools/ctx/internal/events"
	"github.com/ctxtools/ctx/loader"
)

type guardCheckOptions struct {
	*App
	Command string
	JSON    bool
	Cwd     string
	Repo    string // actual, dirty or clean
	// AsWorkspace judges as if this folder were the workspace root, without reading
	// it or its config: the rule table's tests use it to pin the machine.
	AsWorkspace string
	// Presets are switched on for this check beyond the workspace's guard.presets.
	Presets []string
}

// Exit codes of `ctx guard check`: a refusal is exit 1, so a script can test a rule
// with `ctx guard check -- CMD && echo allowed`.
const exitRefused = exitFailure

func newGuardCheckCmd(app *App) *cobra.Command {
	opts := &guardCheckOptions{App: app}
	cmd := &cobra.Command{
		Use:   "check [--json] [-- COMMAND...]",
		Short: "Ask the guard whether it would refuse a command",
		Long: `Ask the guard whether it would refuse a Bash command, and why: the verdict, the
rule and the reason the agent would be told. The command is judged exactly as the
PreToolUse hook judges it: with the built-in rules and this workspace's guard:
config, as if it ran in the current folder (or --cwd).

Give the command after --, as one argument or as several words (words with spaces
or shell characters are quoted again), or on stdin when there are no arguments, for
scripts of several lines.

Exit status: 0 when the guard allows the command, 1 when it refuses it, 2 for bad
usage. Problems of .ctx/config.yaml are printed on stderr and do not change the
verdict's exit status.`,
		Example: `  ctx guard check -- rm -rf 02-projects
  ctx guard check --json -- 'git push --force origin main'
  printf 'cd build\nrm -rf *\n' | ctx guard check
  ctx guard check --repo clean -- git reset --hard && echo allowed
  ctx guard check --preset cloud -- terraform destroy -auto-approve`,
		Args: usageArgs(cobra.ArbitraryArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				opts.Command = joinCommand(args)
			} else {
				text, err := opts.readCommand()
				if err != nil {
					return err
				}
				opts.Command = text
			}
			switch opts.Repo {
			case "actual", "dirty", "clean":
			default:
				return inputError(fmt.Errorf("--repo %q: want actual, dirty or clean", opts.Repo))
			}
			for _, p := range opts.Presets {
				if !slices.ContainsFunc(guard.Presets, func(g guard.Preset) bool { return g.Name == p }) {
					return inputError(fmt.Errorf("--preset %q: unknown; the presets are %s", p, presetNames()))
				}
			}
			return runGuardCheck(opts)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the verdict as JSON")
	cmd.Flags().StringVar(&opts.Cwd, "cwd", "", "judge the command as if it ran in this folder (default: the current folder)")
	cmd.Flags().StringVar(&opts.Repo, "repo", "actual", "whether git repositories have uncommitted changes: actual (ask git), dirty or clean")
	cmd.Flags().StringSliceVar(&opts.Presets, "preset", nil, "also switch on this preset (kubernetes, cloud, registries, publishing); repeat for more")
	cmd.Flags().StringVar(&opts.AsWorkspace, "as-workspace", "", "judge as if this folder were the workspace root, reading nothing in it (for tests)")
	_ = cmd.Flags().MarkHidden("as-workspace")
	return cmd
}

// joinCommand turns the words after -- back into one command line: a single word is
// the command as it is; several are joined with spaces, each quoted for bash when it
// would otherwise change meaning.
func joinCommand(args []string) string {
	if len(args) == 1 {
		return args[0]
	}
	words := make([]string, len(args))
	for i, a := range args {
		words[i] = a
		if q, err := syntax.Quote(a, syntax.LangBash); err == nil && q != a {
			words[i] = q
		}
	}
	return strings.Join(words, " ")
}

// readCommand reads the command from stdin, which must not be a terminal.
func (o *guardCheckOptions) readCommand() (string, error) {
	if o.In == nil || o.inTerminal() {
		return "", inputError(errors.New("no command: give it after --, as in `ctx guard check -- rm -rf build`, or on stdin"))
	}
	data, err := io.ReadAll(io.LimitReader(o.In, claude.MaxPayloadBytes))
	if err != nil {
		return "", fmt.Errorf("read the command from stdin: %w", err)
	}
	text := strings.TrimSuffix(strings.TrimSuffix(string(data), "\n"), "\r")
	if strings.TrimSpace(text) == "" {
		return "", inputError(errors.New("no command on stdin"))
	}
	return text, nil
}

// guardCheckResult is the JSON form of a verdict.
type guardCheckResult struct {
	Command   string   `json:"command"`
	Verdict   string   `json:"verdict"` // allow or deny
	Rule      string   `json:"rule,omitempty"`
	Reason    string   `json:"reason,omitempty"`
	Cwd       string   `json:"cwd"`
	Workspace string   `json:"workspace,omitempty"`
	Problems  []string `json:"problems,omitempty"`
}

func runGuardCheck(opts *guardCheckOptions) error {
	cwd := opts.Cwd
	if cwd == "" || !filepath.IsAbs(cwd) {
		wd, err := os.Getwd()
		if err != nil {
			return fmt.Errorf("current folder: %w", err)
		}
		cwd = filepath.Join(wd, cwd)
	}
	var ws *loader.Workspace
	var problems []error
	if opts.AsWorkspace != "" {
		root, err := filepath.Abs(opts.AsWorkspace)
		if err != nil {
			return inputError(fmt.Errorf("--as-workspace: %w", err))
		}
		ws = &loader.Workspace{Root: root, Config: loader.Config{ProjectsDir: loader.DefaultProjectsDir,
			PlanningDir: loader.DefaultPlanningDir, ResumeFile: loader.DefaultResumeFile}}
	} else {
		var err error
		ws, err = opts.workspaceFrom(cwd)
		var cfgErr *loader.ConfigError
		switch {
		case errors.As(err, &cfgErr):
			problems = append(problems, err)
		case errors.Is(err, loader.ErrNoWorkspace):
			ws = nil // the guard judges outside a workspace too
		case err != nil:
			return err
		}
	}
	dirty, unique := gitstate.Dirty, gitstate.UniqueCommits
	switch opts.Repo {
	case "dirty":
		dirty, unique = func(string) bool { return true }, nil
	case "clean":
		dirty, unique = func(string) bool { return false }, nil
	}
	rules, err := events.GuardFor(ws, events.GuardAt{Home: opts.Getenv("HOME"), Cwd: cwd, Dirty: dirty, Unique: unique, Presets: opts.Presets})
	if err != nil {
		problems = append(problems, err)
	}
	v := rules.Check(opts.Command)
	res := guardCheckResult{Command: opts.Command, Verdict: "allow", Rule: v.Rule, Reason: v.Reason, Cwd: cwd}
	if v.Deny {
		res.Verdict = "deny"
	}
	if ws != nil {
		res.Workspace = ws.Root
	}
	for _, p := range problems {
		for _, line := range strings.Split(p.Error(), "\n") {
			res.Problems = append(res.Problems, line)
			opts.Warn("%s", line)
		}
	}
	if opts.JSON {
		if err := opts.writeJSON(res); err != nil {
			return err
		}
	} else {
		s := style{opts.Color()}
		if v.Deny {
			fmt.Fprintf(opts.Out, "%s  %s\n%s\n", s.wrap("31", "refused"), v.Rule, v.Reason)
		} else {
			fmt.Fprintf(opts.Out, "%s  no rule refuses it\n", s.green("allowed"))
		}
	}
	if v.Deny {
		return &exitError{code: exitRefused, err: errors.New("refused"), silent: true}
	}
	return nil
}

// presetNames lists the guard's presets, for messages.
func presetNames() string {
	names := make([]string, len(guard.Presets))
	for i, p := range guard.Presets {
		names[i] = p.Name
	}
	return strings.Join(names, ", ")
}
