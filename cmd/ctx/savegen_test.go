package main

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
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
// close on each. The generator knows which lines it wrote as ctx's and which as the
// person's; nothing of ctx decides it. After each run (judge in saveoracle_test.go):
//
//	a  the run exits 0;
//	b  every line ctx does not own is there, in order, byte for byte;
//	c  the summary is in the real Last Session line, in its form and place (or in one
//	   added after the title), and no decoy changed;
//	d  the second save changes nothing but dates and times;
//	e  no label is a header twice;
//	f  nothing is inserted between a header and the list or quote lines under it;
//	g  a header ctx filled has a space after its separator.
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
	r := &genRun{res: &genResult{index: index, doc: doc.bytes()}, doc: doc}
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
	runs := []struct {
		name string
		now  string
		args []string
	}{
		{"save1", "2026-03-02T10:00:00Z", []string{"save", "-p", "1", "--summary", "SUM1"}},
		{"save2", "2026-03-02T10:05:00Z", []string{"save", "-p", "1", "--summary", "SUM1"}},
		{"close", "2026-03-02T10:10:00Z", []string{"close", "-p", "1", "--summary", "SUM1"}},
	}
	for _, run := range runs {
		_, stderr, code := ctxRun(ws, home, run.now, run.args...)
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
	for k, out := range res.runs {
		fs := judgeRead(r.sp, out, mds[k+1], "SUM1")
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
	return bytes.Equal(a.kind, b.kind) && a.title == b.title && a.firstSection == b.firstSection &&
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
	keep  string // a comment on a frontmatter line of ctx's that must stay
}

type genDoc struct {
	lines  []genLine
	bom    bool
	crlf   bool
	noEOL  bool // the last line has no line ending
	realAt [3]int
	keys   []string // the frontmatter's keys, when it has one
	hasFM  bool
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
	quoteAllowed bool // a blockquote written now would not be the one under the title
}

func (g *docGen) tok(kind string) string { g.n++; return kind + "-" + strconv.Itoa(g.n) }
func (g *docGen) chance(p float64) bool  { return g.r.Float64() < p }
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
	g.bom = g.chance(0.1)
	g.crlf = g.chance(0.25)
	if g.chance(0.85) {
		g.frontmatter()
		if g.chance(0.8) {
			g.blank()
		}
	}
	var present [3]bool
	for i := range present {
		present[i] = g.chance(0.75)
	}
	lateLS := present[labelLastSession] && g.chance(0.15) // under a later "## Session Continuity"
	g.person(g.pick("# Resume: Gen Project ", "# Gen Project ", "# Save point ") + g.tok("T"))
	g.quoteAllowed = false
	if g.chance(0.8) {
		g.blank()
	}
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
		if g.chance(0.3) {
			g.quoteHeaders(now)
		} else {
			if g.chance(0.15) {
				g.person("Intro by Dana " + g.tok("P"))
				g.blank()
			}
			g.paragraphHeaders(now)
		}
		g.blank()
	}
	for range g.r.IntN(3) {
		g.block()
	}
	g.sections(lateLS)
	if g.chance(0.08) {
		// A begin marker with no end: the person's, and so is all that follows.
		g.decoy("<!-- ctx:begin compaction -->")
		g.person("- Compactions noted by hand " + g.tok("P"))
		g.blank()
	}
	if g.chance(0.08) {
		g.person(g.pick("```", "```md", "~~~"))
		for range 1 + g.r.IntN(3) {
			g.decoy(g.decoyText(true, true))
		}
	} else {
		for len(g.lines) > 0 && g.lines[len(g.lines)-1].text == "" && g.chance(0.9) {
			g.lines = g.lines[:len(g.lines)-1]
		}
	}
	g.noEOL = g.chance(0.05)
	if g.noEOL && g.lines[len(g.lines)-1].text == "" {
		g.lines = g.lines[:len(g.lines)-1]
	}
	return &g.genDoc
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
		g.owned("  continued plain " + g.tok("P"))
		if g.chance(0.6) {
			g.person("   # indented comment " + g.tok("P"))
		}
		return
	}
	if g.chance(0.15) {
		comment := "# note " + g.tok("P")
		g.lines = append(g.lines, genLine{text: k + ": " + val + "  " + comment, owned: true, label: -1, keep: comment})
	} else {
		g.owned(k + ": " + val)
	}
	if g.chance(0.1) {
		g.person("  # a comment under the key " + g.tok("P"))
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

// headerText is a header line of label in form, with a unique value or none.
func (g *docGen) headerText(label int, form string, value string) string {
	name := labelCases[label][g.r.IntN(2)]
	if value == "" {
		return strings.TrimRight(fmt.Sprintf(form, name), " ")
	}
	return fmt.Sprintf(form, name) + value
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
	form := boldForms[g.r.IntN(len(boldForms))]
	for k, label := range labels {
		if k > 0 && g.chance(0.2) {
			g.person(">")
		}
		g.header(label, "> "+g.headerText(label, form, g.realValue(label)))
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
// person's lines among them and lists or quotes under them.
func (g *docGen) paragraphHeaders(labels []int) {
	form := allForms[g.r.IntN(len(allForms))]
	mixed := g.chance(0.2)
	if g.chance(0.15) {
		g.person("Status of the work " + g.tok("P"))
	}
	for _, label := range labels {
		f := form
		if mixed {
			f = allForms[g.r.IntN(len(allForms))]
		}
		g.header(label, g.headerText(label, f, g.realValue(label)))
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
func (g *docGen) sections(lateLS bool) {
	names := []string{
		g.pick("Loading Sequence", "Loading Sequence for Resume"), "Session History",
		"Critical Context to Remember", g.pick("Files Modified", "Files Modified This Project"),
		"Notes", "Quick Context", "Session Continuity", "Compaction Detection", "Resume Prompt",
	}
	g.r.Shuffle(len(names), func(i, j int) { names[i], names[j] = names[j], names[i] })
	count := 2 + g.r.IntN(len(names)-1)
	chosen := names[:count]
	if lateLS && !contains(chosen, "Session Continuity") {
		chosen = append(chosen, "Session Continuity")
	}
	for _, name := range chosen {
		g.heading(2, name)
		g.maybeBlocks()
		switch name {
		case "Loading Sequence", "Loading Sequence for Resume":
			if g.chance(0.4) {
				g.owned("<!-- ctx:begin loading-sequence -->")
				g.owned("1. `01-planning/_resume.md` — save point")
				g.owned("2. `01-planning/steps.md` — steps")
				g.owned("<!-- ctx:end loading-sequence -->")
			} else {
				g.person("1. **This file first** (`_resume.md`) " + g.tok("P"))
				g.person("2. `overview.md` " + g.tok("P"))
			}
			g.blank()
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
			if g.chance(0.5) {
				g.heading(3, "Important Assumptions")
				g.person("- assumed " + g.tok("P"))
				g.blank()
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
			if g.chance(0.5) {
				g.owned("<!-- ctx:begin compaction -->")
				g.owned("- Compactions this project: 0")
				g.owned("<!-- ctx:end compaction -->")
			} else {
				g.person("No compactions noted " + g.tok("P"))
			}
			g.blank()
		case "Resume Prompt":
			g.person("> Resume the gen project " + g.tok("P"))
			g.decoy("> " + g.headerText(labelLastSession, g.pick(boldForms...), g.tok("DECOY")))
			g.blank()
		default:
			g.person("Person note " + g.tok("P") + " on the work.")
			g.blank()
		}
		g.maybeBlocks()
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
	switch g.r.IntN(17) {
	case 0:
		g.person("Person note " + g.tok("P") + ".")
		if g.chance(0.3) {
			g.person("A second line " + g.tok("P") + ".")
		}
	case 1:
		g.person("- item " + g.tok("P"))
		g.person("  - nested " + g.tok("P"))
		g.person("- item " + g.tok("P"))
	case 2: // fenced code
		fence := g.pick("```", "~~~", "````")
		g.person(fence + g.pick("", "md", "markdown", "yaml", "text {.example}"))
		for range 1 + g.r.IntN(4) {
			g.decoy(g.decoyText(true, true))
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
		g.person(g.pick("---", "-----", "==="))
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
		g.person("---")
		g.decoy(ownedKeyOrder[g.r.IntN(len(ownedKeyOrder))] + ": " + g.tok("DECOY"))
		g.person("---")
	case 16:
		g.person("- [ ] a checkbox of the person's " + g.tok("P"))
	}
	g.blank()
}

// decoyHeader is a look-alike of a header line in one of forms.
func (g *docGen) decoyHeader(forms []string) string {
	return g.headerText(g.r.IntN(3), forms[g.r.IntN(len(forms))], g.tok("DECOY"))
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
