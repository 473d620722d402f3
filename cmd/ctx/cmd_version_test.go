package main

import (
	"runtime/debug"
	"strings"
	"testing"
)

func TestFormatVersion(t *testing.T) {
	stamped := &debug.BuildInfo{
		GoVersion: "go1.26.8",
		Main:      debug.Module{Path: "github.com/ctxtools/ctx", Version: "v1.4.0"},
		Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "38a80d92f9504ac6624681e46b757cbdc62775ba"},
			{Key: "vcs.time", Value: "2026-11-23T14:00:08Z"},
			{Key: "vcs.modified", Value: "true"},
		},
	}
	tests := []struct {
		name    string
		ldflags string
		info    *debug.BuildInfo
		want    []string
	}{
		{"stamped", "", stamped, []string{
			"ctx v1.4.0 linux/amd64 go1.26.8\n",
			"  module  github.com/ctxtools/ctx v1.4.0\n",
			"  commit  38a80d92f9504ac6624681e46b757cbdc62775ba 2026-11-23T14:00:08Z modified\n",
			"  go      go1.26.8\n",
		}},
		{"ldflags version wins the first line", "v9.9.9", stamped, []string{
			"ctx v9.9.9 linux/amd64 go1.26.8\n",
			"  module  github.com/ctxtools/ctx v1.4.0\n",
		}},
		{"no build info", "", nil, []string{
			"ctx (devel) linux/amd64 go1.0\n",
			"  commit  unknown",
			"  go      go1.0\n",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := formatVersion(tt.ldflags, tt.info, "linux/amd64", "go1.0")
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("formatVersion() =\n%s\nwant it to contain %q", got, w)
				}
			}
		})
	}
}

// ctx doctor warns of a cgo build, naming the install that avoids it; a static build
// (the real binary, as make and the tests build it) gets no note.
func TestDoctorWarnsOfCgo(t *testing.T) {
	withCgo := &debug.BuildInfo{Settings: []debug.BuildSetting{{Key: "CGO_ENABLED", Value: "1"}}}
	if note := cgoNote(withCgo); !strings.Contains(note, "CGO_ENABLED=0 go install") {
		t.Errorf("a cgo build: %q", note)
	}
	static := &debug.BuildInfo{Settings: []debug.BuildSetting{{Key: "CGO_ENABLED", Value: "0"}}}
	if note := cgoNote(static); note != "" || cgoNote(nil) != "" {
		t.Errorf("a static build: %q", note)
	}
	ws := procWorkspace(t)
	r := runTimed(t, ctxBinary(t), ws, "", nil, "doctor")
	if strings.Contains(r.stdout, "built with cgo") {
		t.Errorf("the static test binary is said to use cgo:\n%s", r.stdout)
	}
}
