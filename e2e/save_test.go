//go:build e2e

package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// In a workspace that is not a git repository, a save lists the files the session
// wrote and edited: ctx saw every Write and Edit through its hooks.
func TestSaveWithoutGitListsTheFilesTheSessionWrote(t *testing.T) {
	e := New(t, Options{})
	written := filepath.Join(e.Workspace, ProjectPath("03-working/cvc-rules.md"))
	edited := filepath.Join(e.Workspace, ProjectPath("03-working/card-validation-spike.md"))
	original, err := os.ReadFile(edited)
	if err != nil {
		t.Fatal(err)
	}
	line := strings.SplitN(string(original), "\n", 2)[0]
	e.Model.Script(
		Call(5000, Bash("ctx load 1 >/dev/null"), Write(written, "# CVC rules\n")),
		Call(6000, Bash("cat "+edited+" >/dev/null")),
		Call(7000, Edit(edited, line, line+" (revised)")),
		Call(8000, Bash(`ctx save --summary "wrote the CVC rules" --next "wire them in"`)),
		Say("saved", 9000),
	)
	res := e.MustRun(Run{Prompts: []string{"write and save"}})
	for _, r := range res.ToolResults() {
		if r.IsError {
			t.Fatalf("a tool failed: %s", r.Content)
		}
	}
	doc := e.ReadFile(ResumeFile)
	files := section(doc, "## Files Modified")
	for _, want := range []string{"03-working/cvc-rules.md", "03-working/card-validation-spike.md"} {
		if !strings.Contains(files, want) {
			t.Errorf("Files Modified lacks %s:\n%s", want, files)
		}
	}
}

// When the session commits before saving, git shows nothing dirty; the save still
// lists what the session changed.
func TestSaveAfterCommitListsTheFilesTheSessionWrote(t *testing.T) {
	e := New(t, Options{Git: true})
	written := filepath.Join(e.Workspace, ProjectPath("03-working/threeds-modal.md"))
	e.Model.Script(
		Call(5000, Bash("ctx load 1 >/dev/null"), Write(written, "# 3-D Secure\n")),
		Call(6000, Bash("git add -A && git commit -qm 'threeds notes'")),
		Call(7000, Bash(`ctx save --summary "3-D Secure notes"`)),
		Say("saved", 8000),
	)
	e.MustRun(Run{Prompts: []string{"write, commit, save"}})
	if files := section(e.ReadFile(ResumeFile), "## Files Modified"); !strings.Contains(files, "03-working/threeds-modal.md") {
		t.Errorf("Files Modified lacks the committed file:\n%s", files)
	}
}

// A save leaves no lock file behind where a person keeps files, and nothing of ctx's
// own state shows up as a change in git.
func TestSavesLeaveNoLockFiles(t *testing.T) {
	e := New(t, Options{Git: true})
	e.Model.Script(
		Call(5000, Bash("ctx load 1 >/dev/null")),
		Call(6000, Bash(`ctx save --summary "one"`)),
		Call(7000, Bash(`ctx save --summary "two"`)),
		Say("saved", 880_000),
		Say("auto-saved", 881_000),
	)
	e.MustRun(Run{Prompts: []string{"save twice", "then more"}})
	var locks []string
	_ = filepath.Walk(e.Workspace, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return nil
		}
		rel, _ := filepath.Rel(e.Workspace, p)
		if info.IsDir() && (rel == ".git" || rel == filepath.Join(".ctx", "state")) {
			return filepath.SkipDir
		}
		if strings.HasSuffix(p, ".lock") {
			locks = append(locks, rel)
		}
		return nil
	})
	if len(locks) > 0 {
		t.Errorf("lock files left behind: %v", locks)
	}
	if status := e.Git("status", "--porcelain", "--untracked-files=all", "--", ".ctx"); strings.Contains(status, ".lock") {
		t.Errorf("git sees ctx's lock files:\n%s", status)
	}
}

// section returns the body of a "## " section of a Markdown document.
func section(doc, heading string) string {
	i := strings.Index(doc, heading)
	if i < 0 {
		return ""
	}
	rest := doc[i+len(heading):]
	if j := strings.Index(rest, "\n## "); j >= 0 {
		rest = rest[:j]
	}
	return rest
}
