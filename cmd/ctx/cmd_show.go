package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ctxtools/ctx/internal/events"
	"github.com/ctxtools/ctx/internal/termtext"
	"github.com/ctxtools/ctx/loader"
	"github.com/ctxtools/ctx/resume"
)

type showOptions struct {
	*App
	Project string
	JSON    bool
}

func newShowCmd(app *App) *cobra.Command {
	opts := &showOptions{App: app}
	cmd := &cobra.Command{
		Use:   "show [PROJECT]",
		Short: "Show a project's save point",
		Long: `Show the save point (_resume.md) of a project as a person reads it: where work
stopped, progress, counters, and its sections without ctx's markers. Without
PROJECT: the project bound to this session, else the newest save point.`,
		Example: `  ctx show 1
  ctx show --json`,
		Args: usageArgs(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.Project = args[0]
			}
			return runShow(opts)
		},
		ValidArgsFunction: completeProjects(app),
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the save point as JSON: frontmatter and sections")
	return cmd
}

type shownSection struct {
	Title string `json:"title"`
	Level int    `json:"level"`
	Body  string `json:"body"`
}

func runShow(opts *showOptions) error {
	ws, err := opts.Workspace()
	if err != nil {
		return err
	}
	sessionID, _ := events.CurrentID(opts.Getenv)
	p, _, err := events.TargetProject(opts.State(ws), opts.Project, currentDir(), sessionID)
	if err != nil {
		return inputError(err)
	}
	rs := ws.ReadResume(p)
	opts.warnProblems(ws, p)
	sections := []shownSection{}
	for _, s := range rs.Sections() {
		title := strings.TrimSpace(resume.WithoutMarkers(s.Title))
		sections = append(sections, shownSection{Title: title, Level: s.Level, Body: strings.TrimSpace(resume.WithoutMarkers(s.Body))})
	}
	if opts.JSON {
		return opts.writeJSON(struct {
			SchemaVersion int             `json:"schema_version"`
			Project       *loader.Project `json:"project"`
			Resume        *resume.State   `json:"resume"`
			Sections      []shownSection  `json:"sections"`
		}{loader.SchemaVersion, p, rs, sections})
	}
	s := style{opts.Color()}
	w := opts.Out
	if !rs.Exists {
		fmt.Fprintf(w, "%s  %s\n  %s\n", s.bold(p.ID), p.Name, rs.Note)
		return nil
	}
	fmt.Fprintf(w, "%s  %s  %s\n", s.bold(p.ID), p.Name, s.dim(rs.Path))
	fm := rs.Frontmatter
	fmt.Fprintf(w, "  saved     %s   sessions %v   compactions %v\n", rs.LastUpdated, orDash(fm["session_count"]), orDash(fm["compaction_count"]))
	fmt.Fprintf(w, "  progress  %d/%d tasks (%d%%)\n", p.Progress.TasksCompleted, p.Progress.TasksTotal, p.Progress.Percent)
	for _, line := range [][2]string{{"stopped", rs.LastSession}, {"phase", rs.CurrentPhase}, {"next", rs.NextAction}} {
		if line[1] != "" {
			fmt.Fprintf(w, "  %-9s %s\n", line[0], line[1])
		}
	}
	for _, sec := range sections {
		if sec.Level == 1 {
			continue
		}
		fmt.Fprintf(w, "\n%s %s\n", strings.Repeat("#", sec.Level), s.bold(sec.Title))
		if sec.Body == "" {
			continue
		}
		body := sec.Body
		if opts.Width > 0 {
			body = termtext.Reflow(body, opts.Width-2)
		}
		// A fenced block's lines are commands and code to copy: never broken, however
		// long (Reflow keeps them; the fitting writer would not).
		fenced := false
		for _, l := range strings.Split(body, "\n") {
			out := w
			if fence := termtext.IsFence(l); fenced || fence {
				out = unfitted(w)
				fenced = fenced != fence
			}
			fmt.Fprintf(out, "  %s\n", l)
		}
	}
	return nil
}

func orDash(v any) any {
	if v == nil {
		return "-"
	}
	return v
}
