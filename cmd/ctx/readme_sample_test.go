package main

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var updateSamples = flag.Bool("update", false, "rewrite the pages' samples from ctx's real output")

// sample is output of ctx shown on a page, between the markers
// "<!-- sample: NAME; go test ./cmd/ctx -run TestReadmeSample -update -->" and
// "<!-- end of sample -->".
type sample struct {
	page, name string
	// args run in the demo workspace (none: the demo itself, as the README's first
	// command runs it).
	args []string
	// keep is how many lines of the output the page shows; the rest is "  …".
	keep func(lines []string) int
}

var samples = []sample{
	{page: "README.md", name: "ctx demo", keep: func(lines []string) int {
		for n, l := range lines {
			if l == "Resume prompt" && n+2 < len(lines) {
				return n + 2 // the resume prompt's heading and first line
			}
		}
		return -1
	}},
	{page: "docs/tour.md", name: "ctx projects", args: []string{"projects"}},
}

const sampleEnd = "<!-- end of sample -->"

// TestReadmeSample runs ctx as the pages show it, through a pipe (80 columns), and
// compares its output with the pages' samples line for line, so the first page a
// newcomer reads cannot drift from what ctx prints. -update rewrites the samples.
func TestReadmeSample(t *testing.T) {
	for _, s := range samples {
		t.Run(s.name, func(t *testing.T) {
			path := filepath.Join("..", "..", filepath.FromSlash(s.page))
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			page := string(data)
			start := "<!-- sample: " + s.name + "; go test ./cmd/ctx -run TestReadmeSample -update -->"
			i := strings.Index(page, start)
			j := strings.Index(page[max(i, 0):], sampleEnd) + max(i, 0)
			if i < 0 || j < i {
				t.Fatalf("%s lacks the markers %q … %q", s.page, start, sampleEnd)
			}

			ws := filepath.Join(t.TempDir(), "shop")
			args := []string{"demo", "--dir", ws}
			var env map[string]string
			if s.args != nil {
				if code := Main(args, Streams{In: strings.NewReader(""), Out: &bytes.Buffer{}, Err: &bytes.Buffer{}}, func(string) string { return "" }); code != 0 {
					t.Fatalf("ctx demo: exit %d", code)
				}
				args, env = s.args, map[string]string{"CTX_WORKSPACE": ws}
			}
			var out, errOut bytes.Buffer
			code := Main(args, Streams{In: strings.NewReader(""), Out: &out, Err: &errOut, Width: pipeWidth("")}, func(k string) string { return env[k] })
			if code != 0 {
				t.Fatalf("ctx %s: exit %d: %s", strings.Join(args, " "), code, errOut.String())
			}
			lines := strings.Split(strings.TrimRight(out.String(), "\n"), "\n")
			body := strings.Join(lines, "\n")
			if s.keep != nil {
				n := s.keep(lines)
				if n < 0 {
					t.Fatalf("the output is not what the sample cuts:\n%s", out.String())
				}
				body = strings.Join(lines[:n], "\n") + "\n  …"
			}
			want := "\n```\n" + body + "\n```\n"

			if *updateSamples {
				if err := os.WriteFile(path, []byte(page[:i+len(start)]+want+page[j:]), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if got := page[i+len(start) : j]; got != want {
				t.Errorf("%s's sample is not what ctx prints; run: go test ./cmd/ctx -run TestReadmeSample -update\nthe page:\n%s\nctx:\n%s", s.page, got, want)
			}
		})
	}
}
