package session

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ctxtools/ctx/internal/claude"
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
func ReadUsage(ws *loader.Workspace, transcript string, client usage.Client) (*usage.Usage, error) {
	cfg, err := UsageConfig(ws)
	if err != nil {
		return nil, err
	}
	return usage.Read(transcript, cfg, client)
}

// SnapshotUsage is what a snapshot records of usage: tokens against the budget up to
// compaction, the figure the thresholds are fractions of.
func SnapshotUsage(u *usage.Usage) *ContextUsage {
	if u == nil {
		return nil
	}
	return &ContextUsage{TokensUsed: u.TokensUsed, TokensTotal: u.Budget, Percentage: round1(u.PercentOfBudget)}
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
func OnPrompt(ws *loader.Workspace, in Prompt) ([]string, error) {
	out, u, uerr := CheckUsage(ws, UsageCheck{
		SessionID: in.SessionID, TranscriptPath: in.TranscriptPath, Client: in.Client, Paused: in.Paused, Now: in.Now,
	})
	j := OpenJournal(ws.StatePath("sessions"), in.SessionID)
	if err := j.Append(in.Now, LineUserMessage, percentOf(u), promptData(ws, in.Prompt)); err != nil {
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
func CheckUsage(ws *loader.Workspace, in UsageCheck) ([]string, *usage.Usage, error) {
	if in.TranscriptPath == "" {
		return nil, nil, nil
	}
	if in.ToolUseID != "" {
		usage.WaitForLine(in.TranscriptPath, []byte(`"`+in.ToolUseID+`"`), toolLineWait)
	}
	// A compaction no hook reported starts a new cycle before usage is judged.
	scanned, boundErr := checkBoundaries(ws, in)
	if errors.Is(boundErr, os.ErrNotExist) {
		return nil, nil, nil // a new session's transcript may not be written yet
	}
	u, err := ReadUsage(ws, in.TranscriptPath, in.Client)
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
	if !cycleChanges(ws, in, u, scanned) {
		return nil, u, boundErr
	}
	action := ""
	var held []string
	pct := u.PercentOfBudget / 100
	cycles := Cycles{StateDir: ws.StatePath("state")}
	_, err = cycles.Update(in.SessionID, func(c *Cycle) error {
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
		line, saveErr := autoSaveAtThreshold(ws, in, u)
		out = append(out, line)
		// Only a save that happened counts: a failed one is tried again on the next
		// prompt, and the agent has been told. A line the pause silences waits.
		if _, err := cycles.Update(in.SessionID, func(c *Cycle) error {
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
func cycleChanges(ws *loader.Workspace, in UsageCheck, u *usage.Usage, scanned int64) bool {
	c, err := Cycles{StateDir: ws.StatePath("state")}.Get(in.SessionID)
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
func autoSaveAtThreshold(ws *loader.Workspace, in UsageCheck, u *usage.Usage) (string, error) {
	pct := round1(u.PercentOfBudget)
	res, err := AutoSave(ws, in.SessionID, TriggerAuto, SnapshotUsage(u), 0, in.Now)
	if err != nil {
		snapID, _ := Snapshots{Dir: ws.StatePath("sessions")}.Write(CurrentSnapshot(ws, nil, in.SessionID, TriggerAuto, SnapshotUsage(u), in.Now, time.Time{}))
		_, _ = OpenJournal(ws.StatePath("sessions"), in.SessionID).Start(in.Now, &pct, map[string]any{
			"reason": "auto-save threshold; save failed", "tokens_used": u.TokensUsed, "snapshot_id": snapID,
		})
		return fmt.Sprintf("ctx: context is at %.0f%% of the budget before compaction and the automatic save failed: %v. Fix that, then run `ctx save --summary \"...\" --next \"...\"`; ctx tries again on the next prompt.", pct, err), err
	}
	_, err = OpenJournal(ws.StatePath("sessions"), in.SessionID).Start(in.Now, &pct, map[string]any{
		"reason": "auto-save threshold", "tokens_used": u.TokensUsed, "snapshot_id": res.SnapshotID,
	})
	if err != nil {
		return "", err
	}
	if res.Project == nil {
		return fmt.Sprintf("ctx: context is at %.0f%% of the budget before compaction: saved a workspace snapshot (%s). No project is bound to this session, so no _resume.md was updated: run `ctx load N` to bind one, then `ctx save`.",
			pct, res.SnapshotID), nil
	}
	return fmt.Sprintf("ctx: context is at %.0f%% of the budget before compaction: saved progress to %s (snapshot %s) and started a wind-down journal. Finish the current step, then run `ctx save --summary \"...\" --next \"...\"` so the next session knows exactly where to pick up.",
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
func lastPercent(ws *loader.Workspace, sessionID string) *float64 {
	c, err := Cycles{StateDir: ws.StatePath("state")}.Get(sessionID)
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
func OnToolCall(ws *loader.Workspace, in ToolCall) ([]string, error) {
	input := in.Input
	var errs []error
	j := OpenJournal(ws.StatePath("sessions"), in.SessionID)
	switch active, err := j.Active(); {
	case err != nil:
		errs = append(errs, err)
	case active:
		errs = append(errs, j.Append(in.Now, LineToolCall, lastPercent(ws, in.SessionID), map[string]string{
			"tool": in.Tool, "summary": ToolSummary(in.Tool, input),
		}))
	}
	if path := input.File(); path != "" && in.SessionID != UnknownSession {
		abs := path
		if !filepath.IsAbs(abs) {
			abs = filepath.Join(ws.Root, abs)
		}
		if rel := ws.Rel(filepath.Clean(abs)); fileTools[in.Tool] && !filepath.IsAbs(rel) {
			errs = append(errs, Work{StateDir: ws.StatePath("state")}.Add(in.SessionID, rel))
		}
		errs = append(errs, bindFromFile(ws, in.SessionID, path, in.Now))
	}
	out, _, err := CheckUsage(ws, UsageCheck{
		SessionID: in.SessionID, TranscriptPath: in.TranscriptPath, ToolUseID: in.ToolUseID,
		Client: in.Client, Paused: in.Paused, Now: in.Now,
	})
	return out, errors.Join(append(errs, err)...)
}

// bindFromFile binds the session to the project holding path, when it has none yet.
func bindFromFile(ws *loader.Workspace, sessionID, path string, now time.Time) error {
	id := projectOf(ws, path)
	if id == "" {
		return nil
	}
	b := Bindings{StateDir: ws.StatePath("state")}
	if existing, err := b.Lookup(sessionID); err != nil || existing != nil {
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
	return b.Bind(Binding{SessionID: sessionID, ProjectID: p.ID, Path: p.Path, BoundAt: now.UTC()})
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
		return clip(oneLine(s), summaryWidth)
	}
	return tool
}

// OnStop records the agent's last message (its start) in an open journal.
func OnStop(ws *loader.Workspace, sessionID, message string, now time.Time) error {
	j := OpenJournal(ws.StatePath("sessions"), sessionID)
	if active, err := j.Active(); !active {
		return err
	}
	return j.Append(now, LineAssistantResponse, lastPercent(ws, sessionID), map[string]string{"text": clip(message, messageKept)})
}

// OnPreCompact saves before a compaction: the first of its signals (OnCompaction).
func OnPreCompact(ws *loader.Workspace, sessionID, transcript, trigger, promptID string, client usage.Client, now time.Time) error {
	_, err := OnCompaction(ws, Compaction{
		SessionID: sessionID, TranscriptPath: transcript, Signal: SignalPreCompact,
		PromptID: promptID, Trigger: trigger, Client: client, Now: now,
	})
	return err
}

// OnSessionEnd finalizes the session's journal before deadline.
func OnSessionEnd(ws *loader.Workspace, sessionID string, now, deadline time.Time) error {
	_, _, err := FinalizeJournal(ws, sessionID, TriggerSessionEnd, lastUsage(ws, sessionID), false, now, deadline)
	return err
}

func thousands(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
