package main

import (
	"github.com/spf13/cobra"
)

func newGuardCmd(app *App) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "guard",
		Short: "Test the command guard and list its rules",
		Long: `The guard is the PreToolUse hook that refuses destructive Bash commands an agent
is about to run (see docs/guard.md). These commands let a person ask it about a
command, and review the rules in force for this workspace: the built-in rule
classes and the guard: section of .ctx/config.yaml.`,
		Example: `  ctx guard check -- rm -rf 02-projects
  ctx guard rules`,
		Args: usageArgs(cobra.NoArgs),
	}
	cmd.AddCommand(newGuardCheckCmd(app), newGuardRulesCmd(app))
	return cmd
}
