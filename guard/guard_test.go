package guard

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

const (
	home      = "/home/dev"
	workspace = "/home/dev/src/app"
	cleanRepo = "/home/dev/src/clean"
)

// testEnv runs commands in the workspace root, whose repository has uncommitted
// changes; the repository at cleanRepo has none.
func testEnv() Env {
	return Env{
		Home:      home,
		Workspace: workspace,
		Cwd:       workspace,
		Dirty:     func(dir string) bool { return !strings.HasPrefix(dir, cleanRepo) },
	}
}

func newRules(t testing.TB, cfg Config, env Env) *Rules {
	t.Helper()
	r, err := New(cfg, env)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return r
}

func TestDenied(t *testing.T) {
	r := newRules(t, Config{}, testEnv())
	tests := []struct {
		command string
		rule    string
	}{
		// Recursive deletion of /, in every spelling of the flags and the target.
		{`rm -rf /`, "rm-root"},
		{`rm -fr /`, "rm-root"},
		{`rm -r -f /*`, "rm-root"},
		{`rm --recursive --force /`, "rm-root"},
		{`rm --rec --force /`, "rm-root"},
		{`rm / -rf`, "rm-root"},
		{`"rm" -rf "/"`, "rm-root"},
		{`rm -rf '/'`, "rm-root"},
		{`\rm -Rf /`, "rm-root"},
		{`/bin/rm -rf -- /`, "rm-root"},
		{`rm -rf $'/'`, "rm-root"},
		{`rm -rf /./`, "rm-root"},
		{`sudo rm -rf --no-preserve-root /`, "rm-no-preserve-root"},
		// The home folder.
		{`rm -rf ~`, "rm-home"},
		{`rm -rf ~/`, "rm-home"},
		{`rm -rf $HOME`, "rm-home"},
		{`rm -rf "${HOME}"`, "rm-home"},
		{`rm -rf -- "$HOME/"`, "rm-home"},
		{`rm -rf /home/dev`, "rm-home"},
		{`rm -rf ~/*`, "rm-home"},
		{`rm -rf ~/.*`, "rm-home"},
		{`cd ~ && rm -rf .`, "rm-home"},
		// The workspace and its parents.
		{`rm -rf /home/dev/src/app`, "rm-workspace"},
		{`rm -rf /home/dev/src/app/*`, "rm-workspace"},
		{`rm -rf .`, "rm-workspace"},
		{`rm -rf ./`, "rm-workspace"},
		{`rm -rf *`, "rm-workspace"},
		{`rm -rf "$(pwd)"`, "rm-workspace"},
		{`cd .. && rm -rf "$PWD"/*`, "rm-parent"},
		{`rm -r ~/src/app`, "rm-workspace"},
		{`cd lib && rm -rf ..`, "rm-workspace"},
		{`rm -rf ..`, "rm-parent"},
		{`rm -rf /home`, "rm-parent"},
		{`rm -rf /ho*`, "rm-parent"},
		{`rm -rf /usr`, "rm-system"},
		{`cd / && rm -rf *`, "rm-root"},
		{`D=/; rm -rf $D`, "rm-root"},
		{`export TARGET=~; rm -rf "$TARGET"`, "rm-home"},
		// Wrappers.
		{`sudo -u root -E rm -rf /`, "rm-root"},
		{`sudo -- rm -rf /`, "rm-root"},
		{`env -i PATH=/bin rm -rf /`, "rm-root"},
		{`FOO=1 nohup nice -n 10 timeout 5 rm -rf ~`, "rm-home"},
		{`command rm -rf /`, "rm-root"},
		{`exec rm -rf ~`, "rm-home"},
		{`time rm -rf /`, "rm-root"},
		{`sudo -D / rm -rf *`, "rm-root"},
		{`env --chdir=/ rm -rf ./*`, "rm-root"},
		{`xargs rm -rf /`, "rm-root"},
		{`find . -name x -exec rm -rf / \;`, "rm-root"},
		// xargs hands rm paths: known ones are judged, unseen ones refused in the workspace.
		{`echo / | xargs rm -rf`, "rm-root"},
		{`ls | xargs rm -rf`, "xargs-rm"},
		{`xargs -0 rm -rf < files.txt`, "xargs-rm"},
		// Every place a command can hide.
		{`echo ok && rm -rf /`, "rm-root"},
		{`false || rm -rf ~`, "rm-home"},
		{`ls | rm -rf /`, "rm-root"},
		{"make\nrm -rf /", "rm-root"},
		{`(cd /tmp; rm -rf ~)`, "rm-home"},
		{`{ rm -rf /; }`, "rm-root"},
		{`echo $(rm -rf ~)`, "rm-home"},
		{"echo `rm -rf /`", "rm-root"},
		{`cat <(rm -rf ~)`, "rm-home"},
		{`x="$(rm -rf /)"`, "rm-root"},
		{`if true; then rm -rf /; fi`, "rm-root"},
		{`for f in a b; do rm -rf $HOME; done`, "rm-home"},
		{`for d in build / dist; do rm -rf "$d"; done`, "rm-root"},
		{`for b in dev main; do git push -f origin $b; done`, "git-force-push"},
		{`while sleep 1; do rm -rf /; done`, "rm-root"},
		{`case x in x) rm -rf / ;; esac`, "rm-root"},
		{`cleanup() { rm -rf ~; }`, "rm-home"},
		{`bash -c 'rm -rf /'`, "rm-root"},
		{`sh -c "rm -rf \$HOME"`, "rm-home"},
		{`zsh -lc 'cd / && rm -rf *'`, "rm-root"},
		{`bash -c "bash -c 'rm -rf /'"`, "rm-root"},
		{`eval 'rm -rf ~'`, "rm-home"},
		{`eval rm -rf '$HOME'`, "rm-home"},
		{`trap 'rm -rf ~' EXIT`, "rm-home"},
		{`env -S 'rm -rf /'`, "rm-root"},
		{"bash <<'EOF'\nrm -rf ~\nEOF", "rm-home"},
		{`echo 'rm -rf /' | sh`, "rm-root"},
		{"cat <<EOF\n$(rm -rf ~)\nEOF", "rm-home"},
		{`find /tmp -type f -exec sh -c 'rm -rf ~' \;`, "rm-home"},
		// Git.
		{`git push --force origin main`, "git-force-push"},
		{`git push -f origin master`, "git-force-push"},
		{`git push origin main --force`, "git-force-push"},
		{`git push origin +main`, "git-force-push"},
		{`git push --force-with-lease origin HEAD:main`, "git-force-push"},
		{`git push -fu origin refs/heads/master`, "git-force-push"},
		{`git push -f`, "git-force-push"},
		{`git push --force origin`, "git-force-push"},
		{`git push -f origin "$BRANCH"`, "git-force-push"},
		{`git -C /home/dev/src/app push origin main --force`, "git-force-push"},
		{`git push --mirror`, "git-force-push"},
		{`git push --all -f origin`, "git-force-push"},
		{`git push origin :main`, "git-delete-main"},
		{`git push origin --delete master`, "git-delete-main"},
		{`git reset --hard`, "git-reset-hard"},
		{`git reset --hard HEAD~1`, "git-reset-hard"},
		{`cd lib && git reset --hard origin/main`, "git-reset-hard"},
		{`git clean -fdx`, "git-clean"},
		{`git clean -xdf`, "git-clean"},
		{`git clean -fd`, "git-clean"},
		{`git clean -f -d`, "git-clean"},
		{`git clean -f`, "git-clean"}, // untracked files are uncommitted work too
		{`rm -rf /home/devel`, "rm-home-contents"},
		{`git clean --force -X`, "git-clean"},
		// SQL.
		{`psql -c "DROP TABLE users"`, "sql-drop"},
		{`psql -h db -U app --command='drop table if exists sessions'`, "sql-drop"},
		{`mysql -u root -e 'drop database prod'`, "sql-drop"},
		{`mariadb --execute="DROP DATABASE shop"`, "sql-drop"},
		{`sqlite3 app.db "DROP TABLE sessions;"`, "sql-drop"},
		{`cockroach sql --insecure -e 'DROP DATABASE bank CASCADE'`, "sql-drop"},
		{"psql mydb <<EOF\nBEGIN;\nDROP TABLE users;\nCOMMIT;\nEOF", "sql-drop"},
		{`psql <<< "drop   table x"`, "sql-drop"},
		{`echo 'DROP DATABASE prod;' | psql`, "sql-drop"},
		{`printf 'DROP TABLE t;\n' | sudo -u postgres psql app`, "sql-drop"},
		{"cat <<'SQL' | mysql shop\nDROP TABLE orders;\nSQL", "sql-drop"},
		{`docker exec -i db psql -U postgres -c 'DROP TABLE orders'`, "sql-drop"},
		// Disks.
		{`mkfs.ext4 /dev/sdb1`, "mkfs"},
		{`sudo mkfs -t ext4 /dev/sdb`, "mkfs"},
		{`mke2fs /dev/sdc`, "mkfs"},
		{`dd if=/dev/zero of=/dev/sda bs=1M`, "dd-device"},
		{`sudo dd if=ubuntu.iso of=/dev/disk2 bs=4m`, "dd-device"},
		{`echo hi > /dev/sda`, "device-write"},
		{`cat image.img >/dev/nvme0n1`, "device-write"},
		{`cat image.img | sudo tee /dev/mmcblk0 > /dev/null`, "device-write"},
		// Fork bombs.
		{`:(){ :|:& };:`, "fork-bomb"},
		{`:(){ :|: & };:`, "fork-bomb"},
		{`bomb() { bomb | bomb & }; bomb`, "fork-bomb"},
		{`function f { f | f & }; f`, "fork-bomb"},
		{`b(){ b & b & }; b`, "fork-bomb"},
		// Unparseable text: the textual fallback.
		{`rm -rf / 'unterminated`, "rm-root"},
		{`rm -rf ~ "unterminated`, "rm-home"},
		{`:(){ :|:& };: "`, "fork-bomb"},
	}
	if len(tests) < 40 {
		t.Fatalf("only %d cases", len(tests))
	}
	for _, tt := range tests {
		v := r.Check(tt.command)
		if !v.Deny || v.Rule != tt.rule {
			t.Errorf("Check(%q) = %+v, want denied by %s", tt.command, v, tt.rule)
			continue
		}
		if !strings.HasPrefix(v.Reason, "Refused ") || !strings.HasSuffix(v.Reason, ".") || strings.Contains(v.Reason, "\n") {
			t.Errorf("Check(%q) reason %q: want one sentence starting with Refused", tt.command, v.Reason)
		}
	}
}

func TestAllowed(t *testing.T) {
	r := newRules(t, Config{}, testEnv())
	tests := []string{
		// Dangerous words as data.
		`echo "rm -rf /"`,
		`echo rm -rf /`,
		`printf 'mkfs'`,
		`grep -r "DROP TABLE" .`,
		`grep -i "drop database" docs/*.md`,
		`git log --grep="push --force"`,
		`git commit -m "never run rm -rf / or git push -f origin main"`,
		`# rm -rf /`,
		`ls # rm -rf ~`,
		"cat <<EOF\nrm -rf /\nEOF",
		"cat <<'EOF' > cleanup.sh\nrm -rf ~\nEOF",
		`echo ':(){ :|:& };:'`,
		`echo 'DROP TABLE users;' > migration.sql`,
		`cat schema.sql | grep DROP`,
		`sed -i 's/rm -rf \//echo/' install.sh`,
		`bash -c 'echo rm -rf /'`,
		`man mkfs`,
		// Ordinary deletions.
		`rm -rf ./build`,
		`rm -rf node_modules dist .next`,
		`rm -f /tmp/foo.lock`,
		`rm -f ~/notes.txt`,
		`rm /`,
		`rm -r /tmp/build-123`,
		`rm -rf ~/.cache/go-build`,
		`rm -rf /home/dev/src/app/target`,
		`rm -rf /home/dev/src/app-old`,
		`rm -rf /home/devel/build`, // below a name that starts with home's
		`rm -rf ~/src/app/build/*`,
		`cd /tmp && rm -rf *`,
		`cd .. && rm -rf app/build`,
		`rm -rf "$TMPDIR/x"`,
		`rm -rf "$BUILD_DIR"`,
		`rm -rf "~"`,
		`find . -name '*.pyc' -delete`,
		`find . -type d -name __pycache__ -exec rm -rf {} +`,
		`for d in build dist; do rm -rf "$d"; done`,
		`for f in *.log; do rm -f "$f"; done`,
		`bash -c "$SCRIPT"`,
		// Git that keeps work.
		`git push origin main`,
		`git push -u origin feature/login`,
		`git push --force origin feature/login`,
		`git push -f origin HEAD:feature-x`,
		`git push --force-with-lease origin my-branch`,
		`git push origin +feature`,
		`git push -n -f origin main`,
		`git push origin --delete feature/old`,
		`git reset --soft HEAD~1`,
		`git reset HEAD file.go`,
		`cd /home/dev/src/clean && git reset --hard origin/main`,
		`git -C /home/dev/src/clean clean -fdx`,
		`git clean -n -fdx`,
		`git stash && git pull --rebase`,
		// SQL that drops nothing.
		`psql -c "SELECT * FROM users"`,
		`psql -c "CREATE TABLE drop_log (id int)"`,
		`mysql -e 'SHOW TABLES'`,
		`docker exec db psql -c 'SELECT 1'`,
		`psql -f migrations/001.sql`,
		// Disks read, or written as files.
		`dd if=/dev/zero of=./disk.img bs=1M count=10`,
		`dd if=/dev/urandom of=/dev/null count=1`,
		`dd if=/dev/sda of=backup.img`,
		`echo hi > /dev/null`,
		`make 2>/dev/null >/dev/stderr`,
		`echo AT > /dev/ttyUSB0`,
		`ls /dev/sda*`,
		`tee /tmp/out.log`,
		`echo "$(date) done" >> ~/log.txt`,
		// Recursive functions that are not bombs.
		`fib() { echo $(( $(fib 1) + $(fib 2) )); }`,
		`walk() { for d in "$1"/*; do walk "$d"; done; }`,
		// Everyday commands.
		`sudo apt-get install -y ripgrep`,
		`go test ./... && go vet ./...`,
		`npm run build 2>&1 | tail -20`,
		`docker compose up -d`,
		`kubectl get pods -n prod`,
	}
	if len(tests) < 40 {
		t.Fatalf("only %d cases", len(tests))
	}
	for _, command := range tests {
		if v := r.Check(command); v.Deny {
			t.Errorf("Check(%q) = %+v, want allowed", command, v)
		}
	}
}

func TestReasonQuotesCommand(t *testing.T) {
	r := newRules(t, Config{}, testEnv())
	v := r.Check("cd lib &&\n  sudo rm   -rf /")
	if want := "Refused `sudo rm -rf /`: "; !strings.HasPrefix(v.Reason, want) {
		t.Errorf("reason %q, want prefix %q", v.Reason, want)
	}
}

func TestConfigDeny(t *testing.T) {
	cfg := Config{Deny: []DenyRule{
		{Pattern: "terraform destroy", Reason: "it tears down production"},
		{Pattern: "kubectl delete * prod"},
	}}
	r := newRules(t, cfg, testEnv())
	tests := []struct {
		command string
		deny    bool
	}{
		{`terraform destroy`, true},
		{`terraform destroy -auto-approve`, true},
		{`sudo /usr/local/bin/terraform destroy`, true},
		{`cd infra && AWS_PROFILE=x terraform "destroy"`, true},
		{`terraform plan -destroy`, false},
		{`echo terraform destroy`, false},
		{`kubectl delete ns prod`, true},
		{`kubectl delete ns staging`, false},
	}
	for _, tt := range tests {
		v := r.Check(tt.command)
		if v.Deny != tt.deny || tt.deny && v.Rule != "config-deny" {
			t.Errorf("Check(%q) = %+v, want deny=%v", tt.command, v, tt.deny)
		}
	}
	if v := r.Check(`terraform destroy`); !strings.Contains(v.Reason, "it tears down production") {
		t.Errorf("reason %q does not carry the configured reason", v.Reason)
	}
}

func TestConfigAllow(t *testing.T) {
	cfg := Config{Allow: []string{
		"rm -rf  /home/dev/src/app",
		"git push --force origin main",
		"rm -rf ~/scratch/..",
	}}
	r := newRules(t, cfg, testEnv())
	for _, command := range []string{
		`rm -rf /home/dev/src/app`,
		`rm   -rf "/home/dev/src/app"`,
		`git push --force origin main`,
		`cd /tmp && git push --force origin main`,
		`rm -rf $HOME/scratch/..`,
	} {
		if v := r.Check(command); v.Deny {
			t.Errorf("Check(%q) = %+v, want allowed by the allow list", command, v)
		}
	}
	for _, command := range []string{
		`rm -rf /home/dev/src/app/*`,
		`git push --force origin master`,
		`sudo git push --force origin main`,
	} {
		if v := r.Check(command); !v.Deny {
			t.Errorf("Check(%q) allowed, want denied: allow entries are exact", command)
		}
	}
}

func TestNewRejectsMalformedPatterns(t *testing.T) {
	for _, cfg := range []Config{
		{Deny: []DenyRule{{Pattern: ""}}},
		{Deny: []DenyRule{{Pattern: "   "}}},
		{Deny: []DenyRule{{Pattern: "terraform destroy | tee log"}}},
		{Deny: []DenyRule{{Pattern: "make; make install"}}},
		{Deny: []DenyRule{{Pattern: `helm uninstall "unterminated`}}},
		{Deny: []DenyRule{{Pattern: "rm $TARGET"}}},
		{Deny: []DenyRule{{Pattern: "* --force"}}},
		{Deny: []DenyRule{{Pattern: "X=1 make"}}},
		{Allow: []string{""}},
		{Allow: []string{"rm -rf build > log"}},
		{Allow: []string{"rm -rf $(pwd)"}},
	} {
		r, err := New(cfg, testEnv())
		if err == nil {
			t.Errorf("New(%+v) succeeded, want an error", cfg)
		} else if msg := err.Error(); msg != strings.ToLower(msg[:1])+msg[1:] || !strings.HasPrefix(msg, "guard.") {
			t.Errorf("error %q: want `guard.deny[i] ...: why`, lowercase", msg)
		}
		// A bad entry never lowers protection: the built-in rules still apply.
		if r == nil {
			t.Fatalf("New(%+v) returned no Rules", cfg)
		}
		if v := r.Check(`rm -rf /`); v.Rule != "rm-root" {
			t.Errorf("New(%+v): rm -rf / = %+v, want rm-root despite the bad entry", cfg, v)
		}
	}
}

func TestNewKeepsValidEntries(t *testing.T) {
	cfg := Config{
		Deny: []DenyRule{
			{Pattern: "terraform destroy"},
			{Pattern: "make; make install"},
			{Pattern: "helm uninstall"},
		},
		Allow: []string{"rm -rf $(pwd)", "git push --force origin main"},
	}
	r, err := New(cfg, testEnv())
	if err == nil {
		t.Fatal("New succeeded, want an error naming the bad entries")
	}
	for _, want := range []string{`guard.deny[1] "make; make install"`, `guard.allow[0] "rm -rf $(pwd)"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %s", err, want)
		}
	}
	if strings.Contains(err.Error(), "terraform") || strings.Contains(err.Error(), "helm") {
		t.Errorf("error %q names a valid entry", err)
	}
	for command, rule := range map[string]string{
		`terraform destroy`:            "config-deny",
		`helm uninstall web`:           "config-deny",
		`rm -rf ~`:                     "rm-home",
		`git push --force origin main`: "",
	} {
		if v := r.Check(command); v.Rule != rule {
			t.Errorf("Check(%q) = %+v, want rule %q", command, v, rule)
		}
	}
}

func TestDirtyDecidesGitDiscards(t *testing.T) {
	for _, command := range []string{`git reset --hard`, `git clean -fdx`, `git reset --hard origin/main && git clean -xdf`} {
		for _, dirty := range []bool{true, false} {
			var asked []string
			env := testEnv()
			env.Dirty = func(dir string) bool {
				asked = append(asked, dir)
				return dirty
			}
			v := newRules(t, Config{}, env).Check(command)
			if v.Deny != dirty {
				t.Errorf("Check(%q) with dirty=%v: %+v", command, dirty, v)
			}
			if len(asked) != 1 || asked[0] != workspace {
				t.Errorf("Check(%q) asked Dirty about %q, want once about the workspace", command, asked)
			}
		}
	}
	// Without a Dirty func, or in a folder the guard cannot determine, the work is
	// presumed at risk.
	env := testEnv()
	env.Dirty = nil
	if v := newRules(t, Config{}, env).Check(`git reset --hard`); !v.Deny {
		t.Error("git reset --hard allowed with no Dirty func")
	}
	if v := newRules(t, Config{}, testEnv()).Check(`cd "$REPO" && git clean -fd`); !v.Deny {
		t.Error("git clean -fd allowed in an unknown folder")
	}
}

func TestCwdDefaultsToWorkspace(t *testing.T) {
	env := testEnv()
	env.Cwd = ""
	if v := newRules(t, Config{}, env).Check(`rm -rf .`); v.Rule != "rm-workspace" {
		t.Errorf("rm -rf . with no Cwd: %+v, want rm-workspace", v)
	}
	env.Cwd = workspace + "/lib"
	r := newRules(t, Config{}, env)
	if v := r.Check(`rm -rf .`); v.Deny {
		t.Errorf("rm -rf . in a subfolder: %+v, want allowed", v)
	}
	if v := r.Check(`rm -rf ../*`); v.Rule != "rm-workspace" {
		t.Errorf("rm -rf ../* from a subfolder: %+v, want rm-workspace", v)
	}
}

func TestDeepNestingIsBounded(t *testing.T) {
	r := newRules(t, Config{}, testEnv())
	// eval eval ... joins its words into a script one level deeper each time.
	command := strings.Repeat("eval ", 3*maxDepth) + "true"
	start := time.Now()
	v := r.Check(command)
	if v.Rule != "too-deep" {
		t.Errorf("nested eval: %+v, want too-deep", v)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("nested eval took %v", d)
	}
}

// TestLargeInputsStayFast guards against work that grows faster than the input, which
// an agent's command (or a hostile file it pastes into one) could otherwise turn into a
// hook that never answers.
func TestLargeInputsStayFast(t *testing.T) {
	r := newRules(t, Config{}, testEnv())
	// Half a second each alone on a laptop; a blowup would take minutes. The bound
	// leaves room for the race detector and a machine busy with other suites.
	bound := 3 * time.Second
	if raceEnabled {
		bound = 15 * time.Second
	}
	for name, command := range map[string]string{
		"fork bomb with many pipes": "f(){ " + strings.Repeat("f|", 20000) + "f & }",
		"nested substitutions":      strings.Repeat("$(", 5000) + "true" + strings.Repeat(")", 5000),
		"nested subshells":          strings.Repeat("(", 5000) + "true" + strings.Repeat(")", 5000),
		"long pipeline":             strings.Repeat("echo a | ", 20000) + "psql",
		"many heredocs to a shell":  strings.Repeat("cat <<E | bash\nls\nE\n", 5000),
		"many targets":              "rm -rf " + strings.Repeat("x/* ", 25000),
		"unparseable":               strings.Repeat("f(){ g|h& }; rm -r -f x ", 5000) + "'",
	} {
		start := time.Now()
		r.Check(command)
		if d := time.Since(start); d > bound {
			t.Errorf("%s (%d bytes): Check took %v", name, len(command), d)
		}
	}
}

// TestUnjudgeableIsRefused checks that what the guard cannot judge is refused, and
// quickly: text that does not parse, a command over the size bound, nesting that would
// overflow the parser's stack (a fatal error, which would let the command run), and a
// string built from variables beyond the bound.
func TestUnjudgeableIsRefused(t *testing.T) {
	r := newRules(t, Config{}, testEnv())
	for name, tt := range map[string]struct {
		command string
		why     string
	}{
		"does not parse":         {`rm -rf 02-projects; echo "unterminated`, "could not parse"},
		"inner script unparsed":  {`bash -c 'if then'`, "could not parse"},
		"too large":              {strings.Repeat("echo ok; ", maxCommandBytes/9+1), "KiB long"},
		"8 MiB of parentheses":   {strings.Repeat("(", 4<<20) + strings.Repeat(")", 4<<20), "KiB long"},
		"deep parentheses":       {strings.Repeat("(", maxNesting+1) + "true" + strings.Repeat(")", maxNesting+1), "levels deep"},
		"deep substitutions":     {strings.Repeat("$(", maxNesting+1) + strings.Repeat(")", maxNesting+1), "levels deep"},
		"deep arithmetic":        {"echo $((" + strings.Repeat("(", maxNesting) + "1" + strings.Repeat(")", maxNesting) + "))", "levels deep"},
		"deep inside bash -c":    {`bash -c "` + strings.Repeat("{ ", maxNesting+1) + "true;" + strings.Repeat(" }", maxNesting+1) + `"`, "levels deep"},
		"string built too large": {"a=" + strings.Repeat("x", 1<<10) + strings.Repeat("; a=$a$a", 8) + "; eval \"$a\"", "string longer"},
	} {
		start := time.Now()
		v := r.Check(tt.command)
		if v.Rule != "unjudgeable" || !strings.Contains(v.Reason, tt.why) {
			t.Errorf("%s: %+v, want unjudgeable saying %q", name, v, tt.why)
		}
		if d := time.Since(start); d > time.Second {
			t.Errorf("%s: Check took %v", name, d)
		}
	}
	// Within the bounds, nesting as deep as real commands go is judged.
	if v := r.Check(strings.Repeat("(", 50) + "rm -rf ~" + strings.Repeat(")", 50)); v.Rule != "rm-home" {
		t.Errorf("50 nested subshells: %+v, want rm-home", v)
	}
}

func FuzzCheck(f *testing.F) {
	for _, seed := range []string{
		`rm -rf /`, `:(){ :|:& };:`, `git push -f origin main`, "psql <<EOF\nDROP TABLE x;\nEOF",
		`bash -c "eval 'rm -rf ~'"`, `echo $(( $(f) ))`, `a=$'\x41\u00e9\101'; rm -rf "$a"`,
		`sudo -D / env -S 'nice -n 1 rm -rf *'`, `find / -exec sh -c 'dd of=/dev/sda' \;`,
		`x() { x | x & }`, `cat <<-'E' | bash` + "\n\trm -rf ~\n\tE", `[[ $(rm -rf /) ]]`,
		`coproc rm -rf ~`, `let x=$(rm -rf /)`, `declare -x D=/; rm -rf $D`, `rm -rf /[ho]*`,
		`rm -rf "$D/"*`, `find . -name '*.md' | xargs -0 rm`, `git checkout -- :/`, `git stash drop`,
		`: > 01-planning/_resume.md`, `chmod -R -w ~`, `curl -s x | sudo bash -s`, `bash <(wget -qO- x)`,
		`psql -c "WITH a AS (SELECT 1) DELETE FROM t -- WHERE"`, `truncate -s0 ~/.ssh/id_rsa`,
		strings.Repeat("(", 300) + strings.Repeat(")", 300), strings.Repeat("$((", 100) + "1" + strings.Repeat("))", 100),
		strings.Repeat("if true; then ", 200) + "rm -rf ~" + strings.Repeat("; fi", 200),
		"rm -rf \xff\xfe /", "echo '\xc3\x28' | sh", "a=$'\xff'; rm -rf \"$a/\"", "f() f() f() f() rm -rf /",
	} {
		f.Add(seed)
	}
	r := newRules(f, Config{Deny: []DenyRule{{Pattern: "make * install"}}, Allow: []string{"rm -rf /"}}, testEnv())
	f.Fuzz(func(t *testing.T, command string) {
		// A hang would stall the fuzzer silently; a watchdog turns it into a crash that
		// records the input.
		start := time.Now()
		watchdog := time.AfterFunc(30*time.Second, func() { panic(fmt.Sprintf("Check(%q) hangs", command)) })
		v := r.Check(command)
		watchdog.Stop()
		if v.Deny != (v.Rule != "") || v.Deny != (v.Reason != "") {
			t.Errorf("Check(%q) = %+v: Deny, Rule and Reason disagree", command, v)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("Check(%q) took %v", command, d)
		}
	})
}

func longCompound() string {
	steps := []string{
		`cd web && npm ci --no-audit`, `npm run build 2>&1 | tail -n 40`,
		`find . -name '*.pyc' -delete`, `git status --short | head -20`,
		`go test ./... -run 'TestSave|TestLoad' -count=1`, `grep -rn "TODO" src/ | wc -l`,
		`for f in migrations/*.sql; do psql -d app -f "$f" || exit 1; done`,
		`docker compose ps --format json | jq -r '.[].Name'`,
	}
	var parts []string
	for i := 0; len(parts) < 40; i++ {
		parts = append(parts, steps[i%len(steps)])
	}
	return strings.Join(parts, " && ")
}

func BenchmarkCheck(b *testing.B) {
	r := newRules(b, Config{Deny: []DenyRule{{Pattern: "terraform destroy"}}}, testEnv())
	for _, bc := range []struct{ name, command string }{
		{"simple", `go test ./...`},
		{"typical", `cd web && npm ci && npm run build 2>&1 | tail -n 50`},
		{"denied", `sudo rm -rf --preserve-root ~/`},
		{"nested", `bash -c "for f in *.sql; do psql -c \"\$(cat \$f)\"; done" && git push origin feature`},
		// A long compound command as agents write them: 40 steps of builds, tests,
		// finds, git and pipes, about 3 KB.
		{"long-compound", longCompound()},
	} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				r.Check(bc.command)
			}
		})
	}
}

// TestConfiguredLayout checks that a workspace that renames its projects folder,
// planning folder or save point (loader.Config) keeps them protected, and the
// defaults with them.
func TestConfiguredLayout(t *testing.T) {
	env := testEnv()
	env.ProjectsDir, env.PlanningDir, env.ResumeFile = "work/projects", "plan", "resume.md"
	r := newRules(t, Config{}, env)
	for command, rule := range map[string]string{
		`rm -rf work/projects`:                    "rm-projects",
		`rm -rf work/projects/12-api`:             "rm-projects",
		`rm -rf work/projects/12-api/plan`:        "rm-projects",
		`rm -rf 02-projects/03-x`:                 "rm-projects",
		`: > work/projects/12-api/plan/resume.md`: "overwrite-in-place",
		`rm -rf work/projects/12-api/03-working`:  "",
		`rm -rf work/build`:                       "",
	} {
		if v := r.Check(command); v.Rule != rule {
			t.Errorf("Check(%q) = %+v, want rule %q", command, v, rule)
		}
	}
}
