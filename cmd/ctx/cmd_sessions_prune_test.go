package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// On a terminal prune is a dry run unless --yes.
func TestSessionsPruneDryRunOnTerminal(t *testing.T) {
	dir := t.TempDir()
	sessions := filepath.Join(dir, ".ctx", "sessions")
	if err := os.MkdirAll(sessions, 0o755); err != nil {
		t.Fatal(err)
	}
	old := filepath.Join(sessions, "session-20260101T100000Z-000000.json")
	for _, f := range []string{old, filepath.Join(sessions, "session-20261101T100000Z-000000.json")} {
		if err := os.WriteFile(f, []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run := func(args ...string) string {
		var out, errb bytes.Buffer
		code := Main(append([]string{"--workspace", dir, "sessions", "prune"}, args...),
			Streams{In: strings.NewReader(""), Out: &out, Err: &errb, OutIsTTY: true},
			func(string) string { return "" })
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errb.String())
		}
		return errb.String()
	}
	if got := run("--older-than", "30d"); !strings.Contains(got, "add --yes to remove them") {
		t.Errorf("stderr %q", got)
	}
	if _, err := os.Stat(old); err != nil {
		t.Fatalf("a terminal run without --yes removed the set: %v", err)
	}
	run("--older-than", "30d", "--yes")
	if _, err := os.Stat(old); !os.IsNotExist(err) {
		t.Errorf("--yes left the set: %v", err)
	}
}

func TestParseAge(t *testing.T) {
	for in, want := range map[string]time.Duration{"30d": 30 * 24 * time.Hour, "2w": 14 * 24 * time.Hour, "12h": 12 * time.Hour, "90m": 90 * time.Minute} {
		if got, err := parseAge(in); err != nil || got != want {
			t.Errorf("parseAge(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "d", "-3d", "0", "soon", "1y"} {
		if _, err := parseAge(in); err == nil {
			t.Errorf("parseAge(%q) did not fail", in)
		}
	}
}
