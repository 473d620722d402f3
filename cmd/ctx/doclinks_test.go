package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// mdLink is a Markdown inline link or image: [text](target).
var mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// TestDocLinksLeadSomewhere: every relative link in the README and docs/ names a file
// of the repository, so moving a section between pages cannot leave a dead link.
func TestDocLinksLeadSomewhere(t *testing.T) {
	root := filepath.Join("..", "..")
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	pages = append(pages, filepath.Join(root, "README.md"), filepath.Join(root, "CHANGELOG.md"), filepath.Join(root, "BENCHMARKS.md"))
	links := 0
	for _, page := range pages {
		data, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range mdLink.FindAllStringSubmatch(string(data), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "#") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			target, _, _ = strings.Cut(target, "#")
			links++
			if _, err := os.Stat(filepath.Join(filepath.Dir(page), target)); err != nil {
				t.Errorf("%s: the link %s leads nowhere", page, m[1])
			}
		}
	}
	if links < 20 {
		t.Fatalf("%d relative links found; the pattern finds nothing", links)
	}
}

// TestReadmeIsAFirstScreen: the README stays a first page, not a manual: at most 200
// lines, none wider than 100 columns; the rest lives in docs/.
func TestReadmeIsAFirstScreen(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(data), "\n")
	if len(lines) > 200 {
		t.Errorf("README.md has %d lines; move detail to docs/", len(lines))
	}
	for i, l := range lines {
		if n := len([]rune(l)); n > 100 {
			t.Errorf("README.md:%d: %d columns", i+1, n)
		}
	}
}
