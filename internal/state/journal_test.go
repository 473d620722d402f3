package state

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// childEnv, when set, makes the test binary a journal writer for the tests that need
// separate processes rather than goroutines: "append" or "finalize".
const childEnv = "CTX_JOURNAL_CHILD"

func TestMain(m *testing.M) {
	switch mode := os.Getenv(childEnv); mode {
	case "":
		os.Exit(m.Run())
	case "append", "finalize":
		if err := runJournalChild(mode); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	default:
		fmt.Fprintf(os.Stderr, "%s=%q: want append or finalize\n", childEnv, mode)
		os.Exit(2)
	}
}

func runJournalChild(mode string) error {
	j := OpenJournal(os.Getenv("CTX_JOURNAL_DIR"), os.Getenv("CTX_JOURNAL_SESSION"))
	if mode == "finalize" {
		archived, id, err := j.Finalize(context.Background(), time.Now(), &Snapshot{Trigger: TriggerPreCompact}, false)
		fmt.Printf("%s %s\n", archived, id)
		return err
	}
	proc, _ := strconv.Atoi(os.Getenv("CTX_JOURNAL_PROC"))
	n, _ := strconv.Atoi(os.Getenv("CTX_JOURNAL_COUNT"))
	for i := range n {
		pct := 90 + float64(i)/float64(n)
		data := map[string]any{"tool": "Edit", "proc": proc, "i": i, "summary": childPadding(i)}
		if err := j.Append(time.Now(), LineToolCall, &pct, data); err != nil {
			return err
		}
	}
	return nil
}

// childPadding varies the line length, a few lines passing the 4 KiB PIPE_BUF past
// which an O_APPEND write alone would promise nothing.
func childPadding(i int) string {
	if i%50 == 0 {
		return strings.Repeat("p", 6000)
	}
	return strings.Repeat("p", i%7*20)
}

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func pctOf(p float64) *float64 { return &p }

func mustStart(t testing.TB, j *Journal) {
	t.Helper()
	started, err := j.Start(t0, pctOf(90.5), map[string]any{"reason": "auto-save", "tokens_used": 150000})
	if err != nil || !started {
		t.Fatalf("start: %v, %v", started, err)
	}
}

func mustAppend(t testing.TB, j *Journal, at time.Time, typ string, pct *float64, data any) {
	t.Helper()
	if err := j.Append(at, typ, pct, data); err != nil {
		t.Fatal(err)
	}
}

func mustRead(t *testing.T, j *Journal) []JournalLine {
	t.Helper()
	lines, warnings, err := j.Read()
	if err != nil || len(warnings) > 0 {
		t.Fatalf("read: %v, %d warnings, the first %q", err, len(warnings), warnings[:min(len(warnings), 3)])
	}
	return lines
}

// names lists the folder's file names that match the glob pattern.
func names(t *testing.T, dir, pattern string) []string {
	t.Helper()
	matches, err := filepath.Glob(filepath.Join(dir, pattern))
	if err != nil {
		t.Fatal(err)
	}
	out := []string{}
	for _, m := range matches {
		out = append(out, filepath.Base(m))
	}
	return out
}

func types(lines []JournalLine) []string {
	out := []string{}
	for _, l := range lines {
		out = append(out, l.Type)
	}
	return out
}

func TestJournalLifecycle(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sessions")
	j := OpenJournal(dir, "sess-1")
	if isActive(t, j) {
		t.Fatal("active before start")
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatal("OpenJournal touched the disk")
	}
	if want := filepath.Join(dir, "ACTIVE-PAUSE-sess-1.jsonl"); j.Path() != want {
		t.Errorf("path %s, want %s", j.Path(), want)
	}
	mustStart(t, j)
	if !isActive(t, j) {
		t.Fatal("not active after start")
	}
	if started, err := j.Start(t0.Add(time.Minute), nil, nil); err != nil || started {
		t.Errorf("second start: %v, %v; want false, nil", started, err)
	}
	mustAppend(t, j, t0.Add(10*time.Second), LineUserMessage, pctOf(91), map[string]string{"prompt": "fix the <b> tag"})
	mustAppend(t, j, t0.Add(20*time.Second), LineToolCall, pctOf(92), map[string]string{"tool": "Edit", "summary": "main.go"})
	mustAppend(t, j, t0.Add(30*time.Second), LineAssistantResponse, nil, map[string]string{"text": "Done."})

	lines := mustRead(t, j)
	if got, want := types(lines), []string{LinePauseStarted, LineUserMessage, LineToolCall, LineAssistantResponse}; !slices.Equal(got, want) {
		t.Fatalf("types %q, want %q", got, want)
	}
	for _, l := range lines {
		if l.SessionID != "sess-1" {
			t.Errorf("%s line has session %q", l.Type, l.SessionID)
		}
	}
	if string(lines[0].Data) != `{"reason":"auto-save","tokens_used":150000}` {
		t.Errorf("pause_started data %s", lines[0].Data)
	}
	if lines[3].ContextPercentage != nil {
		t.Errorf("unknown percentage read back as %v", *lines[3].ContextPercentage)
	}
	raw, _ := os.ReadFile(j.Path())
	if !bytes.Contains(raw, []byte(`"fix the <b> tag"`)) {
		t.Errorf("prompt escaped or missing:\n%s", raw)
	}

	st, err := j.Status()
	if err != nil {
		t.Fatal(err)
	}
	if !st.Active || st.ActionCount != 3 || st.DurationSeconds != 30 || st.LastActionType != LineAssistantResponse {
		t.Errorf("status %+v", st)
	}
	if *st.ContextRange[0] != 90.5 || *st.ContextRange[1] != 92 {
		t.Errorf("context range %v..%v", *st.ContextRange[0], *st.ContextRange[1])
	}
	if !st.PauseStartedAt.Equal(t0) || !st.LastUpdated.Equal(t0.Add(30*time.Second)) {
		t.Errorf("started %v, updated %v", st.PauseStartedAt, st.LastUpdated)
	}

	snap := &Snapshot{Trigger: TriggerPreCompact, ContextUsage: &ContextUsage{TokensUsed: 160000, TokensTotal: 167000, Percentage: 95.8}}
	archived, id, err := j.Finalize(context.Background(), t0.Add(time.Minute), snap, false)
	if err != nil {
		t.Fatal(err)
	}
	if isActive(t, j) {
		t.Error("still active after finalize")
	}
	if want := filepath.Join(dir, id+"-incremental.jsonl"); archived != want {
		t.Errorf("archived as %s, want %s", archived, want)
	}
	saved, err := Snapshots{Dir: dir}.Read(id)
	if err != nil {
		t.Fatal(err)
	}
	if saved.SessionID != "sess-1" || saved.Trigger != TriggerPreCompact {
		t.Errorf("snapshot session %q, trigger %q", saved.SessionID, saved.Trigger)
	}
	ip := saved.IncrementalPause
	if ip["enabled"] != true || ip["action_count"] != 3.0 || ip["tool_calls"] != 1.0 || ip["duration_seconds"] != 60.0 {
		t.Errorf("incremental_pause %v", ip)
	}
	if !reflect.DeepEqual(saved.IncrementalPause, snap.IncrementalPause) {
		t.Errorf("incremental_pause changed in the round trip:\n%v\n%v", saved.IncrementalPause, snap.IncrementalPause)
	}
	if !bytes.Contains(saved.Markdown(), []byte("Actions recorded:** 3")) {
		t.Errorf("briefing does not mention the journal:\n%s", saved.Markdown())
	}

	data, err := os.ReadFile(archived)
	if err != nil {
		t.Fatal(err)
	}
	archivedLines, warnings := parseJournal("archive", data)
	if len(warnings) > 0 || len(archivedLines) != 5 || archivedLines[4].Type != LinePauseFinalized {
		t.Errorf("archive: types %q, warnings %q", types(archivedLines), warnings)
	}
	if p := archivedLines[4].ContextPercentage; p == nil || *p != 95.8 {
		t.Errorf("pause_finalized percentage %v, want the snapshot's", p)
	}
	if left := names(t, dir, "ACTIVE-PAUSE-*"); len(left) > 0 {
		t.Errorf("left behind: %q", left)
	}
}

func TestJournalAppendWhenNotActive(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sessions")
	j := OpenJournal(dir, "s")
	if err := j.Append(t0, LineToolCall, nil, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("append to an inactive journal touched the disk: %v", err)
	}
	if lines, warnings, err := j.Read(); lines != nil || warnings != nil || err != nil {
		t.Errorf("read of an inactive journal: %v, %v, %v", lines, warnings, err)
	}
}

func TestJournalAppendRefuses(t *testing.T) {
	j := OpenJournal(t.TempDir(), "s")
	mustStart(t, j)
	for _, c := range []struct {
		typ  string
		data any
	}{
		{"", nil},
		{LinePauseStarted, nil},
		{LinePauseFinalized, nil},
		{LineToolCall, "not an object"},
		{LineToolCall, []int{1}},
		{LineToolCall, func() {}},
	} {
		if err := j.Append(t0, c.typ, nil, c.data); err == nil {
			t.Errorf("append %q with %T: want an error", c.typ, c.data)
		}
	}
	mustAppend(t, j, t0, LineSystemEvent, nil, nil)
	mustAppend(t, j, t0, LineSystemEvent, nil, json.RawMessage(`{"event":"x"}`))
	lines := mustRead(t, j)
	if len(lines) != 3 || string(lines[1].Data) != "{}" || string(lines[2].Data) != `{"event":"x"}` {
		t.Errorf("lines %+v", lines)
	}
}

func TestJournalFinalizeTwice(t *testing.T) {
	dir := t.TempDir()
	j := OpenJournal(dir, "s")
	mustStart(t, j)
	mustAppend(t, j, t0.Add(time.Second), LineToolCall, nil, map[string]string{"tool": "Bash"})
	archived, id, err := j.Finalize(context.Background(), t0.Add(2*time.Second), nil, false)
	if err != nil || archived == "" || id == "" {
		t.Fatalf("first finalize: %q, %q, %v", archived, id, err)
	}
	archived, id, err = j.Finalize(context.Background(), t0.Add(3*time.Second), nil, false)
	if err != nil || archived != "" || id != "" {
		t.Errorf("second finalize: %q, %q, %v; want a no-op", archived, id, err)
	}
	if got := names(t, dir, "*-incremental*.jsonl"); len(got) != 1 {
		t.Errorf("archives %q, want one", got)
	}
	if got := names(t, dir, "session-*.json"); len(got) != 1 {
		t.Errorf("snapshots %q, want one", got)
	}
}

func TestJournalFinalizeKeepsAFinalizedLine(t *testing.T) {
	dir := t.TempDir()
	j := OpenJournal(dir, "s")
	mustStart(t, j)
	// As a finalize that wrote its line and then failed leaves it.
	fin, line, err := j.encode(t0.Add(time.Second), LinePauseFinalized, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(j.Path(), append(must(os.ReadFile(j.Path())), line...), 0o644); err != nil {
		t.Fatal(err)
	}
	archived, _, err := j.Finalize(context.Background(), t0.Add(time.Minute), nil, true)
	if err != nil {
		t.Fatal(err)
	}
	lines, _ := parseJournal("archive", must(os.ReadFile(archived)))
	if got := types(lines); !slices.Equal(got, []string{LinePauseStarted, LinePauseFinalized}) || !lines[1].Timestamp.Equal(fin.Timestamp) {
		t.Errorf("archive %q, want the one pause_finalized line", got)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func TestJournalFinalizeMinimal(t *testing.T) {
	dir := t.TempDir()
	j := OpenJournal(dir, "s")
	mustStart(t, j)
	now := time.Date(2026, 3, 1, 13, 4, 5, 123456789, time.FixedZone("CET", 3600))
	archived, id, err := j.Finalize(context.Background(), now, &Snapshot{}, true)
	if err != nil {
		t.Fatal(err)
	}
	if id != "" {
		t.Errorf("minimal finalize returned snapshot %q", id)
	}
	if want := filepath.Join(dir, "session-20260301T120405Z-123456-incremental.jsonl"); archived != want {
		t.Errorf("archived as %s, want %s", archived, want)
	}
	if got := names(t, dir, "session-*.json"); len(got) != 0 {
		t.Errorf("minimal finalize wrote snapshots %q", got)
	}
	if _, err := os.Stat(filepath.Join(dir, LatestFile)); !os.IsNotExist(err) {
		t.Errorf("minimal finalize wrote %s", LatestFile)
	}

	// The same stamp again: the first archive stays as it is.
	first := must(os.ReadFile(archived))
	mustStart(t, j)
	again, _, err := j.Finalize(context.Background(), now, nil, true)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(dir, "session-20260301T120405Z-123456-incremental-2.jsonl"); again != want {
		t.Errorf("second archive %s, want %s", again, want)
	}
	if !bytes.Equal(must(os.ReadFile(archived)), first) {
		t.Error("the first archive was overwritten")
	}
}

func TestJournalDiscard(t *testing.T) {
	dir := t.TempDir()
	j := OpenJournal(dir, "s")
	if err := j.Discard(); err != nil {
		t.Fatalf("discard of an inactive journal: %v", err)
	}
	mustStart(t, j)
	mustAppend(t, j, t0, LineToolCall, nil, nil)
	if err := j.Discard(); err != nil {
		t.Fatal(err)
	}
	if isActive(t, j) {
		t.Error("still active after discard")
	}
	if left := names(t, dir, "ACTIVE-PAUSE-*"); len(left) > 0 {
		t.Errorf("left behind: %q", left)
	}
	if got := names(t, dir, "session-*"); len(got) > 0 {
		t.Errorf("discard archived or saved: %q", got)
	}
}

func TestJournalStatusWhenNotActive(t *testing.T) {
	st, err := OpenJournal(t.TempDir(), "s").Status()
	if err != nil {
		t.Fatal(err)
	}
	data, _ := json.Marshal(st)
	for _, want := range []string{`"active":false`, `"action_count":0`, `"context_range":[null,null]`,
		`"pause_started_at":null`, `"last_updated":null`, `"warnings":[]`} {
		if !bytes.Contains(data, []byte(want)) {
			t.Errorf("status %s lacks %s", data, want)
		}
	}
}

func TestIncrementalPause(t *testing.T) {
	lines := []JournalLine{{Type: LinePauseStarted, Timestamp: t0, ContextPercentage: pctOf(90)}}
	for i := range 15 {
		l := JournalLine{Type: LineToolCall, Timestamp: t0.Add(time.Duration(i+1) * time.Second)}
		switch i {
		case 3:
			l.ContextPercentage = pctOf(88.5)
		case 7:
			l.ContextPercentage = pctOf(97.25)
		}
		switch i % 3 {
		case 0:
			l.Data = json.RawMessage(fmt.Sprintf(`{"tool":"Edit","summary":"file %d.go"}`, i))
		case 1:
			l.Type = LineUserMessage
			l.Data = json.RawMessage(fmt.Sprintf(`{"prompt":"prompt\n%d"}`, i))
		case 2:
			l.Type = LineAssistantResponse
			l.Data = json.RawMessage(`{"text":"` + strings.Repeat("é", 300) + `"}`)
		}
		lines = append(lines, l)
	}
	lines = append(lines, JournalLine{Type: LinePauseFinalized, Timestamp: t0.Add(20500 * time.Millisecond)})

	ip := IncrementalPause(lines)
	want := map[string]any{
		"enabled":          true,
		"action_count":     15.0,
		"duration_seconds": 20.5,
		"context_range":    []any{88.5, 97.25},
		"tool_calls":       5.0,
	}
	for k, v := range want {
		if !reflect.DeepEqual(ip[k], v) {
			t.Errorf("%s = %#v, want %#v", k, ip[k], v)
		}
	}
	summary, _ := ip["actions_summary"].([]any)
	if len(summary) != 10 {
		t.Fatalf("actions_summary has %d entries, want the last 10", len(summary))
	}
	// The last 10 of 15 are the 6th onwards: a response, a tool call, a prompt, ...
	if s := summary[0].(map[string]any)["summary"].(string); len([]rune(s)) != summaryLen || !strings.HasSuffix(s, "…") {
		t.Errorf("long response kept %d runes: %q", len([]rune(s)), s)
	}
	call := summary[1].(map[string]any)
	if call["type"] != LineToolCall || call["summary"] != "Edit: file 6.go" || call["timestamp"] != "2026-03-01T12:00:07Z" {
		t.Errorf("tool call listed as %v", call)
	}
	if s := summary[2].(map[string]any)["summary"]; s != "prompt 7" {
		t.Errorf("user message summary %q", s)
	}

	empty := IncrementalPause(nil)
	if !reflect.DeepEqual(empty["context_range"], []any{nil, nil}) || !reflect.DeepEqual(empty["actions_summary"], []any{}) {
		t.Errorf("of no lines: %v", empty)
	}
}

func TestJournalsPerSession(t *testing.T) {
	dir := t.TempDir()
	// "a/b" and "a_b" sanitise alike but for the hash that keeps them apart.
	a, b := OpenJournal(dir, "a/b"), OpenJournal(dir, "a_b")
	if a.Path() == b.Path() {
		t.Fatalf("two sessions share %s", a.Path())
	}
	mustStart(t, a)
	mustStart(t, b)
	mustAppend(t, a, t0, LineToolCall, nil, map[string]string{"tool": "A"})
	if got := types(mustRead(t, b)); len(got) != 1 {
		t.Errorf("b has %q; a's append went astray", got)
	}
	if got := mustRead(t, a); len(got) != 2 || got[1].SessionID != "a/b" {
		t.Errorf("a has %+v", got)
	}
	if got := names(t, dir, "ACTIVE-PAUSE-*.jsonl"); len(got) != 2 {
		t.Errorf("journals %q, want two", got)
	}
	if _, _, err := a.Finalize(context.Background(), t0, nil, true); err != nil {
		t.Fatal(err)
	}
	if !isActive(t, b) {
		t.Error("finalizing a closed b")
	}
}

func TestJournalTornAndGarbageLines(t *testing.T) {
	dir := t.TempDir()
	j := OpenJournal(dir, "s")
	mustStart(t, j)
	mustAppend(t, j, t0.Add(time.Second), LineToolCall, pctOf(91), map[string]string{"tool": "Read"})
	f, err := os.OpenFile(j.Path(), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = f.WriteString("garbage{\n\n")
	_ = f.Close()
	mustAppend(t, j, t0.Add(2*time.Second), LineToolCall, pctOf(92), map[string]string{"tool": "Edit"})
	// A writer killed mid-line.
	f, _ = os.OpenFile(j.Path(), os.O_APPEND|os.O_WRONLY, 0)
	_, _ = f.WriteString(`{"type":"tool_call","timest`)
	_ = f.Close()

	lines, warnings, err := j.Read()
	if err != nil {
		t.Fatal(err)
	}
	if got := types(lines); !slices.Equal(got, []string{LinePauseStarted, LineToolCall, LineToolCall}) {
		t.Errorf("kept %q", got)
	}
	wantWarnings := []string{
		"ACTIVE-PAUSE-s.jsonl:3: skipped: invalid JSON",
		"ACTIVE-PAUSE-s.jsonl:6: skipped: torn line (invalid JSON, no newline at the end)",
	}
	if !slices.Equal(warnings, wantWarnings) {
		t.Errorf("warnings %q, want %q", warnings, wantWarnings)
	}
	st, err := j.Status()
	if err != nil || st.ActionCount != 2 || len(st.Warnings) != 2 {
		t.Errorf("status %+v, %v", st, err)
	}

	archived, id, err := j.Finalize(context.Background(), t0.Add(time.Minute), nil, false)
	if err != nil {
		t.Fatal(err)
	}
	kept, archiveWarnings := parseJournal("archive", must(os.ReadFile(archived)))
	if got := types(kept); !slices.Equal(got, []string{LinePauseStarted, LineToolCall, LineToolCall, LinePauseFinalized}) {
		t.Errorf("archive keeps %q", got)
	}
	if len(archiveWarnings) != 2 {
		t.Errorf("archive warnings %q: the torn line should stay apart from pause_finalized", archiveWarnings)
	}
	saved, err := Snapshots{Dir: dir}.Read(id)
	if err != nil || saved.IncrementalPause["action_count"] != 2.0 {
		t.Errorf("snapshot %v, %v", saved, err)
	}
}

func TestOrphans(t *testing.T) {
	dir := t.TempDir()
	if got, err := Orphans(filepath.Join(dir, "missing"), ""); err != nil || len(got) != 0 {
		t.Fatalf("orphans of a missing folder: %v, %v", got, err)
	}
	for _, id := range []string{"mine", "other/session", "plain"} {
		mustStart(t, OpenJournal(dir, id))
	}
	// A journal whose first line was lost: its id comes from the file name.
	if err := os.WriteFile(filepath.Join(dir, "ACTIVE-PAUSE-lost.jsonl"), []byte("torn"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Not ctx's: SafeID would never make this name.
	if err := os.WriteFile(filepath.Join(dir, "ACTIVE-PAUSE-a b.jsonl"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	orphans, err := Orphans(dir, "mine")
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, o := range orphans {
		if !isActive(t, o) || o.Dir != dir {
			t.Errorf("orphan %+v is not at its journal", o)
		}
		ids = append(ids, o.SessionID)
	}
	slices.Sort(ids)
	if want := []string{"lost", "other/session", "plain"}; !slices.Equal(ids, want) {
		t.Errorf("orphans %q, want %q", ids, want)
	}
	if all, _ := Orphans(dir, ""); len(all) != 4 {
		t.Errorf("with no session excepted: %d orphans, want 4", len(all))
	}
}

// startChildren runs n copies of the test binary as journal writers in mode, the i-th
// with env(i) added, and returns their combined output once all have exited.
func startChildren(t *testing.T, mode string, n int, env func(i int) []string) []string {
	t.Helper()
	cmds := make([]*exec.Cmd, n)
	outs := make([]*bytes.Buffer, n)
	for i := range n {
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(append(os.Environ(), childEnv+"="+mode), env(i)...)
		outs[i] = &bytes.Buffer{}
		cmd.Stdout, cmd.Stderr = outs[i], outs[i]
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds[i] = cmd
	}
	var out []string
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Errorf("child %d: %v\n%s", i, err, outs[i])
		}
		out = append(out, outs[i].String())
	}
	if t.Failed() {
		t.FailNow()
	}
	return out
}

func TestJournalAppendFromProcesses(t *testing.T) {
	procs, each := 16, 1000
	if testing.Short() {
		procs, each = 4, 200
	}
	dir := t.TempDir()
	j := OpenJournal(dir, "shared/session")
	mustStart(t, j)
	startChildren(t, "append", procs, func(i int) []string {
		return []string{"CTX_JOURNAL_DIR=" + dir, "CTX_JOURNAL_SESSION=" + j.SessionID,
			"CTX_JOURNAL_PROC=" + strconv.Itoa(i), "CTX_JOURNAL_COUNT=" + strconv.Itoa(each)}
	})

	raw := must(os.ReadFile(j.Path()))
	if n := bytes.Count(raw, []byte("\n")); n != 1+procs*each || raw[len(raw)-1] != '\n' {
		t.Errorf("%d newlines, want %d, the last byte ending a line", n, 1+procs*each)
	}
	lines := mustRead(t, j)
	if len(lines) != 1+procs*each {
		t.Fatalf("%d lines, want %d", len(lines), 1+procs*each)
	}
	seen := make(map[[2]int]bool, procs*each)
	for _, l := range lines[1:] {
		var d struct {
			Proc, I int
			Summary string
		}
		if err := json.Unmarshal(l.Data, &d); err != nil || l.Type != LineToolCall || l.SessionID != j.SessionID {
			t.Fatalf("bad line %s %s: %v", l.Type, l.Data, err)
		}
		key := [2]int{d.Proc, d.I}
		if seen[key] || d.Summary != childPadding(d.I) {
			t.Fatalf("line of process %d, append %d repeated or cut", d.Proc, d.I)
		}
		seen[key] = true
	}
	if len(seen) != procs*each {
		t.Errorf("%d distinct appends, want %d", len(seen), procs*each)
	}
}

func TestJournalFinalizeFromProcesses(t *testing.T) {
	dir := t.TempDir()
	j := OpenJournal(dir, "racing")
	mustStart(t, j)
	mustAppend(t, j, t0.Add(time.Second), LineToolCall, nil, map[string]string{"tool": "Edit"})
	const finalizers = 4
	outs := startChildren(t, "finalize", finalizers, func(int) []string {
		return []string{"CTX_JOURNAL_DIR=" + dir, "CTX_JOURNAL_SESSION=" + j.SessionID}
	})
	var did []string
	for _, out := range outs {
		if strings.TrimSpace(out) != "" {
			did = append(did, out)
		}
	}
	if len(did) != 1 {
		t.Errorf("%d finalizers did the work, want 1: %q", len(did), outs)
	}
	if got := names(t, dir, "*-incremental*.jsonl"); len(got) != 1 {
		t.Errorf("archives %q, want one", got)
	}
	if got := names(t, dir, "session-*.json"); len(got) != 1 {
		t.Errorf("snapshots %q, want one", got)
	}
	if isActive(t, j) {
		t.Error("still active")
	}
}

func FuzzParseJournal(f *testing.F) {
	j := OpenJournal("", "s")
	_, good, _ := j.encode(t0, LineToolCall, pctOf(91), map[string]string{"tool": "Edit"})
	f.Add(good)
	f.Add(append(append([]byte{}, good...), "garbage{\n\n{\"type\":\"x\""...))
	f.Add([]byte(`{"type":"x","timestamp":"2026-03-01T12:00:00Z","data":[1]}` + "\nnull\n[]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		lines, warnings := parseJournal("f", data)
		if len(lines)+len(warnings) > bytes.Count(data, []byte("\n"))+1 {
			t.Fatalf("%d lines and %d warnings from %d lines of input", len(lines), len(warnings), bytes.Count(data, []byte("\n"))+1)
		}
		for _, l := range lines {
			if l.Type == "" || l.Timestamp.IsZero() {
				t.Fatalf("kept a line without type or timestamp: %+v", l)
			}
		}
		// Whatever the journal holds, its summary can be built and stored.
		if _, err := json.Marshal(IncrementalPause(lines)); err != nil {
			t.Fatal(err)
		}
	})
}

func BenchmarkAppend(b *testing.B) {
	j := OpenJournal(b.TempDir(), "bench")
	mustStart(b, j)
	data := map[string]string{"tool": "Edit", "summary": "session/journal.go: replace 12 lines"}
	pct := 92.5
	for b.Loop() {
		if err := j.Append(time.Now(), LineToolCall, &pct, data); err != nil {
			b.Fatal(err)
		}
	}
}

// A finalize killed after it wrote its snapshot and before it archived the journal
// leaves the journal ending in its pause_finalized line: finalizing again archives the
// journal with that snapshot instead of writing a second one. Killed before its
// snapshot, the next finalize writes the one snapshot.
func TestJournalFinalizeKilledAfterItsSnapshot(t *testing.T) {
	for _, snapshotWritten := range []bool{true, false} {
		dir := t.TempDir()
		j := OpenJournal(dir, "s")
		mustStart(t, j)
		mustAppend(t, j, t0.Add(time.Second), LineToolCall, nil, map[string]string{"tool": "Bash"})
		// What Finalize does before its rename, as it does it.
		at := t0.Add(2 * time.Second)
		_, line, err := j.encode(at, LinePauseFinalized, nil, map[string]any{"minimal": false, finalizeTokenKey: newFinalizeToken(at)})
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(j.Path(), append(must(os.ReadFile(j.Path())), line...), 0o644); err != nil {
			t.Fatal(err)
		}
		first := ""
		if snapshotWritten {
			snap := &Snapshot{SessionID: "s", IncrementalPause: IncrementalPause(mustRead(t, j))}
			first = mustWrite(t, Snapshots{Dir: dir}, snap)
		}
		// An unrelated snapshot written since, by another save.
		other := mustWrite(t, Snapshots{Dir: dir}, &Snapshot{SessionID: "other"})

		archived, id, err := j.Finalize(context.Background(), t0.Add(time.Minute), nil, false)
		if err != nil {
			t.Fatal(err)
		}
		sets := names(t, dir, "session-*.json")
		switch {
		case snapshotWritten && (id != first || len(sets) != 2):
			t.Errorf("after a finalize killed past its snapshot: id %q (want %q), sets %q (want 2)", id, first, sets)
		case !snapshotWritten && (id == "" || id == other || len(sets) != 2):
			t.Errorf("after a finalize killed before its snapshot: id %q, sets %q (want a new one beside %q)", id, sets, other)
		}
		if want := filepath.Join(dir, id+archiveSuffix+journalSuffix); archived != want {
			t.Errorf("archive %q, want %q (paired with its snapshot)", archived, want)
		}
		snap, err := (Snapshots{Dir: dir}).Read(id)
		if err != nil || snap.IncrementalPause[finalizeTokenKey] == nil {
			t.Errorf("the finalize's snapshot %q carries no token: %v", id, err)
		}
	}
}

// isActive is j.Active for a folder that must be readable.
func isActive(t *testing.T, j *Journal) bool {
	t.Helper()
	ok, err := j.Active()
	if err != nil {
		t.Fatal(err)
	}
	return ok
}
