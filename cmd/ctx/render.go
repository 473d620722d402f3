package main

import (
	"encoding/json"
	"fmt"
	"io"
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
// captured screen): never fitted to the terminal's width.
func (a *App) dataOut() io.Writer {
	if fw, ok := a.Out.(*termtext.Writer); ok {
		return fw.Underlying()
	}
	return a.Out
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
		width := 0
		for _, rd := range r.RecommendedReads {
			width = max(width, utf8.RuneCountInString(rd.Path))
		}
		for i, rd := range r.RecommendedReads {
			cost := usage.Brief(int64(rd.Tokens))
			switch {
			case rd.Directory:
				cost = "folder"
			case !rd.Exists:
				cost = "missing"
			}
			fmt.Fprintf(w, "  %2d. %-*s  %7s  %s\n", i+1, width, rd.Path, cost, s.dim(rd.Why))
		}
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

// renderProjects prints the project list: a bar and colour on a terminal, plain
// columns otherwise.
func renderProjects(app *App, projects []*loader.Project) {
	s := style{app.Color()}
	tty := app.OutIsTTY
	idW, stW := len("PROJECT"), len("STATUS")
	for _, p := range projects {
		idW = max(idW, utf8.RuneCountInString(p.Path))
		stW = max(stW, utf8.RuneCountInString(statusText(p)))
	}
	progressHeader := "DONE"
	if tty {
		progressHeader = "PROGRESS"
	}
	// On a narrow terminal the name is cut to what is left of the row, and when even
	// that is too little, the path keeps its end (the project's own folder).
	nameW := 0
	if app.Width > 0 {
		fixed := 2 + stW + 2 + progressWidth(tty) + 2
		nameW = app.Width - fixed - idW
		if nameW < minNameWidth {
			nameW = minNameWidth
			idW = max(len("PROJECT"), app.Width-fixed-nameW)
		}
	}
	fmt.Fprintf(app.Out, "%-*s  %-*s  %s  %s\n", idW, "PROJECT", stW, "STATUS", pad(progressHeader, progressWidth(tty)), "NAME")
	for _, p := range projects {
		st := statusText(p)
		stCell := s.status(st) + strings.Repeat(" ", stW-utf8.RuneCountInString(st))
		var prog string
		if tty {
			prog = fmt.Sprintf("%s %3d%%", s.green(bar(p.Progress.Percent, 10)), p.Progress.Percent)
		} else {
			prog = pad(fmt.Sprintf("%d/%d %d%%", p.Progress.TasksCompleted, p.Progress.TasksTotal, p.Progress.Percent), progressWidth(tty))
		}
		name, problems := p.Name, ""
		if len(p.Problems) > 0 {
			problems = fmt.Sprintf("  (%d problem(s))", len(p.Problems))
		}
		if nameW > 0 {
			name, problems = cutEnd(name, nameW), cutEnd(problems, nameW-utf8.RuneCountInString(cutEnd(name, nameW)))
		}
		fmt.Fprintf(app.Out, "%-*s  %s  %s  %s%s\n", idW, projectCell(p, idW), stCell, prog, name, s.dim(problems))
	}
}

// minNameWidth is the fewest columns a project's name is cut to on a narrow terminal.
const minNameWidth = 16

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

// projectCell names a project in width columns: its path, else its id (which starts
// with the number people type), cut at the end when even that is too wide.
func projectCell(p *loader.Project, width int) string {
	if utf8.RuneCountInString(p.Path) <= width {
		return p.Path
	}
	return cutEnd(p.ID, width)
}

func statusText(p *loader.Project) string {
	if p.Status == "" {
		return "-"
	}
	return p.Status
}

func progressWidth(tty bool) int {
	if tty {
		return 15
	}
	return 14
}

func pad(s string, width int) string {
	if n := utf8.RuneCountInString(s); n < width {
		return s + strings.Repeat(" ", width-n)
	}
	return s
}
