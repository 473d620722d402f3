package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ctxtools/ctx/templates"
)

type templatesOptions struct {
	*App
	Name     string
	JSON     bool
	Embedded bool
}

// templateUses says what each template creates, for `ctx templates list`.
var templateUses = map[string]string{
	templates.Resume:   "the save point, 01-planning/_resume.md (ctx save, ctx close, ctx new)",
	templates.Overview: "01-planning/overview.md of a new project (ctx new)",
	templates.Plan:     "01-planning/plan.md of a new project (ctx new)",
	templates.Steps:    "01-planning/steps.md of a new project (ctx new)",
}

func newTemplatesCmd(app *App) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "templates",
		Short: "See the templates ctx creates files from, and which ones you overrode",
		Long: `ctx creates a project's planning files and its save point from built-in
templates (Go text/template). A file of the same name in the workspace's
.ctx/templates/ folder is used instead: make the folder, copy one out with
'ctx templates show NAME --embedded > .ctx/templates/NAME' and edit it.`,
		Example: `  ctx templates list
  ctx templates show steps
  mkdir -p .ctx/templates
  ctx templates show resume --embedded > .ctx/templates/resume.md.tmpl
  ctx templates path`,
		Args: usageArgs(cobra.NoArgs),
	}
	cmd.AddCommand(newTemplatesListCmd(app), newTemplatesShowCmd(app), newTemplatesPathCmd(app))
	return cmd
}

func newTemplatesListCmd(app *App) *cobra.Command {
	opts := &templatesOptions{App: app}
	cmd := &cobra.Command{
		Use:     "list",
		Short:   "List the templates, each built in or overridden in .ctx/templates/",
		Example: "  ctx templates list\n  ctx templates list --json",
		Args:    usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runTemplatesList(opts)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the templates as JSON")
	return cmd
}

func newTemplatesShowCmd(app *App) *cobra.Command {
	opts := &templatesOptions{App: app}
	cmd := &cobra.Command{
		Use:   "show NAME",
		Short: "Print a template: the one in force, or with --embedded the built-in one",
		Example: `  ctx templates show steps
  ctx templates show resume.md.tmpl --embedded`,
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Name = args[0]
			return runTemplatesShow(opts)
		},
	}
	cmd.Flags().BoolVar(&opts.Embedded, "embedded", false, "print the built-in template even where the workspace overrides it")
	return cmd
}

func newTemplatesPathCmd(app *App) *cobra.Command {
	opts := &templatesOptions{App: app}
	return &cobra.Command{
		Use:     "path",
		Short:   "Print the workspace's override folder, .ctx/templates/",
		Example: "  ctx templates path\n  mkdir -p \"$(ctx templates path)\"",
		Args:    usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			ws, err := opts.Workspace()
			if err != nil {
				return err
			}
			_, err = fmt.Fprintln(opts.dataOut(), ws.StatePath("templates")) // a path for scripts: whole
			return err
		},
	}
}

// templateName accepts a template's file name or its short form: "steps", "steps.md".
func templateName(name string) (string, error) {
	for _, n := range templates.Names() {
		if name == n || name == strings.TrimSuffix(n, ".tmpl") || name == strings.TrimSuffix(n, ".md.tmpl") {
			return n, nil
		}
	}
	return "", inputError(fmt.Errorf("template %q: unknown; the templates are %s", name, strings.Join(templates.Names(), ", ")))
}

type templateInfo struct {
	Name   string `json:"name"`
	Source string `json:"source"` // "embedded" or the override's path
	Used   string `json:"used_for"`
}

func runTemplatesList(opts *templatesOptions) error {
	ws, err := opts.Workspace()
	if err != nil {
		return err
	}
	dir := ws.StatePath("templates")
	set := templates.Set{Dir: dir}
	var list []templateInfo
	for _, name := range templates.Names() {
		_, source, err := set.Source(name)
		if err != nil {
			return err
		}
		list = append(list, templateInfo{name, source, templateUses[name]})
	}
	// A file in the override folder that names no template is never used: say so, for
	// a typo there would otherwise go unnoticed.
	if entries, err := os.ReadDir(dir); err == nil {
		for _, e := range entries {
			if _, err := templateName(e.Name()); err != nil && !e.IsDir() {
				opts.Warn("%s/%s: not a template name, so it is not used (%s)", dir, e.Name(), strings.Join(templates.Names(), ", "))
			}
		}
	}
	if opts.JSON {
		return opts.writeJSON(struct {
			OverrideDir string         `json:"override_dir"`
			Templates   []templateInfo `json:"templates"`
		}{dir, list})
	}
	for _, t := range list {
		source := "built in"
		if t.Source != "embedded" {
			source = "overridden by " + ws.Rel(t.Source)
		}
		fmt.Fprintf(opts.Out, "%-18s %s\n%-18s for %s\n", t.Name, source, "", t.Used)
	}
	fmt.Fprintf(opts.Err, "overrides go in %s\n", dir)
	return nil
}

func runTemplatesShow(opts *templatesOptions) error {
	name, err := templateName(opts.Name)
	if err != nil {
		return err
	}
	set := templates.Set{}
	if !opts.Embedded {
		ws, err := opts.Workspace()
		if err != nil {
			return err
		}
		set.Dir = ws.StatePath("templates")
	}
	data, source, err := set.Source(name)
	if err != nil {
		return err
	}
	if source != "embedded" {
		opts.Warn("%s overrides the built-in template", source)
	}
	_, err = opts.dataOut().Write(data)
	return err
}
