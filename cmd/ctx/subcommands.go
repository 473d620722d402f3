package main

import (
	"fmt"
	"strings"

	"github.com/ctxtools/ctx/internal/editdist"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// rejectUnknownSubcommands makes every command that only groups others (ctx system,
// ctx sessions, ctx agents …) refuse a word it does not know with exit code 2. cobra
// would print the group's help and exit 0, so a typo in a hook or a script would look
// like success. Called without arguments, a group still prints its help.
func rejectUnknownSubcommands(cmd *cobra.Command) {
	if !cmd.HasParent() {
		rejectUnknownHelpTopics(cmd)
	}
	for _, c := range cmd.Commands() {
		rejectUnknownSubcommands(c)
	}
	if !cmd.HasSubCommands() || cmd.Runnable() {
		return
	}
	cmd.Args = unknownSubcommand
	cmd.RunE = func(c *cobra.Command, args []string) error { return c.Help() }
}

// rejectUnknownHelpTopics makes `ctx help nope` an error with exit code 2, where
// cobra would print the root's usage and exit 0. It also adds cobra's help and
// completion commands now, which cobra would add only when the command runs, so that
// the walk over the tree sees them.
func rejectUnknownHelpTopics(root *cobra.Command) {
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	for _, c := range root.Commands() {
		if c.Name() != "help" {
			continue
		}
		show := c.Run
		c.Run = nil
		c.RunE = func(c *cobra.Command, args []string) error {
			if found, rest, err := root.Find(args); err != nil || found == nil || len(rest) > 0 {
				return inputError(fmt.Errorf("unknown help topic %q; see 'ctx --help'", strings.Join(args, " ")))
			}
			show(c, args)
			return nil
		}
	}
}

// unknownSubcommand refuses any argument to a command group (ctx itself, ctx agents
// …), naming the group and, for a typo, the command meant.
func unknownSubcommand(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	hint := fmt.Sprintf("see '%s --help'", cmd.CommandPath())
	if cmd.SuggestionsMinimumDistance <= 0 {
		cmd.SuggestionsMinimumDistance = 2 // cobra's own default, which SuggestionsFor does not apply
	}
	if meant := cmd.SuggestionsFor(args[0]); len(meant) > 0 {
		hint = fmt.Sprintf("did you mean %q?", meant[0])
	}
	return inputError(fmt.Errorf("unknown command %q for %q; %s", args[0], cmd.CommandPath(), hint))
}

// flagError is cobra's complaint about a flag, exit 2, with the flag meant when an
// unknown one is a typo of one of the command's (--jsn: --json).
func flagError(cmd *cobra.Command, err error) error {
	name, ok := strings.CutPrefix(err.Error(), "unknown flag: --")
	if !ok {
		return inputError(err)
	}
	best, bestDist := "", 3 // at most two edits away
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if d := editdist.Distance(name, f.Name); d < bestDist && !f.Hidden {
			best, bestDist = f.Name, d
		}
	})
	if best == "" {
		return inputError(err)
	}
	return inputError(fmt.Errorf("%w; did you mean --%s?", err, best))
}
