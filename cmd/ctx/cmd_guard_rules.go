package main

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ctxtools/ctx/guard"
	"github.com/ctxtools/ctx/internal/events"
	"github.com/ctxtools/ctx/loader"
)

type guardRulesOptions struct {
	*App
	JSON bool
}

func newGuardRulesCmd(app *App) *cobra.Command {
	opts := &guardRulesOptions{App: app}
	cmd := &cobra.Command{
		Use:   "rules [--json]",
		Short: "List the guard's rules in force here, with where each comes from",
		Long: `List the rules the guard applies in this workspace: the built-in rule classes,
then the patterns this workspace adds (guard.deny) or exempts (guard.allow) in
.ctx/config.yaml, then the commands auto-approve never approves (auto_approve.deny).
Each line says where the rule comes from. Outside a workspace only the built-in
rules apply.

Exits 1 when .ctx/config.yaml has a problem (each is printed on stderr): the
rules listed are then the ones in force, the broken entries left out.`,
		Example: `  ctx guard rules
  ctx guard rules --json | jq -r '.rules[] | select(.source != "built in") | .pattern'`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runGuardRules(opts)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the rules as JSON")
	return cmd
}

// guardRule is one line of `ctx guard rules`.
type guardRule struct {
	Kind    string `json:"kind"` // deny, allow, or auto-approve-deny
	Rule    string `json:"rule,omitempty"`
	Pattern string `json:"pattern,omitempty"`
	Refuses string `json:"refuses,omitempty"`
	Reason  string `json:"reason,omitempty"`
	Source  string `json:"source"` // "built in" or the config file
}

// builtIn is the source of the built-in rules.
const builtIn = "built in"

func runGuardRules(opts *guardRulesOptions) error {
	cwd, err := os.Getwd()
	if err != nil {
		return fmt.Errorf("current folder: %w", err)
	}
	ws, err := opts.workspaceFrom(cwd)
	var problems []error
	var cfgErr *loader.ConfigError
	switch {
	case errors.As(err, &cfgErr):
		problems = append(problems, err)
	case errors.Is(err, loader.ErrNoWorkspace):
		ws = nil
	case err != nil:
		return err
	}
	rules, err := events.GuardFor(ws, events.GuardAt{Home: opts.Getenv("HOME"), Cwd: cwd})
	if err != nil {
		problems = append(problems, err)
	}
	var list []guardRule
	for _, c := range guard.Classes {
		list = append(list, guardRule{Kind: "deny", Rule: c.Rule, Refuses: c.Refuses, Source: builtIn})
	}
	file := events.ConfigName(ws)
	for _, p := range guard.Presets {
		source := "preset, off (guard.presets)"
		if slices.Contains(rules.Presets(), p.Name) {
			source = file
		}
		list = append(list, guardRule{Kind: "preset", Rule: "preset-" + p.Name, Refuses: p.Refuses, Source: source})
	}
	for _, d := range rules.Denies() {
		list = append(list, guardRule{Kind: "deny", Rule: guard.RuleConfigDeny, Pattern: d.Pattern, Reason: d.Reason, Source: file})
	}
	for _, a := range rules.Allows() {
		list = append(list, guardRule{Kind: "allow", Pattern: a, Source: file})
	}
	if ws != nil {
		cfg, err := events.ApproveConfig(ws)
		if err != nil {
			problems = append(problems, err)
		}
		ap, err := guard.NewApprover(rules, cfg)
		problems = append(problems, events.PrefixEach(file, err)...)
		for _, p := range ap.Denies() {
			list = append(list, guardRule{Kind: "auto-approve-deny", Rule: guard.RuleAutoApproveDeny, Pattern: p, Source: file})
		}
	}
	var lines []string
	for _, p := range problems {
		lines = append(lines, strings.Split(p.Error(), "\n")...)
	}
	for _, l := range lines {
		opts.Warn("%s", l)
	}
	if opts.JSON {
		if err := opts.writeJSON(struct {
			Rules    []guardRule `json:"rules"`
			Problems []string    `json:"problems,omitempty"`
		}{list, lines}); err != nil {
			return err
		}
	} else {
		// A row is one line: what a rule refuses is cut, then its source, never
		// wrapped (--json has both whole).
		tw := &table{cuts: []columnCut{{col: 2, least: 40}, {col: 1, least: 12}, {col: 2, least: 20}}}
		tw.add("RULE", "SOURCE", "REFUSES")
		for _, r := range list {
			what := r.Refuses
			switch r.Kind {
			case "allow":
				r.Rule, what = "allow", "never refused: "+r.Pattern
			case "auto-approve-deny":
				what = "never auto-approved: " + r.Pattern
			default:
				if r.Pattern != "" {
					what = r.Pattern
					if r.Reason != "" {
						what += " (" + r.Reason + ")"
					}
				}
			}
			tw.add(r.Rule, r.Source, what)
		}
		if err := tw.write(opts.Out, opts.Width); err != nil {
			return err
		}
	}
	if len(lines) > 0 {
		return &exitError{code: exitFailure, err: errors.New("config problems"), silent: true}
	}
	return nil
}
