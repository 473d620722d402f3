package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/ctxtools/ctx/internal/testkit/ctxbin"
	"github.com/ctxtools/ctx/templates"
)

// These tests run the real ctx binary as separate processes: several saves at once, and
// saves killed mid-run. Goroutines calling runSave would share one process and could not
// show what the file lock and the atomic rename are for.

// ctxBinary returns the path of ctx built once per run of the test binary (ctxbin),
// skipping the test under -short. TestMain belongs to testscript, so the binary is built
// with `go build` rather than by re-executing this one.
func ctxBinary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds ctx and runs it as separate processes; skipped under -short")
	}
	return ctxbin.Path(t)
}

// killSchedule times three whole runs of run and returns how long after its start a
// kill may come (a little over a whole run, so kills spread over every step) and the
// random source of the delays, seeded from $CTX_KILL_SEED when set so that a failing
// run can be repeated.
func killSchedule(t *testing.T, what string, run func(i int)) (time.Duration, *rand.Rand) {
	t.Helper()
	var took []time.Duration
	for i := range 3 {
		start := time.Now()
		run(i)
		took = append(took, time.Since(start))
	}
	slices.Sort(took)
	maxDelay := max(8*time.Millisecond, took[1]*5/4)
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("CTX_KILL_SEED"); s != "" {
		var err error
		if seed, err = strconv.ParseUint(s, 10, 64); err != nil {
			t.Fatalf("CTX_KILL_SEED: %v", err)
		}
	}
	t.Logf("seed %d (rerun with CTX_KILL_SEED=%d); %s takes %v; kills within %v", seed, seed, what, took[1], maxDelay)
	return maxDelay, rand.New(rand.NewPCG(seed, seed))
}

// procWorkspace writes a workspace with one project, 01-alpha, and no save point.
func procWorkspace(t *testing.T) string {
	t.Helper()
	ws := t.TempDir()
	planning := filepath.Join(ws, "02-projects", "01-alpha", "01-planning")
	if err := os.MkdirAll(planning, 0o755); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"overview.md": "---\nname: Alpha\nstatus: IN_PROGRESS\n---\n\n# Alpha\n",
		"steps.md":    "## Phase 1: Form\n- [x] Build the form\n- [ ] Validate expiry\n## Phase 2: Ship\n- [ ] Release\n",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(planning, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return ws
}

func procResumePath(ws string) string {
	return filepath.Join(ws, "02-projects", "01-alpha", "01-planning", "_resume.md")
}

// procRun is one ctx process.
type procRun struct {
	args           []string
	cmd            *exec.Cmd
	stdout, stderr bytes.Buffer
}

// startCtx starts ctx in ws with CTX_WORKSPACE=ws, NO_COLOR=1 and, when sessionID is not
// empty, CLAUDE_CODE_SESSION_ID; whatever of these the test's own environment holds
// is left out.
func startCtx(t *testing.T, bin, ws, sessionID string, args ...string) *procRun {
	t.Helper()
	r := &procRun{args: args, cmd: exec.Command(bin, args...)}
	r.cmd.Dir = ws
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool {
		key, _, _ := strings.Cut(kv, "=")
		switch key {
		case "CTX_WORKSPACE", "CTX_NOW", "CLAUDE_PROJECT_DIR", "CLAUDE_CODE_SESSION_ID", "NO_COLOR":
			return true
		}
		return false
	})
	env = append(env, "CTX_WORKSPACE="+ws, "NO_COLOR=1")
	if sessionID != "" {
		env = append(env, "CLAUDE_CODE_SESSION_ID="+sessionID)
	}
	r.cmd.Env = env
	r.cmd.Stdout = &r.stdout
	r.cmd.Stderr = &r.stderr
	if err := r.cmd.Start(); err != nil {
		t.Fatalf("start ctx %s: %v", strings.Join(args, " "), err)
	}
	return r
}

// mustSucceed waits for r and fails the test unless it exited 0.
func (r *procRun) mustSucceed(t *testing.T) {
	t.Helper()
	if err := r.cmd.Wait(); err != nil {
		t.Fatalf("ctx %s: %v\nstdout:\n%s\nstderr:\n%s", strings.Join(r.args, " "), err, &r.stdout, &r.stderr)
	}
}

func runCtx(t *testing.T, bin, ws string, args ...string) {
	t.Helper()
	startCtx(t, bin, ws, "", args...).mustSucceed(t)
}

func readResume(t *testing.T, ws string) []byte {
	t.Helper()
	doc, err := os.ReadFile(procResumePath(ws))
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// frontmatterOf parses the YAML between a document's opening and closing --- lines.
func frontmatterOf(doc []byte) (map[string]any, error) {
	rest, ok := bytes.CutPrefix(doc, []byte("---\n"))
	if !ok {
		return nil, errors.New("no opening --- line")
	}
	end := bytes.Index(rest, []byte("\n---\n"))
	if end < 0 {
		return nil, errors.New("no closing --- line")
	}
	var fm map[string]any
	if err := yaml.Unmarshal(rest[:end+1], &fm); err != nil {
		return nil, fmt.Errorf("frontmatter: %w", err)
	}
	return fm, nil
}

// parseFrontmatter parses the frontmatter of project 01-alpha's save point.
func parseFrontmatter(doc []byte) (map[string]any, error) {
	fm, err := frontmatterOf(doc)
	if err != nil {
		return nil, err
	}
	if fm["project_id"] != "01-alpha" {
		return nil, fmt.Errorf("frontmatter: project_id = %v, want 01-alpha", fm["project_id"])
	}
	return fm, nil
}

// checklistTail is the template's last section, with which every complete save point of
// the test workspace ends.
func checklistTail(t *testing.T) string {
	t.Helper()
	src, _, err := templates.Set{}.Source(templates.Resume)
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(src, []byte("## Resume State Update Checklist\n"))
	if i < 0 {
		t.Fatal("the resume template has no Resume State Update Checklist section")
	}
	return string(src[i:])
}

// checkComplete reports what makes doc not a complete save point.
func checkComplete(doc []byte, tail string) error {
	if _, err := parseFrontmatter(doc); err != nil {
		return err
	}
	if !bytes.HasSuffix(doc, []byte("\n"+tail)) {
		return errors.New("does not end with the template's Resume State Update Checklist section")
	}
	return nil
}

// subsection returns the body of the "### name" subsection, up to the next heading.
func subsection(doc []byte, name string) (string, bool) {
	_, body, ok := strings.Cut(string(doc), "\n### "+name+"\n")
	if !ok {
		return "", false
	}
	if i := strings.Index(body, "\n#"); i >= 0 {
		body = body[:i+1]
	} else if strings.HasPrefix(body, "#") {
		body = ""
	}
	return body, true
}

// findTemps returns the ctx temporary files under dir, relative to it.
func findTemps(t *testing.T, dir string) []string {
	t.Helper()
	var temps []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if strings.HasPrefix(d.Name(), ".ctx-tmp-") {
			rel, _ := filepath.Rel(dir, path)
			temps = append(temps, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return temps
}

// snapshotFiles returns the names of the .json files in the snapshot folder.
func snapshotFiles(t *testing.T, ws string) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(ws, ".ctx", "sessions"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".json") {
			names = append(names, e.Name())
		}
	}
	return names
}

// readSnapshot parses one snapshot JSON file and returns its snapshot_id.
func readSnapshot(ws, name string) (string, error) {
	data, err := os.ReadFile(filepath.Join(ws, ".ctx", "sessions", name))
	if err != nil {
		return "", err
	}
	var snap struct {
		SnapshotID string `json:"snapshot_id"`
	}
	if err := json.Unmarshal(data, &snap); err != nil {
		return "", fmt.Errorf("%s: %w\n%s", name, err, data)
	}
	return snap.SnapshotID, nil
}

// snapshotKey splits a snapshot id into its time stamp and collision number, the order
// in which ctx hands ids out.
func snapshotKey(id string) (string, int) {
	stamp := strings.TrimPrefix(id, "session-")
	const stampLen = len("20060102T150405Z-000000")
	if len(stamp) > stampLen+1 && stamp[stampLen] == '-' {
		if n, err := strconv.Atoi(stamp[stampLen+1:]); err == nil {
			return stamp[:stampLen], n
		}
	}
	return stamp, 1
}

func TestConcurrentSavesLoseNothing(t *testing.T) {
	bin := ctxBinary(t)
	tail := checklistTail(t)
	const procs, rounds = 8, 3
	for round := 1; round <= rounds; round++ {
		ws := procWorkspace(t)
		runCtx(t, bin, ws, "save", "-p", "1")

		start := time.Now()
		runs := make([]*procRun, procs)
		for i := range runs {
			runs[i] = startCtx(t, bin, ws, "", "save", "-p", "1", "--decision", fmt.Sprintf("decision %d", i+1))
		}
		for _, r := range runs {
			r.mustSucceed(t)
		}
		t.Logf("round %d: %d saves at once took %v", round, procs, time.Since(start))

		doc := readResume(t, ws)
		if err := checkComplete(doc, tail); err != nil {
			t.Fatalf("round %d: the save point is not complete: %v\n--- _resume.md ---\n%s", round, err, doc)
		}
		decisions, ok := subsection(doc, "Key Decisions")
		if !ok {
			t.Fatalf("round %d: no ### Key Decisions\n--- _resume.md ---\n%s", round, doc)
		}
		for i := 1; i <= procs; i++ {
			line := regexp.MustCompile(fmt.Sprintf(`(?m)^- \d{4}-\d\d-\d\d: decision %d$`, i))
			if n := len(line.FindAllIndex(doc, -1)); n != 1 {
				t.Errorf("round %d: %q is in the save point %d times, want once (a lost or repeated update)", round, fmt.Sprintf("decision %d", i), n)
			} else if !line.MatchString(decisions) {
				t.Errorf("round %d: %q is not under ### Key Decisions", round, fmt.Sprintf("decision %d", i))
			}
		}
		if n := strings.Count("\n"+decisions, "\n- "); n != procs {
			t.Errorf("round %d: ### Key Decisions holds %d items, want %d", round, n, procs)
		}
		if t.Failed() {
			t.Fatalf("round %d:\n--- _resume.md ---\n%s", round, doc)
		}

		checkSnapshots(t, ws, procs+1)
		if temps := findTemps(t, ws); len(temps) > 0 {
			t.Fatalf("round %d: temporary files left in the workspace: %v", round, temps)
		}
	}
}

// checkSnapshots checks that the snapshot folder holds want complete snapshot sets with
// distinct ids and that LATEST-SESSION.txt names the newest.
func checkSnapshots(t *testing.T, ws string, want int) {
	t.Helper()
	dir := filepath.Join(ws, ".ctx", "sessions")
	names := snapshotFiles(t, ws)
	if len(names) != want {
		t.Fatalf("%d snapshot .json files, want %d: %v", len(names), want, names)
	}
	seen := map[string]bool{}
	newest := ""
	for _, name := range names {
		id, err := readSnapshot(ws, name)
		if err != nil {
			t.Fatalf("snapshot does not parse: %v", err)
		}
		if id+".json" != name {
			t.Errorf("%s: snapshot_id is %q", name, id)
		}
		if seen[id] {
			t.Errorf("snapshot id %s given twice", id)
		}
		seen[id] = true
		for _, ext := range []string{".yaml", ".md"} {
			if _, err := os.Stat(filepath.Join(dir, id+ext)); err != nil {
				t.Errorf("snapshot %s has no %s file: %v", id, ext, err)
			}
		}
		s, n := snapshotKey(id)
		if ns, nn := snapshotKey(newest); newest == "" || s > ns || (s == ns && n > nn) {
			newest = id
		}
	}
	latest, err := os.ReadFile(filepath.Join(dir, "LATEST-SESSION.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if got, _, _ := strings.Cut(string(latest), "\n"); got != newest {
		t.Errorf("LATEST-SESSION.txt names %q, want the newest snapshot %q (of %v)", got, newest, names)
	}
}

func TestKilledSaveLeavesOldOrNew(t *testing.T) {
	bin := ctxBinary(t)
	tail := checklistTail(t)
	ws := procWorkspace(t)
	resumePath := procResumePath(ws)
	planning := filepath.Dir(resumePath)

	// A few whole saves create the save point and time one, so that the kills below
	// spread over a whole run: startup, reading, the write, the snapshot.
	maxDelay, rng := killSchedule(t, "a save", func(int) { runCtx(t, bin, ws, "save", "-p", "1") })

	const runs = 100
	var unchanged, changed, finished, tempsSeen int
	parsed := map[string]bool{}
	for n := 1; n <= runs; n++ {
		before, err := os.ReadFile(resumePath)
		if err != nil {
			t.Fatal(err)
		}
		delay := time.Duration(rng.Int64N(int64(maxDelay) + 1))
		r := startCtx(t, bin, ws, "", "save", "-p", "1", "--summary", fmt.Sprintf("run %d", n), "--decision", fmt.Sprintf("d %d", n))
		time.Sleep(delay)
		_ = r.cmd.Process.Signal(syscall.SIGKILL)
		err = r.cmd.Wait()
		var exit *exec.ExitError
		switch {
		case err == nil:
			finished++
		case errors.As(err, &exit) && exit.Sys().(syscall.WaitStatus).Signal() == syscall.SIGKILL:
		default:
			t.Fatalf("run %d (killed after %v): %v\nstderr:\n%s", n, delay, err, &r.stderr)
		}

		after, err := os.ReadFile(resumePath)
		if err != nil {
			t.Fatalf("run %d (killed after %v): the save point is gone: %v", n, delay, err)
		}
		if bytes.Equal(after, before) {
			unchanged++
		} else {
			changed++
			if err := checkComplete(after, tail); err != nil {
				t.Fatalf("run %d (killed after %v) left neither the old nor a complete new save point: %v\n--- _resume.md ---\n%s", n, delay, err, after)
			}
			for _, want := range []string{fmt.Sprintf(`(?m)— run %d$`, n), fmt.Sprintf(`(?m)^- \d{4}-\d\d-\d\d: d %d$`, n)} {
				if !regexp.MustCompile(want).Match(after) {
					t.Fatalf("run %d (killed after %v) changed the save point but it lacks %s\n--- _resume.md ---\n%s", n, delay, want, after)
				}
			}
		}
		if len(findTemps(t, planning)) > 0 {
			tempsSeen++
		}
		for _, name := range snapshotFiles(t, ws) {
			if parsed[name] {
				continue
			}
			if _, err := readSnapshot(ws, name); err != nil {
				t.Fatalf("run %d (killed after %v) left a snapshot that does not parse: %v", n, delay, err)
			}
			parsed[name] = true
		}
	}
	t.Logf("%d runs: %d left the save point as it was, %d replaced it, %d finished before the kill, %d left a temporary file in 01-planning",
		runs, unchanged, changed, finished, tempsSeen)

	// The next whole save cleans up after the killed ones.
	runCtx(t, bin, ws, "save", "-p", "1")
	if temps := findTemps(t, planning); len(temps) > 0 {
		t.Errorf("temporary files left in 01-planning after a whole save: %v", temps)
	}
	if doc := readResume(t, ws); checkComplete(doc, tail) != nil {
		t.Errorf("the save point is not complete after a whole save: %v\n--- _resume.md ---\n%s", checkComplete(doc, tail), doc)
	}
	if temps := findTemps(t, filepath.Join(ws, ".ctx")); len(temps) > 0 {
		t.Errorf("temporary files killed saves left in .ctx after a whole save: %v", temps)
	}
}

func TestConcurrentSessionsKeepOwnEntries(t *testing.T) {
	bin := ctxBinary(t)
	tail := checklistTail(t)
	ws := procWorkspace(t)
	// No save point yet: the four race to create it as well.
	const sessions = 4
	runs := make([]*procRun, sessions)
	for k := range runs {
		id := fmt.Sprintf("s%d", k+1)
		runs[k] = startCtx(t, bin, ws, id, "save", "-p", "1", "--summary", "from "+id)
	}
	for _, r := range runs {
		r.mustSucceed(t)
	}

	doc := readResume(t, ws)
	if err := checkComplete(doc, tail); err != nil {
		t.Fatalf("the save point is not complete: %v\n--- _resume.md ---\n%s", err, doc)
	}
	lines := strings.Split(string(doc), "\n")
	entries := 0
	numbers := map[string]bool{}
	for _, l := range lines {
		if strings.Contains(l, "<!-- ctx:session ") {
			entries++
			numbers[strings.Fields(l)[2]] = true // "### Session N — date <!-- ... -->"
		}
	}
	if len(numbers) != sessions {
		t.Errorf("sessions open at once share numbers: %v", numbers)
	}
	if entries != sessions {
		t.Errorf("%d Session History entries, want %d", entries, sessions)
	}
	for k := 1; k <= sessions; k++ {
		marker := fmt.Sprintf("<!-- ctx:session s%d -->", k)
		var at []int
		for i, l := range lines {
			if strings.Contains(l, marker) {
				at = append(at, i)
			}
		}
		if len(at) != 1 {
			t.Errorf("session s%d has %d entries, want 1", k, len(at))
			continue
		}
		if i := at[0]; !strings.HasPrefix(lines[i], "### ") || i+1 >= len(lines) || lines[i+1] != fmt.Sprintf("- from s%d", k) {
			t.Errorf("session s%d's entry is not a heading followed by %q", k, fmt.Sprintf("- from s%d", k))
		}
	}
	if t.Failed() {
		t.Logf("--- _resume.md ---\n%s", doc)
	}
}
