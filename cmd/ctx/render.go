package main

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"path"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/ctxtools/ctx/internal/termtext"
	"github.com/ctxtools/ctx/loader"
	"github.com/ctxtools/ctx/usage"
)

// writeJSON prints v as JSON: indented on a terminal, compact in a pipe, where an agent
// reads it and every space is a token it pays for.
func (a *App) writeJSON(v any) error {
	enc := json.NewEncoder(a.dataOut())
	if a.OutIsTTY {
		enc.SetIndent("", "  ")
	}
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// dataOut is Out for data that must come out byte for byte (JSON, a template, a
// captured screen, a hook's answer to Claude Code, a command line to run): never
// fitted to a width, on a terminal or in a pipe.
func (a *App) dataOut() io.Writer { return unfitted(a.Out) }

// unfitted is the writer under w when w fits text to a width, else w.
func unfitted(w io.Writer) io.Writer {
	if fw, ok := w.(*termtext.Writer); ok {
		return fw.Underlying()
	}
	return w
}

// pipeWidth is the width text is fitted to when stdout is not a terminal: $COLUMNS
// when it is a number (a person's override, as on a terminal), else 80, the width
// of the terminal or pager a person most likely reads a pipe's text in. Data (see
// dataOut) is never fitted.
func pipeWidth(columns string) int {
	if n, ok := columnsOverride(columns); ok {
		return n
	}
	return 80
}

// columnsOverride is $COLUMNS when it is a number: a person's width, or 0 for lines
// left whole.
func columnsOverride(columns string) (int, bool) {
	if n, err := strconv.Atoi(columns); err == nil && n >= 0 {
		return n, true
	}
	return 0, false
}

// count is n things in words: "1 commit", "3 commits".
func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// style applies ANSI colours when they are on.
type style struct{ on bool }

func (s style) wrap(code, text string) string {
	if !s.on || text == "" {
		return text
	}
	return "\x1b[" + code + "m" + text + "\x1b[0m"
}

func (s style) bold(t string) string  { return s.wrap("1", t) }
func (s style) dim(t string) string   { return s.wrap("2", t) }
func (s style) green(t string) string { return s.wrap("32", t) }
func (s style) red(t string) string   { return s.wrap("31", t) }

func (s style) status(status string) string {
	switch strings.ToUpper(status) {
	case "IN_PROGRESS", "ACTIVE":
		return s.wrap("33", status)
	case "COMPLETE":
		return s.wrap("32", status)
	case "PLANNING":
		return s.wrap("36", status)
	case "ARCHIVED":
		return s.wrap("2", status)
	}
	return status
}

// bar draws a progress bar of width cells.
func bar(percent, width int) string {
	filled := percent * width / 100
	return strings.Repeat("█", filled) + strings.Repeat("░", width-filled)
}

// renderBriefing prints the load as a person reads it: who, how far, what next, and
// what to read.
func renderBriefing(app *App, out loadOutput) {
	s := style{app.Color()}
	r := out.Result
	p, rs := r.Project, r.Resume
	w := app.Out
	status := ""
	if p.Status != "" {
		status = "  " + s.status(p.Status)
	}
	fmt.Fprintf(w, "%s  %s%s\n", s.bold(p.ID), p.Name, status)
	if p.Progress.TasksTotal > 0 {
		fmt.Fprintf(w, "  progress  %s %d/%d tasks (%d%%)\n", s.green(bar(p.Progress.Percent, 20)),
			p.Progress.TasksCompleted, p.Progress.TasksTotal, p.Progress.Percent)
	} else {
		fmt.Fprintf(w, "  progress  no tasks in a steps file\n")
	}
	if len(r.PendingTasks) > 0 {
		t := r.PendingTasks[0]
		section := ""
		if t.Section != "" {
			section = s.dim("  (" + t.Section + ")")
		}
		fmt.Fprintf(w, "  next      task %d: %s%s\n", t.Number, t.Text, section)
	}
	if rs.Exists {
		line := func(label, value string) {
			if value != "" {
				fmt.Fprintf(w, "  %-9s %s\n", label, value)
			}
		}
		line("stopped", rs.LastSession)
		line("phase", rs.CurrentPhase)
		line("action", rs.NextAction)
		saved := rs.Path
		if rs.LastUpdated != "" {
			saved = rs.LastUpdated + "  " + s.dim(rs.Path)
		}
		line("saved", saved)
	} else {
		fmt.Fprintf(w, "  saved     %s\n", s.dim(rs.Note))
	}
	if rs.Exists && rs.Legacy {
		fmt.Fprintf(w, "  note      %s\n", rs.Note)
	}
	if len(r.RecommendedReads) > 0 {
		total := 0
		for _, rd := range r.RecommendedReads {
			total += rd.Tokens
		}
		fmt.Fprintf(w, "\n%s %s\n", s.bold("Read, in order"), s.dim(fmt.Sprintf("(~%s tokens)", usage.Brief(int64(total)))))
		renderReads(w, s, r.RecommendedReads, app.Width)
	}
	if r.Budget != nil && len(r.Budget.Dropped) > 0 {
		fmt.Fprintf(w, "  %s\n", s.dim(fmt.Sprintf("%d more left out to fit --budget %d", len(r.Budget.Dropped), r.Budget.Tokens)))
	}
	if len(p.Problems) > 0 {
		fmt.Fprintf(w, "\n%s\n", s.bold("Problems"))
		for _, problem := range p.Problems {
			fmt.Fprintf(w, "  - %s\n", problem)
		}
	}
	fmt.Fprintf(w, "\n%s\n", s.bold("Resume prompt"))
	for _, line := range strings.Split(r.Instructions, "\n") {
		fmt.Fprintf(w, "  %s\n", line)
	}
}

// renderReads prints the reading list, one row a file: number, path, tokens, why.
// When a row does not fit in width columns (0: any width fits), every file takes two
// lines, its path alone on the first and its tokens and why under it, so that paths
// stay whole and line up.
func renderReads(w io.Writer, s style, reads []loader.Read, width int) {
	pathW, costW, whyW := 0, 0, 0
	costs := make([]string, len(reads))
	for i, rd := range reads {
		costs[i] = usage.Brief(int64(rd.Tokens))
		switch {
		case rd.Directory:
			costs[i] = "folder"
		case !rd.Exists:
			costs[i] = "missing"
		}
		pathW = max(pathW, utf8.RuneCountInString(rd.Path))
		costW = max(costW, utf8.RuneCountInString(costs[i]))
		whyW = max(whyW, utf8.RuneCountInString(rd.Why))
	}
	oneLine := width <= 0 || len("  99. ")+pathW+len("  1234567  ")+whyW <= width
	for i, rd := range reads {
		if oneLine {
			fmt.Fprintf(w, "  %2d. %-*s  %7s  %s\n", i+1, pathW, rd.Path, costs[i], s.dim(rd.Why))
			continue
		}
		fmt.Fprintf(w, "  %2d. %s\n      %*s  %s\n", i+1, rd.Path, costW, costs[i], s.dim(rd.Why))
	}
}

// renderProjects prints the project list, one row a project: its id, status,
// progress (a bar on a terminal) and name. Projects from more than one folder (the
// projects folder, its 00-onboarding, 02-builds/active …) are listed under their
// folder's path, so that the first column is every project's id alone. A row is cut
// rather than wrapped: when it is wider than app.Width, its problems, then its name
// (to minNameWidth), then its id (to its number) are cut.
func renderProjects(app *App, projects []*loader.Project) {
	s := style{app.Color()}
	tty := app.OutIsTTY
	progressHeader := "DONE"
	if tty {
		progressHeader = "PROGRESS"
	}
	idW, stW, progW, nameW := len("ID"), len("STATUS"), len(progressHeader), len("NAME")
	for _, p := range projects {
		idW = max(idW, utf8.RuneCountInString(p.ID))
		stW = max(stW, utf8.RuneCountInString(statusText(p)))
		prog, _ := progressCell(p, tty, style{})
		progW = max(progW, utf8.RuneCountInString(prog))
		nameW = max(nameW, utf8.RuneCountInString(p.Name+problemsText(p)))
	}
	if app.Width > 0 {
		fixed := stW + 2 + progW + 2
		nameW = min(nameW, max(app.Width-fixed-idW-2, minNameWidth))
		idW = min(idW, max(minIDWidth, app.Width-fixed-nameW-2))
	}
	fmt.Fprintf(app.Out, "%s  %s  %s  %s\n", pad("ID", idW), pad("STATUS", stW), pad(progressHeader, progW), "NAME")
	groups := projectGroups(projects)
	for i, g := range groups {
		if len(groups) > 1 {
			if i > 0 {
				fmt.Fprintln(app.Out)
			}
			fmt.Fprintln(app.Out, s.bold(g.folder+"/"))
		}
		for _, p := range g.projects {
			st := statusText(p)
			prog, progStyled := progressCell(p, tty, s)
			name := cutEnd(p.Name, nameW)
			problems := cutEnd(problemsText(p), nameW-utf8.RuneCountInString(name))
			fmt.Fprintf(app.Out, "%s  %s  %s  %s%s\n", pad(cutEnd(p.ID, idW), idW),
				padStyled(s.status(st), st, stW), padStyled(progStyled, prog, progW), name, s.dim(problems))
		}
	}
}

// projectGroup is the projects of one folder, in the order they were listed.
type projectGroup struct {
	folder   string
	projects []*loader.Project
}

// projectGroups groups projects by the folder holding them, in groupRank's order.
func projectGroups(projects []*loader.Project) []projectGroup {
	var groups []projectGroup
	for _, p := range projects {
		folder := path.Dir(p.Path)
		i := slices.IndexFunc(groups, func(g projectGroup) bool { return g.folder == folder })
		if i < 0 {
			groups = append(groups, projectGroup{folder: folder})
			i = len(groups) - 1
		}
		groups[i].projects = append(groups[i].projects, p)
	}
	slices.SortStableFunc(groups, func(a, b projectGroup) int {
		return cmp.Or(cmp.Compare(groupRank(a.folder), groupRank(b.folder)), strings.Compare(a.folder, b.folder))
	})
	return groups
}

// groupRank orders the folders of a listing: the projects folder first (a folder of
// the workspace's top level), then its onboarding projects, then the rest (02-builds).
func groupRank(folder string) int {
	switch {
	case !strings.Contains(folder, "/"):
		return 0
	case path.Base(folder) == loader.OnboardingDir:
		return 1
	}
	return 2
}

// progressCell is a project's progress as its row shows it, plain (to measure) and
// in s's colours: tasks done, of all, and the percentage; on a terminal a bar and
// the percentage; "-" for a project without tasks.
func progressCell(p *loader.Project, tty bool, s style) (plain, styled string) {
	if p.Progress.TasksTotal == 0 {
		return "-", s.dim("-") // no tasks: nothing done of nothing is no progress to show
	}
	if !tty {
		plain = fmt.Sprintf("%d/%d %d%%", p.Progress.TasksCompleted, p.Progress.TasksTotal, p.Progress.Percent)
		return plain, plain
	}
	b, percent := bar(p.Progress.Percent, 10), fmt.Sprintf(" %3d%%", p.Progress.Percent)
	return b + percent, s.green(b) + percent
}

// problemsText follows a project's name when its files have problems.
func problemsText(p *loader.Project) string {
	if len(p.Problems) == 0 {
		return ""
	}
	return "  (" + count(len(p.Problems), "problem") + ")"
}

// minNameWidth and minIDWidth are the fewest columns a project's name and id are cut
// to on a narrow terminal: a cut id keeps its number ("01-ch…").
const (
	minNameWidth = 16
	minIDWidth   = 6
)

// cutEnd cuts s to width columns, ending it with "…" when cut.
func cutEnd(s string, width int) string {
	if width <= 0 {
		return ""
	}
	r := []rune(s)
	if len(r) <= width {
		return s
	}
	return string(r[:width-1]) + "…"
}

func statusText(p *loader.Project) string {
	if p.Status == "" {
		return "-"
	}
	return p.Status
}

func pad(s string, width int) string {
	if n := utf8.RuneCountInString(s); n < width {
		return s + strings.Repeat(" ", width-n)
	}
	return s
}

// padStyled pads styled, which is plain in colour, to width columns.
func padStyled(styled, plain string, width int) string {
	return styled + strings.Repeat(" ", max(width-utf8.RuneCountInString(plain), 0))
}

// table lays rows of cells out in columns two spaces apart, as text/tabwriter does,
// and prints each row as one line (tabwriter writes a cell at a time, which the
// termtext.Writer cannot fit). A table is read by people and by scripts (awk, grep,
// cut), so a row is cut rather than wrapped: when rows are wider than the width, the
// columns in cuts are cut with "…", in order, each down to its least width. Columns
// are measured in runes: cells hold no colour.
type table struct {
	rows [][]string
	cuts []columnCut
}

// columnCut names a column a table may cut, and the fewest columns it keeps.
type columnCut struct{ col, least int }

func (t *table) add(cells ...string) { t.rows = append(t.rows, cells) }

// write prints the table fitted to width columns (0: as wide as its cells). A row
// still wider than that (its columns cut as far as they go) stays one line: it goes
// past the fitting writer, which would wrap it.
func (t *table) write(w io.Writer, width int) error {
	w = unfitted(w)
	var widths []int
	for _, row := range t.rows {
		for i, cell := range row {
			if i == len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], utf8.RuneCountInString(cell))
		}
	}
	total := 2 * max(len(widths)-1, 0)
	for _, cw := range widths {
		total += cw
	}
	for _, c := range t.cuts {
		if width <= 0 || total <= width || c.col >= len(widths) {
			continue
		}
		by := min(total-width, max(widths[c.col]-c.least, 0))
		widths[c.col] -= by
		total -= by
	}
	var b strings.Builder
	for _, row := range t.rows {
		b.Reset()
		for i, cell := range row {
			cell = cutEnd(cell, widths[i])
			if i == len(row)-1 {
				b.WriteString(cell)
				break
			}
			b.WriteString(pad(cell, widths[i]) + "  ")
		}
		if _, err := fmt.Fprintln(w, b.String()); err != nil {
			return err
		}
	}
	return nil
}
