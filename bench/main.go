//go:build linux || darwin

// Command bench measures ctx as an agent meets it: whole processes, started fresh, on a
// generated workspace of thousands of projects. It prints the median, p90 and minimum
// wall time and the peak memory of each case against its target (BENCHMARKS.md).
//
//	go run ./bench [-projects 2000] [-runs 30] [-warmup 3] [-only SUBSTR] [-keep] [-bin PATH]
package main

import (
	"bytes"
	"debug/buildinfo"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/ctxtools/ctx/internal/state"
	"github.com/ctxtools/ctx/internal/testkit/fixture"
	"github.com/ctxtools/ctx/loader"
)

// benchCase is one command line to measure; env is added to the base environment.
type benchCase struct {
	name   string
	args   []string
	env    []string
	stdin  string
	target time.Duration
	// maxRSS is the peak memory target; 0 for none.
	maxRSS int64
	// ws is the workspace the case runs in when it is not the main one (the listing at
	// other scales).
	ws string
	// cold removes the project index before every run: the first listing a person does.
	cold bool
	// noCtx runs the case with the workspace's .ctx/ set aside, as a folder of projects
	// where ctx init never ran: its caches live in the user's cache folder.
	noCtx bool
	// program is run instead of ctx (the floor).
	program string
}

func cases(ws string, projects int) []benchCase {
	// Deep into the list, so a scan that stops at the first match gains little, and with a
	// save point, so the whole load is measured.
	n := max(1, projects*3/4)
	if !fixture.HasResume(n, projects) {
		n--
	}
	p := fmt.Sprint(n)
	wsEnv := []string{"CTX_WORKSPACE=" + ws}
	return []benchCase{
		{
			name: "resume --project " + p + " --json", args: []string{"--resume", "--project", p, "--json"},
			env: wsEnv, target: 15 * time.Millisecond,
		},
		{name: "projects --json", args: []string{"projects", "--json"}, env: wsEnv, target: 60 * time.Millisecond, maxRSS: 30 << 20},
		{name: "projects --json (cold: no index)", args: []string{"projects", "--json"}, env: wsEnv, target: 150 * time.Millisecond, cold: true},
		{name: "load " + p, args: []string{"load", p}, env: wsEnv, target: 5 * time.Millisecond},
		promptCase("system check-context-size (0.2 MB transcript, bound)", ws, filepath.Join(ws, transcriptSmall)),
		promptCase("system check-context-size (8 MB transcript, bound)", ws, filepath.Join(ws, transcript8MB)),
		promptCase("system check-context-size (200 MB transcript, bound)", ws, filepath.Join(ws, transcript200MB)),
		{
			name: "system record-action (Edit)", args: []string{"system", "record-action"},
			env: []string{"CTX_WORKSPACE=" + ws, "XDG_RUNTIME_DIR=" + ws},
			stdin: `{"session_id":"bench-1","cwd":"` + ws + `","hook_event_name":"PostToolUse","tool_name":"Edit",` +
				`"tool_input":{"file_path":"` + ws + `/02-projects/` + fixture.ProjectID(1) + `/03-working/notes.md","old_string":"a","new_string":"b"},"tool_response":{"success":true}}`,
			target: 5 * time.Millisecond,
		},
		journalCase("system record-action (Edit, journal open: 1 line)", ws, journalSmall),
		journalCase("system record-action (Edit, journal open: 50 MB)", ws, journalLarge),
		{
			name: "system block-dangerous-commands", args: []string{"system", "block-dangerous-commands"},
			env: wsEnv,
			stdin: `{"session_id":"bench-1","cwd":"` + ws + `","hook_event_name":"PreToolUse","tool_name":"Bash",` +
				`"tool_input":{"command":"cd 02-projects && grep -rn TODO . | sort | head -20 && bash -c 'rm -rf ./build'"}}`,
			target: 5 * time.Millisecond,
		},
		{
			name: "save -p 1 (5,000-task steps)", args: []string{"save", "-p", "1", "--summary", "bench", "--decision", "measured"},
			env: wsEnv, target: 15 * time.Millisecond,
		},
	}
}

// scaleCases list the projects at other sizes, each in a workspace of its own, to show
// the listing grows linearly.
func scaleCases(wss map[int]string) []benchCase {
	var out []benchCase
	for _, n := range scales {
		ws := wss[n]
		env := []string{"CTX_WORKSPACE=" + ws}
		out = append(out,
			benchCase{name: fmt.Sprintf("projects --json, %d projects", n), args: []string{"projects", "--json"}, env: env, ws: ws,
				target: time.Duration(n) * 30 * time.Microsecond, maxRSS: int64(n)*15<<10 + 20<<20},
			benchCase{name: fmt.Sprintf("projects --json, %d projects (cold)", n), args: []string{"projects", "--json"}, env: env, ws: ws, cold: true,
				target: time.Duration(n) * 75 * time.Microsecond},
			benchCase{name: fmt.Sprintf("projects --json, %d projects, no .ctx", n), args: []string{"projects", "--json"}, env: env, ws: ws, noCtx: true,
				target: time.Duration(n) * 30 * time.Microsecond},
			benchCase{name: fmt.Sprintf("projects --json, %d projects, no .ctx (cold)", n), args: []string{"projects", "--json"}, env: env, ws: ws, noCtx: true, cold: true,
				target: time.Duration(n) * 75 * time.Microsecond},
		)
	}
	return out
}

// scales are the workspace sizes of the listing's linearity cases (-scale).
var scales = []int{200, 20000}

// Transcripts for the hook cases, written into the workspace by the generator.
const (
	transcriptSmall = "transcript-0.2mb.jsonl"
	transcript8MB   = "transcript-8mb.jsonl"
	transcript200MB = "transcript-200mb.jsonl"
)

// promptSession is the session of the prompt cases, bound to project 1 as a session
// that loaded it is: the hook does all of its work (the cycle, the boundaries).
const promptSession = "bench-1"

// Sessions whose wind-down journal is open in the generated workspace: one with a
// journal of one line, one with a journal of 50 MB. A hook appends to it; its cost
// must not grow with the journal.
const (
	journalSmall = "bench-journal-small"
	journalLarge = "bench-journal-large"
)

// journalCase is the PostToolUse hook of a session whose wind-down journal is open.
func journalCase(name, ws, session string) benchCase {
	return benchCase{
		name: name, args: []string{"system", "record-action"},
		env: []string{"CTX_WORKSPACE=" + ws, "XDG_RUNTIME_DIR=" + ws},
		stdin: `{"session_id":"` + session + `","cwd":"` + ws + `","hook_event_name":"PostToolUse","tool_name":"Edit",` +
			`"tool_input":{"file_path":"` + ws + `/02-projects/` + fixture.ProjectID(1) + `/03-working/notes.md","old_string":"a","new_string":"b"},"tool_response":{"success":true}}`,
		target: 5 * time.Millisecond,
	}
}

// writeJournal writes the open wind-down journal of session, of about size bytes, as
// the hooks write one: a pause_started line, then tool_call lines.
func writeJournal(ws, session string, size int) error {
	dir := filepath.Join(ws, ".ctx", "sessions")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, `{"type":"pause_started","timestamp":"2026-11-20T09:00:00Z","session_id":%q,"data":{},"context_percentage":90}`+"\n", session)
	line := fmt.Sprintf(`{"type":"tool_call","timestamp":"2026-11-20T09:00:01Z","session_id":%q,"data":{"summary":"02-projects/01/03-working/notes.md","tool":"Edit"},"context_percentage":null}`+"\n", session)
	for b.Len() < size {
		b.WriteString(line)
	}
	return os.WriteFile(filepath.Join(dir, "ACTIVE-PAUSE-"+session+".jsonl"), b.Bytes(), 0o644)
}

// promptCase is the UserPromptSubmit hook reading usage from a transcript, as Claude
// Code runs it on every prompt; usage sits below the thresholds, so it measures the
// read, not a save.
func promptCase(name, ws, transcript string) benchCase {
	return benchCase{
		name: name, args: []string{"system", "check-context-size"},
		env:    []string{"CTX_WORKSPACE=" + ws, "XDG_RUNTIME_DIR=" + ws},
		stdin:  `{"session_id":"` + promptSession + `","transcript_path":"` + transcript + `","cwd":"` + ws + `","hook_event_name":"UserPromptSubmit","prompt":"go on"}`,
		target: 5 * time.Millisecond,
	}
}

// result is what one case measured over its timed runs.
type result struct {
	median, p90, min time.Duration
	maxRSS           int64 // bytes
	// hello is the median of a Go hello-world run between every two runs of the case.
	hello time.Duration
	// faults and helloFaults are the median minor page faults of a run of the case and
	// of the hello-world (getrusage's ru_minflt).
	faults, helloFaults int64
}

func main() {
	os.Exit(run())
}

// config holds the flags.
type config struct {
	projects, runs, warmup int
	only, bin, generate    string
	keep, scale, serve     bool
	faultProbe             bool
}

func run() int {
	var cfg config
	flag.IntVar(&cfg.projects, "projects", 2000, "number of projects in the generated workspace")
	flag.IntVar(&cfg.runs, "runs", 30, "timed runs per case")
	flag.IntVar(&cfg.warmup, "warmup", 3, "untimed runs per case before the timed ones")
	flag.StringVar(&cfg.only, "only", "", "run only the cases whose name contains `SUBSTR`")
	flag.BoolVar(&cfg.keep, "keep", false, "keep the generated workspace and print its path")
	flag.BoolVar(&cfg.scale, "scale", true, "also list 200 and 20,000 projects, each in a workspace of its own")
	flag.BoolVar(&cfg.serve, "serve", true, "also measure ctx serve: hook → event latency, memory and idle CPU with 50 agents")
	flag.StringVar(&cfg.bin, "bin", "", "measure the ctx binary at `PATH` instead of building one")
	flag.StringVar(&cfg.generate, "generate", "", "write only the workspace, into `DIR` (the bench runs itself so)")
	flag.BoolVar(&cfg.faultProbe, "fault-probe", false, "print what one minor page fault costs, in ns (the bench runs itself so)")
	flag.Parse()
	var err error
	switch {
	case cfg.faultProbe:
		err = probeFaults()
	case cfg.generate != "":
		err = generateWorkspace(cfg.generate, cfg.projects)
	case cfg.runs < 1 || cfg.warmup < 0 || cfg.projects < 1 || flag.NArg() > 0:
		fmt.Fprintln(os.Stderr, "bench: -runs and -projects must be at least 1, -warmup at least 0, and no arguments")
		return 2
	default:
		err = benchmark(cfg)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "bench: %v\n", err)
		return 1
	}
	return 0
}

// benchmark builds or finds the binary, writes the workspace, and prints one row per case
// as it ends.
func benchmark(cfg config) error {
	ws, err := os.MkdirTemp("", "ctx-bench-ws-")
	if err != nil {
		return err
	}
	if cfg.keep {
		defer fmt.Printf("workspace kept at %s\n", ws)
	} else {
		defer remove(ws)
	}
	all := cases(ws, cfg.projects)
	wss := map[int]string{}
	if cfg.scale {
		for _, n := range scales {
			dir, err := os.MkdirTemp("", "ctx-bench-ws-")
			if err != nil {
				return err
			}
			defer remove(dir)
			wss[n] = dir
		}
		all = append(all, scaleCases(wss)...)
	}
	var selected []benchCase
	for _, c := range all {
		if strings.Contains(c.name, cfg.only) {
			selected = append(selected, c)
		}
	}
	serve := cfg.serve && (cfg.only == "" || cfg.only == "serve")
	if len(selected) == 0 && !serve && cfg.only != "floor" {
		return fmt.Errorf("-only %q: no case name contains it", cfg.only)
	}

	dir, err := os.MkdirTemp("", "ctx-bench-bin-")
	if err != nil {
		return err
	}
	defer remove(dir)
	bin := cfg.bin
	if bin != "" {
		// Absolute, because a relative path would be taken from the workspace the cases run in.
		path, err := exec.LookPath(bin)
		if err == nil {
			bin, err = filepath.Abs(path)
		}
		if err != nil {
			return fmt.Errorf("-bin: %w", err)
		}
	} else if bin, err = build(dir, "ctx", "./cmd/ctx"); err != nil {
		return err
	}
	hello, err := build(dir, "hello", "./bench/hello")
	if err != nil {
		return err
	}
	if cfg.only == "" || cfg.only == "floor" || cfg.only == "system" {
		floor, err := build(dir, "floor", "./bench/floor")
		if err != nil {
			return err
		}
		selected = append([]benchCase{{name: "floor: ctx's libraries, no code", program: floor, target: 5 * time.Millisecond}}, selected...)
	}

	start := time.Now()
	if err := generate(ws, cfg.projects); err != nil {
		return err
	}
	for n, dir := range wss {
		if err := generate(dir, n); err != nil {
			return err
		}
	}
	fmt.Printf("%d CPUs %s/%s, %s, %s\n", runtime.NumCPU(), runtime.GOOS, runtime.GOARCH, cpuModel(), goVersion(bin))
	if fault, err := faultCost(); err == nil {
		// Every process start pays its page faults: where one costs tens of
		// microseconds (a VM whose host is short of memory), a larger process's
		// ratio to the hello-world grows with its fault count (the faults column).
		fmt.Printf("a minor page fault costs %.1f µs here (on bare metal, typically well under 1 µs)\n", float64(fault.Nanoseconds())/1000)
	}
	fmt.Printf("%d projects generated in %.2f s; %d timed runs per case after %d warm-up, each followed by a Go hello-world\n\n",
		cfg.projects, time.Since(start).Seconds(), cfg.runs, cfg.warmup)

	width := len("case")
	for _, c := range selected {
		width = max(width, len(c.name))
	}
	if len(selected) > 0 {
		fmt.Printf("%-*s  %9s  %9s  %9s  %8s  %8s  %6s  %11s  %9s\n", width, "case", "median ms", "p90 ms", "min ms", "max RSS", "hello ms", "ratio", "faults/hello", "target ms")
	}
	for _, c := range selected {
		r, err := measure(bin, hello, ws, c, cfg.warmup, cfg.runs)
		if err != nil {
			return err
		}
		verdict := "PASS"
		if r.median > c.target || (c.maxRSS > 0 && r.maxRSS > c.maxRSS) {
			verdict = "OVER"
		}
		fmt.Printf("%-*s  %9.2f  %9.2f  %9.2f  %5.1f MB  %8.2f  %5.2fx  %11s  %9.1f  %s\n", width, c.name,
			ms(r.median), ms(r.p90), ms(r.min), float64(r.maxRSS)/(1<<20), ms(r.hello),
			float64(r.median)/float64(r.hello), fmt.Sprintf("%d/%d", r.faults, r.helloFaults), ms(c.target), verdict)
	}
	if serve {
		return benchServe(bin)
	}
	return nil
}

// generate writes the workspace from a child process. Go starts children with vfork, and
// Linux then reports a child's peak RSS as at least its parent's peak at exec, so the
// harness must stay small (about 3 MB) for the memory column to be ctx's own.
func generate(ws string, projects int) error {
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("generate workspace: %w", err)
	}
	cmd := exec.Command(self, "-projects", fmt.Sprint(projects), "-generate", ws)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("generate workspace: %w", err)
	}
	return nil
}

// bigSteps is the task count of project 1's steps file, for the save case.
const bigSteps = 5000

// generateWorkspace writes the fixture workspace and gives project 1 a large steps file.
func generateWorkspace(dir string, projects int) error {
	if err := fixture.Workspace(dir, projects); err != nil {
		return err
	}
	steps := filepath.Join(dir, "02-projects", fixture.ProjectID(1), "01-planning", "steps.md")
	if err := os.WriteFile(steps, fixture.StepsFile(bigSteps), 0o644); err != nil {
		return err
	}
	for session, size := range map[string]int{journalSmall: 1, journalLarge: 50 << 20} {
		if err := writeJournal(dir, session, size); err != nil {
			return err
		}
	}
	for name, size := range map[string]int{transcriptSmall: 200 << 10, transcript8MB: 8 << 20, transcript200MB: 200 << 20} {
		o := fixture.TranscriptOptions{Bytes: size, FinalTokens: 60_000}
		if err := fixture.WriteTranscript(filepath.Join(dir, name), o); err != nil {
			return err
		}
	}
	if err := bindPromptSession(dir); err != nil {
		return err
	}
	return age(filepath.Join(dir, "02-projects"))
}

// age dates every file and folder below dir an hour back, as the files of a workspace
// in use are: the project index does not vouch for files changed in the last seconds.
func age(dir string) error {
	old := time.Now().Add(-time.Hour)
	return filepath.WalkDir(dir, func(path string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Chtimes(path, old, old)
	})
}

// build compiles the package pkg of this module (./cmd/ctx, ./bench/hello,
// ./bench/floor) into dir/name, from the module root, so the bench works from any folder
// in it: as make build builds the shipped binary (static, no cgo, stripped), and the
// hello-world and the floor the same way, so the ratios compare like with like.
func build(dir, name, pkg string) (string, error) {
	root, err := moduleRoot()
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, name)
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w", "-o", bin, pkg)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("build %s: %w", pkg, err)
	}
	return bin, nil
}

func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("find go.mod: %w", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("find go.mod: not inside the ctx module")
		}
		dir = parent
	}
}

// measure runs c warmup times untimed, then runs times timed, and fails on the first run
// that exits non-zero: a benchmark of an error path would measure the wrong thing.
func measure(bin, hello, ws string, c benchCase, warmup, runs int) (result, error) {
	if c.ws != "" {
		ws = c.ws
	}
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool {
		return strings.HasPrefix(kv, "CLAUDE_CODE_SESSION_ID=")
	})
	// exec uses the last value of a duplicated key, so the case's env wins.
	env = append(append(env, "NO_COLOR=1"), c.env...)

	index := filepath.Join(ws, ".ctx", "state", loader.IndexFile)
	if c.noCtx {
		aside, cache := filepath.Join(ws, ".ctx-aside"), filepath.Join(ws, ".bench-user-cache")
		if err := os.Rename(filepath.Join(ws, ".ctx"), aside); err != nil {
			return result{}, err
		}
		defer func() {
			_ = os.RemoveAll(cache)
			_ = os.Rename(aside, filepath.Join(ws, ".ctx"))
		}()
		env = append(env, "XDG_CACHE_HOME="+cache)
		w, err := loader.Open(ws)
		if err != nil {
			return result{}, err
		}
		t := os.Getenv("XDG_CACHE_HOME")
		_ = os.Setenv("XDG_CACHE_HOME", cache)
		index = filepath.Join(w.CacheDir(), loader.IndexFile)
		_ = os.Setenv("XDG_CACHE_HOME", t)
	}

	walls := make([]time.Duration, 0, runs)
	hellos := make([]time.Duration, 0, runs)
	var maxRSS int64
	var faults, helloFaults []int64
	for i := range warmup + runs {
		if c.cold {
			if err := os.Remove(index); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return result{}, err
			}
		}
		prog := bin
		if c.program != "" {
			prog = c.program
		}
		cmd := exec.Command(prog, c.args...)
		cmd.Dir, cmd.Env = ws, env
		// A pipe, as an agent reading the output would give it, not /dev/null.
		cmd.Stdout = io.Discard
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if c.stdin != "" {
			cmd.Stdin = strings.NewReader(c.stdin)
		}
		start := time.Now()
		err := cmd.Run()
		wall := time.Since(start)
		if err != nil {
			return result{}, fmt.Errorf("ctx %s: %w\n%s", strings.Join(c.args, " "), err, bytes.TrimSpace(stderr.Bytes()))
		}
		h := exec.Command(hello)
		h.Dir, h.Env, h.Stdout = ws, env, io.Discard
		if c.stdin != "" {
			h.Stdin = strings.NewReader(c.stdin)
		}
		hStart := time.Now()
		if err := h.Run(); err != nil {
			return result{}, fmt.Errorf("hello-world: %w", err)
		}
		hWall := time.Since(hStart)
		if i < warmup {
			continue
		}
		walls = append(walls, wall)
		hellos = append(hellos, hWall)
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			maxRSS = max(maxRSS, rssBytes(ru))
			faults = append(faults, int64(ru.Minflt)) //nolint:unconvert // int32 on linux/386
		}
		if ru, ok := h.ProcessState.SysUsage().(*syscall.Rusage); ok {
			helloFaults = append(helloFaults, int64(ru.Minflt)) //nolint:unconvert // int32 on linux/386
		}
	}
	r := result{maxRSS: maxRSS, hello: medianOf(hellos), faults: medianInt(faults), helloFaults: medianInt(helloFaults)}
	slices.Sort(walls)
	r.median, r.min = medianOf(walls), walls[0]
	// Nearest rank: the smallest time that at least 90% of the runs did not exceed.
	r.p90 = walls[(len(walls)*9+9)/10-1]
	return r, nil
}

// medianInt sorts n and returns its median (0 for none).
func medianInt(n []int64) int64 {
	if len(n) == 0 {
		return 0
	}
	slices.Sort(n)
	return n[len(n)/2]
}

// medianOf sorts d and returns its median.
func medianOf(d []time.Duration) time.Duration {
	slices.Sort(d)
	n := len(d)
	if n%2 == 0 {
		return (d[n/2-1] + d[n/2]) / 2
	}
	return d[n/2]
}

func rssBytes(ru *syscall.Rusage) int64 {
	maxrss := int64(ru.Maxrss) //nolint:unconvert // int32 on 32-bit Linux
	if runtime.GOOS == "darwin" {
		return maxrss // bytes on macOS
	}
	return maxrss * 1024 // KB on Linux
}

// remove deletes a temporary folder, and says so when it cannot: a kept workspace is 70 MB.
func remove(dir string) {
	if err := os.RemoveAll(dir); err != nil {
		fmt.Fprintf(os.Stderr, "bench: %v\n", err)
	}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "unknown CPU"
	}
	for line := range strings.Lines(string(b)) {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown CPU"
}

// goVersion names the toolchain that built the measured binary, which with -bin need not
// be the one running the bench.
func goVersion(bin string) string {
	if info, err := buildinfo.ReadFile(bin); err == nil {
		return info.GoVersion
	}
	return runtime.Version() + " (bench; the binary has no Go build info)"
}

// bindPromptSession binds the prompt cases' session to project 1.
func bindPromptSession(dir string) error {
	ws, err := loader.Open(dir)
	if err != nil {
		return err
	}
	p, err := ws.Resolve("1")
	if err != nil {
		return err
	}
	return state.Open(ws, nil).Session(promptSession).Bind(state.Binding{ProjectID: p.ID, Path: p.Path, BoundAt: time.Now().UTC()})
}
