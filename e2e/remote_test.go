//go:build e2e

package e2e

import (
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// Remote is "another machine": a second local account, created for the test, reached
// through a real OpenSSH server on a loopback port. It has its own HOME, tmux server,
// ctx, Claude Code (the pinned client, shared read-only) and a clone of the workspace;
// the local side reaches it only through ssh, under the alias Alias in the client's
// configuration.
type Remote struct {
	Alias     string
	User      string
	Home      string
	Workspace string
	Port      int
	dir       string // sshd's folder: config, host key, authorized keys
	sshd      *exec.Cmd
}

// Stop ends the host's sshd and every login on it: the machine is gone from the
// network (its agents run on).
func (r *Remote) Stop() {
	_ = r.sshd.Process.Kill()
	_ = exec.Command("pkill", "-KILL", "-u", r.User, "-x", "sshd").Run()
}

var remoteSeq atomic.Int32

// NewRemote makes the account, starts its sshd and writes the client's ssh
// configuration (an `ssh` on the Env's PATH that reads it): `ssh ALIAS` logs in.
func (e *Env) NewRemote(alias string) *Remote {
	t := e.T
	t.Helper()
	if os.Geteuid() != 0 {
		Missing(t, "a second local user for the remote (run the e2e suite as root, as CI does)")
	}
	sshd, err := exec.LookPath("sshd")
	if err != nil {
		if _, serr := os.Stat("/usr/sbin/sshd"); serr != nil {
			Missing(t, "sshd (apt-get install openssh-server)")
		}
		sshd = "/usr/sbin/sshd"
	}
	for _, tool := range []string{"useradd", "userdel", "ssh", "ssh-keygen"} {
		if _, err := exec.LookPath(tool); err != nil {
			Missing(t, "%s (apt-get install openssh-client passwd)", tool)
		}
	}
	r := &Remote{Alias: alias, User: fmt.Sprintf("ctxr%d%d", os.Getpid()%100000, remoteSeq.Add(1))}
	run := func(name string, args ...string) string {
		t.Helper()
		out, err := exec.Command(name, args...).CombinedOutput()
		if err != nil {
			t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	// A password of "*": no password login, and not a locked account, which sshd
	// without PAM refuses.
	run("useradd", "-m", "-s", "/bin/sh", "-p", "*", r.User)
	r.Home = "/home/" + r.User
	t.Cleanup(func() {
		_ = exec.Command("pkill", "-KILL", "-u", r.User).Run()
		time.Sleep(200 * time.Millisecond)
		_ = exec.Command("userdel", "-r", "-f", r.User).Run()
	})
	// sshd reads the authorized keys as the user: its folder must be theirs to read.
	r.dir, err = os.MkdirTemp("/var/tmp", "ctx-e2e-ssh-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(r.dir) })
	_ = os.Chmod(r.dir, 0o755)
	run("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", filepath.Join(r.dir, "hostkey"))
	key := filepath.Join(e.Root, "ssh-key")
	if _, err := os.Stat(key); err != nil {
		run("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", key)
	}
	pub, _ := os.ReadFile(key + ".pub")
	if err := os.WriteFile(filepath.Join(r.dir, "authorized_keys"), pub, 0o644); err != nil {
		t.Fatal(err)
	}

	// The remote's programs: ctx (a copy, theirs), the pinned Claude Code (one shared,
	// read-only copy), tmux and git from the system.
	bin := filepath.Join(r.Home, "bin")
	run("install", "-d", "-o", r.User, "-g", r.User, bin)
	run("install", "-o", r.User, "-g", r.User, "-m", "0755", filepath.Join(e.CtxDir, "ctx"), filepath.Join(bin, "ctx"))
	claudeShared := sharedClaude(t, e.Claude)

	// The remote's workspace: a clone of this one, theirs.
	r.Workspace = filepath.Join(r.Home, "ws")
	run("git", "clone", "-q", e.Workspace, r.Workspace)
	run("chown", "-R", r.User+":"+r.User, r.Workspace)
	claudeJSON := fmt.Sprintf(`{"hasCompletedOnboarding":true,"customApiKeyResponses":{"approved":[%q],"rejected":[]},"projects":{%q:{"hasTrustDialogAccepted":true}}}`,
		apiKey[len(apiKey)-20:], r.Workspace)
	if err := os.WriteFile(filepath.Join(r.Home, ".claude.json"), []byte(claudeJSON), 0o600); err != nil {
		t.Fatal(err)
	}
	run("chown", r.User+":"+r.User, filepath.Join(r.Home, ".claude.json"))
	run("git", "config", "--system", "--add", "safe.directory", "*")

	// sshd on a loopback port, for this user only, with the environment an agent
	// needs: ctx on the PATH, the stand-in model.
	r.Port = freePort(t)
	env := []string{
		"PATH=" + bin + ":" + filepath.Join(r.Home, ".local/bin") + ":/usr/local/bin:/usr/bin:/bin",
		"CTX_CLAUDE=" + claudeShared,
		"ANTHROPIC_BASE_URL=" + e.Model.URL,
		"ANTHROPIC_API_KEY=" + apiKey,
		"DISABLE_TELEMETRY=1", "DISABLE_AUTOUPDATER=1", "DISABLE_ERROR_REPORTING=1",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "LANG=C.UTF-8", "TERM=xterm-256color",
		"GIT_AUTHOR_NAME=e2e", "GIT_AUTHOR_EMAIL=e2e@example.invalid",
		"GIT_COMMITTER_NAME=e2e", "GIT_COMMITTER_EMAIL=e2e@example.invalid",
	}
	conf := fmt.Sprintf(`Port %d
ListenAddress 127.0.0.1
HostKey %s
PidFile %s
AuthorizedKeysFile %s
StrictModes no
UsePAM no
PasswordAuthentication no
KbdInteractiveAuthentication no
PubkeyAuthentication yes
PermitRootLogin no
AllowUsers %s
SetEnv %s
Subsystem sftp internal-sftp
LogLevel ERROR
`, r.Port, filepath.Join(r.dir, "hostkey"), filepath.Join(r.dir, "sshd.pid"), filepath.Join(r.dir, "authorized_keys"), r.User, strings.Join(env, " "))
	confPath := filepath.Join(r.dir, "sshd_config")
	if err := os.WriteFile(confPath, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	_ = os.MkdirAll("/run/sshd", 0o755) // sshd's privilege separation folder
	cmd := exec.Command(sshd, "-D", "-e", "-f", confPath)
	log, _ := os.Create(filepath.Join(e.Root, "sshd-"+alias+".log"))
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatalf("sshd: %v", err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	r.sshd = cmd
	waitPort(t, r.Port)

	// The client: the alias in a config of its own, read by an `ssh` on the Env's PATH
	// (ssh reads ~/.ssh/config from the account's home, not $HOME).
	e.addSSHHost(alias, fmt.Sprintf("  HostName 127.0.0.1\n  Port %d\n  User %s\n  IdentityFile %s\n", r.Port, r.User, key))
	return r
}

// addSSHHost adds a Host block to the Env's ssh configuration, and the `ssh` and `scp`
// that read it to the Env's PATH.
func (e *Env) addSSHHost(alias, body string) {
	e.T.Helper()
	cfg := filepath.Join(e.Root, "ssh_config")
	f, err := os.OpenFile(cfg, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		e.T.Fatal(err)
	}
	fmt.Fprintf(f, "Host %s\n%s  IdentitiesOnly yes\n  UserKnownHostsFile %s\n  StrictHostKeyChecking accept-new\n  LogLevel ERROR\n",
		alias, body, filepath.Join(e.Root, "known_hosts"))
	_ = f.Close()
	for _, tool := range []string{"ssh", "scp"} {
		wrapper := fmt.Sprintf("#!/bin/sh\nexec /usr/bin/%s -F %s \"$@\"\n", tool, cfg)
		if err := os.WriteFile(filepath.Join(e.Root, "claude-bin", tool), []byte(wrapper), 0o755); err != nil {
			e.T.Fatal(err)
		}
	}
}

// RemoteRun runs a shell command as the remote's user, through ssh (as the local side
// would), and returns its output.
func (e *Env) RemoteRun(r *Remote, command string) (string, error) {
	cmd := exec.Command(filepath.Join(e.Root, "claude-bin", "ssh"), "-o", "BatchMode=yes", r.Alias, command)
	cmd.Env = e.environ(true)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// sharedClaude is the pinned client where every account can run it: a hard link (or a
// copy) in a world-readable folder.
func sharedClaude(t testing.TB, bin string) string {
	t.Helper()
	dir := "/var/tmp/ctx-e2e-shared"
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	_ = os.Chmod(dir, 0o755)
	dst := filepath.Join(dir, "claude-"+ClaudeVersion)
	if fi, err := os.Stat(dst); err == nil && fi.Mode()&0o005 == 0o005 {
		return dst
	}
	tmp := dst + ".tmp" + strconv.Itoa(os.Getpid())
	if err := os.Link(bin, tmp); err != nil {
		in, err := os.Open(bin)
		if err != nil {
			t.Fatal(err)
		}
		out, err := os.OpenFile(tmp, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
		if err != nil {
			t.Fatal(err)
		}
		_, err = io.Copy(out, in)
		_ = in.Close()
		if cerr := out.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	_ = os.Chmod(tmp, 0o755)
	if err := os.Rename(tmp, dst); err != nil {
		t.Fatal(err)
	}
	return dst
}

func freePort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = ln.Close() }()
	return ln.Addr().(*net.TCPAddr).Port
}

func waitPort(t testing.TB, port int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), time.Second)
		if err == nil {
			_ = c.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("nothing listens on port %d: %v", port, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// blackHole accepts connections and never answers: a host that has stopped.
func blackHole(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var held []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			held = append(held, c)
		}
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		for _, c := range held {
			_ = c.Close()
		}
	})
	return ln.Addr().(*net.TCPAddr).Port
}
