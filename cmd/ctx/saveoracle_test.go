package main

// The judge shared by the save-point oracles (savegen_test.go, savecorpus_test.go).
// It runs the real ctx through Main and reads what ctx wrote with nothing of ctx's
// own: lines are compared as bytes, and the Markdown structure of a document is the
// one cmark, the CommonMark reference implementation, reports.

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// oracleLabels are the labels of the three header lines a save point's owner edits.
var oracleLabels = [3]string{"Last Session", "Current Phase", "Next Action"}

// Indexes of oracleLabels.
const (
	labelLastSession  = 0
	labelCurrentPhase = 1
	labelNextAction   = 2
)

// oracleOwnedKeys are the frontmatter keys ctx owns (issue 23), written out here and
// not taken from the resume package: the oracle must not share the code it judges.
var oracleOwnedKeys = map[string]bool{
	"resume_version": true, "last_updated": true, "compaction_count": true, "total_tokens_approx": true,
	"session_count": true, "project_id": true, "project_name": true, "project_status": true,
	"current_phase": true, "current_skill": true, "current_workflow_step": true, "current_section": true,
	"current_section_name": true, "next_task_number": true, "next_task_description": true,
	"progress_tasks_completed": true, "progress_tasks_total": true, "progress_percentage": true,
	"planning_completed": true,
}

// oracleMarkers are the names of the blocks ctx keeps between its own markers.
var oracleMarkers = []string{"compaction", "loading-sequence"}

var utf8BOM = []byte("\ufeff")

// requireCmark skips the test when cmark is not installed, or fails it in CI.
func requireCmark(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("cmark"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("cmark (the CommonMark reference implementation, Debian package cmark) is not installed")
		}
		t.Skip("cmark is not installed (Debian package cmark): the oracle reads Markdown structure with it")
	}
}

// ctxRun runs ctx in workspace ws with the clock at now (RFC 3339), with its home,
// runtime and Claude folders under home, and returns its output and exit code.
func ctxRun(ws, home, now string, args ...string) (stdout, stderr string, code int) {
	env := map[string]string{
		"CTX_WORKSPACE":     ws,
		"CTX_NOW":           now,
		"HOME":              home,
		"XDG_RUNTIME_DIR":   filepath.Join(home, "run"),
		"CLAUDE_CONFIG_DIR": filepath.Join(home, ".claude"),
		"PATH":              os.Getenv("PATH"),
		"NO_COLOR":          "1",
	}
	var out, errOut bytes.Buffer
	code = Main(args, Streams{In: strings.NewReader(""), Out: &out, Err: &errOut}, func(k string) string { return env[k] })
	return out.String(), errOut.String(), code
}

// scratchDir is a folder for the workspaces, on a RAM file system when there is one:
// ctx syncs every file it writes to the disk, which is most of a save's time on a disk
// and none of what this test judges. $CTX_ORACLE_TMP chooses another.
func scratchDir(t *testing.T) string {
	for _, parent := range []string{os.Getenv("CTX_ORACLE_TMP"), "/dev/shm"} {
		if parent == "" {
			continue
		}
		if dir, err := os.MkdirTemp(parent, "ctx-oracle-"); err == nil {
			t.Cleanup(func() { os.RemoveAll(dir) })
			return dir
		}
	}
	return t.TempDir()
}

// makeHome makes the private folders ctxRun points HOME and XDG_RUNTIME_DIR at.
func makeHome(dir string) error {
	return os.MkdirAll(filepath.Join(dir, "run"), 0o700)
}

// splitLines splits b into lines, each with its line ending ("\n" or "\r\n"); the
// last has none when b does not end with one.
func splitLines(b []byte) []string {
	var lines []string
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			lines = append(lines, string(b))
			break
		}
		lines = append(lines, string(b[:i+1]))
		b = b[i+1:]
	}
	return lines
}

// trimEOL is a line without its line ending.
func trimEOL(s string) string {
	s = strings.TrimSuffix(s, "\n")
	return strings.TrimSuffix(s, "\r")
}

// eolOf is a line's line ending.
func eolOf(s string) string { return s[len(trimEOL(s)):] }

// frontmatterEnd is the number of lines of the frontmatter at the top of lines (a
// byte-order mark cut), both "---" lines included, or 0 when there is none.
func frontmatterEnd(lines []string) int {
	if len(lines) == 0 || trimEOL(lines[0]) != "---" {
		return 0
	}
	for i := 1; i < len(lines); i++ {
		if trimEOL(lines[i]) == "---" {
			return i + 1
		}
	}
	return 0
}

// Kinds of a line for cmark.
const (
	mdOther     = iota
	mdTopPara   // a line of a paragraph at the top level of the document
	mdQuotePara // a line of a paragraph directly in the blockquote under the title
)

// Leaf blocks a line belongs to, at any depth, for cmark.
const (
	leafNone = iota
	leafPara
	leafHeading
	leafCode
	leafHTML
	leafBreak
)

var leafNames = [...]string{"no block", "a paragraph", "a heading", "code", "an HTML block", "a thematic break"}

var leafOf = map[string]uint8{
	"paragraph": leafPara, "heading": leafHeading, "code_block": leafCode,
	"html_block": leafHTML, "thematic_break": leafBreak,
}

// mdLines is what cmark says of the lines of one document.
type mdLines struct {
	kind         []uint8  // by 0-based line index
	html         [][2]int // 0-based first and last line of each top-level HTML block
	title        int      // 0-based line of the title (a top-level heading of level 1 before any other heading), or -1
	firstSection int      // 0-based line of the first top-level heading of level 2 or more, or -1
	titleAt      int      // the title's position among the document's blocks, or -1
	headings     [][2]int // 0-based line and level of each top-level heading
	// older marks the lines of the older entries of a log kept with the newest entry
	// on top: what they say is history, not the save point's headers.
	older []bool
	// leaf is the leaf block (leafPara...) of each line at any depth, and item whether
	// a list item holds it.
	leaf []uint8
	item []bool
}

// cmarkLines reads the structure of lines (a byte-order mark cut) with cmark, the
// frontmatter, which CommonMark does not know, blanked.
func cmarkLines(lines []string) (*mdLines, error) {
	var src bytes.Buffer
	from := writeBlanked(&src, lines, "")
	out, err := runCmark(&src)
	if err != nil {
		return nil, err
	}
	return readCmarkXML(out, [][]string{lines}, []int{0}, [][]int{from}, 0)[0], nil
}

// cmarkDocs reads several documents with one run of cmark, which costs as much to
// start as to read a save point: each document inside a blockquote of its own ("> "
// before each line), the blockquotes apart by a blank line, so that nothing a
// document leaves open (a fence, an HTML block, a comment) runs into the next. Inside
// its blockquote a document's blocks are what they are alone, but for tabs (the
// quote moves the tab stops): a document with a tab is read alone.
func cmarkDocs(docs [][]string) ([]*mdLines, error) {
	mds := make([]*mdLines, len(docs))
	var batch []int
	for k, lines := range docs {
		if !hasTab(lines) {
			batch = append(batch, k)
			continue
		}
		md, err := cmarkLines(lines)
		if err != nil {
			return nil, err
		}
		mds[k] = md
	}
	if len(batch) == 0 {
		return mds, nil
	}
	var src bytes.Buffer
	starts := make([]int, len(batch))
	froms := make([][]int, len(batch))
	inBatch := make([][]string, len(batch))
	line := 0
	for j, k := range batch {
		lines := docs[k]
		starts[j], inBatch[j] = line, lines
		froms[j] = writeBlanked(&src, lines, "> ")
		if n := len(lines); n > 0 && eolOf(lines[n-1]) == "" {
			src.WriteString("\n")
		}
		src.WriteString("\n")
		line += len(froms[j]) + 1
	}
	out, err := runCmark(&src)
	if err != nil {
		return nil, err
	}
	for j, md := range readCmarkXML(out, inBatch, starts, froms, 1) {
		mds[batch[j]] = md
	}
	return mds, nil
}

func hasTab(lines []string) bool {
	for _, l := range lines {
		if strings.Contains(l, "\t") {
			return true
		}
	}
	return false
}

// hasLoneCR reports whether a line holds a CR that is not its line ending's.
func hasLoneCR(line string) bool { return strings.Contains(trimEOL(line), "\r") }

// writeBlanked writes lines with prefix before each, the frontmatter blanked, and
// returns, for each line cmark will read, the index of the line of lines it is part
// of: a lone CR ends a line for CommonMark (and so is written as a line break, the
// prefix after it).
func writeBlanked(w *bytes.Buffer, lines []string, prefix string) []int {
	fm := frontmatterEnd(lines)
	from := make([]int, 0, len(lines))
	for i, l := range lines {
		if i < fm {
			w.WriteString(prefix)
			w.WriteString(eolOf(l))
			from = append(from, i)
			continue
		}
		parts := strings.Split(trimEOL(l), "\r")
		for k, part := range parts {
			w.WriteString(prefix)
			w.WriteString(part)
			if k < len(parts)-1 {
				w.WriteString("\n")
			} else {
				w.WriteString(eolOf(l))
			}
			from = append(from, i)
		}
	}
	return from
}

func runCmark(src *bytes.Buffer) ([]byte, error) {
	cmd := exec.Command("cmark", "--to", "xml", "--sourcepos")
	cmd.Stdin = src
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("cmark: %w: %s", err, stderr.String())
	}
	return out, nil
}

// readCmarkXML reads cmark's XML of documents that start at the given lines of its
// input, each wrapped in that many blockquotes (0 or 1); from maps each document's
// lines of cmark's input to its own lines (writeBlanked).
func readCmarkXML(out []byte, docs [][]string, starts []int, from [][]int, wrap int) []*mdLines {
	mds := make([]*mdLines, len(docs))
	for k, lines := range docs {
		mds[k] = &mdLines{kind: make([]uint8, len(lines)), title: -1, firstSection: -1, titleAt: -1,
			leaf: make([]uint8, len(lines)), item: make([]bool, len(lines))}
	}
	docOf := func(line int) int {
		for k := len(starts) - 1; k >= 0; k-- {
			if line >= starts[k] {
				return k
			}
		}
		return 0
	}
	top := 2 + wrap // the depth of a document's own blocks
	dec := xml.NewDecoder(bytes.NewReader(out))
	depth, items := 0, 0
	cur := 0
	md := mds[0]
	// line maps a line of cmark's input to the current document's.
	line := func(l int) int {
		f := from[cur]
		if len(f) == 0 {
			return 0
		}
		return f[min(max(l-starts[cur], 0), len(f)-1)]
	}
	topSeen, headingSeen := 0, false
	titleQuote := false // inside the top-level blockquote right after the title
	for {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		switch el := tok.(type) {
		case xml.StartElement:
			depth++
			name := el.Name.Local
			if name == "item" {
				items++
			}
			first, last, ok := sourceLines(el)
			if !ok {
				continue
			}
			if depth == 2 && wrap == 1 { // the blockquote around one document
				cur = docOf(first)
				md = mds[cur]
				topSeen, headingSeen, titleQuote = 0, false, false
				continue
			}
			first, last = line(first), line(last)
			if k, ok := leafOf[name]; ok && depth >= top {
				for l := first; l <= last && l < len(md.leaf); l++ {
					md.leaf[l], md.item[l] = k, items > 0
				}
			}
			if depth == top {
				topSeen++
				titleQuote = name == "block_quote" && md.titleAt >= 0 && topSeen == md.titleAt+1
				switch name {
				case "paragraph":
					md.mark(first, last, mdTopPara)
				case "html_block":
					md.html = append(md.html, [2]int{first, last})
				case "heading":
					level, _ := strconv.Atoi(attr(el, "level"))
					md.headings = append(md.headings, [2]int{first, level})
					if level == 1 && !headingSeen {
						md.title = first
						md.titleAt = topSeen
					}
					if level != 1 && md.firstSection < 0 {
						md.firstSection = first
					}
					headingSeen = true
				}
			}
			if depth == top+1 && titleQuote && name == "paragraph" {
				md.mark(first, last, mdQuotePara)
			}
		case xml.EndElement:
			depth--
			if el.Name.Local == "item" {
				items--
			}
		}
	}
	for k, md := range mds {
		md.older = olderEntries(docs[k], md.headings)
	}
	return mds
}

var dateRE = regexp.MustCompile(`\b20\d\d-\d\d-\d\d\b`)

// olderEntries marks the lines after the newest entry of a log kept with the newest
// entry on top: a heading level (2 or more) where at least three headings, and at
// least half of that level's, carry a date, the first of them the latest and later
// than another.
func olderEntries(lines []string, headings [][2]int) []bool {
	older := make([]bool, len(lines))
	type dated struct {
		line, level int
		date        string
	}
	var ds []dated
	byLevel := map[int]int{}
	for _, h := range headings {
		if h[1] < 2 || h[0] >= len(lines) {
			continue
		}
		if d := dateRE.FindString(lines[h[0]]); d != "" {
			ds = append(ds, dated{h[0], h[1], d})
			byLevel[h[1]]++
		}
	}
	level := 0
	for l := 2; l <= 6; l++ {
		if byLevel[l] > byLevel[level] {
			level = l
		}
	}
	var entries []dated
	for _, d := range ds {
		if d.level == level {
			entries = append(entries, d)
		}
	}
	all := 0
	for _, h := range headings {
		if h[1] == level {
			all++
		}
	}
	if len(entries) < 3 || 2*len(entries) < all {
		return older
	}
	newest, oldest := entries[0].date, entries[0].date
	for _, e := range entries {
		if e.date > newest {
			return older
		}
		oldest = min(oldest, e.date)
	}
	if oldest == newest {
		return older
	}
	// What follows the newest entry is older: later entries, and older documents
	// appended whole under their own titles.
	for i := entries[1].line; i < len(lines); i++ {
		older[i] = true
	}
	return older
}

func (md *mdLines) mark(first, last int, kind uint8) {
	for l := first; l <= last && l < len(md.kind); l++ {
		if l >= 0 {
			md.kind[l] = kind
		}
	}
}

// sourceLines returns the 0-based first and last line of an element's sourcepos.
func sourceLines(el xml.StartElement) (int, int, bool) {
	pos := attr(el, "sourcepos")
	from, to, ok := strings.Cut(pos, "-")
	if !ok {
		return 0, 0, false
	}
	l1, err1 := strconv.Atoi(strings.Split(from, ":")[0])
	l2, err2 := strconv.Atoi(strings.Split(to, ":")[0])
	if err1 != nil || err2 != nil {
		return 0, 0, false
	}
	return l1 - 1, l2 - 1, true
}

func attr(el xml.StartElement, name string) string {
	for _, a := range el.Attr {
		if a.Name.Local == name {
			return a.Value
		}
	}
	return ""
}

// headerRE matches the start of a header line in the forms people write:
// "**Label:** v", "**Label**: v", "Label: v", "**Label: v**", in a blockquote or not.
var headerRE = regexp.MustCompile(`(?i)^(?:>[ \t]?)?[ \t]*(?:\*\*(last session|current phase|next action):\*\*|\*\*(last session|current phase|next action)\*\*:|(last session|current phase|next action):|\*\*(last session|current phase|next action):)`)

// headerOf returns which label line starts with and the length of its prefix (the
// label and separator), or -1.
func headerOf(line string) (label, prefix int) {
	label, prefix, _ = headerForm(line)
	return label, prefix
}

// headerForm is headerOf, and whether the line opens bold that the separator does not
// close ("**Label: v**", where the closing "**" ends the line).
func headerForm(line string) (label, prefix int, openBold bool) {
	m := headerRE.FindStringSubmatchIndex(line)
	if m == nil {
		return -1, 0, false
	}
	for g := 1; g <= 4; g++ {
		if m[2*g] >= 0 {
			name := strings.ToLower(line[m[2*g]:m[2*g+1]])
			for i, l := range oracleLabels {
				if strings.ToLower(l) == name {
					return i, m[1], g == 4
				}
			}
		}
	}
	return -1, 0, false
}

// closesBold reports whether a header line of the "**Label: v**" form ends with the
// closing "**".
func closesBold(line string) bool {
	return strings.HasSuffix(strings.TrimRight(trimEOL(line), " \t"), "**")
}

// isHeaderPlace reports whether line i stands where a header line counts: in a
// paragraph at the top level or in the blockquote under the title, and not in an
// older entry of a log with the newest entry on top.
func (md *mdLines) isHeaderPlace(i int) bool {
	return i < len(md.kind) && (md.kind[i] == mdTopPara || md.kind[i] == mdQuotePara) && !md.older[i]
}

// realHeaders returns the line of each label's header: the first line in a header
// place that starts with the label, or -1. A line with a lone CR is two lines to
// CommonMark and one to an editor: it is never a header, and stays as it is.
func realHeaders(lines []string, md *mdLines) [3]int {
	real := [3]int{-1, -1, -1}
	for i, l := range lines {
		if !md.isHeaderPlace(i) || hasLoneCR(l) {
			continue
		}
		if label, _ := headerOf(l); label >= 0 && real[label] < 0 {
			real[label] = i
		}
	}
	return real
}

// ownedLines decides, with cmark's reading md, which lines of a document ctx owns:
// the header lines (realHeaders), the lines of the frontmatter keys ctx owns with the
// lines of their values, and the blocks between ctx's markers.
func ownedLines(lines []string, md *mdLines) []bool {
	owned := make([]bool, len(lines))
	for _, i := range realHeaders(lines, md) {
		if i >= 0 {
			owned[i] = true
		}
	}
	fm := frontmatterEnd(lines)
	for i := 1; i < fm-1; i++ {
		if key, ok := topKey(lines[i]); ok && oracleOwnedKeys[key] {
			owned[i] = true
			// The value's continuation lines; a comment or a blank line ends them.
			for j := i + 1; j < fm-1; j++ {
				t := trimEOL(lines[j])
				rest := strings.TrimLeft(t, " \t")
				if rest == t || rest == "" || strings.HasPrefix(rest, "#") {
					break
				}
				owned[j] = true
			}
		}
	}
	for _, blocks := range markerBlocks(lines, md) {
		for _, b := range blocks {
			for k := b[0]; k <= b[1]; k++ {
				owned[k] = true
			}
		}
	}
	return owned
}

// markerBlocks returns, for each marker name, the first and last line of each of
// ctx's marked blocks. A marker is ctx's when it is an HTML block of its own at the
// top level, as ctx writes it; in code, in a comment or inside another HTML block it
// is text.
func markerBlocks(lines []string, md *mdLines) map[string][][2]int {
	inHTML := func(i int) bool {
		for _, h := range md.html {
			if h[0] == i {
				return true
			}
		}
		return false
	}
	blocks := map[string][][2]int{}
	for i := 0; i < len(lines); i++ {
		for _, name := range oracleMarkers {
			if strings.TrimSpace(trimEOL(lines[i])) != "<!-- ctx:begin "+name+" -->" || !inHTML(i) {
				continue
			}
			for j := i + 1; j < len(lines); j++ {
				if strings.TrimSpace(trimEOL(lines[j])) == "<!-- ctx:end "+name+" -->" && inHTML(j) {
					blocks[name] = append(blocks[name], [2]int{i, j})
					i = j
					break
				}
			}
		}
	}
	return blocks
}

var topKeyRE = regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_-]*)[ \t]*:`)

// topKey returns the key of a top-level "key: value" line of YAML.
func topKey(line string) (string, bool) {
	m := topKeyRE.FindStringSubmatch(line)
	if m == nil {
		return "", false
	}
	return m[1], true
}

// sameLine reports whether got keeps the person's line want: byte for byte, or, for a
// last line without a line ending, with one added (text appended after it needs one).
func sameLine(want, got string) bool {
	if want == got {
		return true
	}
	return eolOf(want) == "" && (got == want+"\n" || got == want+"\r\n")
}

// firstMissing looks for each line of want in got, in order, each as early as it can
// be, and returns the index of the first it cannot find: len(want) when got holds all
// of want in order.
func firstMissing(want, got []string) int {
	j := 0
	for i, w := range want {
		for j < len(got) && !sameLine(w, got[j]) {
			j++
		}
		if j == len(got) {
			return i
		}
		j++
	}
	return len(want)
}

// lostLines returns the indexes of the lines of want that a longest common
// subsequence of want and got leaves out, or nil when that costs too much.
func lostLines(want, got []string) []int {
	pre := 0
	for pre < len(want) && pre < len(got) && sameLine(want[pre], got[pre]) {
		pre++
	}
	suf := 0
	for suf < len(want)-pre && suf < len(got)-pre && sameLine(want[len(want)-1-suf], got[len(got)-1-suf]) {
		suf++
	}
	w, g := want[pre:len(want)-suf], got[pre:len(got)-suf]
	if len(w)*len(g) > 4_000_000 {
		return nil
	}
	dp := make([][]int32, len(w)+1)
	for i := range dp {
		dp[i] = make([]int32, len(g)+1)
	}
	for i := len(w) - 1; i >= 0; i-- {
		for j := len(g) - 1; j >= 0; j-- {
			switch {
			case sameLine(w[i], g[j]):
				dp[i][j] = dp[i+1][j+1] + 1
			default:
				dp[i][j] = max(dp[i+1][j], dp[i][j+1])
			}
		}
	}
	var lost []int
	i, j := 0, 0
	for i < len(w) {
		switch {
		case j < len(g) && sameLine(w[i], g[j]) && dp[i][j] == dp[i+1][j+1]+1:
			i++
			j++
		case j < len(g) && dp[i][j+1] >= dp[i+1][j]:
			j++
		default:
			lost = append(lost, pre+i)
			i++
		}
	}
	return lost
}

// timestampRE matches dates and times, which a later save may change.
var timestampRE = regexp.MustCompile(`\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?`)

func maskTimes(b []byte) []byte { return timestampRE.ReplaceAll(b, []byte("<TIME>")) }

// savePoint is a save point as the oracle reads it before ctx touches it: its lines,
// which of them ctx owns, and which are look-alikes of owned lines.
type savePoint struct {
	bom   bool
	lines []string // the byte-order mark cut
	owned []bool
	decoy []bool // a person's line that looks like a line ctx owns
	real  [3]int // the header line of each label, or -1
	// keep maps a line of the value of a frontmatter key ctx owns to a comment at its
	// end that must stay a comment at the end of a line of that key's value.
	keep map[int]string
	// older marks the lines of older log entries (mdLines.older), for reports.
	older []bool
}

// finding is one failed check: its letter (as listed in the doc comments of
// TestSaveGenerated and TestSaveRealCorpus) and what was seen.
type finding struct {
	check string
	msg   string
}

// cutBOM cuts a leading byte-order mark.
func cutBOM(b []byte) ([]byte, bool) {
	if bytes.HasPrefix(b, utf8BOM) {
		return b[len(utf8BOM):], true
	}
	return b, false
}

// judge checks the bytes ctx wrote for sp after a run given summary:
//
//	b  every line ctx does not own is there, in order, byte for byte (and the BOM);
//	c  the summary is in the real Last Session line, kept in its form and place, or in
//	   a Last Session line added after the title, before the first section; every other
//	   real header keeps its form and place; no decoy changed;
//	e  no label is a header twice (counted with cmark on what ctx wrote);
//	f  nothing is inserted between a header and the list or quote lines under it;
//	g  a header ctx filled has a space after its separator, and its bold closed.
func judge(sp *savePoint, out []byte, summary string) []finding {
	body, _ := cutBOM(out)
	got := splitLines(body)
	md, err := cmarkLines(got)
	if err != nil {
		return []finding{{"c", err.Error()}}
	}
	return judgeRead(sp, out, md, summary)
}

// judgeRead is judge with cmark's reading md of out (its byte-order mark cut).
func judgeRead(sp *savePoint, out []byte, md *mdLines, summary string) []finding {
	var want [3]string
	want[labelLastSession] = summary
	return judgeValues(sp, out, md, want)
}

// judgeValues is judgeRead with the value each label's header must hold after the run
// ("" for a label the run sets no value of): what c says of the summary it says of
// each.
func judgeValues(sp *savePoint, out []byte, md *mdLines, want [3]string) []finding {
	var fs []finding
	add := func(check, format string, args ...any) {
		fs = append(fs, finding{check, fmt.Sprintf(format, args...)})
	}
	body, bom := cutBOM(out)
	if bom != sp.bom {
		add("b", "byte-order mark: had %v, has %v", sp.bom, bom)
	}
	got := splitLines(body)

	var person []string
	var personAt []int
	for i, l := range sp.lines {
		if !sp.owned[i] {
			person = append(person, l)
			personAt = append(personAt, i)
		}
	}
	if miss := firstMissing(person, got); miss < len(person) {
		// Which lines are gone: those a longest common subsequence leaves out, when
		// it is cheap; else the first line the in-order search could not place.
		lost := lostLines(person, got)
		if lost == nil {
			lost = []int{miss}
		}
		shown := 0
		for _, k := range lost {
			i := personAt[k]
			if sp.decoy[i] {
				add("c", "decoy line %d changed or lost: %q", i+1, sp.lines[i])
			}
			if shown < 3 {
				add("b", "line %d lost or altered: %q", i+1, sp.lines[i])
			}
			shown++
		}
		if shown > 3 {
			add("b", "and %d more lines", shown-3)
		}
	}
	keep := make([]int, 0, len(sp.keep))
	for i := range sp.keep {
		keep = append(keep, i)
	}
	sort.Ints(keep)
	for _, i := range keep {
		comment := sp.keep[i]
		key := keyAbove(sp.lines, i)
		if !commentKept(got, key, comment) {
			add("b", "the comment %q on frontmatter key %s (line %d) is gone, or no longer a comment at the end of a line of its value", comment, key, i+1)
		}
	}

	// Lines the person wrote, by text, so that their look-alikes are not counted as
	// ctx's headers.
	personLeft := map[string]int{}
	for _, l := range person {
		personLeft[trimEOL(l)]++
	}
	personText := map[string]bool{}
	for t := range personLeft {
		personText[t] = true
	}
	var ctxHeaders [3][]int
	for i, l := range got {
		label, prefix := headerOf(l)
		if label < 0 || !md.isHeaderPlace(i) {
			continue
		}
		if personLeft[trimEOL(l)] > 0 {
			personLeft[trimEOL(l)]--
			continue
		}
		ctxHeaders[label] = append(ctxHeaders[label], i)
		if r := sp.real[label]; r >= 0 && trimEOL(sp.lines[r]) == trimEOL(l) {
			continue // the person's header line as it was
		}
		if v := trimEOL(l)[prefix:]; v != "" && v[0] != ' ' && v[0] != '\t' {
			add("g", "no space after the separator in %q (line %d)", trimEOL(l), i+1)
		}
		if _, _, open := headerForm(l); open && !closesBold(l) {
			add("g", "the bold %q opens is not closed (line %d)", trimEOL(l), i+1)
		}
	}
	for label, at := range ctxHeaders {
		if len(at) > 1 {
			var shown []string
			for _, i := range at {
				shown = append(shown, fmt.Sprintf("%d: %q", i+1, trimEOL(got[i])))
			}
			add("e", "%s stated %d times: %s", oracleLabels[label], len(at), strings.Join(shown, ", "))
		}
	}

	anchors := newAnchors(sp, person, got)
	for label, r := range sp.real {
		if r < 0 {
			continue
		}
		_, plen, open := headerForm(sp.lines[r])
		prefix := strings.TrimRight(trimEOL(sp.lines[r])[:plen], " \t")
		wholeBold := open && closesBold(sp.lines[r])
		lo, hi := anchors.around(r)
		at := -1
		for i := lo + 1; i < hi; i++ {
			if !strings.HasPrefix(got[i], prefix) || personText[trimEOL(got[i])] {
				continue
			}
			if want[label] == "" || strings.Contains(got[i], want[label]) {
				at = i
				break
			}
		}
		if at < 0 {
			if want[label] != "" {
				add("c", "%q is not in the %s line %d %q (form %q) between output lines %d and %d", want[label], oracleLabels[label], r+1, trimEOL(sp.lines[r]), prefix, lo+1, hi+1)
			} else {
				add("c", "the %s line %d %q lost its form %q or place (output lines %d to %d)", oracleLabels[label], r+1, trimEOL(sp.lines[r]), prefix, lo+1, hi+1)
			}
			continue
		}
		if wholeBold && !closesBold(got[at]) {
			add("c", "the %s line %d %q was bold as a whole; now %q", oracleLabels[label], r+1, trimEOL(sp.lines[r]), trimEOL(got[at]))
		}
		// f: the list or quote lines under a header stay right under it.
		if r+1 < len(sp.lines) && !sp.owned[r+1] && belongsUnder(sp.lines[r], sp.lines[r+1]) {
			if at+1 >= len(got) || !sameLine(sp.lines[r+1], got[at+1]) {
				next := "(end)"
				if at+1 < len(got) {
					next = trimEOL(got[at+1])
				}
				add("f", "%q now comes between %s line %q and the line under it %q", next, oracleLabels[label], trimEOL(got[at]), trimEOL(sp.lines[r+1]))
			}
		}
	}
	for label, value := range want {
		if value == "" || sp.real[label] >= 0 {
			continue
		}
		var with []int
		for _, i := range ctxHeaders[label] {
			if strings.Contains(got[i], value) {
				with = append(with, i)
			}
		}
		switch {
		case len(with) != 1:
			add("c", "no %s header: want one added with %q, found %d", oracleLabels[label], value, len(with))
		// Above the title only to join header lines there: a document that opens with
		// them has a level-1 heading further down.
		case md.title >= 0 && with[0] < md.title && !headerAbove(ctxHeaders, with[0], md.title),
			md.firstSection >= 0 && with[0] > md.firstSection:
			add("c", "%s added at line %d, not between the title (%s) and the first section (%s)", oracleLabels[label], with[0]+1, lineName(md.title), lineName(md.firstSection))
		}
	}
	return fs
}

// headerAbove reports whether a header line other than line except lies above line i.
func headerAbove(headers [3][]int, except, i int) bool {
	for _, at := range headers {
		for _, h := range at {
			if h != except && h < i {
				return true
			}
		}
	}
	return false
}

// keyAbove is the top-level frontmatter key whose value holds line i.
func keyAbove(lines []string, i int) string {
	for ; i > 0; i-- {
		if key, ok := topKey(lines[i]); ok {
			return key
		}
	}
	return ""
}

// commentKept reports whether the frontmatter of got has key with comment at the end
// of a line of its value (the key's line and the lines under it up to the next key),
// after a space, and the key's value, read as YAML, does not hold the comment.
func commentKept(got []string, key, comment string) bool {
	fm := frontmatterEnd(got)
	if fm == 0 {
		return false
	}
	found := false
	for i := 1; i < fm-1 && !found; i++ {
		if k, ok := topKey(got[i]); !ok || k != key {
			continue
		}
		for j := i; j < fm-1; j++ {
			if _, ok := topKey(got[j]); ok && j > i {
				break
			}
			t := trimEOL(got[j])
			if before, ok := strings.CutSuffix(t, comment); ok && (strings.HasSuffix(before, " ") || strings.HasSuffix(before, "\t")) {
				found = true
				break
			}
		}
	}
	if !found {
		return false
	}
	var m map[string]any
	if err := yaml.Unmarshal([]byte(strings.Join(got[1:fm-1], "")), &m); err == nil {
		if v, ok := m[key].(string); ok && strings.Contains(v, comment) {
			return false
		}
	}
	return true
}

func lineName(i int) string {
	if i < 0 {
		return "none"
	}
	return fmt.Sprintf("line %d", i+1)
}

// belongsUnder reports whether next, the line right under a header line, belongs to
// it: a list or quote line under a header at the top level, the next line of the
// quote under a header in a blockquote.
func belongsUnder(header, next string) bool {
	n := trimEOL(next)
	if strings.HasPrefix(strings.TrimLeft(header, " \t"), ">") {
		rest, ok := strings.CutPrefix(strings.TrimLeft(n, " \t"), ">")
		return ok && strings.TrimSpace(rest) != ""
	}
	return listItemRE.MatchString(n) || strings.HasPrefix(strings.TrimLeft(n, " \t"), ">")
}

var listItemRE = regexp.MustCompile(`^[ \t]*(?:[-*+]|\d{1,9}[.)])(?:[ \t]|$)`)

// anchors are the person's lines that occur once in the original and once in the
// output: where they are in the output places everything between them.
type anchors struct {
	sp    *savePoint
	in    map[string]int // text with line ending → output index, for lines unique in both
	after int            // the output index that stands for "after the end"
}

func newAnchors(sp *savePoint, person, got []string) *anchors {
	count := map[string]int{}
	for _, l := range person {
		count[l]++
	}
	outCount := map[string]int{}
	outAt := map[string]int{}
	for i, l := range got {
		outCount[l]++
		outAt[l] = i
	}
	in := map[string]int{}
	for l, n := range count {
		if n == 1 && outCount[l] == 1 && strings.TrimSpace(l) != "" {
			in[l] = outAt[l]
		}
	}
	return &anchors{sp: sp, in: in, after: len(got)}
}

// around returns the output indexes of the nearest anchors before and after line r
// of the original (-1 and the output's length when there is none).
func (a *anchors) around(r int) (int, int) {
	lo, hi := -1, a.after
	for i := r - 1; i >= 0; i-- {
		if at, ok := a.in[a.sp.lines[i]]; ok && !a.sp.owned[i] {
			lo = at
			break
		}
	}
	for i := r + 1; i < len(a.sp.lines); i++ {
		if at, ok := a.in[a.sp.lines[i]]; ok && !a.sp.owned[i] {
			hi = at
			break
		}
	}
	if hi < lo {
		hi = lo // anchors out of order: the embedding check reports it
	}
	return lo, hi
}

// lineDiff renders the difference of a and b, lines of context around each change,
// "-" for a line of a only, "+" for one of b only; at most maxLines lines.
func lineDiff(a, b []string, context, maxLines int) string {
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	ma, mb := a[pre:len(a)-suf], b[pre:len(b)-suf]
	type op struct {
		kind byte
		text string
		line int // 1-based in a, or in b for "+"
	}
	var ops []op
	for i := 0; i < pre; i++ {
		ops = append(ops, op{' ', a[i], i + 1})
	}
	if len(ma)*len(mb) <= 4_000_000 {
		// The longest common subsequence of the middle.
		n, m := len(ma), len(mb)
		dp := make([][]int32, n+1)
		for i := range dp {
			dp[i] = make([]int32, m+1)
		}
		for i := n - 1; i >= 0; i-- {
			for j := m - 1; j >= 0; j-- {
				switch {
				case ma[i] == mb[j]:
					dp[i][j] = dp[i+1][j+1] + 1
				case dp[i+1][j] >= dp[i][j+1]:
					dp[i][j] = dp[i+1][j]
				default:
					dp[i][j] = dp[i][j+1]
				}
			}
		}
		i, j := 0, 0
		for i < n || j < m {
			switch {
			case i < n && j < m && ma[i] == mb[j]:
				ops = append(ops, op{' ', ma[i], pre + i + 1})
				i++
				j++
			case j < m && (i == n || dp[i][j+1] >= dp[i+1][j]):
				ops = append(ops, op{'+', mb[j], pre + j + 1})
				j++
			default:
				ops = append(ops, op{'-', ma[i], pre + i + 1})
				i++
			}
		}
	} else {
		for i, l := range ma {
			ops = append(ops, op{'-', l, pre + i + 1})
		}
		for j, l := range mb {
			ops = append(ops, op{'+', l, pre + j + 1})
		}
	}
	for i := len(a) - suf; i < len(a); i++ {
		ops = append(ops, op{' ', a[i], i + 1})
	}
	show := make([]bool, len(ops))
	for i, o := range ops {
		if o.kind != ' ' {
			for k := max(i-context, 0); k <= i+context && k < len(ops); k++ {
				show[k] = true
			}
		}
	}
	var sb strings.Builder
	n, gap := 0, false
	for i, o := range ops {
		if !show[i] {
			gap = true
			continue
		}
		if gap && n > 0 {
			sb.WriteString("   ...\n")
		}
		gap = false
		if n == maxLines {
			sb.WriteString("   ... (diff cut)\n")
			break
		}
		text := trimEOL(o.text)
		if strings.HasSuffix(o.text, "\r\n") {
			text += "␍"
		}
		if eolOf(o.text) == "" {
			text += "⌀" // no line ending
		}
		fmt.Fprintf(&sb, "%c%5d %s\n", o.kind, o.line, text)
		n++
	}
	return sb.String()
}

// checkCounts counts, per check, the cases that failed it, with a few examples.
type checkCounts struct {
	n        map[string]int
	examples map[string][]string
}

func newCheckCounts() *checkCounts {
	return &checkCounts{n: map[string]int{}, examples: map[string][]string{}}
}

// add counts case once for each check among fs.
func (c *checkCounts) add(name string, fs []finding) {
	seen := map[string]bool{}
	for _, f := range fs {
		if seen[f.check] {
			continue
		}
		seen[f.check] = true
		c.n[f.check]++
		if len(c.examples[f.check]) < 5 {
			c.examples[f.check] = append(c.examples[f.check], name)
		}
	}
}

func (c *checkCounts) String() string {
	var names []string
	for k := range c.n {
		names = append(names, k)
	}
	sort.Strings(names)
	var sb strings.Builder
	for _, k := range names {
		fmt.Fprintf(&sb, "\n  %-4s %5d  e.g. %s", k, c.n[k], strings.Join(c.examples[k], ", "))
	}
	if sb.Len() == 0 {
		return " none"
	}
	return sb.String()
}
