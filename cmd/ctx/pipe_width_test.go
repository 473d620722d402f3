package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"golang.org/x/text/width"
	"mvdan.cc/sh/v3/shell"

	"github.com/ctxtools/ctx/demo"
)

// pipeLimit is the widest line ctx may print into a pipe. Text is fitted to 80
// columns there; the margin is for a word that may not be broken (a path, a URL).
const pipeLimit = 100

// TestHelpFitsAPipe runs every command's --help, hidden ones too, as through a pipe:
// no line is wider than pipeLimit.
func TestHelpFitsAPipe(t *testing.T) {
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		args := strings.Fields(c.CommandPath())[1:]
		args = append(args, "--help")
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			out, errOut, code := runPiped(t, map[string]string{}, args...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			checkPipeWidth(t, "ctx "+strings.Join(args, " "), out, errOut)
		})
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(newRootCmd(&App{Getenv: func(string) string { return "" }}))
}

// TestTourFitsAPipe runs the tour, then the commands a new user tries first, on the
// example workspace as through a pipe: no line is wider than pipeLimit, and JSON
// stays whole.
func TestTourFitsAPipe(t *testing.T) {
	// The tour's /tmp/ is a folder of the test's own. Its path, as long as this
	// machine makes it, is measured as the tour's "/tmp" (see runTourStep).
	tmp := t.TempDir()
	env := map[string]string{"HOME": filepath.Join(tmp, "home"), "XDG_RUNTIME_DIR": filepath.Join(tmp, "run")}
	for _, line := range tour(t) {
		for _, part := range strings.Split(line, " && ") {
			part = strings.ReplaceAll(strings.TrimSpace(part), "/tmp/", tmp+"/")
			if dir, ok := strings.CutPrefix(part, "cd "); ok {
				t.Chdir(dir)
				continue
			}
			words, err := shell.Fields(part, func(string) string { return "" })
			if err != nil || len(words) == 0 || words[0] != "ctx" {
				t.Fatalf("tour line %q: not a ctx command (%v)", part, err)
			}
			runTourStep(t, tmp, env, words[1:])
		}
	}
	for _, args := range [][]string{
		{"projects"}, {"load", "1"}, {"show", "1"}, {"doctor"}, {"init", "--dry-run"}, {"guard", "rules"},
		{"agents", "--help"}, {"load", "99"},
	} {
		runTourStep(t, tmp, env, args)
	}

	// Outside a workspace (in /tmp), the one line that says how to get one fits.
	t.Chdir(tmp)
	_, errOut, code := runPiped(t, env, "load", "1")
	if code != exitInput || !strings.Contains(errOut, "no workspace") {
		t.Fatalf("ctx load 1 outside a workspace: exit %d, want %d: %s", code, exitInput, errOut)
	}
	if errOut = strings.TrimSpace(strings.ReplaceAll(errOut, tmp, "/tmp")); columns(errOut) > pipeLimit {
		t.Errorf("outside a workspace, ctx load 1 says in %d columns: %s", columns(errOut), errOut)
	}
}

// runTourStep runs ctx with args through a pipe and checks the width of what it
// printed, with the folder tmp measured as "/tmp" (the tour's own paths); a --json
// command must print JSON, whole.
func runTourStep(t *testing.T, tmp string, env map[string]string, args []string) {
	t.Helper()
	cmdLine := strings.ReplaceAll("ctx "+strings.Join(args, " "), tmp, "/tmp")
	t.Run(cmdLine, func(t *testing.T) {
		out, errOut, code := runPiped(t, env, args...)
		out, errOut = strings.ReplaceAll(out, tmp, "/tmp"), strings.ReplaceAll(errOut, tmp, "/tmp")
		if slices.Contains(args, "--json") {
			if !json.Valid([]byte(out)) {
				t.Errorf("stdout is not JSON:\n%s", out)
			}
			out = ""
		}
		checkPipeWidth(t, cmdLine, out, errOut)
		if t.Failed() {
			t.Logf("exit %d, stdout:\n%s\nstderr:\n%s", code, out, errOut)
		}
	})
}

// TestProjectsColumns lists projects from three folders (02-projects, its
// 00-onboarding, 02-builds/active) at 80 columns, on a terminal and through a pipe:
// the first column names every project the same way, by its folder's id, and no
// name is cut.
func TestProjectsColumns(t *testing.T) {
	ws := filepath.Join(t.TempDir(), "shop")
	if err := demo.Write(ws); err != nil {
		t.Fatal(err)
	}
	planning := filepath.Join(ws, "02-builds", "active", "04-payments", "01-planning")
	if err := os.MkdirAll(planning, 0o755); err != nil {
		t.Fatal(err)
	}
	overview := "---\nname: Payment provider switch\nstatus: PLANNING\n---\n# Payment provider switch\n"
	if err := os.WriteFile(filepath.Join(planning, "overview.md"), []byte(overview), 0o644); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"CTX_WORKSPACE": ws, "NO_COLOR": "1"}
	listed, _, code := runInMemoryWidth(t, false, 0, env, "projects", "--json")
	var all projectsOutput
	if err := json.Unmarshal([]byte(listed), &all); code != 0 || err != nil || len(all.Projects) != 5 {
		t.Fatalf("ctx projects --json: exit %d, %v, %d projects:\n%s", code, err, len(all.Projects), listed)
	}
	id := regexp.MustCompile(`^[0-9]+-[^/ ]+$`)
	check := func(t *testing.T, out string) {
		rows := 0
		for _, l := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
			first, _, _ := strings.Cut(strings.TrimSpace(l), " ")
			if l == "" || strings.HasPrefix(l, "ID ") || strings.HasSuffix(l, "/") {
				continue // a blank line, the header, a folder's heading
			}
			rows++
			if !id.MatchString(first) {
				t.Errorf("first column %q is not a project's id: %q", first, l)
			}
			if columns(l) > 80 {
				t.Errorf("row of %d columns: %q", columns(l), l)
			}
		}
		if rows != len(all.Projects) {
			t.Errorf("%d rows, want %d:\n%s", rows, len(all.Projects), out)
		}
		for _, p := range all.Projects {
			if !strings.Contains(out, "  "+p.Name) {
				t.Errorf("the name %q is cut or missing:\n%s", p.Name, out)
			}
			if !strings.Contains(out, strings.TrimSuffix(p.Path, p.ID)) {
				t.Errorf("the folder of %s is not shown:\n%s", p.Path, out)
			}
		}
	}
	t.Run("terminal", func(t *testing.T) {
		out, errOut, code := runInMemoryWidth(t, true, 80, env, "projects")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		check(t, out)
	})
	t.Run("pipe", func(t *testing.T) {
		out, errOut, code := runPiped(t, env, "projects")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		check(t, out)
	})
}

// TestTableCutsRatherThanWraps lays out rows of ctx agents list at 80 columns: each
// row stays one line, its project, state or name cut; host and id stay whole.
func TestTableCutsRatherThanWraps(t *testing.T) {
	rows := [][]string{
		{"HOST", "ID", "NAME", "PROJECT", "STATE", "SINCE", "MEMORY"},
		{"local", "a-x7k2mq", "01-checkout-redesign-x7k2mq", "01-checkout-redesign", "active (needs input), attention", "3m", "512 MB"},
		{"build-box", "a-p3n8rt", "search", "02-search-relevance", "paused", "2h", "freed 1024 MB"},
	}
	for _, width := range []int{0, 80, 60} {
		tw := &table{cuts: agentsListCuts}
		for _, r := range rows {
			tw.add(r...)
		}
		var b bytes.Buffer
		if err := tw.write(&b, width); err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
		if len(lines) != len(rows) {
			t.Fatalf("width %d: %d lines for %d rows:\n%s", width, len(lines), len(rows), b.String())
		}
		for i, l := range lines {
			if width == 80 && columns(l) > width {
				t.Errorf("width %d: a row of %d columns: %q", width, columns(l), l)
			}
			for _, cell := range []string{rows[i][0], rows[i][1], rows[i][3][:3]} {
				if !strings.Contains(l, cell) {
					t.Errorf("width %d: %q lost %q, which is never cut", width, l, cell)
				}
			}
			if got := strings.Contains(l, "…"); got != (width > 0 && i > 0) {
				t.Errorf("width %d: cut = %v in %q", width, got, l)
			}
		}
	}
}

// TestPipeWidth: text in a pipe is fitted to 80 columns, or to $COLUMNS (0: not at all).
func TestPipeWidth(t *testing.T) {
	for columns, want := range map[string]int{"": 80, "120": 120, "abc": 80, "0": 0, "-3": 80} {
		if got := pipeWidth(columns); got != want {
			t.Errorf("pipeWidth(%q) = %d, want %d", columns, got, want)
		}
	}
}

// checkPipeWidth fails for every line of out and errOut wider than pipeLimit.
func checkPipeWidth(t *testing.T, cmdLine, out, errOut string) {
	t.Helper()
	for stream, text := range map[string]string{"stdout": out, "stderr": errOut} {
		for _, l := range strings.Split(text, "\n") {
			if n := columns(l); n > pipeLimit {
				t.Errorf("%s: %s: line of %d columns: %s", cmdLine, stream, n, l)
			}
		}
	}
}

// runPiped runs ctx in memory with the streams SystemStreams makes when stdout is a
// pipe and $COLUMNS is not set.
func runPiped(t *testing.T, env map[string]string, args ...string) (string, string, int) {
	t.Helper()
	var out, errOut bytes.Buffer
	s := pipeStreams(t)
	s.In, s.Out, s.Err, s.InIsTTY = strings.NewReader(""), &out, &errOut, false
	code := Main(args, s, func(k string) string { return env[k] })
	return out.String(), errOut.String(), code
}

// pipeStreams are the streams SystemStreams makes when stdout is a pipe.
func pipeStreams(t *testing.T) Streams {
	t.Helper()
	t.Setenv("COLUMNS", "")
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	stdout := os.Stdout
	os.Stdout = w
	defer func() { os.Stdout = stdout }()
	s := SystemStreams()
	if s.OutIsTTY {
		t.Fatal("SystemStreams: a pipe is a terminal")
	}
	return s
}

// tour is the tour's command lines, as TestReadmeTour runs them.
func tour(t *testing.T) []string {
	t.Helper()
	page, err := os.ReadFile(tourDoc)
	if err != nil {
		t.Fatal(err)
	}
	lines, err := tourCommands(string(page))
	if err != nil || len(lines) < 8 {
		t.Fatalf("the tour: %d commands, %v", len(lines), err)
	}
	return lines
}

// columns is the number of terminal columns l takes, counted apart from the code
// that fits text: East Asian wide and fullwidth runes take two, a tab goes on to
// the next multiple of 8, every other rune takes one. ANSI colours are not counted:
// output through a pipe has none.
func columns(l string) int {
	n := 0
	for _, r := range l {
		switch {
		case r == '\t':
			n = (n/8 + 1) * 8
		case width.LookupRune(r).Kind() == width.EastAsianWide, width.LookupRune(r).Kind() == width.EastAsianFullwidth:
			n += 2
		default:
			n++
		}
	}
	return n
}
