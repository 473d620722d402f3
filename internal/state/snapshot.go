package state

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/ctxtools/ctx/gitstate"
	"github.com/ctxtools/ctx/internal/durable"
	"github.com/ctxtools/ctx/loader"
)

// SnapshotSchemaVersion is the schema_version of the snapshots this package writes.
const SnapshotSchemaVersion = 1

// LatestFile names, in a snapshot folder, the file whose first line is the id of the
// newest snapshot.
const LatestFile = "LATEST-SESSION.txt"

const (
	idPrefix = "session-"
	// stampLayout and the 6-digit microseconds after it make stamps that sort
	// chronologically as text.
	stampLayout = "20060102T150405Z"
	stampLen    = len(stampLayout) + len("-000000")
	// maxDirtyShown keeps the briefing short in a repository with many changes; the
	// JSON and YAML files keep the whole list.
	maxDirtyShown = 50
)

// writeFile is durable.WriteFile; a test replaces it to see the order of the writes.
var writeFile = durable.WriteFile

// Trigger says what wrote a snapshot.
type Trigger string

// The triggers of a snapshot (docs/sessions.md).
const (
	TriggerSave       Trigger = "save"
	TriggerClose      Trigger = "close"
	TriggerAuto       Trigger = "auto"
	TriggerPreCompact Trigger = "pre-compact"
	TriggerSessionEnd Trigger = "session-end"
)

// describe says in words why a snapshot with this trigger was written, to follow
// "Saved <time>".
func (t Trigger) describe() string {
	var why string
	switch t {
	case TriggerSave:
		why = "by hand (ctx save)"
	case TriggerClose:
		why = "when the session was closed (ctx close)"
	case TriggerAuto:
		why = "automatically, when context usage crossed the auto-save threshold"
	case TriggerPreCompact:
		why = "automatically, just before the context was compacted"
	case TriggerSessionEnd:
		why = "automatically, when the agent session ended"
	case "":
		return "for a reason not recorded"
	default:
		return "by " + code(string(t))
	}
	return why + " (trigger " + code(string(t)) + ")"
}

// Snapshot is one save's record: what a person or an agent needs to pick the work up
// again. The YAML file carries the same names as the JSON one.
type Snapshot struct {
	SchemaVersion    int              `json:"schema_version" yaml:"schema_version"`
	SnapshotID       string           `json:"snapshot_id" yaml:"snapshot_id"` // set by Write
	SessionID        string           `json:"session_id" yaml:"session_id"`   // "" when unknown
	Project          *SnapshotProject `json:"project" yaml:"project"`         // nil for a workspace-level snapshot
	SavedAt          time.Time        `json:"saved_at" yaml:"saved_at"`
	Trigger          Trigger          `json:"trigger" yaml:"trigger"`
	ContextUsage     *ContextUsage    `json:"context_usage" yaml:"context_usage"` // nil until usage is known
	Resume           map[string]any   `json:"resume" yaml:"resume"`               // the _resume.md frontmatter
	ResumePath       string           `json:"resume_path,omitempty" yaml:"resume_path,omitempty"`
	ResumePrompt     ResumePrompt     `json:"resume_prompt" yaml:"resume_prompt"`
	Git              *gitstate.State  `json:"git,omitempty" yaml:"git,omitempty"`
	IncrementalPause map[string]any   `json:"incremental_pause,omitempty" yaml:"incremental_pause,omitempty"`
}

// SnapshotProject names the project a snapshot was saved for.
type SnapshotProject struct {
	ID       string `json:"id" yaml:"id"`
	Name     string `json:"name" yaml:"name"`
	Path     string `json:"path" yaml:"path"` // workspace-relative
	Progress any    `json:"progress" yaml:"progress"`
}

// ContextUsage is how full the agent's context was when the snapshot was written.
type ContextUsage struct {
	TokensUsed  int     `json:"tokens_used" yaml:"tokens_used"`
	TokensTotal int     `json:"tokens_total" yaml:"tokens_total"`
	Percentage  float64 `json:"percentage" yaml:"percentage"` // 0–100
}

// ResumePrompt is where work stopped, in the words the agent is given to resume.
type ResumePrompt struct {
	LastAction   string   `json:"last_action" yaml:"last_action"`
	CurrentState string   `json:"current_state" yaml:"current_state"`
	PendingTasks []string `json:"pending_tasks" yaml:"pending_tasks"`
}

// Snapshots reads and writes the snapshot sets of one workspace folder (.ctx/sessions).
type Snapshots struct {
	Dir string
}

// Write stores snap as session-<stamp>.json, .yaml and .md, then LatestFile, each
// written atomically, and returns the new id, which it also sets in snap.SnapshotID.
// A zero SchemaVersion or SavedAt is filled in. Ids never collide and LatestFile always
// names the newest, however many processes write at once: all of it happens under a
// lock on LatestFile.
func (s Snapshots) Write(ctx context.Context, snap *Snapshot) (string, error) {
	if snap == nil {
		return "", errors.New("write snapshot: no snapshot given")
	}
	if err := ensureSessionsDir(s.Dir); err != nil {
		return "", fmt.Errorf("write snapshot: %w", err)
	}
	latest := filepath.Join(s.Dir, LatestFile)
	locks, err := lockDir(s.Dir)
	if err != nil {
		return "", fmt.Errorf("write snapshot: %w", err)
	}
	var out Snapshot
	err = durable.WithLockIn(ctx, locks, latest, func() error {
		// Every snapshot file is written under this lock, so any temporary file here,
		// and any set without its JSON (which is written last), is what a killed
		// writer left. Such a writer also left its marker: only then is the folder,
		// which grows with every save, read and tidied.
		marker, tidied := filepath.Join(s.Dir, writingFile), false
		if _, err := os.Lstat(marker); !errors.Is(err, fs.ErrNotExist) {
			s.tidyLocked()
			_ = os.Remove(marker) // whatever it is: a link is removed, never followed
			tidied = true
		}
		madeMarker := false
		if durable.CheckInside(marker) == nil {
			if f, err := os.OpenFile(marker, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644); err == nil {
				_ = f.Close()
				madeMarker = true
			}
		}
		if !madeMarker && !tidied {
			s.tidyLocked() // no marker to tell a killed write by: tidy every time
		}
		// The clock is read under the lock so that a later id is a later write.
		now := time.Now()
		id, err := s.nextID(now)
		if err != nil {
			return err
		}
		out = *snap
		out.SnapshotID = id
		if out.SchemaVersion == 0 {
			out.SchemaVersion = SnapshotSchemaVersion
		}
		if out.SavedAt.IsZero() {
			out.SavedAt = now.UTC().Round(0)
		}
		if out.ResumePrompt.PendingTasks == nil {
			out.ResumePrompt.PendingTasks = []string{}
		}
		jsonData, err := encodeJSON(&out)
		if err != nil {
			return err
		}
		yamlData, err := encodeYAML(jsonData, id)
		if err != nil {
			return err
		}
		base := filepath.Join(s.Dir, id)
		// The JSON file goes last of the three: List and Read see a snapshot only once
		// its briefing and YAML are in place.
		for _, f := range []struct {
			path string
			data []byte
		}{
			{base + ".yaml", yamlData},
			{base + ".md", out.Markdown()},
			{base + ".json", jsonData},
			{latest, []byte(id + "\n")},
		} {
			if err := writeFile(f.path, f.data, 0o644); err != nil {
				return err
			}
		}
		if madeMarker {
			_ = os.Remove(marker) // the set is whole; a marker left costs the next write a tidy
		}
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("write snapshot: %w", err)
	}
	snap.SnapshotID = out.SnapshotID
	snap.SchemaVersion = out.SchemaVersion
	snap.SavedAt = out.SavedAt
	return out.SnapshotID, nil
}

// writingFile marks a snapshot write under way in the sessions folder: written before a
// set's first file, removed after LatestFile.
const writingFile = ".writing"

// tidyLocked removes, in one pass over the folder, the temporary files of killed
// snapshot writes and the files of sets whose JSON never came (a set exists once its
// JSON does). The caller holds the lock every snapshot write takes.
func (s Snapshots) tidyLocked() {
	entries, err := os.ReadDir(s.Dir)
	if err != nil {
		return
	}
	whole := map[string]bool{}
	var parts []string
	for _, e := range entries {
		name := e.Name()
		switch {
		case strings.HasPrefix(name, durable.TempPrefix+idPrefix), strings.HasPrefix(name, durable.TempPrefix+LatestFile):
			_ = os.Remove(filepath.Join(s.Dir, name))
		case strings.HasPrefix(name, idPrefix) && strings.HasSuffix(name, ".json"):
			whole[strings.TrimSuffix(name, ".json")] = true
		case strings.HasPrefix(name, idPrefix) && (strings.HasSuffix(name, ".yaml") || strings.HasSuffix(name, ".md")):
			parts = append(parts, name)
		}
	}
	for _, name := range parts {
		if !whole[name[:strings.LastIndexByte(name, '.')]] {
			_ = os.Remove(filepath.Join(s.Dir, name))
		}
	}
}

// nextID returns an id for a snapshot written at now, after the one LatestFile names
// (should the clock have stepped back, or two writes share a microsecond) and naming no
// file that exists. The caller holds the lock.
func (s Snapshots) nextID(now time.Time) (string, error) {
	now = now.UTC()
	stamp := now.Format(stampLayout) + fmt.Sprintf("-%06d", now.Nanosecond()/1000)
	n := 1
	if prev, err := s.LatestID(); err == nil {
		if pstamp, pn := idKey(prev); len(pstamp) == stampLen && compareKeys(stamp, n, pstamp, pn) <= 0 {
			stamp, n = pstamp, pn+1
		}
	}
	for ; ; n++ {
		id := makeID(stamp, n)
		taken, err := s.taken(id)
		if err != nil {
			return "", err
		}
		if !taken {
			return id, nil
		}
	}
}

// taken reports whether any file of the snapshot set id exists: one left by a write
// that crashed before its JSON file still claims the id.
func (s Snapshots) taken(id string) (bool, error) {
	for _, ext := range []string{".json", ".yaml", ".md"} {
		_, err := os.Lstat(filepath.Join(s.Dir, id+ext))
		if err == nil {
			return true, nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return false, err
		}
	}
	return false, nil
}

func makeID(stamp string, n int) string {
	if n <= 1 {
		return idPrefix + stamp
	}
	return idPrefix + stamp + "-" + strconv.Itoa(n)
}

// idKey splits an id into its stamp and its collision number (1 when it has none), the
// order of snapshots being that of the stamps, then of the numbers.
func idKey(id string) (string, int) {
	stamp := strings.TrimPrefix(id, idPrefix)
	if len(stamp) > stampLen+1 && stamp[stampLen] == '-' {
		if n, err := strconv.Atoi(stamp[stampLen+1:]); err == nil && n >= 2 {
			return stamp[:stampLen], n
		}
	}
	return stamp, 1
}

func compareKeys(stampA string, nA int, stampB string, nB int) int {
	if c := strings.Compare(stampA, stampB); c != 0 {
		return c
	}
	return nA - nB
}

// compareIDs orders ids newest first.
func compareIDs(a, b string) int {
	sa, na := idKey(a)
	sb, nb := idKey(b)
	return compareKeys(sb, nb, sa, na)
}

func encodeJSON(snap *Snapshot) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	// Task text and notes are read by people; "<" should stay "<".
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(snap); err != nil {
		return nil, fmt.Errorf("encode %s: %w", snap.SnapshotID, err)
	}
	return buf.Bytes(), nil
}

// encodeYAML renders the JSON document as YAML. Going through the JSON keeps the two
// files the same data under the same names, whatever types the free-form fields hold.
func encodeYAML(jsonData []byte, id string) ([]byte, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(jsonData, &doc); err != nil {
		return nil, fmt.Errorf("encode %s as yaml: %w", id, err)
	}
	blockStyle(&doc)
	doc.HeadComment = "ctx snapshot " + id + " (the same data as " + id + ".json)"
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return nil, fmt.Errorf("encode %s as yaml: %w", id, err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("encode %s as yaml: %w", id, err)
	}
	return buf.Bytes(), nil
}

// blockStyle turns a document parsed from JSON into YAML as a person writes it: block
// mappings and lists, strings quoted only where YAML needs it, multi-line text as a
// literal block, and RFC 3339 times as YAML timestamps rather than quoted strings.
func blockStyle(n *yaml.Node) {
	n.Style = 0
	if n.Kind == yaml.ScalarNode && n.Tag == "!!str" {
		if _, err := time.Parse(time.RFC3339Nano, n.Value); err == nil {
			n.Tag = "!!timestamp"
		} else if strings.Contains(n.Value, "\n") {
			n.Style = yaml.LiteralStyle
		}
	}
	for _, c := range n.Content {
		blockStyle(c)
	}
}

// List returns the snapshots in the folder, newest first. Snapshots that cannot be read
// are left out and named in the error, which does not make the list invalid; a folder
// that cannot be listed gives a nil list and the error.
func (s Snapshots) List() ([]Snapshot, error) {
	ids, err := s.ids()
	if err != nil {
		return nil, err
	}
	snaps := make([]Snapshot, 0, len(ids))
	var errs []error
	for _, id := range ids {
		snap, err := s.Load(id)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		snaps = append(snaps, *snap)
	}
	return snaps, errors.Join(errs...)
}

// ids returns the ids of the folder's snapshots, newest first, from the file names.
func (s Snapshots) ids() ([]string, error) {
	if err := checkReadable(s.Dir); err != nil {
		return nil, fmt.Errorf("list snapshots: %w", err)
	}
	entries, err := os.ReadDir(s.Dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list snapshots: %w", err)
	}
	var ids []string
	for _, e := range entries {
		name := e.Name()
		if e.Type().IsRegular() && strings.HasPrefix(name, idPrefix) && strings.HasSuffix(name, ".json") {
			ids = append(ids, strings.TrimSuffix(name, ".json"))
		}
	}
	slices.SortFunc(ids, compareIDs)
	return ids, nil
}

// Read returns one snapshot by id: "session-<stamp>", the bare stamp, or "latest". An
// id that names no snapshot gives an error wrapping os.ErrNotExist.
func (s Snapshots) Read(id string) (*Snapshot, error) {
	if err := checkID(id); err != nil {
		return nil, err
	}
	if strings.EqualFold(id, "latest") {
		latest, err := s.Latest()
		if err != nil {
			return nil, err
		}
		return s.Load(latest)
	}
	// A file name pasted from a listing names its snapshot too.
	for _, ext := range []string{".json", ".yaml", ".md"} {
		id = strings.TrimSuffix(id, ext)
	}
	if !strings.HasPrefix(id, idPrefix) {
		id = idPrefix + id
	}
	return s.Load(id)
}

// latest returns the id LatestFile names, or, when that file is missing or names no
// snapshot (a copy of the folder, a hand-deleted snapshot), the newest one present.
func (s Snapshots) Latest() (string, error) {
	if id, err := s.LatestID(); err == nil {
		if _, err := os.Stat(filepath.Join(s.Dir, id+".json")); err == nil {
			return id, nil
		}
	}
	ids, err := s.ids()
	if err != nil {
		return "", err
	}
	if len(ids) == 0 {
		return "", fmt.Errorf("latest snapshot: none in %s yet (ctx save writes one): %w", s.Dir, os.ErrNotExist)
	}
	return ids[0], nil
}

// LatestID returns the id on the first line of LatestFile.
func (s Snapshots) LatestID() (string, error) {
	if err := checkReadable(s.Dir); err != nil {
		return "", err
	}
	data, err := os.ReadFile(filepath.Join(s.Dir, LatestFile))
	if err != nil {
		return "", err
	}
	line, _, _ := strings.Cut(string(data), "\n")
	id := strings.TrimSpace(line)
	if err := checkID(id); err != nil {
		return "", fmt.Errorf("%s: %w", LatestFile, err)
	}
	return id, nil
}

func (s Snapshots) Load(id string) (*Snapshot, error) {
	if err := checkReadable(s.Dir); err != nil {
		return nil, fmt.Errorf("read snapshot: %w", err)
	}
	path := filepath.Join(s.Dir, id+".json")
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("snapshot %s: not found in %s: %w", id, s.Dir, os.ErrNotExist)
	}
	if err != nil {
		return nil, fmt.Errorf("read snapshot: %w", err)
	}
	var snap Snapshot
	if err := json.Unmarshal(data, &snap); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if snap.SnapshotID == "" {
		snap.SnapshotID = id
	}
	return &snap, nil
}

// checkID refuses an id that could become anything but a file name in the snapshot
// folder: only letters, digits, '.', '_' and '-', not starting with '.', and no "..".
func checkID(id string) error {
	if id == "" {
		return errors.New("snapshot id is empty")
	}
	if len(id) > 128 {
		return fmt.Errorf("snapshot id %.20q...: too long", id)
	}
	for _, r := range id {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' ||
			r == '.' || r == '_' || r == '-'
		if !ok {
			return fmt.Errorf("snapshot id %q: only letters, digits, '.', '_' and '-' are allowed", id)
		}
	}
	if id[0] == '.' || strings.Contains(id, "..") {
		return fmt.Errorf("snapshot id %q: must not start with '.' or contain \"..\"", id)
	}
	return nil
}

// checkReadable returns the *durable.OutsideError of a sessions folder that a link
// takes out of its workspace, nil otherwise: ctx reads there no more than it writes
// there, by the rule every write keeps (durable.CheckInside, which also honours
// links.allow_outside). Every read of a sessions folder asks it before it looks at
// anything there; the error names the folder.
func checkReadable(sessionsDir string) error {
	return durable.CheckInside(sessionsDir)
}

// lockDir is where the locks of a sessions folder live: .ctx/state/locks, beside it and
// ignored by version control, so that the sessions folder holds only the files a person
// may keep or share, and no save leaves a lock file among them.
func lockDir(sessionsDir string) (string, error) {
	state := filepath.Join(filepath.Dir(sessionsDir), "state")
	if err := loader.EnsureStateDir(state); err != nil {
		return "", err
	}
	dir := filepath.Join(state, "locks")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("create %s: %w", dir, err)
	}
	return dir, nil
}
