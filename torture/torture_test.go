//go:build torture

package torture

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ctxtools/ctx/internal/testkit/ctxbin"
)

// TestTorture makes a workspace (`ctx demo` and a few `ctx new`) for the ctx ctxbin
// built, binds agent sessions to its projects, then runs saves, closes, hooks, new projects
// and readers, several at once and some killed, until TORTURE_TIME is spent. A checker
// then proves the invariants README.md lists; each violation is one precise line.
func TestTorture(t *testing.T) {
	w, rep := torture(t, loadConfig(t), nil)
	if len(rep.violations) > 0 {
		t.Fatalf("%d violation(s); the workspace is kept at %s, every operation in %s:\n  %s", len(rep.violations), w.ws,
			filepath.Join(w.root, "ops.log"), strings.Join(rep.violations, "\n  "))
	}
}

// TestTortureCheckerCatches proves that the checker can fail: after a short load it
// damages the workspace in known ways, each of which must come out as a violation.
func TestTortureCheckerCatches(t *testing.T) {
	cfg := loadConfig(t)
	cfg.budget = 3 * time.Second
	var want []string
	w, rep := torture(t, cfg, func(w *world) { want = w.injectFaults() })
	for _, fault := range want {
		found := slices.ContainsFunc(rep.violations, func(v string) bool { return strings.Contains(v, fault) })
		if !found {
			t.Errorf("the checker missed a fault injected on purpose: no violation says %q", fault)
		}
	}
	if t.Failed() {
		t.Logf("workspace kept at %s; the violations found:\n  %s", w.ws, strings.Join(rep.violations, "\n  "))
	}
}

// torture runs the load for cfg.budget, lets damage (when given) change the workspace,
// checks, writes ops.log and prints the summary.
func torture(t *testing.T, cfg config, damage func(*world)) (*world, *report) {
	w := newWorld(t, cfg)
	w.setUp()
	start := time.Now()
	w.runLoad(start.Add(cfg.budget))
	loadTime := time.Since(start)
	if damage != nil {
		damage(w)
	}
	rep := w.check()
	w.writeLog(start)
	w.printSummary(rep, loadTime)
	return w, rep
}

// config is what the environment sets: how long the load runs, how many processes run
// at once, how many of them are killed, and the seed of every random choice.
type config struct {
	budget   time.Duration
	procs    int
	killRate float64
	seed     uint64
	keep     bool
}

// processLimit bounds one ctx process: every command takes milliseconds and a lock
// waits at most 5 s, so one still running after this hangs, which is a finding.
const processLimit = 30 * time.Second

func loadConfig(t *testing.T) config {
	c := config{budget: 20 * time.Second, procs: 5, killRate: 0.35, seed: uint64(time.Now().UnixNano())}
	if s := os.Getenv("TORTURE_TIME"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil || d <= 0 {
			t.Fatalf("TORTURE_TIME=%q: want a duration such as 20s or 5m", s)
		}
		c.budget = d
	}
	if s := os.Getenv("TORTURE_PROCS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > 64 {
			t.Fatalf("TORTURE_PROCS=%q: want a number of processes from 1 to 64", s)
		}
		c.procs = n
	}
	if s := os.Getenv("TORTURE_KILL"); s != "" {
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || f < 0 || f > 1 {
			t.Fatalf("TORTURE_KILL=%q: want the share of processes to kill, from 0 to 1", s)
		}
		c.killRate = f
	}
	if s := os.Getenv("TORTURE_SEED"); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("TORTURE_SEED=%q: want a number", s)
		}
		c.seed = n
	}
	c.keep = os.Getenv("TORTURE_KEEP") != ""
	// Building, setting up and checking take seconds; leave them a generous margin.
	if dl, ok := t.Deadline(); ok && time.Until(dl) < c.budget+3*time.Minute {
		t.Fatalf("TORTURE_TIME=%s does not fit the test's -timeout (%s left); raise it (make torture TORTURE_TIMEOUT=...)",
			c.budget, time.Until(dl).Round(time.Second))
	}
	return c
}

// world is one run: the built binary, the workspace, the projects and agent sessions
// the operations aim at, and every operation's result.
type world struct {
	t    *testing.T
	cfg  config
	root string // the run's temporary folder: workspace, home, runtime folder, transcripts
	ws   string // the workspace
	bin  string
	env  []string
	run  string // a short id in every token, so no token is found by chance

	seq     int
	mu      sync.Mutex
	targets []*target       // the projects saves and closes aim at; grows with `ctx new`
	all     []*agentSession // the agent sessions hooks run for
	results []*result
	base    map[string]*baseline // by project id, before the load
}

// target is a project operations aim at.
type target struct {
	id  string // the folder id, e.g. 01-checkout-redesign
	ref string // what -p is given: the number of a top-level project, else the id or path
	rel string // workspace-relative folder
}

// baseline is what a project looked like before the load.
type baseline struct {
	sessionCount    int
	compactionCount int
	problems        []string
	headings        []string        // level-2 headings of its _resume.md; nil when it had none
	legacy          bool            // its save point was a legacy file, which the first save continues
	closedKeys      map[string]bool // sessions whose entry a close had already written
}

func newWorld(t *testing.T, cfg config) *world {
	root, err := os.MkdirTemp("", "ctxt-")
	if err != nil {
		t.Fatal(err)
	}
	root, _ = filepath.EvalSymlinks(root)
	t.Cleanup(func() {
		if t.Failed() || cfg.keep {
			t.Logf("kept %s", root)
			return
		}
		_ = os.RemoveAll(root)
	})
	w := &world{t: t, cfg: cfg, root: root, ws: filepath.Join(root, "ws"), bin: ctxbin.Path(t),
		run: fmt.Sprintf("%06x", cfg.seed&0xffffff), base: map[string]*baseline{}}
	// ws is made empty here for `ctx demo` to fill: every process runs in it.
	for _, d := range []string{"ws", "home", "run", "cache", "config", "tmp", "transcripts"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	// A clean environment: nothing of the person's Claude Code or ctx settings (a
	// CLAUDE_CODE_SESSION_ID of the session running this suite, a user-level window)
	// reaches the processes, and nothing they write lands outside the run's folder.
	w.env = []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + filepath.Join(root, "home"),
		"XDG_RUNTIME_DIR=" + filepath.Join(root, "run"),
		"XDG_CACHE_HOME=" + filepath.Join(root, "cache"),
		"XDG_CONFIG_HOME=" + filepath.Join(root, "config"),
		"CLAUDE_CONFIG_DIR=" + filepath.Join(root, "home", ".claude"),
		"TMPDIR=" + filepath.Join(root, "tmp"),
		"CTX_WORKSPACE=" + filepath.Join(root, "ws"),
		"LANG=C.UTF-8",
		"NO_COLOR=1",
	}
	return w
}

// TestMain removes, after the tests, the ctx they ran (ctxbin builds it once).
func TestMain(m *testing.M) {
	code := m.Run()
	ctxbin.Cleanup()
	os.Exit(code)
}

// setUp writes the demo workspace and three more projects, binds one agent session to
// each project (and keeps one unbound), and records each project's baseline.
func (w *world) setUp() {
	w.must([]string{"demo", "--dir", w.ws}, nil)
	for _, p := range [][2]string{
		{"Gift cards", "sell and redeem gift cards at checkout"},
		{"Returns portal", "let customers start a return without writing to support"},
		{"Loyalty points", "points on every order, spent at checkout"},
	} {
		w.must([]string{"new", p[0], "--description", p[1], "--json"}, nil)
	}

	var listing projectsJSON
	w.mustJSON([]string{"projects", "--json"}, nil, &listing)
	for _, p := range listing.Projects {
		tg := &target{id: p.ID, rel: p.Path, ref: strconv.Itoa(p.Number)}
		if strings.Contains(p.Path, "/00-onboarding/") {
			tg.ref = strings.TrimPrefix(p.Path, "02-projects/")
		}
		w.targets = append(w.targets, tg)
	}
	if len(w.targets) < 6 {
		w.t.Fatalf("setup: ctx projects lists %d projects, want the demo's 4 and 3 new ones", len(w.targets))
	}

	r := rand.New(rand.NewPCG(w.cfg.seed, 0))
	for i, tg := range w.targets {
		s := w.newSession(r, tg)
		var load loadJSON
		w.mustJSON([]string{"load", tg.ref, "--json"}, []string{"CLAUDE_CODE_SESSION_ID=" + s.id}, &load)
		if load.Project.ID != tg.id || load.Session == nil || !load.Session.Bound {
			w.t.Fatalf("setup: CLAUDE_CODE_SESSION_ID=%s ctx load %s did not bind the session to %s", s.id, tg.ref, tg.id)
		}
		if i == 0 {
			w.checkUsageSetUp(s)
		}
	}
	w.newSession(r, nil) // hooks of a session that never loaded a project

	for _, tg := range w.targets {
		w.base[tg.id] = w.readBaseline(tg)
	}
}

// checkUsageSetUp makes sure the transcripts put the sessions where the load needs
// them: against a 167,000-token budget, around the 90% auto-save threshold, so that
// wind-down journals open, fill and are finalized over and over.
func (w *world) checkUsageSetUp(s *agentSession) {
	var u struct {
		TokensUsed int `json:"tokens_used"`
		Budget     int `json:"budget"`
	}
	w.mustJSON([]string{"usage", "--transcript", s.transcript, "--json"}, nil, &u)
	if u.Budget != 167_000 || u.TokensUsed < 140_000 {
		w.t.Fatalf("setup: ctx usage reads %d of a %d budget from the generated transcript; the load needs a 167,000 budget (a 200k model) and usage near 90%%",
			u.TokensUsed, u.Budget)
	}
}

func (w *world) readBaseline(tg *target) *baseline {
	var load loadJSON
	w.mustJSON([]string{"load", tg.id, "--json"}, nil, &load)
	b := &baseline{
		sessionCount:    intField(load.Resume.Frontmatter, "session_count"),
		compactionCount: intField(load.Resume.Frontmatter, "compaction_count"),
		problems:        load.Project.Problems,
		legacy:          load.Resume.Legacy,
	}
	if data, err := os.ReadFile(w.resumePath(tg)); err == nil {
		if rf, err := parseResume(data); err == nil {
			b.headings = rf.h2
		}
		b.closedKeys = closedSessionKeys(string(data))
	}
	return b
}

func (w *world) resumePath(tg *target) string {
	return filepath.Join(w.ws, tg.rel, "01-planning", "_resume.md")
}

// ctx runs one ctx command to the end, never killed: setup, readers of the checker and
// the final saves.
func (w *world) ctx(args []string, env []string) *result {
	return w.exec(&op{kind: "setup", args: args, env: env, killAfter: -1})
}

// must runs a command that has to succeed.
func (w *world) must(args []string, env []string) *result {
	w.t.Helper()
	res := w.ctx(args, env)
	if res.exit != 0 || res.err != nil {
		w.t.Fatalf("setup: ctx %s: exit %d (%v): %s", strings.Join(args, " "), res.exit, res.err, res.stderr)
	}
	return res
}

// mustJSON runs a command that has to succeed and decodes what it prints.
func (w *world) mustJSON(args []string, env []string, v any) {
	w.t.Helper()
	res := w.must(args, env)
	if err := json.Unmarshal([]byte(res.stdout), v); err != nil {
		w.t.Fatalf("setup: ctx %s: output is not JSON: %v\n%s", strings.Join(args, " "), err, res.stdout)
	}
}

// runLoad runs cfg.procs workers until the deadline; each starts one process at a time.
func (w *world) runLoad(deadline time.Time) {
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	var wg sync.WaitGroup
	for n := range w.cfg.procs {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(w.cfg.seed, uint64(n)+1))
			for ctx.Err() == nil {
				w.record(w.exec(w.nextOp(r)))
			}
		})
	}
	wg.Wait()
}

func (w *world) record(res *result) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.results = append(w.results, res)
	if res.op.kind == kindNew && res.exit == 0 {
		var out struct {
			Project projectJSON `json:"project"`
		}
		if json.Unmarshal([]byte(res.stdout), &out) == nil && out.Project.ID != "" {
			res.op.newID = out.Project.ID
			w.targets = append(w.targets, &target{id: out.Project.ID, ref: out.Project.ID, rel: out.Project.Path})
		}
	}
}

// writeLog writes every operation, in the order they started, to ops.log beside the
// workspace: when it started, how it ended, what it printed. A violation names an
// operation by its number; this is where to read what happened around it.
func (w *world) writeLog(start time.Time) {
	rs := slices.Clone(w.results)
	slices.SortFunc(rs, func(a, b *result) int { return a.start.Compare(b.start) })
	var b strings.Builder
	for _, r := range rs {
		target := "-"
		if r.op.target != nil {
			target = r.op.target.id
		}
		ended := "exit " + strconv.Itoa(r.exit)
		switch {
		case r.hung:
			ended = "hung"
		case r.killed:
			ended = "kill@" + r.op.killAfter.Round(10*time.Microsecond).String()
		}
		fmt.Fprintf(&b, "%9.3fs +%-7s %-14s %-20s %-26s %s\n", r.start.Sub(start).Seconds(), r.took.Round(time.Millisecond), ended, r.op.kind, target, r)
		for _, out := range []struct{ name, text string }{{"stdout", r.stdout}, {"stderr", r.stderr}} {
			if t := strings.TrimSpace(out.text); t != "" {
				fmt.Fprintf(&b, "%12s %s: %.300s\n", "", out.name, strings.ReplaceAll(t, "\n", " | "))
			}
		}
	}
	if err := os.WriteFile(filepath.Join(w.root, "ops.log"), []byte(b.String()), 0o644); err != nil {
		w.t.Log(err)
	}
}

// printSummary says what ran and what was checked, in a few lines.
func (w *world) printSummary(rep *report, loadTime time.Duration) {
	type counts struct{ run, killed, acked, failed, warned int }
	byKind := map[string]*counts{}
	var total counts
	for _, r := range w.results {
		c := byKind[r.op.kind]
		if c == nil {
			c = &counts{}
			byKind[r.op.kind] = c
		}
		for _, c := range []*counts{c, &total} {
			c.run++
			switch {
			case r.killed:
				c.killed++
			case r.exit == 0:
				c.acked++
				if r.stderr != "" && r.op.isHook() {
					c.warned++
				}
			default:
				c.failed++
			}
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "torture: %s of load (%s asked), %d processes at once, kill rate %.0f%%, seed %d (TORTURE_SEED=%d repeats the choices)\n",
		loadTime.Round(time.Millisecond), w.cfg.budget, w.cfg.procs, w.cfg.killRate*100, w.cfg.seed, w.cfg.seed)
	fmt.Fprintf(&b, "%-20s %7s %7s %7s %7s %7s\n", "operation", "run", "killed", "acked", "failed", "warned")
	for _, k := range kindOrder {
		if c := byKind[k]; c != nil {
			fmt.Fprintf(&b, "%-20s %7d %7d %7d %7d %7d\n", k, c.run, c.killed, c.acked, c.failed, c.warned)
		}
	}
	fmt.Fprintf(&b, "%-20s %7d %7d %7d %7d %7d\n", "total", total.run, total.killed, total.acked, total.failed, total.warned)
	fmt.Fprintf(&b, "checked: %s\n", strings.Join(rep.checked, "; "))
	for _, n := range rep.notes {
		fmt.Fprintf(&b, "note: %s\n", n)
	}
	if len(rep.violations) == 0 {
		b.WriteString("violations: none\n")
	} else {
		fmt.Fprintf(&b, "violations: %d\n", len(rep.violations))
	}
	fmt.Print(b.String())
}

// The JSON ctx prints, as far as the suite reads it.
type (
	projectJSON struct {
		ID       string   `json:"id"`
		Number   int      `json:"number"`
		Path     string   `json:"path"`
		Problems []string `json:"problems"`
		Progress struct {
			TasksTotal int `json:"tasks_total"`
		} `json:"progress"`
	}
	projectsJSON struct {
		Projects []projectJSON `json:"projects"`
	}
	loadJSON struct {
		Project projectJSON `json:"project"`
		Resume  struct {
			Path        string         `json:"path"`
			Exists      bool           `json:"exists"`
			Legacy      bool           `json:"legacy"`
			Frontmatter map[string]any `json:"frontmatter"`
		} `json:"resume"`
		Session *struct {
			Bound bool `json:"bound"`
		} `json:"session"`
	}
	showJSON struct {
		Project  projectJSON `json:"project"`
		Sections []struct {
			Title string `json:"title"`
			Level int    `json:"level"`
		} `json:"sections"`
	}
	saveJSON struct {
		Project    projectJSON `json:"project"`
		SnapshotID string      `json:"snapshot_id"`
	}
)

// intField reads a number from decoded JSON or YAML; 0 when it is missing.
func intField(m map[string]any, key string) int {
	switch v := m[key].(type) {
	case float64:
		return int(v)
	case int:
		return v
	case uint64:
		return int(v)
	}
	return 0
}

// closedHeadingRE is the Session History heading a close writes, with its session key.
var closedHeadingRE = regexp.MustCompile(`(?m)^#{2,6} Session \d+: .*, \d{4}-\d{2}-\d{2} <!-- ctx:session ([^ ]+) -->$`)

// closedSessionKeys are the sessions a save point's history says were closed: a close
// of one of them again counts nothing.
func closedSessionKeys(text string) map[string]bool {
	keys := map[string]bool{}
	for _, m := range closedHeadingRE.FindAllStringSubmatch(text, -1) {
		keys[m[1]] = true
	}
	return keys
}
