package events

import (
	"context"
	"time"

	"github.com/ctxtools/ctx/internal/claude"
)

// Event is one hook ctx answers: everything about it in one row. `ctx init`'s
// registrations (Registrations), `ctx system`'s subcommands and the table in
// docs/hooks.md come from Table; adding an event is a row here and its handler.
type Event struct {
	Name     string // Claude Code's hook event; "" for a command no event runs (cleanup-tmp)
	Command  string // the `ctx system` subcommand
	Matcher  string // the tool-name pattern of the registration; "" registers it without one
	Timeout  int    // seconds Claude Code gives the command before it cancels it
	OnceOnly bool   // acts once per event even when ctx is registered at two settings levels
	// Budget bounds the handler's own work (a context deadline every lock and loop
	// honours); 0 leaves it to Claude Code's Timeout.
	Budget time.Duration
	// Activity is what an agent is doing when its session sends this event (ctx agents
	// and the dashboard show it); Detail says more. "" records nothing.
	Activity, Detail string
	Short, Example   string // `ctx system <command> --help`
	Doc              string // what ctx does, for the table in docs/hooks.md
	Run              func(context.Context, *Hook) (Reply, error)
}

// Timeouts Claude Code gives ctx's hooks, in seconds: a hook does its work in
// milliseconds; the session end is bounded by Claude Code closing.
const (
	hookTimeout       = 10
	sessionEndTimeout = 2
)

// sessionEndBudget is how long the SessionEnd hook may take: Claude Code is closing.
const sessionEndBudget = 1500 * time.Millisecond

// GuardCommand is the hook that judges Bash commands: the one that runs outside a
// workspace too, and refuses what it cannot read.
const GuardCommand = "block-dangerous-commands"

// Table is every hook ctx answers, in the order `ctx init` registers them.
var Table = []Event{
	{Name: claude.EventSessionStart, Command: "session-start", Timeout: hookTimeout, Budget: sessionEndBudget, Activity: "idle",
		Doc:     "Recovers journals crashed sessions left. `startup`: one line naming the session's own project when it is bound already (an agent's), else the project last active here and `ctx load ID` (nothing when there is none, or it is finished). `resume`, `fork`: the session's own recent work and the bound project's briefing. `clear`: the handoff note of the session cleared (its own last save, the files it changed, its last actions, then the project's briefing), so the fresh context starts from where that session was. `compact`: counts the compaction unless another signal did, then the same briefing. `fork`, `clear`, a resume under a new id: carries the project binding from the session it came from.",
		Short:   "SessionStart: bind the session and brief the agent after a compaction or resume",
		Example: `  echo '{"session_id":"s1","source":"compact"}' | ctx system session-start`,
		Run:     OnSessionStartHook},
	{Name: claude.EventUserPromptSubmit, Command: "check-context-size", Timeout: hookTimeout, OnceOnly: true, Activity: "working",
		Doc:     "The pause reminder; a compaction no hook reported (a new `compact_boundary` line); usage against the budget: one nudge at 75%, an auto-save and a wind-down journal at 90% (an agent with the handoff policy `fresh` is asked to record its note and end its turn); journals the prompt; the first prompt of a handoff's fresh session must be the note.",
		Short:   "UserPromptSubmit: the pause reminder, then context usage",
		Example: `  echo '{"session_id":"s1","prompt":"hi"}' | ctx system check-context-size`,
		Run:     OnPromptHook},
	{Name: claude.EventPreToolUse, Command: GuardCommand, Matcher: "Bash", Timeout: hookTimeout, Activity: "working",
		Doc:     "The command guard (docs/guard.md); ignores the pause.",
		Short:   "PreToolUse (Bash): refuse destructive commands, paused or not",
		Example: `  echo '{"tool_name":"Bash","tool_input":{"command":"rm -rf /"}}' | ctx system block-dangerous-commands`,
		Run:     OnGuardHook},
	// "*" matches every tool; an absent matcher would too, but "*" says so to a person
	// reading the settings file.
	{Name: claude.EventPostToolUse, Command: "record-action", Matcher: "*", Timeout: hookTimeout, OnceOnly: true, Activity: "working",
		Doc:     "Journals the call, notes files the session changed, binds the session from project files it touched, and checks usage: a compaction can come between two tool calls with no prompt before it (it waits up to 1.5 s for the call's line in the transcript). An agent asked to hand off that makes 5 more calls has its turn ended (`continue: false`) and handed off; a handoff's fresh session is checked to work in the agent's folder.",
		Short:   "PostToolUse: journal the tool call; bind the session from project files touched",
		Example: `  echo '{"session_id":"s1","tool_name":"Edit","tool_input":{"file_path":"a.md"}}' | ctx system record-action`,
		Run:     OnToolCallHook},
	{Name: claude.EventStop, Command: "stop", Timeout: hookTimeout, OnceOnly: true, Activity: "idle",
		Doc:     "Journals the start of the reply; a fork whose transcript now holds its parent's lines gets its binding (once). An agent asked to hand off: starts `ctx agents handoff` in the background, which ends this session and starts a fresh one from ctx's note (docs/agents.md).",
		Short:   "Stop: journal the start of the agent's last message",
		Example: `  echo '{"session_id":"s1","last_assistant_message":"done"}' | ctx system stop`,
		Run:     OnStopHook},
	{Name: claude.EventPreCompact, Command: "pre-compact", Timeout: hookTimeout, OnceOnly: true, Activity: "compacting",
		Doc:     "Counts the compaction (an auto-save when none happened in the cycle), finalizes the journal, starts a new cycle.",
		Short:   "PreCompact: save, finalize the journal, count the compaction; never blocks",
		Example: `  echo '{"session_id":"s1","trigger":"auto"}' | ctx system pre-compact`,
		Run:     OnPreCompactHook},
	// Counts the compaction when PreCompact did not (compaction.go).
	{Name: claude.EventPostCompact, Command: "post-compact", Timeout: hookTimeout, OnceOnly: true, Activity: "idle",
		Doc:     "The same, when PreCompact did not fire.",
		Short:   "PostCompact: count the compaction and start a new cycle, unless PreCompact did",
		Example: `  echo '{"session_id":"s1","trigger":"auto","prompt_id":"p1"}' | ctx system post-compact`,
		Run:     OnPostCompactHook},
	{Name: claude.EventSessionEnd, Command: "session-end", Timeout: sessionEndTimeout, Budget: sessionEndBudget, Activity: "exited",
		Doc:     "Finalizes the journal, removes stale markers (Claude Code kills it after 1.5 s).",
		Short:   "SessionEnd: finalize the journal and clean up markers (within 1.5 s)",
		Example: `  echo '{"session_id":"s1","reason":"exit"}' | ctx system session-end`,
		Run:     OnSessionEndHook},
	// Auto-approve: answers only when it is on for the session (docs/guard.md).
	{Name: claude.EventPermissionRequest, Command: "permission-request", Matcher: "*", Timeout: hookTimeout,
		Activity: "needs_input", Detail: "permission",
		Doc:     "Auto-approve through the guard, when it is on (docs/guard.md).",
		Short:   "PermissionRequest: auto-approve through the guard, when it is on",
		Example: `  echo '{"session_id":"s1","tool_name":"Bash","tool_input":{"command":"ls"}}' | CTX_AUTO_APPROVE=1 ctx system permission-request`,
		Run:     OnPermissionHook},
	{Command: "cleanup-tmp", Budget: sessionEndBudget,
		Doc:     "Removes what sessions long over left: runtime markers after a week; a session's binding, cycle, work list and window after a month (its audit log stays); temporary files of killed writes.",
		Short:   "Remove stale markers and temporary files (paused or not)",
		Example: `  ctx system cleanup-tmp`,
		Run:     OnCleanupHook},
}

// Registrations are the hooks `ctx init` registers, each running
// claude.HookCommand(ctxBin, its command). An empty ctxBin means "ctx", found on the PATH.
func Registrations(ctxBin string) []claude.Registration {
	var regs []claude.Registration
	for _, ev := range Table {
		if ev.Name != "" {
			regs = append(regs, claude.Registration{Event: ev.Name, Matcher: ev.Matcher, Command: claude.HookCommand(ctxBin, ev.Command), Timeout: ev.Timeout})
		}
	}
	return regs
}
