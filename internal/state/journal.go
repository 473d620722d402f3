package state

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/ctxtools/ctx/internal/durable"
)

// The types of journal line (docs/sessions.md).
const (
	LinePauseStarted      = "pause_started"
	LineUserMessage       = "user_message"
	LineToolCall          = "tool_call"
	LineAssistantResponse = "assistant_response"
	LineSystemEvent       = "system_event"
	LinePauseFinalized    = "pause_finalized"
)

const (
	journalPrefix = "ACTIVE-PAUSE-"
	journalSuffix = ".jsonl"
	archiveSuffix = "-incremental"
	// journalsLock names the lock (kept in lockDir) that every journal operation of a
	// sessions folder takes. One lock for the folder rather than one per journal: it is
	// never removed, so that a journal's own files can be.
	journalsLock = "journals"
	// summaryLen keeps each action in a snapshot's incremental_pause to a line.
	summaryLen = 200
	// lastActions is how many actions a snapshot's incremental_pause lists.
	lastActions = 10
	// maxFirstLine bounds what Orphans reads to learn a journal's session id.
	maxFirstLine = 1 << 20
)

// JournalLine is one line of the journal.
type JournalLine struct {
	Type      string    `json:"type"` // one of the Line* constants
	Timestamp time.Time `json:"timestamp"`
	SessionID string    `json:"session_id"` // the original id, not the file name's
	// Data is a JSON object: {"prompt": ...} for a user_message, {"tool": ...,
	// "summary": ...} for a tool_call, {"text": ...} for an assistant_response.
	Data              json.RawMessage `json:"data"`
	ContextPercentage *float64        `json:"context_percentage"` // nil when unknown
}

// Journal is one agent session's wind-down journal in a sessions folder
// (.ctx/sessions): the file ACTIVE-PAUSE-<SafeID(SessionID)>.jsonl while it is open.
type Journal struct {
	Dir       string
	SessionID string
}

// OpenJournal returns the journal of sessionID in dir, without touching the disk. An
// empty session id becomes UnknownSession.
func OpenJournal(dir, sessionID string) *Journal {
	if strings.TrimSpace(sessionID) == "" {
		sessionID = UnknownSession
	}
	return &Journal{Dir: dir, SessionID: sessionID}
}

// Path returns where the journal is while it is active.
func (j *Journal) Path() string {
	return filepath.Join(j.Dir, journalPrefix+j.safeID()+journalSuffix)
}

func (j *Journal) safeID() string {
	safe, err := SafeID(j.SessionID)
	if err != nil {
		// Only an empty id fails, and OpenJournal gives that one this name too.
		safe, _ = SafeID(UnknownSession)
	}
	return safe
}

// Active reports whether the journal is open: its file exists. It cannot tell when the
// sessions folder is one ctx does not read (checkReadable): false and that error.
func (j *Journal) Active() (bool, error) {
	return j.exists()
}

// locked runs fn under the lock of the journals of j.Dir. Every change to a journal
// takes it, so that an append cannot land after a finalize has moved the file away and
// so re-create it with no pause_started line.
func (j *Journal) locked(ctx context.Context, fn func() error) error {
	locks, err := lockDir(j.Dir)
	if err != nil {
		return err
	}
	return durable.WithLockIn(ctx, locks, filepath.Join(j.Dir, journalsLock), fn)
}

// exists reports whether the journal file is there, an error other than its absence
// being returned. Every use of the journal file begins here, so a sessions folder that
// a link takes out of the workspace is refused before any of it is read or changed.
func (j *Journal) exists() (bool, error) {
	if err := checkReadable(j.Dir); err != nil {
		return false, err
	}
	_, err := os.Lstat(j.Path())
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}

// Start opens the journal with a pause_started line carrying data (for example
// {"reason": ..., "tokens_used": ...}), creating the folder when missing. Starting a
// journal that is already active changes nothing and returns false.
func (j *Journal) Start(now time.Time, pct *float64, data any) (bool, error) {
	_, line, err := j.encode(now, LinePauseStarted, pct, data)
	if err != nil {
		return false, fmt.Errorf("start journal: %w", err)
	}
	if err := ensureSessionsDir(j.Dir); err != nil {
		return false, fmt.Errorf("start journal: %w", err)
	}
	path := j.Path()
	started := false
	err = j.locked(context.Background(), func() error {
		if ok, err := j.exists(); ok || err != nil {
			return err
		}
		durable.RemoveStaleTemps(j.Dir, filepath.Base(path))
		// Written whole and synced, so that an active journal always begins with its
		// pause_started line.
		if err := durable.WriteFile(path, line, 0o644); err != nil {
			return err
		}
		started = true
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("start journal: %w", err)
	}
	return started, nil
}

// Append adds one line of type typ with data, which must marshal to a JSON object (nil
// gives {}), in a single durable.AppendLine so that concurrent hooks never interleave.
// Appending to a journal that is not active does nothing and returns nil. The types
// pause_started and pause_finalized are Start's and Finalize's to write.
func (j *Journal) Append(now time.Time, typ string, pct *float64, data any) error {
	switch typ {
	case "":
		return errors.New("append to journal: no line type given")
	case LinePauseStarted, LinePauseFinalized:
		return fmt.Errorf("append to journal: a %s line is written by the journal itself", typ)
	}
	// Most hooks run with no journal open: one stat, and no lock file made.
	if ok, err := j.exists(); !ok {
		if err != nil {
			return fmt.Errorf("append to journal: %w", err)
		}
		return nil
	}
	_, line, err := j.encode(now, typ, pct, data)
	if err != nil {
		return fmt.Errorf("append to journal: %w", err)
	}
	err = j.locked(context.Background(), func() error {
		if ok, err := j.exists(); !ok {
			return err
		}
		return durable.AppendLine(j.Path(), line)
	})
	if err != nil {
		return fmt.Errorf("append to journal: %w", err)
	}
	return nil
}

// encode builds the line and its JSON text, ending in '\n'.
func (j *Journal) encode(now time.Time, typ string, pct *float64, data any) (JournalLine, []byte, error) {
	obj, err := encodeObject(data)
	if err != nil {
		return JournalLine{}, nil, fmt.Errorf("%s data: %w", typ, err)
	}
	l := JournalLine{Type: typ, Timestamp: now.UTC(), SessionID: j.SessionID, Data: obj, ContextPercentage: pct}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	// Prompts and replies are read by people; "<" should stay "<".
	enc.SetEscapeHTML(false)
	if err := enc.Encode(l); err != nil {
		return JournalLine{}, nil, fmt.Errorf("%s line: %w", typ, err)
	}
	return l, buf.Bytes(), nil
}

func encodeObject(data any) (json.RawMessage, error) {
	if data == nil {
		return json.RawMessage("{}"), nil
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(data); err != nil {
		return nil, err
	}
	obj := bytes.TrimSpace(buf.Bytes())
	if len(obj) == 0 || obj[0] != '{' {
		return nil, fmt.Errorf("want a JSON object, got %.40s", obj)
	}
	return obj, nil
}

// Read returns the journal's lines in file order, skipping a torn or invalid line with
// one warning for each (e.g. "ACTIVE-PAUSE-x.jsonl:7: skipped: invalid JSON"). A journal
// that is not active has no lines.
func (j *Journal) Read() ([]JournalLine, []string, error) {
	if err := checkReadable(j.Dir); err != nil {
		return nil, nil, fmt.Errorf("read journal: %w", err)
	}
	path := j.Path()
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("read journal: %w", err)
	}
	lines, warnings := parseJournal(filepath.Base(path), data)
	return lines, warnings, nil
}

// parseJournal splits data into lines, named name:<line number> in warnings.
func parseJournal(name string, data []byte) ([]JournalLine, []string) {
	var lines []JournalLine
	var warnings []string
	for n := 1; len(data) > 0; n++ {
		raw, rest, complete := bytes.Cut(data, []byte("\n"))
		data = rest
		if len(bytes.TrimSpace(raw)) == 0 {
			continue
		}
		var l JournalLine
		var why string
		if err := json.Unmarshal(raw, &l); err != nil {
			var syntax *json.SyntaxError
			switch {
			case !complete:
				// A writer stopped mid-line: every line is written whole, '\n' included.
				why = "torn line (invalid JSON, no newline at the end)"
			case errors.As(err, &syntax):
				why = "invalid JSON"
			default:
				why = "not a journal line: " + err.Error()
			}
		} else if l.Type == "" {
			why = "no type"
		} else if l.Timestamp.IsZero() {
			why = "no timestamp"
		}
		if why != "" {
			warnings = append(warnings, fmt.Sprintf("%s:%d: skipped: %s", name, n, why))
			continue
		}
		lines = append(lines, l)
	}
	return lines, warnings
}

// JournalStatus summarises a journal for `ctx journal status`.
type JournalStatus struct {
	SessionID       string      `json:"session_id"`
	Active          bool        `json:"active"`
	Path            string      `json:"path"`
	ActionCount     int         `json:"action_count"`     // lines other than pause_started and pause_finalized
	DurationSeconds float64     `json:"duration_seconds"` // from the earliest to the latest timestamp
	ContextRange    [2]*float64 `json:"context_range"`    // lowest and highest context_percentage; nil when none
	PauseStartedAt  *time.Time  `json:"pause_started_at"`
	LastActionType  string      `json:"last_action_type"` // the type of the last line, "" when none
	LastUpdated     *time.Time  `json:"last_updated"`     // the timestamp of the last line
	Warnings        []string    `json:"warnings"`
}

// Status summarises the journal; a journal that is not active has a status too, with
// Active false and nothing counted.
func (j *Journal) Status() (*JournalStatus, error) {
	st := &JournalStatus{SessionID: j.SessionID, Path: j.Path(), Warnings: []string{}}
	ok, err := j.exists()
	if err != nil {
		return nil, fmt.Errorf("journal status: %w", err)
	}
	st.Active = ok
	lines, warnings, err := j.Read()
	if err != nil {
		return nil, fmt.Errorf("journal status: %w", err)
	}
	st.Warnings = append(st.Warnings, warnings...)
	sum := summarise(lines)
	st.ActionCount = sum.actions
	st.DurationSeconds = sum.duration()
	st.ContextRange = sum.context
	for _, l := range lines {
		if l.Type == LinePauseStarted {
			at := l.Timestamp
			st.PauseStartedAt = &at
			break
		}
	}
	if len(lines) > 0 {
		last := lines[len(lines)-1]
		st.LastActionType = last.Type
		st.LastUpdated = &last.Timestamp
	}
	return st, nil
}

// journalSummary is what Status and IncrementalPause both count.
type journalSummary struct {
	actions, toolCalls int
	first, last        time.Time
	context            [2]*float64
}

func summarise(lines []JournalLine) journalSummary {
	var s journalSummary
	for _, l := range lines {
		if IsAction(l.Type) {
			s.actions++
		}
		if l.Type == LineToolCall {
			s.toolCalls++
		}
		// Earliest and latest rather than first and last: concurrent hooks may append
		// slightly out of order.
		if s.first.IsZero() || l.Timestamp.Before(s.first) {
			s.first = l.Timestamp
		}
		if l.Timestamp.After(s.last) {
			s.last = l.Timestamp
		}
		if p := l.ContextPercentage; p != nil {
			if s.context[0] == nil || *p < *s.context[0] {
				s.context[0] = new(*p)
			}
			if s.context[1] == nil || *p > *s.context[1] {
				s.context[1] = new(*p)
			}
		}
	}
	return s
}

// duration is in seconds, to the millisecond.
func (s journalSummary) duration() float64 {
	return math.Round(s.last.Sub(s.first).Seconds()*1000) / 1000
}

func IsAction(typ string) bool {
	return typ != LinePauseStarted && typ != LinePauseFinalized
}

// IncrementalPause builds a snapshot's incremental_pause section from the journal's
// lines: enabled, action_count, duration_seconds, context_range ([lowest, highest],
// null when unknown), tool_calls, and actions_summary, the last 10 actions as
// {type, timestamp, summary}. Its values have the types JSON decodes them to
// (float64, string, []any, map[string]any), so that a snapshot read back is equal.
func IncrementalPause(lines []JournalLine) map[string]any {
	sum := summarise(lines)
	var actions []JournalLine
	for _, l := range lines {
		if IsAction(l.Type) {
			actions = append(actions, l)
		}
	}
	summary := []any{}
	for _, l := range actions[max(0, len(actions)-lastActions):] {
		summary = append(summary, map[string]any{
			"type":      l.Type,
			"timestamp": l.Timestamp.UTC().Format(time.RFC3339Nano),
			"summary":   SummarizeAction(l),
		})
	}
	context := []any{nil, nil}
	for i, p := range sum.context {
		if p != nil {
			context[i] = *p
		}
	}
	out := map[string]any{
		"enabled":          true,
		"action_count":     float64(sum.actions),
		"duration_seconds": sum.duration(),
		"context_range":    context,
		"tool_calls":       float64(sum.toolCalls),
		"actions_summary":  summary,
	}
	if len(lines) > 0 {
		if tok := finalizeToken(lines[len(lines)-1]); tok != "" {
			out[finalizeTokenKey] = tok
		}
	}
	return out
}

// finalizeTokenKey names, in a pause_finalized line's data and in the incremental_pause
// of the snapshot it made, the token that pairs the two.
const finalizeTokenKey = "finalize_token"

// newFinalizeToken is unique to one finalize: its time and process, and random bits.
func newFinalizeToken(now time.Time) string {
	return fmt.Sprintf("%x-%d-%016x", now.UnixNano(), os.Getpid(), rand.Uint64())
}

// finalizeToken is the token of a pause_finalized line, "" for any other line.
func finalizeToken(l JournalLine) string {
	if l.Type != LinePauseFinalized {
		return ""
	}
	var data map[string]any
	if json.Unmarshal(l.Data, &data) != nil {
		return ""
	}
	tok, _ := data[finalizeTokenKey].(string)
	return tok
}

// finalizedBy returns the id of the snapshot the finalize that wrote line made, "" when
// there is none: the snapshots written since the line, newest first, are looked at.
func (s Snapshots) finalizedBy(line JournalLine) string {
	tok := finalizeToken(line)
	if tok == "" {
		return ""
	}
	ids, err := s.ids()
	if err != nil {
		return ""
	}
	// A snapshot is stamped after the line it follows; a second of slack for clocks.
	since := idPrefix + stamp(line.Timestamp.Add(-time.Second))
	for _, id := range ids {
		if compareIDs(id, since) > 0 {
			break // older than the line: the finalize did not get to its snapshot
		}
		snap, err := s.Load(id)
		if err != nil || snap.IncrementalPause == nil {
			continue
		}
		if got, _ := snap.IncrementalPause[finalizeTokenKey].(string); got == tok {
			return id
		}
	}
	return ""
}

// summarizeAction says in one short line what an action was, from the fields hooks
// put in its data.
func SummarizeAction(l JournalLine) string {
	var data map[string]any
	_ = json.Unmarshal(l.Data, &data)
	field := func(name string) string {
		s, _ := data[name].(string)
		return OneLine(s)
	}
	var s string
	switch l.Type {
	case LineUserMessage:
		s = field("prompt")
	case LineToolCall:
		s = field("tool")
		if detail := field("summary"); detail != "" {
			if s != "" {
				s += ": "
			}
			s += detail
		}
	case LineAssistantResponse:
		s = field("text")
	default:
		s = cmp.Or(field("summary"), field("event"), field("message"), field("text"))
	}
	if s == "" && len(data) > 0 {
		s = OneLine(string(l.Data))
	}
	return Clip(s, summaryLen)
}

// clip shortens s to at most n runes, marking the cut.
func Clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	runes := []rune(s)
	if len(runes) <= n {
		return s
	}
	return string(runes[:n-1]) + "…"
}

// Finalize closes the journal: it appends pause_finalized (unless the last line already
// is one); unless minimal, writes a snapshot set from snap (nil for a bare one) with
// IncrementalPause filled in and, when empty, SessionID, setting both in snap; then
// renames the journal to session-<stamp>-incremental.jsonl, the stamp being the new
// snapshot's, or when minimal a fresh one from now. It returns the archive's path and
// the snapshot id ("" when minimal). A journal that is not active is left alone and ""
// returned for both, so finalizing twice is harmless; one whose finalize was killed
// after its snapshot is archived with that snapshot (finalizedBy), not given another. On an error after the snapshot was
// written, snapshotID still names it. All of it happens under the
// journals' lock: two finalizers (pre-compact and session-end racing) make one archive.
func (j *Journal) Finalize(ctx context.Context, now time.Time, snap *Snapshot, minimal bool) (archived, snapshotID string, err error) {
	if ok, err := j.exists(); !ok {
		if err != nil {
			return "", "", fmt.Errorf("finalize journal: %w", err)
		}
		return "", "", nil
	}
	err = j.locked(ctx, func() error {
		if ok, err := j.exists(); !ok {
			return err
		}
		lines, _, err := j.Read()
		if err != nil {
			return err
		}
		resumed := len(lines) > 0 && lines[len(lines)-1].Type == LinePauseFinalized
		if !resumed {
			var pct *float64
			if snap != nil && snap.ContextUsage != nil {
				pct = new(snap.ContextUsage.Percentage)
			}
			data := map[string]any{"minimal": minimal, finalizeTokenKey: newFinalizeToken(now)}
			l, line, err := j.encode(now, LinePauseFinalized, pct, data)
			if err != nil {
				return err
			}
			if err := durable.AppendLine(j.Path(), line); err != nil {
				return err
			}
			lines = append(lines, l)
		}
		base := idPrefix + stamp(now)
		// A finalize killed after its snapshot and before the rename left the journal
		// ending in its pause_finalized line: its snapshot, found by the line's token,
		// is the one the archive pairs with, not a second one.
		if resumed && !minimal {
			if id := (Snapshots{Dir: j.Dir}).finalizedBy(lines[len(lines)-1]); id != "" {
				snapshotID, base, minimal = id, id, true
			}
		}
		if !minimal {
			if snap == nil {
				snap = &Snapshot{}
			}
			if snap.SessionID == "" {
				snap.SessionID = j.SessionID
			}
			snap.IncrementalPause = IncrementalPause(lines)
			if snapshotID, err = (Snapshots{Dir: j.Dir}).Write(ctx, snap); err != nil {
				return err
			}
			// The archive pairs with its snapshot: session-<stamp>[-n]-incremental.jsonl.
			base = snapshotID
		}
		archived, err = j.archive(base)
		return err
	})
	if err != nil {
		return "", snapshotID, fmt.Errorf("finalize journal: %w", err)
	}
	return archived, snapshotID, nil
}

// archive renames the journal to base-incremental.jsonl, or base-incremental-<n>.jsonl
// when that name is taken. The caller holds the journals' lock, which every writer of
// these names takes, so a name free when looked at is still free at the rename.
func (j *Journal) archive(base string) (string, error) {
	for n := 1; ; n++ {
		name := base + archiveSuffix + journalSuffix
		if n > 1 {
			name = base + archiveSuffix + "-" + strconv.Itoa(n) + journalSuffix
		}
		dest := filepath.Join(j.Dir, name)
		_, err := os.Lstat(dest)
		if err == nil {
			continue
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
		if err := os.Rename(j.Path(), dest); err != nil {
			return "", err
		}
		j.removeLockFile()
		return dest, nil
	}
}

// removeLockFile deletes the sidecar lock that durable.AppendLine made for the journal
// (durable.WithLock's path+".lock"), so that a folder does not collect one per session.
// Removing a lock file is safe only because nothing waits on it: every AppendLine on a
// journal runs under the journals' lock, which the caller holds.
func (j *Journal) removeLockFile() {
	_ = os.Remove(j.Path() + ".lock")
}

// stamp formats t as the snapshot ids do: UTC, to the microsecond, sorting as text.
func stamp(t time.Time) string {
	t = t.UTC()
	return t.Format(stampLayout) + fmt.Sprintf("-%06d", t.Nanosecond()/1000)
}

// Discard deletes the journal; there is nothing to do when it is not active.
func (j *Journal) Discard() error {
	if ok, err := j.exists(); !ok {
		if err != nil {
			return fmt.Errorf("discard journal: %w", err)
		}
		return nil
	}
	err := j.locked(context.Background(), func() error {
		if err := os.Remove(j.Path()); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		j.removeLockFile()
		return nil
	})
	if err != nil {
		return fmt.Errorf("discard journal: %w", err)
	}
	return nil
}

// Orphans lists the active journals in dir of sessions other than exceptSessionID (""
// excepts none): journals left by a crash or by another session, to recover at session
// start. A journal's session id is taken from its first line when that line names the
// session the file name is made from, else from the file name. A file whose name
// SafeID would not have made is not ctx's and is left out.
func Orphans(dir, exceptSessionID string) ([]*Journal, error) {
	if err := checkReadable(dir); err != nil {
		return nil, fmt.Errorf("find orphaned journals: %w", err)
	}
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("find orphaned journals: %w", err)
	}
	except := ""
	if exceptSessionID != "" {
		except, _ = SafeID(exceptSessionID)
	}
	var orphans []*Journal
	for _, e := range entries {
		name := e.Name()
		safe, ok := strings.CutPrefix(name, journalPrefix)
		if !ok || !e.Type().IsRegular() {
			continue
		}
		if safe, ok = strings.CutSuffix(safe, journalSuffix); !ok || safe == except {
			continue
		}
		id := firstSessionID(filepath.Join(dir, name))
		if again, err := SafeID(id); err != nil || again != safe {
			id = safe
			if again, err := SafeID(safe); err != nil || again != safe {
				continue
			}
		}
		orphans = append(orphans, &Journal{Dir: dir, SessionID: id})
	}
	return orphans, nil
}

// firstSessionID returns the session_id of the journal's first line, "" when it has none.
func firstSessionID(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer func() { _ = f.Close() }()
	line, err := bufio.NewReader(io.LimitReader(f, maxFirstLine)).ReadBytes('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return ""
	}
	var l struct {
		SessionID string `json:"session_id"`
	}
	if json.Unmarshal(line, &l) != nil {
		return ""
	}
	return l.SessionID
}
