package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// tourDoc is the page whose "A short tour" TestReadmeTour runs.
var tourDoc = filepath.Join("..", "..", "docs", "tour.md")

// TestReadmeTour runs the tour the README points to (docs/tour.md, "A short tour"),
// every command in order, against the real binary in an empty folder, as a new user
// on a fresh machine would: the script is made from the page itself, so the page and
// the test cannot drift apart.
func TestReadmeTour(t *testing.T) {
	readme, err := os.ReadFile(tourDoc)
	if err != nil {
		t.Fatal(err)
	}
	lines, err := tourCommands(string(readme))
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) < 8 {
		t.Fatalf("the tour: %d commands found, want the whole tour", len(lines))
	}
	script := tourScript(lines)
	path := filepath.Join(t.TempDir(), "readme_tour.txtar")
	if err := os.WriteFile(path, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("script:\n%s", script)
	testscript.Run(t, testscript.Params{
		Files:               []string{path},
		RequireExplicitExec: true,
		Setup: func(env *testscript.Env) error {
			env.Setenv("GORACE", "atexit_sleep_ms=0")
			return nil
		},
	})
}

// tourComment is a command's trailing comment in the tour: two spaces or more, "#".
var tourComment = regexp.MustCompile(`\s{2,}#.*$`)

// tourCommands returns the command lines of the first ```sh block under the
// "## A short tour" heading, without their comments.
func tourCommands(readme string) ([]string, error) {
	_, after, ok := strings.Cut(readme, "\n## A short tour\n")
	if !ok {
		return nil, errMissing("the \"## A short tour\" heading")
	}
	_, block, ok := strings.Cut(after, "```sh\n")
	if !ok {
		return nil, errMissing("a ```sh block under the tour heading")
	}
	block, _, ok = strings.Cut(block, "```")
	if !ok {
		return nil, errMissing("the end of the tour's ```sh block")
	}
	var lines []string
	for _, l := range strings.Split(block, "\n") {
		l = strings.TrimSpace(tourComment.ReplaceAllString(l, ""))
		if l != "" && !strings.HasPrefix(l, "#") {
			lines = append(lines, l)
		}
	}
	return lines, nil
}

// tourScript turns the tour's shell lines into a testscript: "cd DIR" moves the
// script, every other command runs under sh (the page's quoting is a shell's), and
// /tmp/shop becomes a folder of the test's own.
func tourScript(lines []string) string {
	var b strings.Builder
	b.WriteString("# The tour, made from docs/tour.md by TestReadmeTour.\n\n")
	for _, line := range lines {
		for _, part := range strings.Split(line, " && ") {
			part = strings.TrimSpace(part)
			if dir, ok := strings.CutPrefix(part, "cd "); ok {
				b.WriteString("cd " + strings.ReplaceAll(dir, "/tmp/", "$WORK/") + "\n")
				continue
			}
			part = strings.ReplaceAll(part, "/tmp/", `"$WORK"/`)
			b.WriteString("exec sh -c '" + strings.ReplaceAll(part, "'", "''") + "'\n")
		}
	}
	return b.String()
}

type errMissing string

func (e errMissing) Error() string { return "docs/tour.md: no " + string(e) }
