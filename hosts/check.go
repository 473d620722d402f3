package hosts

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"runtime"
	"strings"
)

// Report is what `ctx hosts check` finds on a host.
type Report struct {
	Host      string `json:"host"`
	Reachable bool   `json:"reachable"`
	Error     string `json:"error,omitempty"`
	OS        string `json:"os,omitempty"` // uname -sm
	Home      string `json:"home,omitempty"`
	Ctx       string `json:"ctx,omitempty"` // versions; "" when absent
	Claude    string `json:"claude,omitempty"`
	Tmux      string `json:"tmux,omitempty"`
	Git       string `json:"git,omitempty"`
	// Workspace tells whether the workspace's path exists there; SameRepo whether it
	// is a clone of this workspace's repository (its first commit is the same).
	Workspace bool     `json:"workspace"`
	SameRepo  *bool    `json:"same_repo,omitempty"`
	Systemd   bool     `json:"systemd"`
	Linger    string   `json:"linger,omitempty"` // yes or no, with systemd
	Problems  []string `json:"problems"`
	Warnings  []string `json:"warnings"`
}

// probe is the one shell command a check runs on the host: a line per fact, tab
// separated. Values come from the host's own tools; the workspace path and the ctx
// command are quoted by the caller.
const probe = `ws=$1; ctx=$2
printf 'os\t%s\n' "$(uname -sm 2>/dev/null)"
printf 'home\t%s\n' "$HOME"
printf 'ctx\t%s\n' "$("$ctx" --version 2>/dev/null | head -n 1)"
printf 'pathctx\t%s\n' "$(command -v ctx 2>/dev/null)"
printf 'claude\t%s\n' "$("${CTX_CLAUDE:-claude}" --version 2>/dev/null | head -n 1)"
printf 'tmux\t%s\n' "$(tmux -V 2>/dev/null)"
printf 'git\t%s\n' "$(git --version 2>/dev/null)"
if [ -d "$ws" ]; then printf 'workspace\tyes\n'; else printf 'workspace\tno\n'; fi
printf 'root\t%s\n' "$(git -C "$ws" rev-list --max-parents=0 HEAD 2>/dev/null | tail -n 1)"
if [ -d /run/systemd/system ]; then
  printf 'systemd\tyes\n'
  printf 'linger\t%s\n' "$(loginctl show-user "$(id -un)" -p Linger --value 2>/dev/null)"
else
  printf 'systemd\tno\n'
fi
`

// Check probes h: reachable, ctx, claude, tmux and git there and their versions, the
// workspace and whether it is a clone of the same repository (localRoot is this
// workspace's first commit, "" when it is not a repository), systemd and lingering.
// version is this ctx's, to warn of a mismatch.
func (c *Client) Check(ctx context.Context, h Host, localRoot, version string) Report {
	r := Report{Host: h.Name, Problems: []string{}, Warnings: []string{}}
	ctx, cancel := context.WithTimeout(ctx, c.ConnectTimeout+c.Timeout)
	defer cancel()
	cmd := c.Command(ctx, h, false, "sh", "-c", probe, "ctx-probe", h.Workspace, h.CtxCommand())
	out, err := cmd.Output()
	if errors.Is(err, exec.ErrWaitDelay) {
		err = nil
	}
	if err != nil {
		detail := err.Error()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			detail = cmp.Or(LastLine(string(ee.Stderr)), detail)
		}
		if ctx.Err() != nil {
			detail = fmt.Sprintf("no answer within %s", c.ConnectTimeout+c.Timeout)
		}
		r.Error = detail
		r.Problems = append(r.Problems, "unreachable: "+detail)
		return r
	}
	r.Reachable = true
	facts := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), "\t"); ok {
			facts[k] = strings.TrimSpace(v)
		}
	}
	r.OS, r.Home, r.Ctx, r.Claude, r.Tmux, r.Git = facts["os"], facts["home"], facts["ctx"], facts["claude"], facts["tmux"], facts["git"]
	r.Workspace = facts["workspace"] == "yes"
	r.Systemd = facts["systemd"] == "yes"
	r.Linger = facts["linger"]
	for _, tool := range []struct{ name, version, fix string }{
		{"ctx", r.Ctx, "ctx hosts add " + h.Name + " --install, or install it there"},
		{"claude", r.Claude, "npm install -g @anthropic-ai/claude-code there"},
		{"tmux", r.Tmux, "apt-get install tmux there"},
		{"git", r.Git, "apt-get install git there"},
	} {
		if tool.version == "" {
			r.Problems = append(r.Problems, fmt.Sprintf("%s not found (%s)", tool.name, tool.fix))
		}
	}
	if r.Ctx != "" && facts["pathctx"] == "" {
		// The agents' hooks run `ctx` from the PATH claude has there.
		r.Problems = append(r.Problems, fmt.Sprintf("ctx is at %s there but not on the PATH of a non-interactive login, where the agents' hooks look for it: put its folder on that PATH (e.g. in ~/.profile, or PermitUserEnvironment and ~/.ssh/environment)", h.CtxCommand()))
	}
	if r.Ctx != "" && version != "" && !strings.Contains(r.Ctx, version) {
		r.Warnings = append(r.Warnings, fmt.Sprintf("ctx there is %q, here %q: install the same version on both", r.Ctx, version))
	}
	if want := ThisMachine(); r.OS != "" && r.OS != want {
		r.Warnings = append(r.Warnings, fmt.Sprintf("the host is %s, this machine %s: --install cannot copy this binary there", r.OS, want))
	}
	if !r.Workspace {
		r.Problems = append(r.Problems, fmt.Sprintf("no workspace at %s there (clone it there, or ctx hosts rm %s and add it with --remote-workspace)", h.Workspace, h.Name))
	} else if root := facts["root"]; localRoot != "" {
		same := root == localRoot
		r.SameRepo = &same
		if !same {
			r.Warnings = append(r.Warnings, fmt.Sprintf("the workspace at %s there is not a clone of this repository", h.Workspace))
		}
	}
	switch {
	case !r.Systemd:
		// Not a failure: without systemd the tmux server outlives the login by itself.
	case r.Linger != "yes":
		r.Warnings = append(r.Warnings, "lingering is off: agents end when the last login does (loginctl enable-linger there)")
	}
	return r
}

// ThisMachine is this machine's OS and architecture as `uname -sm` names them.
func ThisMachine() string {
	osName := map[string]string{"linux": "Linux", "darwin": "Darwin", "freebsd": "FreeBSD"}[runtime.GOOS]
	arch := map[string]string{"amd64": "x86_64", "arm64": "aarch64", "386": "i686"}[runtime.GOARCH]
	if runtime.GOOS == "darwin" && runtime.GOARCH == "arm64" {
		arch = "arm64"
	}
	return osName + " " + arch
}
