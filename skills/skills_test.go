package skills

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// cliCommands are the ctx subcommands a skill may tell the agent to run. It must match
// the commands cmd/ctx registers: a skill naming a command that does not exist would
// send the agent into an error at the worst moment.
var cliCommands = []string{
	"load", "projects", "demo", "new", "save", "close", "show", "sessions",
	"pause", "resume", "init", "doctor", "usage", "journal", "version",
}

// rootFlags are the flags a skill may put straight after `ctx` (the root form).
var rootFlags = []string{"--resume"}

// triggers are the phrases each skill's description must carry, so that the agent
// picks the skill when the user says them.
var triggers = map[string][]string{
	"ctx-resume-project": {"continue project N", "resume project N", "where were we", "pick up where we left off"},
	"ctx-save-progress":  {"save progress", "checkpoint", "save state"},
	"ctx-close-session":  {"done for today", "close session", "wrap up", "end session"},
	"ctx-pause":          {"pause ctx", "quiet mode", "stop the nudges"},
	"ctx-resume":         {"resume ctx", "unpause", "turn nudges back on"},
}

func TestEmbeddedSkills(t *testing.T) {
	all, err := All()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range all {
		names = append(names, s.Name)
	}
	want := []string{"ctx-close-session", "ctx-pause", "ctx-resume", "ctx-resume-project", "ctx-save-progress"}
	if !slices.Equal(names, want) {
		t.Fatalf("skills = %v, want %v (sorted)", names, want)
	}
	for _, s := range all {
		t.Run(s.Name, func(t *testing.T) {
			name, desc, err := Validate(s.Content)
			if err != nil {
				t.Fatal(err)
			}
			if name != s.Name || desc != s.Description {
				t.Errorf("Validate = %q, %q; All gave %q, %q", name, desc, s.Name, s.Description)
			}
			if n := len([]rune(desc)); n > MaxDescriptionLen {
				t.Errorf("description is %d characters", n)
			}
			if !strings.Contains(desc, "Use when") {
				t.Errorf("description does not say when to use the skill: %q", desc)
			}
			for _, phrase := range triggers[s.Name] {
				if !strings.Contains(desc, `"`+phrase+`"`) {
					t.Errorf("description lacks the trigger phrase %q", phrase)
				}
			}
			if len(triggers[s.Name]) == 0 {
				t.Errorf("no trigger phrases listed for %s in this test", s.Name)
			}
			if len(commands(s.Content)) == 0 {
				t.Error("the body names no ctx command to run")
			}
		})
	}
}

// codeSpans matches fenced blocks and inline code, where a skill puts the commands it
// wants run; prose such as "ctx picks the project" is not a command.
var codeSpans = regexp.MustCompile("(?s)```[a-z]*\\n(.*?)```|`([^`\\n]+)`")

// ctxCall matches `ctx` as a command word followed by its first argument.
var ctxCall = regexp.MustCompile(`(?m)(?:^|[\s;|&(])ctx[ \t]+(\S+)`)

// commands returns the first argument of every ctx invocation in a skill's code.
func commands(content []byte) []string {
	var out []string
	for _, m := range codeSpans.FindAllSubmatch(content, -1) {
		code := m[1]
		if code == nil {
			code = m[2]
		}
		for _, c := range ctxCall.FindAllSubmatch(code, -1) {
			out = append(out, string(c[1]))
		}
	}
	return out
}

func TestSkillCommandsExist(t *testing.T) {
	all, err := All()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range all {
		for _, c := range commands(s.Content) {
			if !slices.Contains(cliCommands, c) && !slices.Contains(rootFlags, c) {
				t.Errorf("%s runs `ctx %s`, which is not a ctx command", s.Name, c)
			}
		}
	}
}

func TestCommandsFindsInvocations(t *testing.T) {
	content := []byte("Run `ctx save --x` or:\n\n```bash\nctx --resume --json\necho; ctx bogus\n```\nctx prose is ignored.\n")
	got := commands(content)
	want := []string{"save", "--resume", "bogus"}
	if !slices.Equal(got, want) {
		t.Errorf("commands = %v, want %v", got, want)
	}
}

func TestValidate(t *testing.T) {
	long := strings.Repeat("a", MaxNameLen+1)
	tests := []struct {
		name    string
		content string
		wantErr string // empty: valid
	}{
		{"valid", "---\nname: my-skill\ndescription: Does a thing. Use when asked.\n---\nbody\n", ""},
		{"crlf", "---\r\nname: my-skill\r\ndescription: Does a thing.\r\n---\r\nbody\r\n", ""},
		{"extra keys allowed", "---\nname: a1\ndescription: x\nargument-hint: \"[n]\"\n---\n", ""},
		{"folded description", "---\nname: a\ndescription: >\n  two\n  lines\n---\n", ""},
		{"max name", "---\nname: " + long[:MaxNameLen] + "\ndescription: x\n---\n", ""},
		{"no frontmatter", "# title\n", "must start with"},
		{"not first line", "\n---\nname: a\ndescription: x\n---\n", "must start with"},
		{"unclosed", "---\nname: a\ndescription: x\n", "no closing"},
		{"bad yaml", "---\nname: [a\n---\n", "frontmatter:"},
		{"no name", "---\ndescription: x\n---\n", "name is missing"},
		{"upper case", "---\nname: My-Skill\ndescription: x\n---\n", "lowercase"},
		{"underscore", "---\nname: my_skill\ndescription: x\n---\n", "lowercase"},
		{"leading hyphen", "---\nname: -a\ndescription: x\n---\n", "hyphens"},
		{"double hyphen", "---\nname: a--b\ndescription: x\n---\n", "hyphens"},
		{"too long", "---\nname: " + long + "\ndescription: x\n---\n", "more than 64"},
		{"reserved", "---\nname: claude-helper\ndescription: x\n---\n", "reserved"},
		{"no description", "---\nname: a\n---\n", "description is missing"},
		{"blank description", "---\nname: a\ndescription: \"  \"\n---\n", "description is missing"},
		{"long description", "---\nname: a\ndescription: " + strings.Repeat("é", MaxDescriptionLen+1) + "\n---\n", "more than 1024"},
		{"xml in description", "---\nname: a\ndescription: use <b>this</b>\n---\n", "may not contain"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := Validate([]byte(tt.content))
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tt.wantErr != "" && err == nil:
				t.Fatalf("no error, want one containing %q", tt.wantErr)
			case tt.wantErr != "" && !strings.Contains(err.Error(), tt.wantErr):
				t.Fatalf("error %q does not contain %q", err, tt.wantErr)
			}
		})
	}
}

func FuzzValidate(f *testing.F) {
	all, err := All()
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range all {
		f.Add(s.Content)
	}
	f.Add([]byte("---\n---\n"))
	f.Add([]byte("---\nname: a\ndescription: b\n---"))
	f.Fuzz(func(t *testing.T, content []byte) {
		name, desc, err := Validate(content)
		if err != nil {
			return
		}
		if !namePattern().MatchString(name) || len(name) > MaxNameLen {
			t.Errorf("accepted name %q", name)
		}
		if strings.TrimSpace(desc) == "" || len([]rune(desc)) > MaxDescriptionLen {
			t.Errorf("accepted description %q", desc)
		}
	})
}

// actions returns a function that maps Install's or Status's results to skill name →
// action, failing the test on an error; it takes the call's two results directly.
func actions(t *testing.T) func([]InstallResult, error) map[string]string {
	return func(rs []InstallResult, err error) map[string]string {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]string{}
		for _, r := range rs {
			m[r.Name] = r.Action
		}
		return m
	}
}

// allWith returns every embedded skill mapped to action, with overrides.
func allWith(t *testing.T, action string, overrides map[string]string) map[string]string {
	t.Helper()
	all, err := All()
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]string{}
	for _, s := range all {
		m[s.Name] = action
	}
	for k, v := range overrides {
		m[k] = v
	}
	return m
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func embedded(t *testing.T, name string) []byte {
	t.Helper()
	content, err := files.ReadFile("files/" + name + "/" + FileName)
	if err != nil {
		t.Fatal(err)
	}
	return content
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func writeFile(t *testing.T, path string, content []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, content, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestInstall(t *testing.T) {
	dir := filepath.Join(t.TempDir(), ".claude", "skills")
	skillFile := func(name string) string { return filepath.Join(dir, name, FileName) }

	// A fresh install writes every skill and its manifest.
	got := actions(t)(Install(dir, false, false))
	if want := allWith(t, ActionInstalled, nil); !equalMaps(got, want) {
		t.Fatalf("fresh install = %v, want %v", got, want)
	}
	for name := range got {
		if !bytes.Equal(readFile(t, skillFile(name)), embedded(t, name)) {
			t.Errorf("%s: installed file differs from the embedded one", name)
		}
		manifest := string(readFile(t, filepath.Join(dir, name, ManifestName)))
		if !strings.HasPrefix(manifest, hash(embedded(t, name))+"  SKILL.md") {
			t.Errorf("%s: manifest = %q", name, manifest)
		}
	}

	// A second run changes nothing.
	got = actions(t)(Install(dir, false, false))
	if want := allWith(t, ActionUnchanged, nil); !equalMaps(got, want) {
		t.Fatalf("second install = %v, want %v", got, want)
	}

	// A file the user edited is kept, and the report says why.
	edited := append(embedded(t, "ctx-pause"), []byte("\nMy own note.\n")...)
	writeFile(t, skillFile("ctx-pause"), edited)
	rs, err := Install(dir, false, false)
	got = actions(t)(rs, err)
	if want := allWith(t, ActionUnchanged, map[string]string{"ctx-pause": ActionKept}); !equalMaps(got, want) {
		t.Fatalf("install over an edit = %v, want %v", got, want)
	}
	for _, r := range rs {
		if r.Name == "ctx-pause" && r.Reason != "changed by you" {
			t.Errorf("kept reason = %q", r.Reason)
		}
	}
	if !bytes.Equal(readFile(t, skillFile("ctx-pause")), edited) {
		t.Fatal("the user's edit was overwritten")
	}

	// A dry run with force reports the replacement and writes nothing.
	got = actions(t)(Install(dir, true, true))
	if want := allWith(t, ActionUnchanged, map[string]string{"ctx-pause": ActionUpdated}); !equalMaps(got, want) {
		t.Fatalf("dry run with force = %v, want %v", got, want)
	}
	if !bytes.Equal(readFile(t, skillFile("ctx-pause")), edited) {
		t.Fatal("a dry run wrote the file")
	}

	// force replaces the user's file.
	got = actions(t)(Install(dir, true, false))
	if want := allWith(t, ActionUnchanged, map[string]string{"ctx-pause": ActionUpdated}); !equalMaps(got, want) {
		t.Fatalf("install with force = %v, want %v", got, want)
	}
	if !bytes.Equal(readFile(t, skillFile("ctx-pause")), embedded(t, "ctx-pause")) {
		t.Fatal("force did not replace the file")
	}

	// A file an older ctx wrote (its manifest matches it) is updated without force.
	old := []byte("---\nname: ctx-resume\ndescription: The old wording.\n---\nold body\n")
	writeFile(t, skillFile("ctx-resume"), old)
	writeFile(t, filepath.Join(dir, "ctx-resume", ManifestName), []byte(hash(old)+"  SKILL.md\n"))
	got = actions(t)(Install(dir, false, false))
	if want := allWith(t, ActionUnchanged, map[string]string{"ctx-resume": ActionUpdated}); !equalMaps(got, want) {
		t.Fatalf("install over an older version = %v, want %v", got, want)
	}
	if !bytes.Equal(readFile(t, skillFile("ctx-resume")), embedded(t, "ctx-resume")) {
		t.Fatal("the older version was not updated")
	}
}

func TestInstallDryRunWritesNothing(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, ".claude", "skills")
	got := actions(t)(Install(dir, false, true))
	if want := allWith(t, ActionInstalled, nil); !equalMaps(got, want) {
		t.Fatalf("dry run = %v, want %v", got, want)
	}
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 0 {
		t.Fatalf("dry run created %v", entries)
	}
}

func TestInstallRecordsManifestForHandCopiedFile(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "ctx-pause", FileName), embedded(t, "ctx-pause"))
	got := actions(t)(Install(dir, false, false))
	if got["ctx-pause"] != ActionUnchanged {
		t.Fatalf("ctx-pause = %q, want unchanged", got["ctx-pause"])
	}
	m := string(readFile(t, filepath.Join(dir, "ctx-pause", ManifestName)))
	if !strings.HasPrefix(m, hash(embedded(t, "ctx-pause"))) {
		t.Fatalf("manifest = %q", m)
	}
}

func TestStatus(t *testing.T) {
	dir := t.TempDir()
	if _, err := Install(dir, false, false); err != nil {
		t.Fatal(err)
	}
	// ctx-pause: changed by the user; ctx-resume: an older ctx's file; ctx-close-session:
	// removed; a broken manifest makes a differing file count as the user's.
	writeFile(t, filepath.Join(dir, "ctx-pause", FileName), []byte("mine\n"))
	old := []byte("old\n")
	writeFile(t, filepath.Join(dir, "ctx-resume", FileName), old)
	writeFile(t, filepath.Join(dir, "ctx-resume", ManifestName), []byte(strings.ToUpper(hash(old))+"\n"))
	if err := os.Remove(filepath.Join(dir, "ctx-close-session", FileName)); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "ctx-save-progress", FileName), []byte("edited\n"))
	writeFile(t, filepath.Join(dir, "ctx-save-progress", ManifestName), []byte("not a hash\n"))

	before := snapshot(t, dir)
	got := actions(t)(Status(dir))
	want := map[string]string{
		"ctx-pause":          StatusChanged,
		"ctx-resume":         StatusOutdated,
		"ctx-close-session":  StatusMissing,
		"ctx-resume-project": StatusCurrent,
		"ctx-save-progress":  StatusChanged,
	}
	if !equalMaps(got, want) {
		t.Fatalf("Status = %v, want %v", got, want)
	}
	if after := snapshot(t, dir); !equalMaps(before, after) {
		t.Fatal("Status changed files")
	}
}

// snapshot maps every file under dir to its content.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	m := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
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

func TestUninstall(t *testing.T) {
	dir := t.TempDir()
	if _, err := Install(dir, false, false); err != nil {
		t.Fatal(err)
	}
	all, err := All()
	if err != nil || len(all) < 2 {
		t.Fatalf("skills: %d, %v", len(all), err)
	}
	edited, extra := all[0].Name, all[1].Name
	writeFile(t, filepath.Join(dir, edited, FileName), []byte("mine\n"))
	writeFile(t, filepath.Join(dir, extra, "notes.md"), []byte("mine too\n"))

	before := snapshot(t, dir)
	results, err := Uninstall(dir, false, true)
	if err != nil {
		t.Fatal(err)
	}
	if got := snapshot(t, dir); !equalMaps(got, before) {
		t.Error("a dry run changed the folder")
	}
	want := allWith(t, ActionRemoved, map[string]string{edited: ActionKept})
	if got := actions(t)(results, nil); !equalMaps(got, want) {
		t.Errorf("dry run: %v, want %v", got, want)
	}

	if results, err = Uninstall(dir, false, false); err != nil {
		t.Fatal(err)
	}
	if got := actions(t)(results, nil); !equalMaps(got, want) {
		t.Errorf("uninstall: %v, want %v", got, want)
	}
	if got := string(readFile(t, filepath.Join(dir, edited, FileName))); got != "mine\n" {
		t.Errorf("edited skill = %q", got)
	}
	if got := string(readFile(t, filepath.Join(dir, extra, "notes.md"))); got != "mine too\n" {
		t.Errorf("own file = %q", got)
	}
	if _, err := os.Stat(filepath.Join(dir, extra, FileName)); !os.IsNotExist(err) {
		t.Errorf("skill file left: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, all[2].Name)); !os.IsNotExist(err) {
		t.Errorf("emptied skill folder left: %v", err)
	}

	if results, err = Uninstall(dir, true, false); err != nil {
		t.Fatal(err)
	}
	want = allWith(t, ActionAbsent, map[string]string{edited: ActionRemoved})
	if got := actions(t)(results, nil); !equalMaps(got, want) {
		t.Errorf("forced: %v, want %v", got, want)
	}
}
