package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ctxtools/ctx/loader"
)

type projectsOptions struct {
	*App
	Status string
	JSON   bool
}

func newProjectsCmd(app *App) *cobra.Command {
	opts := &projectsOptions{App: app}
	cmd := &cobra.Command{
		Use:     "projects",
		Aliases: []string{"ls"},
		Short:   "List every project with its status and progress",
		Long: `List the projects of the workspace (02-projects/NN-slug and
02-projects/00-onboarding/NN-slug) with status and progress counted from their
steps files. A project whose files have problems is still listed, with the
problems named.`,
		Example: `  ctx projects
  ctx projects --status in_progress
  ctx projects --json`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runProjects(opts)
		},
	}
	cmd.Flags().StringVar(&opts.Status, "status", "", "only projects with this status (case-insensitive; several separated by commas)")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the projects as JSON")
	return cmd
}

// projectsOutput is the JSON shape of `ctx projects --json`.
type projectsOutput struct {
	SchemaVersion int               `json:"schema_version"`
	Workspace     string            `json:"workspace"`
	Projects      []*loader.Project `json:"projects"`
}

func runProjects(opts *projectsOptions) error {
	ws, err := opts.Workspace()
	if err != nil {
		return err
	}
	all, err := ws.Scan(loader.ReadOptions{Progress: true})
	if err != nil {
		return err
	}
	projects := filterStatus(all, opts.Status)
	opts.warnProblems(ws, projects...)
	if opts.JSON {
		return opts.writeProjectsJSON(projectsOutput{SchemaVersion: loader.SchemaVersion, Workspace: ws.Root, Projects: projects})
	}
	if len(all) == 0 {
		opts.Note("no projects in %s yet: `ctx new \"Name\"` makes one", ws.Rel(ws.ProjectsPath())+"/")
		return nil
	}
	renderProjects(opts.App, projects)
	return nil
}

func filterStatus(projects []*loader.Project, status string) []*loader.Project {
	out := make([]*loader.Project, 0, len(projects))
	if strings.TrimSpace(status) == "" {
		return append(out, projects...)
	}
	want := map[string]bool{}
	for _, s := range strings.Split(status, ",") {
		want[strings.ToUpper(strings.TrimSpace(s))] = true
	}
	for _, p := range projects {
		if want[strings.ToUpper(p.Status)] {
			out = append(out, p)
		}
	}
	return out
}

// writeProjectsJSON writes out as writeJSON does, byte for byte, but in a pipe one
// project at a time: 20,000 projects make about 9 MB of JSON, which the encoder would
// build in one buffer grown by doubling (some 30 MB of fresh memory, each page of it
// a page fault) before writing a byte. On a terminal the output is indented, and
// small enough: writeJSON.
func (a *App) writeProjectsJSON(out projectsOutput) error {
	if a.OutIsTTY || len(out.Projects) == 0 {
		return a.writeJSON(out)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(projectsOutput{SchemaVersion: out.SchemaVersion, Workspace: out.Workspace, Projects: []*loader.Project{}}); err != nil {
		return err
	}
	head, ok := bytes.CutSuffix(buf.Bytes(), []byte("[]}\n"))
	if !ok {
		return fmt.Errorf("projects JSON: unexpected shape %q", buf.Bytes())
	}
	w := bufio.NewWriterSize(a.dataOut(), 64<<10)
	_, _ = w.Write(head)
	_ = w.WriteByte('[')
	for i, p := range out.Projects {
		buf.Reset()
		if err := enc.Encode(p); err != nil {
			return err
		}
		if i > 0 {
			_ = w.WriteByte(',')
		}
		_, _ = w.Write(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
	}
	_, _ = w.WriteString("]}\n")
	return w.Flush()
}
