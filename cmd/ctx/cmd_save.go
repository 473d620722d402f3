package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ctxtools/ctx/internal/events"
	"github.com/ctxtools/ctx/internal/state"
	"github.com/ctxtools/ctx/loader"
	"github.com/ctxtools/ctx/resume"
)

type saveOptions struct {
	*App
	Project     string
	Summary     string
	Next        string
	Phase       string
	Skill       string
	Decisions   []string
	Assumptions []string
	Blockers    []string
	Files       []string
	JSON        bool
	Close       bool
}

func addSaveFlags(cmd *cobra.Command, opts *saveOptions) {
	f := cmd.Flags()
	f.StringVarP(&opts.Project, "project", "p", "", "project number, id or part of its name (default: the one bound to this session, else the newest save point)")
	f.StringVar(&opts.Summary, "summary", "", "what this session did, in one line")
	f.StringVar(&opts.Next, "next", "", "what to do next (default: the first open task)")
	f.StringVar(&opts.Phase, "phase", "", "the current phase, e.g. planning, implementation, review")
	f.StringVar(&opts.Skill, "skill", "", "the skill or workflow in use")
	f.StringArrayVar(&opts.Decisions, "decision", nil, "a decision to remember (repeatable)")
	f.StringArrayVar(&opts.Assumptions, "assumption", nil, "an assumption to remember (repeatable)")
	f.StringArrayVar(&opts.Blockers, "blocker", nil, "a blocker or risk (repeatable)")
	f.StringArrayVar(&opts.Files, "file", nil, "a file this session changed, from the current folder, inside the workspace (repeatable)")
	f.BoolVar(&opts.JSON, "json", false, "print what was saved as JSON")
	_ = cmd.RegisterFlagCompletionFunc("project", completeProjects(opts.App))
}

func newSaveCmd(app *App, runF func(*saveOptions) error) *cobra.Command {
	return newSaveOrCloseCmd(app, false, runF, &cobra.Command{
		Use:   "save",
		Short: "Save progress to the project's _resume.md",
		Long: `Save progress: update the project's save point (01-planning/_resume.md,
created from the template when missing) and write a snapshot set to
.ctx/sessions/.

ctx recomputes what it owns — last_updated, progress and next task from the
steps file, the header lines (Last Session, Current Phase, Next Action), the
Loading Sequence — and appends what you
pass: decisions, assumptions and blockers under Critical Context, files under
Files Modified (with the files git shows changed), and this agent session's
Session History entry, updated in place by later saves. Everything else in the
file stays byte for byte as it was.`,
		Example: `  ctx save --summary "wired the address form to the API" --next "validate card expiry"
  ctx save -p 1 --decision "use Stripe Elements for card input" --file src/pay.ts
  ctx save --json`,
	})
}

func newCloseCmd(app *App, runF func(*saveOptions) error) *cobra.Command {
	return newSaveOrCloseCmd(app, true, runF, &cobra.Command{
		Use:   "close",
		Short: "Close the session: save, count it, and summarise",
		Long: `Close the session: everything 'ctx save' does, plus session_count + 1 and a
closed Session History entry ("Session N: summary, date"), then a closing
summary of where the project stands. A session is counted once: closing it again
updates its entry and counts nothing.`,
		Example: `  ctx close --summary "payment form done; 3-D Secure next"
  ctx close -p checkout --next "handle the 3-D Secure challenge"`,
	})
}

// newSaveOrCloseCmd completes the command of save or close: both take the same flags
// and run the same save.
func newSaveOrCloseCmd(app *App, closing bool, runF func(*saveOptions) error, cmd *cobra.Command) *cobra.Command {
	opts := &saveOptions{App: app, Close: closing}
	cmd.Args = usageArgs(cobra.NoArgs)
	cmd.RunE = func(*cobra.Command, []string) error {
		if runF != nil {
			return runF(opts)
		}
		return runSave(opts)
	}
	addSaveFlags(cmd, opts)
	return cmd
}

// saveOutput is the JSON shape of save and close.
type saveOutput struct {
	SchemaVersion int             `json:"schema_version"`
	Project       *loader.Project `json:"project"`
	Picked        string          `json:"picked"`
	ResumePath    string          `json:"resume_path"`
	Created       bool            `json:"created"`
	FromLegacy    string          `json:"from_legacy,omitempty"`
	Closed        bool            `json:"closed"`
	SessionNumber int             `json:"session_number,omitempty"`
	AddedSections []string        `json:"added_sections"`
	SnapshotID    string          `json:"snapshot_id"`
	Frontmatter   map[string]any  `json:"frontmatter"`
}

func runSave(opts *saveOptions) error {
	ws, err := opts.Workspace()
	if err != nil {
		return err
	}
	sessionID, _ := events.CurrentID(opts.Getenv)
	p, picked, err := events.TargetProject(opts.State(ws), opts.Project, currentDir(), sessionID)
	if err != nil {
		return err
	}
	if picked != events.PickedNamed {
		fmt.Fprintf(opts.Err, "ctx: saving %s (%s)\n", p.ID, picked)
	}
	files, err := checkFiles(ws, p, opts.Files)
	if err != nil {
		return inputError(err)
	}
	trigger := state.TriggerSave
	if opts.Close {
		trigger = state.TriggerClose
	}
	res, err := events.SaveProgress(opts.State(ws), p, events.SaveRequest{
		SessionID: sessionID,
		Trigger:   trigger,
		Now:       opts.Now(),
		Change: resume.Change{
			Summary: opts.Summary, Next: opts.Next, Phase: opts.Phase, Skill: opts.Skill,
			Decisions: opts.Decisions, Assumptions: opts.Assumptions, Blockers: opts.Blockers,
			Files: files, Close: opts.Close,
		},
	})
	if err != nil {
		if errors.Is(err, resume.ErrNotWritten) {
			return inputError(err)
		}
		return err
	}
	opts.warnProblems(ws, p)
	for _, note := range res.Saved.Notes {
		opts.Warn("%s", note)
	}
	if sessionID != "" {
		bindSession(opts.App, ws, p)
	}
	out := saveOutput{
		SchemaVersion: loader.SchemaVersion, Project: p, Picked: picked,
		ResumePath: ws.Rel(res.Saved.Path), Created: res.Saved.Created, Closed: opts.Close,
		SessionNumber: res.Saved.SessionNumber, AddedSections: nonNil(res.Saved.AddedSections),
		SnapshotID: res.SnapshotID, Frontmatter: res.Saved.Document.Frontmatter(),
	}
	if res.Saved.FromLegacy != "" {
		out.FromLegacy = ws.Rel(res.Saved.FromLegacy)
	}
	if opts.JSON {
		return opts.writeJSON(out)
	}
	renderSaved(opts.App, out, res.Saved.Document)
	return nil
}

// checkFiles reads each --file as a path from the current folder, as a shell user
// means it, and refuses one that leads outside the workspace; it is never re-rooted
// in the project or workspace folder.
func checkFiles(ws *loader.Workspace, p *loader.Project, files []string) ([]string, error) {
	cwd, err := os.Getwd()
	if err != nil {
		return nil, fmt.Errorf("current folder: %w", err)
	}
	out := make([]string, 0, len(files))
	for _, f := range files {
		abs := f
		if !filepath.IsAbs(abs) {
			abs = filepath.Join(cwd, abs)
		}
		checked, err := events.CheckFiles(ws, p, []string{abs})
		if err != nil {
			return nil, fmt.Errorf("--file %q: %w", f, errors.Unwrap(err))
		}
		out = append(out, checked...)
	}
	return out, nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func renderSaved(app *App, out saveOutput, doc *resume.Document) {
	s := style{app.Color()}
	w := app.Out
	verb := "Saved"
	switch {
	case out.Created && out.FromLegacy != "":
		verb = "Created (from " + out.FromLegacy + ")"
	case out.Created:
		verb = "Created"
	}
	if out.Closed {
		verb = "Closed session " + fmt.Sprint(out.SessionNumber) + "; saved"
	}
	fmt.Fprintf(w, "%s %s\n", verb, s.bold(out.ResumePath))
	p := out.Project
	fmt.Fprintf(w, "  progress  %d/%d tasks (%d%%)\n", p.Progress.TasksCompleted, p.Progress.TasksTotal, p.Progress.Percent)
	if next, ok := doc.Header(resume.NextAction); ok {
		fmt.Fprintf(w, "  next      %s\n", next)
	}
	if len(out.AddedSections) > 0 {
		fmt.Fprintf(w, "  added     missing sections: %s\n", strings.Join(out.AddedSections, ", "))
	}
	fmt.Fprintf(w, "  snapshot  .ctx/sessions/%s.json\n", out.SnapshotID)
	if out.Closed {
		fmt.Fprintf(w, "\nNext session: run `ctx --resume --project %s` to pick up here.\n", p.ID)
	}
}
