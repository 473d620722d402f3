package main

import (
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// Start-up budget of each of ctx's own packages: what its package initialisation may
// allocate. Every hook is a fresh process, so work done in a package-level var or an
// init function is paid at every prompt and tool call; regular expressions, parsers
// and tables are built at first use instead (docs/architecture.md, "Start-up cost").
// Before that rule, the web package alone allocated 84 KB in 1,074 allocations at start.
const (
	initBudgetBytes  = 8 << 10
	initBudgetAllocs = 64
)

var initLine = regexp.MustCompile(`^init (\S+) @\S+ ms, \S+ ms clock, (\d+) bytes, (\d+) allocs$`)

func TestPackagesDoNoWorkAtStart(t *testing.T) {
	bin := ctxBinary(t)
	cmd := exec.Command(bin, "--version")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("ctx --version: %v\n%s", err, out)
	}
	traced := 0
	for _, line := range strings.Split(string(out), "\n") {
		m := initLine.FindStringSubmatch(strings.TrimSpace(line))
		if m == nil {
			continue
		}
		traced++
		// The command's own package is traced as "main".
		if m[1] != "main" && !strings.HasPrefix(m[1], "github.com/ctxtools/ctx") {
			continue
		}
		bytes, _ := strconv.Atoi(m[2])
		allocs, _ := strconv.Atoi(m[3])
		if bytes > initBudgetBytes || allocs > initBudgetAllocs {
			t.Errorf("%s allocates %d bytes in %d allocations at start (budget %d bytes, %d allocations): build it at first use",
				m[1], bytes, allocs, initBudgetBytes, initBudgetAllocs)
		}
	}
	// A package with nothing left to initialise is not traced at all; the standard
	// library always is, so no line at all means the trace did not work.
	if traced == 0 {
		t.Fatalf("no init lines in GODEBUG=inittrace=1 output:\n%s", out)
	}
}
