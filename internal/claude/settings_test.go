package claude

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

const settingsTestBin = "/usr/local/bin/ctx"

// guarded is the command ctx registers for sub calling bin ("" for ctx on the PATH),
// spelled out rather than built with HookCommand so that a change to the form shows
// here.
func guarded(bin, sub string) string {
	if bin == "" {
		bin = "ctx"
	}
	return "command -v " + bin + " >/dev/null 2>&1 || exit 0; exec " + bin + " system " + sub
}

func TestRegistrations(t *testing.T) {
	want := []struct{ event, matcher, sub string }{
		{"SessionStart", "", "session-start"},
		{"UserPromptSubmit", "", "check-context-size"},
		{"PreToolUse", "Bash", "block-dangerous-commands"},
		{"PostToolUse", "*", "record-action"},
		{"Stop", "", "stop"},
		{"PreCompact", "", "pre-compact"},
		{"PostCompact", "", "post-compact"},
		{"SessionEnd", "", "session-end"},
		{"PermissionRequest", "*", "permission-request"},
	}
	regs := Registrations(settingsTestBin)
	if len(regs) != len(want) {
		t.Fatalf("%d registrations, want %d", len(regs), len(want))
	}
	for i, w := range want {
		r := regs[i]
		if r.Event != w.event || r.Matcher != w.matcher || r.Command != guarded(settingsTestBin, w.sub) {
			t.Errorf("registration %d = %+v, want %s %q %s", i, r, w.event, w.matcher, w.sub)
		}
		if r.Subcommand() != w.sub || r.Key() != w.event+"/"+w.sub {
			t.Errorf("%s: Subcommand %q, Key %q", w.event, r.Subcommand(), r.Key())
		}
		wantTimeout := 10
		if w.event == "SessionEnd" {
			wantTimeout = 2
		}
		if r.Timeout != wantTimeout {
			t.Errorf("%s: timeout %d, want %d", w.event, r.Timeout, wantTimeout)
		}
	}
}

func TestRegistrationsQuoteTheBinary(t *testing.T) {
	tests := []struct{ bin, want string }{
		{"", guarded("ctx", "stop")},
		{"ctx", "command -v ctx >/dev/null 2>&1 || exit 0; exec ctx system stop"},
		{"/home/me/go/bin/ctx", guarded("/home/me/go/bin/ctx", "stop")},
		{"/Users/Jane Doe/bin/ctx", guarded("'/Users/Jane Doe/bin/ctx'", "stop")},
		{"/opt/it's/ctx", guarded(`"/opt/it's/ctx"`, "stop")},
		{`C:\Program Files\ctx\ctx.exe`, guarded(`'C:\Program Files\ctx\ctx.exe'`, "stop")},
	}
	for _, tt := range tests {
		var stop Registration
		for _, r := range Registrations(tt.bin) {
			if r.Event == "Stop" {
				stop = r
			}
		}
		if stop.Command != tt.want {
			t.Errorf("bin %q: command %q, want %q", tt.bin, stop.Command, tt.want)
		}
		// ctx must recognise what it wrote, or a second init would duplicate it.
		if stop.Subcommand() != "stop" {
			t.Errorf("bin %q: %q not recognised as ctx's", tt.bin, stop.Command)
		}
	}
}

func TestCtxSystemSubcommand(t *testing.T) {
	tests := []struct {
		command string
		sub     string
		ok      bool
	}{
		{"ctx system stop", "stop", true},
		{"  /usr/local/bin/ctx   system\tsession-end --fast", "session-end", true},
		{`"/My Apps/ctx" system pre-compact`, "pre-compact", true},
		{`'/a b/ctx' system stop`, "stop", true},
		{`/a\ b/ctx system stop`, "stop", true},
		{`"$CLAUDE_PROJECT_DIR"/bin/ctx system stop`, "stop", true},
		{`'C:\bin\CTX.EXE' system stop`, "", false}, // base name must be ctx exactly
		{`'C:\bin\ctx.exe' system stop`, "stop", true},
		{"ctx system", "", true},
		{"ctx save --summary x", "", false},
		{"ctx-helper system stop", "", false},
		{"myctx system stop", "", false},
		{"echo ctx system stop", "", false},
		{"ctx", "", false},
		{"", "", false},
		// The guarded form HookCommand writes, and spellings of it a person may have
		// tidied by hand.
		{guarded("ctx", "check-context-size"), "check-context-size", true},
		{guarded("/usr/local/bin/ctx", "stop"), "stop", true},
		{guarded("'/My Apps/ctx'", "pre-compact"), "pre-compact", true},
		{"command -v ctx > /dev/null 2>&1 || exit 0 ; ctx system stop", "stop", true},
		{"command -v ctx >/dev/null || exit 0; exec ctx system stop --fast", "stop", true},
		{"command -v ctx &>/dev/null || exit 0; exec ctx system", "", true},
		{"command -v ctx >/dev/null 2>&1 ||\n  exit 0\nexec ctx system stop", "stop", true},
		// The quoting of ctx before it used syntax.Quote.
		{guarded(`'/opt/it'\''s/ctx'`, "stop"), "stop", true},
		// A renamed ctx that init --local named by its path: the guard and the exec
		// name the same binary.
		{guarded("/home/me/bin/ctx-dev", "stop"), "stop", true},
		{guarded("'/a b/my ctx'", "session-start"), "session-start", true},
		{"command -v /x/ctx-dev >/dev/null 2>&1 || exit 0; exec /y/ctx-dev system stop", "", false},
		// Look-alikes that are the user's.
		{"command -v ctx >/dev/null 2>&1 || exit 1; exec ctx system stop", "", false},
		{"command -v jq >/dev/null 2>&1 || exit 0; exec ctx system stop", "", false},
		{"command -v ctx >/dev/null 2>&1 || exit 0; exec ctx-dev system stop", "", false},
		{"command -v ctx >/dev/null 2>&1 || exit 0; exec notify-send ctx system stop", "", false},
		{"command -v ctx >/dev/null 2>&1 && ctx system stop", "", false},
		{"exec ctx system stop", "", false},
		{"command -v ctx", "", false},
		// More than ctx's one command: the person's (a hand lexer once read the first
		// words and took these for ctx's).
		{"ctx system stop | tee -a log", "", false},
		{"ctx system stop; notify-send done", "", false},
		{"ctx system stop && say done", "", false},
		{"command -v ctx >/dev/null 2>&1 || exit 0; exec ctx system stop; say done", "", false},
		{"X=1 ctx system stop", "", false},
		{"ctx system 'stop", "", false}, // does not parse
	}
	for _, tt := range tests {
		sub, ok := ctxSystemSubcommand(tt.command)
		if sub != tt.sub || ok != tt.ok {
			t.Errorf("ctxSystemSubcommand(%q) = %q, %v; want %q, %v", tt.command, sub, ok, tt.sub, tt.ok)
		}
	}
}

// settingsHookCommands returns, per event, "<matcher> <command>" for every hook entry in file
// order; "-" stands for no matcher.
func settingsHookCommands(t *testing.T, settings []byte) map[string][]string {
	t.Helper()
	var doc struct {
		Hooks map[string][]struct {
			Matcher *string `json:"matcher"`
			Hooks   []struct {
				Command string `json:"command"`
			} `json:"hooks"`
		} `json:"hooks"`
	}
	if err := json.Unmarshal(settings, &doc); err != nil {
		t.Fatalf("output is not valid settings: %v\n%s", err, settings)
	}
	out := map[string][]string{}
	for event, groups := range doc.Hooks {
		for _, g := range groups {
			m := "-"
			if g.Matcher != nil {
				m = *g.Matcher
			}
			for _, h := range g.Hooks {
				out[event] = append(out[event], m+" "+h.Command)
			}
		}
	}
	return out
}

func TestMergeSettings(t *testing.T) {
	regs := Registrations(settingsTestBin)
	tests := []struct {
		name  string
		in    string
		check func(t *testing.T, in, out []byte)
	}{
		{
			name: "empty input",
			in:   "",
			check: func(t *testing.T, in, out []byte) {
				if !bytes.HasPrefix(out, []byte("{\n  \"hooks\": {\n    \"SessionStart\": [\n      {\n        \"hooks\": [")) {
					t.Errorf("unexpected layout:\n%s", out)
				}
			},
		},
		{name: "blank input", in: " \n"},
		{name: "empty object", in: "{}\n"},
		{name: "empty hooks", in: "{\n  \"hooks\": {}\n}\n"},
		{
			name: "other keys keep their bytes and order",
			in: `{
  "$schema": "https://json.schemastore.org/claude-code-settings.json",
  "model": "opus",
  "permissions": {"allow": ["Bash(npm run test:*)"], "deny": []},
  "env": {
      "ODD_INDENT": "kept as written"
  },
  "includeCoAuthoredBy": false
}
`,
			check: func(t *testing.T, in, out []byte) {
				// Everything up to the end of the last value is untouched, and so is what
				// follows it.
				end := bytes.LastIndex(in, []byte("false")) + len("false")
				if !bytes.HasPrefix(out, in[:end]) || !bytes.HasSuffix(out, in[end:]) {
					t.Errorf("bytes around the new key changed:\n%s", out)
				}
				if !bytes.Contains(out, []byte("false,\n  \"hooks\": {\n    \"SessionStart\"")) {
					t.Errorf("hooks not appended as the last key:\n%s", out)
				}
			},
		},
		{
			name: "user's hooks for the same events stay first and byte for byte",
			in: `{
  "model": "sonnet",
  "hooks": {
    "PreToolUse": [
      {
        "matcher": "Bash",
        "hooks": [ { "type": "command", "command": "./audit.sh" } ]
      }
    ],
    "Notification": [{"hooks": [{"type": "command", "command": "notify-send hi"}]}]
  },
  "env": {"A": "1"}
}
`,
			check: func(t *testing.T, in, out []byte) {
				for _, kept := range []string{
					`"hooks": [ { "type": "command", "command": "./audit.sh" } ]`,
					`"Notification": [{"hooks": [{"type": "command", "command": "notify-send hi"}]}]`,
					"{\n  \"model\": \"sonnet\",\n  \"hooks\": {\n    \"PreToolUse\": [\n",
					"\n  },\n  \"env\": {\"A\": \"1\"}\n}\n",
				} {
					if !bytes.Contains(out, []byte(kept)) {
						t.Errorf("lost %q:\n%s", kept, out)
					}
				}
				got := settingsHookCommands(t, out)["PreToolUse"]
				want := []string{"Bash ./audit.sh", "Bash " + guarded(settingsTestBin, "block-dangerous-commands")}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("PreToolUse = %q, want %q", got, want)
				}
			},
		},
		{
			name: "old registration updated in place",
			in: `{
  "hooks": {
    "Stop": [
      {
        "hooks": [
          {"type": "command", "command": "/old/path/ctx system stop", "timeout": 60, "statusMessage": "saving"},
          {"type": "command", "command": "say done"}
        ]
      }
    ],
    "SessionEnd": [{"hooks": [{"type": "command", "command": "ctx system session-end"}]}]
  }
}`,
			check: func(t *testing.T, in, out []byte) {
				cmds := settingsHookCommands(t, out)
				if want := []string{"- " + guarded(settingsTestBin, "stop"), "- say done"}; !reflect.DeepEqual(cmds["Stop"], want) {
					t.Errorf("Stop = %q, want %q", cmds["Stop"], want)
				}
				if want := []string{"- " + guarded(settingsTestBin, "session-end")}; !reflect.DeepEqual(cmds["SessionEnd"], want) {
					t.Errorf("SessionEnd = %q, want %q", cmds["SessionEnd"], want)
				}
				entry := `{
            "type": "command",
            "command": "` + guarded(settingsTestBin, "stop") + `",
            "timeout": 10,
            "statusMessage": "saving"
          }`
				if !bytes.Contains(out, []byte(entry)) {
					t.Errorf("entry not updated in place, keeping the user's key:\n%s", out)
				}
				if !bytes.Contains(out, []byte(`"timeout": 2`)) {
					t.Errorf("session-end timeout not added:\n%s", out)
				}
			},
		},
		{
			name: "duplicates collapse to one",
			in: `{"hooks": {"Stop": [
  {"hooks": [{"type": "command", "command": "ctx system stop"}]},
  {"hooks": [{"type": "command", "command": "/x/ctx system stop", "timeout": 10}]}
]}}`,
			check: func(t *testing.T, in, out []byte) {
				if got := settingsHookCommands(t, out)["Stop"]; len(got) != 1 {
					t.Errorf("Stop = %q, want one entry", got)
				}
			},
		},
		{
			name: "ctx entry moved out of a user's group with another matcher",
			in: `{"hooks": {"PreToolUse": [
  {"matcher": "Write", "hooks": [
    {"type": "command", "command": "ctx system block-dangerous-commands"},
    {"type": "command", "command": "lint-file"}
  ]}
]}}`,
			check: func(t *testing.T, in, out []byte) {
				got := settingsHookCommands(t, out)["PreToolUse"]
				want := []string{"Write lint-file", "Bash " + guarded(settingsTestBin, "block-dangerous-commands")}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("PreToolUse = %q, want %q", got, want)
				}
			},
		},
		{
			name: "ctx's own group gets its matcher fixed in place",
			in: `{"hooks": {"PreToolUse": [
  {"matcher": "Edit", "hooks": [{"type": "command", "command": "ctx system block-dangerous-commands"}]},
  {"matcher": "Write", "hooks": [{"type": "command", "command": "lint-file"}]}
]}}`,
			check: func(t *testing.T, in, out []byte) {
				got := settingsHookCommands(t, out)["PreToolUse"]
				want := []string{"Bash " + guarded(settingsTestBin, "block-dangerous-commands"), "Write lint-file"}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("PreToolUse = %q, want %q", got, want)
				}
			},
		},
		{
			name: "an empty matcher counts as match-all",
			in: `{"hooks": {"PostToolUse": [
  {"matcher": "", "hooks": [{"type": "command", "command": "` + guarded(settingsTestBin, "record-action") + `", "timeout": 10}]}
]}}`,
			check: func(t *testing.T, in, out []byte) {
				if got := settingsHookCommands(t, out)["PostToolUse"]; !reflect.DeepEqual(got, []string{" " + guarded(settingsTestBin, "record-action")}) {
					t.Errorf("PostToolUse = %q", got)
				}
			},
		},
		{
			name: "unknown ctx subcommands are left alone",
			in:   `{"hooks": {"Notification": [{"hooks": [{"type": "command", "command": "ctx system from-the-future"}]}]}}`,
			check: func(t *testing.T, in, out []byte) {
				if got := settingsHookCommands(t, out)["Notification"]; !reflect.DeepEqual(got, []string{"- ctx system from-the-future"}) {
					t.Errorf("Notification = %q", got)
				}
			},
		},
		{
			name: "four-space file",
			in:   "{\n    \"model\": \"opus\",\n    \"hooks\": {\n        \"Stop\": []\n    }\n}\n",
			check: func(t *testing.T, in, out []byte) {
				checkSettingsIndented(t, out, "    ")
			},
		},
		{
			name: "tab-indented file",
			in:   "{\n\t\"model\": \"opus\"\n}",
			check: func(t *testing.T, in, out []byte) {
				checkSettingsIndented(t, out, "\t")
			},
		},
		{
			name: "one-line file stays on one line",
			in:   `{"model":"opus","hooks":{"Stop":[]}}`,
			check: func(t *testing.T, in, out []byte) {
				if bytes.Contains(out, []byte("\n")) {
					t.Errorf("newline added to a one-line file:\n%s", out)
				}
			},
		},
		{
			name: "html characters are not escaped",
			in:   `{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "a && b > /dev/null"}]}]}}`,
			check: func(t *testing.T, in, out []byte) {
				if !bytes.Contains(out, []byte(`"a && b > /dev/null"`)) {
					t.Errorf("user command re-escaped:\n%s", out)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := []byte(tt.in)
			out, changed, err := MergeSettings(in, regs)
			if err != nil {
				t.Fatal(err)
			}
			if !changed {
				t.Fatal("changed = false")
			}
			checkCtxHooksCurrent(t, out, regs)
			checkOtherSettingsKeys(t, in, out)
			if tt.check != nil {
				tt.check(t, in, out)
			}
			again, changed, err := MergeSettings(out, regs)
			if err != nil || changed || !bytes.Equal(again, out) {
				t.Errorf("second merge: changed %v, err %v, identical %v", changed, err, bytes.Equal(again, out))
			}
		})
	}
}

// checkCtxHooksCurrent checks that each registration appears exactly once and is current.
func checkCtxHooksCurrent(t *testing.T, out []byte, regs []Registration) {
	t.Helper()
	cmds := settingsHookCommands(t, out)
	for _, r := range regs {
		n := 0
		for _, c := range cmds[r.Event] {
			if strings.HasSuffix(c, " system "+r.Subcommand()) {
				n++
			}
		}
		if n != 1 {
			t.Errorf("%s: %d ctx entries, want 1:\n%s", r.Key(), n, out)
		}
	}
	present, current, err := InstalledHooks(out, regs)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range regs {
		if !present[r.Key()] || !current[r.Key()] {
			t.Errorf("%s: present %v, current %v", r.Key(), present[r.Key()], current[r.Key()])
		}
	}
}

// checkOtherSettingsKeys checks that every top-level key but "hooks" holds the same value.
func checkOtherSettingsKeys(t *testing.T, in, out []byte) {
	t.Helper()
	decode := func(b []byte) map[string]any {
		m := map[string]any{}
		if len(bytes.TrimSpace(b)) > 0 {
			if err := json.Unmarshal(b, &m); err != nil {
				t.Fatal(err)
			}
		}
		delete(m, "hooks")
		return m
	}
	if a, b := decode(in), decode(out); !reflect.DeepEqual(a, b) {
		t.Errorf("other keys changed: %v -> %v", a, b)
	}
}

// checkSettingsIndented checks that the whole output is indented with unit, as
// json.MarshalIndent would write it.
func checkSettingsIndented(t *testing.T, out []byte, unit string) {
	t.Helper()
	var buf bytes.Buffer
	if err := json.Indent(&buf, out, "", unit); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(bytes.TrimSpace(buf.Bytes()), bytes.TrimSpace(out)) {
		t.Errorf("not indented with %q throughout:\n%s", unit, out)
	}
}

func TestMergeSettingsRefusesBadInput(t *testing.T) {
	tests := []struct{ name, in, wantErr string }{
		{"invalid JSON", "{\n  \"model\": \"opus\",\n}\n", "invalid JSON at line 3, column 1"},
		{"trailing garbage", `{"a": 1} x`, "invalid JSON"},
		{"comment", "{\n  // a comment\n  \"a\": 1\n}", "invalid JSON at line 2"},
		{"top-level array", `[]`, "top level is an array, not an object"},
		{"hooks is an array", `{"hooks": []}`, `"hooks" is an array, not an object`},
		{"hooks is null", `{"hooks": null}`, `"hooks" is null, not an object`},
		{"event is an object", `{"hooks": {"Stop": {"hooks": []}}}`, `"hooks"."Stop" is an object, not an array`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, changed, err := MergeSettings([]byte(tt.in), Registrations(settingsTestBin))
			if err == nil {
				t.Fatalf("no error; changed %v, out:\n%s", changed, out)
			}
			if !errors.Is(err, ErrSettingsInvalid) {
				t.Errorf("error %v does not match ErrSettingsInvalid", err)
			}
			if !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("error %q does not contain %q", err, tt.wantErr)
			}
			if _, _, err := InstalledHooks([]byte(tt.in), Registrations(settingsTestBin)); err == nil {
				t.Error("InstalledHooks accepted it")
			}
		})
	}
}

func TestMergeSettingsMalformedGroupsAreKept(t *testing.T) {
	in := []byte(`{"hooks": {"Stop": ["odd", {"matcher": 1}, {"hooks": "x"}]}}`)
	out, _, err := MergeSettings(in, Registrations(settingsTestBin))
	if err != nil {
		t.Fatal(err)
	}
	for _, kept := range []string{`"odd"`, `{"matcher": 1}`, `{"hooks": "x"}`} {
		if !bytes.Contains(out, []byte(kept)) {
			t.Errorf("lost %s:\n%s", kept, out)
		}
	}
}

func TestInstalledHooks(t *testing.T) {
	regs := Registrations(settingsTestBin)
	merged, _, err := MergeSettings(nil, regs)
	if err != nil {
		t.Fatal(err)
	}
	stop := `{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "` + guarded(settingsTestBin, "stop") + `", "timeout": 10}]}]}}`
	oldStop := `{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "` + settingsTestBin + ` system stop", "timeout": 10}]}]}}`
	tests := []struct {
		name             string
		in               string
		regs             []Registration
		present, current []string // keys expected true
	}{
		{name: "nothing", in: "", regs: regs},
		{name: "all", in: string(merged), regs: regs, present: registrationKeys(regs), current: registrationKeys(regs)},
		{name: "one current", in: stop, regs: regs, present: []string{"Stop/stop"}, current: []string{"Stop/stop"}},
		{name: "another binary", in: stop, regs: Registrations("/elsewhere/ctx"), present: []string{"Stop/stop"}},
		{name: "old timeout", in: strings.Replace(stop, "10", "60", 1), regs: regs, present: []string{"Stop/stop"}},
		{name: "unguarded form of an older ctx", in: oldStop, regs: regs, present: []string{"Stop/stop"}},
		{name: "on the PATH", in: strings.ReplaceAll(stop, settingsTestBin, "ctx"), regs: Registrations(""), present: []string{"Stop/stop"}, current: []string{"Stop/stop"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			present, current, err := InstalledHooks([]byte(tt.in), tt.regs)
			if err != nil {
				t.Fatal(err)
			}
			if got := settingsTrueKeys(present); !reflect.DeepEqual(got, settingsSorted(tt.present)) {
				t.Errorf("present = %v, want %v", got, tt.present)
			}
			if got := settingsTrueKeys(current); !reflect.DeepEqual(got, settingsSorted(tt.current)) {
				t.Errorf("current = %v, want %v", got, tt.current)
			}
		})
	}
}

func registrationKeys(regs []Registration) []string {
	var ks []string
	for _, r := range regs {
		ks = append(ks, r.Key())
	}
	return ks
}

func settingsTrueKeys(m map[string]bool) []string {
	var ks []string
	for k, v := range m {
		if v {
			ks = append(ks, k)
		}
	}
	return settingsSorted(ks)
}

func settingsSorted(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}

func TestWriteSettings(t *testing.T) {
	regs := Registrations(settingsTestBin)
	userSettings := "{\n  \"model\": \"opus\"\n}\n"
	tests := []struct {
		name        string
		existing    *string // nil: no file
		mode        os.FileMode
		dryRun      bool
		wantChanged bool
		wantBackup  bool
		wantErr     string
	}{
		{name: "missing file", wantChanged: true},
		{name: "existing file", existing: &userSettings, mode: 0o600, wantChanged: true, wantBackup: true},
		{name: "dry run, missing file", dryRun: true, wantChanged: true},
		{name: "dry run, existing file", existing: &userSettings, mode: 0o644, dryRun: true, wantChanged: true},
		{name: "invalid JSON", existing: settingsText("{\"model\": "), mode: 0o644, wantErr: "invalid JSON"},
		{name: "hooks is an array", existing: settingsText(`{"hooks": []}`), mode: 0o644, wantErr: `"hooks" is an array`},
		{name: "dry run, invalid JSON", existing: settingsText("nope"), mode: 0o644, dryRun: true, wantErr: "invalid JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			path := filepath.Join(root, ".claude", "settings.json")
			if tt.existing != nil {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(*tt.existing), tt.mode); err != nil {
					t.Fatal(err)
				}
			}
			before := settingsTree(t, root)

			changed, backup, err := WriteSettings(path, regs, tt.dryRun)

			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), path) {
					t.Fatalf("error = %v, want one naming %s and containing %q", err, path, tt.wantErr)
				}
				if !errors.Is(err, ErrSettingsInvalid) {
					t.Errorf("error does not match ErrSettingsInvalid")
				}
				checkSettingsTreeUnchanged(t, root, before)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if changed != tt.wantChanged {
				t.Errorf("changed = %v, want %v", changed, tt.wantChanged)
			}
			if tt.dryRun {
				if backup != "" {
					t.Errorf("dry run reported backup %q", backup)
				}
				checkSettingsTreeUnchanged(t, root, before)
				return
			}

			out := readSettingsTestFile(t, path)
			checkCtxHooksCurrent(t, out, regs)
			if tt.existing != nil {
				if info, err := os.Stat(path); err != nil || info.Mode().Perm() != tt.mode {
					t.Errorf("mode not kept: %v %v", info.Mode(), err)
				}
			}
			if tt.wantBackup {
				if backup != path+SettingsBackupSuffix {
					t.Errorf("backup = %q", backup)
				}
				if got := string(readSettingsTestFile(t, backup)); got != *tt.existing {
					t.Errorf("backup holds %q, want the old file", got)
				}
			} else if backup != "" || settingsFileExists(path+SettingsBackupSuffix) {
				t.Errorf("backup %q written for a new file", backup)
			}

			// A second run changes nothing and writes no backup.
			if tt.wantBackup {
				if err := os.Remove(backup); err != nil {
					t.Fatal(err)
				}
			}
			changed, backup, err = WriteSettings(path, regs, false)
			if err != nil || changed || backup != "" {
				t.Errorf("second run: changed %v, backup %q, err %v", changed, backup, err)
			}
			if settingsFileExists(path + SettingsBackupSuffix) {
				t.Error("second run wrote a backup")
			}
			if !bytes.Equal(readSettingsTestFile(t, path), out) {
				t.Error("second run changed the file")
			}
		})
	}
}

func TestWriteSettingsThroughSymlink(t *testing.T) {
	root := t.TempDir()
	target := filepath.Join(root, "dotfiles", "settings.json")
	link := filepath.Join(root, ".claude", "settings.json")
	for _, dir := range []string{filepath.Dir(target), filepath.Dir(link)} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(target, []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Skip("symlinks unavailable:", err)
	}
	if _, _, err := WriteSettings(link, Registrations(settingsTestBin), false); err != nil {
		t.Fatal(err)
	}
	if info, err := os.Lstat(link); err != nil || info.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the symlink was replaced: %v %v", info.Mode(), err)
	}
	checkCtxHooksCurrent(t, readSettingsTestFile(t, target), Registrations(settingsTestBin))
}

func TestCtxHookFiles(t *testing.T) {
	root := t.TempDir()
	home, project := filepath.Join(root, "home"), filepath.Join(root, "p")
	write := func(path, content string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	files := SettingsFiles(project, func(k string) string { return map[string]string{"HOME": home}[k] })
	user, shared, local := files[0].Path, files[1].Path, files[2].Path

	write(user, `{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "/opt/ctx/ctx system stop"}]}]}}`)
	write(shared, `{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "say done"}]}]}}`)
	write(local, `{"model": "opus",`) // not valid: left out, never an error here

	levels := func(fs []SettingsFile) []Level {
		var out []Level
		for _, f := range fs {
			out = append(out, f.Level)
		}
		return out
	}
	if got := levels(CtxHookFiles(files, "")); !reflect.DeepEqual(got, []Level{LevelUser}) {
		t.Errorf("CtxHookFiles = %v, want [user]", got)
	}
	write(shared, `{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "`+guarded("", "stop")+`"}]}]}}`)
	if got := levels(CtxHookFiles(files, "")); !reflect.DeepEqual(got, []Level{LevelUser, LevelProject}) {
		t.Errorf("CtxHookFiles = %v, want [user project]", got)
	}
	if got := levels(CtxHookFiles(files, shared)); !reflect.DeepEqual(got, []Level{LevelUser}) {
		t.Errorf("CtxHookFiles except the project's = %v, want [user]", got)
	}
	if got := levels(CtxHookFiles(files, user)); !reflect.DeepEqual(got, []Level{LevelProject}) {
		t.Errorf("CtxHookFiles except the user's = %v, want [project]", got)
	}
}

// TestHookCommandUnderSh runs the registered command as Claude Code does, `sh -c
// COMMAND` with the payload on stdin: nothing at all where ctx is missing, and ctx with
// the payload and ctx's exit status where it is there.
func TestHookCommandUnderSh(t *testing.T) {
	sh := "/bin/sh"
	if _, err := os.Stat(sh); err != nil {
		t.Skip("no /bin/sh:", err)
	}
	withCtx := t.TempDir()
	fake := "#!/bin/sh\nprintf 'args: %s\\n' \"$*\"\nwhile IFS= read -r line; do printf 'stdin: %s\\n' \"$line\"; done\nexit 3\n"
	if err := os.WriteFile(filepath.Join(withCtx, "ctx"), []byte(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	elsewhere := filepath.Join(t.TempDir(), "my tools")
	if err := os.MkdirAll(elsewhere, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(elsewhere, "ctx"), []byte(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	empty := t.TempDir()
	tests := []struct {
		name, bin, path string
		wantOut         string
		wantCode        int
	}{
		{name: "ctx missing", path: empty, wantOut: "", wantCode: 0},
		{name: "no PATH at all", path: "", wantOut: "", wantCode: 0},
		{name: "ctx on the PATH", path: withCtx, wantOut: "args: system stop\nstdin: {\"session_id\":\"s1\"}\n", wantCode: 3},
		{name: "a path, present", bin: filepath.Join(elsewhere, "ctx"), path: empty, wantOut: "args: system stop\nstdin: {\"session_id\":\"s1\"}\n", wantCode: 3},
		{name: "a path, missing", bin: filepath.Join(empty, "ctx"), path: withCtx, wantOut: "", wantCode: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := exec.Command(sh, "-c", HookCommand(tt.bin, "stop"))
			cmd.Env = []string{"PATH=" + tt.path}
			cmd.Stdin = strings.NewReader(`{"session_id":"s1"}` + "\n")
			var out, errOut bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errOut
			err := cmd.Run()
			code := 0
			var exitErr *exec.ExitError
			if errors.As(err, &exitErr) {
				code = exitErr.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if out.String() != tt.wantOut || errOut.Len() != 0 || code != tt.wantCode {
				t.Errorf("stdout %q, stderr %q, exit %d; want stdout %q, no stderr, exit %d", out.String(), errOut.String(), code, tt.wantOut, tt.wantCode)
			}
		})
	}
}

// TestMergeSettingsUpgradesEveryForm: whatever form an older ctx wrote, a merge turns
// each ctx entry into the current one where it stands, and leaves everything else as
// it was.
func TestMergeSettingsUpgradesEveryForm(t *testing.T) {
	in := []byte(`{
  "model": "opus",
  "hooks": {
    "SessionStart": [{"hooks": [{"type": "command", "command": "ctx system session-start", "timeout": 10}]}],
    "UserPromptSubmit": [{"hooks": [
      {"type": "command", "command": "./before.sh"},
      {"type": "command", "command": "/home/me/go/bin/ctx system check-context-size", "timeout": 10},
      {"type": "command", "command": "./after.sh"}
    ]}],
    "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "'/Users/Jane Doe/bin/ctx' system block-dangerous-commands", "timeout": 10}]}],
    "PostToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": "command -v /opt/ctx-dev/ctx >/dev/null 2>&1 || exit 0; exec /opt/ctx-dev/ctx system record-action", "timeout": 10}]}],
    "Stop": [
      {"hooks": [{"type": "command", "command": "command -v say >/dev/null 2>&1 || exit 0; exec say done"}]},
      {"hooks": [{"type": "command", "command": "ctx system stop"}]},
      {"hooks": [{"type": "command", "command": "command -v ctx >/dev/null 2>&1 || exit 0; exec ctx system stop", "timeout": 10}]}
    ],
    "Notification": [{"hooks": [{"type": "command", "command": "notify-send hi"}]}]
  }
}
`)
	regs := Registrations("")
	out, changed, err := MergeSettings(in, regs)
	if err != nil || !changed {
		t.Fatalf("changed %v, err %v", changed, err)
	}
	checkCtxHooksCurrent(t, out, regs)
	checkOtherSettingsKeys(t, in, out)
	cmds := settingsHookCommands(t, out)
	want := map[string][]string{
		"SessionStart":      {"- " + guarded("", "session-start")},
		"UserPromptSubmit":  {"- ./before.sh", "- " + guarded("", "check-context-size"), "- ./after.sh"},
		"PreToolUse":        {"Bash " + guarded("", "block-dangerous-commands")},
		"PostToolUse":       {"* " + guarded("", "record-action")},
		"Stop":              {"- command -v say >/dev/null 2>&1 || exit 0; exec say done", "- " + guarded("", "stop")},
		"PreCompact":        {"- " + guarded("", "pre-compact")},
		"PostCompact":       {"- " + guarded("", "post-compact")},
		"SessionEnd":        {"- " + guarded("", "session-end")},
		"PermissionRequest": {"* " + guarded("", "permission-request")},
		"Notification":      {"- notify-send hi"},
	}
	if !reflect.DeepEqual(cmds, want) {
		t.Errorf("hooks after the merge:\n got %q\nwant %q", cmds, want)
	}
	for _, kept := range []string{
		`{"hooks": [{"type": "command", "command": "command -v say >/dev/null 2>&1 || exit 0; exec say done"}]}`,
		`"Notification": [{"hooks": [{"type": "command", "command": "notify-send hi"}]}]`,
		"{\n  \"model\": \"opus\",\n  \"hooks\": {\n",
	} {
		if !bytes.Contains(out, []byte(kept)) {
			t.Errorf("lost %q:\n%s", kept, out)
		}
	}
	again, changed, err := MergeSettings(out, regs)
	if err != nil || changed || !bytes.Equal(again, out) {
		t.Errorf("second merge: changed %v, err %v", changed, err)
	}
	bins, err := InstalledBinaries(out)
	if err != nil || !reflect.DeepEqual(bins, []string{"ctx"}) {
		t.Errorf("InstalledBinaries after the merge = %q, %v", bins, err)
	}

	// The same file merged for --local with a binary's path: the entries change in
	// place again, to the path, and nothing is duplicated.
	local := Registrations("/opt/ctx dev/ctx")
	out2, changed, err := MergeSettings(out, local)
	if err != nil || !changed {
		t.Fatalf("merge with a path: changed %v, err %v", changed, err)
	}
	checkCtxHooksCurrent(t, out2, local)
	if got := settingsHookCommands(t, out2)["Stop"]; !reflect.DeepEqual(got, []string{"- command -v say >/dev/null 2>&1 || exit 0; exec say done", "- " + guarded("'/opt/ctx dev/ctx'", "stop")}) {
		t.Errorf("Stop = %q", got)
	}
}

func FuzzMergeSettings(f *testing.F) {
	for _, seed := range []string{
		"", "{}", `{"a":1}`, "{\n  \"model\": \"x\"\n}\n", `{"hooks":{}}`, `{"hooks":[]}`,
		`{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"ctx system stop"}]}]}}`,
		`{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"command -v ctx >/dev/null 2>&1 || exit 0; exec ctx system stop"}]}]}}`,
		`{"hooks":{"PreToolUse":[{"matcher":"Write","hooks":[{"command":"ctx system block-dangerous-commands"},{"command":"x"}]}]}}`,
		`{"hooks":{"Stop":["x",{"hooks":"y"}]},"hooks":{}}`,
		"{\n\t\"a\": [1, 2],\n\t\"hooks\": {\"Stop\": []}\n}",
	} {
		f.Add([]byte(seed))
	}
	regs := Registrations("/opt/ctx dir/ctx")
	f.Fuzz(func(t *testing.T, in []byte) {
		out, changed, err := MergeSettings(in, regs)
		if err != nil {
			return
		}
		if !changed && !bytes.Equal(out, in) {
			t.Fatal("unchanged, but the bytes differ")
		}
		if !json.Valid(out) {
			t.Fatalf("invalid output:\n%s", out)
		}
		again, changed, err := MergeSettings(out, regs)
		if err != nil || changed || !bytes.Equal(again, out) {
			t.Fatalf("not idempotent: changed %v, err %v\n%s", changed, err, out)
		}
		present, current, err := InstalledHooks(out, regs)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range regs {
			if !present[r.Key()] || !current[r.Key()] {
				t.Fatalf("%s not current after merge:\n%s", r.Key(), out)
			}
		}
		var a, b map[string]any
		if json.Unmarshal(in, &a) == nil && json.Unmarshal(out, &b) == nil {
			delete(a, "hooks")
			delete(b, "hooks")
			if !reflect.DeepEqual(a, b) {
				t.Fatalf("other keys changed: %v -> %v", a, b)
			}
		}
	})
}

func settingsText(s string) *string { return &s }

func settingsFileExists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

func readSettingsTestFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// settingsTree maps every path under root to its content (or "dir"), ignoring the sidecar
// lock file that a write takes.
func settingsTree(t *testing.T, root string) map[string]string {
	t.Helper()
	m := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || strings.HasSuffix(p, ".lock") {
			return err
		}
		if d.IsDir() {
			m[p] = "dir"
			return nil
		}
		b, err := os.ReadFile(p)
		m[p] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func checkSettingsTreeUnchanged(t *testing.T, root string, before map[string]string) {
	t.Helper()
	if after := settingsTree(t, root); !reflect.DeepEqual(before, after) {
		t.Errorf("files changed:\nbefore %v\nafter  %v", before, after)
	}
}

func TestInstalledBinaries(t *testing.T) {
	in := []byte(`{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"say done"},{"type":"command","command":"'/opt/my tools/ctx' system stop"}]}],` +
		`"SessionEnd":[{"hooks":[{"type":"command","command":"ctx system session-end"},{"type":"command","command":"'/opt/my tools/ctx' system session-end"}]}],` +
		`"PreCompact":[{"hooks":[{"type":"command","command":"command -v jq >/dev/null 2>&1 || exit 0; exec jq ."},{"type":"command","command":"command -v /x/ctx >/dev/null 2>&1 || exit 0; exec /x/ctx system pre-compact"}]}]}}`)
	got, err := InstalledBinaries(in)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(got, "|") != "/opt/my tools/ctx|ctx|/x/ctx" {
		t.Errorf("binaries %q", got)
	}
	if _, err := InstalledBinaries([]byte("{")); err == nil {
		t.Errorf("invalid JSON accepted")
	}
}

// TestCtxStatusLine: StatusLineCommand's output is recognised as ctx's for every binary
// it may name, with the command it chains to; other status lines are the person's.
func TestCtxStatusLine(t *testing.T) {
	for _, bin := range []string{"", "/usr/local/bin/ctx", "/home/me/bin/ctx-dev", "/a b/my ctx"} {
		for _, chained := range []string{"", "my-line --short", "echo 'it''s'"} {
			cmd := StatusLineCommand(bin, chained)
			isCtx, got := CtxStatusLine(cmd)
			if !isCtx || got != chained {
				t.Errorf("CtxStatusLine(%q) = %v, %q; want true, %q", cmd, isCtx, got, chained)
			}
		}
	}
	for _, cmd := range []string{
		"my-line --short",
		"echo ctx statusline",
		"command -v jq >/dev/null 2>&1 || exit 0; exec ctx-dev statusline",
	} {
		if isCtx, _ := CtxStatusLine(cmd); isCtx {
			t.Errorf("CtxStatusLine(%q) = true; it is the person's", cmd)
		}
	}
}
