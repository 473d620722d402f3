package agents

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// DefaultSocket is ctx's own tmux server (`tmux -L ctx`): apart from the person's
// server and its configuration (session restorers and the like).
const DefaultSocket = "ctx"

// tmuxTimeout bounds one tmux call: measured at 12–40 ms on a warm server.
const tmuxTimeout = 10 * time.Second

// tmuxConf is the configuration ctx's server starts with: a long history from the
// first pane on (it cannot be raised for a pane that exists), and dead panes kept so
// an exit status and the last screen can be read.
const tmuxConf = "set -g history-limit 20000\nset -g remain-on-exit on\n"

// Tmux runs the tmux CLI against one server. Every call is here, so the exact argv is
// visible in one place.
type Tmux struct {
	Socket string
	Conf   string // the config file the server starts with
	Env    []string
	// SystemdDir is where a running systemd shows itself ("" for
	// /run/systemd/system): there, the server is started in a scope of the user's
	// manager, so that it outlives the login that started it (with lingering on).
	SystemdDir string
}

// ErrNoTmux says tmux is not installed.
var ErrNoTmux = errors.New("tmux is not installed (apt-get install tmux, brew install tmux)")

func (t Tmux) run(args ...string) (string, error) {
	return t.runWith(nil, args...)
}

// runWith runs tmux with args, behind the words of wrap (systemd-run …) when given.
func (t Tmux) runWith(wrap []string, args ...string) (string, error) {
	if _, err := exec.LookPath("tmux"); err != nil {
		return "", ErrNoTmux
	}
	ctx, cancel := context.WithTimeout(context.Background(), tmuxTimeout)
	defer cancel()
	full := []string{"-L", t.Socket}
	if t.Conf != "" {
		full = append(full, "-f", t.Conf)
	}
	argv := append(append(append([]string{}, wrap...), "tmux"), append(full, args...)...)
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	if t.Env != nil {
		cmd.Env = t.Env
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("tmux %s: %w: %s", args[0], err, strings.TrimSpace(errb.String()))
	}
	return out.String(), nil
}

// WriteConf writes ctx's tmux configuration into dir and points t at it.
func (t *Tmux) WriteConf(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	t.Conf = filepath.Join(dir, "tmux.conf")
	if b, err := os.ReadFile(t.Conf); err == nil && string(b) == tmuxConf {
		return nil
	}
	return os.WriteFile(t.Conf, []byte(tmuxConf), 0o644)
}

// NewSession starts argv (no shell) in a detached session named name in dir, with env
// set for the session.
func (t Tmux) NewSession(name, dir string, env map[string]string, argv []string) error {
	args := []string{"new-session", "-d", "-s", name, "-x", "200", "-y", "50", "-c", dir}
	for k, v := range env {
		args = append(args, "-e", k+"="+v)
	}
	args = append(args, "--")
	args = append(args, argv...)
	var err error
	if scope := t.scope(); scope != nil {
		// The server starts with this session: in a scope of the user's systemd, or,
		// where that cannot be had (no user manager), as before.
		if _, err = t.runWith(scope, args...); err != nil {
			if _, has := t.run("has-session", "-t", "="+name); has == nil {
				err = nil // systemd-run failed after tmux had made the session
			} else {
				_, err = t.run(args...)
			}
		}
	} else {
		_, err = t.run(args...)
	}
	if err == nil {
		// For a server started before ctx's config (another workspace's): keep dead
		// panes in this session all the same.
		_, _ = t.run("set-option", "-t", "="+name+":", "remain-on-exit", "on")
	}
	return err
}

// Respawn starts argv in the session's pane again, killing what runs there: the same
// window a person may be watching gets the new process.
func (t Tmux) Respawn(name, dir string, env map[string]string, argv []string) error {
	args := []string{"respawn-pane", "-k", "-t", "=" + name + ":", "-c", dir}
	for k, v := range env {
		args = append(args, "-e", k+"="+v)
	}
	args = append(args, "--")
	_, err := t.run(append(args, argv...)...)
	return err
}

// scope is the systemd-run command the server is started behind: on a machine where
// systemd runs, the user lingers and ctx's server is not up yet. A plain tmux server
// is a child of the login that starts it, and logind ends it with the login where
// KillUserProcesses is on; in a scope of a lingering user's manager it stays (ctx
// hosts check says whether the user lingers).
func (t Tmux) scope() []string {
	dir := t.SystemdDir
	if dir == "" {
		dir = "/run/systemd/system"
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return nil
	}
	if _, err := exec.LookPath("systemd-run"); err != nil {
		return nil
	}
	// The user's manager, and every scope of it, ends soon after the last login
	// unless the user lingers; a server in the login's own scope outlives it where
	// KillUserProcesses is off (the default of most distributions). Only with
	// lingering is the manager's scope the safer home.
	out, err := exec.Command("loginctl", "show-user", strconv.Itoa(os.Getuid()), "-p", "Linger", "--value").Output()
	if err != nil || strings.TrimSpace(string(out)) != "yes" {
		return nil
	}
	if _, err := t.run("list-sessions"); err == nil {
		return nil // the server runs: a new session joins it
	}
	return []string{"systemd-run", "--user", "--scope", "--quiet", "--collect", "--unit", "ctx-tmux-" + t.Socket + "-" + strconv.Itoa(os.Getpid()), "--"}
}

// Pane is what tmux says of a session's pane.
type Pane struct {
	Session    string
	Dead       bool
	DeadStatus int
	PID        int
	Attached   bool
}

// Panes lists every session's first pane in one call; an absent server lists none.
func (t Tmux) Panes() (map[string]Pane, error) {
	out, err := t.run("list-panes", "-a", "-F", "#{session_name}\t#{pane_dead}\t#{pane_dead_status}\t#{pane_pid}\t#{session_attached}\t#{pane_dead_signal}")
	if err != nil {
		if errors.Is(err, ErrNoTmux) {
			return nil, err
		}
		// No server running ("no server running", "error connecting"): no sessions.
		return map[string]Pane{}, nil
	}
	panes := map[string]Pane{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Split(line, "\t")
		if len(f) < 5 { // pane_dead_signal is 3.3's; older tmux prints one field fewer
			continue
		}
		if _, seen := panes[f[0]]; seen {
			continue
		}
		status, err := strconv.Atoi(f[2])
		if err != nil && f[1] == "1" {
			status = -1 // dead, but tmux did not see how (the pty closed before the exit)
		}
		pid, _ := strconv.Atoi(f[3])
		att, _ := strconv.Atoi(f[4])
		p := Pane{Session: f[0], Dead: f[1] == "1", DeadStatus: status, PID: pid, Attached: att > 0}
		// Killed by a signal: no status, the signal apart; reported as a shell does.
		if len(f) > 5 && f[5] != "" {
			if sig, err := strconv.Atoi(f[5]); err == nil && sig > 0 {
				p.DeadStatus = 128 + sig
			}
		}
		// tmux 3.3a can show a pane whose process is an unreaped zombie as alive; the
		// kernel still holds its wait status.
		if !p.Dead && zombie(pid) {
			p.Dead, p.DeadStatus = true, zombieStatus(pid)
		}
		panes[f[0]] = p
	}
	return panes, nil
}

// Capture returns the pane's text: the visible screen, or with history the whole
// scrollback, wrapped lines joined.
func (t Tmux) Capture(name string, history bool) (string, error) {
	args := []string{"capture-pane", "-p", "-J", "-t", "=" + name + ":"}
	if history {
		args = append(args, "-S", "-", "-E", "-")
	}
	return t.run(args...)
}

// CaptureStyled returns the visible screen and up to history lines above it, with
// the colours and attributes as SGR sequences (capture-pane -e; internal/screen
// reads them).
func (t Tmux) CaptureStyled(name string, history int) (string, error) {
	return t.run("capture-pane", "-p", "-e", "-t", "="+name+":", "-S", strconv.Itoa(-history))
}

// Watch follows the session's output through tmux's control mode: a read-only client
// that does not change the window's size. Each burst of output calls changed, which
// must not block. It returns when ctx ends or the session does (nil), or when the
// client cannot attach.
func (t Tmux) Watch(ctx context.Context, name string, changed func()) error {
	if _, err := exec.LookPath("tmux"); err != nil {
		return ErrNoTmux
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	cmd := exec.CommandContext(ctx, "tmux", "-L", t.Socket, "-C", "attach-session", "-r", "-t", "="+name)
	if t.Env != nil {
		cmd.Env = t.Env
	}
	// The client lives while its input is open: the pipe is held until the end.
	in, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	defer func() { _ = in.Close() }()
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("tmux -C: %w", err)
	}
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 64<<10), 4<<20) // %output lines carry the bytes, escaped
	attached := false
	for sc.Scan() {
		line := sc.Bytes()
		switch {
		case bytes.HasPrefix(line, []byte("%output ")), bytes.HasPrefix(line, []byte("%extended-output ")):
			changed()
		case bytes.HasPrefix(line, []byte("%session-changed ")):
			attached = true
		case bytes.HasPrefix(line, []byte("%exit")):
			cancel()
		}
	}
	_ = in.Close()
	err = cmd.Wait()
	if !attached && ctx.Err() == nil {
		return fmt.Errorf("tmux -C attach %s: %w: %s", name, err, strings.TrimSpace(errb.String()))
	}
	return nil
}

// Keys sends keys to the pane: each either literal text or, with named, one of tmux's
// key names (Enter, Escape, C-c, Up); the caller checks which names it allows.
func (t Tmux) Keys(name string, keys ...Keystroke) error {
	for i, k := range keys {
		if i > 0 && k.Named && !keys[i-1].Named {
			time.Sleep(typedSettle)
		}
		args := []string{"send-keys", "-t", "=" + name + ":"}
		if !k.Named {
			args = append(args, "-l")
		}
		if _, err := t.run(append(args, k.Value)...); err != nil {
			return err
		}
	}
	return nil
}

// Keystroke is one item of Tmux.Keys.
type Keystroke struct {
	Value string
	Named bool
}

// typedSettle is the pause between typed text and a key after it: Claude Code's prompt
// box takes typed text in bursts, and an Enter right behind it can land first.
const typedSettle = 150 * time.Millisecond

// Type types text literally into the pane, then presses Enter.
func (t Tmux) Type(name, text string) error {
	if _, err := t.run("send-keys", "-t", "="+name+":", "-l", text); err != nil {
		return err
	}
	time.Sleep(typedSettle)
	_, err := t.run("send-keys", "-t", "="+name+":", "Enter")
	return err
}

// Key presses one named key (Escape, C-c).
func (t Tmux) Key(name, key string) error {
	_, err := t.run("send-keys", "-t", "="+name+":", key)
	return err
}

// Kill ends a session (the pane's process group gets SIGHUP).
func (t Tmux) Kill(name string) error {
	_, err := t.run("kill-session", "-t", "="+name)
	return err
}

// Attach returns the command that attaches a terminal to the session.
func (t Tmux) Attach(name string, readOnly bool) []string {
	args := []string{"tmux", "-L", t.Socket, "attach-session", "-t", "=" + name}
	if readOnly {
		args = append(args, "-r")
	}
	return args
}

func zombie(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// pid (comm) state ...: comm may hold spaces and parentheses; the state follows the
	// last ')'.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i > 0 && i+2 < len(s) && s[i+2] == 'Z'
}

// zombieStatus reads the wait status a zombie left (/proc/<pid>/stat, its last field,
// Linux 3.5+) as a shell reports it: 128+N for signal N, else the exit code; -1 when
// unknown.
func zombieStatus(pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return -1
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	if len(f) < 50 {
		return -1
	}
	ws, err := strconv.Atoi(f[len(f)-1])
	if err != nil {
		return -1
	}
	if sig := ws & 0x7f; sig != 0 {
		return 128 + sig
	}
	return (ws >> 8) & 0xff
}
