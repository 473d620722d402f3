package claude

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ctxtools/ctx/usage"
)

func TestClientVersion(t *testing.T) {
	for _, c := range []struct {
		out, want string
		ok        bool
	}{
		{"2.1.330 (Claude Code)\n", "2.1.330", true},
		{"2.2.0", "2.2.0", true},
		{"", "", false},
		{"claude: not found", "", false},
		{"2.1 (Claude Code)", "", false},
	} {
		got, ok := ClientVersion(c.out)
		if got != c.want || ok != c.ok {
			t.Errorf("ClientVersion(%q) = %q, %v; want %q, %v", c.out, got, ok, c.want, c.ok)
		}
	}
}

func TestNewerThanProven(t *testing.T) {
	for v, want := range map[string]bool{
		ProvenClaudeVersion: false,
		"2.1.329":           false,
		"2.1.331":           true,
		"2.2.0":             true,
		"3.0.0":             true,
		"1.9.999":           false,
		"garbage":           false,
	} {
		if got := NewerThanProven(v); got != want {
			t.Errorf("NewerThanProven(%q) = %v, want %v", v, got, want)
		}
	}
}

func TestDetectClient(t *testing.T) {
	const (
		user    = "home/.claude/settings.json"
		project = "proj/.claude/settings.json"
		local   = "proj/.claude/settings.local.json"
		global  = "home/.claude.json"
		cmdline = "proc/4242/cmdline"
	)
	claudePID := map[string]string{"CLAUDE_PID": "4242"}
	tests := []struct {
		name  string
		files map[string]string // relative to a temporary folder
		env   map[string]string
		want  usage.Client
	}{
		{name: "nothing: Claude Code's defaults"},
		{name: "empty files", files: map[string]string{user: "{}", project: "{}", local: "{}", global: "{}"}},
		{
			name:  "user settings",
			files: map[string]string{user: `{"model":"sonnet[1m]","autoCompactWindow":500000,"hooks":{}}`},
			want: usage.Client{Model: "sonnet[1m]", ModelSource: "setting model in ~/.claude/settings.json",
				CompactWindow: 500_000, CompactWindowSource: "setting autoCompactWindow in ~/.claude/settings.json"},
		},
		{
			name: "local settings, then project settings, then the user's",
			files: map[string]string{
				user:    `{"model":"haiku","autoCompactWindow":500000}`,
				project: `{"model":"opus","autoCompactWindow":400000}`,
				local:   `{"autoCompactWindow":300000}`,
			},
			want: usage.Client{Model: "opus", ModelSource: "setting model in .claude/settings.json",
				CompactWindow: 300_000, CompactWindowSource: "setting autoCompactWindow in .claude/settings.local.json"},
		},
		{
			name:  "the claude process's flags beat the settings",
			files: map[string]string{project: `{"model":"opus","autoCompactWindow":500000}`, cmdline: "/usr/bin/claude\x00--model\x00claude-sonnet-4-5[1m]\x00--autocompact=400000\x00"},
			env:   claudePID,
			want: usage.Client{Model: "claude-sonnet-4-5[1m]", ModelSource: "flag --model",
				CompactWindow: 400_000, CompactWindowSource: "flag --autocompact 400000"},
		},
		{
			name:  "the environment beats the flags, except --model",
			files: map[string]string{cmdline: "claude\x00--autocompact\x00400000\x00--model=opus\x00"},
			env: map[string]string{"CLAUDE_PID": "4242", "CLAUDE_CODE_AUTO_COMPACT_WINDOW": "300000",
				"ANTHROPIC_MODEL": "claude-haiku-4-5"},
			want: usage.Client{Model: "opus", ModelSource: "flag --model",
				CompactWindow: 300_000, CompactWindowSource: "env CLAUDE_CODE_AUTO_COMPACT_WINDOW=300000"},
		},
		{
			name:  "ANTHROPIC_MODEL beats the settings' model",
			files: map[string]string{project: `{"model":"opus"}`},
			env:   map[string]string{"ANTHROPIC_MODEL": "claude-haiku-4-5"},
			want:  usage.Client{Model: "claude-haiku-4-5", ModelSource: "env ANTHROPIC_MODEL"},
		},
		{
			name:  "flags after -- are the prompt's",
			files: map[string]string{cmdline: "claude\x00-p\x00--\x00--model opus\x00--autocompact\x00400000\x00"},
			env:   claudePID,
		},
		{
			name: "the settings' env counts as the environment, below it",
			files: map[string]string{
				user:    `{"env":{"CLAUDE_AUTOCOMPACT_PCT_OVERRIDE":"50","DISABLE_AUTO_COMPACT":"0"}}`,
				project: `{"env":{"CLAUDE_CODE_AUTO_COMPACT_WINDOW":"350000","CLAUDE_CODE_DISABLE_1M_CONTEXT":"true"}}`,
			},
			env: map[string]string{"CLAUDE_AUTOCOMPACT_PCT_OVERRIDE": "40"},
			want: usage.Client{CompactWindow: 350_000, CompactWindowSource: "setting env.CLAUDE_CODE_AUTO_COMPACT_WINDOW=350000 in .claude/settings.json",
				CompactPercent: 40, CompactPercentSource: "env CLAUDE_AUTOCOMPACT_PCT_OVERRIDE=40",
				Disable1M: true, Disable1MSource: "setting env.CLAUDE_CODE_DISABLE_1M_CONTEXT=true in .claude/settings.json"},
		},
		{
			name: "environment switches",
			env: map[string]string{"CLAUDE_AUTOCOMPACT_PCT_OVERRIDE": "50", "DISABLE_AUTO_COMPACT": "1",
				"CLAUDE_CODE_DISABLE_1M_CONTEXT": "yes"},
			want: usage.Client{CompactPercent: 50, CompactPercentSource: "env CLAUDE_AUTOCOMPACT_PCT_OVERRIDE=50",
				AutoCompactOff: true, AutoCompactOffSource: "env DISABLE_AUTO_COMPACT=1",
				Disable1M: true, Disable1MSource: "env CLAUDE_CODE_DISABLE_1M_CONTEXT=yes"},
		},
		{
			name: "switches that are off",
			env:  map[string]string{"DISABLE_AUTO_COMPACT": "0", "CLAUDE_CODE_DISABLE_1M_CONTEXT": "false"},
		},
		{
			name:  "autoCompactEnabled false in ~/.claude.json",
			files: map[string]string{global: "{\n  \"numStartups\": 3,\n  \"tip\": \"autoCompactEnabled\",\n  \"autoCompactEnabled\": false,\n  \"projects\": {}\n}"},
			want:  usage.Client{AutoCompactOff: true, AutoCompactOffSource: "autoCompactEnabled false in ~/.claude.json"},
		},
		{
			name:  "a key that only ends in autoCompactEnabled",
			files: map[string]string{global: `{"notautoCompactEnabled":false,"autoCompactEnabledX":false}`},
		},
		{
			name:  "autoCompactEnabled true in ~/.claude.json",
			files: map[string]string{global: `{"autoCompactEnabled":true}`},
		},
		{
			name:  "DISABLE_AUTO_COMPACT is said first",
			files: map[string]string{global: `{"autoCompactEnabled":false}`},
			env:   map[string]string{"DISABLE_AUTO_COMPACT": "TRUE"},
			want:  usage.Client{AutoCompactOff: true, AutoCompactOffSource: "env DISABLE_AUTO_COMPACT=TRUE"},
		},
		{
			name: "CLAUDE_CONFIG_DIR holds the user's settings and global config",
			files: map[string]string{user: `{"autoCompactWindow":500000}`, global: `{"autoCompactEnabled":false}`,
				"cfg/settings.json": `{"autoCompactWindow":600000}`, "cfg/.claude.json": `{"autoCompactEnabled":true}`},
			env:  map[string]string{"CLAUDE_CONFIG_DIR": "cfg"},
			want: usage.Client{CompactWindow: 600_000, CompactWindowSource: "setting autoCompactWindow in $CLAUDE_CONFIG_DIR/settings.json"},
		},
		{
			name: "a file that is not JSON is ignored and reported; the others still count",
			files: map[string]string{local: `{"autoCompactWindow": 300000,`, project: `{"model":"opus"}`,
				user: `{"autoCompactWindow":500000}`},
			want: usage.Client{Model: "opus", ModelSource: "setting model in .claude/settings.json",
				CompactWindow: 500_000, CompactWindowSource: "setting autoCompactWindow in ~/.claude/settings.json",
				Problems: []string{".claude/settings.local.json: not valid JSON, ignored: unexpected end of JSON input"}},
		},
		{
			name:  "a value of the wrong kind loses only itself",
			files: map[string]string{project: `{"model":"opus","autoCompactWindow":"400k","env":{"A":1}}`, global: `{"autoCompactEnabled":"no"}`},
			want: usage.Client{Model: "opus", ModelSource: "setting model in .claude/settings.json",
				Problems: []string{
					".claude/settings.json: autoCompactWindow: want a whole number of tokens, ignored",
					".claude/settings.json: env: want an object of strings, ignored",
					"~/.claude.json: autoCompactEnabled: want true or false, ignored",
				}},
		},
		{
			name:  "bad numbers are ignored and reported",
			files: map[string]string{cmdline: "claude\x00--autocompact\x00lots\x00", user: `{"autoCompactWindow":-1}`},
			env:   map[string]string{"CLAUDE_PID": "4242", "CLAUDE_CODE_AUTO_COMPACT_WINDOW": "400k", "CLAUDE_AUTOCOMPACT_PCT_OVERRIDE": "150"},
			want: usage.Client{Problems: []string{
				"~/.claude/settings.json: autoCompactWindow: want a whole number of tokens, ignored",
				"env CLAUDE_CODE_AUTO_COMPACT_WINDOW=400k: want a number of tokens, ignored",
				"flag --autocompact lots: want a number of tokens, ignored",
				"env CLAUDE_AUTOCOMPACT_PCT_OVERRIDE=150: want a percentage above 0 and at most 100, ignored",
			}},
		},
		{
			name:  "a CLAUDE_PID that is not a process id names no file",
			files: map[string]string{"proc/cmdline": "claude\x00--model\x00opus\x00"},
			env:   map[string]string{"CLAUDE_PID": "."},
		},
		{
			name: "a gone claude process gives no flags",
			env:  map[string]string{"CLAUDE_PID": "999999"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, content := range tt.files {
				writeFile(t, filepath.Join(dir, name), content)
			}
			getenv := func(key string) string {
				switch {
				case key == "CLAUDE_CONFIG_DIR" && tt.env[key] != "":
					return filepath.Join(dir, tt.env[key])
				case key == "HOME":
					return filepath.Join(dir, "home")
				}
				return tt.env[key]
			}
			got := detect(getenv, filepath.Join(dir, "proj"), filepath.Join(dir, "proc"))
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestDetectClientDefaults checks that an empty project folder is taken from
// $CLAUDE_PROJECT_DIR, and that an unreadable settings file is reported.
func TestDetectClientDefaults(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "home/.claude/settings.json"), `{"model":"haiku"}`)
	writeFile(t, filepath.Join(dir, "proj/.claude/settings.json"), `{"autoCompactWindow":400000}`)
	if err := os.Mkdir(filepath.Join(dir, "proj/.claude/settings.local.json"), 0o755); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"HOME": filepath.Join(dir, "home"), "CLAUDE_PROJECT_DIR": filepath.Join(dir, "proj")}
	got := DetectClient(func(k string) string { return env[k] }, "")
	want := usage.Client{Model: "haiku", ModelSource: "setting model in ~/.claude/settings.json",
		CompactWindow: 400_000, CompactWindowSource: "setting autoCompactWindow in .claude/settings.json",
		Problems: []string{".claude/settings.local.json: is a directory"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
}

// TestDetectClientReadsTheClaudeProcess reads the flags of a real process from /proc.
func TestDetectClientReadsTheClaudeProcess(t *testing.T) {
	if _, err := os.Stat("/proc/self/cmdline"); err != nil {
		t.Skip("no /proc here")
	}
	// sh passes the arguments after the script as $0, $1...: they stay in its cmdline.
	cmd := exec.Command("sh", "-c", "sleep 30", "claude", "--model", "claude-opus-5-5", "--autocompact=400000")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	pid, home := strconv.Itoa(cmd.Process.Pid), t.TempDir()
	var got usage.Client
	// The command line is the child's once it has exec'd sh.
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		got = DetectClient(func(k string) string { return map[string]string{"CLAUDE_PID": pid, "HOME": home}[k] }, t.TempDir())
		if got.Model != "" {
			break
		}
	}
	if got.Model != "claude-opus-5-5" || got.CompactWindow != 400_000 || got.CompactWindowSource != "flag --autocompact 400000" {
		t.Errorf("got %+v, want the model and compaction window of the flags", got)
	}
}

func TestParseFlags(t *testing.T) {
	tests := []struct {
		args []string
		want flags
	}{
		{nil, flags{}},
		{[]string{"--model", "opus", "--autocompact", "400000"}, flags{model: "opus", compactWindow: "400000"}},
		{[]string{"--model=opus", "--autocompact=400000"}, flags{model: "opus", compactWindow: "400000"}},
		{[]string{"--model", "opus", "--model", "haiku"}, flags{model: "haiku"}},
		{[]string{"--model"}, flags{}},
		{[]string{"--modelx", "opus", "-p", "--", "--model", "haiku"}, flags{}},
		{[]string{"--resume", "abc", "--model", "sonnet[1m]"}, flags{model: "sonnet[1m]"}},
	}
	for _, tt := range tests {
		if got := parseFlags(tt.args); got != tt.want {
			t.Errorf("parseFlags(%q) = %+v, want %+v", strings.Join(tt.args, " "), got, tt.want)
		}
	}
}

// BenchmarkDetectClient measures what every hook pays to read Claude Code's settings:
// three settings files, the claude process's command line, and a global config of
// 20 KB (a usual size) or 1 MB.
func BenchmarkDetectClient(b *testing.B) {
	for _, size := range []int{20 << 10, 1 << 20} {
		b.Run(fmt.Sprintf("%d KB", size>>10), func(b *testing.B) {
			dir := b.TempDir()
			global := "{\n  \"numStartups\": 3,\n  \"projects\": {\n"
			for len(global) < size {
				global += "    \"/home/dev/src/Checkout-Code\": {\"allowedTools\": [], \"hasTrustDialogAccepted\": true, \"lastCost\": 0.1234},\n"
			}
			global += "  },\n  \"autoCompactEnabled\": false\n}\n"
			for name, content := range map[string]string{
				"home/.claude/settings.json":       `{"model":"opus","env":{"X":"1"},"hooks":{"Stop":[]}}`,
				"proj/.claude/settings.json":       `{"autoCompactWindow":400000,"permissions":{"allow":["Bash(ls)"]}}`,
				"proj/.claude/settings.local.json": `{}`,
				"home/.claude.json":                global,
			} {
				if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
					b.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
					b.Fatal(err)
				}
			}
			getenv := func(k string) string {
				switch k {
				case "CLAUDE_PID":
					return strconv.Itoa(os.Getpid())
				case "HOME":
					return filepath.Join(dir, "home")
				}
				return ""
			}
			b.ReportAllocs()
			for b.Loop() {
				c := DetectClient(getenv, filepath.Join(dir, "proj"))
				if !c.AutoCompactOff || c.CompactWindow != 400_000 {
					b.Fatalf("got %+v", c)
				}
			}
		})
	}
}

// FuzzCompactEnabledFalse checks the byte-level lookup of "autoCompactEnabled" in
// ~/.claude.json against a JSON decoding, wherever the key is written once, at the top.
func FuzzCompactEnabledFalse(f *testing.F) {
	for _, seed := range []string{
		`{"autoCompactEnabled":false}`,
		"{\n  \"numStartups\": 3,\n  \"autoCompactEnabled\": true\n}",
		`{"tip":"autoCompactEnabled","autoCompactEnabled" : false}`,
		`{"autoCompactEnabled":"no"}`,
		`{"notautoCompactEnabled":false}`,
		`{"autoCompactEnabled":fals`,
		`"autoCompactEnabled"`,
		"",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		off, ok := compactEnabledFalse(data)
		if off && !ok {
			t.Fatal("off and not ok")
		}
		var top map[string]json.RawMessage
		if bytes.Count(data, keyCompactEnabledTail) != 1 || json.Unmarshal(data, &top) != nil {
			return
		}
		raw, found := top[keyCompactEnabled]
		if !found {
			return
		}
		var enabled bool
		decoded := json.Unmarshal(raw, &enabled) == nil
		if ok != decoded || (decoded && off != !enabled) {
			t.Fatalf("%q: got off %v, ok %v; decoding gives %v, %v", data, off, ok, !enabled, decoded)
		}
	})
}
