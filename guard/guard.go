// Package guard decides whether a Bash command an agent is about to run is destructive
// enough to refuse: recursive deletion of the filesystem, the home folder or the
// workspace, forced pushes to main, discarding uncommitted work, dropping databases,
// formatting or overwriting disks, and fork bombs.
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
//	git-force-push       a forced push to main or master, or to a branch the guard cannot see
//	git-delete-main      a push that deletes the remote main or master
//	git-reset-hard       git reset --hard while Env.Dirty reports uncommitted changes
//	git-clean            git clean -f with -d, -x or -X while Env.Dirty reports changes
//	sql-drop             DROP DATABASE, TABLE or SCHEMA sent to a SQL client
//	mkfs                 making a filesystem (mkfs, mkfs.*, mke2fs and the like)
//	dd-device            dd of=/dev/... other than /dev/null and its kin
//	device-write         a redirection or tee onto a disk device
//	fork-bomb            a function that spawns copies of itself in a pipe or background
//	too-deep             scripts nested inside strings beyond what the guard will parse
//	config-deny          a pattern from the workspace's guard.deny
//
// A command that does not parse is checked by a conservative textual fallback that only
// recognises the fork bomb and the literal `rm -rf /` and `rm -rf ~` forms: the shell
// would refuse to run it anyway, so the fallback only has to catch what a lenient shell
// might still execute.
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
}

type denyPattern struct {
	words  []string
	source string
	reason string
}

type protectedPath struct {
	path string
	rule string
}

var errEmptyPattern = errors.New("empty pattern")

// New prepares the rules for env. It fails when a deny pattern or an allow entry is
// empty or is not a single simple command of plain words.
func New(cfg Config, env Env) (*Rules, error) {
	env.Home = cleanAbs(env.Home)
	env.Workspace = cleanAbs(env.Workspace)
	env.Cwd = cleanAbs(env.Cwd)
	if env.Cwd == "" {
		env.Cwd = env.Workspace
	}
	r := &Rules{env: env}
	var errs []error
	for i, d := range cfg.Deny {
		words, err := patternWords(d.Pattern, false)
		if err == nil && words[0] == "*" {
			err = errors.New("the first word must name a command, not *")
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("guard.deny[%d] %q: %w", i, d.Pattern, err))
			continue
		}
		r.deny = append(r.deny, denyPattern{words: words, source: strings.Join(words, " "), reason: strings.TrimSpace(d.Reason)})
	}
	for i, a := range cfg.Allow {
		words, err := patternWords(a, true)
		if err != nil {
			errs = append(errs, fmt.Errorf("guard.allow[%d] %q: %w", i, a, err))
			continue
		}
		r.allow = append(r.allow, r.expandAllow(words))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	r.protected = protectedPaths(env.Home, env.Workspace)
	return r, nil
}

// Check parses command as bash and reports whether it must be refused. It starts no
// process other than the injected Env.Dirty, and only for git reset --hard and
// git clean.
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
