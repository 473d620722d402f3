package loader

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/ctxtools/ctx/markdown"
	"github.com/ctxtools/ctx/resume"
)

// SchemaVersion is the version of the JSON shapes ctx prints. It changes only when a key
// is removed or changes meaning; new keys may appear at any time.
const SchemaVersion = 1

// maxModifiedReads is how many of the Files Modified entries (the last listed) are
// recommended reads.
const maxModifiedReads = 5

// pendingShown is how many open tasks the resume prompt lists.
const pendingShown = PendingKept

// Result is the load: everything an agent needs to pick up a project where it stopped.
type Result struct {
	SchemaVersion    int           `json:"schema_version"`
	Workspace        string        `json:"workspace"`
	Project          *Project      `json:"project"`
	Resume           *resume.State `json:"resume"`
	PendingTasks     []PendingTask `json:"pending_tasks"`
	LastActions      []string      `json:"last_actions"`
	RecommendedReads []Read        `json:"recommended_reads"`
	Budget           *Budget       `json:"budget,omitempty"`
	Instructions     string        `json:"instructions"`
}

// PendingTask is an open checkbox of the steps file.
type PendingTask struct {
	Number  int    `json:"number"`
	Text    string `json:"text"`
	Section string `json:"section"`
	Line    int    `json:"line"`
}

// Budget reports how --budget cut the recommended reads.
type Budget struct {
	Tokens  int      `json:"tokens"`
	Used    int      `json:"used"`
	Dropped []string `json:"dropped"`
}

// LoadOptions tune the load.
type LoadOptions struct {
	// Budget, when positive, cuts the recommended reads to fit this many tokens; the
	// save point always stays.
	Budget int
}

// Load assembles the load result of a resolved project.
func (ws *Workspace) Load(p *Project, opts LoadOptions) *Result {
	r := &Result{
		SchemaVersion: SchemaVersion,
		Workspace:     ws.Root,
		Project:       p,
		Resume:        ws.ReadResume(p),
		PendingTasks:  []PendingTask{},
		LastActions:   []string{},
	}
	for _, t := range markdown.Pending(p.Pending, pendingShown) {
		r.PendingTasks = append(r.PendingTasks, PendingTask{Number: t.Number, Text: t.Text, Section: t.Section.Name, Line: t.Line})
	}
	if r.Resume.Exists {
		r.LastActions = r.Resume.LastActions()
	}
	if p.Steps == "" && p.Progress.TasksTotal == 0 && r.Resume.Exists {
		// No steps file: the progress the save point last recorded is the best known.
		if prog, ok := r.Resume.RecordedProgress(); ok {
			p.Progress = prog
		}
	}
	r.RecommendedReads = ws.RecommendedReads(p, r.Resume)
	if opts.Budget > 0 {
		r.RecommendedReads, r.Budget = cut(r.RecommendedReads, opts.Budget, r.Resume)
	}
	r.Instructions = instructions(r)
	return r
}

// RecommendedReads returns the ordered reads of a project given its resume state: the
// save point, then what it lists (curated), then what ctx picks itself.
func (ws *Workspace) RecommendedReads(p *Project, rs *resume.State) []Read {
	l := &readList{ws: ws, p: p, seen: map[string]bool{}}
	if rs.Exists {
		why := "save point: where work stopped and what comes next"
		if rs.Legacy {
			why = "save point (legacy location): where work stopped"
		}
		l.addAbs(rs.Abs, why)
	}
	source := rs.Path
	if rs.Exists {
		for _, entry := range rs.FrontmatterStrings("files_to_load") {
			l.addListed(entry, "listed in files_to_load", source, "files_to_load", true)
		}
		for _, key := range []string{"research", "research_files"} {
			for _, entry := range rs.FrontmatterStrings(key) {
				l.addListed(entry, "research named by the save point", source, key, true)
			}
		}
		for _, entry := range rs.LoadingSequence() {
			l.addListed(entry, "listed in the Loading Sequence", source, "Loading Sequence", true)
		}
	}
	if p.Overview != "" {
		l.addAbs(p.Overview, "overview: goals and scope")
	}
	if p.Plan != "" {
		l.addAbs(p.Plan, "plan: the approach")
	}
	if p.Steps != "" {
		why := "steps: the task list"
		if p.Progress.CurrentTask != "" {
			why = fmt.Sprintf("steps: the task list; next is task %d", p.Progress.CurrentTaskNumber)
		}
		l.addAbs(p.Steps, why)
	}
	for _, f := range workingFiles(filepath.Join(p.Dir, WorkingDir), maxWorkingFiles) {
		l.addAbs(f, "work in progress (recently changed)")
	}
	if rs.Exists {
		// Files Modified grows with every session: the last few listed are what the
		// next session may need; the rest is history, not reading.
		modified := rs.ModifiedFiles()
		for _, entry := range modified[max(0, len(modified)-maxModifiedReads):] {
			l.addListed(entry, "modified in an earlier session", source, "Files Modified", false)
		}
	}
	return l.reads
}

// cut keeps the reads that fit the budget, in order: the save point always, then the
// curated reads until one does not fit, then ctx's own picks until one does not fit.
// So a cut drops what ctx picked before anything the save point lists.
func cut(reads []Read, budget int, rs *resume.State) ([]Read, *Budget) {
	b := &Budget{Tokens: budget, Dropped: []string{}}
	keep := make([]bool, len(reads))
	for i, r := range reads {
		if rs.Exists && r.Path == rs.Path {
			keep[i] = true
			b.Used += r.Tokens
		}
	}
	full := false
	for _, curated := range []bool{true, false} {
		for i, r := range reads {
			if keep[i] || r.Curated != curated || full {
				continue
			}
			if b.Used+r.Tokens > budget {
				full = true
				continue
			}
			keep[i] = true
			b.Used += r.Tokens
		}
	}
	kept := []Read{}
	for i, r := range reads {
		if keep[i] {
			kept = append(kept, r)
		} else {
			b.Dropped = append(b.Dropped, r.Path)
		}
	}
	return kept, b
}

// instructions writes the short resume prompt for the agent.
func instructions(r *Result) string {
	p, rs := r.Project, r.Resume
	var b strings.Builder
	fmt.Fprintf(&b, "Resume project %s (%s)", p.ID, p.Name)
	if p.Status != "" {
		fmt.Fprintf(&b, ", status %s", p.Status)
	}
	if p.Progress.TasksTotal > 0 {
		fmt.Fprintf(&b, ", %d/%d tasks done (%d%%)", p.Progress.TasksCompleted, p.Progress.TasksTotal, p.Progress.Percent)
	}
	b.WriteString(".\n")
	if !rs.Exists {
		b.WriteString("There is no save point yet: read the overview and the steps, then start on the first open task.\n")
	} else {
		if rs.LastSession != "" {
			fmt.Fprintf(&b, "Work stopped at: %s.\n", strings.TrimSuffix(rs.LastSession, "."))
		}
		if rs.CurrentPhase != "" {
			fmt.Fprintf(&b, "Current phase: %s.\n", strings.TrimSuffix(rs.CurrentPhase, "."))
		}
		if len(r.LastActions) > 0 {
			b.WriteString("Last actions:\n")
			for _, a := range r.LastActions {
				fmt.Fprintf(&b, "- %s\n", a)
			}
		}
	}
	if len(r.PendingTasks) > 0 {
		b.WriteString("Pending tasks:\n")
		for _, t := range r.PendingTasks {
			fmt.Fprintf(&b, "- Task %d: %s", t.Number, t.Text)
			if t.Section != "" {
				fmt.Fprintf(&b, " (%s)", t.Section)
			}
			b.WriteString("\n")
		}
	} else if p.Progress.TasksTotal > 0 {
		b.WriteString("Every task in the steps file is done.\n")
	}
	first := ""
	if len(r.RecommendedReads) > 0 {
		first = "read " + r.RecommendedReads[0].Path
		if len(r.RecommendedReads) > 1 {
			first += " and the other recommended reads in order"
		}
	}
	next := rs.NextAction
	if next == "" && len(r.PendingTasks) > 0 {
		next = fmt.Sprintf("Task %d: %s", r.PendingTasks[0].Number, r.PendingTasks[0].Text)
	}
	switch {
	case first != "" && next != "":
		fmt.Fprintf(&b, "First %s; then continue with: %s.\n", first, strings.TrimSuffix(next, "."))
	case first != "":
		fmt.Fprintf(&b, "First %s.\n", first)
	case next != "":
		fmt.Fprintf(&b, "Continue with: %s.\n", strings.TrimSuffix(next, "."))
	}
	fmt.Fprintf(&b, "Save progress with `ctx save --project %s --summary \"...\" --next \"...\"` after each step.", p.ID)
	return b.String()
}
