package agents

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A Create or Remove killed part-way leaves a temporary folder, never an agent folder
// without its record: List reads no such folder, and the next Create or Remove deletes
// the ones old enough to be no one's.
func TestCreateAndRemoveLeaveNoHalfAgent(t *testing.T) {
	s := newStore(t)
	if err := s.Create(&Record{ID: "a-aaa111", Name: "one"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Create(&Record{ID: "a-aaa111", Name: "again"}); err == nil {
		t.Error("a second Create of one id succeeded")
	}

	// What killed runs leave: a Create's folder with or without its record, a Remove's
	// folder half deleted.
	killed := func(name string, age time.Duration, files ...string) string {
		dir := filepath.Join(s.Dir, tempPrefix+name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			if err := os.WriteFile(filepath.Join(dir, f), []byte("{"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		at := time.Now().Add(-age)
		if err := os.Chtimes(dir, at, at); err != nil {
			t.Fatal(err)
		}
		return filepath.Base(dir)
	}
	oldEmpty := killed("a-bbb222-1-1", 2*time.Minute)
	oldHalf := killed("a-ccc333-1-2", 2*time.Minute, "status.json")
	young := killed("a-ddd444-1-3", 0, "agent.json")

	records, problems := s.List()
	if len(records) != 1 || len(problems) != 0 {
		t.Fatalf("List = %d records, problems %v; want the one whole agent and no problems", len(records), problems)
	}

	if err := s.Create(&Record{ID: "a-eee555", Name: "two"}); err != nil {
		t.Fatal(err)
	}
	if got := temps(t, s.Dir); len(got) != 1 || got[0] != young {
		t.Errorf("temporary folders after a Create: %v; want only the young %s (the old %s and %s removed)", got, young, oldEmpty, oldHalf)
	}
	if _, err := s.Load("a-eee555"); err != nil {
		t.Errorf("the created agent: %v", err)
	}

	if err := s.Remove("a-aaa111"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(s.AgentDir("a-aaa111")); !os.IsNotExist(err) {
		t.Errorf("the removed agent's folder: %v", err)
	}
	if err := s.Remove("a-aaa111"); err != nil {
		t.Errorf("removing a removed agent: %v", err)
	}
	if got := temps(t, s.Dir); len(got) != 1 {
		t.Errorf("temporary folders after a Remove: %v; want only %s", got, young)
	}
	records, problems = s.List()
	if len(records) != 1 || records[0].ID != "a-eee555" || len(problems) != 0 {
		t.Errorf("List = %v, problems %v; want a-eee555 alone", records, problems)
	}
}

func temps(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), tempPrefix) {
			out = append(out, e.Name())
		}
	}
	return out
}

// A record of schema 1 ("host" was the tmux session) reads as schema 2: the session
// under "tmux", the host this machine; written again, it is schema 2.
func TestRecordOfSchema1(t *testing.T) {
	s := newStore(t)
	old := `{"schema_version":1,"id":"a-old001","name":"old","state":"paused","host":{"kind":"tmux","socket":"ctx","session":"ctx-a-old001","pane_pid":42},"claude":{"session_id":"s1"}}`
	if err := os.MkdirAll(s.AgentDir("a-old001"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(s.recordPath("a-old001"), []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := s.Load("a-old001")
	if err != nil {
		t.Fatal(err)
	}
	if r.Host != LocalHost || r.Tmux.Session != "ctx-a-old001" || r.Tmux.PanePID != 42 || r.Claude.SessionID != "s1" {
		t.Fatalf("read as %+v", r)
	}
	if _, err := s.Update(r.ID, func(*Record) error { return nil }); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(s.recordPath("a-old001"))
	var back map[string]any
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if back["schema_version"] != float64(2) || back["host"] != LocalHost || back["tmux"].(map[string]any)["session"] != "ctx-a-old001" {
		t.Errorf("written back as %s", data)
	}
	// A name in "host" stays the name.
	var named Record
	if err := json.Unmarshal([]byte(`{"host":"build","tmux":{"session":"x"}}`), &named); err != nil || named.Host != "build" || named.Tmux.Session != "x" {
		t.Errorf("a named host: %+v, %v", named, err)
	}
}

// A list read back from JSON (another host's) is the list written.
func TestViewRoundTrip(t *testing.T) {
	in := []View{{Record: &Record{ID: "a-one001", Name: "one", Host: "build", State: Active, Tmux: TmuxInfo{Session: "ctx-a-one001"}},
		Activity: Status{Activity: "idle", Event: "Stop"}, Attached: true, RSSKB: 1234}}
	data, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	var out []View
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}
	if len(out) != 1 || out[0].Record == nil || out[0].Name != "one" || out[0].Host != "build" || out[0].Tmux.Session != "ctx-a-one001" ||
		out[0].Activity.Event != "Stop" || !out[0].Attached || out[0].RSSKB != 1234 {
		t.Errorf("read back as %+v", out)
	}
}
