package agents

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/ctxtools/ctx/internal/durable"
	"github.com/ctxtools/ctx/internal/shquote"
	"github.com/ctxtools/ctx/internal/state"
	"github.com/ctxtools/ctx/loader"
	"github.com/ctxtools/ctx/usage"
)

// Agents runs the operations on a workspace's agents. Each command makes one; nothing
// of it outlives the command.
type Agents struct {
	Store   Store
	State   *state.Store // the workspace's session state, for the sessions agents run
	Tmux    Tmux
	Getenv  func(string) string
	Environ []string // the environment agents are started with (identity variables removed)
	Now     func() time.Time
	// StartWait bounds how long start and resume wait for the agent's SessionStart.
	StartWait time.Duration

	// contexts caches ContextPercent by transcript size and time: a dashboard asks
	// every second, and a transcript changes only when the agent works.
	contextsMu sync.Mutex
	contexts   map[string]contextEntry
	// ledger reads what the agents' transcripts spent, each from where it last ended.
	ledger usage.Ledger
}

type contextEntry struct {
	size    int64
	modTime time.Time
	pct     float64
	ok      bool
}

// New opens the agents of a workspace with the process's environment.
func New(ws *loader.Workspace, getenv func(string) string, environ []string) (*Agents, error) {
	t := Tmux{Socket: DefaultSocket}
	if s := getenv("CTX_TMUX_SOCKET"); s != "" {
		t.Socket = s
	}
	store := NewStore(ws)
	if err := t.WriteConf(store.Dir); err != nil {
		return nil, fmt.Errorf("agents: %w", err)
	}
	return &Agents{Store: store, State: state.Open(ws, getenv), Tmux: t, Getenv: getenv, Environ: environ, Now: time.Now, StartWait: 20 * time.Second}, nil
}

// NotNowError is an operation refused for now: the agent is busy, the conversation is
// open elsewhere, a git conflict. Exit code 3; the message says what overrides it.
type NotNowError struct{ Msg string }

func (e *NotNowError) Error() string { return e.Msg }

// identityVars are a parent Claude Code's variables: an agent started from inside a
// Claude Code session must not inherit them (CLAUDE-CODE.md §3, §4). Provider settings
// (ANTHROPIC_*, CLAUDE_CODE_USE_BEDROCK and the like) are kept.
var identityVars = []string{
	"CLAUDECODE", "CLAUDE_CODE_SESSION_ID", "CLAUDE_PID", "CLAUDE_PROJECT_DIR", "CLAUDE_ENV_FILE",
	"CLAUDE_CODE_CHILD_SESSION", "CLAUDE_CODE_ENTRYPOINT", "CLAUDE_CODE_SESSION_ATTENDED",
	"CLAUDE_CODE_MESSAGING_SOCKET", "CLAUDE_CODE_MESSAGING_TOKEN", "CLAUDE_CODE_CHILD_NOTES_DIR",
	"CLAUDE_CODE_EXECPATH", "CLAUDE_EFFORT", "CLAUDE_JOB_DIR", "TMUX", "TMUX_PANE", EnvAgentID,
}

// ClaudeBinary is the claude ctx starts: $CTX_CLAUDE, else claude on the PATH.
func (a *Agents) ClaudeBinary() (string, error) {
	name := a.Getenv("CTX_CLAUDE")
	if name == "" {
		name = "claude"
	}
	p, err := exec.LookPath(name)
	if err != nil {
		return "", fmt.Errorf("claude is not installed (%s not found): npm install -g @anthropic-ai/claude-code", name)
	}
	return p, nil
}

// launch starts claude for rec in a new tmux session with args after the binary and
// prompt as its first prompt.
func (a *Agents) launch(rec *Record, args []string, prompt string) error {
	argv, err := a.command(rec, args, prompt)
	if err != nil {
		return err
	}
	return a.Tmux.NewSession(rec.Tmux.Session, rec.Cwd, nil, argv)
}

// command writes rec's launch script and returns the command line tmux runs: the script
// sets the agent's environment and starts claude with args and the prompt, read from a
// file. A long prompt (a handoff note) or a large environment in tmux's own command line
// would meet its length limit ("command too long").
func (a *Agents) command(rec *Record, args []string, prompt string) ([]string, error) {
	env := map[string]string{}
	drop := map[string]bool{}
	for _, v := range identityVars {
		drop[v] = true
	}
	for _, kv := range a.Environ {
		k, v, ok := strings.Cut(kv, "=")
		if ok && !drop[k] && envName().MatchString(k) {
			env[k] = v
		}
	}
	env[EnvAgentID] = rec.ID
	env["CTX_WORKSPACE"] = a.Store.WS.Root
	// ctx's PermissionRequest hook answers for an agent started with --auto-approve
	// (docs/guard.md); the PreToolUse guard refuses what it refuses either way.
	if rec.Claude.AutoApprove {
		env["CTX_AUTO_APPROVE"] = "1"
	} else {
		delete(env, "CTX_AUTO_APPROVE")
	}
	dir := a.Store.AgentDir(rec.ID)
	promptFile := filepath.Join(dir, "prompt.txt")
	if err := durable.WriteFile(promptFile, []byte(prompt), 0o600); err != nil {
		return nil, fmt.Errorf("launch: %w", err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# ctx agents: how agent %s starts claude (written at each launch)\n", rec.ID)
	// tmux sets its own variables in the pane, and a parent Claude Code's may be in the
	// server's environment: none of them is the agent's (CLAUDE-CODE.md §3, §4).
	var unset []string
	for _, v := range identityVars {
		if v != EnvAgentID {
			unset = append(unset, v)
		}
	}
	fmt.Fprintf(&b, "unset %s\n", strings.Join(unset, " "))
	keys := make([]string, 0, len(env))
	for k := range env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, "export %s=%s\n", k, shquote.Quote(env[k]))
	}
	fmt.Fprintf(&b, "exec %s -- \"$(cat %s)\"\n", shquote.Join(append([]string{rec.Claude.Binary}, args...)), shquote.Quote(promptFile))
	script := filepath.Join(dir, "launch.sh")
	if err := durable.WriteFile(script, []byte(b.String()), 0o700); err != nil {
		return nil, fmt.Errorf("launch: %w", err)
	}
	return []string{"/bin/sh", script}, nil
}

// envName is a variable name a shell can export.
var envName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`) })

// ctxOnPath makes sure the agent's hooks can run ctx: they run `command -v ctx || exit
// 0; exec ctx system …` with the agent's PATH, so without ctx there they would do
// nothing, and a start would wait for a SessionStart that never comes. Adding this
// ctx's folder to the agent's PATH is not enough: Claude Code runs hooks with the PATH
// of its own shell environment (tried: the hooks still found no ctx). So a start
// without ctx on the PATH fails at once and says why.
func ctxOnPath(path string) error {
	for _, dir := range filepath.SplitList(path) {
		if fi, err := os.Stat(filepath.Join(dir, "ctx")); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return nil
		}
	}
	return fmt.Errorf("%w (PATH=%s): its hooks could not run ctx and the agent would never be seen to start; put ctx on the PATH (`make install`, or add its folder to PATH) and start again", ErrNoCtxOnPath, path)
}

// ErrNoCtxOnPath says the agent's hooks would find no ctx (bad input: exit 2).
var ErrNoCtxOnPath = errors.New("ctx is not on the PATH the agent starts with")

// hooksFindCtx checks the PATH agents start with (their environment's).
func (a *Agents) hooksFindCtx() error {
	for _, kv := range a.Environ {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			return ctxOnPath(v)
		}
	}
	return ctxOnPath("")
}

// launchFlags are the flags of the original start that a resume must pass again.
func launchFlags(c Claude) []string {
	var f []string
	if c.PermissionMode != "" {
		f = append(f, "--permission-mode", c.PermissionMode)
	}
	if c.Model != "" {
		f = append(f, "--model", c.Model)
	}
	return f
}

// StartOptions say how to start an agent.
type StartOptions struct {
	Project        *loader.Project
	Name           string
	Cwd            string
	Prompt         string
	PermissionMode string
	Model          string
	AutoApprove    bool
	NoWait         bool
	// Handoff is the agent's handoff policy (fresh or compact); "" follows the
	// workspace's agents.handoff.
	Handoff string
	// Moves is where a moved agent came from (ctx agents move).
	Moves []Move
	// Worktree starts the agent on this branch in a worktree of its own (worktree.go),
	// made from From (default HEAD) when the branch does not exist.
	Worktree, From string
}

var nameRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,39}$`) })

// Start makes a record and starts claude in tmux with the project's resume prompt,
// then waits for its SessionStart.
func (a *Agents) Start(o StartOptions) (*Record, error) {
	bin, err := a.ClaudeBinary()
	if err != nil {
		return nil, err
	}
	if err := a.hooksFindCtx(); err != nil {
		return nil, err
	}
	if _, err := exec.LookPath("tmux"); err != nil {
		return nil, ErrNoTmux
	}
	ws := a.Store.WS
	cwd := o.Cwd
	if cwd == "" {
		cwd = ws.Root
	}
	if abs, err := filepath.Abs(cwd); err == nil {
		cwd = abs
	}
	if fi, err := os.Stat(cwd); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("--cwd %s: not a folder", cwd)
	}
	id := NewID()
	name := o.Name
	if name == "" {
		name = o.Project.ID + "-" + id[2:]
	}
	if !nameRe().MatchString(name) {
		return nil, fmt.Errorf("--name %q: use letters, digits, - and _ (up to 40)", name)
	}
	if existing, _ := a.Store.Resolve(name); existing != nil && existing.Name == name {
		return nil, fmt.Errorf("--name %q: agent %s already has that name", name, existing.ID)
	}
	var wt *Worktree
	if o.Worktree != "" {
		var err error
		if wt, err = addWorktree(cwd, name, o.Worktree, o.From); err != nil {
			return nil, err
		}
		// The same place in the worktree as in the checkout it came from.
		if rel, err := filepath.Rel(wt.Repo, cwd); err == nil && filepath.IsLocal(rel) {
			cwd = filepath.Join(wt.Path, rel)
		} else {
			cwd = wt.Path
		}
	}
	prompt := o.Prompt
	if prompt == "" {
		prompt = ws.Load(o.Project, loader.LoadOptions{}).Instructions
	}
	now := a.Now().UTC()
	rec := &Record{
		ID: id, Name: name, Project: o.Project.ID, ProjectPath: o.Project.Path, Cwd: cwd, Worktree: wt,
		Claude: Claude{Binary: bin, SessionID: NewSessionID(), PreviousSessionIDs: []string{},
			PermissionMode: o.PermissionMode, Model: o.Model, AutoApprove: o.AutoApprove},
		Host: LocalHost, Tmux: TmuxInfo{Kind: "tmux", Socket: a.Tmux.Socket, Session: "ctx-" + id},
		State: Starting, StateSince: now, CreatedAt: now, Handoff: o.Handoff, Moves: o.Moves,
	}
	rec.Chain = []Link{{SessionID: rec.Claude.SessionID, Reason: ReasonStart, StartedAt: now}}
	if err := a.Store.Create(rec); err != nil {
		return nil, err
	}
	// The session is the project's from its first hook on.
	_ = a.State.Session(rec.Claude.SessionID).Bind(state.Binding{ProjectID: o.Project.ID, Path: o.Project.Path, BoundAt: now})
	a.Store.Feed(id, "agent.created", map[string]any{"name": name, "project": o.Project.ID})
	args := append([]string{"--session-id", rec.Claude.SessionID}, launchFlags(rec.Claude)...)
	if err := a.launch(rec, args, prompt); err != nil {
		_, _ = a.Store.Update(id, func(r *Record) error {
			r.State, r.StateSince, r.LastError = Failed, a.Now().UTC(), err.Error()
			return nil
		})
		return nil, fmt.Errorf("start %s: %w", id, err)
	}
	if o.NoWait {
		return rec, nil
	}
	return a.confirm(id, now)
}

// confirm waits for the agent's SessionStart after since and records the outcome:
// active, failed (the pane died, with its last lines), or still starting at a dialog.
func (a *Agents) confirm(id string, since time.Time) (*Record, error) {
	deadline := time.Now().Add(a.StartWait)
	for {
		rec, err := a.Store.Load(id)
		if err != nil {
			return nil, err
		}
		if rec.State == Active {
			// Another ctx (a running dashboard, `ctx agents list`) saw the SessionStart
			// first and confirmed the agent: so much the better.
			return rec, nil
		}
		st := a.Store.ReadStatus(id)
		if startSeen(st, since, rec.Claude.SessionID) {
			return a.started(id, func(r *Record) {
				if st.SessionID != "" && st.SessionID != r.Claude.SessionID {
					r.Claude.PreviousSessionIDs = append(r.Claude.PreviousSessionIDs, r.Claude.SessionID)
					r.Claude.SessionID = st.SessionID
					r.Chain = append(r.Chain, Link{SessionID: st.SessionID, Reason: "renamed by claude", StartedAt: a.Now().UTC()})
				}
			})
		}
		panes, err := a.Tmux.Panes()
		if err != nil {
			return nil, err
		}
		p, ok := panes[rec.Tmux.Session]
		if !ok || p.Dead {
			lines := a.lastLines(rec)
			_ = a.Tmux.Kill(rec.Tmux.Session)
			out, _ := a.transition(id, EvLaunchDied, func(r *Record) {
				r.Exit = &ExitInfo{Status: p.DeadStatus, At: a.Now().UTC(), LastLines: lines}
				r.LastError = "claude ended before its session started: " + strings.Join(lines, " / ")
			})
			return out, fmt.Errorf("agent %s: claude ended before its session started: %s", id, strings.Join(lines, " / "))
		}
		if time.Now().After(deadline) {
			return rec, &NotNowError{Msg: fmt.Sprintf("agent %s: claude runs but its session has not started after %s (a dialog waiting? look with `ctx agents open %s`)", id, a.StartWait, id)}
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// SetMoving marks a paused agent as moving to host ("" clears the mark): it does not
// resume here until the move is done or cancelled.
func (a *Agents) SetMoving(rec *Record, host string) (*Record, error) {
	return a.Store.Update(rec.ID, func(r *Record) error {
		if host != "" && (r.State != Paused || r.Op != nil) {
			return &StateError{From: r.State, Event: "move"}
		}
		r.MovingTo = host
		return nil
	})
}

// ready says whether an operation that ev starts may begin on rec now: none in
// flight, and a state that allows ev. It is asked before a wait (a safe point), and
// begin asks again under the lock.
func ready(rec *Record, ev Event) error {
	if rec.Op != nil {
		return &NotNowError{Msg: fmt.Sprintf("agent %s: a %s is in progress (ctx process %d)", rec.ID, rec.Op.Kind, rec.Op.PID)}
	}
	_, err := Next(rec.State, ev)
	return err
}

// begin starts an operation on the agent under its lock: the record gets op (this
// process, from the state it was in) and the state ev leads to, then also's changes.
// It is refused as ready refuses.
func (a *Agents) begin(id string, ev Event, op Op, also func(*Record)) (*Record, error) {
	return a.Store.Update(id, func(r *Record) error {
		if err := ready(r, ev); err != nil {
			return err
		}
		to, _ := Next(r.State, ev)
		op.PID, op.From = os.Getpid(), r.State
		if op.Started.IsZero() {
			op.Started = a.Now().UTC()
		}
		r.Op = &op
		r.State, r.StateSince = to, op.Started
		r.Attention = "" // a person or a handoff acts on it: what it flagged is being dealt with
		if also != nil {
			also(r)
		}
		return nil
	})
}

// started records that the agent's session started. Another ctx (the command that
// launched it, a dashboard, a list) may have recorded it between a look and the lock:
// so much the better.
func (a *Agents) started(id string, also func(*Record)) (*Record, error) {
	out, err := a.transition(id, EvStarted, also)
	var se *StateError
	if errors.As(err, &se) {
		if now, lerr := a.Store.Load(id); lerr == nil && now.State == Active {
			return now, nil
		}
	}
	return out, err
}

// transition applies an event to an agent's state under its lock.
func (a *Agents) transition(id string, e Event, also func(*Record)) (*Record, error) {
	return a.Store.Update(id, func(r *Record) error {
		to, err := Next(r.State, e)
		if err != nil {
			return err
		}
		r.State, r.StateSince = to, a.Now().UTC()
		if also != nil {
			also(r)
		}
		a.Store.Feed(r.ID, "agent.state", map[string]any{"state": to, "event": e})
		return nil
	})
}

// lastLines is the end of the pane's screen, for an agent that died.
func (a *Agents) lastLines(rec *Record) []string {
	out, err := a.Tmux.Capture(rec.Tmux.Session, true)
	if err != nil {
		return nil
	}
	var lines []string
	for _, l := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		if strings.TrimSpace(l) != "" {
			lines = append(lines, strings.TrimRight(l, " "))
		}
	}
	return lines[max(0, len(lines)-20):]
}

// View is an agent as list and show present it: the record, its activity, and the
// liveness tmux reports now.
type View struct {
	*Record
	Activity Status `json:"activity"`
	Attached bool   `json:"attached"`
	RSSKB    int64  `json:"rss_kb"`
	Tokens   Spent  `json:"tokens"`
}

// UnmarshalJSON reads a View as MarshalJSON wrote it: the record's fields and the
// view's own, side by side (the record's own UnmarshalJSON would take the whole object).
func (v *View) UnmarshalJSON(data []byte) error {
	var own struct {
		Activity Status `json:"activity"`
		Attached bool   `json:"attached"`
		RSSKB    int64  `json:"rss_kb"`
		Tokens   Spent  `json:"tokens"`
	}
	if err := unmarshalBeside(data, &v.Record, &own); err != nil {
		return err
	}
	v.Activity, v.Attached, v.RSSKB, v.Tokens = own.Activity, own.Attached, own.RSSKB, own.Tokens
	return nil
}

// unmarshalBeside reads a type that embeds *Record: the record from the whole object,
// and the type's own fields into own.
func unmarshalBeside(data []byte, rec **Record, own any) error {
	*rec = &Record{}
	if err := json.Unmarshal(data, *rec); err != nil {
		return err
	}
	return json.Unmarshal(data, own)
}

// UnmarshalJSON reads a Detail as MarshalJSON wrote it (another host's show): the
// record's fields and the detail's own.
func (d *Detail) UnmarshalJSON(data []byte) error {
	var own struct {
		Activity Status      `json:"activity"`
		Resume   *ResumePlan `json:"resume_plan"`
		Attach   string      `json:"attach"`
		Restore  string      `json:"restore_command"`
	}
	if err := unmarshalBeside(data, &d.Record, &own); err != nil {
		return err
	}
	d.Activity, d.Resume, d.Attach, d.Restore = own.Activity, own.Resume, own.Attach, own.Restore
	return nil
}

// List reconciles every agent with tmux (one call) and returns them.
func (a *Agents) List() ([]View, []error) {
	records, problems := a.Store.List()
	panes, err := a.Tmux.Panes()
	if err != nil {
		problems = append(problems, err)
		panes = nil
	}
	var out []View
	var marked map[string][]int // the agents' processes, found once for all of them
	for _, r := range records {
		if panes != nil {
			if rr, err := a.reconcile(r, panes); err == nil {
				r = rr
			} else {
				problems = append(problems, err)
			}
		}
		v := View{Record: r, Activity: a.Store.ReadStatus(r.ID)}
		if p, ok := panes[r.Tmux.Session]; ok && r.State.Running() {
			v.Attached = p.Attached
			if marked == nil {
				marked = MarkedAll()
			}
			v.RSSKB = RSSKB(marked[r.ID])
		}
		out = append(out, v)
	}
	return out, problems
}

// AddSpent fills in what each of this machine's agents spent (Spent): for the listings
// that show it (agents list, the dashboard), not for every command that lists.
func (a *Agents) AddSpent(views []View) {
	now := time.Now()
	for i := range views {
		if views[i].Host == "" || views[i].Host == LocalHost {
			views[i].Tokens = a.Spent(views[i].Record, now)
		}
	}
}

// Get resolves one agent and reconciles it.
func (a *Agents) Get(query string) (*Record, error) {
	r, err := a.Store.Resolve(query)
	if err != nil {
		return nil, err
	}
	panes, err := a.Tmux.Panes()
	if err != nil {
		return r, nil // no tmux: the record as it stands
	}
	return a.reconcile(r, panes)
}

// reconcile brings a record in line with what tmux shows and finishes or rolls back an
// operation whose ctx process died: this is the crash safety of every step.
func (a *Agents) reconcile(r *Record, panes map[string]Pane) (*Record, error) {
	if r.Op != nil && !pidAlive(r.Op.PID) {
		switch r.Op.Kind {
		case "pause":
			return a.finishPause(r, PauseOptions{Reason: "recovered"})
		case "resume":
			return a.rollbackResume(r, panes)
		case "handoff":
			return a.recoverHandoff(r, panes)
		}
	}
	if r.Op != nil {
		return r, nil // another command is working on it
	}
	p, ok := panes[r.Tmux.Session]
	st := a.Store.ReadStatus(r.ID)
	switch {
	case (r.State == Starting || r.State == Resuming || r.State == HandingOff) && ok && !p.Dead && startSeen(st, r.StateSince, r.Claude.SessionID):
		return a.started(r.ID, nil)
	case r.State.Running() && !ok:
		return a.transition(r.ID, EvHostMissing, nil)
	case r.State.Running() && p.Dead:
		lines := a.lastLines(r)
		return a.transition(r.ID, EvPaneDied, func(rr *Record) {
			rr.Exit = &ExitInfo{Status: p.DeadStatus, At: a.Now().UTC(), LastLines: lines}
		})
	}
	return r, nil
}

// startSeen reports whether the agent's hooks reported from its session after since
// (the launch): its SessionStart (under whatever id Claude Code gave it), or any later
// event of the session launched. A start with --no-wait that no ctx command watched may
// be past its SessionStart before anyone looks, its newest event a Stop. The SessionEnd
// of the session a pause ended, a moment before a resume, proves nothing.
func startSeen(st Status, since time.Time, sessionID string) bool {
	switch {
	case st.At.Before(since.Add(-time.Second)):
		return false
	case st.Event == "SessionStart":
		return true
	case st.Event == "" || st.Event == "SessionEnd":
		return false
	}
	return st.SessionID == sessionID
}

// crashAt kills this process when CTX_TEST_CRASH_AT names the step: tests prove that
// every step can be interrupted and finished by the next command.
func (a *Agents) crashAt(op, step string) {
	if a.Getenv("CTX_TEST_CRASH_AT") == op+":"+step {
		kill(os.Getpid())
		time.Sleep(time.Second)
	}
}

// setStep records the step an operation is about to take.
func (a *Agents) setStep(id, kind, step string) error {
	_, err := a.Store.Update(id, func(r *Record) error {
		if r.Op == nil {
			return errors.New("operation lost")
		}
		r.Op.Step = step
		return nil
	})
	a.crashAt(kind, step)
	return err
}

// Send types a prompt into an idle agent; any other activity is refused, so no
// keystroke can answer a dialog or a permission prompt by accident.
func (a *Agents) Send(rec *Record, text string) error {
	if rec.State != Active {
		return &StateError{From: rec.State, Event: EvSend}
	}
	st := a.Store.ReadStatus(rec.ID)
	if st.Activity != "idle" {
		act := st.Activity
		if act == "" {
			act = "not yet idle"
		}
		return &NotNowError{Msg: fmt.Sprintf("agent %s is %s: send types only into an idle agent", rec.ID, act)}
	}
	if strings.TrimSpace(text) == "" || strings.ContainsAny(text, "\r\n") {
		return fmt.Errorf("%w: send: give one line of text", ErrBadText)
	}
	if err := a.Tmux.Type(rec.Tmux.Session, text); err != nil {
		return err
	}
	a.Store.Feed(rec.ID, "agent.sent", map[string]any{"chars": len(text)})
	return nil
}

// ErrBadText marks text or keys that cannot be typed into a session (bad input).
var ErrBadText = errors.New("bad input")

// TerminalKeys are the named keys a terminal in the dashboard may send, by the
// browser's name for them (KeyboardEvent.key) and tmux's.
var TerminalKeys = map[string]string{
	"Enter": "Enter", "Escape": "Escape", "Tab": "Tab", "BTab": "BTab", "Backspace": "BSpace", "Delete": "DC",
	"ArrowUp": "Up", "ArrowDown": "Down", "ArrowLeft": "Left", "ArrowRight": "Right",
	"Home": "Home", "End": "End", "PageUp": "PPage", "PageDown": "NPage",
}

// Type sends what a person types in the dashboard's terminal to an active agent, as
// it is typed: text, the keys of TerminalKeys and Ctrl with a letter ("C-c"). Unlike
// Send it types whatever the agent shows, a dialog or a permission prompt included:
// the person sees the screen. Each call is a line of the agent's feed.
func (a *Agents) Type(rec *Record, keys []Keystroke) error {
	if rec.State != Active {
		return &StateError{From: rec.State, Event: EvSend}
	}
	if len(keys) == 0 {
		return fmt.Errorf("%w: keys: nothing to type", ErrBadText)
	}
	out := make([]Keystroke, 0, len(keys))
	chars, named := 0, 0
	for _, k := range keys {
		switch {
		case !k.Named && k.Value != "" && !strings.ContainsFunc(k.Value, unicode.IsControl):
			chars += len(k.Value)
			out = append(out, k)
		case k.Named && TerminalKeys[k.Value] != "":
			named++
			out = append(out, Keystroke{Value: TerminalKeys[k.Value], Named: true})
		case k.Named && len(k.Value) == 3 && strings.HasPrefix(k.Value, "C-") && k.Value[2] >= 'a' && k.Value[2] <= 'z':
			named++
			out = append(out, k)
		default:
			return fmt.Errorf("%w: keys: %q is not a key a terminal sends (text without control characters, Enter, Escape, Tab, the arrows, or C-a … C-z)", ErrBadText, k.Value)
		}
	}
	if err := a.Tmux.Keys(rec.Tmux.Session, out...); err != nil {
		return err
	}
	a.Store.Feed(rec.ID, "agent.typed", map[string]any{"chars": chars, "keys": named})
	return nil
}

// PermissionAnswer is a person's answer to a permission prompt, from the dashboard.
type PermissionAnswer struct {
	Allow bool
	// At is the prompt's time as the person saw it (Status.At): an answer to a prompt
	// that has since closed, or been replaced by another, is refused.
	At time.Time
}

// AnswerPermission answers the permission prompt an agent waits on, as a person at its
// terminal would: Enter on "1. Yes" allows the tool once, Escape refuses it (and ends
// the turn, for the person to say what instead). It is refused unless the agent's
// status is still that prompt and its screen shows Claude Code's dialog with "Yes"
// chosen, so no keystroke lands anywhere else.
func (a *Agents) AnswerPermission(rec *Record, ans PermissionAnswer) (Status, error) {
	if rec.State != Active {
		return Status{}, &StateError{From: rec.State, Event: EvSend}
	}
	st := a.Store.ReadStatus(rec.ID)
	if st.Activity != "needs_input" || st.Detail != "permission" {
		return st, &NotNowError{Msg: fmt.Sprintf("agent %s is not waiting on a permission prompt (it is %s)", rec.ID, cmp.Or(st.Activity, "starting"))}
	}
	if !st.At.Equal(ans.At) {
		return st, &NotNowError{Msg: fmt.Sprintf("agent %s: that prompt was answered; it now asks about %s", rec.ID, cmp.Or(st.Summary, st.Tool))}
	}
	// The hook fires before the dialog is drawn (about 0.1 s on 2.1.330): a quick
	// answer waits for it, briefly.
	var shown bool
	for deadline := time.Now().Add(dialogWait); ; time.Sleep(100 * time.Millisecond) {
		text, err := a.Tmux.Capture(rec.Tmux.Session, false)
		if err != nil {
			return st, err
		}
		if shown = PermissionDialog(text); shown || time.Now().After(deadline) {
			break
		}
	}
	if !shown {
		return st, &NotNowError{Msg: fmt.Sprintf("agent %s: its screen shows no permission dialog with Yes chosen; answer it in the terminal (ctx agents open %s)", rec.ID, rec.Name)}
	}
	key := "Escape"
	if ans.Allow {
		key = "Enter"
	}
	if err := a.Tmux.Key(rec.Tmux.Session, key); err != nil {
		return st, err
	}
	a.Store.Feed(rec.ID, "agent.permission", map[string]any{"tool": st.Tool, "summary": st.Summary, "allow": ans.Allow})
	if !ans.Allow {
		// Escape ends the turn and no hook says so (Stop does not fire on an
		// interrupt): the agent waits for the person, which its status says here.
		_ = RecordHook(a.Store.WS, rec.ID, Status{Activity: "idle", Detail: "interrupted", SessionID: st.SessionID,
			Event: "PermissionDenied", Source: "dashboard", At: time.Now()})
	}
	return st, nil
}

// dialogWait is how long an answer waits for the permission dialog to be drawn.
const dialogWait = 3 * time.Second

// PermissionDialog reports whether a screen shows Claude Code's permission dialog
// with its first choice, "Yes", chosen (measured on 2.1.330: "Do you want to
// proceed?", then "❯ 1. Yes").
func PermissionDialog(screen string) bool {
	i := strings.LastIndex(screen, "Do you want to")
	if i < 0 {
		return false
	}
	for line := range strings.Lines(screen[i:]) {
		if f := strings.Fields(line); len(f) >= 3 && f[0] == "❯" && f[1] == "1." && f[2] == "Yes" {
			return true
		}
	}
	return false
}

// Logs is the agent's pane (live) or the scrollback its last pause saved.
func (a *Agents) Logs(rec *Record) (string, error) {
	if rec.State.Running() || rec.State == Exited || rec.State == Failed {
		if out, err := a.Tmux.Capture(rec.Tmux.Session, true); err == nil {
			return out, nil
		}
	}
	if rec.Pause != nil && rec.Pause.Scrollback != "" {
		b, err := os.ReadFile(filepath.Join(a.Store.AgentDir(rec.ID), rec.Pause.Scrollback))
		return string(b), err
	}
	return "", fmt.Errorf("agent %s: no screen and no saved scrollback", rec.ID)
}

// Remove stops a running agent (its processes ended) and deletes its record. The
// transcript and the checkpoint refs stay.
func (a *Agents) Remove(rec *Record, force bool) error {
	return a.RemoveWith(rec, force, false)
}

// RemoveWith is Remove that, with removeWorktree, also deletes the agent's worktree
// when ctx made it and it holds no uncommitted work (a worktree with work stays, and
// the error says so after the agent is removed).
func (a *Agents) RemoveWith(rec *Record, force, removeWorktree bool) error {
	if rec.State.Running() && !force {
		st := a.Store.ReadStatus(rec.ID)
		if st.Activity == "working" {
			return &NotNowError{Msg: fmt.Sprintf("agent %s is working: pause it first, or remove it anyway with --force", rec.ID)}
		}
	}
	_ = a.Tmux.Kill(rec.Tmux.Session)
	if _, left := EndMarked(rec.ID, 2*time.Second); len(left) > 0 {
		return fmt.Errorf("agent %s: processes %v did not end", rec.ID, left)
	}
	a.Store.Feed(rec.ID, "agent.removed", nil)
	if err := a.Store.Remove(rec.ID); err != nil {
		return err
	}
	if removeWorktree && rec.Worktree != nil {
		return rec.Worktree.remove()
	}
	return nil
}

// MaxStatusInput bounds Status.Input: a command longer than this is shown cut.
const MaxStatusInput = 4000

// RecordHook records an agent session's hook event as its activity (status.json): the
// activity is the event's (events.Table). It is called by ctx's hooks when
// CTX_AGENT_ID is set; it never takes the agent's lock.
func RecordHook(ws *loader.Workspace, id string, st Status) error {
	if st.Activity == "" {
		return nil
	}
	st.At = st.At.UTC()
	if st.Summary != "" {
		r := []rune(strings.Join(strings.Fields(st.Summary), " "))
		st.Summary = string(r[:min(len(r), 200)])
	}
	if len(st.Input) > MaxStatusInput {
		st.Input = strings.ToValidUTF8(st.Input[:MaxStatusInput], "") + "…"
	}
	if err := NewStore(ws).WriteStatus(id, st); err != nil {
		return err
	}
	Wake(ws)
	return nil
}

// Kind is what sort of failure an agent operation's error is, for the CLI's exit codes
// and the API's status codes (one classification, two mappings).
type Kind int

// The kinds of failure.
const (
	KindFailure  Kind = iota // anything else: exit 1, HTTP 500
	KindNotFound             // no such agent: exit 2, HTTP 404
	KindBadInput             // ambiguous, wrong state, a worktree that cannot be made: exit 2, HTTP 409
	KindNotNow               // busy, conversation open elsewhere, a stash conflict: exit 3, HTTP 409
)

// KindOf classifies an error of this package.
func KindOf(err error) Kind {
	var nn *NotNowError
	var conflict *ConflictError
	var nf *NotFoundError
	var amb *AmbiguousError
	var se *StateError
	var mc *MergeConflictError
	switch {
	case errors.As(err, &nn), errors.As(err, &conflict), errors.As(err, &mc):
		return KindNotNow
	case errors.As(err, &nf):
		return KindNotFound
	case errors.As(err, &amb), errors.As(err, &se), errors.Is(err, ErrWorktree), errors.Is(err, ErrGitStrategy), errors.Is(err, ErrBadText), errors.Is(err, ErrNoWorktree), errors.Is(err, ErrNoCtxOnPath):
		return KindBadInput
	}
	return KindFailure
}

// Detail is an agent as `ctx agents show --json` and the dashboard's agent page give
// it: the record, its activity, the resume plan of a resumable one, how to attach a
// terminal and how to restore a paused one's checkpoint.
type Detail struct {
	*Record
	Activity Status      `json:"activity"`
	Resume   *ResumePlan `json:"resume_plan,omitempty"`
	Attach   string      `json:"attach"`
	Restore  string      `json:"restore_command,omitempty"`
}

// Detail gathers rec's Detail.
func (a *Agents) Detail(rec *Record) Detail {
	d := Detail{Record: rec, Activity: a.Store.ReadStatus(rec.ID), Attach: strings.Join(a.Tmux.Attach(rec.Tmux.Session, false), " ")}
	if rec.State.Resumable() {
		d.Resume, _ = a.Plan(rec, ResumeOptions{})
	}
	if rec.Pause != nil && rec.Pause.Git != nil {
		d.Restore = rec.Pause.Git.RestoreCommand()
	}
	return d
}

// Age is a duration as the agent list and the dashboard show it: "45s", "12m",
// "3h05m", "4d".
func Age(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", max(0, int(d.Seconds())))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}
