// Package testkit holds what only tests use: ctxbin (the ctx binary for tests that run
// it), fixture (generated workspaces and transcripts) and guardtable (the guard's table
// of commands). This test keeps the test scaffolding out of the product.
package testkit

import (
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/ctxtools/ctx"

// TestProductImportsNoTesting fails when the ctx binary links package testing, or when
// a package of the module other than the test scaffolding (internal/testkit, the bench
// program, the e2e suite) imports it outside its tests.
func TestProductImportsNoTesting(t *testing.T) {
	for _, goos := range []string{"linux", "darwin", "windows"} {
		for _, p := range list(t, goos, "-deps", module+"/cmd/ctx") {
			if p.path == "testing" {
				t.Errorf("GOOS=%s: ctx links package testing", goos)
			}
			if slices.Contains(p.imports, "testing") {
				t.Errorf("GOOS=%s: %s, which ctx links, imports testing", goos, p.path)
			}
		}
		for _, p := range list(t, goos, module+"/...") {
			if scaffolding(p.path) {
				continue
			}
			if slices.Contains(p.imports, "testing") {
				t.Errorf("GOOS=%s: %s imports testing outside its tests: move what tests share to internal/testkit", goos, p.path)
			}
		}
	}
}

func scaffolding(path string) bool {
	for _, dir := range []string{"internal/testkit", "bench", "e2e"} {
		if path == module+"/"+dir || strings.HasPrefix(path, module+"/"+dir+"/") {
			return true
		}
	}
	return false
}

type pkg struct {
	path    string
	imports []string
}

// list is `go list` of the patterns for goos: each package with its imports (its
// non-test files only).
func list(t *testing.T, goos string, args ...string) []pkg {
	t.Helper()
	goTool := os.Getenv("GO")
	if goTool == "" {
		goTool = "go"
	}
	args = append([]string{"list", "-f", "{{.ImportPath}}{{range .Imports}} {{.}}{{end}}"}, args...)
	cmd := exec.Command(goTool, args...)
	cmd.Env = append(os.Environ(), "GOOS="+goos)
	cmd.Stderr = new(strings.Builder)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("GOOS=%s %s %s: %v\n%s", goos, goTool, strings.Join(args, " "), err, cmd.Stderr)
	}
	var pkgs []pkg
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		if len(f) > 0 {
			pkgs = append(pkgs, pkg{path: f[0], imports: f[1:]})
		}
	}
	if len(pkgs) == 0 {
		t.Fatalf("GOOS=%s %s %s listed no packages", goos, goTool, strings.Join(args, " "))
	}
	return pkgs
}
