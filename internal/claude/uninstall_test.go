package claude

import (
	"os"
	"path/filepath"
	"testing"
)

// TestRemoveCtxUndoesMerge: settings → MergeSettings (and the status line) → RemoveCtx
// gives back the same bytes, for files laid out as people write them.
func TestRemoveCtxUndoesMerge(t *testing.T) {
	userHook := `{"type": "command", "command": "./lint.sh"}`
	tests := []struct {
		name string
		in   string
	}{
		{"empty", ``},
		{"empty object", "{}\n"},
		{"other keys", "{\n  \"model\": \"opus\",\n  \"env\": {\"A\": \"1\"}\n}\n"},
		{"tab indented", "{\n\t\"model\": \"opus\"\n}\n"},
		{"compact", `{"model":"opus"}`},
		{"own hooks on a ctx event", "{\n  \"hooks\": {\n    \"PreToolUse\": [\n      {\n        \"matcher\": \"Bash\",\n        \"hooks\": [\n          " + userHook + "\n        ]\n      }\n    ]\n  }\n}\n"},
		{"own hooks on another event", "{\n  \"hooks\": {\n    \"Notification\": [\n      {\n        \"hooks\": [\n          " + userHook + "\n        ]\n      }\n    ]\n  },\n  \"model\": \"opus\"\n}\n"},
		{"empty hooks", "{\n  \"hooks\": {}\n}\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			merged, _, err := MergeSettings([]byte(tt.in), Registrations(""))
			if err != nil {
				t.Fatal(err)
			}
			merged, _, err = MergeStatusLine(merged, StatusLineCommand("", ""))
			if err != nil {
				t.Fatal(err)
			}
			out, changed, err := RemoveCtx(merged)
			if err != nil {
				t.Fatal(err)
			}
			if !changed {
				t.Fatal("RemoveCtx reported no change")
			}
			want := tt.in
			if want == "" {
				want = "{}\n"
			}
			if tt.name == "empty hooks" {
				// ctx cannot tell an empty "hooks" the person wrote from one it emptied.
				want = "{}\n"
			}
			if string(out) != want {
				t.Errorf("RemoveCtx(merged) =\n%s\nwant\n%s\nmerged was\n%s", out, want, merged)
			}
			again, changed, err := RemoveCtx(out)
			if err != nil || changed || string(again) != string(out) {
				t.Errorf("second RemoveCtx changed %v, err %v", changed, err)
			}
		})
	}
}

func TestRemoveCtxEveryForm(t *testing.T) {
	in := `{
  "hooks": {
    "UserPromptSubmit": [
      {
        "hooks": [
          {"type": "command", "command": "ctx system check-context-size"},
          {"type": "command", "command": "./mine.sh"}
        ]
      }
    ],
    "Stop": [
      {"hooks": [{"type": "command", "command": "/home/me/go/bin/ctx system stop"}]}
    ],
    "SessionEnd": [
      {"hooks": [{"type": "command", "command": "command -v '/opt/my ctx/ctx' >/dev/null 2>&1 || exit 0; exec '/opt/my ctx/ctx' system session-end"}]}
    ],
    "PostToolUse": [
      {"hooks": [{"type": "command", "command": "notctx system stop"}]}
    ]
  },
  "statusLine": {
    "type": "command",
    "command": "if command -v ctx >/dev/null 2>&1; then exec ctx statusline -- 'my-line --short' ; else exec sh -c 'my-line --short' ; fi",
    "padding": 1
  }
}
`
	want := `{
  "hooks": {
    "UserPromptSubmit": [
      {
        "hooks": [
          {"type": "command", "command": "./mine.sh"}
        ]
      }
    ],
    "PostToolUse": [
      {"hooks": [{"type": "command", "command": "notctx system stop"}]}
    ]
  },
  "statusLine": {
    "type": "command",
    "command": "my-line --short",
    "padding": 1
  }
}
`
	out, changed, err := RemoveCtx([]byte(in))
	if err != nil || !changed {
		t.Fatalf("changed %v, err %v", changed, err)
	}
	if string(out) != want {
		t.Errorf("got\n%s\nwant\n%s", out, want)
	}
}

func TestUninstallSettings(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "settings.json")
	// Laid out as ctx would never write it, so only the backup can give these bytes back.
	original := "{ \"model\" : \"opus\",\n    \"hooks\": {\"Notification\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"./n.sh\"}]}]}\n}"
	if err := os.WriteFile(path, []byte(original), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := WriteSettings(path, Registrations(""), false); err != nil {
		t.Fatal(err)
	}
	res, err := UninstallSettings(path, true)
	if err != nil || !res.Changed || !res.Restored {
		t.Fatalf("dry run: %+v, %v", res, err)
	}
	if got, _ := os.ReadFile(path); string(got) == original {
		t.Fatal("a dry run wrote the file")
	}
	if res, err = UninstallSettings(path, false); err != nil || !res.Restored {
		t.Fatalf("%+v, %v", res, err)
	}
	got, _ := os.ReadFile(path)
	if string(got) != original {
		t.Errorf("got\n%s\nwant\n%s", got, original)
	}
	if info, _ := os.Stat(path); info.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", info.Mode().Perm())
	}
	if _, err := os.Stat(path + SettingsBackupSuffix); !os.IsNotExist(err) {
		t.Errorf("backup left behind: %v", err)
	}

	// A file ctx init created goes away.
	created := filepath.Join(dir, "new", "settings.json")
	if _, _, err := WriteSettings(created, Registrations(""), false); err != nil {
		t.Fatal(err)
	}
	if res, err = UninstallSettings(created, false); err != nil || !res.Removed {
		t.Fatalf("%+v, %v", res, err)
	}
	if _, err := os.Stat(created); !os.IsNotExist(err) {
		t.Errorf("created file left: %v", err)
	}
}

// ctx init --statusline wraps the user-level status line into the project's file,
// which had none: uninstall gives the project's file back without one.
func TestUninstallSettingsStatusLineFromAnotherLevel(t *testing.T) {
	path := filepath.Join(t.TempDir(), "settings.json")
	original := "{\n  \"model\": \"opus\"\n}\n"
	if err := os.WriteFile(path, []byte(original), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := WriteSettings(path, Registrations(""), false); err != nil {
		t.Fatal(err)
	}
	if _, _, err := WriteStatusLine(path, StatusLineCommand("", "user-line"), false, true); err != nil {
		t.Fatal(err)
	}
	res, err := UninstallSettings(path, false)
	if err != nil || !res.Restored {
		t.Fatalf("%+v, %v", res, err)
	}
	if got, _ := os.ReadFile(path); string(got) != original {
		t.Errorf("got\n%s\nwant\n%s", got, original)
	}
}

// FuzzRemoveCtx: whatever the input, RemoveCtx leaves valid settings with no ctx in
// them, and a second pass changes nothing.
func FuzzRemoveCtx(f *testing.F) {
	f.Add([]byte(`{"model":"opus"}`))
	f.Add([]byte("{\n  \"hooks\": {\"Stop\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"ctx system stop\"}, {\"command\": \"x\"}]}]}\n}"))
	f.Add([]byte(`{"statusLine": {"type": "command", "command": "ctx statusline -- 'a b'"}, "hooks": {}}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		out, _, err := RemoveCtx(in)
		if err != nil {
			return
		}
		again, changed, err := RemoveCtx(out)
		if err != nil || changed || string(again) != string(out) {
			t.Fatalf("second pass: changed %v, err %v\nin  %q\nout %q\nagain %q", changed, err, in, out, again)
		}
		if bins, err := InstalledBinaries(out); err != nil || len(bins) > 0 {
			t.Fatalf("ctx left in %q: %v %v", out, bins, err)
		}
	})
}
