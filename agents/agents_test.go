package agents

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ctxtools/ctx/loader"
)

func TestStateMachine(t *testing.T) {
	ok := []struct {
		from State
		ev   Event
		to   State
	}{
		{Starting, EvStarted, Active},
		{Active, EvPause, Pausing},
		{Pausing, EvPaused, Paused},
		{Paused, EvResume, Resuming},
		{Resuming, EvStarted, Active},
		{Active, EvHostMissing, Lost},
		{Lost, EvResume, Resuming},
		{Active, EvPaneDied, Exited},
		{Exited, EvResume, Resuming},
		{Resuming, EvLaunchDied, Failed},
		{Failed, EvResume, Resuming},
		{Active, EvHandoff, HandingOff},
		{HandingOff, EvStarted, Active},
		{HandingOff, EvRollback, Active},
		{HandingOff, EvLaunchDied, Failed},
	}
	for _, c := range ok {
		if got, err := Next(c.from, c.ev); err != nil || got != c.to {
			t.Errorf("%s --%s--> %s, %v; want %s", c.from, c.ev, got, err, c.to)
		}
	}
	for _, c := range []struct {
		from State
		ev   Event
	}{{Paused, EvPause}, {Active, EvResume}, {Starting, EvResume}, {Exited, EvPause}, {Paused, EvHandoff}, {HandingOff, EvHandoff}, {Starting, EvHandoff}} {
		_, err := Next(c.from, c.ev)
		var se *StateError
		if !errors.As(err, &se) {
			t.Errorf("%s --%s--> allowed", c.from, c.ev)
		}
	}
	for s := range transitions {
		if s.Running() == s.Resumable() && s != Pausing {
			t.Errorf("%s is both or neither running and resumable", s)
		}
	}
}

func TestIDs(t *testing.T) {
	seen := map[string]bool{}
	for i := 0; i < 200; i++ {
		id := NewID()
		if !validID(id) || seen[id] {
			t.Fatalf("bad or repeated id %q", id)
		}
		seen[id] = true
	}
	for _, bad := range []string{"", "a-", "../a-x", "a-X", "b-123", "a-12/3"} {
		if validID(bad) {
			t.Errorf("validID(%q) = true", bad)
		}
	}
	sid := NewSessionID()
	if len(sid) != 36 || sid[14] != '4' || strings.Count(sid, "-") != 4 {
		t.Errorf("session id %q is not a v4 UUID", sid)
	}
}

func newStore(t *testing.T) Store {
	t.Helper()
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "02-projects"), 0o755); err != nil {
		t.Fatal(err)
	}
	ws, err := loader.Discover(loader.DiscoverOptions{Cwd: root})
	if err != nil {
		t.Fatal(err)
	}
	return NewStore(ws)
}

func TestResolve(t *testing.T) {
	s := newStore(t)
	for i, name := range []string{"expiry", "search", "search2"} {
		r := &Record{ID: []string{"a-abc111", "a-abc222", "a-xyz333"}[i], Name: name, CreatedAt: time.Unix(int64(i), 0)}
		if err := s.Create(r); err != nil {
			t.Fatal(err)
		}
	}
	for q, want := range map[string]string{"a-abc111": "expiry", "expiry": "expiry", "a-x": "search2", "search": "search"} {
		r, err := s.Resolve(q)
		if err != nil || r.Name != want {
			t.Errorf("Resolve(%q) = %v, %v; want %s", q, r, err, want)
		}
	}
	var amb *AmbiguousError
	if _, err := s.Resolve("a-abc"); !errors.As(err, &amb) {
		t.Errorf("a shared prefix: %v", err)
	}
	var nf *NotFoundError
	if _, err := s.Resolve("nobody"); !errors.As(err, &nf) {
		t.Errorf("an unknown name: %v", err)
	}
	if _, err := s.Load("../../etc"); err == nil {
		t.Error("a hostile id was loaded")
	}
	if err := s.WriteStatus("a-nothere", Status{}); err == nil {
		t.Error("status written for an agent that does not exist")
	}
}

func gitRun(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// The keep strategy records the whole tree without touching files, index or branch,
// and tells afterwards what changed and which of the agent's files someone else edited.
func TestCheckpointKeepsEverythingAndFindsTheOverlap(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	dir := t.TempDir()
	gitRun(t, dir, "init", "-q", "-b", "main")
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a.txt", "a\n")
	write("b.txt", "b\n")
	gitRun(t, dir, "add", "-A")
	gitRun(t, dir, "commit", "-qm", "base")
	write("a.txt", "a changed by the agent\n")
	write("new.txt", "untracked\n")
	gitRun(t, dir, "add", "a.txt") // a staged change too
	statusBefore := gitRun(t, dir, "status", "--porcelain")
	cp, err := TakeCheckpoint(dir, "a-test01", "20261123T120000Z")
	if err != nil {
		t.Fatal(err)
	}
	if got := gitRun(t, dir, "status", "--porcelain"); got != statusBefore {
		t.Errorf("the checkpoint changed the status:\n%s\n%s", statusBefore, got)
	}
	if strings.Join(cp.Dirty, ",") != "a.txt,new.txt" || cp.Branch != "main" {
		t.Errorf("checkpoint %+v", cp)
	}
	again, err := TakeCheckpoint(dir, "a-test01", "20261123T120000Z")
	if err != nil || again.Tree != cp.Tree {
		t.Errorf("a second checkpoint of the same stamp: %v %v", again, err)
	}
	ch, err := cp.Compare()
	if err != nil || !ch.Unchanged {
		t.Errorf("nothing changed, yet: %+v %v", ch, err)
	}
	write("a.txt", "a changed by the person\n")
	write("b.txt", "b changed\n")
	gitRun(t, dir, "commit", "-qam", "person")
	ch, err = cp.Compare()
	if err != nil {
		t.Fatal(err)
	}
	if !ch.HeadMoved || strings.Join(ch.Files, ",") != "a.txt,b.txt" || strings.Join(ch.Overlap, ",") != "a.txt" {
		t.Errorf("changes %+v", ch)
	}
	if show := gitRun(t, dir, "show", cp.Ref+":new.txt"); show != "untracked\n" {
		t.Errorf("the checkpoint lacks the untracked file: %q", show)
	}
	if outside, err := TakeCheckpoint(t.TempDir(), "a-test01", "x"); err != nil || outside != nil {
		t.Errorf("outside git: %v %v", outside, err)
	}
}

func TestPorcelainPaths(t *testing.T) {
	got := porcelainPaths(" M a.go\x00R  new.go\x00old.go\x00?? dir/x y.txt\x00")
	if strings.Join(got, "|") != "a.go|dir/x y.txt|new.go" {
		t.Errorf("porcelainPaths = %q", got)
	}
}

func TestMarkedFindsOnlyTheAgent(t *testing.T) {
	if _, err := os.Stat("/proc/self/environ"); err != nil {
		t.Skip("no /proc")
	}
	cmd := exec.Command("sleep", "30")
	cmd.Env = append(os.Environ(), EnvAgentID+"=a-marked1")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _, _ = cmd.Process.Wait() }()
	time.Sleep(100 * time.Millisecond)
	if got := Marked("a-marked1"); len(got) != 1 || got[0] != cmd.Process.Pid {
		t.Errorf("Marked = %v, want [%d]", got, cmd.Process.Pid)
	}
	if got := Marked("a-marked"); len(got) != 0 {
		t.Errorf("a prefix of the id matched: %v", got)
	}
	if RSSKB([]int{cmd.Process.Pid}) <= 0 {
		t.Error("no RSS for a live process")
	}
	found, left := EndMarked("a-marked1", time.Second)
	_, _ = cmd.Process.Wait()
	if found != 1 || len(left) != 0 {
		t.Errorf("EndMarked = %d, %v", found, left)
	}
}
