//go:build torture

package torture

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// report is what the checker found: violations (the run fails), notes (said, not
// failed) and what was checked, for the summary.
type report struct {
	violations []string
	notes      []string
	checked    []string
}

func (r *report) fail(format string, args ...any) {
	r.violations = append(r.violations, fmt.Sprintf(format, args...))
}

func (r *report) note(format string, args ...any) {
	r.notes = append(r.notes, fmt.Sprintf(format, args...))
}

func (r *report) counted(format string, args ...any) {
	r.checked = append(r.checked, fmt.Sprintf(format, args...))
}

// check runs every check. What a final save would repair (a half-made project's
// missing save point) or could not see (journals) is looked at before the final saves;
// the rest after them, on the state a person would find.
func (w *world) check() *report {
	rep := &report{}
	acked := w.checkOps(rep)
	w.checkProjectFolders(rep)
	archives := w.checkJournals(rep)
	final := w.finalSaves(rep)
	w.checkTemps(rep)
	w.checkSavePoints(rep)
	w.checkSnapshots(rep, final, acked, archives)
	w.checkListing(rep)
	return rep
}

// snapshotRE finds the snapshot an automatic save names in a hook's line: "(snapshot
// session-…)" for a project, "(session-…)" for a workspace-level one.
var snapshotRE = regexp.MustCompile(`\((?:snapshot )?(session-\d{8}T\d{6}Z-\d{6}(?:-\d+)?)\)`)

// checkOps judges each process on its own: one not killed must succeed (a hook
// quietly, a reader with JSON), and none may hang. It returns the snapshot sets that
// acknowledged operations named, each with the operation that named it.
func (w *world) checkOps(rep *report) map[string]*result {
	acked := map[string]*result{}
	autoSaves, hooksAcked := 0, 0
	for _, r := range w.results {
		o := r.op
		switch {
		case r.hung:
			rep.fail("%s still ran %s after its start and was killed: a hang (stderr: %s)", r, processLimit, firstLine(r.stderr))
			continue
		case r.err != nil:
			rep.fail("%s: %v", r, r.err)
			continue
		case r.killed:
			continue
		case r.exit != 0:
			rep.fail("%s exited %d without being killed (after %s): %s", r, r.exit, r.took.Round(time.Millisecond), firstLine(r.stderr))
			continue
		}
		switch {
		case o.kind == kindSave || o.kind == kindClose:
			var out saveJSON
			if err := json.Unmarshal([]byte(r.stdout), &out); err != nil || out.SnapshotID == "" {
				rep.fail("%s exited 0 but its --json output names no snapshot: %.200s", r, r.stdout)
				continue
			}
			if out.Project.ID != o.target.id {
				rep.fail("%s saved project %s, not %s", r, out.Project.ID, o.target.id)
			}
			acked[out.SnapshotID] = r
		case o.isHook():
			hooksAcked++
			if r.stderr != "" {
				rep.fail("%s exited 0 but warned (a hook's internal error): %s", r, firstLine(r.stderr))
			}
			if m := snapshotRE.FindStringSubmatch(r.stdout); m != nil {
				acked[m[1]] = r
				autoSaves++
			}
		case o.kind == kindRead:
			if !json.Valid([]byte(r.stdout)) {
				rep.fail("%s, a reader beside the writers, printed no valid JSON: %.200s", r, r.stdout)
			}
		}
	}
	// A load that never crosses the threshold opens no journal, and the journal checks
	// would prove nothing.
	if hooksAcked >= 30 && autoSaves == 0 {
		rep.fail("%d hooks succeeded but none made an automatic save: the transcripts no longer put usage past the auto-save threshold, so no journal was exercised", hooksAcked)
	}
	rep.counted("%d processes (%d automatic saves)", len(w.results), autoSaves)
	return acked
}

// projectFolderRE matches a folder `ctx new` made for the suite: "<n>-torture-<run>-n<seq>".
func (w *world) projectFolderRE() *regexp.Regexp {
	return regexp.MustCompile(`^(\d+)-torture-` + w.run + `-n(\d+)$`)
}

// A creation builds a project in a folder named stagingPrefix… in 02-projects and
// renames it into place; one that is killed leaves that folder, which the next creation
// removes, since its writer is gone (resume/new.go: NewTempPrefix; durable.RemoveStaleDirs).
// The temporary files inside such a folder are its own, not litter of the final saves.
const stagingPrefix = ".ctx-new-"

// planningFiles are what a whole project made by `ctx new` holds.
var planningFiles = []string{"01-planning/overview.md", "01-planning/plan.md", "01-planning/steps.md", "01-planning/_resume.md",
	"02-resources/", "03-working/", "04-outputs/"}

// withFrontmatter are the planning files whose YAML frontmatter must parse.
var withFrontmatter = []string{"01-planning/overview.md", "01-planning/_resume.md"}

// checkProjectFolders looks at what `ctx new` left: every project it acknowledged is
// whole and listed; a killed one left nothing or a whole project, never a half-made one
// that `ctx projects` lists; no two folders share a number.
func (w *world) checkProjectFolders(rep *report) {
	projects := filepath.Join(w.ws, "02-projects")
	entries, err := os.ReadDir(projects)
	if err != nil {
		rep.fail("read 02-projects: %v", err)
		return
	}
	var listing projectsJSON
	listed := map[string]projectJSON{}
	if res := w.ctx([]string{"projects", "--json"}, nil); res.exit != 0 || json.Unmarshal([]byte(res.stdout), &listing) != nil {
		rep.fail("ctx projects --json (after the load): exit %d: %s", res.exit, firstLine(res.stderr))
	}
	for _, p := range listing.Projects {
		listed[p.Path] = p
	}

	newOps := map[int]*result{}
	for _, r := range w.results {
		if r.op.kind == kindNew {
			newOps[r.op.seq] = r
		}
	}
	byNumber := map[int][]string{}
	folderRE := w.projectFolderRE()
	seen := map[int]bool{}
	whole, half := 0, 0
	lastNew := time.Time{} // when the last acknowledged `ctx new` started
	for _, r := range w.results {
		if r.op.kind == kindNew && r.exit == 0 && r.start.After(lastNew) {
			lastNew = r.start
		}
	}
	staging := 0
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), stagingPrefix) {
			// A killed creation's folder, which a later creation removes. Creations
			// take turns under a lock, so one last changed before the last creation
			// started was left by a writer gone by the time that creation swept.
			staging++
			if fi, err := e.Info(); err == nil && fi.ModTime().Before(lastNew) {
				rep.fail("02-projects/%s: a killed `ctx new`'s folder, last changed %s, outlived the `ctx new` acknowledged at %s, which should have removed it",
					e.Name(), fi.ModTime().Format(time.StampMilli), lastNew.Format(time.StampMilli))
			}
			continue
		}
		if strings.HasPrefix(e.Name(), ".") {
			rep.fail("02-projects/%s: an unknown hidden entry in the projects folder after the load", e.Name())
			continue
		}
		if !e.IsDir() {
			continue
		}
		if n, err := strconv.Atoi(strings.SplitN(e.Name(), "-", 2)[0]); err == nil && e.Name() != "00-onboarding" {
			byNumber[n] = append(byNumber[n], e.Name())
		}
		m := folderRE.FindStringSubmatch(e.Name())
		if m == nil {
			continue
		}
		seq, _ := strconv.Atoi(m[2])
		seen[seq] = true
		rel := "02-projects/" + e.Name()
		missing := missingFiles(filepath.Join(projects, e.Name()))
		if len(missing) == 0 {
			whole++
			continue
		}
		half++
		by := "no `ctx new` of this run"
		if r := newOps[seq]; r != nil {
			by = r.String() + " " + r.outcome()
		}
		where := "`ctx projects` does not list it"
		if p, ok := listed[rel]; ok {
			where = fmt.Sprintf("`ctx projects` lists it as project %d with problems %q", p.Number, p.Problems)
		}
		rep.fail("half-made project %s: missing %s; left by %s; %s (ctx new is not atomic: a killed process leaves the folder it began)",
			rel, strings.Join(missing, ", "), by, where)
	}
	for n, names := range byNumber {
		if len(names) > 1 {
			slices.Sort(names)
			rep.fail("project folders share the number %d: %s", n, strings.Join(names, ", "))
		}
	}
	acked, leftNothing := 0, 0
	for seq, r := range newOps {
		switch {
		case r.exit == 0:
			acked++
			if r.op.newID == "" {
				rep.fail("%s exited 0 but its --json output names no project: %.200s", r, r.stdout)
				continue
			}
			if !seen[seq] {
				rep.fail("%s made %s, which is not in 02-projects", r, r.op.newID)
			}
			if _, ok := listed["02-projects/"+r.op.newID]; !ok {
				rep.fail("%s made %s, which ctx projects does not list", r, r.op.newID)
			}
		case !seen[seq]:
			leftNothing++
		}
	}
	if staging > 0 {
		rep.note("%d folder(s) %s* of `ctx new` killed after the last creation started (a later `ctx new` removes them)",
			staging, stagingPrefix)
	}
	rep.counted("%d project folders from `ctx new` (%d acknowledged, %d whole, %d half-made, %d killed before any folder)",
		whole+half, acked, whole, half, leftNothing)
}

// missingFiles lists what of planningFiles a project folder lacks, or holds broken: an
// empty file, or one whose frontmatter does not parse, counts as missing.
func missingFiles(dir string) []string {
	var missing []string
	for _, f := range planningFiles {
		path := filepath.Join(dir, f)
		fi, err := os.Stat(path)
		switch {
		case err != nil:
			missing = append(missing, f)
		case strings.HasSuffix(f, "/") != fi.IsDir():
			missing = append(missing, f+" (wrong kind of file)")
		case !fi.IsDir() && fi.Size() == 0:
			missing = append(missing, f+" (empty)")
		case slices.Contains(withFrontmatter, f):
			data, err := os.ReadFile(path)
			if err == nil {
				_, _, err = splitFrontmatter(data)
			}
			if err != nil {
				missing = append(missing, fmt.Sprintf("%s (%v)", f, err))
			}
		}
	}
	return missing
}

// journalLine is what the checker reads of a journal line.
type journalLine struct {
	Type      string    `json:"type"`
	Timestamp time.Time `json:"timestamp"`
	SessionID string    `json:"session_id"`
}

var (
	setFileRE = regexp.MustCompile(`^(session-\d{8}T\d{6}Z-\d{6}(?:-\d+)?)\.(json|yaml|md)$`)
	archiveRE = regexp.MustCompile(`^(session-\d{8}T\d{6}Z-\d{6}(?:-\d+)?)-incremental(?:-\d+)?\.jsonl$`)
	activeRE  = regexp.MustCompile(`^ACTIVE-PAUSE-(.+)\.jsonl$`)
)

// checkJournals reads every wind-down journal, open or archived: each line is valid
// JSON but perhaps a torn last one, each begins with pause_started, each archive ends
// with pause_finalized, all lines are the session's, and no hook's line is there
// twice. It returns the archives, each with the snapshot set it belongs to.
func (w *world) checkJournals(rep *report) map[string]string {
	dir := filepath.Join(w.ws, ".ctx", "sessions")
	entries, _ := os.ReadDir(dir)
	markRE := regexp.MustCompile(`(?:prm|tool|rep)-` + w.run + `-\d+-x`)
	marks := map[string][]string{}
	archives := map[string]string{}
	files, lines, torn, active := 0, 0, 0, 0
	for _, e := range entries {
		name := e.Name()
		am, actm := archiveRE.FindStringSubmatch(name), activeRE.FindStringSubmatch(name)
		if am == nil && actm == nil {
			continue
		}
		files++
		if am != nil {
			archives[name] = am[1]
		} else {
			active++
		}
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			rep.fail("read journal %s: %v", name, err)
			continue
		}
		for _, m := range markRE.FindAllString(string(data), -1) {
			marks[m] = append(marks[m], name)
		}
		var parsed []journalLine
		raw := bytes.Split(data, []byte("\n"))
		for i, l := range raw {
			last := i == len(raw)-1
			if last && len(l) == 0 {
				break // the file ends with its newline
			}
			var jl journalLine
			if err := json.Unmarshal(l, &jl); err != nil || jl.Type == "" || jl.Timestamp.IsZero() {
				if last {
					torn++ // no newline after it: a writer stopped mid-line
					continue
				}
				why := "no type or timestamp"
				if err != nil {
					why = err.Error()
				}
				rep.fail(".ctx/sessions/%s:%d: not a journal line (%s): %.120s", name, i+1, why, l)
				continue
			}
			parsed = append(parsed, jl)
		}
		lines += len(parsed)
		if len(parsed) == 0 {
			rep.fail(".ctx/sessions/%s: a journal with no line", name)
			continue
		}
		if parsed[0].Type != "pause_started" {
			rep.fail(".ctx/sessions/%s: begins with a %s line, not pause_started", name, parsed[0].Type)
		}
		if am != nil && parsed[len(parsed)-1].Type != "pause_finalized" {
			rep.fail(".ctx/sessions/%s: an archived journal that ends with a %s line, not pause_finalized", name, parsed[len(parsed)-1].Type)
		}
		for i, l := range parsed {
			if l.SessionID != parsed[0].SessionID || (actm != nil && l.SessionID != actm[1]) {
				rep.fail(".ctx/sessions/%s: line %d is session %q's, in a journal of session %q", name, i+1, l.SessionID, parsed[0].SessionID)
				break
			}
		}
	}
	for m, in := range marks {
		if len(in) > 1 {
			rep.fail("the hook line carrying %s is in the journals %d times (%s): a line recorded twice", m, len(in), strings.Join(in, ", "))
		}
	}
	if torn > 0 {
		rep.note("%d journal(s) end in a torn line (tolerated: a writer killed mid-line)", torn)
	}
	rep.counted("%d journals (%d open, %d archived; %d lines, %d hook lines by token)", files, active, files-active, lines, len(marks))
	return archives
}

// finalSaves saves every project once more, nothing killed: what a person's next
// save does after a crash. Each must succeed. It returns the last one's snapshot.
func (w *world) finalSaves(rep *report) string {
	last := ""
	for _, tg := range w.targets {
		res := w.ctx([]string{"save", "-p", tg.ref, "--summary", "final-" + w.run + "-x", "--json"}, nil)
		var out saveJSON
		if res.exit != 0 || json.Unmarshal([]byte(res.stdout), &out) != nil {
			rep.fail("final save of %s (ctx save -p %s) after the load: exit %d: %s", tg.id, tg.ref, res.exit, firstLine(res.stderr))
			continue
		}
		last = out.SnapshotID
	}
	rep.counted("%d final saves", len(w.targets))
	return last
}

// checkTemps looks for temporary files of atomic writes, in the workspace and in ctx's
// runtime folder, after the final saves.
func (w *world) checkTemps(rep *report) {
	var found []string
	for _, dir := range []string{w.ws, filepath.Join(w.root, "run")} {
		_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err == nil && d.IsDir() && strings.HasPrefix(d.Name(), stagingPrefix) {
				return filepath.SkipDir // checked with the projects
			}
			if err == nil && strings.HasPrefix(d.Name(), ".ctx-tmp-") {
				rel, _ := filepath.Rel(w.root, path)
				found = append(found, rel)
			}
			return nil
		})
	}
	if len(found) > 0 {
		byDir := map[string][]string{}
		for _, f := range found {
			byDir[filepath.Dir(f)] = append(byDir[filepath.Dir(f)], filepath.Base(f))
		}
		for d, names := range byDir {
			rep.fail("%d temporary file(s) left in %s after the final saves: %s", len(names), d, capList(names, 4))
		}
	}
	rep.counted("%d .ctx-tmp-* files in the workspace and the runtime folder", len(found))
}

// checkSavePoints checks each project's _resume.md directly and through ctx (load,
// show), then the tokens of every save and close, then the counters.
func (w *world) checkSavePoints(rep *report) {
	tokenRE := regexp.MustCompile(`(?:dec|sum)-` + w.run + `-\d+-x`)
	tally := map[string]map[string]int{} // token -> project id -> occurrences
	docs := map[string]*resumeFile{}
	for _, tg := range w.targets {
		rel := tg.rel + "/01-planning/_resume.md"
		data, err := os.ReadFile(w.resumePath(tg))
		if err != nil {
			rep.fail("%s: %v", rel, err)
			continue
		}
		rf, err := parseResume(data)
		if err != nil {
			rep.fail("%s: %v", rel, err)
			continue
		}
		docs[tg.id] = rf
		for _, m := range tokenRE.FindAllString(rf.text, -1) {
			if tally[m] == nil {
				tally[m] = map[string]int{}
			}
			tally[m][tg.id]++
		}
		w.checkStructure(rep, tg, rel, rf)
		w.checkThroughCtx(rep, tg, rel, rf)
	}

	type bounds struct{ acked, all int }
	compactions := map[string]*bounds{}
	// A close counts its session once: the sessions closed, acknowledged and in all,
	// by project. A close outside an agent session closes a session of its own (the
	// day's entry, or the next one once that is closed), so each such close is a key.
	type keySet struct{ acked, all map[string]bool }
	closes := map[string]*keySet{}
	closedSessions := func(k *keySet, before map[string]bool) *bounds {
		b := &bounds{}
		if k == nil {
			return b
		}
		for key := range k.all {
			if !before[key] {
				b.all++
			}
		}
		for key := range k.acked {
			if !before[key] {
				b.acked++
			}
		}
		return b
	}
	decisions, summaries := 0, 0
	for _, r := range w.results {
		o := r.op
		ack := !r.killed && r.exit == 0 && r.err == nil
		switch {
		case o.kind == kindPreCompact && o.target != nil:
			b := compactions[o.target.id]
			if b == nil {
				b = &bounds{}
				compactions[o.target.id] = b
			}
			b.all++
			if ack && r.stderr == "" {
				b.acked++
			}
		case o.kind == kindSave || o.kind == kindClose:
			if o.kind == kindClose {
				k := closes[o.target.id]
				if k == nil {
					k = &keySet{acked: map[string]bool{}, all: map[string]bool{}}
					closes[o.target.id] = k
				}
				key := fmt.Sprintf("manual close %p", r)
				if o.session != nil {
					key = o.session.id
				}
				k.all[key] = true
				if ack {
					k.acked[key] = true
				}
			}
			rf := docs[o.target.id]
			if rf == nil {
				continue
			}
			rel := o.target.rel + "/01-planning/_resume.md"
			decisions++
			for id, n := range tally[o.decision] {
				if id != o.target.id {
					rep.fail("decision %s of %s is in %s's save point (%d times): written to the wrong project", o.decision, r, id, n)
				}
			}
			switch n := tally[o.decision][o.target.id]; {
			case ack && n != 1:
				rep.fail("decision %s, acknowledged by %s (exit 0 after %s), is in %s %d times; want exactly once",
					o.decision, r, r.took.Round(time.Millisecond), rel, n)
			case n > 1:
				rep.fail("decision %s of %s (%s) is in %s %d times; want at most once", o.decision, r, r.outcome(), rel, n)
			}
			summaries++
			switch n := rf.bullets[o.summary]; {
			case ack && n != 1:
				rep.fail("summary %s, acknowledged by %s, is a Session History item of %s %d times; want exactly once", o.summary, r, rel, n)
			case n > 1:
				rep.fail("summary %s of %s (%s) is a Session History item of %s %d times; want at most once", o.summary, r, r.outcome(), rel, n)
			}
		}
	}

	for _, tg := range w.targets {
		rf := docs[tg.id]
		if rf == nil {
			continue
		}
		b := w.base[tg.id]
		if b == nil {
			b = &baseline{} // made during the load: counters start at 0
		}
		rel := tg.rel + "/01-planning/_resume.md"
		for _, c := range []struct {
			field, what string
			from        int
			ops         *bounds
		}{
			{"session_count", "sessions closed (each once)", b.sessionCount, closedSessions(closes[tg.id], b.closedKeys)},
			{"compaction_count", "pre-compact hooks of the session bound to it", b.compactionCount, compactions[tg.id]},
		} {
			ops := c.ops
			if ops == nil {
				ops = &bounds{}
			}
			got, ok := rf.fm[c.field]
			n, isInt := got.(int)
			if !ok || !isInt {
				rep.fail("%s: frontmatter %s is %v, not a number", rel, c.field, got)
				continue
			}
			if d := n - c.from; d < ops.acked || d > ops.all {
				rep.fail("%s: %s went from %d to %d (+%d), but %d %s were acknowledged and %d run in all: want between +%d and +%d (a lost or doubled count)",
					rel, c.field, c.from, n, d, ops.acked, c.what, ops.all, ops.acked, ops.all)
			}
		}
	}
	rep.counted("%d save points (frontmatter, headings, markers; ctx load and ctx show agree)", len(docs))
	rep.counted("%d decision and %d summary tokens (acknowledged: exactly once; killed: at most once)", decisions, summaries)
	rep.counted("session_count and compaction_count of each project against the sessions it closed and its pre-compacts")
}

// checkStructure checks a save point's shape: one title, no section twice, every
// section it had before the load still there in the same order, ctx's marked blocks
// once each, one Session History entry per agent session.
func (w *world) checkStructure(rep *report, tg *target, rel string, rf *resumeFile) {
	if len(rf.h1) != 1 {
		rep.fail("%s: %d level-1 headings (%q); want one", rel, len(rf.h1), rf.h1)
	}
	seen := map[string]int{}
	for _, h := range rf.h2 {
		seen[h]++
		if seen[h] == 2 {
			rep.fail("%s: the heading \"## %s\" is there twice", rel, h)
		}
	}
	for parent, subs := range rf.h3 {
		seen := map[string]int{}
		for _, h := range subs {
			seen[h]++
			if seen[h] == 2 {
				rep.fail("%s: the heading \"### %s\" is there twice under \"## %s\"", rel, h, parent)
			}
		}
	}
	if b := w.base[tg.id]; b != nil && b.headings != nil {
		at := 0
		for _, h := range b.headings {
			i := slices.Index(rf.h2[at:], h)
			if i < 0 {
				rep.fail("%s: the heading \"## %s\" it had before the load is gone or out of order (now: %q)", rel, h, rf.h2)
				break
			}
			at += i + 1
		}
	}
	for _, block := range []string{"loading-sequence", "compaction"} {
		begin, end := "<!-- ctx:begin "+block+" -->", "<!-- ctx:end "+block+" -->"
		nb, ne := strings.Count(rf.text, begin), strings.Count(rf.text, end)
		if nb != 1 || ne != 1 || strings.Index(rf.text, begin) > strings.Index(rf.text, end) {
			rep.fail("%s: ctx's %s block is broken: %d begin and %d end markers; want one of each, in order", rel, block, nb, ne)
		}
	}
	keys := map[string]int{}
	for _, m := range sessionMarkerRE.FindAllStringSubmatch(rf.text, -1) {
		keys[m[1]]++
		if keys[m[1]] == 2 {
			rep.fail("%s: two Session History entries for the agent session %s; want one, updated in place", rel, m[1])
		}
	}
	for _, k := range []string{"resume_version", "last_updated", "session_count", "compaction_count"} {
		if _, ok := rf.fm[k]; !ok {
			rep.fail("%s: the frontmatter has no %s", rel, k)
		}
	}
	if id, ok := rf.fm["project_id"].(string); ok && id != tg.id {
		rep.fail("%s: project_id is %q, not %q", rel, id, tg.id)
	}
}

var sessionMarkerRE = regexp.MustCompile(`<!-- ctx:session ([^ ]+) -->`)

// checkThroughCtx reads the save point the way agents do: `ctx load ID --json` and
// `ctx show ID --json` must succeed and agree with the file.
func (w *world) checkThroughCtx(rep *report, tg *target, rel string, rf *resumeFile) {
	res := w.ctx([]string{"load", tg.id, "--json"}, nil)
	var load loadJSON
	if res.exit != 0 || json.Unmarshal([]byte(res.stdout), &load) != nil {
		rep.fail("ctx load %s --json: exit %d: %s", tg.id, res.exit, firstLine(res.stderr))
	} else {
		if !load.Resume.Exists || load.Resume.Legacy || load.Resume.Path != rel {
			rep.fail("ctx load %s --json: the save point is %q (exists %v, legacy %v); want %s", tg.id, load.Resume.Path, load.Resume.Exists, load.Resume.Legacy, rel)
		}
		for _, k := range []string{"session_count", "compaction_count"} {
			if a, b := intField(load.Resume.Frontmatter, k), rf.fm[k]; a != b {
				rep.fail("ctx load %s --json: %s is %d, the file says %v", tg.id, k, a, b)
			}
		}
		for _, p := range load.Project.Problems {
			if w.newProblem(tg, p) {
				rep.fail("ctx load %s --json: a problem it did not have before the load: %s", tg.id, p)
			}
		}
	}
	res = w.ctx([]string{"show", tg.id, "--json"}, nil)
	var show showJSON
	if res.exit != 0 || json.Unmarshal([]byte(res.stdout), &show) != nil {
		rep.fail("ctx show %s --json: exit %d: %s", tg.id, res.exit, firstLine(res.stderr))
		return
	}
	var h2 []string
	for _, s := range show.Sections {
		if s.Level == 2 {
			h2 = append(h2, s.Title)
		}
	}
	if !slices.Equal(h2, rf.h2) {
		rep.fail("ctx show %s --json: its level-2 sections %q are not the file's headings %q", tg.id, h2, rf.h2)
	}
}

// checkSnapshots checks .ctx/sessions: every snapshot set whole and readable (JSON,
// YAML and briefing), LATEST-SESSION.txt naming the newest, which is the final save's;
// every set an acknowledged operation named, and every archive's, still there; ctx
// itself lists them all.
func (w *world) checkSnapshots(rep *report, final string, acked map[string]*result, archives map[string]string) {
	dir := filepath.Join(w.ws, ".ctx", "sessions")
	entries, err := os.ReadDir(dir)
	if err != nil {
		rep.fail("read .ctx/sessions: %v", err)
		return
	}
	sets := map[string]map[string]bool{}
	var other []string
	for _, e := range entries {
		name := e.Name()
		if m := setFileRE.FindStringSubmatch(name); m != nil {
			if sets[m[1]] == nil {
				sets[m[1]] = map[string]bool{}
			}
			sets[m[1]][m[2]] = true
			continue
		}
		if archiveRE.MatchString(name) || activeRE.MatchString(name) || name == ".gitignore" || name == "LATEST-SESSION.txt" {
			continue
		}
		if journal, ok := strings.CutSuffix(name, ".lock"); ok && activeRE.MatchString(journal) {
			if _, err := os.Stat(filepath.Join(dir, journal)); err == nil {
				continue // the append lock of an open journal
			}
		}
		other = append(other, name)
	}
	if len(other) > 0 {
		rep.note("other files in .ctx/sessions: %s", capList(other, 6))
	}

	var whole, partial []string
	for id, exts := range sets {
		if len(exts) == 3 {
			whole = append(whole, id)
			continue
		}
		var has []string
		for _, x := range []string{"json", "yaml", "md"} {
			if exts[x] {
				has = append(has, "."+x)
			}
		}
		partial = append(partial, id+" ("+strings.Join(has, " ")+")")
	}
	if len(partial) > 0 {
		slices.Sort(partial)
		rep.fail("%d incomplete snapshot set(s) in .ctx/sessions (files of a set whose writer was killed before its .json; no later save removes them, ctx sessions list does not show them): %s",
			len(partial), capList(partial, 5))
	}
	slices.SortFunc(whole, compareIDs)
	for _, id := range whole {
		w.checkSet(rep, dir, id)
	}

	data, err := os.ReadFile(filepath.Join(dir, "LATEST-SESSION.txt"))
	latest := strings.TrimSpace(strings.SplitN(string(data), "\n", 2)[0])
	switch {
	case err != nil:
		rep.fail("LATEST-SESSION.txt: %v", err)
	case len(sets[latest]) != 3:
		rep.fail("LATEST-SESSION.txt names %q, which is not a whole snapshot set", latest)
	case len(whole) > 0 && latest != whole[0]:
		rep.fail("LATEST-SESSION.txt names %s, but the newest whole set is %s", latest, whole[0])
	case final != "" && latest != final:
		rep.fail("LATEST-SESSION.txt names %s, not %s, the set of the last save", latest, final)
	}
	for id, r := range acked {
		if len(sets[id]) != 3 {
			rep.fail("snapshot set %s, named by %s (exit 0), is not whole in .ctx/sessions", id, r)
		}
	}
	for name, id := range archives {
		if len(sets[id]) != 3 {
			rep.fail("archived journal %s has no whole snapshot set %s", name, id)
		}
	}

	res := w.ctx([]string{"sessions", "list", "--json"}, nil)
	var list struct {
		Snapshots []struct {
			ID string `json:"snapshot_id"`
		} `json:"snapshots"`
	}
	if res.exit != 0 || json.Unmarshal([]byte(res.stdout), &list) != nil {
		rep.fail("ctx sessions list --json: exit %d: %s", res.exit, firstLine(res.stderr))
	} else if len(list.Snapshots) != len(whole) {
		rep.fail("ctx sessions list --json lists %d snapshot sets; .ctx/sessions holds %d whole ones", len(list.Snapshots), len(whole))
	}
	res = w.ctx([]string{"sessions", "show", "latest", "--json"}, nil)
	var show struct {
		ID string `json:"snapshot_id"`
	}
	if res.exit != 0 || json.Unmarshal([]byte(res.stdout), &show) != nil || show.ID != latest {
		rep.fail("ctx sessions show latest --json: exit %d, snapshot %q; want %s: %s", res.exit, show.ID, latest, firstLine(res.stderr))
	}
	rep.counted("%d snapshot sets (%d named by acknowledged operations, %d archived journals), LATEST-SESSION.txt", len(sets), len(acked), len(archives))
}

// checkSet reads one whole set: its JSON and YAML name it, its briefing is not empty.
func (w *world) checkSet(rep *report, dir, id string) {
	var js struct {
		SchemaVersion int    `json:"schema_version"`
		ID            string `json:"snapshot_id"`
	}
	if data, err := os.ReadFile(filepath.Join(dir, id+".json")); err != nil || json.Unmarshal(data, &js) != nil || js.ID != id || js.SchemaVersion != 1 {
		rep.fail(".ctx/sessions/%s.json: not a snapshot named %s (read error %v)", id, id, err)
	}
	var ys map[string]any
	if data, err := os.ReadFile(filepath.Join(dir, id+".yaml")); err != nil || yaml.Unmarshal(data, &ys) != nil || ys["snapshot_id"] != id {
		rep.fail(".ctx/sessions/%s.yaml: not a snapshot named %s (read error %v)", id, id, err)
	}
	if fi, err := os.Stat(filepath.Join(dir, id+".md")); err != nil || fi.Size() == 0 {
		rep.fail(".ctx/sessions/%s.md: an empty briefing", id)
	}
}

// checkListing checks `ctx projects` after the final saves: every project the
// operations aimed at listed once, with no problem it did not have before.
func (w *world) checkListing(rep *report) {
	res := w.ctx([]string{"projects", "--json"}, nil)
	var listing projectsJSON
	if res.exit != 0 || json.Unmarshal([]byte(res.stdout), &listing) != nil {
		rep.fail("ctx projects --json (after the final saves): exit %d: %s", res.exit, firstLine(res.stderr))
		return
	}
	count := map[string]int{}
	problems := map[string][]string{}
	for _, p := range listing.Projects {
		count[p.Path]++
		problems[p.Path] = p.Problems
	}
	for _, tg := range w.targets {
		if count[tg.rel] != 1 {
			rep.fail("ctx projects lists %s %d times; want once", tg.rel, count[tg.rel])
		}
		for _, p := range problems[tg.rel] {
			if w.newProblem(tg, p) {
				rep.fail("ctx projects: %s has a problem it did not have before the load: %s", tg.rel, p)
			}
		}
	}
	rep.counted("ctx projects lists %d projects", len(listing.Projects))
}

// newProblem reports whether a project's problem is one it did not have before the
// load. A project whose save point was a legacy file gets the one problem the first save
// brings by design: the legacy file stays beside the new _resume.md, for a person to
// merge and delete.
func (w *world) newProblem(tg *target, problem string) bool {
	b := w.base[tg.id]
	if b == nil {
		return true
	}
	if b.legacy && strings.Contains(problem, "an older save point beside") {
		return false
	}
	return !slices.Contains(b.problems, problem)
}

// resumeFile is a save point as the checker reads it, apart from ctx's own parser.
type resumeFile struct {
	fm      map[string]any
	h1, h2  []string
	h3      map[string][]string // level-3 headings under each level-2 one
	bullets map[string]int      // "- text" list items, by text
	text    string
}

// parseResume reads frontmatter (YAML between --- lines) and ATX headings outside code
// fences.
func parseResume(data []byte) (*resumeFile, error) {
	fm, body, err := splitFrontmatter(data)
	if err != nil {
		return nil, err
	}
	rf := &resumeFile{fm: fm, h3: map[string][]string{}, bullets: map[string]int{}, text: string(data)}
	fence, parent := "", ""
	for line := range strings.SplitSeq(strings.ReplaceAll(body, "\r\n", "\n"), "\n") {
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~") {
			switch {
			case fence == "":
				fence = trimmed[:3]
			case strings.HasPrefix(trimmed, fence):
				fence = ""
			}
			continue
		}
		if fence != "" {
			continue
		}
		if item, ok := strings.CutPrefix(line, "- "); ok {
			rf.bullets[item]++
		}
		level := len(line) - len(strings.TrimLeft(line, "#"))
		if level == 0 || level > 6 || len(line) == level || line[level] != ' ' {
			continue
		}
		title := strings.TrimSpace(line[level:])
		switch level {
		case 1:
			rf.h1 = append(rf.h1, title)
		case 2:
			rf.h2 = append(rf.h2, title)
			parent = title
		case 3:
			rf.h3[parent] = append(rf.h3[parent], title)
		}
	}
	return rf, nil
}

// splitFrontmatter parses the YAML between the first two --- lines and returns the
// rest. A file without frontmatter, or with frontmatter that does not parse, is an error.
func splitFrontmatter(data []byte) (map[string]any, string, error) {
	s := strings.TrimPrefix(string(data), "\ufeff")
	s = strings.ReplaceAll(s, "\r\n", "\n")
	rest, ok := strings.CutPrefix(s, "---\n")
	if !ok {
		return nil, "", errors.New("no frontmatter: the file does not begin with ---")
	}
	end := strings.Index(rest, "\n---\n")
	if end < 0 && strings.HasSuffix(rest, "\n---") {
		end = len(rest) - 4
	}
	if end < 0 {
		return nil, "", errors.New("frontmatter: no closing ---")
	}
	fm := map[string]any{}
	if err := yaml.Unmarshal([]byte(rest[:end+1]), &fm); err != nil {
		return nil, "", fmt.Errorf("frontmatter: %w", err)
	}
	return fm, rest[min(end+5, len(rest)):], nil
}

// compareIDs orders snapshot ids newest first: by stamp, then by the -N of ids that
// share a microsecond.
func compareIDs(a, b string) int {
	sa, na := idKey(a)
	sb, nb := idKey(b)
	if c := strings.Compare(sb, sa); c != 0 {
		return c
	}
	return nb - na
}

func idKey(id string) (string, int) {
	const stampLen = len("session-20060102T150405Z-000000")
	if len(id) > stampLen+1 && id[stampLen] == '-' {
		if n, err := strconv.Atoi(id[stampLen+1:]); err == nil {
			return id[:stampLen], n
		}
	}
	return id, 1
}

// outcome says how a process ended, for a violation's message.
func (r *result) outcome() string {
	switch {
	case r.killed:
		return fmt.Sprintf("killed %s after its start", r.op.killAfter.Round(10*time.Microsecond))
	case r.exit == 0:
		return "exit 0"
	default:
		return fmt.Sprintf("exit %d", r.exit)
	}
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return "(no output)"
	}
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// capList joins at most n items, saying how many more there are.
func capList(items []string, n int) string {
	if len(items) <= n {
		return strings.Join(items, ", ")
	}
	return strings.Join(items[:n], ", ") + fmt.Sprintf(" and %d more", len(items)-n)
}
