package main

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestFloorLinksWhatCtxLinks: the floor is only a floor while it links every package
// ctx links but ctx's own, and nothing more; a library added to ctx and not here would
// make the floor too low, one dropped from ctx and kept here too high.
func TestFloorLinksWhatCtxLinks(t *testing.T) {
	deps := func(pkg string) []string {
		out, err := exec.Command("go", "list", "-deps", pkg).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", pkg, err)
		}
		var libs []string
		for _, p := range strings.Fields(string(out)) {
			if !strings.HasPrefix(p, "github.com/ctxtools/ctx") {
				libs = append(libs, p)
			}
		}
		slices.Sort(libs)
		return libs
	}
	ctx, floor := deps("../cmd/ctx"), deps("./floor")
	for _, p := range ctx {
		if !slices.Contains(floor, p) {
			t.Errorf("ctx links %s and the floor does not: import it in bench/floor", p)
		}
	}
	for _, p := range floor {
		if !slices.Contains(ctx, p) {
			t.Errorf("the floor links %s and ctx does not: drop it from bench/floor", p)
		}
	}
}
