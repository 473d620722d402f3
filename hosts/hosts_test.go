package hosts

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ctxtools/ctx/loader"
)

func TestChecks(t *testing.T) {
	for _, name := range []string{"build", "gpu-1", "a", strings.Repeat("x", 32)} {
		if err := CheckName(name); err != nil {
			t.Errorf("name %q refused: %v", name, err)
		}
	}
	for _, name := range []string{"", "local", "Build", "-x", "a b", "a/b", strings.Repeat("x", 33), "x;y"} {
		if CheckName(name) == nil {
			t.Errorf("name %q accepted", name)
		}
	}
	for _, d := range []string{"build", "me@10.0.0.7", "ssh://me@host:2222", "me@[::1]", "host.example.com", "coder.ws-1", "me@host:22"} {
		if err := CheckDestination(d); err != nil {
			t.Errorf("destination %q refused: %v", d, err)
		}
	}
	for _, d := range []string{"", "-oProxyCommand=x", "a b", "me@host;rm", "$(id)", "host\n", "me@-x", "ssh://-x"} {
		if CheckDestination(d) == nil {
			t.Errorf("destination %q accepted", d)
		}
	}
	for _, p := range []string{"relative", "/a/../b", "/a\nb", "", "/a/"} {
		if CheckRemotePath(p) == nil {
			t.Errorf("path %q accepted", p)
		}
	}
	if err := CheckRemotePath("/home/me/my ws"); err != nil {
		t.Errorf("a path with a space: %v", err)
	}
}

func TestSet(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "02-projects"), 0o755); err != nil {
		t.Fatal(err)
	}
	ws, err := loader.Discover(loader.DiscoverOptions{Cwd: root})
	if err != nil {
		t.Fatal(err)
	}
	s := Open(ws)
	if all, err := s.All(); err != nil || len(all) != 0 {
		t.Fatalf("an empty list: %v %v", all, err)
	}
	if _, err := os.Stat(ws.StatePath("state", "hosts.json")); !os.IsNotExist(err) {
		t.Errorf("reading wrote a file")
	}
	for _, h := range []Host{{Name: "zeta", Destination: "z", Workspace: "/w"}, {Name: "alpha", Destination: "me@a", Workspace: "/w"}} {
		if err := s.Add(h); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Add(Host{Name: "alpha", Destination: "x", Workspace: "/w"}); err == nil {
		t.Error("a second alpha")
	}
	if err := s.Add(Host{Name: "bad", Destination: "-oX", Workspace: "/w"}); err == nil {
		t.Error("a bad destination")
	}
	all, _ := s.All()
	if len(all) != 2 || all[0].Name != "alpha" || all[1].Name != "zeta" {
		t.Errorf("list %+v", all)
	}
	if h, err := s.Get("zeta"); err != nil || h.Destination != "z" {
		t.Errorf("get %+v %v", h, err)
	}
	var nf *NotFoundError
	if _, err := s.Get("nope"); !errors.As(err, &nf) {
		t.Errorf("get of a missing host: %v", err)
	}
	if err := s.Remove("zeta"); err != nil {
		t.Fatal(err)
	}
	if err := s.Remove("zeta"); !errors.As(err, &nf) {
		t.Errorf("removing twice: %v", err)
	}
	// The list is state, not a tracked file: .ctx/state is git-ignored.
	if b, err := os.ReadFile(ws.StatePath("state", ".gitignore")); err != nil || !strings.Contains(string(b), "*") {
		t.Errorf(".ctx/state/.gitignore: %q %v", b, err)
	}
}

// A fake ssh: what the real one does for each outcome a command meets (exit 255 for
// its own failure, the remote command's code otherwise, silence), with the words it
// was given recorded.
func fakeSSH(t *testing.T, script string) *Client {
	t.Helper()
	dir := t.TempDir()
	bin := filepath.Join(dir, "ssh")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"+script+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return &Client{SSH: bin, ControlDir: dir, ConnectTimeout: time.Second, Timeout: time.Second}
}

func TestRunOutcomes(t *testing.T) {
	h := Host{Name: "build", Destination: "build", Workspace: "/home/me/my ws"}
	// What the login shell there is given (the last two words), then what sh reads.
	c := fakeSSH(t, `shift $(($# - 2)); printf '%s|' "$@"; cat`)
	c.Columns = 120 // the width here, for ctx there
	out, err := c.Run(context.Background(), h, "agents", "list", "--json")
	if err != nil || string(out) != "sh|-s|exec env 'COLUMNS=120' ctx --workspace '/home/me/my ws' agents list --json\n" {
		t.Errorf("the remote command: %q, %v", out, err)
	}
	// A word of a fish or csh user's text never reaches their shell: sh reads it.
	c = fakeSSH(t, `shift $(($# - 2)); "$@"`)
	evil := `x\'; touch /tmp/pwned-by-quote #`
	if out, err := c.Run(context.Background(), Host{Name: "b", Destination: "b", Workspace: "/w", Ctx: "/bin/echo"}, evil); err != nil || string(out) != "--workspace /w "+evil+"\n" {
		t.Errorf("through sh -s: %q, %v", out, err)
	}
	if scpTarget("ssh://me@h:2222", "/x") != "scp://me@h:2222/x" || scpTarget("me@h", "/x") != "me@h:/x" {
		t.Errorf("scp targets: %s %s", scpTarget("ssh://me@h:2222", "/x"), scpTarget("me@h", "/x"))
	}
	var un *UnreachableError
	var re *RemoteError
	c = fakeSSH(t, `echo "ssh: connect to host 127.0.0.1 port 9: Connection refused" >&2; exit 255`)
	if _, err := c.Run(context.Background(), h, "x"); !errors.As(err, &un) || !strings.Contains(err.Error(), "Connection refused") {
		t.Errorf("refused: %v", err)
	}
	c = fakeSSH(t, `echo "ctx: agent is paused, not active: nothing to pause" >&2; exit 2`)
	if _, err := c.Run(context.Background(), h, "x"); !errors.As(err, &re) || re.Code != 2 || !strings.Contains(err.Error(), "nothing to pause") {
		t.Errorf("a remote failure: %v", err)
	}
	c = fakeSSH(t, `sleep 30`)
	start := time.Now()
	if _, err := c.Run(context.Background(), h, "x"); !errors.As(err, &un) || time.Since(start) > 5*time.Second {
		t.Errorf("silent host: %v after %s", err, time.Since(start))
	}
}

func TestEachCollectsEveryHost(t *testing.T) {
	var hs []Host
	for i := 0; i < 7; i++ {
		hs = append(hs, Host{Name: fmt.Sprintf("h%d", i)})
	}
	running, most := 0, 0
	done := map[string]bool{}
	ch := make(chan struct{}, 1)
	ch <- struct{}{}
	err := Each(hs, 3, func(h Host) error {
		<-ch
		running++
		most = max(most, running)
		ch <- struct{}{}
		time.Sleep(20 * time.Millisecond)
		<-ch
		running--
		done[h.Name] = true
		ch <- struct{}{}
		if h.Name == "h2" || h.Name == "h5" {
			return &UnreachableError{Host: h.Name, Detail: "down"}
		}
		return nil
	})
	if len(done) != 7 || most > 3 || most < 2 {
		t.Errorf("ran %d hosts, at most %d at once", len(done), most)
	}
	if err == nil || strings.Count(err.Error(), "\n") != 1 || !strings.Contains(err.Error(), "host h2") || !strings.Contains(err.Error(), "host h5") {
		t.Errorf("errors: %v", err)
	}
}

// The master socket's path fits a socket however long the runtime folder's path is:
// ssh listens first on dir/%C plus 17 characters.
func TestControlPathFitsASocket(t *testing.T) {
	short, err := os.MkdirTemp("", "r")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(short) })
	for _, rt := range []string{short, filepath.Join(t.TempDir(), strings.Repeat("x", 60), "ctx"), ""} {
		c, err := NewClient(rt)
		if err != nil {
			t.Fatal(err)
		}
		if n := len(c.ControlDir) + 1 + 40 + 17; n > 104 {
			t.Errorf("runtime %q: a socket path of %d bytes", rt, n)
		}
	}
}
