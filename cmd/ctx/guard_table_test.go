package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// guardCase is one line of guard/testdata/commands.txt, whose header describes the
// format; the guard package's own TestCommandTable reads the same file.
type guardCase struct {
	line    int
	deny    bool
	rule    string
	clean   bool
	cwd     string
	command string
}

func readGuardTable(t *testing.T) []guardCase {
	t.Helper()
	f, err := os.Open("../../guard/testdata/commands.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var cases []guardCase
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		text := sc.Text()
		if rest, ok := strings.CutPrefix(text, "    "); ok && len(cases) > 0 {
			cases[len(cases)-1].command += "\n" + rest
			continue
		}
		if strings.TrimSpace(text) == "" || strings.HasPrefix(text, "#") {
			continue
		}
		head, command, ok := strings.Cut(text, "|")
		fields := strings.Fields(head)
		if !ok || len(fields) == 0 {
			t.Fatalf("commands.txt:%d: not VERDICT [RULE] [OPTION...] | COMMAND", n)
		}
		c := guardCase{line: n, command: strings.TrimPrefix(command, " "), deny: fields[0] == "deny"}
		fields = fields[1:]
		if c.deny {
			c.rule, fields = fields[0], fields[1:]
		}
		for _, opt := range fields {
			switch {
			case opt == "clean":
				c.clean = true
			case strings.HasPrefix(opt, "cwd="):
				c.cwd = strings.TrimPrefix(opt, "cwd=")
			default:
				t.Fatalf("commands.txt:%d: unknown option %q", n, opt)
			}
		}
		cases = append(cases, c)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return cases
}

// TestGuardTableThroughTheBinary runs every command of the guard's table through the
// real binary, as a person testing a rule would, `ctx guard check --json`, on the
// table's machine (workspace /ws, home /home/u, repositories dirty unless the line
// says clean), and requires every verdict and rule to match: the exit status too.
func TestGuardTableThroughTheBinary(t *testing.T) {
	bin := ctxBinary(t)
	cases := readGuardTable(t)
	type failure struct {
		c   guardCase
		msg string
	}
	var (
		mu       sync.Mutex
		failures []failure
		wg       sync.WaitGroup
	)
	work := make(chan guardCase)
	for range 2 * runtime.NumCPU() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for c := range work {
				if msg := checkThroughBinary(bin, c); msg != "" {
					mu.Lock()
					failures = append(failures, failure{c, msg})
					mu.Unlock()
				}
			}
		}()
	}
	for _, c := range cases {
		work <- c
	}
	close(work)
	wg.Wait()
	for _, f := range failures {
		t.Errorf("commands.txt:%d: %q: %s", f.c.line, f.c.command, f.msg)
	}
	denied := 0
	for _, c := range cases {
		if c.deny {
			denied++
		}
	}
	t.Logf("%d commands through the binary: %d refused, %d allowed, %d wrong", len(cases), denied, len(cases)-denied, len(failures))
}

func checkThroughBinary(bin string, c guardCase) string {
	repo := "dirty"
	if c.clean {
		repo = "clean"
	}
	cwd := c.cwd
	if cwd == "" {
		cwd = "/ws"
	}
	cmd := exec.Command(bin, "guard", "check", "--json", "--as-workspace", "/ws", "--repo", repo, "--cwd", cwd, "--", c.command)
	cmd.Env = []string{"HOME=/home/u", "PATH=" + os.Getenv("PATH"), "XDG_RUNTIME_DIR=" + os.TempDir()}
	cmd.Dir = os.TempDir()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		return err.Error()
	}
	var res guardCheckResult
	if jerr := json.Unmarshal(out.Bytes(), &res); jerr != nil {
		return "output is not JSON: " + jerr.Error() + ": " + out.String() + errb.String()
	}
	switch {
	case c.deny && (res.Verdict != "deny" || res.Rule != c.rule):
		return "got " + res.Verdict + " " + res.Rule + ", want deny by " + c.rule + ": " + res.Reason
	case !c.deny && res.Verdict != "allow":
		return "got deny by " + res.Rule + ", want allowed: " + res.Reason
	case c.deny && code != exitRefused, !c.deny && code != 0:
		return "exit status " + strconv.Itoa(code) + " for " + res.Verdict
	case errb.Len() > 0:
		return "stderr: " + errb.String()
	}
	return ""
}
