package claude

import (
	"strconv"
	"strings"
)

// ProvenClaudeVersion is the newest Claude Code release the end-to-end suite passed
// against (docs/compatibility.md). The suite installs exactly this version, so it is
// named once, here.
const ProvenClaudeVersion = "2.1.330"

// ClientVersion reads the version from `claude --version` output ("2.1.330 (Claude
// Code)"); ok is false when the output does not start with one.
func ClientVersion(output string) (version string, ok bool) {
	fields := strings.Fields(output)
	if len(fields) == 0 {
		return "", false
	}
	if _, ok := parseVersion(fields[0]); !ok {
		return "", false
	}
	return fields[0], true
}

// NewerThanProven reports whether version is a later release than ProvenClaudeVersion.
func NewerThanProven(version string) bool {
	v, ok := parseVersion(version)
	if !ok {
		return false
	}
	p, _ := parseVersion(ProvenClaudeVersion)
	for i := range v {
		if v[i] != p[i] {
			return v[i] > p[i]
		}
	}
	return false
}

func parseVersion(s string) ([3]int, bool) {
	var v [3]int
	parts := strings.Split(s, ".")
	if len(parts) != 3 {
		return v, false
	}
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 {
			return v, false
		}
		v[i] = n
	}
	return v, true
}
