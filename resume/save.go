package resume

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ctxtools/ctx/internal/durable"
	"github.com/ctxtools/ctx/markdown"
	"github.com/ctxtools/ctx/templates"
)

// Change is what one save records beyond what ctx computes itself.
type Change struct {
	Summary     string
	Next        string
	Phase       string
	Skill       string
	Decisions   []string
	Assumptions []string
	Blockers    []string
	// Files are paths the caller already checked to be inside the workspace, written
	// as they should appear (relative to the project folder or the workspace).
	Files []string
	// Close counts the session and closes its Session History entry.
	Close bool
	// SessionKey names the agent session's history entry (a file-safe id).
	SessionKey string
	// NoAgentSession marks a save without an agent session (SessionKey names the day):
	// once that entry is closed, the next save opens another, so two closes on one day
	// count two sessions.
	NoAgentSession bool
	// Trigger says what saved: save, close, new, auto, pre-compact.
	Trigger string
	// CompactionDelta is added to compaction_count (1 at a compaction).
	CompactionDelta int
	// TokensApprox, when positive, is written as total_tokens_approx.
	TokensApprox int
	Now          time.Time
}

// Saved reports what a save did.
type Saved struct {
	Path          string // absolute path of the save point written
	Created       bool   // the file did not exist before
	FromLegacy    string // the legacy file it was seeded from, if any
	SessionNumber int
	AddedSections []string
	// Notes say what the save could not do and kept instead ("progress kept from the
	// last save: ...").
	Notes    []string
	Document *Document
}

// ErrNotWritten wraps every error that left the save point untouched.
var ErrNotWritten = errors.New("save point not written")

// Target is the save point a save writes and what the save needs of its project and
// workspace, handed in by the caller (loader.Workspace.SaveTarget), so that this
// package knows no workspace.
type Target struct {
	// Path is the canonical save point (absolute).
	Path string
	// Current finds the file in use, which may be a legacy one the save continues at
	// Path, or "" when there is none. It is asked under the lock: a save that raced to
	// create the file reads what the winner wrote.
	Current func() string
	// Rel shows a path as the person knows it (relative to the workspace).
	Rel func(abs string) string
	// LockDir holds the save point's lock, out of the person's folders.
	LockDir string
	// Templates renders the save point's template (Render(templates.Resume, data)).
	Templates templates.Set
	Project   Project
	// Reads are the recommended reads of the project as if d were its save point: the
	// save's Loading Sequence is derived from them.
	Reads func(d *Document) []Read
	// Prepare, when set, runs under the lock before anything is read (the state folder).
	Prepare func() error
}

// Project is what a save needs to know of the project.
type Project struct {
	ID, Name, Status, Description string
	Number                        int
	Path                          string // relative to the workspace
	Progress                      markdown.Progress
	// StepsProblem says why the steps file could not be read: progress is then unknown.
	StepsProblem string
}

// Read is one recommended read, as the Loading Sequence lists it.
type Read struct {
	Path   string // relative to the workspace
	Why    string
	Exists bool
}

// Save updates (or creates) the save point under its lock: it re-reads the file after
// locking, adds missing template sections, recomputes the fields ctx owns, appends what
// the change records, and writes atomically. A save point whose frontmatter does not
// parse is not written; the error names file and line.
func Save(t Target, c Change) (*Saved, error) {
	if err := durable.MkdirAll(filepath.Dir(t.Path), 0o755); err != nil {
		return nil, err
	}
	if t.Prepare != nil {
		if err := t.Prepare(); err != nil {
			return nil, err
		}
	}
	if err := durable.MkdirAll(t.LockDir, 0o755); err != nil {
		return nil, err
	}
	var saved *Saved
	err := durable.WithLockIn(context.Background(), t.LockDir, t.Path, func() error {
		durable.RemoveStaleTemps(filepath.Dir(t.Path), filepath.Base(t.Path))
		var err error
		saved, err = SaveUnlocked(t, c)
		return err
	})
	if err != nil {
		return nil, err
	}
	return saved, nil
}

// SaveUnlocked is Save for a save point no other process can know yet (a project being
// created in a temporary folder): no lock is taken.
func SaveUnlocked(t Target, c Change) (*Saved, error) {
	saved := &Saved{Path: t.Path}
	current := ""
	if t.Current != nil {
		current = t.Current()
	}
	src, err := readCurrent(t, current)
	if err != nil {
		return nil, err
	}
	owner, err := writable(t, t.Path)
	if err != nil {
		return nil, err
	}
	data := templateData(t.Project, c)
	var tmpl []byte
	if src == nil {
		saved.Created = true
		if src, err = t.Templates.Render(templates.Resume, data); err != nil {
			return nil, err
		}
		tmpl = src
	} else if current != t.Path {
		saved.Created, saved.FromLegacy = true, current
	}
	rel := t.Rel(t.Path)
	if current != "" {
		rel = t.Rel(current)
	}
	d := Parse(src)
	if err := d.editable(); err != nil {
		return nil, fmt.Errorf("%s: %w", markdown.Locate(rel, err), ErrNotWritten)
	}
	// The template is rendered only for a save that adds a section it lacks.
	template := func() ([]byte, error) {
		if tmpl != nil {
			return tmpl, nil
		}
		return t.Templates.Render(templates.Resume, data)
	}
	out, err := edit(t, c, d, template, saved)
	if err != nil {
		return nil, fmt.Errorf("%s: %w: %w", rel, err, ErrNotWritten)
	}
	saved.Document = out
	if err := durable.WriteFile(t.Path, out.Bytes(), owner.mode); err != nil {
		return nil, err
	}
	if note := owner.restore(t.Path); note != "" {
		saved.Notes = append(saved.Notes, t.Rel(t.Path)+": "+note)
	}
	return saved, nil
}

// edit makes the save's edits to d in three rounds, each planned against one parse and
// checked by the parse of its result: the sections the save writes into, then every
// field, header and item, then the Loading Sequence, derived from the document the
// second round made.
func edit(t Target, c Change, d *Document, template func() ([]byte, error), saved *Saved) (*Document, error) {
	read := d
	ctxSaved := d.savedByCtx()
	if need := neededSections(d, c); len(need) > 0 {
		tmpl, err := template()
		if err != nil {
			return nil, err
		}
		p := newPlan(d)
		saved.AddedSections = p.ensureSections(tmpl, need)
		if d, err = p.run(); err != nil {
			return nil, err
		}
	}
	e := &editor{plan: newPlan(d), d: d, ctxSaved: ctxSaved}
	if err := e.apply(t, c, saved); err != nil {
		return nil, err
	}
	d, err := e.plan.run()
	if err != nil {
		return nil, err
	}
	p := newPlan(d)
	if err := p.replaceBlock(SectionLoadingSequence, blockLoading, loadingSequence(t.Project, t.Rel(t.Path), t.Reads(d))); err != nil {
		return nil, err
	}
	if d, err = p.run(); err != nil {
		return nil, err
	}
	if err := keptValues(read.Frontmatter(), d.Frontmatter()); err != nil {
		return nil, err
	}
	return d, nil
}

// neededSections names the template sections this save writes into and the document
// lacks: the ones ctx computes on every save, and the ones that receive an item of
// this change. A section with nothing to write is never added.
func neededSections(d *Document, c Change) []string {
	need := []string{SectionLoadingSequence, SectionCompaction}
	if c.SessionKey != "" {
		need = append(need, SectionSessionHistory)
	}
	for _, sub := range []struct {
		items []string
		title string
	}{{c.Decisions, SubsectionDecisions}, {c.Assumptions, SubsectionAssumptions}, {c.Blockers, SubsectionBlockers}} {
		if _, ok := d.findSection(SectionCriticalContext, sub.title); len(sub.items) > 0 && !ok {
			need = append(need, SectionCriticalContext)
			break
		}
	}
	for _, f := range c.Files {
		if !d.listsFile(f) {
			need = append(need, SectionFilesModified)
			break
		}
	}
	var missing []string
	for _, title := range need {
		if _, ok := d.findSection(title); !ok {
			missing = append(missing, title)
		}
	}
	return missing
}

// keptValues checks the last line of defence: every frontmatter key ctx does not own
// reads back with the value it had.
func keptValues(before, after map[string]any) error {
	owned := map[string]bool{}
	for _, k := range FrontmatterKeys {
		owned[k] = true
	}
	for k, v := range before {
		if owned[k] {
			continue
		}
		if got, ok := after[k]; !ok || !reflect.DeepEqual(got, v) {
			return fmt.Errorf("frontmatter: the edit would change %q", k)
		}
	}
	return nil
}

// readCurrent returns the bytes of the save point in use (canonical or legacy), or nil
// when there is none.
func readCurrent(t Target, current string) ([]byte, error) {
	if current == "" {
		return nil, nil
	}
	fi, err := os.Stat(current)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", t.Rel(current), err)
	}
	if fi.Size() > MaxBytes {
		return nil, fmt.Errorf("%s: over %d MB: %w", t.Rel(current), MaxBytes>>20, ErrNotWritten)
	}
	data, err := os.ReadFile(current)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", t.Rel(current), err)
	}
	return data, nil
}

func templateData(p Project, c Change) templates.Data {
	// Text given on the command line is one line of the document: a "## " in it stays
	// text and never becomes a heading.
	c.Summary, c.Next, c.Phase = oneLine(c.Summary), oneLine(c.Next), oneLine(c.Phase)
	return templates.Data{
		Project: templates.Project{ID: p.ID, Number: p.Number, Name: p.Name, Status: p.Status, Description: p.Description},
		Progress: templates.Progress{
			TasksTotal: p.Progress.TasksTotal, TasksCompleted: p.Progress.TasksCompleted, Percent: p.Progress.Percent,
			CurrentTask: p.Progress.CurrentTask, CurrentSection: p.Progress.CurrentSection,
			CurrentTaskNumber: p.Progress.CurrentTaskNumber, CurrentSectionNumber: p.Progress.CurrentSectionNumber,
		},
		Now:         c.Now.UTC().Format(time.RFC3339),
		Today:       c.Now.Format("2006-01-02"),
		Phase:       c.Phase,
		LastSession: c.Now.Format("2006-01-02") + " — " + cmp.Or(strings.TrimSpace(c.Summary), "save point created"),
		NextAction:  nextAction(p, c),
	}
}

// editor plans the second round of a save: fields, headers, items, the session entry
// and the Compaction Detection block, all against one parse.
type editor struct {
	plan *plan
	d    *Document
	// ctxSaved: ctx has saved this document before (its marked blocks are there), so
	// the Next Action and next_task_number in it are ctx's own record.
	ctxSaved bool
	// fields are the values this save writes, read back by later steps.
	fields map[string]any
}

func (e *editor) field(key string, value any) {
	if e.fields == nil {
		e.fields = map[string]any{}
	}
	e.fields[key] = value
	e.plan.setField(key, value)
}

func (e *editor) fieldIfMissing(key string, value any) {
	if _, ok := e.d.Field(key); !ok {
		e.field(key, value)
	}
}

// intField is a number field as this save leaves it.
func (e *editor) intField(key string) int {
	if v, ok := e.fields[key].(int); ok {
		return v
	}
	v, _ := e.d.Field(key)
	n, _ := strconv.Atoi(strings.TrimSpace(v))
	return n
}

// stringField is a text field as this save leaves it.
func (e *editor) stringField(key string) string {
	if v, ok := e.fields[key].(string); ok {
		return v
	}
	v, _ := e.d.Field(key)
	return v
}

func (e *editor) apply(t Target, c Change, saved *Saved) error {
	p := t.Project
	today := c.Now.Format("2006-01-02")
	prog := p.Progress
	// What ctx wrote last time, read before this save changes it.
	lastTask := e.intField("next_task_number")
	lastTaskText, _ := e.d.Field("next_task_description")
	// A steps file that cannot be read says nothing about progress: the fields keep
	// what the last save wrote, rather than zeros.
	progressKnown := p.StepsProblem == ""
	if !progressKnown {
		saved.Notes = append(saved.Notes, "progress kept from the last save: "+p.StepsProblem)
	}

	e.fieldIfMissing("resume_version", 3)
	e.field("last_updated", c.Now)
	if c.CompactionDelta != 0 {
		e.field("compaction_count", e.intField("compaction_count")+c.CompactionDelta)
	} else {
		e.fieldIfMissing("compaction_count", 0)
	}
	if c.TokensApprox > 0 {
		e.field("total_tokens_approx", c.TokensApprox)
	} else {
		e.fieldIfMissing("total_tokens_approx", 0)
	}
	if c.NoAgentSession && c.SessionKey != "" {
		base := c.SessionKey
		for n := 2; e.closedBefore(c.SessionKey); n++ {
			c.SessionKey = base + "-" + strconv.Itoa(n)
		}
	}
	sessions := e.intField("session_count")
	if c.Close && !e.closedBefore(c.SessionKey) {
		e.field("session_count", sessions+1)
	} else {
		e.fieldIfMissing("session_count", 0)
	}
	e.fieldIfMissing("project_id", p.ID)
	e.fieldIfMissing("project_name", p.Name)
	if p.Status != "" {
		e.fieldIfMissing("project_status", p.Status)
	}
	if c.Phase != "" {
		e.field("current_phase", oneLine(c.Phase))
	}
	if c.Skill != "" {
		e.field("current_skill", c.Skill)
	}
	progress := e.field
	if !progressKnown {
		progress = e.fieldIfMissing
	}
	progress("current_section", prog.CurrentSectionNumber)
	progress("current_section_name", prog.CurrentSection)
	progress("next_task_number", prog.CurrentTaskNumber)
	progress("next_task_description", prog.CurrentTask)
	progress("progress_tasks_completed", prog.TasksCompleted)
	progress("progress_tasks_total", prog.TasksTotal)
	progress("progress_percentage", prog.Percent)

	var headers []headerValue
	if c.Summary != "" {
		headers = append(headers, headerValue{LastSession, today + " — " + oneLine(c.Summary)})
	} else if _, ok := e.d.Header(LastSession); !ok {
		headers = append(headers, headerValue{LastSession, today})
	}
	// The phase line follows --phase; without it, a missing line is written from the
	// frontmatter, and a person's line stays as they wrote it.
	if c.Phase != "" {
		headers = append(headers, headerValue{CurrentPhase, c.Phase})
	} else if _, ok := e.d.Header(CurrentPhase); !ok {
		if phase := e.stringField("current_phase"); phase != "" {
			headers = append(headers, headerValue{CurrentPhase, phase})
		}
	}
	next, ok := e.d.Header(NextAction)
	computed := nextAction(p, c)
	switch {
	case c.Next != "":
		headers = append(headers, headerValue{NextAction, c.Next})
	case !progressKnown:
		// Nothing new is known about the next task.
	case computed == noStepsText:
		// Without steps and without a --next, ctx knows no next action: it makes none
		// up, and a line the person left empty stays empty.
	case !ok || (e.ctxSaved && keepsNoNextAction(next, lastTask, lastTaskText, prog)) || isCtxNextAction(next):
		headers = append(headers, headerValue{NextAction, computed})
	}
	e.plan.setHeaders(headers)

	for _, item := range c.Decisions {
		if err := e.plan.appendItem(today+": "+item, SectionCriticalContext, SubsectionDecisions); err != nil {
			return err
		}
	}
	for _, item := range c.Assumptions {
		if err := e.plan.appendItem(item, SectionCriticalContext, SubsectionAssumptions); err != nil {
			return err
		}
	}
	for _, item := range c.Blockers {
		if err := e.plan.appendItem(item, SectionCriticalContext, SubsectionBlockers); err != nil {
			return err
		}
	}
	var files []string
	for _, f := range c.Files {
		if !e.d.listsFile(f) && !slices.Contains(files, f) {
			files = append(files, f)
		}
	}
	if len(files) > 0 {
		// One edit for all: the items go at one place, in order.
		for _, f := range files {
			if err := e.plan.appendItem("`"+f+"`", SectionFilesModified); err != nil {
				return err
			}
		}
	}

	if c.SessionKey != "" {
		saved.SessionNumber = e.sessionNumber(c.SessionKey, sessions)
		heading := fmt.Sprintf("Session %d — %s", saved.SessionNumber, today)
		if c.Close {
			heading = fmt.Sprintf("Session %d: %s, %s", saved.SessionNumber, cmp.Or(strings.TrimSpace(c.Summary), "closed"), today)
		}
		if err := e.plan.setSessionEntry(c.SessionKey, heading, c.Summary, c.Close); err != nil {
			return err
		}
	}
	return e.plan.replaceBlock(SectionCompaction, blockCompaction, fmt.Sprintf(
		"- Compactions this project: %d\n- Approx. tokens at last save: %d\n- Last saved: %s (%s)\n",
		e.intField("compaction_count"), e.intField("total_tokens_approx"), c.Now.UTC().Format(time.RFC3339), cmp.Or(c.Trigger, "save")))
}

var sessionNumberRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`Session (\d+)`) })

// sessionNumber keeps the number of an existing entry of this session. A new entry
// follows both the counted sessions and every numbered entry, so sessions open at the
// same time get numbers of their own.
func (e *editor) sessionNumber(key string, counted int) int {
	s, ok := e.d.findSection(SectionSessionHistory)
	if !ok {
		return counted + 1
	}
	if i, _, ok := e.d.sessionEntry(key); ok {
		l := e.d.md.Lines()[i]
		if m := sessionNumberRE().FindSubmatch(e.d.src[l.Start:l.End]); m != nil {
			n, _ := strconv.Atoi(string(m[1]))
			return n
		}
	}
	highest := counted
	for _, m := range sessionHeadingNumberRE().FindAllSubmatch(e.d.src[s.BodyStart:s.End], -1) {
		n, _ := strconv.Atoi(string(m[1]))
		highest = max(highest, n)
	}
	return highest + 1
}

// closedBefore reports whether the session key's Session History entry carries the
// heading a close writes ("Session N: summary, date"): the session is counted already.
// A close counts its session once, however often it runs: an agent that closes twice,
// or a close killed after it wrote the save point and run again.
func (e *editor) closedBefore(key string) bool {
	if key == "" {
		return false
	}
	i, _, ok := e.d.sessionEntry(key)
	if !ok {
		return false
	}
	l := e.d.md.Lines()[i]
	line := string(e.d.src[l.Start:l.End])
	line, _, _ = strings.Cut(line, sessionMarker(key))
	line = strings.TrimLeft(line, "#")
	return closedHeadingRE().MatchString(line)
}

// closedHeadingRE matches the heading a close writes, after its #s and before the
// session marker.
var closedHeadingRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^ Session \d+: .*, \d{4}-\d{2}-\d{2} $`) })

var sessionHeadingNumberRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?m)^#{2,6}[ \t]+Session (\d+)\b`) })

// keepsNoNextAction decides whether the Next Action line of a document ctx saved
// before may be recomputed: when it is the text ctx itself wrote last time, or when the
// work has moved past the task it was written against. Otherwise it is a person's or an
// agent's (--next) and stays. In a document ctx never saved, only an empty line or
// ctx's own wording is recomputed (isCtxNextAction): a person's line stays.
func keepsNoNextAction(line string, lastTask int, lastTaskText string, now markdown.Progress) bool {
	line = strings.TrimSpace(line)
	switch line {
	case "", allDoneText, noStepsText, fmt.Sprintf("Task %d — %s", lastTask, lastTaskText):
		return true
	}
	return now.CurrentTaskNumber != lastTask
}

func isCtxNextAction(line string) bool {
	line = strings.TrimSpace(line)
	return line == "" || line == allDoneText || line == noStepsText
}

// nextAction is the Next Action line: what the change says, else the current task.
func nextAction(p Project, c Change) string {
	switch {
	case c.Next != "":
		return c.Next
	case p.Progress.CurrentTask != "":
		return fmt.Sprintf("Task %d — %s", p.Progress.CurrentTaskNumber, p.Progress.CurrentTask)
	case p.Progress.TasksTotal > 0:
		return allDoneText
	}
	return noStepsText
}

// loadingSequence renders the reads that exist (the save point being written counts)
// as the numbered list of the Loading Sequence, paths relative to the project folder
// when inside it.
func loadingSequence(p Project, savePoint string, reads []Read) string {
	var b strings.Builder
	n := 0
	for _, r := range reads {
		if !r.Exists && r.Path != savePoint {
			continue
		}
		n++
		shown := r.Path
		if rel, ok := strings.CutPrefix(r.Path, p.Path+"/"); ok {
			shown = rel
		}
		fmt.Fprintf(&b, "%d. `%s` — %s\n", n, shown, r.Why)
	}
	return b.String()
}
