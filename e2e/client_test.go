//go:build e2e

// Package e2e drives the real Claude Code against a loopback model stand-in, with ctx
// installed the way a person installs it, so that ctx's hooks, usage reading, saves and
// guard are judged by what the real client does (docs/e2e.md).
//
// The pieces: Model, the stand-in for the model API, scripted per test and recording
// every request; Client, the pinned Claude Code, installed once from npm and cached;
// Env, a private HOME and workspace with ctx built and on the PATH, which runs the
// client in print mode (Env.Run) or interactively in tmux (Env.Tmux).
package e2e

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gofrs/flock"

	"github.com/ctxtools/ctx/internal/claude"
)

// ClaudeVersion is the Claude Code release the suite is pinned to and proves: the one
// ctx doctor compares the installed client with. To move it, change
// claude.ProvenClaudeVersion, run `make e2e` and record the result in
// docs/compatibility.md.
const ClaudeVersion = claude.ProvenClaudeVersion

// claudePackage is the npm package Claude Code ships in; its native binary comes in a
// platform package beside it and needs no Node at run time.
const (
	claudePackage = "@anthropic-ai/claude-code"
	claudeBinary  = "node_modules/@anthropic-ai/claude-code-linux-x64/claude"
)

// Environment variables that steer the suite.
const (
	// EnvClaude names a claude binary to use instead of the cached install.
	EnvClaude = "CTX_E2E_CLAUDE"
	// EnvCache is the folder the pinned client is installed into (default: the user
	// cache folder's ctx-e2e).
	EnvCache = "CTX_E2E_CACHE"
)

// Client returns the path of the pinned Claude Code, installing it with npm into the
// cache on first use. Where it cannot be had (no npm, no registry), the test is skipped
// with the command that installs it, and fails under CI=true, where a skipped real
// component is a failure.
func Client(t testing.TB) string {
	t.Helper()
	path, err := clientPath()
	if err != nil {
		Missing(t, "Claude Code %s: %v (install Node and npm: apt-get install nodejs npm)", ClaudeVersion, err)
	}
	return path
}

// Missing skips a test for a real component that is not there, or fails it in CI.
func Missing(t testing.TB, format string, args ...any) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("missing real component (CI=true): "+format, args...)
	}
	t.Skipf("missing real component: "+format, args...)
}

func clientPath() (string, error) {
	if p := os.Getenv(EnvClaude); p != "" {
		return p, nil
	}
	return npmInstall(claudePackage, ClaudeVersion, claudeBinary, versionOK)
}

// npmInstall installs pkg@version with npm into the suite's cache folder, once, and
// returns the path of bin inside it; ready says whether an install is there and works.
// Test binaries of several packages may start at once: one installs, the others wait
// for it.
func npmInstall(pkg, version, bin string, ready func(path string) bool) (string, error) {
	cache := os.Getenv(EnvCache)
	if cache == "" {
		base, err := os.UserCacheDir()
		if err != nil {
			return "", err
		}
		cache = filepath.Join(base, "ctx-e2e")
	}
	dir := filepath.Join(cache, strings.TrimPrefix(strings.ReplaceAll(pkg, "/", "-"), "@")+"-"+version)
	if pkg == claudePackage {
		dir = filepath.Join(cache, "claude-"+version) // where earlier runs installed it
	}
	path := filepath.Join(dir, bin)
	if ready(path) {
		return path, nil
	}
	if err := os.MkdirAll(cache, 0o755); err != nil {
		return "", err
	}
	lock := flock.New(filepath.Join(cache, "install.lock"))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	if _, err := lock.TryLockContext(ctx, 200*time.Millisecond); err != nil {
		return "", fmt.Errorf("waiting for another install: %w", err)
	}
	defer func() { _ = lock.Unlock() }()
	if ready(path) {
		return path, nil
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		return "", errors.New("npm is not installed")
	}
	cmd := exec.CommandContext(ctx, npm, "install", "--prefix", dir, "--ignore-scripts", "--no-audit", "--no-fund", pkg+"@"+version)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("npm install %s@%s: %w\n%s", pkg, version, err, out)
	}
	if !ready(path) {
		return "", fmt.Errorf("%s: not the runnable %s %s after npm install", path, pkg, version)
	}
	return path, nil
}

func versionOK(bin string) bool {
	out, err := exec.Command(bin, "--version").Output()
	return err == nil && strings.HasPrefix(strings.TrimSpace(string(out)), ClaudeVersion)
}
