package main

import (
	"bytes"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

// TestSaveGenerated writes save points with the features people write, and decoys of
// every line ctx owns in every container, and runs save, the same save again and
// close on each, some with --decision, --assumption, --blocker, --file, --next and
// --phase. The generator knows which lines it wrote as ctx's and which as the
// person's; nothing of ctx decides it. After each run (judge in saveoracle_test.go):
//
//	a  the run exits 0; a document whose frontmatter holds a line break YAML counts
//	   and ctx does not (a lone CR, U+0085, U+2028, U+2029) is refused instead: exit 2,
//	   a message naming its line and "line break", the file untouched;
//	b  every line ctx does not own is there, in order, byte for byte, and every
//	   comment on a frontmatter value of ctx's stays a comment of that value;
//	c  the summary is in the real Last Session line, in its form and place (or in one
//	   added after the title), and so are --next and --phase in theirs; a header bold
//	   as a whole stays so; no decoy changed;
//	d  the second save changes nothing but dates and times;
//	e  no label is a header twice;
//	f  nothing is inserted between a header and the list or quote lines under it;
//	g  a header ctx filled has a space after its separator, and its bold closed;
//	j  each item the save adds (decision, assumption, blocker, file, the session's
//	   entry) is there once, a list item (or heading) of its section as cmark reads it,
//	   not code or HTML; ctx's compaction and loading-sequence blocks are there once
//	   each, as ctx writes them, in their sections;
//	k  each line of the person's stays in its section: under the same heading of level
//	   1 or 2 (or none), as cmark reads the document before and after.
//
// A line with a lone CR is never a header (two lines to CommonMark, one to an
// editor): it is the person's, whatever it says.
//
// "gen" counts documents the generator got wrong (cmark or YAML reads them otherwise
// than the generator meant, or the corpus test's reading of ownership disagrees with
// the generator's knowledge); ctx is not judged on them.
//
// $CTX_SAVEGEN_N documents (300), from seed $CTX_SAVEGEN_SEED; $CTX_SAVEGEN_ONLY runs
// one document by index; $CTX_SAVEGEN_SHOW failing documents are shown (10), and kept
// in $CTX_SAVEGEN_OUT when set.
func TestSaveGenerated(t *testing.T) {
	requireCmark(t)
	n := envInt(t, "CTX_SAVEGEN_N", 300)
	if testing.Short() && os.Getenv("CTX_SAVEGEN_N") == "" {
		n = 50
	}
	seed := uint64(envInt(t, "CTX_SAVEGEN_SEED", 23))
	indexes := make([]int, n)
	for i := range indexes {
		indexes[i] = i
	}
	if only := os.Getenv("CTX_SAVEGEN_ONLY"); only != "" {
		i, err := strconv.Atoi(only)
		if err != nil {
			t.Fatalf("CTX_SAVEGEN_ONLY=%q: not a number", only)
		}
		indexes = []int{i}
	}
	outDir := os.Getenv("CTX_SAVEGEN_OUT")
	if outDir == "" {
		outDir = t.TempDir()
	} else if err := os.MkdirAll(outDir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Logf("seed %d, %d documents (CTX_SAVEGEN_SEED, CTX_SAVEGEN_N)", seed, len(indexes))

	base := scratchDir(t)
	results := make([]*genResult, len(indexes))
	// Workers take chunks of documents: one run of cmark reads a whole chunk. Each
	// worker keeps its workspace in one folder, emptied for every document: ctx adds
	// every workspace it opens to a list in the process (durable.Confine) that each of
	// its writes searches, and ten thousand workspaces would make that most of the time.
	const chunk = 8
	work := make(chan int)
	var wg sync.WaitGroup
	start := time.Now()
	for w := range envInt(t, "CTX_SAVEGEN_WORKERS", 2*runtime.GOMAXPROCS(0)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			slot := filepath.Join(base, "worker-"+strconv.Itoa(w))
			for k := range work {
				end := min(k+chunk, len(indexes))
				copy(results[k:end], runGenerated(seed, indexes[k:end], slot))
			}
		}()
	}
	for k := 0; k < len(indexes); k += chunk {
		work <- k
	}
	close(work)
	wg.Wait()
	t.Logf("%d documents in %v", len(indexes), time.Since(start).Round(time.Millisecond))

	counts := newCheckCounts()
	failed, reported, show := 0, 0, envInt(t, "CTX_SAVEGEN_SHOW", 10)
	for _, r := range results {
		if len(r.findings) == 0 {
			continue
		}
		failed++
		counts.add(strconv.Itoa(r.index), r.findings)
		if reported == show {
			continue
		}
		reported++
		t.Error(r.report(seed, outDir))
	}
	if failed > 0 {
		t.Errorf("%d of %d documents failed (seed %d); the first %d are shown above", failed, len(indexes), seed, reported)
	}
	t.Logf("documents failing each check, of %d (seed %d):%s", len(indexes), seed, counts)
	t.Logf("documents with each feature, and how many of them failed:%s", featureCounts(results))
}

// featureCounts lists, for each feature the generator wrote, the documents that have it
// and how many of those failed a check.
func featureCounts(results []*genResult) string {
	type count struct{ docs, failed int }
	counts := map[string]*count{}
	for _, r := range results {
		for _, f := range r.features {
			if counts[f] == nil {
				counts[f] = &count{}
			}
			counts[f].docs++
			if len(r.findings) > 0 {
				counts[f].failed++
			}
		}
	}
	names := slices.Sorted(maps.Keys(counts))
	var sb strings.Builder
	for _, name := range names {
		fmt.Fprintf(&sb, "\n  %5d %5d  %s", counts[name].docs, counts[name].failed, name)
	}
	return sb.String()
}

func envInt(t *testing.T, name string, def int) int {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		t.Fatalf("%s=%q: want a number", name, v)
	}
	return n
}

// genResult is what the runs on one generated document found.
type genResult struct {
	index    int
	doc      []byte
	findings []finding
	// runs holds the save point after each run, and which run failed first.
	runs     [][]byte
	runNames []string
	diff     string
	features []string // what the generator wrote in it (docGen.feature)
}

func (r *genResult) report(seed uint64, outDir string) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "document %d (seed %d; reproduce: CTX_SAVEGEN_SEED=%d CTX_SAVEGEN_ONLY=%d go test ./cmd/ctx -run TestSaveGenerated):\n",
		r.index, seed, seed, r.index)
	for _, f := range r.findings {
		fmt.Fprintf(&sb, "  %s: %s\n", f.check, f.msg)
	}
	name := filepath.Join(outDir, fmt.Sprintf("doc-%d.md", r.index))
	if err := os.WriteFile(name, r.doc, 0o644); err == nil {
		fmt.Fprintf(&sb, "  written to %s", name)
	}
	for k, out := range r.runs {
		_ = os.WriteFile(filepath.Join(outDir, fmt.Sprintf("doc-%d.after-%s.md", r.index, r.runNames[k])), out, 0o644)
	}
	sb.WriteString("\n")
	if r.diff != "" {
		sb.WriteString(r.diff)
	}
	return sb.String()
}

// genRun is one generated document and what ctx did with it.
type genRun struct {
	res   *genResult
	doc   *genDoc
	sp    *savePoint
	exits []finding // a run that did not exit 0
}

// runGenerated generates the documents of indexes, runs save, save, close on each in
// a workspace in the folder slot, and judges each run. One run of cmark reads the documents
// and the files ctx wrote (cmarkDocs); each document is first checked to mean what
// the generator meant (selfCheck).
func runGenerated(seed uint64, indexes []int, slot string) []*genResult {
	var runs []*genRun
	var docs [][]string
	for _, index := range indexes {
		r := runCtxOnGenerated(seed, index, slot)
		runs = append(runs, r)
		if r.sp == nil {
			continue
		}
		docs = append(docs, r.sp.lines)
		for _, out := range r.res.runs {
			body, _ := cutBOM(out)
			docs = append(docs, splitLines(body))
		}
	}
	mds, err := cmarkDocs(docs)
	results := make([]*genResult, len(runs))
	for k, r := range runs {
		results[k] = r.res
		if r.sp == nil {
			continue
		}
		if err != nil {
			r.res.findings = append(r.res.findings, finding{"a", err.Error()})
			continue
		}
		n := 1 + len(r.res.runs)
		judgeGenerated(r, docs[:n], mds[:n])
		docs, mds = docs[n:], mds[n:]
	}
	return results
}

// runCtxOnGenerated generates document index and runs save, save, close on it in a
// workspace in the folder dir, made anew.
func runCtxOnGenerated(seed uint64, index int, dir string) *genRun {
	doc := generateSavePoint(seed, index)
	r := &genRun{res: &genResult{index: index, doc: doc.bytes(), features: doc.features}, doc: doc}
	fail := func(err error) *genRun {
		r.res.findings = append(r.res.findings, finding{"a", err.Error()})
		return r
	}
	if err := os.RemoveAll(dir); err != nil {
		return fail(err)
	}
	ws, home := filepath.Join(dir, "ws"), filepath.Join(dir, "home")
	planning := filepath.Join(ws, "02-projects", "01-gen", "01-planning")
	resumePath := filepath.Join(planning, "_resume.md")
	files := map[string][]byte{
		"overview.md": []byte("---\nname: Gen Project\nstatus: IN_PROGRESS\n---\n\n# Gen Project\n"),
		"steps.md":    []byte("# Steps\n\n## Phase 1: Build\n\n- [x] Task A\n- [ ] Task B\n- [ ] Task C\n"),
		"_resume.md":  r.res.doc,
	}
	if err := os.MkdirAll(planning, 0o755); err != nil {
		return fail(err)
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(planning, name), data, 0o644); err != nil {
			return fail(err)
		}
	}
	if err := makeHome(home); err != nil {
		return fail(err)
	}
	flags := []string{"-p", "1", "--summary", genSummary}
	if doc.flags.file != "" {
		path := filepath.Join(ws, "02-projects", "01-gen", "src", doc.flags.file)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return fail(err)
		}
		if err := os.WriteFile(path, []byte("package gen\n"), 0o644); err != nil {
			return fail(err)
		}
		flags = append(flags, "--file", path)
	}
	flags = append(flags, doc.flags.args()...)
	runs := []struct {
		name string
		now  string
		args []string
	}{
		{"save1", "2026-03-02T10:00:00Z", append([]string{"save"}, flags...)},
		{"save2", "2026-03-02T10:05:00Z", append([]string{"save"}, flags...)},
		{"close", "2026-03-02T10:10:00Z", append([]string{"close"}, flags...)},
	}
	for _, run := range runs {
		_, stderr, code := ctxRun(ws, home, run.now, run.args...)
		if doc.refuseLine > 0 {
			r.exits = append(r.exits, checkRefused(run.name, doc.refuseLine, code, stderr, resumePath, r.res.doc)...)
			continue
		}
		if code != 0 {
			r.exits = append(r.exits, finding{"a", fmt.Sprintf("%s: exit %d: %s", run.name, code, strings.TrimSpace(stderr))})
			break
		}
		out, err := os.ReadFile(resumePath)
		if err != nil {
			return fail(err)
		}
		r.res.runs = append(r.res.runs, out)
		r.res.runNames = append(r.res.runNames, run.name)
	}
	r.sp = doc.savePoint()
	return r
}

// genSummary is the --summary of every run.
const genSummary = "SUM1"

// checkRefused checks a run on a document ctx must refuse: exit 2, a message that
// names the line and the line break, and the file as it was.
func checkRefused(run string, line, code int, stderr, path string, orig []byte) []finding {
	var fs []finding
	msg := strings.TrimSpace(stderr)
	if code != 2 || !strings.Contains(stderr, fmt.Sprintf("_resume.md:%d:", line)) || !strings.Contains(stderr, "line break") {
		fs = append(fs, finding{"a", fmt.Sprintf("%s: want a refusal (exit 2) naming line %d and the line break; got exit %d: %s", run, line, code, msg)})
	}
	if now, err := os.ReadFile(path); err != nil || !bytes.Equal(now, orig) {
		fs = append(fs, finding{"a", fmt.Sprintf("%s: a document ctx must refuse was changed (%v)", run, err)})
	}
	return fs
}

// judgeGenerated judges the runs on one document, given cmark's readings of the
// document and of each file ctx wrote.
func judgeGenerated(r *genRun, docs [][]string, mds []*mdLines) {
	res := r.res
	if fs := r.doc.selfCheck(r.sp, mds[0]); len(fs) > 0 {
		res.findings = fs // the generator's mistake: ctx is not judged by it
		return
	}
	if res.index%100 == 0 {
		// cmarkDocs reads documents as cmark reads each alone.
		for k, lines := range docs {
			if alone, err := cmarkLines(lines); err != nil || !sameReading(alone, mds[k]) {
				res.findings = []finding{{"gen", fmt.Sprintf("cmarkDocs reads document %d otherwise than cmark alone (%v)", k, err)}}
				return
			}
		}
	}
	res.findings = r.exits
	if r.doc.refuseLine > 0 {
		return
	}
	f := r.doc.flags
	var want [3]string
	want[labelLastSession], want[labelCurrentPhase], want[labelNextAction] = genSummary, f.phase, f.next
	for k, out := range res.runs {
		fs := judgeValues(r.sp, out, mds[k+1], want)
		fs = append(fs, judgeAdded(f, r.sp.lines, mds[0], out, mds[k+1])...)
		fs = append(fs, judgeSections(r.sp, mds[0], out, mds[k+1])...)
		if k == 1 {
			if a, b := maskTimes(res.runs[0]), maskTimes(out); !bytes.Equal(a, b) {
				fs = append(fs, finding{"d", "the second save changed more than dates and times"})
				res.diff += "second save against the first:\n" + lineDiff(splitLines(a), splitLines(b), 2, 40)
			}
		}
		if len(fs) > 0 && !strings.Contains(res.diff, "original against") {
			res.diff = fmt.Sprintf("original against the file after %s:\n", res.runNames[k]) +
				lineDiff(splitLines(res.doc), splitLines(out), 2, 80) + res.diff
		}
		res.add(res.runNames[k], fs)
	}
}

// sameReading reports whether two readings of one document agree.
func sameReading(a, b *mdLines) bool {
	return bytes.Equal(a.kind, b.kind) && bytes.Equal(a.leaf, b.leaf) && fmt.Sprint(a.item) == fmt.Sprint(b.item) &&
		a.title == b.title && a.firstSection == b.firstSection &&
		fmt.Sprint(a.html, a.headings) == fmt.Sprint(b.html, b.headings)
}

func (r *genResult) add(run string, fs []finding) {
	for _, f := range fs {
		r.findings = append(r.findings, finding{f.check, run + ": " + f.msg})
	}
}

// A generated save point: its lines, and which of them ctx owns.
type genLine struct {
	text  string
	owned bool
	decoy bool
	label int    // the label of a real header line, else -1
	keep  string // a comment at the end of a line of a frontmatter value of ctx's that must stay
}

type genDoc struct {
	lines  []genLine
	bom    bool
	crlf   bool
	noEOL  bool // the last line has no line ending
	realAt [3]int
	keys   []string // the frontmatter's keys, when it has one
	hasFM  bool
	// refuseLine is the line (1-based) of a line break YAML counts and ctx does not in
	// the frontmatter, which ctx must refuse naming it; 0 when ctx must edit the document.
	refuseLine int
	flags      genFlags
	features   []string // the features of the generator's it has, for the log
}

// genFlags are the values of the save flags the runs on a document pass, tokens the
// document does not hold; "" for a flag not passed. file is a file name under the
// project's src folder, made for the runs.
type genFlags struct {
	decision, assumption, blocker, file, next, phase string
}

func (f genFlags) args() []string {
	var args []string
	for _, a := range []struct{ flag, value string }{
		{"--decision", f.decision}, {"--assumption", f.assumption}, {"--blocker", f.blocker},
		{"--next", f.next}, {"--phase", f.phase},
	} {
		if a.value != "" {
			args = append(args, a.flag, a.value)
		}
	}
	return args
}

func (d *genDoc) bytes() []byte {
	var b bytes.Buffer
	if d.bom {
		b.Write(utf8BOM)
	}
	eol := "\n"
	if d.crlf {
		eol = "\r\n"
	}
	for i, l := range d.lines {
		b.WriteString(l.text)
		if i < len(d.lines)-1 || !d.noEOL {
			b.WriteString(eol)
		}
	}
	return b.Bytes()
}

// savePoint is the document as the judge reads it: the generator's own knowledge.
func (d *genDoc) savePoint() *savePoint {
	body, bom := cutBOM(d.bytes())
	sp := &savePoint{bom: bom, lines: splitLines(body), real: d.realAt, keep: map[int]string{}}
	if len(sp.lines) != len(d.lines) {
		panic(fmt.Sprintf("generated %d lines, wrote %d", len(d.lines), len(sp.lines)))
	}
	sp.owned = make([]bool, len(sp.lines))
	sp.decoy = make([]bool, len(sp.lines))
	for i, l := range d.lines {
		sp.owned[i], sp.decoy[i] = l.owned, l.decoy
		if l.keep != "" {
			sp.keep[i] = l.keep
		}
	}
	return sp
}

// selfCheck reports where cmark or YAML read the document otherwise than the
// generator meant: such a document would judge ctx by a mistake of the generator's.
// It also holds the corpus test's reading of ownership (ownedLines) to the
// generator's knowledge.
func (d *genDoc) selfCheck(sp *savePoint, md *mdLines) []finding {
	var fs []finding
	if got := realHeaders(sp.lines, md); got != d.realAt {
		fs = append(fs, finding{"gen", fmt.Sprintf("header lines: cmark reads %v, generator meant %v (0-based)", got, d.realAt)})
	}
	owned := ownedLines(sp.lines, md)
	for i := range owned {
		if owned[i] != sp.owned[i] {
			fs = append(fs, finding{"gen", fmt.Sprintf("line %d %q: ownedLines says owned=%v, generator meant %v", i+1, trimEOL(sp.lines[i]), owned[i], sp.owned[i])})
			break
		}
	}
	if d.hasFM {
		end := frontmatterEnd(sp.lines)
		var m map[string]any
		if err := yaml.Unmarshal([]byte(strings.Join(sp.lines[1:end-1], "")), &m); err != nil {
			fs = append(fs, finding{"gen", "frontmatter: " + err.Error()})
		} else {
			var got []string
			for k := range m {
				got = append(got, k)
			}
			want := append([]string(nil), d.keys...)
			sort.Strings(got)
			sort.Strings(want)
			if strings.Join(got, " ") != strings.Join(want, " ") {
				fs = append(fs, finding{"gen", fmt.Sprintf("frontmatter keys %v, generator meant %v", got, want)})
			}
		}
	}
	return fs
}

// docGen writes one document, line by line. Blocks end with a blank line.
type docGen struct {
	r *rand.Rand
	n int
	genDoc
	quoteAllowed bool   // a blockquote written now would not be the one under the title
	tabSep       bool   // header lines have a tab after their separator
	anchor       string // a YAML anchor on a key of the person's, for an alias
	lastSub      string // the subsection of Critical Context written last
	titled       bool   // the document has a title (else a level-1 heading would be one)
}

func (g *docGen) tok(kind string) string { g.n++; return kind + "-" + strconv.Itoa(g.n) }

// feature records that the document has a feature, for the log.
func (g *docGen) feature(name string) {
	if !slices.Contains(g.features, name) {
		g.features = append(g.features, name)
	}
}
func (g *docGen) chance(p float64) bool { return g.r.Float64() < p }
func (g *docGen) pick(xs ...string) string {
	return xs[g.r.IntN(len(xs))]
}

func (g *docGen) person(text string) {
	g.lines = append(g.lines, genLine{text: text, label: -1})
	if text != "" {
		g.quoteAllowed = true
	}
}
func (g *docGen) owned(text string) {
	g.lines = append(g.lines, genLine{text: text, owned: true, label: -1})
}
func (g *docGen) decoy(text string) {
	g.lines = append(g.lines, genLine{text: text, decoy: true, label: -1})
	g.quoteAllowed = true
}
func (g *docGen) blank() { g.person("") }

func (g *docGen) header(label int, text string) {
	g.realAt[label] = len(g.lines)
	g.lines = append(g.lines, genLine{text: text, owned: true, label: label})
}

var (
	ownedKeyOrder = []string{
		"resume_version", "last_updated", "compaction_count", "total_tokens_approx", "session_count",
		"project_id", "project_name", "project_status", "current_phase", "current_skill",
		"current_workflow_step", "current_section", "current_section_name", "next_task_number",
		"next_task_description", "progress_tasks_completed", "progress_tasks_total",
		"progress_percentage", "planning_completed",
	}
	intKeys    = wordSet("compaction_count total_tokens_approx session_count current_section next_task_number progress_tasks_completed progress_tasks_total progress_percentage")
	stringKeys = wordSet("project_name current_phase current_skill current_workflow_step current_section_name next_task_description")
	realTokens = [3]string{"REAL-LS", "REAL-CP", "REAL-NA"}
)

func wordSet(s string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(s) {
		m[w] = true
	}
	return m
}

// generateSavePoint writes document index of seed.
func generateSavePoint(seed uint64, index int) *genDoc {
	g := &docGen{r: rand.New(rand.NewPCG(seed, uint64(index)))}
	g.realAt = [3]int{-1, -1, -1}
	g.crlf = g.chance(0.25)
	g.tabSep = g.chance(0.04)
	if g.chance(0.02) {
		g.emptyDocument()
		return &g.genDoc
	}
	if g.chance(0.85) {
		g.bom = g.chance(0.1)
		g.frontmatter()
		if g.chance(0.8) {
			g.blank()
		}
	} else {
		g.bom = g.chance(0.35) // right before the title, or before a header line
	}
	var present [3]bool
	for i := range present {
		present[i] = g.chance(0.75)
	}
	lateLS := present[labelLastSession] && g.chance(0.15) // under a later "## Session Continuity"
	// Without a title (and frontmatter), the document opens with its header lines.
	titled := g.hasFM || g.chance(0.7)
	g.titled = titled
	if titled {
		g.person(g.pick("# Resume: Gen Project ", "# Gen Project ", "# Save point ") + g.tok("T"))
		if g.chance(0.8) {
			g.blank()
		}
	}
	g.quoteAllowed = false
	var now []int
	for label, ok := range present {
		if ok && (label != labelLastSession || !lateLS) {
			now = append(now, label)
		}
	}
	if g.chance(0.2) {
		g.r.Shuffle(len(now), func(i, j int) { now[i], now[j] = now[j], now[i] })
	}
	if len(now) > 0 {
		if titled && g.chance(0.3) {
			g.quoteHeaders(now)
		} else {
			if titled && g.chance(0.15) {
				g.person("Intro by Dana " + g.tok("P"))
				g.blank()
			}
			g.paragraphHeaders(now, titled)
		}
		g.blank()
	}
	for range g.r.IntN(3) {
		g.block()
	}
	// A fence that never closes ends the document: at times in a list item, at times
	// at the end of a section ctx appends to.
	openTail, last := "", ""
	if g.chance(0.1) {
		openTail = g.pick("fence", "item")
		if g.chance(0.6) {
			last = g.pick("Files Modified", "Critical Context to Remember", "Session History")
		}
	}
	g.sections(lateLS, last)
	if g.chance(0.08) {
		// A begin marker with no end: the person's, and so is all that follows.
		g.decoy("<!-- ctx:begin compaction -->")
		g.person("- Compactions noted by hand " + g.tok("P"))
		g.blank()
	}
	switch {
	case openTail == "fence":
		g.openFence("")
	case openTail == "item":
		g.person("- notes on the work " + g.tok("P") + ":")
		g.openFence("  ")
	case g.chance(0.08):
		g.person(g.pick("```", "```md", "~~~"))
		for range 1 + g.r.IntN(3) {
			g.decoy(g.decoyText(true, true))
		}
	default:
		for len(g.lines) > 0 && g.lines[len(g.lines)-1].text == "" && g.chance(0.9) {
			g.lines = g.lines[:len(g.lines)-1]
		}
	}
	g.noEOL = g.chance(0.05)
	if g.noEOL && g.lines[len(g.lines)-1].text == "" {
		g.lines = g.lines[:len(g.lines)-1]
	}
	if g.noEOL {
		g.feature("no line ending at the end")
	}
	if g.bom && !g.hasFM {
		g.feature("BOM without frontmatter")
		switch first := g.lines[0].text; {
		case strings.HasPrefix(first, "# "):
			g.feature("BOM right before the title")
		case strings.HasPrefix(first, "**") || strings.HasPrefix(first, "Last") || strings.HasPrefix(first, "Current") || strings.HasPrefix(first, "Next"):
			g.feature("BOM right before a header line")
		}
	}
	if openTail != "" {
		g.feature("fence open at the end" + map[string]string{"item": ", in a list item"}[openTail])
		if last != "" {
			g.feature("fence open at the end of " + last)
		}
	}
	g.saveFlags(last)
	return &g.genDoc
}

// emptyDocument writes a save point of nothing, or of blank lines and spaces.
func (g *docGen) emptyDocument() {
	g.bom = g.chance(0.3)
	for range g.r.IntN(4) {
		g.person(g.pick("", " ", "   ", "\t", " \t "))
	}
	g.noEOL = len(g.lines) > 0 && g.lines[len(g.lines)-1].text != "" && g.chance(0.5)
	if len(g.lines) == 0 {
		g.feature("empty document")
	} else {
		g.feature("document of blank lines and spaces")
	}
	if g.bom {
		g.feature("BOM without frontmatter")
	}
	g.saveFlags("")
}

// saveFlags chooses the flags of the runs: at times some of them, and always the one
// that appends to last, the section that ends in an open fence.
func (g *docGen) saveFlags(last string) {
	f := &g.flags
	if g.chance(0.35) {
		for _, x := range []struct {
			v    *string
			kind string
		}{{&f.decision, "DEC"}, {&f.assumption, "ASM"}, {&f.blocker, "BLK"}, {&f.file, "F"}, {&f.next, "NEXT"}, {&f.phase, "PHASE"}} {
			if g.chance(0.4) {
				*x.v = g.tok(x.kind)
			}
		}
	}
	switch last {
	case "Files Modified":
		f.file = g.tok("F")
	case "Critical Context to Remember":
		if g.lastSub == "Important Assumptions" {
			f.assumption = g.tok("ASM")
		} else {
			f.decision = g.tok("DEC")
		}
	}
	if f.file != "" {
		f.file += ".go"
	}
	for _, a := range f.args() {
		if strings.HasPrefix(a, "--") {
			g.feature("flag " + a)
		}
	}
	if f.file != "" {
		g.feature("flag --file")
	}
}

// openFence writes a fenced code block that never closes, each line after indent (a
// list item's): often a longer fence with a shorter fence line in it, which does not
// close it, at times as its last line.
func (g *docGen) openFence(indent string) {
	c := g.pick("`", "~")
	n := 3
	if g.chance(0.7) {
		n = 4 + g.r.IntN(2)
	}
	g.person(indent + strings.Repeat(c, n) + g.pick("", "md", "text"))
	lines := 1 + g.r.IntN(3)
	short := -1
	if n > 3 {
		short = g.r.IntN(lines + 1)
	}
	for k := 0; k <= lines; k++ {
		if k == short {
			g.person(indent + strings.Repeat(g.pick(c, c, "`", "~"), 3+g.r.IntN(n-3)))
			g.feature("a shorter fence line in a fence open at the end")
		}
		if k < lines {
			g.decoy(indent + g.decoyText(true, true))
		}
	}
}

// frontmatter writes keys of ctx's and of the person's, with comments between and
// under them, multi-line and quoted values and lists.
func (g *docGen) frontmatter() {
	g.hasFM = true
	g.person("---")
	if g.chance(0.3) {
		g.person("# save point of the gen project " + g.tok("P"))
	}
	type key struct {
		name  string
		write func()
	}
	var keys []key
	for _, k := range ownedKeyOrder {
		if g.chance(0.5) {
			keys = append(keys, key{k, func() { g.ownedKey(k) }})
		}
	}
	if g.chance(0.12) {
		// An anchor on a key of the person's, first, so that a key of ctx's can alias it.
		g.anchor = "ref" + strconv.Itoa(g.n)
		g.keys = append(g.keys, "reference")
		g.person("reference: &" + g.anchor + " Shared value " + g.tok("P"))
	}
	personKeys := []key{
		{"owner", func() { g.person("owner: Dana " + g.tok("P")) }},
		{"tags", func() { g.person("tags: [alpha, beta-" + g.tok("P") + "]") }},
		{"links", func() {
			g.person("links:")
			g.person("  - one " + g.tok("P"))
			if g.chance(0.5) {
				g.person("  # between items " + g.tok("P"))
			}
			g.person("  - two " + g.tok("P"))
		}},
		{"meta", func() {
			g.person("meta:")
			g.decoy("  last_updated: " + g.tok("DECOY"))
			g.decoy("  session_count: 7  # " + g.tok("DECOY"))
		}},
		{"last_updated_by", func() { g.decoy("last_updated_by: " + g.tok("DECOY")) }},
		{"summary", func() { g.person(`summary: "quoted: value ` + g.tok("P") + `"`) }},
		{"description", func() {
			g.person("description: first line " + g.tok("P"))
			g.person("  second line " + g.tok("P"))
		}},
	}
	for _, k := range personKeys {
		if g.chance(0.3) {
			keys = append(keys, k)
		}
	}
	if g.chance(0.05) {
		// A block scalar holding an indented "---": not the frontmatter's end.
		g.feature("an indented --- in a block scalar")
		keys = append(keys, key{"notes", func() {
			g.person("notes: |")
			g.person("  ---")
			g.person("  more " + g.tok("P"))
		}})
	}
	if g.chance(0.04) {
		// A line break YAML counts and ctx does not, in a quoted value: ctx refuses.
		keys = append(keys, key{"pasted", func() {
			brk := g.pick("\u2028", "\u2029", "\u0085", "\u2028", "\u2029", "\u0085", "\r")
			q := g.pick(`"`, "'")
			g.refuseLine = len(g.lines) + 1
			g.feature(fmt.Sprintf("frontmatter line break %+q in a quoted value (refused)", brk))
			g.person("pasted: " + q + "pasted " + g.tok("P") + brk + "text" + q)
		}})
	}
	g.r.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
	for _, k := range keys {
		g.keys = append(g.keys, k.name)
		k.write()
		switch g.r.IntN(20) {
		case 0, 1:
			g.person("# a comment between keys " + g.tok("P"))
		case 2:
			g.decoy("# session_count: " + g.tok("DECOY"))
		case 3:
			g.blank()
		}
	}
	g.person("---")
}

// ownedKey writes a key of ctx's with a value of its kind, in a style people use.
func (g *docGen) ownedKey(k string) {
	if (intKeys[k] || stringKeys[k]) && g.chance(0.06) {
		g.ownedKeyStyled(k)
		return
	}
	var val string
	multiline := false
	switch {
	case intKeys[k]:
		val = strconv.Itoa(g.r.IntN(20))
	case k == "last_updated":
		val = g.pick("2026-02-10", "2026-02-10T09:00:00Z", `"2026-02-10"`)
		multiline = g.chance(0.1)
	case k == "resume_version":
		val = "3"
	case k == "project_id":
		val = "01-gen"
	case k == "project_status":
		val = g.pick("IN_PROGRESS", "PLANNING")
	case k == "planning_completed":
		val = g.pick("true", "false")
	case stringKeys[k]:
		switch g.r.IntN(5) {
		case 0:
			val = `"Quoted: value ` + g.tok("P") + `"`
		case 1:
			val = `'it''s ` + g.tok("P") + `'`
		case 2:
			val = `""`
		default:
			val = "Plain value " + g.tok("P")
			multiline = g.chance(0.35)
		}
	}
	if multiline {
		g.owned(k + ": first part " + g.tok("P"))
		if g.chance(0.3) {
			g.ownedWithComment("  continued plain "+g.tok("P"), "# note "+g.tok("P"))
			g.feature("owned key: multi-line plain value, comment on its last line")
		} else {
			g.owned("  continued plain " + g.tok("P"))
		}
		if g.chance(0.6) {
			g.person("   # indented comment " + g.tok("P"))
		}
		return
	}
	if g.chance(0.15) {
		g.ownedWithComment(k+": "+val+"  ", "# note "+g.tok("P"))
	} else {
		g.owned(k + ": " + val)
	}
	if g.chance(0.1) {
		g.person("  # a comment under the key " + g.tok("P"))
	}
}

// ownedWithComment writes a line of a value of ctx's, text, with comment at its end.
func (g *docGen) ownedWithComment(text, comment string) {
	if !strings.HasSuffix(text, " ") {
		text += " "
	}
	g.lines = append(g.lines, genLine{text: text + comment, owned: true, label: -1, keep: comment})
}

// ownedKeyStyled writes a key of ctx's in a style whose comments an edit of the value
// must keep: a flow value, an alias, a block scalar with a comment less indented after
// it, a plain value over lines with a comment at the end of the last.
func (g *docGen) ownedKeyStyled(k string) {
	switch style := g.r.IntN(4); {
	case style == 1 && g.anchor != "":
		g.ownedWithComment(k+": *"+g.anchor, "# note "+g.tok("P"))
		g.feature("owned key: alias with a comment")
	case style <= 1:
		g.ownedWithComment(k+": [a, b-"+g.tok("P")+"]", "# note "+g.tok("P"))
		g.feature("owned key: flow value with a comment")
	case style == 2:
		g.feature("owned key: block scalar, a comment less indented after it")
		g.owned(k + ": " + g.pick("|", "|-", ">"))
		indent := g.pick("    ", "  ", "   ")
		for range 1 + g.r.IntN(2) {
			g.owned(indent + "block line " + g.tok("P"))
		}
		g.person(strings.Repeat(" ", g.r.IntN(len(indent))) + "# less indented " + g.tok("P"))
	default:
		g.owned(k + ": first part " + g.tok("P"))
		g.ownedWithComment("  continued plain "+g.tok("P"), "# note "+g.tok("P"))
		g.feature("owned key: multi-line plain value, comment on its last line")
	}
}

var (
	boldForms  = []string{"**%s:** ", "**%s**: "}
	allForms   = []string{"**%s:** ", "**%s**: ", "%s: "}
	labelCases = [3][]string{
		{"Last Session", "Last session"},
		{"Current Phase", "Current phase"},
		{"Next Action", "Next action"},
	}
)

// wholeBold is the form "**Label: value**": the line bold as a whole.
const wholeBold = "**%s: …**"

// headerText is a header line of label in form, with a unique value or none; with a
// tab after the separator when the document writes them so.
func (g *docGen) headerText(label int, form string, value string) string {
	name := labelCases[label][g.r.IntN(2)]
	sep := " "
	if g.tabSep {
		sep = "\t"
	}
	if form == wholeBold {
		if value != "" {
			return "**" + name + ":" + sep + value + "**"
		}
		form = boldForms[0]
	}
	head := strings.TrimSuffix(fmt.Sprintf(form, name), " ")
	if value == "" {
		return head
	}
	return head + sep + value
}

// headerForm picks a form of forms, or at times the whole-line bold one.
func (g *docGen) headerForm(forms []string) string {
	if g.chance(0.1) {
		return wholeBold
	}
	return forms[g.r.IntN(len(forms))]
}

// realHeader writes the header line of label after prefix (a quote marker) in form;
// at times with a lone CR in its value, which makes it the person's line, or with a
// line break of Unicode's, which is text.
func (g *docGen) realHeader(label int, prefix, form string) {
	value := g.realValue(label)
	switch {
	case g.chance(0.04):
		value = g.tok(realTokens[label]) + "\rafter a CR " + g.tok("P")
		g.decoy(prefix + g.headerText(label, form, value))
		g.feature("lone CR in a header's value (the person's line)")
	case g.chance(0.03):
		value = g.tok(realTokens[label]) + g.pick("\u2028", "\u2029", "\u0085") + "more"
		g.header(label, prefix+g.headerText(label, form, value))
		g.feature("Unicode line break in a header's value")
	default:
		g.header(label, prefix+g.headerText(label, form, value))
	}
	if form == wholeBold && value != "" {
		g.feature("header bold as a whole")
	}
	if g.tabSep && value != "" {
		g.feature("tab after a header's separator")
	}
}

func (g *docGen) realValue(label int) string {
	if g.chance(0.1) {
		return ""
	}
	return g.tok(realTokens[label])
}

// quoteHeaders writes the proposal's form: header lines in a blockquote right under
// the title.
func (g *docGen) quoteHeaders(labels []int) {
	form := g.headerForm(boldForms)
	for k, label := range labels {
		if k > 0 && g.chance(0.2) {
			g.person(">")
		}
		g.realHeader(label, "> ", form)
		if g.chance(0.12) {
			g.person("> Noted by Dana " + g.tok("P"))
		}
		if g.chance(0.12) {
			g.person("> - detail " + g.tok("P"))
			g.person("> - detail " + g.tok("P"))
			g.person(">")
		}
	}
	g.quoteAllowed = true
}

// paragraphHeaders writes header lines as a paragraph at the top level, with the
// person's lines among them (before the first only when intro) and lists or quotes
// under them.
func (g *docGen) paragraphHeaders(labels []int, intro bool) {
	form := g.headerForm(allForms)
	mixed := g.chance(0.2)
	if intro && g.chance(0.15) {
		g.person("Status of the work " + g.tok("P"))
	}
	for _, label := range labels {
		f := form
		if mixed {
			f = g.headerForm(allForms)
		}
		g.realHeader(label, "", f)
		switch {
		case g.chance(0.1):
			g.person("Noted by Dana " + g.tok("P"))
		case g.chance(0.12):
			g.person("- detail " + g.tok("P"))
			g.person("- detail " + g.tok("P"))
			g.blank()
		case g.chance(0.05):
			g.person("> quoted detail " + g.tok("P"))
			g.blank()
		}
	}
	g.quoteAllowed = true
}

// sections writes the sections people keep, in any order, some with setext headings.
func (g *docGen) sections(lateLS bool, last string) {
	names := []string{
		g.pick("Loading Sequence", "Loading Sequence for Resume"), "Session History",
		"Critical Context to Remember", g.pick("Files Modified", "Files Modified This Project"),
		"Notes", "Quick Context", "Session Continuity", "Compaction Detection", "Resume Prompt",
	}
	g.r.Shuffle(len(names), func(i, j int) { names[i], names[j] = names[j], names[i] })
	count := 2 + g.r.IntN(len(names)-1)
	chosen := append([]string(nil), names[:count]...)
	if lateLS && !contains(chosen, "Session Continuity") {
		chosen = append(chosen, "Session Continuity")
	}
	if last != "" {
		// The section that ends the document, in an open fence.
		k := slices.IndexFunc(names, func(n string) bool { return strings.HasPrefix(n, last) })
		last = names[k]
		chosen = slices.DeleteFunc(chosen, func(n string) bool { return n == last })
		chosen = append(chosen, last)
	}
	for _, name := range chosen {
		g.heading(2, name)
		g.maybeBlocks()
		switch name {
		case "Loading Sequence", "Loading Sequence for Resume":
			g.markedBody("loading-sequence", 0.4, func() {
				g.owned("<!-- ctx:begin loading-sequence -->")
				g.owned("1. `01-planning/_resume.md` — save point")
				g.owned("2. `01-planning/steps.md` — steps")
				g.owned("<!-- ctx:end loading-sequence -->")
			}, func() {
				g.person("1. **This file first** (`_resume.md`) " + g.tok("P"))
				g.person("2. `overview.md` " + g.tok("P"))
			})
		case "Session History":
			if g.chance(0.5) {
				g.person("### Session 1 — 2026-01-05")
				g.person("- did the first part " + g.tok("P"))
			} else {
				g.person("- 2026-01-05: started " + g.tok("P"))
				g.person("- 2026-01-06: went on " + g.tok("P"))
			}
			g.blank()
		case "Critical Context to Remember":
			g.heading(3, "Key Decisions")
			g.person("- decided " + g.tok("P"))
			g.blank()
			g.lastSub = "Key Decisions"
			if g.chance(0.5) {
				g.heading(3, "Important Assumptions")
				g.person("- assumed " + g.tok("P"))
				g.blank()
				g.lastSub = "Important Assumptions"
			}
		case "Session Continuity":
			if lateLS {
				g.header(labelLastSession, g.headerText(labelLastSession, "%s: ", g.realValue(labelLastSession)))
				g.person("Stopped at: " + g.tok("P"))
				g.person("Resume file: None")
				g.blank()
			} else {
				g.person("Stopped at: " + g.tok("P"))
				g.blank()
			}
		case "Compaction Detection":
			g.markedBody("compaction", 0.5, func() {
				g.owned("<!-- ctx:begin compaction -->")
				g.owned("- Compactions this project: 0")
				g.owned("<!-- ctx:end compaction -->")
			}, func() {
				g.person("No compactions noted " + g.tok("P"))
			})
		case "Resume Prompt":
			g.person("> Resume the gen project " + g.tok("P"))
			g.decoy("> " + g.headerText(labelLastSession, g.pick(boldForms...), g.tok("DECOY")))
			g.blank()
		default:
			g.person("Person note " + g.tok("P") + " on the work.")
			g.blank()
		}
		if name != last {
			g.maybeBlocks()
		}
	}
}

// markedBody writes the body of the section of ctx's block name: the block (ctx's, with
// chance p) or the person's lines; at times also ctx's markers inside an HTML block of
// the person's, which are the person's with the lines between them, and ctx's block
// before or after them, or none.
func (g *docGen) markedBody(name string, p float64, ctxBlock, own func()) {
	if !g.chance(0.2) {
		if g.chance(p) {
			ctxBlock()
		} else {
			own()
		}
		g.blank()
		return
	}
	begin, end := "<!-- ctx:begin "+name+" -->", "<!-- ctx:end "+name+" -->"
	where := g.r.IntN(3) // 0: no block of ctx's, 1: before, 2: after
	if where == 1 {
		ctxBlock()
		g.blank()
	}
	switch v := g.r.IntN(3); v {
	case 0: // in an HTML block, which a blank line would end
		g.feature("ctx's markers in an HTML block")
		tag := g.pick("div", "details")
		g.person("<" + tag + ">")
		g.decoy(begin)
		g.person("- example " + g.tok("P"))
		g.decoy(end)
		g.person("</" + tag + ">")
	case 1: // in a comment over several lines, which the begin marker's "-->" closes
		g.feature("ctx's markers in a comment over lines")
		g.person(g.pick("<!--", "<!-- an older copy "+g.tok("P")))
		g.decoy(begin)
		g.person("- example " + g.tok("P"))
		g.decoy(end)
		g.person("-->")
	default: // a comment the end marker closes, and right under it ctx's own block
		g.feature("ctx's end marker closing a comment")
		g.person("<!-- an older copy " + g.tok("P"))
		g.decoy(end)
		if where != 1 {
			ctxBlock()
			where = 0
		}
	}
	g.blank()
	if where == 2 {
		ctxBlock()
		g.blank()
	}
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

func (g *docGen) heading(level int, name string) {
	if level == 2 && g.chance(0.15) {
		g.person(name)
		g.person(strings.Repeat("-", 3+g.r.IntN(5)))
	} else if g.chance(0.1) {
		g.person(strings.Repeat("#", level) + " " + name + " " + strings.Repeat("#", level))
	} else {
		g.person(strings.Repeat("#", level) + " " + name)
	}
	g.blank()
	g.quoteAllowed = true
}

func (g *docGen) maybeBlocks() {
	for range g.r.IntN(3) {
		g.block()
	}
}

// block writes one block: the person's text, or decoys in one kind of container.
func (g *docGen) block() {
	switch g.r.IntN(18) {
	case 0:
		g.person("Person note " + g.tok("P") + ".")
		if g.chance(0.3) {
			g.person("A second line " + g.tok("P") + ".")
		}
	case 1:
		g.person("- item " + g.tok("P"))
		g.person("  - nested " + g.tok("P"))
		g.person("- item " + g.tok("P"))
	case 2: // fenced code, at times a longer fence with a shorter fence line in it
		fence := g.pick("```", "~~~", "````")
		short := ""
		if g.chance(0.3) {
			fence = g.pick("````", "`````", "~~~~", "~~~~~")
			short = strings.Repeat(fence[:1], 3+g.r.IntN(len(fence)-3))
			g.feature("a shorter fence line in a longer fence")
		}
		g.person(fence + g.pick("", "md", "markdown", "yaml", "text {.example}"))
		n := 1 + g.r.IntN(4)
		at := g.r.IntN(n + 1)
		for k := 0; k <= n; k++ {
			if k == at && short != "" {
				g.person(short)
			}
			if k < n {
				g.decoy(g.decoyText(true, true))
			}
		}
		g.person(fence)
	case 3: // indented code, after a paragraph of its own
		g.person("Example " + g.tok("P") + ":")
		g.blank()
		for range 1 + g.r.IntN(3) {
			g.decoy("    " + g.decoyText(true, true))
		}
	case 4:
		g.decoy("<!-- " + g.decoyText(false, false) + " -->")
	case 5: // a comment over several lines, blank lines in it
		g.person("<!--")
		for range 1 + g.r.IntN(3) {
			g.decoy(g.decoyText(false, true))
			if g.chance(0.3) {
				g.blank()
			}
		}
		if g.chance(0.3) {
			g.decoy("ctx:begin compaction")
		}
		g.person("-->")
	case 6: // an HTML block: no blank line inside, or it would end
		tag := g.pick("details", "div")
		g.person("<" + tag + ">")
		g.person("<summary>Older notes " + g.tok("P") + "</summary>")
		for range 1 + g.r.IntN(3) {
			g.decoy(g.decoyText(true, true))
		}
		g.person("</" + tag + ">")
	case 7: // a blockquote further down, lazy lines in it
		if !g.quoteAllowed {
			g.person("Person note " + g.tok("P") + ".")
			break
		}
		g.person("> quoted note " + g.tok("P"))
		g.decoy("> " + g.decoyHeader(allForms))
		if g.chance(0.5) {
			g.decoy(g.decoyHeader(allForms)) // a lazy continuation line
		}
	case 8: // list items, nested, ordered
		g.decoy("- " + g.decoyHeader(allForms))
		g.decoy("  - " + g.decoyHeader(allForms))
		if g.chance(0.5) {
			g.decoy("1. " + g.decoyHeader(allForms))
		}
	case 9: // a lazy continuation line of a list item
		g.person("- item " + g.tok("P"))
		g.decoy(g.decoyHeader(allForms))
	case 10:
		g.person("| Field | Value |")
		g.person("|---|---|")
		g.decoy("| " + g.decoyHeader(allForms) + " | x |")
	case 11: // a setext heading
		if g.chance(0.3) {
			g.person("Older state " + g.tok("P"))
		}
		g.decoy(g.decoyHeader(allForms))
		if g.titled {
			g.person(g.pick("---", "-----", "==="))
		} else {
			g.person(g.pick("---", "-----")) // a level-1 heading would be the title
		}
	case 12:
		g.decoy(g.pick("### ", "#### ") + g.decoyHeader([]string{"%s: "}))
	case 13: // a second occurrence after the real one
		var done []int
		for label, at := range g.realAt {
			if at >= 0 {
				done = append(done, label)
			}
		}
		if len(done) == 0 {
			g.person("Person note " + g.tok("P") + ".")
			break
		}
		label := done[g.r.IntN(len(done))]
		g.decoy(g.headerText(label, allForms[g.r.IntN(len(allForms))], g.tok("DECOY")))
	case 14: // frontmatter keys and ctx markers in text
		g.decoy(ownedKeyOrder[g.r.IntN(len(ownedKeyOrder))] + ": " + g.tok("DECOY"))
		if g.chance(0.5) {
			g.decoy("`<!-- ctx:begin compaction -->` is where ctx writes " + g.tok("DECOY"))
		}
	case 15: // a frontmatter look-alike in the body: a rule and a setext heading
		if !slices.ContainsFunc(g.lines, func(l genLine) bool { return strings.TrimSpace(l.text) != "" }) {
			// First in the document it would be a frontmatter, not a look-alike.
			g.person("Person note " + g.tok("P") + ".")
		}
		g.person("---")
		g.decoy(ownedKeyOrder[g.r.IntN(len(ownedKeyOrder))] + ": " + g.tok("DECOY"))
		g.person("---")
	case 16:
		g.person("- [ ] a checkbox of the person's " + g.tok("P"))
	case 17: // a lone CR or a line break of Unicode's (text to CommonMark) in a line
		if g.chance(0.5) {
			g.person("Person note " + g.tok("P") + ".")
			break
		}
		brk := g.pick("\r", "\r", "\u2028", "\u2029", "\u0085")
		if brk == "\r" {
			g.feature("lone CR in a line of the body")
		} else {
			g.feature("Unicode line break in a line of the body")
		}
		switch g.r.IntN(4) {
		case 0:
			g.person("Person note " + g.tok("P") + brk + "after it " + g.tok("P"))
		case 1:
			g.person("- item " + g.tok("P") + brk + "after it " + g.tok("P"))
		case 2: // a header look-alike after the break: never a header
			g.decoy("Person note " + g.tok("P") + brk + g.decoyHeader(allForms))
		default: // a header look-alike before it: a header place only with a lone CR
			var done []int
			for label, at := range g.realAt {
				if at >= 0 {
					done = append(done, label)
				}
			}
			switch {
			case brk == "\r":
				g.decoy(g.decoyHeader(allForms) + brk + "after it " + g.tok("P"))
			case len(done) > 0:
				g.decoy(g.headerText(done[g.r.IntN(len(done))], g.headerForm(allForms), g.tok("DECOY")) + brk + "after it " + g.tok("P"))
			default:
				g.decoy("- " + g.decoyHeader(allForms) + brk + "after it " + g.tok("P"))
			}
		}
	}
	g.blank()
}

// decoyHeader is a look-alike of a header line in one of forms (or bold as a whole).
func (g *docGen) decoyHeader(forms []string) string {
	return g.headerText(g.r.IntN(3), g.headerForm(forms), g.tok("DECOY"))
}

// decoyText is a look-alike of a line ctx owns: a header line, a frontmatter key, and
// where raw text allows them (code), a ctx marker (markers) or a section heading.
func (g *docGen) decoyText(markers, headings bool) string {
	switch g.r.IntN(6) {
	case 0:
		return ownedKeyOrder[g.r.IntN(len(ownedKeyOrder))] + ": " + g.tok("DECOY")
	case 1:
		if markers {
			return "<!-- ctx:" + g.pick("begin", "end") + " " + g.pick(oracleMarkers...) + " -->"
		}
	case 2:
		if headings {
			return g.pick("## Session History", "## Loading Sequence for Resume", "### Key Decisions", "# Resume: decoy") + " " + g.tok("DECOY")
		}
	case 3:
		return g.pick("> ", "- ") + g.decoyHeader(allForms)
	}
	return g.decoyHeader(allForms)
}

// judgeAdded checks j on out, a file ctx wrote from the lines orig, with cmark's
// readings md of out and origMD of orig: each item the runs add is there once, a list
// item of its section and not code or HTML (a fence left open at the end must not take
// it in); the session's entry is a heading and an item under Session History; ctx's two
// blocks are each there once (markerBlocks) in their sections, and no more of them than
// before elsewhere (a block of ctx's form that a heading put in another section is left
// as it is). A block is a pair of markers in one section, as ctx pairs them: a begin
// marker left open in one section and an end marker in a later one are no block.
func judgeAdded(f genFlags, orig []string, origMD *mdLines, out []byte, md *mdLines) []finding {
	var fs []finding
	add := func(format string, args ...any) {
		fs = append(fs, finding{"j", fmt.Sprintf(format, args...)})
	}
	body, _ := cutBOM(out)
	got := splitLines(body)
	fm := frontmatterEnd(got)
	inBlock := make([]bool, len(got))
	blocks := sectionBlocks(got, md)
	origBlocks := sectionBlocks(orig, origMD)
	for _, name := range oracleMarkers {
		want := map[string]string{"compaction": "compaction detection", "loading-sequence": "loading sequence"}[name]
		in, elsewhere, before := 0, 0, 0
		for _, b := range blocks[name] {
			for k := b[0]; k <= b[1]; k++ {
				inBlock[k] = true
			}
			if strings.Contains(sectionAbove(got, md, b[0], 2), want) {
				in++
			} else {
				elsewhere++
			}
		}
		for _, b := range origBlocks[name] {
			if !strings.Contains(sectionAbove(orig, origMD, b[0], 2), want) {
				before++
			}
		}
		if in != 1 {
			add("ctx's %s block is in its section %d times", name, in)
		}
		if elsewhere != before {
			add("ctx's %s block is out of its section %d times, %d before", name, elsewhere, before)
		}
	}
	section := func(i, level int) string { return sectionAbove(got, md, i, level) }
	type item struct {
		what  string
		match func(string) bool
		level int
		words []string
		leaf  uint8
	}
	token := func(tok string) func(string) bool {
		re := regexp.MustCompile(regexp.QuoteMeta(tok) + `(?:\D|$)`)
		return func(l string) bool { return re.MatchString(l) }
	}
	var items []item
	for _, x := range []struct {
		what, tok string
		level     int
		words     []string
	}{
		{"the decision", f.decision, 3, []string{"key decisions"}},
		{"the assumption", f.assumption, 3, []string{"important assumptions"}},
		{"the blocker", f.blocker, 3, []string{"blockers"}},
		{"the file", f.file, 2, []string{"files modified"}},
	} {
		if x.tok != "" {
			items = append(items, item{x.what + " " + x.tok, token(x.tok), x.level, x.words, leafPara})
		}
	}
	items = append(items,
		item{"the session's item", func(l string) bool { return trimEOL(l) == "- "+genSummary }, 2, []string{"session history"}, leafPara},
		item{"the session's heading", func(l string) bool { return strings.Contains(l, "<!-- ctx:session ") }, 2, []string{"session history"}, leafHeading})
	for _, it := range items {
		var at []int
		for i := fm; i < len(got); i++ {
			if !inBlock[i] && it.match(got[i]) {
				at = append(at, i)
			}
		}
		if len(at) != 1 {
			add("%s is on %d lines, want 1", it.what, len(at))
			continue
		}
		i := at[0]
		if md.leaf[i] != it.leaf || (it.leaf == leafPara && !md.item[i]) {
			add("%s (line %d %q) is %s%s to cmark", it.what, i+1, trimEOL(got[i]), leafNames[md.leaf[i]], map[bool]string{true: " in a list item"}[md.item[i]])
		}
		s := section(i, it.level)
		found := false
		for _, w := range it.words {
			found = found || strings.Contains(s, w)
		}
		if !found {
			add("%s (line %d) is under %q", it.what, i+1, s)
		}
	}
	return fs
}

// sectionAbove is the title of the nearest top-level heading above line i of lines of
// level at most level, in lower case, without its #s.
func sectionAbove(lines []string, md *mdLines, i, level int) string {
	title := ""
	for _, h := range md.headings {
		if h[0] >= i {
			break
		}
		if h[1] <= level {
			title = strings.ToLower(strings.Trim(trimEOL(lines[h[0]]), "# \t"))
		}
	}
	return title
}

// sectionBlocks is markerBlocks with each pair in one level-2 section: a begin marker
// with no end marker before the next heading of level 1 or 2 pairs with none.
func sectionBlocks(lines []string, md *mdLines) map[string][][2]int {
	standalone := map[int]bool{}
	for _, h := range md.html {
		standalone[h[0]] = true
	}
	sectionStart := map[int]bool{}
	for _, h := range md.headings {
		if h[1] <= 2 {
			sectionStart[h[0]] = true
		}
	}
	marker := func(i int, which, name string) bool {
		return standalone[i] && strings.TrimSpace(trimEOL(lines[i])) == "<!-- ctx:"+which+" "+name+" -->"
	}
	out := map[string][][2]int{}
	for _, name := range oracleMarkers {
		for i := 0; i < len(lines); i++ {
			if !marker(i, "begin", name) {
				continue
			}
			for j := i + 1; j < len(lines) && !sectionStart[j]; j++ {
				if marker(j, "end", name) {
					out[name] = append(out[name], [2]int{i, j})
					i = j
					break
				}
			}
		}
	}
	return out
}

// judgeSections checks k: each line of the person's that is once in the original and
// once in out stays under the same heading of level 1 or 2 (a line of the person's,
// found the same way), or under none.
func judgeSections(sp *savePoint, origMD *mdLines, out []byte, md *mdLines) []finding {
	body, _ := cutBOM(out)
	got := splitLines(body)
	count := map[string]int{}
	for _, l := range sp.lines {
		count[l]++
	}
	at := map[string]int{}
	for i, l := range got {
		if _, ok := at[l]; ok {
			at[l] = -1
		} else {
			at[l] = i
		}
	}
	// unique is where a line of the original is in out, when it is once in each.
	unique := func(i int) (int, bool) {
		o, ok := at[sp.lines[i]]
		return o, ok && o >= 0 && count[sp.lines[i]] == 1
	}
	headingAbove := func(md *mdLines, i int) int {
		h := -1
		for _, x := range md.headings {
			if x[0] >= i {
				break
			}
			if x[1] <= 2 {
				h = x[0]
			}
		}
		return h
	}
	section := map[int]bool{} // the lines of headings of level 1 or 2: a section of their own
	for _, h := range origMD.headings {
		section[h[0]] = section[h[0]] || h[1] <= 2
	}
	var fs []finding
	for i := frontmatterEnd(sp.lines); i < len(sp.lines); i++ {
		if sp.owned[i] || section[i] || strings.TrimSpace(sp.lines[i]) == "" {
			continue
		}
		o, ok := unique(i)
		if !ok {
			continue
		}
		want, now := headingAbove(origMD, i), headingAbove(md, o)
		if want >= 0 {
			w, ok := unique(want)
			if !ok || now == w {
				continue
			}
		} else if now < 0 {
			continue
		}
		under := "no heading"
		if now >= 0 {
			under = fmt.Sprintf("%q (line %d)", trimEOL(got[now]), now+1)
		}
		was := "no heading"
		if want >= 0 {
			was = fmt.Sprintf("%q", trimEOL(sp.lines[want]))
		}
		fs = append(fs, finding{"k", fmt.Sprintf("line %d %q, under %s, is now under %s", i+1, trimEOL(sp.lines[i]), was, under)})
		break // one line tells it
	}
	return fs
}
