package main

import (
	"bufio"
	"errors"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// ctx serve's phone flags through the real binary: --qr prints a QR code of the login
// URL at --url on stderr (stdout keeps the one URL line), --url's host is served,
// --read-only refuses a change; a bad --url is bad input.
func TestServePhoneFlags(t *testing.T) {
	bin := ctxBinary(t)
	ws := procWorkspace(t)
	dir := t.TempDir()
	run := filepath.Join(dir, "run")
	if err := os.Mkdir(run, 0o700); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "CTX_WORKSPACE="+ws, "HOME="+dir, "XDG_RUNTIME_DIR="+run, "TMUX_TMPDIR="+dir)
	bad := exec.Command(bin, "serve", "--addr", "127.0.0.1:0", "--url", "ftp://box")
	bad.Env = env
	out, err := bad.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.Contains(string(out), "--url") {
		t.Errorf("--url ftp://box: %v\n%s", err, out)
	}

	const public = "https://box.tail1234.ts.net"
	cmd := exec.Command(bin, "serve", "--addr", "127.0.0.1:0", "--qr", "--url", public, "--read-only")
	cmd.Env = env
	stdout, _ := cmd.StdoutPipe()
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Signal(syscall.SIGINT); _ = cmd.Wait() }()
	lines := make(chan string, 256)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	login, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("no login URL: %v", err)
	}
	u, err := url.Parse(strings.TrimSpace(login))
	if err != nil || u.Path != "/login" {
		t.Fatalf("stdout %q", login)
	}
	token := u.Query().Get("t")
	blocks, sawPublic := 0, false
	for deadline := time.After(10 * time.Second); blocks < 10; {
		select {
		case l := <-lines:
			if strings.Contains(l, public+"/login?t="+token) {
				sawPublic = true
			}
			if strings.ContainsAny(l, "▀▄█") {
				blocks++
			}
		case <-deadline:
			t.Fatalf("no QR code on stderr within 10 s (%d lines of blocks, public URL seen: %v)", blocks, sawPublic)
		}
	}
	if !sawPublic {
		t.Error("stderr does not give the login URL at --url")
	}
	do := func(method, path, host string) int {
		req, _ := http.NewRequest(method, "http://"+u.Host+path, nil)
		req.Host = host
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		return resp.StatusCode
	}
	if code := do("GET", "/api/agents", "box.tail1234.ts.net"); code != 200 {
		t.Errorf("the --url host: %d, want 200", code)
	}
	if code := do("GET", "/api/agents", "elsewhere.example"); code != http.StatusMisdirectedRequest {
		t.Errorf("another host: %d, want 421", code)
	}
	if code := do("POST", "/api/agents/pause", u.Host); code != http.StatusForbidden {
		t.Errorf("a change under --read-only: %d, want 403", code)
	}
}

// A workspace where ctx init never ran: the listing's caches go to the user's cache
// folder, none into the workspace, and ctx doctor says where they are.
func TestCachesOfAWorkspaceWithoutCtx(t *testing.T) {
	bin := ctxBinary(t)
	ws := procWorkspace(t)
	old := time.Now().Add(-time.Hour) // a workspace at rest: its files are cached
	if err := filepath.Walk(ws, func(p string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Chtimes(p, old, old)
	}); err != nil {
		t.Fatal(err)
	}
	cache := t.TempDir()
	env := []string{"XDG_CACHE_HOME=" + cache, "HOME=" + t.TempDir()}
	for range 2 {
		if r := runTimed(t, bin, ws, "", env, "projects", "--json"); r.code != 0 {
			t.Fatalf("ctx projects: exit %d\n%s", r.code, r.stderr)
		}
	}
	if _, err := os.Stat(filepath.Join(ws, ".ctx")); !os.IsNotExist(err) {
		t.Errorf("a listing wrote .ctx into the workspace: %v", err)
	}
	index, _ := filepath.Glob(filepath.Join(cache, "ctx", "*", "projects-index.bin"))
	if len(index) != 1 {
		t.Fatalf("the index in the user cache: %v", index)
	}
	r := runTimed(t, bin, ws, "", env, "doctor")
	if !strings.Contains(r.stdout, "cache      "+filepath.Dir(index[0])) {
		t.Errorf("ctx doctor does not say where the caches are:\n%s", r.stdout)
	}
}
