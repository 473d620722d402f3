// Package agents runs Claude Code sessions as agents in tmux, and pauses and resumes
// them without losing work or conversation: a record per agent under
// .ctx/state/agents/<id>/, a state machine (state.go), the tmux host (tmux.go), a git
// checkpoint of the working tree (checkpoint.go), and the pause and resume steps
// (pause.go, resume.go). There is no daemon: every command works on the records and
// asks tmux for liveness; hooks report activity into status.json.
package agents

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/ctxtools/ctx/internal/durable"
	"github.com/ctxtools/ctx/internal/events"
	"github.com/ctxtools/ctx/loader"
)

// SchemaVersion is the version of agent.json. Version 2 made "host" the machine's name
// and moved the tmux session from it to "tmux"; version 1 records are read as they are
// (UnmarshalJSON).
const SchemaVersion = 2

// EnvAgentID marks every process of an agent: the tmux session sets it, claude and its
// hooks inherit it, and the sweep at pause finds leftovers by it.
const EnvAgentID = events.EnvAgentID

// Record is an agent's lifecycle, written only by ctx commands under the agent's lock.
type Record struct {
	SchemaVersion int       `json:"schema_version"`
	ID            string    `json:"id"`
	Name          string    `json:"name"`
	Project       string    `json:"project"`
	ProjectPath   string    `json:"project_path"`
	Cwd           string    `json:"cwd"`
	Worktree      *Worktree `json:"worktree,omitempty"`
	Claude        Claude    `json:"claude"`
	// Host names the machine the agent runs on: "local" on its own machine; a
	// listing over hosts gives it the host's name (package hosts).
	Host string `json:"host"`
	// Tmux is the tmux session hosting the agent.
	Tmux       TmuxInfo   `json:"tmux"`
	State      State      `json:"state"`
	StateSince time.Time  `json:"state_since"`
	Pause      *PauseInfo `json:"pause,omitempty"`
	Exit       *ExitInfo  `json:"exit,omitempty"`
	Op         *Op        `json:"op"`
	// Handoff is the agent's handoff policy, fresh or compact; "" follows the
	// workspace's agents.handoff (handoff.go).
	Handoff string `json:"handoff,omitempty"`
	// Chain is the agent's sessions in order, one link each: why it started, and how
	// full its context was when it handed off.
	Chain []Link `json:"chain,omitempty"`
	// Attention says what a person should look at: a handoff that did not take.
	Attention string `json:"attention,omitempty"`
	// MovingTo names the host a move (`ctx agents move`) takes the agent to while it
	// is under way: the agent does not resume here meanwhile.
	MovingTo string `json:"moving_to,omitempty"`
	// Moves are the hosts the agent came from, oldest first.
	Moves     []Move    `json:"moves,omitempty"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
	LastError string    `json:"last_error"`
}

// Claude is how the agent's claude was started, so resume can start it the same way.
type Claude struct {
	Binary             string   `json:"binary"`
	SessionID          string   `json:"session_id"`
	PreviousSessionIDs []string `json:"previous_session_ids"`
	PermissionMode     string   `json:"permission_mode,omitempty"`
	Model              string   `json:"model,omitempty"`
	AutoApprove        bool     `json:"auto_approve,omitempty"`
}

// Move is one move of an agent from a host to another (ctx agents move).
type Move struct {
	From   string    `json:"from"`    // the host it left
	FromID string    `json:"from_id"` // its id there
	To     string    `json:"to"`
	At     time.Time `json:"at"`
}

// LocalHost is this machine's name in a record and in every listing.
const LocalHost = "local"

// UnmarshalJSON reads a record of either schema: in version 1 "host" was the tmux
// session, which is "tmux" now. A record without a host is this machine's.
func (r *Record) UnmarshalJSON(data []byte) error {
	type plain Record
	var raw struct {
		plain
		Host json.RawMessage `json:"host"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return err
	}
	*r = Record(raw.plain)
	r.Host = ""
	switch h := bytes.TrimSpace(raw.Host); {
	case len(h) > 0 && h[0] == '"':
		if err := json.Unmarshal(h, &r.Host); err != nil {
			return err
		}
	case len(h) > 0 && h[0] == '{' && r.Tmux == (TmuxInfo{}):
		if err := json.Unmarshal(h, &r.Tmux); err != nil {
			return err
		}
	}
	if r.Host == "" {
		r.Host = LocalHost
	}
	return nil
}

// TmuxInfo names the tmux session hosting the agent.
type TmuxInfo struct {
	Kind    string `json:"kind"`
	Socket  string `json:"socket"`
	Session string `json:"session"`
	PanePID int    `json:"pane_pid,omitempty"`
}

// PauseInfo is what a pause kept and freed.
type PauseInfo struct {
	Reason         string      `json:"reason"`
	PausedAt       time.Time   `json:"paused_at"`
	Stamp          string      `json:"stamp"`
	Interrupted    bool        `json:"interrupted"`
	LastActivity   string      `json:"last_activity"`
	GitStrategy    string      `json:"git_strategy,omitempty"` // keep, stash or commit
	Git            *Checkpoint `json:"git,omitempty"`
	Scrollback     string      `json:"scrollback,omitempty"`
	SnapshotID     string      `json:"snapshot_id,omitempty"`
	RSSFreedKB     int64       `json:"rss_freed_kb"`
	ProcessesEnded int         `json:"processes_ended"`
}

// ExitInfo is how an agent's claude ended on its own.
type ExitInfo struct {
	Status    int       `json:"status"` // 128+N for signal N; -1 when tmux could not tell
	At        time.Time `json:"at"`
	LastLines []string  `json:"last_lines,omitempty"`
}

// Op is an operation in flight: written before each step, so that a ctx process killed
// in the middle leaves a record the next command can finish or roll back.
type Op struct {
	Kind    string    `json:"kind"` // "pause" or "resume"
	Step    string    `json:"step"`
	PID     int       `json:"pid"`
	From    State     `json:"from"`
	Started time.Time `json:"started"`
	// A handoff's fresh session and why it happens, chosen before its first step.
	Session string `json:"session,omitempty"`
	Reason  string `json:"reason,omitempty"`
}

// Status is an agent's activity, replaced by hooks (no lock, no fsync): the newest
// event wins.
type Status struct {
	Activity string `json:"activity"` // working, needs_input, idle, compacting, exited
	Detail   string `json:"detail,omitempty"`
	Tool     string `json:"tool,omitempty"`
	Summary  string `json:"summary,omitempty"`
	// Input is what a tool waiting on a permission prompt would run or change: the
	// command or file, whole up to MaxStatusInput bytes (Summary is its first line).
	Input     string    `json:"input,omitempty"`
	SessionID string    `json:"session_id"`
	Event     string    `json:"event"`
	Source    string    `json:"source,omitempty"` // session start's source
	At        time.Time `json:"at"`
}

// Store holds a workspace's agent records.
type Store struct {
	Dir string // .ctx/state/agents
	WS  *loader.Workspace
}

// NewStore opens the agent records of a workspace.
func NewStore(ws *loader.Workspace) Store {
	return Store{Dir: ws.StatePath("state", "agents"), WS: ws}
}

func (s Store) recordPath(id string) string { return filepath.Join(s.Dir, id, "agent.json") }
func (s Store) statusPath(id string) string { return filepath.Join(s.Dir, id, "status.json") }

// AgentDir is the folder of an agent's files.
func (s Store) AgentDir(id string) string { return filepath.Join(s.Dir, id) }

// NewID returns a fresh agent id: "a-" and six lowercase letters and digits.
func NewID() string {
	const alphabet = "abcdefghijkmnpqrstuvwxyz23456789"
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return "a-" + string(b)
}

// NewSessionID returns a random UUID (version 4) for a new Claude Code session.
func NewSessionID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// validID keeps an id a plain file name.
func validID(id string) bool {
	if !strings.HasPrefix(id, "a-") || len(id) < 3 || len(id) > 40 {
		return false
	}
	for _, r := range id[2:] {
		if (r < 'a' || r > 'z') && (r < '0' || r > '9') {
			return false
		}
	}
	return true
}

// Create writes a new record; it fails if the id exists. The agent's folder is made
// under a temporary name (which List skips) and renamed into place with its record in
// it, so an agent never appears without one: a killed Create leaves only the temporary
// folder, which a later Create or Remove deletes.
func (s Store) Create(r *Record) error {
	if err := loader.EnsureStateDir(filepath.Dir(s.Dir)); err != nil {
		return err
	}
	if err := os.MkdirAll(s.Dir, 0o755); err != nil {
		return fmt.Errorf("agents: %w", err)
	}
	durable.RemoveStaleDirs(s.Dir, tempPrefix, time.Now())
	r.SchemaVersion = SchemaVersion
	err := durable.BuildDir(s.AgentDir(r.ID), tempPrefix+r.ID+"-", func(tmp string) error {
		return s.writeTo(filepath.Join(tmp, filepath.Base(s.recordPath(r.ID))), r)
	})
	if err != nil {
		return fmt.Errorf("agent %s: %w", r.ID, err)
	}
	return nil
}

func (s Store) write(r *Record) error {
	return s.writeTo(s.recordPath(r.ID), r)
}

func (s Store) writeTo(path string, r *Record) error {
	r.UpdatedAt = time.Now().UTC()
	r.SchemaVersion = SchemaVersion // a record read in an older schema is written in this one
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return durable.WriteFile(path, append(data, '\n'), 0o644)
}

// tempPrefix begins the names of the folders of agents being created or removed; they
// are not agent ids, so List never reads them.
const tempPrefix = durable.TempPrefix + "agent-"

// Load reads a record.
func (s Store) Load(id string) (*Record, error) {
	if !validID(id) {
		return nil, fmt.Errorf("agent %q: not an agent id", id)
	}
	data, err := os.ReadFile(s.recordPath(id))
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, &NotFoundError{Query: id}
		}
		return nil, fmt.Errorf("agent %s: %w", id, err)
	}
	var r Record
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("%s: %w", s.recordPath(id), err)
	}
	return &r, nil
}

// Update changes a record under its lock, re-reading it first.
func (s Store) Update(id string, fn func(*Record) error) (*Record, error) {
	var out *Record
	err := durable.WithLock(context.Background(), s.recordPath(id), func() error {
		r, err := s.Load(id)
		if err != nil {
			return err
		}
		if err := fn(r); err != nil {
			return err
		}
		out = r
		return s.write(r)
	})
	return out, err
}

// List returns every record, oldest first. A record that cannot be read is skipped and
// reported in problems.
func (s Store) List() (records []*Record, problems []error) {
	entries, err := os.ReadDir(s.Dir)
	if err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			problems = append(problems, err)
		}
		return nil, problems
	}
	for _, e := range entries {
		if !e.IsDir() || !validID(e.Name()) {
			continue
		}
		r, err := s.Load(e.Name())
		if err != nil {
			problems = append(problems, err)
			continue
		}
		records = append(records, r)
	}
	sort.Slice(records, func(i, j int) bool { return records[i].CreatedAt.Before(records[j].CreatedAt) })
	return records, problems
}

// NotFoundError is an agent query that names no agent.
type NotFoundError struct{ Query string }

func (e *NotFoundError) Error() string {
	return fmt.Sprintf("no agent %q: `ctx agents list` shows them", e.Query)
}

// AmbiguousError is an agent query that names several agents.
type AmbiguousError struct {
	Query      string
	Candidates []string
}

func (e *AmbiguousError) Error() string {
	return fmt.Sprintf("agent %q is ambiguous: %s", e.Query, strings.Join(e.Candidates, ", "))
}

// Resolve finds the agent a query names: its id, a unique prefix of its id, or its
// name.
func (s Store) Resolve(query string) (*Record, error) {
	q := strings.TrimSpace(query)
	if q == "" {
		return nil, errors.New("no agent named: give an id, a unique id prefix or a name")
	}
	records, _ := s.List()
	var byName, byPrefix []*Record
	for _, r := range records {
		if r.ID == q {
			return r, nil
		}
		if r.Name == q {
			byName = append(byName, r)
		}
		if strings.HasPrefix(r.ID, q) {
			byPrefix = append(byPrefix, r)
		}
	}
	for _, set := range [][]*Record{byName, byPrefix} {
		switch len(set) {
		case 0:
			continue
		case 1:
			return set[0], nil
		default:
			var names []string
			for _, r := range set {
				names = append(names, r.ID+" ("+r.Name+")")
			}
			return nil, &AmbiguousError{Query: q, Candidates: names}
		}
	}
	return nil, &NotFoundError{Query: q}
}

// Remove deletes an agent's folder. The folder is first renamed away in one step, so
// that a killed Remove leaves the agent whole or gone, never a folder without its
// record that no command could name.
func (s Store) Remove(id string) error {
	if !validID(id) {
		return fmt.Errorf("agent %q: not an agent id", id)
	}
	durable.RemoveStaleDirs(s.Dir, tempPrefix, time.Now())
	tmp := durable.TempDirIn(s.Dir, tempPrefix+id+"-")
	if err := os.Rename(s.AgentDir(id), tmp); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		return fmt.Errorf("agent %s: %w", id, err)
	}
	return os.RemoveAll(tmp)
}

// WriteStatus replaces an agent's status.json: hooks call it on every event of an agent
// session.
func (s Store) WriteStatus(id string, st Status) error {
	if !validID(id) {
		return fmt.Errorf("agent %q: not an agent id", id)
	}
	if _, err := os.Stat(s.AgentDir(id)); err != nil {
		return fmt.Errorf("agent %s: %w", id, err)
	}
	data, err := json.Marshal(st)
	if err != nil {
		return err
	}
	return durable.ReplaceFile(s.statusPath(id), append(data, '\n'), 0o644)
}

// ReadStatus reads an agent's activity; a zero Status when hooks reported none yet.
func (s Store) ReadStatus(id string) Status {
	var st Status
	if data, err := os.ReadFile(s.statusPath(id)); err == nil {
		_ = json.Unmarshal(data, &st)
	}
	return st
}

// Feed appends one event to the workspace's agent feed (feed.jsonl): every state change
// and action, for `ctx agents show` and the dashboard.
func (s Store) Feed(id, event string, data map[string]any) {
	line := map[string]any{"at": time.Now().UTC().Format(time.RFC3339Nano), "agent": id, "event": event}
	for k, v := range data {
		line[k] = v
	}
	b, err := json.Marshal(line)
	if err != nil {
		return
	}
	if os.MkdirAll(s.Dir, 0o755) == nil {
		_ = durable.AppendLine(filepath.Join(s.Dir, "feed.jsonl"), b)
	}
}
