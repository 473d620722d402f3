//go:build e2e

package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// workTree is the workspace as a person would miss it: every file outside .git and
// ctx's own .ctx, with its mode, plus the stash list.
func workTree(t *testing.T, e *Env) map[string]string {
	t.Helper()
	tree := Tree(t, e.Workspace)
	for k := range tree {
		if strings.HasPrefix(k, ".git/") || strings.HasPrefix(k, ".git") && k != ".gitignore" || strings.HasPrefix(k, ".ctx") {
			delete(tree, k)
		}
	}
	tree["(stash)"] = e.Git("stash", "list")
	return tree
}

// dirty makes uncommitted work: an edited file and a new one, and a stash holding more.
func dirty(t *testing.T, e *Env) {
	t.Helper()
	stashed := filepath.Join(e.Workspace, ProjectPath("03-working/stashed-idea.md"))
	if err := os.WriteFile(stashed, []byte("an idea kept in a stash\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	e.Git("stash", "push", "-u", "-m", "kept idea")
	f := filepath.Join(e.Workspace, ProjectPath("03-working/address-form-notes.md"))
	b, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(f, append(b, []byte("\nUncommitted: postcode lookup for NL.\n")...), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(e.Workspace, ProjectPath("03-working/new-draft.md")), []byte("draft\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Each destructive command, run by the real client's Bash tool after ctx init, leaves
// the workspace byte-identical, the repository's history and the private HOME's keys
// in place, and the model is told ctx refused it.
func TestGuardRefusesDestructiveCommandsThroughTheRealBashTool(t *testing.T) {
	commands := []string{
		// The home folder's contents, the repository's history and untracked work, and
		// local services' data (docs/guard.md).
		"rm -rf ~/.ssh",
		"rsync -a --delete /tmp/ ~/.ssh",
		"rm -rf .git",
		"git clean -f",
		"redis-cli FLUSHALL",
		"docker compose down -v",
		"dropdb shop",
		// Commands one step removed: through xargs -I and parallel, inside interpreter
		// code, decoded at run time (this one decodes to rm -rf 02-projects), and SQL
		// with its option joined.
		"echo 02-projects | xargs -I{} bash -c 'rm -rf {}'",
		"parallel rm -rf {} ::: 02-projects",
		"python3 -c \"import os; os.system('rm -rf 02-projects')\"",
		"echo cm0gLXJmIDAyLXByb2plY3Rz | base64 -d | sh",
		"psql -c'DELETE FROM users'",
		"git branch -D spike",
		"git worktree remove --force .ctx/worktrees/spike",
		// A system folder's contents (a name that is not there, should the guard fail)
		// and a preset the workspace switched on.
		"rm -rf /etc/ctx-e2e-absent",
		"terraform destroy -auto-approve",
		"rm -rf 02-projects",
		"find . -name '*.md' -delete",
		"git checkout -- .",
		"git restore .",
		"truncate -s 0 " + ResumeFile,
		"shred -u " + ProjectPath("01-planning/steps.md"),
		"chmod -R 000 02-projects",
		"git stash drop",
		"git stash && git stash drop",
		"rm -rf \"$(pwd)\"/02-projects",
		"cd 02-projects && rm -rf *",
		"bash -c 'rm -rf 02-projects'",
	}
	for _, command := range commands {
		t.Run(command, func(t *testing.T) {
			e := New(t, Options{Git: true})
			dirty(t, e)
			key := filepath.Join(e.Home, ".ssh", "id_ed25519")
			if err := os.MkdirAll(filepath.Dir(key), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(key, []byte("a key\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			// A branch with a commit of its own, checked out in a worktree with an
			// uncommitted change: what git branch -D and worktree remove --force lose.
			e.Git("worktree", "add", "-q", "-b", "spike", filepath.Join(e.Workspace, ".ctx", "worktrees", "spike"))
			wt := filepath.Join(e.Workspace, ".ctx", "worktrees", "spike")
			if err := os.WriteFile(filepath.Join(wt, "spike.md"), []byte("spike\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			e.Git("-C", wt, "add", "spike.md")
			e.Git("-C", wt, "commit", "-qm", "spike")
			if err := os.WriteFile(filepath.Join(wt, "wip.md"), []byte("wip\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(e.Workspace, ".ctx", "config.yaml"), []byte("guard:\n  presets: [cloud]\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			before, head := workTree(t, e), e.Git("rev-parse", "HEAD")
			spike := e.Git("rev-parse", "spike")
			e.Model.Script(Call(5000, Bash(command)), Say("tried", 6000))
			res := e.MustRun(Run{Prompts: []string{"clean up"}})
			if diff := TreeDiff(before, workTree(t, e)); len(diff) > 0 {
				t.Errorf("%q changed the workspace: %v", command, diff)
			}
			if now := e.Git("rev-parse", "HEAD"); now != head {
				t.Errorf("%q changed the repository's history: HEAD %s, was %s", command, now, head)
			}
			if now := e.Git("rev-parse", "spike"); now != spike {
				t.Errorf("%q changed branch spike: %s, was %s", command, now, spike)
			}
			if b, err := os.ReadFile(filepath.Join(wt, "wip.md")); err != nil || string(b) != "wip\n" {
				t.Errorf("%q lost the worktree's uncommitted file: %v", command, err)
			}
			if b, err := os.ReadFile(key); err != nil || string(b) != "a key\n" {
				t.Errorf("%q changed the home folder's key: %q, %v", command, b, err)
			}
			results := res.ToolResults()
			if len(results) != 1 || !results[0].IsError || !strings.Contains(results[0].Content, "Refused") {
				t.Errorf("the model was not told ctx refused %q: %+v", command, results)
			}
		})
	}
}

// The harmless look-alikes of those commands run, and do what they say.
func TestGuardLetsLookAlikesRun(t *testing.T) {
	e := New(t, Options{Git: true})
	dirty(t, e)
	scratch := ProjectPath("03-working/scratch")
	if err := os.MkdirAll(filepath.Join(e.Workspace, scratch), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(e.Workspace, "build.log"), []byte("old log\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	lookalikes := []string{
		"rm -rf " + scratch,
		"find . -name '*.md' -newer build.log",
		"git checkout -b e2e-branch",
		"git restore --staged .",
		"truncate -s 0 build.log",
		"chmod +x " + ProjectPath("03-working/new-draft.md"),
		"git stash list",
		"git stash show -p stash@{0} >/dev/null",
		"echo rm -rf 02-projects",
		"grep -r 'git checkout -- .' . || true",
		"git clean -n",
		"rm -rf ~/.cache/ctx-e2e",
	}
	var calls []Reply
	for _, c := range lookalikes {
		calls = append(calls, Call(5000, Bash(c)))
	}
	e.Model.Script(append(calls, Say("done", 6000))...)
	res := e.MustRun(Run{Prompts: []string{"tidy"}})
	results := res.ToolResults()
	if len(results) != len(lookalikes) {
		t.Fatalf("%d tool results for %d commands", len(results), len(lookalikes))
	}
	for i, r := range results {
		if r.IsError {
			t.Errorf("%q was refused: %s", lookalikes[i], r.Content)
		}
	}
	if _, err := os.Stat(filepath.Join(e.Workspace, scratch)); !os.IsNotExist(err) {
		t.Error("rm -rf of a scratch folder did not run")
	}
	if b, _ := os.ReadFile(filepath.Join(e.Workspace, "build.log")); len(b) != 0 {
		t.Error("truncate of a log did not run")
	}
	if head := strings.TrimSpace(e.Git("rev-parse", "--abbrev-ref", "HEAD")); head != "e2e-branch" {
		t.Errorf("git checkout -b did not run: HEAD is %s", head)
	}
}

// A broken .ctx/config.yaml (a stray tab) never switches the guard off: the built-in
// rules still refuse.
func TestGuardHoldsWithABrokenConfig(t *testing.T) {
	e := New(t, Options{Git: true})
	if err := os.WriteFile(filepath.Join(e.Workspace, ".ctx", "config.yaml"), []byte("guard:\n\tdeny: [\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	before := workTree(t, e)
	e.Model.Script(Call(5000, Bash("rm -rf 02-projects")), Say("tried", 6000))
	res := e.MustRun(Run{Prompts: []string{"clean up"}})
	if diff := TreeDiff(before, workTree(t, e)); len(diff) > 0 {
		t.Errorf("with a broken config the guard let rm -rf 02-projects run: %v", diff[:min(3, len(diff))])
	}
	if r := res.ToolResults(); len(r) != 1 || !r[0].IsError {
		t.Errorf("the model was not told the command was refused: %+v", r)
	}
}

// Installed for the user, the guard judges outside any workspace too.
func TestGuardJudgesOutsideAWorkspace(t *testing.T) {
	e := New(t, Options{NoInit: true})
	e.MustCtx("init", "--global")
	dir := filepath.Join(e.Root, "scratch")
	if err := os.MkdirAll(filepath.Join(dir, "keep"), 0o755); err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(e.Home, "keep-me.txt")
	if err := os.WriteFile(marker, []byte("home\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	e.Model.Script(Call(5000, Bash(`rm -rf "$HOME"`), Bash("rm -rf keep")), Say("done", 6000))
	res := e.MustRun(Run{Prompts: []string{"tidy"}, Dir: dir})
	if _, err := os.Stat(marker); err != nil {
		t.Fatalf("rm -rf $HOME ran outside a workspace: %v", err)
	}
	r := res.ToolResults()
	if len(r) != 2 || !r[0].IsError || r[1].IsError {
		t.Errorf("want the first refused and the look-alike run: %+v", r)
	}
	if _, err := os.Stat(filepath.Join(dir, "keep")); !os.IsNotExist(err) {
		t.Error("the harmless rm -rf of a scratch folder did not run")
	}
}
