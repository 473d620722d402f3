package resume

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ctxtools/ctx/internal/durable"
	"github.com/ctxtools/ctx/loader"
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

// Save updates (or creates) the project's save point under its lock (kept in
// .ctx/state/locks, out of the person's folders): it re-reads the file after locking, adds missing template sections, recomputes the fields ctx owns,
// appends what the change records, and writes atomically. A save point whose
// frontmatter does not parse is not written; the error names file and line.
func Save(ws *loader.Workspace, p *loader.Project, c Change) (*Saved, error) {
	path := ws.ResumePath(p)
	if err := durable.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	if err := loader.EnsureStateDir(ws.StatePath("state")); err != nil {
		return nil, err
	}
	locks := ws.StatePath("state", "locks")
	if err := durable.MkdirAll(locks, 0o755); err != nil {
		return nil, err
	}
	var saved *Saved
	err := durable.WithLockIn(locks, path, func() error {
		durable.RemoveStaleTemps(filepath.Dir(path), filepath.Base(path))
		var err error
		saved, err = saveLocked(ws, p, c, path)
		return err
	})
	if err != nil {
		return nil, err
	}
	return saved, nil
}

func saveLocked(ws *loader.Workspace, p *loader.Project, c Change, path string) (*Saved, error) {
	set := templates.Set{Dir: ws.StatePath("templates")}
	saved := &Saved{Path: path}
	src, from, err := readCurrent(ws, p, path)
	if err != nil {
		return nil, err
	}
	owner, err := writable(ws, path)
	if err != nil {
		return nil, err
	}
	data := templateData(p, c)
	var tmpl []byte
	if src == nil {
		saved.Created = true
		if src, err = set.Render(templates.Resume, data); err != nil {
			return nil, err
		}
		tmpl = src
	} else if from != path {
		saved.Created, saved.FromLegacy = true, from
	}
	rel := ws.Rel(path)
	if from != "" {
		rel = ws.Rel(from)
	}
	d, err := Parse(src)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", loader.Locate(rel, err), ErrNotWritten)
	}
	// The template is rendered only for a save that adds a section it lacks, at most
	// once: a save of a whole save point, an automatic one in a hook included, skips it.
	template := sync.OnceValues(func() ([]byte, error) {
		if tmpl != nil {
			return tmpl, nil
		}
		return set.Render(templates.Resume, data)
	})
	// The save edits the one parse in place and checks the result with one parse
	// before it writes; an edit the model cannot follow sends it back to a parse after
	// every edit, which gives the same bytes.
	base := *saved
	out, err := edit(ws, p, c, path, d, d.editedInPlace(), template, saved)
	if err != nil {
		*saved = base
		out, err = edit(ws, p, c, path, d, d, template, saved)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w: %w", rel, err, ErrNotWritten)
	}
	saved.Document = out
	if err := durable.WriteFile(path, out.Bytes(), owner.mode); err != nil {
		return nil, err
	}
	if note := owner.restore(path); note != "" {
		saved.Notes = append(saved.Notes, ws.Rel(path)+": "+note)
	}
	return saved, nil
}

// edit makes the save's edits to d (read) through start (d itself, or d edited in
// place), and checks the frontmatter keys ctx does not own.
func edit(ws *loader.Workspace, p *loader.Project, c Change, path string, read, start *Document, tmpl func() ([]byte, error), saved *Saved) (*Document, error) {
	ctxSaved := read.savedByCtx() // before the sections this save adds
	d, added, err := start.EnsureSections(tmpl, neededSections(read, c)...)
	if err != nil {
		return nil, err
	}
	saved.AddedSections = added
	e := &editor{d: d, ctxSaved: ctxSaved}
	e.apply(ws, p, c, path, saved)
	if e.err == nil {
		e.err = keptValues(read.Frontmatter(), e.d.Frontmatter())
	}
	if e.err != nil {
		return nil, e.err
	}
	return e.d, nil
}

// neededSections names the template sections this save writes into: the ones ctx
// computes on every save, and the ones that receive an item of this change. A section
// with nothing to write is never added.
func neededSections(d *Document, c Change) []string {
	need := []string{SectionLoadingSequence, SectionCompaction}
	if c.SessionKey != "" {
		need = append(need, SectionSessionHistory)
	}
	if len(c.Decisions)+len(c.Assumptions)+len(c.Blockers) > 0 {
		need = append(need, SectionCriticalContext)
	}
	for _, f := range c.Files {
		if !d.listsFile(f) {
			need = append(need, SectionFilesModified)
			break
		}
	}
	return need
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
			return fmt.Errorf("frontmatter: the edit would change %q; nothing written", k)
		}
	}
	return nil
}

// readCurrent returns the save point's bytes and the file they came from: the
// canonical file, else a legacy one (which the save then continues in the canonical
// place), else nil.
func readCurrent(ws *loader.Workspace, p *loader.Project, path string) ([]byte, string, error) {
	found, _ := ws.FindResume(p)
	if found == "" {
		return nil, "", nil
	}
	fi, err := os.Stat(found)
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", ws.Rel(found), err)
	}
	if fi.Size() > MaxBytes {
		return nil, "", fmt.Errorf("%s: over %d MB; not edited: %w", ws.Rel(found), MaxBytes>>20, ErrNotWritten)
	}
	data, err := os.ReadFile(found)
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", ws.Rel(found), err)
	}
	return data, found, nil
}

func templateData(p *loader.Project, c Change) templates.Data {
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
		LastSession: c.Now.Format("2006-01-02") + " — " + firstNonEmpty(c.Summary, "save point created"),
		NextAction:  nextAction(p, c),
	}
}

// editor applies a sequence of edits, stopping at the first error.
type editor struct {
	d   *Document
	err error
	// ctxSaved: ctx has saved this document before (its marked blocks are there), so
	// the Next Action and next_task_number in it are ctx's own record.
	ctxSaved bool
}

func (e *editor) do(f func(d *Document) (*Document, Span, error)) {
	if e.err != nil {
		return
	}
	nd, _, err := f(e.d)
	if err != nil {
		e.err = err
		return
	}
	e.d = nd
}

func (e *editor) field(key string, value any) {
	e.do(func(d *Document) (*Document, Span, error) { return d.SetField(key, value) })
}

func (e *editor) fieldIfMissing(key string, value any) {
	if _, ok := e.d.Field(key); !ok {
		e.field(key, value)
	}
}

func (e *editor) intField(key string) int {
	v, _ := e.d.Field(key)
	n, _ := strconv.Atoi(strings.TrimSpace(v))
	return n
}

func (e *editor) apply(ws *loader.Workspace, p *loader.Project, c Change, path string, saved *Saved) {
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
		e.field("current_phase", c.Phase)
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

	if c.Summary != "" {
		e.header(LastSession, today+" — "+c.Summary)
	} else if _, ok := e.d.Header(LastSession); !ok {
		e.header(LastSession, today)
	}
	// The phase line follows --phase; without it, a missing line is written from the
	// frontmatter, and a person's line stays as they wrote it.
	if c.Phase != "" {
		e.header(CurrentPhase, c.Phase)
	} else if _, ok := e.d.Header(CurrentPhase); !ok {
		if phase, _ := e.d.Field("current_phase"); phase != "" {
			e.header(CurrentPhase, phase)
		}
	}
	next, ok := e.d.Header(NextAction)
	switch {
	case c.Next != "":
		e.header(NextAction, c.Next)
	case !progressKnown:
		// Nothing new is known about the next task.
	case !ok || (e.ctxSaved && keepsNoNextAction(next, lastTask, lastTaskText, prog)) || isCtxNextAction(next):
		e.header(NextAction, nextAction(p, c))
	}

	for _, item := range c.Decisions {
		e.do(func(d *Document) (*Document, Span, error) {
			return d.AppendItem(today+": "+item, SectionCriticalContext, SubsectionDecisions)
		})
	}
	for _, item := range c.Assumptions {
		e.do(func(d *Document) (*Document, Span, error) {
			return d.AppendItem(item, SectionCriticalContext, SubsectionAssumptions)
		})
	}
	for _, item := range c.Blockers {
		e.do(func(d *Document) (*Document, Span, error) {
			return d.AppendItem(item, SectionCriticalContext, SubsectionBlockers)
		})
	}
	for _, f := range c.Files {
		e.addFile(f)
	}

	if c.SessionKey != "" && e.err == nil {
		saved.SessionNumber = e.sessionNumber(c.SessionKey, sessions)
		heading := fmt.Sprintf("Session %d — %s", saved.SessionNumber, today)
		if c.Close {
			heading = fmt.Sprintf("Session %d: %s, %s", saved.SessionNumber, firstNonEmpty(c.Summary, "closed"), today)
		}
		nd, err := e.d.SetSessionEntry(c.SessionKey, heading, c.Summary, c.Close)
		if err != nil {
			e.err = err
		} else {
			e.d = nd
		}
	}
	compactions := e.intField("compaction_count")
	tokens := e.intField("total_tokens_approx")
	e.do(func(d *Document) (*Document, Span, error) {
		return d.ReplaceBlock(SectionCompaction, "compaction", fmt.Sprintf(
			"- Compactions this project: %d\n- Approx. tokens at last save: %d\n- Last saved: %s (%s)\n",
			compactions, tokens, c.Now.UTC().Format(time.RFC3339), firstNonEmpty(c.Trigger, "save")))
	})
	if e.err != nil {
		return
	}
	if e.d.inPlace {
		// The one parse of the edited bytes: it checks the model (and the YAML) and is
		// the document the Loading Sequence is derived from, which only adds ctx's
		// own numbered lines after it.
		e.d, e.err = e.d.verify()
		if e.err != nil {
			return
		}
	}
	reads := ws.RecommendedReads(p, ws.ResumeFromDocument(p, path, e.d.Markdown()))
	e.do(func(d *Document) (*Document, Span, error) {
		content := loadingSequence(p, ws.Rel(path), reads)
		nd, span, err := d.ReplaceBlock(SectionLoadingSequence, "loading-sequence", content)
		if errors.Is(err, errNeedsParse) {
			// The reads are computed; this one edit parses its result instead.
			exact := *d
			exact.inPlace = false
			return exact.ReplaceBlock(SectionLoadingSequence, "loading-sequence", content)
		}
		return nd, span, err
	})
}

func (e *editor) header(label, value string) {
	e.do(func(d *Document) (*Document, Span, error) { return d.SetHeader(label, value) })
}

// addFile lists a file under Files Modified unless it is there already.
func (e *editor) addFile(path string) {
	if e.d.listsFile(path) {
		return
	}
	e.do(func(d *Document) (*Document, Span, error) {
		return d.AppendItem("`"+path+"`", SectionFilesModified)
	})
}

// listsFile reports whether Files Modified (under any of its titles) lists path.
func (d *Document) listsFile(path string) bool {
	s, ok := d.findSection(SectionFilesModified)
	if !ok {
		return false
	}
	for _, listed := range loader.ListedPaths(string(d.src[s.BodyStart:s.End])) {
		if filepath.Clean(listed) == filepath.Clean(path) {
			return true
		}
	}
	return false
}

// savedByCtx reports whether ctx has saved this document before: its marked blocks
// are there.
func (d *Document) savedByCtx() bool {
	return d.markerAt(0, len(d.src), blockBegin("compaction")) >= 0 || d.markerAt(0, len(d.src), blockBegin("loading-sequence")) >= 0
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
	body := string(e.d.src[s.BodyStart:s.End])
	if i := strings.Index(body, sessionMarker(key)); i >= 0 {
		line := body[strings.LastIndex(body[:i], "\n")+1 : i]
		if m := sessionNumberRE().FindStringSubmatch(line); m != nil {
			n, _ := strconv.Atoi(m[1])
			return n
		}
	}
	highest := counted
	for _, m := range sessionHeadingNumberRE().FindAllStringSubmatch(body, -1) {
		n, _ := strconv.Atoi(m[1])
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
	s, ok := e.d.findSection(SectionSessionHistory)
	if !ok {
		return false
	}
	at := e.d.markerAt(s.BodyStart, s.End, sessionMarker(key))
	if at < 0 {
		return false
	}
	line := strings.TrimLeft(string(e.d.src[lineStart(e.d.src, at):at]), "#")
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
func keepsNoNextAction(line string, lastTask int, lastTaskText string, now loader.Progress) bool {
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

// The Next Action texts ctx writes when there is no open task.
const (
	allDoneText = "All tasks in the steps file are done"
	noStepsText = "Write the steps file"
)

// nextAction is the Next Action line: what the change says, else the current task.
func nextAction(p *loader.Project, c Change) string {
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
func loadingSequence(p *loader.Project, savePoint string, reads []loader.Read) string {
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

func firstNonEmpty(values ...string) string {
	for _, v := range values {
		if strings.TrimSpace(v) != "" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}
