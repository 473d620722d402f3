package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestSaveRealCorpus runs load, save, the same save again and close on each of the
// real save points of ../shared/corpus (80 files from public repositories, each laid
// out as a workspace with its real sibling files; MANIFEST.md names the sources), each
// copied to a temporary folder. Which lines ctx owns is read with cmark, not with ctx
// (ownedLines): the header lines, the frontmatter keys of ctx's, ctx's marker blocks.
// The checks (judge in saveoracle_test.go, letters as in TestSaveGenerated):
//
//	a  every run exits 0;
//	b  every line ctx does not own is there, in order, byte for byte;
//	c  the summary is in the real Last Session line, in its form and place: a
//	   "Last session:" line under a later "## Session Continuity" is edited there, and
//	   a "> **Last session**:" quoted in the person's "## Resume Prompt" is never
//	   rewritten (a decoy);
//	d  the second save changes nothing but dates and times;
//	e  no label is a header twice;
//	f  no Next Action is inserted between a header and the list or quote lines under it;
//	g  an empty "**Next action:**" that ctx fills gets a space after the colon;
//	h  a file with no Next Action and no steps file gets no made-up "Write the steps
//	   file" next action;
//	i  load's next action is the file's Next Action header; without one it is not taken
//	   from a later look-alike (the oldest entry of a log with the newest on top).
//
// The corpus is found at $CTX_CORPUS, else ../shared/corpus beside the repository;
// without it the test is skipped, and fails with CI=true.
func TestSaveRealCorpus(t *testing.T) {
	dir := corpusDir(t)
	requireCmark(t)
	cases := readCorpusManifest(t, filepath.Join(dir, "manifest.tsv"))
	found := make([][]finding, len(cases))
	t.Run("files", func(t *testing.T) {
		for k, c := range cases {
			t.Run(c.id, func(t *testing.T) {
				t.Parallel()
				found[k] = runCorpusCase(t, dir, c)
				for _, f := range found[k] {
					t.Errorf("%s: %s", f.check, f.msg)
				}
			})
		}
	})
	counts := newCheckCounts()
	for k, c := range cases {
		counts.add(c.id, found[k])
	}
	t.Logf("files failing each check, of %d:%s", len(cases), counts)
}

// corpusDir finds the corpus of real save points, or skips the test (fails it in CI).
func corpusDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("CTX_CORPUS")
	if dir == "" {
		dir = filepath.Join("..", "..", "..", "shared", "corpus")
	}
	if _, err := os.Stat(filepath.Join(dir, "manifest.tsv")); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("no corpus of real save points: %v (set CTX_CORPUS)", err)
		}
		t.Skipf("no corpus of real save points at %s (set CTX_CORPUS)", dir)
	}
	return dir
}

// corpusCase is one row of manifest.tsv.
type corpusCase struct {
	id, project, number, file string
}

func readCorpusManifest(t *testing.T, path string) []corpusCase {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var cols map[string]int
	var cases []corpusCase
	for sc.Scan() {
		fields := strings.Split(sc.Text(), "\t")
		if cols == nil {
			cols = map[string]int{}
			for i, name := range fields {
				cols[name] = i
			}
			for _, need := range []string{"id", "project", "number", "file"} {
				if _, ok := cols[need]; !ok {
					t.Fatalf("%s: no column %q", path, need)
				}
			}
			continue
		}
		if len(fields) < len(cols) {
			t.Fatalf("%s: short row %q", path, sc.Text())
		}
		cases = append(cases, corpusCase{
			id: fields[cols["id"]], project: fields[cols["project"]],
			number: fields[cols["number"]], file: fields[cols["file"]],
		})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(cases) == 0 {
		t.Fatalf("%s: no cases", path)
	}
	return cases
}

// lookAlikeRE matches a line that states a header label in any form: in a list, a
// quote, a heading.
var lookAlikeRE = regexp.MustCompile(`(?i)^[ \t>*+\-0-9.)#]*\**[ \t]*(last session|current phase|next action)[ \t]*\**[ \t]*:`)

// readSavePoint reads a save point the oracle's way: cmark's structure, and ctx's
// lines by ownedLines.
func readSavePoint(data []byte) (*savePoint, error) {
	body, bom := cutBOM(data)
	sp := &savePoint{bom: bom, lines: splitLines(body)}
	md, err := cmarkLines(sp.lines)
	if err != nil {
		return nil, err
	}
	sp.owned = ownedLines(sp.lines, md)
	sp.older = md.older
	sp.real = realHeaders(sp.lines, md)
	sp.decoy = make([]bool, len(sp.lines))
	for i, l := range sp.lines {
		sp.decoy[i] = !sp.owned[i] && lookAlikeRE.MatchString(l)
	}
	return sp, nil
}

func runCorpusCase(t *testing.T, corpus string, c corpusCase) []finding {
	root := scratchDir(t)
	ws, home := filepath.Join(root, "ws"), filepath.Join(root, "home")
	copyTree(t, filepath.Join(corpus, "files", c.id), ws)
	if err := makeHome(home); err != nil {
		t.Fatal(err)
	}
	planning := filepath.Join(ws, "02-projects", c.project, "01-planning")
	resumePath := filepath.Join(planning, "_resume.md")
	orig, err := os.ReadFile(resumePath)
	if err != nil {
		t.Fatal(err)
	}
	sp, err := readSavePoint(orig)
	if err != nil {
		t.Fatal(err)
	}
	var fs []finding
	add := func(run string, more []finding) {
		for _, f := range more {
			fs = append(fs, finding{f.check, run + ": " + f.msg})
		}
	}

	stdout, stderr, code := ctxRun(ws, home, "2026-03-02T09:55:00Z", "load", c.number, "--json")
	if code != 0 {
		add("load", []finding{{"a", fmt.Sprintf("exit %d: %s", code, strings.TrimSpace(stderr))}})
	} else {
		add("load", checkLoadNext(sp, stdout))
	}

	summary := "corpus save"
	file := filepath.Join(ws, filepath.FromSlash(c.file))
	runs := []struct{ name, now, cmd string }{
		{"save1", "2026-03-02T10:00:00Z", "save"},
		{"save2", "2026-03-02T10:05:00Z", "save"},
		{"close", "2026-03-02T10:10:00Z", "close"},
	}
	var first []byte
	shown := false
	for k, run := range runs {
		_, stderr, code := ctxRun(ws, home, run.now, run.cmd, "-p", c.number, "--summary", summary, "--file", file)
		if code != 0 {
			add(run.name, []finding{{"a", fmt.Sprintf("exit %d: %s", code, strings.TrimSpace(stderr))}})
			break
		}
		out, err := os.ReadFile(resumePath)
		if err != nil {
			t.Fatal(err)
		}
		found := judge(sp, out, summary)
		if k == 0 {
			first = out
		}
		if k == 1 && !bytes.Equal(maskTimes(first), maskTimes(out)) {
			found = append(found, finding{"d", "the second save changed more than dates and times:\n" +
				lineDiff(splitLines(maskTimes(first)), splitLines(maskTimes(out)), 2, 40)})
		}
		if sp.real[labelNextAction] < 0 && !hasSteps(planning) && bytes.Contains(out, []byte("Write the steps file")) && !bytes.Contains(orig, []byte("Write the steps file")) {
			found = append(found, finding{"h", "no Next Action and no steps file, and ctx wrote the next action \"Write the steps file\""})
		}
		if len(found) > 0 && !shown {
			shown = true
			t.Logf("original against the file after %s:\n%s", run.name, lineDiff(splitLines(orig), splitLines(out), 2, 60))
		}
		add(run.name, found)
	}
	return fs
}

// hasSteps reports whether a planning folder holds a steps file.
func hasSteps(planning string) bool {
	for _, name := range []string{"steps.md", "04-steps.md"} {
		if _, err := os.Stat(filepath.Join(planning, name)); err == nil {
			return true
		}
	}
	return false
}

// checkLoadNext holds load's next action to the save point's Next Action header;
// without one, it must not come from a look-alike (a list item, a quotation, an older
// entry of a log with the newest on top).
func checkLoadNext(sp *savePoint, stdout string) []finding {
	var out struct {
		Resume struct {
			NextAction string `json:"next_action"`
		} `json:"resume"`
	}
	if err := json.Unmarshal([]byte(stdout), &out); err != nil {
		return []finding{{"i", "load --json: " + err.Error()}}
	}
	got := strings.TrimSpace(out.Resume.NextAction)
	if r := sp.real[labelNextAction]; r >= 0 {
		_, prefix := headerOf(sp.lines[r])
		want := strings.TrimSpace(trimEOL(sp.lines[r])[prefix:])
		if got != want {
			return []finding{{"i", fmt.Sprintf("load's next action %q, the Next Action line %d says %q", got, r+1, want)}}
		}
		return nil
	}
	if got == "" {
		return nil
	}
	for i, l := range sp.lines {
		m := lookAlikeRE.FindStringSubmatchIndex(l)
		if m == nil || !strings.EqualFold(l[m[2]:m[3]], "next action") {
			continue
		}
		if value := strings.Trim(strings.TrimSpace(trimEOL(l)[m[1]:]), "* "); value != "" && strings.Contains(got, value) {
			where := "a look-alike"
			if sp.older != nil && sp.older[i] {
				where = "an older entry of a log with the newest entry on top"
			}
			return []finding{{"i", fmt.Sprintf("load's next action %q comes from line %d %q, %s", got, i+1, trimEOL(l), where)}}
		}
	}
	return nil
}
