// Package guard decides whether a Bash command an agent is about to run is destructive
// enough to refuse: recursive deletion of the filesystem, the home folder, the
// workspace or its projects (by rm, find or xargs), forced pushes to main, discarding
// uncommitted work or stashes, emptying or dropping database tables, overwriting files
// in place, recursive permission changes, running a download unread, formatting or
// overwriting disks, and fork bombs.
//
// It works on the parsed command (mvdan.cc/sh/v3, bash dialect) rather than on its text,
// so quoting cannot hide a command and text that merely mentions one (an echo, a grep
// pattern, a comment, a heredoc fed to cat) is not mistaken for it. Every simple command
// is visited: lists and pipelines, subshells and groups, command and process
// substitutions, compound commands, function bodies, and the scripts given to
// `bash -c`, `eval`, `trap`, `env -S`, `find -exec` or fed to a shell on stdin, parsed
// recursively to a fixed depth.
//
// Verdict.Rule names the check that refused a command:
//
//	rm-root              rm -r (with or without -f) of / or /*
//	rm-no-preserve-root  rm --no-preserve-root, whatever the target
//	rm-home              rm -r of the home folder or all of its contents
//	rm-workspace         rm -r of the workspace root or all of its contents
//	rm-parent            rm -r of a folder that holds the workspace or the home folder
//	rm-system            rm -r of a system folder such as /usr, /etc or /var/lib
//	rm-projects          rm -r of the projects folder (02-projects, 02-builds), of a project
//	                     folder in it, or of a 01-planning folder, or of all their contents
//	rm-unset-var         rm -r of a path that a variable the command never assigns would
//	                     collapse to / or another protected folder, as in "$DIR/"
//	find-delete          find -delete or find -exec rm over a protected or project folder,
//	                     unless its tests limit it to generated files such as *.pyc
//	xargs-rm             xargs rm fed paths the guard cannot see (a file, another command)
//	                     or by a find that find-delete would refuse
//	git-force-push       a forced push to main or master, or to a branch the guard cannot see
//	git-delete-main      a push that deletes the remote main or master
//	git-reset-hard       git reset --hard while Env.Dirty reports uncommitted changes
//	git-clean            git clean -f with -d, -x or -X while Env.Dirty reports changes
//	git-checkout-discard git checkout -f, or of the whole tree (., :/, *, a folder), over changes
//	git-restore-discard  git restore of the whole tree's working files over changes
//	git-switch-discard   git switch -f or --discard-changes over changes
//	git-stash-drop       git stash drop or clear, always: a dropped stash has no name left
//	overwrite-in-place   shred; truncate of a file in the workspace or home; > or tee onto a
//	                     save point, plan, .ctx/config.yaml, .env or a file in ~/.ssh
//	chmod-recursive      chmod -R over /, a system folder, home, the workspace or projects folder
//	chown-recursive      chown -R or chgrp -R over the same folders
//	pipe-to-shell        a download run by a shell unread: curl URL | sh, bash <(curl URL)
//	sql-drop             DROP DATABASE, TABLE or SCHEMA sent to a SQL client
//	sql-truncate         TRUNCATE sent to a SQL client
//	sql-delete-all       DELETE without WHERE sent to a SQL client
//	mkfs                 making a filesystem (mkfs, mkfs.*, mke2fs and the like)
//	dd-device            dd of=/dev/... other than /dev/null and its kin
//	device-write         a redirection or tee onto a disk device
//	fork-bomb            a function that spawns copies of itself in a pipe or background
//	too-deep             scripts nested inside strings beyond what the guard will parse
//	unjudgeable          a command the guard cannot judge: it does not parse, or it is too
//	                     large or too deeply nested to parse safely
//	config-deny          a pattern from the workspace's guard.deny
//
// The guard fails closed: what it cannot parse or bound is refused with a reason saying
// so, never allowed. A command that does not parse first meets a textual fallback that
// recognises the fork bomb and the literal `rm -rf /` and `rm -rf ~` forms, only so that
// the reason can name them; anything else that does not parse is refused as unjudgeable.
package guard

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Config is what a workspace's .ctx/config.yaml may say about the guard, under its
// `guard:` key.
type Config struct {
	// Deny lists extra commands to refuse. Each pattern is a sequence of words matched
	// against the start of a simple command's words, after wrappers such as sudo or env
	// are stripped; the word "*" matches any one word.
	Deny []DenyRule `yaml:"deny"`
	// Allow lists exact simple commands (compared word by word, so spacing and quoting
	// do not matter) that are never refused.
	Allow []string `yaml:"allow"`
	// Presets switches on rule sets for what lies outside the machine, by name
	// (Presets lists them): kubernetes, cloud, registries, publishing.
	Presets []string `yaml:"presets"`
	// Key names the config key the patterns come from, as the reasons of their
	// refusals and New's errors quote it: "guard" (guard.deny) when empty. The
	// auto-approve hook sets "auto_approve" for its own deny list.
	Key string `yaml:"-"`
}

// DenyRule is one workspace-specific command to refuse, with the reason shown to the
// agent.
type DenyRule struct {
	Pattern string `yaml:"pattern"`
	Reason  string `yaml:"reason"`
}

// Env is what the checks need to know about the machine the command runs on.
type Env struct {
	Home      string // the user's home folder
	Workspace string // the workspace root
	Cwd       string // the folder the command runs in; the workspace root when empty
	// Dirty reports whether the git repository at or above dir has uncommitted
	// changes. It is injected so that tests need no git; nil, or an unknown dir, counts
	// as dirty, because the guard cannot then prove that nothing would be lost.
	Dirty func(dir string) bool
	// Unique reports whether the branch of the repository at or above dir holds commits
	// no other branch, tag or remote-tracking branch holds (deleting it loses them).
	// nil asks Dirty instead, as the tests' machines do.
	Unique func(dir, branch string) bool
	// ProjectsDir, PlanningDir and ResumeFile are the workspace's layout names from
	// .ctx/config.yaml, when it changes them. Empty means ctx's defaults (02-projects,
	// 01-planning, _resume.md); the defaults and 02-builds are protected either way.
	ProjectsDir string
	PlanningDir string
	ResumeFile  string
}

// Verdict is the outcome of a Check.
type Verdict struct {
	Deny   bool
	Reason string // one sentence for the agent: what was refused, why, and what to do instead
	Rule   string // a short id such as "rm-root"; empty when allowed
}

// Rules are the built-in checks plus a workspace's additions and allowances, bound to
// one Env. A Rules is safe for concurrent use.
type Rules struct {
	env   Env
	deny  []denyPattern
	allow [][]string
	// protected are the folders whose recursive deletion is refused, most severe first,
	// used to match glob targets such as /ho*.
	protected []protectedPath
	// layout names the workspace's projects folders, planning folders and save points.
	layout layout
	// presets are the presets switched on (Config.Presets).
	presets []string
}

type denyPattern struct {
	words  []string
	source string
	reason string
	key    string // the config key, such as guard.deny
}

type protectedPath struct {
	path string
	rule string
}

var errEmptyPattern = errors.New("empty pattern")

// New prepares the rules for env. It always returns usable Rules: a deny pattern or an
// allow entry that is empty or is not a single simple command of plain words is left
// out and reported in the error, one line per entry, while the built-in rules and the
// valid entries stay in force. A caller shows the error and still checks the command.
func New(cfg Config, env Env) (*Rules, error) {
	env.Home = cleanAbs(env.Home)
	env.Workspace = cleanAbs(env.Workspace)
	env.Cwd = cleanAbs(env.Cwd)
	if env.Cwd == "" {
		env.Cwd = env.Workspace
	}
	r := &Rules{env: env}
	r.protected = protectedPaths(env.Home, env.Workspace)
	r.layout = newLayout(env)
	key := cfg.Key
	if key == "" {
		key = "guard"
	}
	var errs []error
	for i, d := range cfg.Deny {
		words, err := patternWords(d.Pattern, false)
		if err == nil && words[0] == "*" {
			err = errors.New("the first word must name a command, not *")
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s.deny[%d] %q: %w", key, i, d.Pattern, err))
			continue
		}
		r.deny = append(r.deny, denyPattern{words: words, source: strings.Join(words, " "), reason: strings.TrimSpace(d.Reason), key: key + ".deny"})
	}
	presets, err := checkPresetNames(cfg.Presets, key)
	r.presets = presets
	if err != nil {
		errs = append(errs, err)
	}
	for i, a := range cfg.Allow {
		words, err := patternWords(a, true)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s.allow[%d] %q: %w", key, i, a, err))
			continue
		}
		r.allow = append(r.allow, r.expandAllow(words))
	}
	return r, errors.Join(errs...)
}

// Check parses command as bash and reports whether it must be refused. It starts no
// process other than the injected Env.Dirty, and only for the git commands that
// discard uncommitted work. A command too large or too deeply nested to parse safely,
// or one that does not parse, is refused as unjudgeable.
func (r *Rules) Check(command string) Verdict {
	c := &checker{rules: r}
	c.script(command, &scope{cwd: r.env.Cwd})
	return c.verdict
}

func cleanAbs(p string) string {
	if p == "" || !filepath.IsAbs(p) {
		return ""
	}
	return filepath.Clean(p)
}

// patternWords turns a configured pattern into its words, using the shell's own quoting
// rules so that `rm -rf "my dir"` means three words. Expansions are refused in deny
// patterns because they would be matched literally, which is never what was meant; an
// allow entry may use ~ and $HOME, which expandAllow resolves.
func patternWords(p string, isAllow bool) ([]string, error) {
	if strings.TrimSpace(p) == "" {
		return nil, errEmptyPattern
	}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(p), "")
	if err != nil {
		return nil, fmt.Errorf("parse: %w", err)
	}
	if len(f.Stmts) != 1 {
		return nil, errors.New("must be a single command, without ; & && || or newlines")
	}
	st := f.Stmts[0]
	call, ok := st.Cmd.(*syntax.CallExpr)
	if !ok || st.Negated || st.Background || len(st.Redirs) > 0 || len(call.Assigns) > 0 || len(call.Args) == 0 {
		return nil, errors.New("must be a plain command: words only, without pipes, redirections, assignments or shell keywords")
	}
	words := make([]string, 0, len(call.Args))
	for _, w := range call.Args {
		s, ok := plainWord(w, isAllow)
		if !ok {
			return nil, fmt.Errorf("word %d: expansions and substitutions are not allowed", len(words)+1)
		}
		words = append(words, s)
	}
	return words, nil
}

// plainWord is the value of a word made only of literal and quoted text, plus, when
// homeOK, a $HOME or ${HOME} marker that expandAllow replaces.
func plainWord(w *syntax.Word, homeOK bool) (string, bool) {
	var b strings.Builder
	for i, part := range w.Parts {
		switch p := part.(type) {
		case *syntax.Lit:
			v := unescape(p.Value, quoteNone)
			if homeOK && i == 0 && (v == "~" || strings.HasPrefix(v, "~/")) {
				v = homeMarker + v[1:]
			}
			b.WriteString(v)
		case *syntax.SglQuoted:
			b.WriteString(singleQuoted(p))
		case *syntax.DblQuoted:
			for _, inner := range p.Parts {
				switch q := inner.(type) {
				case *syntax.Lit:
					b.WriteString(unescape(q.Value, quoteDouble))
				case *syntax.ParamExp:
					if !homeOK || paramName(q) != "HOME" {
						return "", false
					}
					b.WriteString(homeMarker)
				default:
					return "", false
				}
			}
		case *syntax.ParamExp:
			if !homeOK || paramName(p) != "HOME" {
				return "", false
			}
			b.WriteString(homeMarker)
		default:
			return "", false
		}
	}
	return b.String(), true
}

// homeMarker stands for the home folder in a parsed allow entry until the Env is known.
const homeMarker = "\x00HOME\x00"

func (r *Rules) expandAllow(words []string) []string {
	for i, w := range words {
		// Without a known home folder the marker stays, and the entry matches nothing.
		if strings.Contains(w, homeMarker) && r.env.Home != "" {
			words[i] = strings.ReplaceAll(w, homeMarker, r.env.Home)
		}
	}
	return words
}

// allowed reports whether args, fully known, equal an allow entry.
func (r *Rules) allowed(args []arg) bool {
	if len(r.allow) == 0 {
		return false
	}
next:
	for _, entry := range r.allow {
		if len(entry) != len(args) {
			continue
		}
		for i, a := range args {
			if !a.known || a.s != entry[i] {
				continue next
			}
		}
		return true
	}
	return false
}

// denied returns the first workspace deny pattern that args start with.
func (r *Rules) denied(args []arg) (denyPattern, bool) {
next:
	for _, d := range r.deny {
		if len(args) < len(d.words) {
			continue
		}
		for i, w := range d.words {
			a := args[i]
			if w == "*" {
				continue
			}
			if !a.known {
				continue next
			}
			got := a.s
			if i == 0 && !strings.Contains(w, "/") {
				got = commandName(got)
			}
			if got != w {
				continue next
			}
		}
		return d, true
	}
	return denyPattern{}, false
}

// protectedPaths lists, most severe first, the folders whose recursive deletion is
// refused: the root, the home folder, the workspace, their ancestors, and the system
// folders a working machine cannot lose.
func protectedPaths(home, workspace string) []protectedPath {
	ps := []protectedPath{{"/", ruleRmRoot}}
	if home != "" && home != "/" {
		ps = append(ps, protectedPath{home, ruleRmHome})
	}
	if workspace != "" && workspace != "/" && workspace != home {
		ps = append(ps, protectedPath{workspace, ruleRmWorkspace})
	}
	seen := map[string]bool{"/": true, home: true, workspace: true}
	for _, p := range []string{home, workspace} {
		for d := filepath.Dir(p); p != "" && !seen[d]; d = filepath.Dir(d) {
			seen[d] = true
			ps = append(ps, protectedPath{d, ruleRmParent})
		}
	}
	for _, d := range systemFolders {
		if !seen[d] {
			ps = append(ps, protectedPath{d, ruleRmSystem})
		}
	}
	return ps
}

// systemFolders are top-level folders of Linux and macOS whose loss breaks the machine.
// Only the folders themselves are listed: deleting something inside /var/tmp is normal.
var systemFolders = []string{
	"/bin", "/boot", "/dev", "/etc", "/lib", "/lib32", "/lib64", "/libx32", "/opt",
	"/proc", "/root", "/sbin", "/srv", "/sys", "/usr", "/var", "/home",
	"/usr/bin", "/usr/lib", "/usr/local", "/usr/sbin", "/usr/share", "/var/lib",
	"/Applications", "/Library", "/System", "/Users", "/Volumes", "/private",
}
