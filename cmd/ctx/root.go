package main

import (
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ctxtools/ctx/internal/termtext"
)

// newRootCmd builds the whole command tree.
func newRootCmd(app *App) *cobra.Command { return newRootCmdFor(app, nil) }

// hotCommands are what Claude Code runs on every prompt, tool call and screen refresh:
// the hooks and the status line. For them, only their own branch of the tree is built
// (the whole tree costs a hook about a third of a millisecond).
var hotCommands = map[string]func(*App) *cobra.Command{
	"system":     newSystemCmd,
	"statusline": newStatusLineCmd,
}

// newRootCmdFor builds the tree args need: the whole tree, or for a hot command (see
// hotCommands) the root with that command alone.
func newRootCmdFor(app *App, args []string) *cobra.Command {
	opts := &loadOptions{App: app}
	cmd := &cobra.Command{
		Use:   "ctx",
		Short: "Keep an AI coding agent's place across compaction and sessions",
		Long: `ctx keeps an AI coding agent's work continuous. Every project folder has a
_resume.md save point; at session start, ctx tells the agent where work stopped,
what is left, and what to read first, in order.

Three "resume"s: ctx --resume (ctx load) loads a project where work stopped;
ctx resume un-pauses this session's nudges; ctx agents resume restarts an agent.

Exit codes: 0 ok, 1 failure, 2 bad input (usage, an unknown or ambiguous project
or agent, no workspace, a malformed file), 3 not now (an agent is busy or its
conversation is open elsewhere; the message names the override).`,
		Example: `  # At session start (what agents run): where project 1 stopped
  ctx --resume --project 1 --json

  # The project with the newest save point
  ctx --resume

  # Every project with its progress
  ctx projects

  # Try it on a built-in example workspace
  ctx demo`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          unknownSubcommand,
		RunE: func(cmd *cobra.Command, args []string) error {
			if !opts.Resume && opts.Query == "" {
				return cmd.Help()
			}
			return runLoad(opts)
		},
	}
	cmd.SetFlagErrorFunc(flagError)
	cmd.PersistentFlags().StringVarP(&app.WorkspaceFlag, "workspace", "w", "", "workspace root (default: $CTX_WORKSPACE, $CLAUDE_PROJECT_DIR, or the nearest folder above holding 02-projects/ or .ctx/)")
	cmd.Flags().BoolVar(&opts.Resume, "resume", false, "load a project to resume it; without --project, the one with the newest save point")
	cmd.Flags().StringVarP(&opts.Query, "project", "p", "", "project number, id, or part of its name")
	addLoadFlags(cmd, opts)
	_ = cmd.RegisterFlagCompletionFunc("project", completeProjects(app))

	if len(args) > 0 {
		if hot, ok := hotCommands[args[0]]; ok {
			// Neither `ctx help` nor `ctx completion` can be what args ask for here:
			// cobra need not build them.
			cmd.CompletionOptions.DisableDefaultCmd = true
			hotCmd := hot(app)
			cmd.AddCommand(hotCmd)
			rejectUnknownSubcommands(hotCmd)
			if slices.ContainsFunc(args, func(a string) bool { return a == "-h" || a == "--help" }) {
				fitHelp(cmd, app.Width) // help only: a hook's start-up never pays for it
			}
			return cmd
		}
	}
	cmd.AddCommand(
		newLoadCmd(app, nil),
		newProjectsCmd(app),
		newDemoCmd(app),
		newNewCmd(app),
		newSaveCmd(app, nil),
		newCloseCmd(app, nil),
		newShowCmd(app),
		newSessionsCmd(app),
		newTemplatesCmd(app),
		newPauseCmd(app, false),
		newResumeCmd(app, false),
		newSystemCmd(app),
		newInitCmd(app),
		newUninstallCmd(app),
		newDoctorCmd(app),
		newGuardCmd(app),
		newUsageCmd(app),
		newStatusLineCmd(app),
		newJournalCmd(app),
		newAgentsCmd(app), newHostsCmd(app),
		newServeCmd(app),
		newVersionCmd(app),
		newHelpEnvironmentCmd(),
	)
	addVersionFlag(cmd)
	rejectUnknownSubcommands(cmd)
	fitHelp(cmd, app.Width)
	return cmd
}

// fitHelp fits every command's help to width columns: its long text is reflowed and
// its flags are wrapped by pflag, which knows their columns. 0 leaves help as it is.
func fitHelp(cmd *cobra.Command, width int) {
	if width <= 0 {
		return
	}
	cmd.Long = termtext.Reflow(cmd.Long, width)
	cmd.Example = fitExamples(cmd.Example, width)
	tmpl := cmd.UsageTemplate()
	tmpl = strings.ReplaceAll(tmpl, ".FlagUsages |", ".FlagUsagesWrapped "+strconv.Itoa(width)+" |")
	cmd.SetUsageTemplate(tmpl)
	for _, c := range cmd.Commands() {
		fitHelp(c, width)
	}
}

// fitExamples fits a command's examples to width as a person would type them, so
// that each stays a command to copy: a comment too long for its line goes on a line
// of its own above it, and a command too long is continued with " \" on lines
// indented four more, broken only between words outside quotes. A word or a quoted
// string wider than the width stays whole.
func fitExamples(examples string, width int) string {
	if examples == "" {
		return ""
	}
	var out []string
	for _, line := range strings.Split(examples, "\n") {
		if termtext.DisplayWidth(line) <= width {
			out = append(out, line)
			continue
		}
		indent := line[:len(line)-len(strings.TrimLeft(line, " "))]
		words := shellWords(strings.TrimLeft(line, " "))
		if i := slices.Index(words, "#"); i > 0 {
			out = append(out, indent+strings.Join(words[i:], " "))
			words = words[:i]
		}
		cur := indent
		for i, w := range words {
			switch {
			case i == 0:
				cur += w
			case termtext.DisplayWidth(cur)+1+termtext.DisplayWidth(w)+2 > width:
				out = append(out, cur+" \\")
				cur = indent + "    " + w
			default:
				cur += " " + w
			}
		}
		out = append(out, cur)
	}
	return strings.Join(out, "\n")
}

// shellWords splits a command line at spaces outside single and double quotes; a
// comment's "#" is a word of its own, and the comment's words follow it.
func shellWords(line string) []string {
	var words []string
	var b strings.Builder
	quote := byte(0)
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		case c == ' ':
			if b.Len() > 0 {
				words = append(words, b.String())
				b.Reset()
			}
			continue
		}
		b.WriteByte(c)
	}
	if b.Len() > 0 {
		words = append(words, b.String())
	}
	return words
}
