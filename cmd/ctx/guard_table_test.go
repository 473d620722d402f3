package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"sync"
	"testing"

	"github.com/ctxtools/ctx/internal/testkit/guardtable"
)

// guardCase is one line of guard/testdata/commands.txt, whose header describes the
// format; the guard package's own TestCommandTable reads the same file.
type guardCase = guardtable.Case

func readGuardTable(t *testing.T) []guardCase {
	t.Helper()
	cases, err := guardtable.Read("../../guard/testdata/commands.txt")
	if err != nil {
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
		t.Errorf("commands.txt:%d: %q: %s", f.c.Line, f.c.Command, f.msg)
	}
	denied := 0
	for _, c := range cases {
		if c.Deny {
			denied++
		}
	}
	t.Logf("%d commands through the binary: %d refused, %d allowed, %d wrong", len(cases), denied, len(cases)-denied, len(failures))
}

func checkThroughBinary(bin string, c guardCase) string {
	repo := "dirty"
	if c.Clean {
		repo = "clean"
	}
	cwd := c.Cwd
	if cwd == "" {
		cwd = "/ws"
	}
	args := []string{"guard", "check", "--json", "--as-workspace", "/ws", "--repo", repo, "--cwd", cwd}
	for _, p := range c.Presets {
		args = append(args, "--preset", p)
	}
	cmd := exec.Command(bin, append(args, "--", c.Command)...)
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
	case c.Deny && (res.Verdict != "deny" || res.Rule != c.Rule):
		return "got " + res.Verdict + " " + res.Rule + ", want deny by " + c.Rule + ": " + res.Reason
	case !c.Deny && res.Verdict != "allow":
		return "got deny by " + res.Rule + ", want allowed: " + res.Reason
	case c.Deny && code != exitRefused, !c.Deny && code != 0:
		return "exit status " + strconv.Itoa(code) + " for " + res.Verdict
	case errb.Len() > 0:
		return "stderr: " + errb.String()
	}
	return ""
}
