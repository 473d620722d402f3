package events

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ctxtools/ctx/internal/claude"
	"github.com/ctxtools/ctx/internal/state"
	"github.com/ctxtools/ctx/loader"
	"github.com/ctxtools/ctx/usage"
)

// What the hooks keep of what they record: enough to tell what happened, never whole
// files or messages.
const (
	promptKept   = 500
	messageKept  = 200
	commandKept  = 200
	summaryWidth = 120
)

// UsageConfig reads the usage: section of the workspace's config.
func UsageConfig(ws *loader.Workspace) (usage.Config, error) {
	var cfg usage.Config
	if err := ws.ConfigSection("usage", &cfg); err != nil {
		return cfg, err
	}
	if err := cfg.Validate(); err != nil {
		return cfg, fmt.Errorf("%s: usage: %w", ws.Rel(ws.StatePath("config.yaml")), err)
	}
	return cfg, nil
}

// ReadUsage reads the context usage from a transcript with the workspace's settings and
// Claude Code's configuration (claude.DetectClient), which set the window and the budget.
func ReadUsage(st *state.Store, transcript string, client usage.Client) (*usage.Usage, error) {
	cfg, err := UsageConfig(st.WS)
	if err != nil {
		return nil, err
	}
	return usage.Read(transcript, cfg, client)
}

// SnapshotUsage is what a snapshot records of usage: tokens against the budget up to
// compaction, the figure the thresholds are fractions of.
func SnapshotUsage(u *usage.Usage) *state.ContextUsage {
	if u == nil {
		return nil
	}
	return &state.ContextUsage{TokensUsed: u.TokensUsed, TokensTotal: u.Budget, Percentage: round1(u.PercentOfBudget)}
}

func round1(f float64) float64 { return float64(int(f*10+0.5)) / 10 }

// Prompt is what the UserPromptSubmit hook knows.
type Prompt struct {
	SessionID      string
	TranscriptPath string
	Prompt         string
	Paused         bool
	Client         usage.Client // Claude Code's settings that set the window and budget
	Now            time.Time
}

// OnPrompt runs the usage part of the UserPromptSubmit hook (CheckUsage), then, while a
// journal is open, records the prompt. It returns the lines for the agent.
func OnPrompt(st *state.Store, in Prompt) ([]string, error) {
	out, u, uerr := CheckUsage(st, UsageCheck{
		SessionID: in.SessionID, TranscriptPath: in.TranscriptPath, Client: in.Client, Paused: in.Paused, Now: in.Now,
	})
	j := st.Journal(in.SessionID)
	if err := j.Append(in.Now, state.LineUserMessage, percentOf(u), promptData(st.WS, in.Prompt)); err != nil {
		return nil, errors.Join(uerr, err)
	}
	return out, uerr
}

// toolLineWait bounds how long a PostToolUse hook waits for the client to write the
// line of the tool call it runs after: measured at tens of milliseconds, well inside
// the hook's budget.
const toolLineWait = 1500 * time.Millisecond

// UsageCheck is what CheckUsage needs to know.
type UsageCheck struct {
	SessionID      string
	TranscriptPath string
	// ToolUseID, after a tool call, names the call whose assistant line must be in the
	// transcript before its usage means anything (usage.WaitForLine).
	ToolUseID string
	Client    usage.Client
	Paused    bool
	Now       time.Time
}

// CheckUsage reads the context usage and, once per compaction cycle, nudges at the warn
// threshold or auto-saves at the auto-save threshold. It runs on every prompt and after
// every tool call: a compaction can come between two tool calls of one turn, with no
// prompt before it. It returns the lines for the agent and the usage read (nil when
// none could be: no transcript yet, or no line of it within the scan bound tells the
// usage).
//
// While the session is paused nothing is said: a warning waits (it is given at the
// first prompt after `ctx resume`, with the figures of then), and an auto-save still
// happens, its line kept in the cycle and given after the resume.
func CheckUsage(st *state.Store, in UsageCheck) ([]string, *usage.Usage, error) {
	if in.TranscriptPath == "" {
		return nil, nil, nil
	}
	if in.ToolUseID != "" {
		usage.WaitForLine(in.TranscriptPath, []byte(`"`+in.ToolUseID+`"`), toolLineWait)
	}
	// A compaction no hook reported starts a new cycle before usage is judged.
	scanned, boundErr := checkBoundaries(st, in)
	if errors.Is(boundErr, os.ErrNotExist) {
		return nil, nil, nil // a new session's transcript may not be written yet
	}
	u, err := ReadUsage(st, in.TranscriptPath, in.Client)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil, nil
	}
	if errors.Is(err, usage.ErrUnknown) {
		// No assistant line within the scan bound: nothing to judge, so no nudge and no
		// auto-save; `ctx usage` says why.
		return nil, nil, boundErr
	}
	if err != nil {
		return nil, nil, errors.Join(boundErr, err)
	}
	if !cycleChanges(st, in, u, scanned) {
		return nil, u, boundErr
	}
	action := ""
	var held []string
	pct := u.PercentOfBudget / 100
	_, err = st.Session(in.SessionID).UpdateCycle(func(c *state.Cycle) error {
		c.TranscriptPath, c.LastPercent, c.LastTokens, c.UpdatedAt = in.TranscriptPath, u.PercentOfBudget, u.TokensUsed, in.Now.UTC()
		c.ScannedTo = max(c.ScannedTo, scanned)
		if c.StartedAt.IsZero() {
			c.StartedAt = in.Now.UTC()
		}
		switch {
		case pct >= u.AutoSaveAt && !c.AutoSaved:
			action = "auto-save"
		case pct >= u.WarnAt && !c.Warned && !in.Paused:
			c.Warned, action = true, "warn"
		}
		if !in.Paused {
			held, c.Held = c.Held, nil
		}
		return nil
	})
	if err != nil {
		return nil, u, errors.Join(boundErr, err)
	}
	err = boundErr
	var out []string
	switch action {
	case "warn":
		out = append(out, fmt.Sprintf("ctx: context is at %.0f%% of the budget before compaction (%s of %s tokens). Save progress soon: `ctx save --summary \"...\" --next \"...\"`.",
			u.PercentOfBudget, thousands(u.TokensUsed), thousands(u.Budget)))
	case "auto-save":
		line, saveErr := autoSaveAtThreshold(st, in, u)
		out = append(out, line)
		// Only a save that happened counts: a failed one is tried again on the next
		// prompt, and the agent has been told. A line the pause silences waits.
		if _, err := st.Session(in.SessionID).UpdateCycle(func(c *state.Cycle) error {
			c.Warned = true
			c.AutoSaved = saveErr == nil
			if in.Paused {
				c.Held = []string{line}
			}
			return nil
		}); err != nil {
			return nil, u, err
		}
		err = errors.Join(err, saveErr)
	}
	if in.Paused {
		return nil, u, err
	}
	return append(held, out...), u, err
}

// cycleChanges reports, without a lock, whether this check changes the session's cycle:
// a threshold not yet acted on, a held line to give, another transcript, usage moved
// by a point or more, or the search for compaction lines far ahead of the record. Most checks change nothing, and skipping the locked write keeps
// the hooks fast; when something does change, Update decides again under the lock.
func cycleChanges(st *state.Store, in UsageCheck, u *usage.Usage, scanned int64) bool {
	c, err := st.Session(in.SessionID).Cycle()
	if err != nil || c.UpdatedAt.IsZero() {
		return true
	}
	pct := u.PercentOfBudget / 100
	return (pct >= u.AutoSaveAt && !c.AutoSaved) || (pct >= u.WarnAt && !c.Warned && !in.Paused) ||
		(len(c.Held) > 0 && !in.Paused) ||
		c.TranscriptPath != in.TranscriptPath || math.Abs(c.LastPercent-u.PercentOfBudget) >= 1 ||
		scanned-c.ScannedTo > scanKeep
}

// scanKeep is how far the search for compaction lines may get ahead of what the cycle
// records before it is recorded: each check searches from there again.
const scanKeep = 256 << 10

// autoSaveAtThreshold saves at the auto-save threshold and opens the journal. It always
// returns a line for the agent: what was saved where, or why the save failed and what
// to do. When the project's save point cannot be written, a workspace snapshot and the
// journal still keep the session's trail.
func autoSaveAtThreshold(st *state.Store, in UsageCheck, u *usage.Usage) (string, error) {
	pct := round1(u.PercentOfBudget)
	res, err := AutoSave(st, in.SessionID, state.TriggerAuto, SnapshotUsage(u), 0, in.Now)
	if err != nil {
		snapID, _ := st.Snapshots().Write(context.Background(), CurrentSnapshot(context.Background(), st.WS, nil, in.SessionID, state.TriggerAuto, SnapshotUsage(u), in.Now))
		_, _ = st.Journal(in.SessionID).Start(in.Now, &pct, map[string]any{
			"reason": "auto-save threshold; save failed", "tokens_used": u.TokensUsed, "snapshot_id": snapID,
		})
		return fmt.Sprintf("ctx: context is at %.0f%% of the budget before compaction and the automatic save failed: %v. Fix that, then run `ctx save --summary \"...\" --next \"...\"`; ctx tries again on the next prompt.", pct, err), err
	}
	_, err = st.Journal(in.SessionID).Start(in.Now, &pct, map[string]any{
		"reason": "auto-save threshold", "tokens_used": u.TokensUsed, "snapshot_id": res.SnapshotID,
	})
	if err != nil {
		return "", err
	}
	if res.Project == nil {
		return fmt.Sprintf("ctx: context is at %.0f%% of the budget before compaction: saved a workspace snapshot (%s). No project is bound to this session, so no _resume.md was updated: run `ctx load N` to bind one, then `ctx save`.",
			pct, res.SnapshotID), nil
	}
	return fmt.Sprintf("ctx: context is at %.0f%% of the budget before compaction: saved progress to %s (snapshot %s) and started a wind-down journal. Finish the current step, then run `ctx save --summary \"...\" --next \"...\"` so the next session knows exactly where to pick up. Instead of waiting for the compaction, the person can then type /clear: ctx briefs the fresh context from the save point.",
		pct, res.ResumePath, res.SnapshotID), nil
}

func percentOf(u *usage.Usage) *float64 {
	if u == nil {
		return nil
	}
	p := round1(u.PercentOfBudget)
	return &p
}

// lastPercent is the usage the hooks last saw for the session (nil when none).
func lastPercent(st *state.Store, sessionID string) *float64 {
	c, err := st.Session(sessionID).Cycle()
	if err != nil || c.UpdatedAt.IsZero() {
		return nil
	}
	p := round1(c.LastPercent)
	return &p
}

// ToolCall is what the PostToolUse hook knows.
type ToolCall struct {
	SessionID      string
	TranscriptPath string
	ToolUseID      string
	Tool           string
	Input          claude.ToolInput
	Paused         bool
	Client         usage.Client
	Now            time.Time
}

// fileTools are the tools whose file is the session's own work.
var fileTools = map[string]bool{"Write": true, "Edit": true, "MultiEdit": true, "NotebookEdit": true}

// OnToolCall runs after every tool call. It records the call in an open journal; notes
// a file a Write or Edit changed in the workspace as the session's work; binds the
// session to a project when the call touched a file under 02-projects/NN-slug/ and the
// session has no project yet; and checks usage (CheckUsage), whose lines it returns for
// the agent. It runs after every tool call, so the input (a Write's whole file) is
// decoded once, into the few fields ctx reads, and the journal's work is done only when
// one is open.
func OnToolCall(st *state.Store, in ToolCall) ([]string, error) {
	ws := st.WS
	input := in.Input
	var errs []error
	j := st.Journal(in.SessionID)
	switch active, err := j.Active(); {
	case err != nil:
		errs = append(errs, err)
	case active:
		errs = append(errs, j.Append(in.Now, state.LineToolCall, lastPercent(st, in.SessionID), map[string]string{
			"tool": in.Tool, "summary": ToolSummary(in.Tool, input),
		}))
	}
	if path := input.File(); path != "" && in.SessionID != state.UnknownSession {
		abs := path
		if !filepath.IsAbs(abs) {
			abs = filepath.Join(ws.Root, abs)
		}
		if rel := ws.Rel(filepath.Clean(abs)); fileTools[in.Tool] && !filepath.IsAbs(rel) {
			errs = append(errs, st.Session(in.SessionID).AddWork(rel))
		}
		errs = append(errs, bindFromFile(st, in.SessionID, path, in.Now))
	}
	out, _, err := CheckUsage(st, UsageCheck{
		SessionID: in.SessionID, TranscriptPath: in.TranscriptPath, ToolUseID: in.ToolUseID,
		Client: in.Client, Paused: in.Paused, Now: in.Now,
	})
	return out, errors.Join(append(errs, err)...)
}

// bindFromFile binds the session to the project holding path, when it has none yet.
func bindFromFile(st *state.Store, sessionID, path string, now time.Time) error {
	ws := st.WS
	id := projectOf(ws, path)
	if id == "" {
		return nil
	}
	se := st.Session(sessionID)
	if existing, err := se.Binding(); err != nil || existing != nil {
		return err
	}
	p, err := ws.Resolve(id)
	if err != nil {
		var nf *loader.NotFoundError
		var amb *loader.AmbiguousError
		if errors.As(err, &nf) || errors.As(err, &amb) {
			return nil
		}
		return err
	}
	return se.Bind(state.Binding{ProjectID: p.ID, Path: p.Path, BoundAt: now.UTC()})
}

// projectOf returns the workspace-relative folder of the project holding path
// ("02-projects/07-x" or "02-projects/00-onboarding/03-y"), or "".
func projectOf(ws *loader.Workspace, path string) string {
	if !filepath.IsAbs(path) {
		path = filepath.Join(ws.Root, path)
	}
	rel, err := filepath.Rel(ws.ProjectsPath(), filepath.Clean(path))
	if err != nil || !filepath.IsLocal(rel) {
		return ""
	}
	parts := strings.Split(filepath.ToSlash(rel), "/")
	if len(parts) >= 3 && parts[0] == loader.OnboardingDir {
		return filepath.ToSlash(filepath.Join(ws.Config.ProjectsDir, parts[0], parts[1]))
	}
	if len(parts) < 2 || !isProjectFolder(parts[0]) {
		return ""
	}
	return filepath.ToSlash(filepath.Join(ws.Config.ProjectsDir, parts[0]))
}

func isProjectFolder(name string) bool {
	i := 0
	for i < len(name) && name[i] >= '0' && name[i] <= '9' {
		i++
	}
	return i > 0 && i < len(name)-1 && name[i] == '-'
}

// ToolSummary is a short line for a tool call: the file, command or pattern it names,
// never whole contents.
func ToolSummary(tool string, in claude.ToolInput) string {
	if s := in.Subject(); s != "" {
		return state.Clip(state.OneLine(s), summaryWidth)
	}
	return tool
}

// OnStop records the agent's last message (its start) in an open journal.
func OnStop(st *state.Store, sessionID, message string, now time.Time) error {
	j := st.Journal(sessionID)
	if active, err := j.Active(); !active {
		return err
	}
	return j.Append(now, state.LineAssistantResponse, lastPercent(st, sessionID), map[string]string{"text": state.Clip(message, messageKept)})
}

// OnPreCompact saves before a compaction: the first of its signals (OnCompaction).
func OnPreCompact(st *state.Store, sessionID, transcript, trigger, promptID string, client usage.Client, now time.Time) error {
	_, err := OnCompaction(st, Compaction{
		SessionID: sessionID, TranscriptPath: transcript, Signal: SignalPreCompact,
		PromptID: promptID, Trigger: trigger, Client: client, Now: now,
	})
	return err
}

// OnSessionEnd finalizes the session's journal before deadline.
func OnSessionEnd(ctx context.Context, st *state.Store, sessionID string, now time.Time) error {
	_, _, err := FinalizeJournal(ctx, st, sessionID, state.TriggerSessionEnd, lastUsage(st, sessionID), false, now)
	return err
}

func thousands(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// promptData is what the journal keeps of a prompt: its first promptKept characters,
// or, with sessions.capture_prompts: false (or a sessions: section ctx cannot read,
// the private side), only its length.
func promptData(ws *loader.Workspace, prompt string) map[string]any {
	var cfg state.SessionsConfig
	if err := ws.ConfigSection("sessions", &cfg); err != nil || (cfg.CapturePrompts != nil && !*cfg.CapturePrompts) {
		return map[string]any{"prompt": "(prompt not kept)", "prompt_chars": len([]rune(prompt))}
	}
	return map[string]any{"prompt": state.Clip(prompt, promptKept)}
}
