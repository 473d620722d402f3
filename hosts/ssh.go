package hosts

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ctxtools/ctx/internal/shquote"
)

// Client runs commands on hosts with the system ssh: one shared master connection
// per host (ControlMaster, kept 60 s after the last use), never a password prompt
// (BatchMode), a bounded wait for a host that does not answer (ConnectTimeout for the
// connection and its handshake, ServerAlive for a connection that goes silent, and a
// deadline on the whole command).
type Client struct {
	// SSH is the ssh program ("ssh" on the PATH).
	SSH string
	// ControlDir holds the master connections' sockets: private, and short, since a
	// socket's path is limited to about 100 bytes.
	ControlDir     string
	ConnectTimeout time.Duration
	// Timeout bounds one command once connected.
	Timeout time.Duration
	// Env is the environment ssh runs with (nil: this process's).
	Env []string
	// Columns is the width ctx on the host fits its text to ($COLUMNS there): the
	// width here, since what it prints is shown here as it comes; 0 leaves its lines
	// whole.
	Columns int
}

// Default timeouts.
const (
	DefaultConnectTimeout = 5 * time.Second
	DefaultTimeout        = 60 * time.Second
)

// NewClient makes a client whose master sockets live in runtimeDir/ssh, or, when that
// path is too long for a socket, in the system's temporary folder (ctx-ssh-<uid>,
// private).
func NewClient(runtimeDir string) (*Client, error) {
	dir := filepath.Join(runtimeDir, "ssh")
	// ssh names the socket dir/%C (40 characters) and first listens on that name plus
	// 17 more: within a socket path's 104 bytes (macOS; Linux allows 107).
	if runtimeDir == "" || len(dir)+1+40+17 > 104 {
		dir = filepath.Join(os.TempDir(), "ctx-ssh-"+strconv.Itoa(os.Getuid()))
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("ssh control folder: %w", err)
	}
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm()&0o077 != 0 || !ownedByMe(fi) {
		return nil, fmt.Errorf("ssh control folder %s is not private to this user: remove it", dir)
	}
	return &Client{SSH: "ssh", ControlDir: dir, ConnectTimeout: DefaultConnectTimeout, Timeout: DefaultTimeout}, nil
}

// options are the ssh options of every connection.
func (c *Client) options() []string {
	secs := int(c.ConnectTimeout.Round(time.Second) / time.Second)
	return []string{
		"-o", "BatchMode=yes",
		"-o", "ConnectTimeout=" + strconv.Itoa(max(1, secs)),
		"-o", "ControlMaster=auto",
		"-o", "ControlPath=" + filepath.Join(c.ControlDir, "%C"),
		"-o", "ControlPersist=60",
		"-o", "ServerAliveInterval=" + strconv.Itoa(max(1, secs)),
		"-o", "ServerAliveCountMax=2",
	}
}

// SSHCommand is ssh with this client's options, for a program that runs ssh itself
// (git's GIT_SSH_COMMAND).
func (c *Client) SSHCommand() []string {
	return append([]string{c.SSH}, c.options()...)
}

// GitURL is the repository at path on h, as git addresses it over ssh.
func GitURL(h Host, path string) string {
	if strings.HasPrefix(h.Destination, "ssh://") {
		return h.Destination + path
	}
	return h.Destination + ":" + path
}

// Command is the ssh command that runs words on h (quoted for its shell); tty asks
// for a terminal (an interactive attach).
//
// ssh hands its command to the account's login shell there, which need not be a POSIX
// shell (fish reads quotes its own way). So the command ssh is given is only `sh -s`,
// the same in every shell, and the quoted command line reaches that sh on its standard
// input. A terminal (tty) needs the input for the person: there the line is given to
// the login shell, which must then be POSIX (docs/hosts.md).
func (c *Client) Command(ctx context.Context, h Host, tty bool, words ...string) *exec.Cmd {
	args := c.options()
	line := shquote.Join(words)
	if tty {
		args = append(args, "-t", "--", h.Destination, line)
	} else {
		args = append(args, "--", h.Destination, "sh", "-s")
	}
	cmd := exec.CommandContext(ctx, c.SSH, args...)
	if !tty {
		cmd.Stdin = strings.NewReader("exec " + line + "\n")
	}
	cmd.Env = c.Env
	// A master connection that lingers may hold the output open: after ssh ends, its
	// output is complete.
	cmd.WaitDelay = 500 * time.Millisecond
	return cmd
}

// CtxWords is ctx on h with args, in h's workspace.
func CtxWords(h Host, args ...string) []string {
	return append([]string{h.CtxCommand(), "--workspace", h.Workspace}, args...)
}

// UnreachableError is a host ssh could not reach or that stopped answering.
type UnreachableError struct {
	Host   string
	Detail string
}

func (e *UnreachableError) Error() string {
	return fmt.Sprintf("host %s: unreachable: %s", e.Host, e.Detail)
}

// RemoteError is ctx on a host that ran and failed: its exit code and its message.
type RemoteError struct {
	Host string
	Code int
	Msg  string
}

func (e *RemoteError) Error() string {
	return fmt.Sprintf("host %s: %s", e.Host, e.Msg)
}

// Run runs ctx with args on h and returns what it printed. A host that cannot be
// reached, or does not answer within the connect timeout plus the command's, is an
// UnreachableError; ctx failing there is a RemoteError with its exit code.
func (c *Client) Run(ctx context.Context, h Host, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, c.ConnectTimeout+c.Timeout)
	defer cancel()
	// env sets the width for ctx alone; a missing ctx is env's exit 127, as the
	// shell's.
	words := append([]string{"env", "COLUMNS=" + strconv.Itoa(c.Columns)}, CtxWords(h, args...)...)
	cmd := c.Command(ctx, h, false, words...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if errors.Is(err, exec.ErrWaitDelay) && cmd.ProcessState != nil && cmd.ProcessState.Success() {
		err = nil
	}
	if err == nil {
		return out.Bytes(), nil
	}
	msg := LastLine(errb.String())
	if ctx.Err() != nil {
		return nil, &UnreachableError{Host: h.Name, Detail: fmt.Sprintf("no answer within %s", c.ConnectTimeout+c.Timeout)}
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		return nil, &UnreachableError{Host: h.Name, Detail: err.Error()}
	}
	switch code := ee.ExitCode(); code {
	case 255: // ssh's own failure: the connection
		return nil, &UnreachableError{Host: h.Name, Detail: cmp.Or(msg, "ssh failed")}
	case 127:
		return nil, &RemoteError{Host: h.Name, Code: 1, Msg: fmt.Sprintf("%s is not installed there (%s)", h.CtxCommand(), cmp.Or(msg, "command not found"))}
	default:
		return out.Bytes(), &RemoteError{Host: h.Name, Code: code, Msg: strings.TrimPrefix(cmp.Or(msg, fmt.Sprintf("ctx exited %d", code)), "ctx: ")}
	}
}

// Install copies the binary at local to h as ~/.local/bin/ctx (home is h's home
// folder, from a check) with scp over the same connection, and returns its path there.
func (c *Client) Install(ctx context.Context, h Host, local, home string) (string, error) {
	if err := CheckRemotePath(home); err != nil {
		return "", err
	}
	dir := home + "/.local/bin"
	ctx, cancel := context.WithTimeout(ctx, c.ConnectTimeout+c.Timeout)
	defer cancel()
	if out, err := c.Command(ctx, h, false, "mkdir", "-p", dir).CombinedOutput(); err != nil && !errors.Is(err, exec.ErrWaitDelay) {
		return "", fmt.Errorf("host %s: mkdir %s: %s", h.Name, dir, cmp.Or(LastLine(string(out)), err.Error()))
	}
	target := dir + "/ctx"
	scp := filepath.Join(filepath.Dir(c.SSH), "scp")
	if filepath.Dir(c.SSH) == "." {
		scp = "scp"
	}
	args := append(c.options(), "-q", "--", local, scpTarget(h.Destination, target+".new"))
	cmd := exec.CommandContext(ctx, scp, args...)
	cmd.Env, cmd.WaitDelay = c.Env, 500*time.Millisecond
	if out, err := cmd.CombinedOutput(); err != nil && !errors.Is(err, exec.ErrWaitDelay) {
		return "", fmt.Errorf("host %s: scp: %s", h.Name, cmp.Or(LastLine(string(out)), err.Error()))
	}
	// In place at once: a ctx running there from the old file keeps it.
	if out, err := c.Command(ctx, h, false, "sh", "-c", `chmod 755 "$1.new" && mv -f "$1.new" "$1"`, "install", target).CombinedOutput(); err != nil && !errors.Is(err, exec.ErrWaitDelay) {
		return "", fmt.Errorf("host %s: install: %s", h.Name, cmp.Or(LastLine(string(out)), err.Error()))
	}
	return target, nil
}

// scpTarget is dest:path in scp's form: ssh://user@host:port/path for a URL
// destination, else [user@]host:path.
func scpTarget(dest, path string) string {
	if rest, ok := strings.CutPrefix(dest, "ssh://"); ok {
		return "scp://" + rest + path // scp reads scp:// URIs, and "ssh://" as a host named ssh
	}
	return dest + ":" + path
}

// Close ends h's master connection, if one is up.
func (c *Client) Close(h Host) {
	args := append(c.options(), "-O", "exit", "--", h.Destination)
	_ = exec.Command(c.SSH, args...).Run()
}

// Each runs fn for every host, at most parallel at once, and joins the hosts'
// failures, each naming its host: one host down is one error, never a lost answer
// from the others.
func Each(hosts []Host, parallel int, fn func(Host) error) error {
	errs := make([]error, len(hosts)) // by host: the lines come out in host order
	var wg sync.WaitGroup
	sem := make(chan struct{}, max(1, parallel))
	for i, h := range hosts {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			errs[i] = fn(h)
		})
	}
	wg.Wait()
	return errors.Join(errs...) // one line per host that failed
}

// LastLine is the last non-blank line of a command's error output: its message.
func LastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}
