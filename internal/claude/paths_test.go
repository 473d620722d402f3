package claude

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func envOf(vals map[string]string) func(string) string {
	return func(k string) string { return vals[k] }
}

func TestConfigDir(t *testing.T) {
	for _, tt := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"CLAUDE_CONFIG_DIR": "/cfg", "HOME": "/home/me"}, "/cfg"},
		{map[string]string{"HOME": "/home/me"}, "/home/me/.claude"},
	} {
		if got, err := ConfigDir(envOf(tt.env)); err != nil || got != filepath.FromSlash(tt.want) {
			t.Errorf("ConfigDir(%v) = %q, %v; want %q", tt.env, got, err, tt.want)
		}
	}
	// Without $HOME, the home folder the system names.
	if home, err := os.UserHomeDir(); err == nil {
		if got, err := ConfigDir(envOf(nil)); err != nil || got != filepath.Join(home, ".claude") {
			t.Errorf("ConfigDir without HOME = %q, %v; want %q", got, err, filepath.Join(home, ".claude"))
		}
	}
}

func TestSettingsPath(t *testing.T) {
	tests := []struct {
		name    string
		level   Level
		env     map[string]string
		want    string
		project string
	}{
		{name: "project", level: LevelProject, project: "/work/p", want: "/work/p/.claude/settings.json"},
		{name: "project ignores CLAUDE_CONFIG_DIR", level: LevelProject, project: "/work/p", env: map[string]string{"CLAUDE_CONFIG_DIR": "/cfg"}, want: "/work/p/.claude/settings.json"},
		{name: "local", level: LevelLocal, project: "/work/p", env: map[string]string{"CLAUDE_CONFIG_DIR": "/cfg"}, want: "/work/p/.claude/settings.local.json"},
		{name: "user", level: LevelUser, env: map[string]string{"HOME": "/home/me"}, want: "/home/me/.claude/settings.json"},
		{name: "user with CLAUDE_CONFIG_DIR", level: LevelUser, env: map[string]string{"CLAUDE_CONFIG_DIR": "/cfg", "HOME": "/home/me"}, want: "/cfg/settings.json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := SettingsPath(tt.project, tt.level, envOf(tt.env))
			if err != nil || got != filepath.FromSlash(tt.want) {
				t.Errorf("SettingsPath = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func TestSettingsFiles(t *testing.T) {
	home := envOf(map[string]string{"HOME": "/home/me"})
	got := SettingsFiles("/work/p", home)
	want := []SettingsFile{
		{LevelUser, filepath.FromSlash("/home/me/.claude/settings.json")},
		{LevelProject, filepath.FromSlash("/work/p/.claude/settings.json")},
		{LevelLocal, filepath.FromSlash("/work/p/.claude/settings.local.json")},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("SettingsFiles = %v, want %v", got, want)
	}
	// In the home folder the project's settings are the user's: one file, one level.
	got = SettingsFiles("/home/me/", home)
	want = []SettingsFile{
		{LevelUser, filepath.FromSlash("/home/me/.claude/settings.json")},
		{LevelLocal, filepath.FromSlash("/home/me/.claude/settings.local.json")},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("SettingsFiles in home = %v, want %v", got, want)
	}
	// No project: the user's only.
	if got := SettingsFiles("", home); len(got) != 1 || got[0].Level != LevelUser {
		t.Errorf("SettingsFiles without a project = %v", got)
	}
}

func TestTranscripts(t *testing.T) {
	root := t.TempDir()
	config := filepath.Join(root, "cfg")
	cwd := filepath.Join(root, "My Project.v2")
	link := filepath.Join(root, "link")
	if err := os.Mkdir(cwd, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(cwd, link); err != nil {
		t.Skip(err)
	}
	want := filepath.Join(config, "projects", nonAlnumToDash(cwd), "s-1.jsonl")
	for _, dir := range []string{cwd, link} {
		if got := TranscriptPath(config, dir, "s-1"); got != want {
			t.Errorf("TranscriptPath(%q) = %q, want %q", dir, got, want)
		}
	}
	if err := os.MkdirAll(filepath.Dir(want), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(want, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	getenv := envOf(map[string]string{"CLAUDE_CONFIG_DIR": config})
	if got := FindTranscript(getenv, "s-1"); got != want {
		t.Errorf("FindTranscript = %q, want %q", got, want)
	}
	for _, id := range []string{"s-2", "*", "s-?", "../s-1", ""} {
		if got := FindTranscript(getenv, id); got != "" {
			t.Errorf("FindTranscript(%q) = %q, want none", id, got)
		}
	}
}

// nonAlnumToDash spells Claude Code's project folder name out, apart from
// TranscriptPath's own.
func nonAlnumToDash(s string) string {
	b := []byte(s)
	for i, c := range b {
		letterOrDigit := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
		if !letterOrDigit {
			b[i] = '-'
		}
	}
	return string(b)
}

func TestSessionRecords(t *testing.T) {
	config := t.TempDir()
	getenv := envOf(map[string]string{"CLAUDE_CONFIG_DIR": config})
	write := func(name, content string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Join(config, "sessions"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(config, "sessions", name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("4242.json", `{"pid":4242,"sessionId":"a","cwd":"/x","status":"idle"}`)
	write("4343.json", `{"pid":4242,"sessionId":"b"}`) // another process's record
	write("4444.json", `{"sessionId":"c"}`)
	write("4545.json", `not json`)
	for pid, want := range map[string]string{"4242": "a", "4343": "", "4444": "c", "4545": "", "4646": "", "../4242": "", "+4242": ""} {
		if got := SessionOfProcess(getenv, pid); got != want {
			t.Errorf("SessionOfProcess(%q) = %q, want %q", pid, got, want)
		}
	}
	got := map[string]int{}
	for _, r := range SessionRecords(getenv) {
		got[r.SessionID] = r.PID
	}
	if want := map[string]int{"a": 4242, "b": 4242, "c": 0}; !reflect.DeepEqual(got, want) {
		t.Errorf("SessionRecords = %v, want %v", got, want)
	}
	if got := SessionRecords(envOf(map[string]string{"CLAUDE_CONFIG_DIR": filepath.Join(config, "none")})); len(got) != 0 {
		t.Errorf("SessionRecords of no folder = %v", got)
	}
}
