package state

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/ctxtools/ctx/gitstate"
	"github.com/ctxtools/ctx/internal/durable"
)

// fullSnapshot fills every field, with values in the types JSON decodes them to, so that
// a round trip can be compared with reflect.DeepEqual.
func fullSnapshot() *Snapshot {
	return &Snapshot{
		SessionID: "abc-123",
		Project: &SnapshotProject{
			ID:   "24-project-skills-research",
			Name: "Project skills research",
			Path: "02-projects/24-project-skills-research",
			Progress: map[string]any{
				"tasks_total": 10.0, "tasks_completed": 3.0, "percent": 30.0,
				"current_task": "Write the <loader> tests", "current_section": "Phase 2",
			},
		},
		SavedAt:      time.Date(2026, 3, 4, 5, 6, 7, 123456000, time.UTC),
		Trigger:      TriggerAuto,
		ContextUsage: &ContextUsage{TokensUsed: 162000, TokensTotal: 180000, Percentage: 90},
		Resume: map[string]any{
			"resume_version":   2.0,
			"current_phase":    "implementation",
			"last_updated":     "2026-03-04T05:00:00Z",
			"planning_done":    true,
			"nested":           map[string]any{"list": []any{"a", 1.0, nil}},
			"multi_line_notes": "first line\nsecond line\n",
			"looks_like_bool":  "true",
		},
		ResumePath: "02-projects/24-project-skills-research/01-planning/_resume.md",
		ResumePrompt: ResumePrompt{
			LastAction:   "Wrote the scanner & its tests",
			CurrentState: "Scanner done; resolver half way.",
			PendingTasks: []string{"Finish the resolver", "Add `--budget`"},
		},
		Git: &gitstate.State{
			Branch: "main",
			Head:   "0123456789abcdef0123456789abcdef01234567",
			Dirty:  []string{"loader/scan.go", "notes/with space.md"},
		},
		IncrementalPause: map[string]any{"action_count": 12.0, "duration_seconds": 340.0},
	}
}

func newSnapshots(t *testing.T) Snapshots {
	t.Helper()
	return Snapshots{Dir: filepath.Join(t.TempDir(), ".ctx", "sessions")}
}

func mustWrite(t *testing.T, s Snapshots, snap *Snapshot) string {
	t.Helper()
	id, err := s.Write(context.Background(), snap)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func readLatestFile(t *testing.T, s Snapshots) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(s.Dir, LatestFile))
	if err != nil {
		t.Fatal(err)
	}
	line, _, _ := strings.Cut(string(data), "\n")
	return line
}

func TestSnapshotRoundTrip(t *testing.T) {
	s := newSnapshots(t)
	snap := fullSnapshot()
	id := mustWrite(t, s, snap)
	if snap.SnapshotID != id || !strings.HasPrefix(id, "session-") {
		t.Fatalf("id %q, snap.SnapshotID %q", id, snap.SnapshotID)
	}

	got, err := s.Read(id)
	if err != nil {
		t.Fatal(err)
	}
	want := fullSnapshot()
	want.SchemaVersion = 1
	want.SnapshotID = id
	if !reflect.DeepEqual(got, want) {
		g, _ := json.MarshalIndent(got, "", "  ")
		w, _ := json.MarshalIndent(want, "", "  ")
		t.Fatalf("read back:\n%s\nwant:\n%s", g, w)
	}

	data, err := os.ReadFile(filepath.Join(s.Dir, id+".json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, part := range []string{"{\n  \"schema_version\": 1,\n", "\n  \"snapshot_id\": \"" + id + "\",\n", "<loader>", " & "} {
		if !bytes.Contains(data, []byte(part)) {
			t.Errorf("json lacks %q:\n%s", part, data)
		}
	}
	if !bytes.HasSuffix(data, []byte("}\n")) {
		t.Error("json does not end with a newline")
	}
}

func TestWriteFillsDefaults(t *testing.T) {
	s := newSnapshots(t)
	before := time.Now()
	snap := &Snapshot{Trigger: TriggerSave}
	id := mustWrite(t, s, snap)
	if snap.SchemaVersion != SnapshotSchemaVersion {
		t.Errorf("schema version %d", snap.SchemaVersion)
	}
	if snap.SavedAt.Before(before.Add(-time.Second)) || snap.SavedAt.After(time.Now().Add(time.Second)) {
		t.Errorf("saved_at %v, want about now", snap.SavedAt)
	}
	data, err := os.ReadFile(filepath.Join(s.Dir, id+".json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, part := range []string{`"project": null`, `"context_usage": null`, `"pending_tasks": []`} {
		if !bytes.Contains(data, []byte(part)) {
			t.Errorf("json lacks %s:\n%s", part, data)
		}
	}
	for _, absent := range []string{`"git"`, `"incremental_pause"`, `"resume_path"`} {
		if bytes.Contains(data, []byte(absent)) {
			t.Errorf("json has %s although it was not set:\n%s", absent, data)
		}
	}
}

func TestWriteRejectsNil(t *testing.T) {
	if _, err := newSnapshots(t).Write(context.Background(), nil); err == nil {
		t.Fatal("want an error")
	}
}

func TestWriteIntoUnusableFolderFails(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := (Snapshots{Dir: filepath.Join(file, "sessions")}).Write(context.Background(), fullSnapshot()); err == nil {
		t.Fatal("want an error when the folder cannot be created")
	}
}

// jsonView is v as JSON sees it, so that YAML's ints and timestamps compare equal to
// JSON's float64s and strings.
func jsonView(t *testing.T, v any) any {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestSnapshotYAMLIsTheSameData(t *testing.T) {
	s := newSnapshots(t)
	id := mustWrite(t, s, fullSnapshot())
	jsonData, err := os.ReadFile(filepath.Join(s.Dir, id+".json"))
	if err != nil {
		t.Fatal(err)
	}
	yamlData, err := os.ReadFile(filepath.Join(s.Dir, id+".yaml"))
	if err != nil {
		t.Fatal(err)
	}

	var fromJSON, fromYAML any
	if err := json.Unmarshal(jsonData, &fromJSON); err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(yamlData, &fromYAML); err != nil {
		t.Fatalf("yaml does not parse: %v\n%s", err, yamlData)
	}
	if !reflect.DeepEqual(jsonView(t, fromYAML), fromJSON) {
		t.Fatalf("yaml differs from json:\n%s\n%s", yamlData, jsonData)
	}

	var snap Snapshot
	if err := yaml.Unmarshal(yamlData, &snap); err != nil {
		t.Fatalf("yaml does not decode into a Snapshot: %v", err)
	}
	if snap.SnapshotID != id || !snap.SavedAt.Equal(fullSnapshot().SavedAt) || snap.Git.Branch != "main" {
		t.Errorf("yaml snapshot: id %q, saved_at %v, git %+v", snap.SnapshotID, snap.SavedAt, snap.Git)
	}
	// Written for people: block style, an unquoted RFC 3339 time, text as a block.
	for _, part := range []string{"\nsaved_at: 2026-03-04T05:06:07.123456Z\n", "multi_line_notes: |\n", "  - Finish the resolver\n", "looks_like_bool: \"true\"\n"} {
		if !bytes.Contains(yamlData, []byte(part)) {
			t.Errorf("yaml lacks %q:\n%s", part, yamlData)
		}
	}
}

func TestSnapshotMarkdown(t *testing.T) {
	s := newSnapshots(t)
	id := mustWrite(t, s, fullSnapshot())
	md, err := os.ReadFile(filepath.Join(s.Dir, id+".md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, fact := range []string{
		"# Session snapshot: Project skills research\n",
		"`24-project-skills-research`",
		"`02-projects/24-project-skills-research`",
		"3 of 10 tasks done (30%); next: Write the <loader> tests (under Phase 2)",
		"Saved 2026-03-04 05:06:07 UTC automatically, when context usage crossed the auto-save threshold (trigger `auto`).\n",
		"**Phase:** implementation",
		"162,000 of 180,000 tokens (90.0%)",
		"`abc-123`",
		"`" + id + "`",
		"## Last action\n\nWrote the scanner & its tests\n",
		"## Current state\n\nScanner done; resolver half way.\n",
		"- [ ] Finish the resolver\n",
		"- [ ] Add `--budget`\n",
		"**Branch:** `main`",
		"**Head:** `0123456789abcdef0123456789abcdef01234567`",
		"**Uncommitted changes (2):**\n  - `loader/scan.go`\n  - `notes/with space.md`\n",
		"**Actions recorded:** 12",
		"```sh\nctx --resume --project 24-project-skills-research\n```\n",
	} {
		if !bytes.Contains(md, []byte(fact)) {
			t.Errorf("briefing lacks %q:\n%s", fact, md)
		}
	}
}

func TestSnapshotMarkdownOfWorkspace(t *testing.T) {
	snap := &Snapshot{
		Trigger: TriggerSessionEnd,
		SavedAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
		Git:     &gitstate.State{Dirty: make([]string, maxDirtyShown+7)},
	}
	md := string(snap.Markdown())
	for _, fact := range []string{
		"# Session snapshot: workspace\n",
		"Saved 2026-01-02 03:04:05 UTC automatically, when the agent session ended (trigger `session-end`).\n",
		"**Context usage:** not known",
		"## Pending tasks\n\n_None recorded._\n",
		"**Branch:** none (detached HEAD)",
		"**Head:** no commits yet",
		"… and 7 more",
		"```sh\nctx --resume\n```\n",
	} {
		if !strings.Contains(md, fact) {
			t.Errorf("briefing lacks %q:\n%s", fact, md)
		}
	}
}

func TestCodeSpan(t *testing.T) {
	tests := map[string]string{
		"a.go":        "`a.go`",
		"a`b":         "`` a`b ``",
		"x``y":        "``` x``y ```",
		"two\nlines":  "`two lines`",
		"with  space": "`with space`",
	}
	for in, want := range tests {
		if got := code(in); got != want {
			t.Errorf("code(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestWriteOrderLatestLast(t *testing.T) {
	var order []string
	t.Cleanup(func() { writeFile = durable.WriteFile })
	writeFile = func(path string, data []byte, perm os.FileMode) error {
		order = append(order, filepath.Base(path))
		return durable.WriteFile(path, data, perm)
	}

	s := newSnapshots(t)
	first := mustWrite(t, s, fullSnapshot())
	want := []string{first + ".yaml", first + ".md", first + ".json", LatestFile}
	if !slices.Equal(order, want) {
		t.Fatalf("write order %q, want %q", order, want)
	}
	second := mustWrite(t, s, fullSnapshot())
	if got := readLatestFile(t, s); got != second {
		t.Errorf("%s names %q, want the newest %q", LatestFile, got, second)
	}
	if compareIDs(second, first) >= 0 {
		t.Errorf("%q does not sort after %q", second, first)
	}
}

// A failed write leaves LatestFile naming the last complete snapshot.
func TestFailedWriteKeepsLatest(t *testing.T) {
	s := newSnapshots(t)
	first := mustWrite(t, s, fullSnapshot())
	t.Cleanup(func() { writeFile = durable.WriteFile })
	writeFile = func(path string, data []byte, perm os.FileMode) error {
		if strings.HasSuffix(path, ".json") {
			return errors.New("disk full")
		}
		return durable.WriteFile(path, data, perm)
	}
	if _, err := s.Write(context.Background(), fullSnapshot()); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("err = %v, want the write's error", err)
	}
	if got := readLatestFile(t, s); got != first {
		t.Errorf("%s names %q after a failed write, want %q", LatestFile, got, first)
	}
	if got, err := s.Read("latest"); err != nil || got.SnapshotID != first {
		t.Errorf("latest = %v, %v", got, err)
	}
}

func TestWriteConcurrentIDsNeverCollide(t *testing.T) {
	s := newSnapshots(t)
	const writers, each = 8, 25
	ids := make(chan string, writers*each)
	var wg sync.WaitGroup
	for range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				id, err := s.Write(context.Background(), fullSnapshot())
				if err != nil {
					t.Error(err)
					return
				}
				ids <- id
			}
		}()
	}
	wg.Wait()
	close(ids)
	var got []string
	for id := range ids {
		got = append(got, id)
	}
	checkSet(t, s, got, writers*each)
}

// checkSet checks the folder after many writes: n distinct ids, three files each,
// LatestFile naming the newest, no temporary files, and List in order.
func checkSet(t *testing.T, s Snapshots, ids []string, n int) {
	t.Helper()
	distinct := map[string]bool{}
	for _, id := range ids {
		distinct[id] = true
	}
	if len(ids) != n || len(distinct) != n {
		t.Fatalf("%d ids, %d distinct, want %d", len(ids), len(distinct), n)
	}
	entries, err := os.ReadDir(s.Dir)
	if err != nil {
		t.Fatal(err)
	}
	sessionFiles := 0
	for _, e := range entries {
		name := e.Name()
		switch {
		case name == LatestFile, name == LatestFile+".lock", name == ".gitignore":
		case strings.HasPrefix(name, "session-"):
			sessionFiles++
			id := name[:strings.LastIndex(name, ".")]
			if !distinct[id] {
				t.Errorf("file %s belongs to no written snapshot", name)
			}
		default:
			t.Errorf("unexpected file %s", name)
		}
	}
	if sessionFiles != 3*n {
		t.Errorf("%d snapshot files, want %d", sessionFiles, 3*n)
	}

	list, err := s.List()
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != n {
		t.Fatalf("List returned %d, want %d", len(list), n)
	}
	for i := 1; i < len(list); i++ {
		if compareIDs(list[i-1].SnapshotID, list[i].SnapshotID) >= 0 {
			t.Fatalf("List not newest first at %d: %s then %s", i, list[i-1].SnapshotID, list[i].SnapshotID)
		}
	}
	if got := readLatestFile(t, s); got != list[0].SnapshotID {
		t.Errorf("%s names %s, want the newest %s", LatestFile, got, list[0].SnapshotID)
	}
}

// TestHelperWriteSnapshots is not a test: TestWriteFromProcesses runs the test binary
// with it selected to get writers that are separate processes.
func TestHelperWriteSnapshots(t *testing.T) {
	dir := os.Getenv("CTX_TEST_SNAPSHOT_DIR")
	if dir == "" {
		t.Skip("helper process for TestWriteFromProcesses")
	}
	n, _ := strconv.Atoi(os.Getenv("CTX_TEST_SNAPSHOT_COUNT"))
	for range n {
		id, err := (Snapshots{Dir: dir}).Write(context.Background(), fullSnapshot())
		if err != nil {
			t.Fatal(err)
		}
		fmt.Println(id)
	}
}

func TestWriteFromProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	s := newSnapshots(t)
	const procs, each = 4, 25
	var cmds []*exec.Cmd
	var outs []*bytes.Buffer
	for range procs {
		cmd := exec.Command(os.Args[0], "-test.run=^TestHelperWriteSnapshots$", "-test.count=1")
		cmd.Env = append(os.Environ(), "CTX_TEST_SNAPSHOT_DIR="+s.Dir, "CTX_TEST_SNAPSHOT_COUNT="+strconv.Itoa(each))
		out := &bytes.Buffer{}
		cmd.Stdout, cmd.Stderr = out, out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds, outs = append(cmds, cmd), append(outs, out)
	}
	var ids []string
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("writer %d: %v\n%s", i, err, outs[i])
		}
		for _, line := range strings.Split(outs[i].String(), "\n") {
			if strings.HasPrefix(line, "session-") {
				ids = append(ids, line)
			}
		}
	}
	checkSet(t, s, ids, procs*each)
}

// Should the clock step back, or LatestFile name a snapshot from the future, a new id
// still sorts after it; a stray file of a crashed write (a set without its JSON) is
// removed, and its id is free again. Without the marker a killed write leaves, a write
// does not read the folder: a stray file only makes its id taken, and prune tidies it.
func TestWriteIDsFollowLatest(t *testing.T) {
	s := newSnapshots(t)
	if err := os.MkdirAll(s.Dir, 0o755); err != nil {
		t.Fatal(err)
	}
	future := "session-29990101T000000Z-000000"
	if err := os.WriteFile(filepath.Join(s.Dir, LatestFile), []byte(future+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if id := mustWrite(t, s, fullSnapshot()); id != future+"-2" {
		t.Fatalf("id %q, want %q", id, future+"-2")
	}
	// A write killed after its first file: the file, and the marker of a write under way.
	for _, name := range []string{future + "-3.md", writingFile} {
		if err := os.WriteFile(filepath.Join(s.Dir, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if id := mustWrite(t, s, fullSnapshot()); id != future+"-3" {
		t.Fatalf("id %q, want %q", id, future+"-3")
	}
	for _, ext := range []string{".json", ".yaml", ".md"} {
		data, err := os.ReadFile(filepath.Join(s.Dir, future+"-3"+ext))
		if err != nil || len(data) == 0 {
			t.Errorf("the set written over the stray: %s: %v, %d bytes", ext, err, len(data))
		}
	}
	if _, err := os.Lstat(filepath.Join(s.Dir, writingFile)); !os.IsNotExist(err) {
		t.Errorf("the marker of a write under way outlived the write: %v", err)
	}

	// No marker: the stray stays through a write (its id is taken, not reused), and
	// prune removes it.
	stray := filepath.Join(s.Dir, future+"-5.yaml")
	if err := os.WriteFile(stray, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if id := mustWrite(t, s, fullSnapshot()); id != future+"-4" {
		t.Fatalf("id %q, want %q", id, future+"-4")
	}
	if id := mustWrite(t, s, fullSnapshot()); id != future+"-6" {
		t.Fatalf("id %q, want %q (the stray's id is taken)", id, future+"-6")
	}
	if _, err := os.Stat(stray); err != nil {
		t.Fatalf("a write without the marker tidied the folder: %v", err)
	}
	if _, _, err := s.Prune(PruneOptions{KeepSet: true, Keep: 10}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stray); !os.IsNotExist(err) {
		t.Errorf("prune left the stray file of a killed write: %v", err)
	}
}

func TestCompareIDsOrdersCollisionNumbers(t *testing.T) {
	ids := []string{
		"session-20260101T000000Z-000001-10",
		"session-20250101T000000Z-999999",
		"session-20260101T000000Z-000001",
		"session-20260101T000000Z-000001-2",
		"session-20260101T000000Z-000002",
	}
	slices.SortFunc(ids, compareIDs)
	want := []string{
		"session-20260101T000000Z-000002",
		"session-20260101T000000Z-000001-10",
		"session-20260101T000000Z-000001-2",
		"session-20260101T000000Z-000001",
		"session-20250101T000000Z-999999",
	}
	if !slices.Equal(ids, want) {
		t.Errorf("sorted %q\nwant %q", ids, want)
	}
}

func TestReadByIDForms(t *testing.T) {
	s := newSnapshots(t)
	mustWrite(t, s, fullSnapshot())
	id := mustWrite(t, s, fullSnapshot())
	for _, form := range []string{id, strings.TrimPrefix(id, "session-"), id + ".json", id + ".md", "latest", "LATEST"} {
		got, err := s.Read(form)
		if err != nil {
			t.Errorf("Read(%q): %v", form, err)
			continue
		}
		if got.SnapshotID != id {
			t.Errorf("Read(%q) = %s, want %s", form, got.SnapshotID, id)
		}
	}
}

func TestReadLatestWithoutLatestFile(t *testing.T) {
	s := newSnapshots(t)
	older := mustWrite(t, s, fullSnapshot())
	newest := mustWrite(t, s, fullSnapshot())

	// LatestFile naming a snapshot that was deleted by hand.
	if err := os.Remove(filepath.Join(s.Dir, newest+".json")); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Read("latest"); err != nil || got.SnapshotID != older {
		t.Errorf("latest = %v, %v; want %s", got, err, older)
	}
	if err := os.Remove(filepath.Join(s.Dir, LatestFile)); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Read("latest"); err != nil || got.SnapshotID != older {
		t.Errorf("latest = %v, %v; want %s", got, err, older)
	}
}

func TestReadUnknownIsNotExist(t *testing.T) {
	s := newSnapshots(t)
	for _, id := range []string{"latest", "session-20200101T000000Z-000000"} {
		if _, err := s.Read(id); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("Read(%q) in a missing folder: %v, want os.ErrNotExist", id, err)
		}
	}
	mustWrite(t, s, fullSnapshot())
	if _, err := s.Read("session-20200101T000000Z-000000"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("unknown id: %v, want os.ErrNotExist", err)
	}
}

func TestReadRefusesPathIDs(t *testing.T) {
	root := t.TempDir()
	s := Snapshots{Dir: filepath.Join(root, "sessions")}
	mustWrite(t, s, fullSnapshot())
	// A snapshot outside the folder that each bad id below would reach if it became a path.
	secret, _ := json.Marshal(Snapshot{SnapshotID: "secret"})
	for _, p := range []string{filepath.Join(root, "secret.json"), filepath.Join(root, "session-..", "secret.json")} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, secret, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range []string{
		"../secret", "..", "../../etc/passwd", "/etc/passwd", "a/b", `a\b`, "session-../secret",
		"x\x00y", "", ".hidden", "a b", "ünï", strings.Repeat("a", 200),
	} {
		got, err := s.Read(id)
		if err == nil {
			t.Errorf("Read(%q) = %+v, want an error", id, got)
			continue
		}
		if errors.Is(err, os.ErrNotExist) {
			t.Errorf("Read(%q): %v; want the id refused before any file is opened", id, err)
		}
	}
}

func TestListNewestFirstAndSkipsBadFiles(t *testing.T) {
	s := newSnapshots(t)
	if list, err := s.List(); err != nil || len(list) != 0 || list == nil {
		t.Fatalf("List of a missing folder = %v, %v; want an empty list", list, err)
	}
	var ids []string
	for range 3 {
		ids = append(ids, mustWrite(t, s, fullSnapshot()))
	}
	bad := "session-20000101T000000Z-000000.json"
	if err := os.WriteFile(filepath.Join(s.Dir, bad), []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A journal archive and other files are not snapshots.
	for _, other := range []string{"session-20000101T000000Z-000000-incremental.jsonl", "notes.json"} {
		if err := os.WriteFile(filepath.Join(s.Dir, other), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	list, err := s.List()
	if err == nil || !strings.Contains(err.Error(), bad) {
		t.Errorf("err = %v, want one naming %s", err, bad)
	}
	var got []string
	for _, snap := range list {
		got = append(got, snap.SnapshotID)
	}
	slices.Reverse(ids)
	if !slices.Equal(got, ids) {
		t.Errorf("List = %q, want %q", got, ids)
	}
}

func FuzzCheckID(f *testing.F) {
	for _, seed := range []string{"latest", "session-20260101T000000Z-000000", "../x", "a/b", "x\x00", ".."} {
		f.Add(seed)
	}
	dir := filepath.Join("base", "sessions")
	f.Fuzz(func(t *testing.T, id string) {
		if checkID(id) != nil {
			return
		}
		for _, ext := range []string{".json", ".yaml", ".md"} {
			path := filepath.Join(dir, idPrefix+id+ext)
			if filepath.Dir(path) != dir || filepath.Base(path) != idPrefix+id+ext {
				t.Fatalf("accepted id %q becomes %s, outside %s", id, path, dir)
			}
		}
	})
}

// The marker of a write under way is never followed: a link of that name is removed,
// not written through, and a folder of that name does not stop snapshots (the folder is
// then tidied at every write instead).
func TestWriteMarkerIsNeverFollowed(t *testing.T) {
	s := newSnapshots(t)
	if err := os.MkdirAll(s.Dir, 0o755); err != nil {
		t.Fatal(err)
	}
	notes := filepath.Join(filepath.Dir(s.Dir), "notes.md")
	if err := os.WriteFile(notes, []byte("mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(notes, filepath.Join(s.Dir, writingFile)); err != nil {
		t.Fatal(err)
	}
	mustWrite(t, s, fullSnapshot())
	if data, err := os.ReadFile(notes); err != nil || string(data) != "mine\n" {
		t.Errorf("the file the marker linked to: %q, %v", data, err)
	}
	if _, err := os.Lstat(filepath.Join(s.Dir, writingFile)); !os.IsNotExist(err) {
		t.Errorf("the marker outlived the write: %v", err)
	}

	if err := os.MkdirAll(filepath.Join(s.Dir, writingFile, "keep"), 0o755); err != nil {
		t.Fatal(err)
	}
	stray := filepath.Join(s.Dir, "session-20200101T000000Z-000001.md")
	if err := os.WriteFile(stray, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	mustWrite(t, s, fullSnapshot())
	if _, err := os.Stat(stray); !os.IsNotExist(err) {
		t.Errorf("with no marker possible, a write did not tidy: %v", err)
	}
	if _, err := os.Stat(filepath.Join(s.Dir, writingFile, "keep")); err != nil {
		t.Errorf("a folder in the marker's place was touched: %v", err)
	}
}
