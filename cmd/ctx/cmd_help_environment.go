package main

import "github.com/spf13/cobra"

// newHelpEnvironmentCmd is the help topic `ctx help environment`: every environment
// variable ctx reads or sets. It has no Run, so cobra lists it under "Additional
// help topics" and prints its Long text. TestEnvironmentDocumented fails when the
// code reads a variable this text does not name; docs/environment.md says the same
// at length.
func newHelpEnvironmentCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "environment",
		Short: "The environment variables ctx reads and sets",
		Long: `The environment variables ctx reads, and those it sets for what it starts.
None is required: each has a default, and --workspace wins over CTX_WORKSPACE.
docs/environment.md says more.

ctx's own
  CTX_WORKSPACE      the workspace root when --workspace is not given
  CTX_CLAUDE         the claude agents run (default: claude on the PATH)
  CTX_TMUX_SOCKET    the tmux server agents run in, tmux -L NAME (default: ctx)
  CTX_AUTO_APPROVE   1 or 0: auto-approve on or off in the session it is set for
  CTX_NOW            pin ctx's clock, RFC 3339: 2025-06-01T09:00:00Z
  CTX_AGENT_ID       set by ctx agents start: the agent a session works for
  CTX_TEST_CRASH_AT  tests only: kill ctx at a step of an agents operation

Set by ctx serve for its notify_command (with CTX_AGENT_ID)
  CTX_EVENT          agent.needs_input, agent.attention, agent.exited, ...
  CTX_AGENT_NAME     the agent's name
  CTX_PROJECT        the agent's project id (24-checkout)
  CTX_NOTIFY_TITLE   a title: "NAME needs input", "NAME exited", ...
  CTX_NOTIFY_TEXT    the details: what the agent asks, or why it stopped

Set by Claude Code for its hooks and tools
  CLAUDE_CODE_SESSION_ID  the session ctx binds, journals and saves for
  CLAUDE_PID              the claude process: its session and (Linux) flags
  CLAUDE_PROJECT_DIR      the workspace if it is one; the project's .claude/

Claude Code's settings, as it reads them (the environment, else the "env" of
its settings files; CLAUDE_CONFIG_DIR from the environment only)
  CLAUDE_CONFIG_DIR                Claude Code's folder (default: ~/.claude)
  ANTHROPIC_MODEL                  the model, when the transcript names none
  CLAUDE_CODE_AUTO_COMPACT_WINDOW  tokens compaction counts against
  CLAUDE_AUTOCOMPACT_PCT_OVERRIDE  % of the window where compaction starts
  CLAUDE_CODE_DISABLE_1M_CONTEXT   1: the 1M-token models run at 200k
  DISABLE_AUTO_COMPACT             1: compaction only by hand; budget = window

The system's
  HOME             ~/.claude, and the home folder the guard protects
  XDG_RUNTIME_DIR  runtime folder $XDG_RUNTIME_DIR/ctx (markers, serve.json)
  TMPDIR           temporary files; the runtime folder without XDG_RUNTIME_DIR
  XDG_CACHE_HOME   caches and locks in $XDG_CACHE_HOME/ctx (default: ~/.cache)
  NO_COLOR         any value: no colour (ctx serve --qr draws plain blocks)
  TERM             dumb: no colour
  COLUMNS          width text is fitted to: the terminal's, else 80; 0: none
  PATH             where ctx finds claude, tmux, git, ssh, and agents find ctx

Examples:
  # Use a workspace from any folder
  CTX_WORKSPACE=~/notes ctx projects

  # Agents run another claude
  CTX_CLAUDE=~/bin/claude-beta ctx agents start 1

  # No colour, output fitted to 60 columns
  NO_COLOR=1 COLUMNS=60 ctx projects`,
		Example: "  ctx help environment\n  ctx environment --help",
	}
}
