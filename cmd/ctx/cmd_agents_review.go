package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ctxtools/ctx/agents"
)

type agentsDiffOptions struct {
	agentsApp
	Agent string
	Into  string
	Stat  bool
	JSON  bool
}

func newAgentsDiffCmd(app *App) *cobra.Command {
	o := &agentsDiffOptions{agentsApp: agentsApp{app}}
	cmd := &cobra.Command{
		Use:   "diff AGENT",
		Short: "Show what an agent on its own branch changed against the branch it started from",
		Long: `Show the commits, the files and the patch of an agent started with --worktree,
against the branch it started from (or --into's): what its branch committed and
what its worktree holds uncommitted (marked *), untracked files as new.`,
		Example: `  ctx agents diff expiry
  ctx agents diff expiry --stat
  ctx agents diff expiry --into release --json | jq '.files[].path'`,
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(c *cobra.Command, args []string) error {
			o.Agent = args[0]
			return runAgentsDiff(o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Into, "into", "", "compare with this branch, not the one it started from")
	f.BoolVar(&o.Stat, "stat", false, "the commits and files, without the patch")
	f.BoolVar(&o.JSON, "json", false, "print as JSON (the patch included)")
	return cmd
}

func runAgentsDiff(o *agentsDiffOptions) error {
	a, rec, err := o.one(o.Agent)
	if err != nil {
		return err
	}
	rv, err := a.Review(rec, o.Into)
	if err != nil {
		return err
	}
	if o.JSON {
		return o.writeJSON(rv)
	}
	s := style{o.Color()}
	out := o.dataOut()
	fmt.Fprintf(out, "%s: %s against %s (from %s)\n", rec.Name, s.bold(rv.Branch), rv.Into, agents.ShortSHA(rv.MergeBase))
	if len(rv.Commits) == 0 {
		fmt.Fprintln(out, "no commits yet")
	} else {
		fmt.Fprintf(out, "%s:\n", count(len(rv.Commits), "commit"))
		for _, c := range rv.Commits {
			fmt.Fprintf(out, "  %s %s\n", agents.ShortSHA(c.SHA), c.Subject)
		}
	}
	if len(rv.Files) == 0 {
		fmt.Fprintln(out, "no files changed")
		return nil
	}
	fmt.Fprintf(out, "%s (* not committed):\n", count(len(rv.Files), "file"))
	for _, f := range rv.Files {
		mark := ""
		if f.Uncommitted {
			mark = " *"
		}
		fmt.Fprintf(out, "  %-9s %s%s\n", f.Status, f.Path, mark)
	}
	if o.Stat {
		return nil
	}
	fmt.Fprintln(out)
	paint := map[string]func(string) string{"file": s.bold, "add": s.green, "del": s.red}
	for line := range strings.Lines(rv.Patch) {
		text := strings.TrimRight(line, "\n")
		if p := paint[agents.PatchLine(text)]; p != nil {
			text = p(text)
		}
		fmt.Fprintln(out, text)
	}
	if rv.Truncated {
		fmt.Fprintf(out, "… the patch is cut at %d MB: git -C %s diff %s for the rest\n", agents.MaxPatch>>20, rv.Worktree, agents.ShortSHA(rv.MergeBase))
	}
	return nil
}

type agentsMergeOptions struct {
	agentsApp
	Agent  string
	Into   string
	Squash bool
	JSON   bool
}

func newAgentsMergeCmd(app *App) *cobra.Command {
	o := &agentsMergeOptions{agentsApp: agentsApp{app}}
	cmd := &cobra.Command{
		Use:   "merge AGENT",
		Short: "Merge an agent's branch into the branch it started from",
		Long: `Merge the branch of an agent started with --worktree into the branch it started
from (or --into's): a fast-forward when it can, else a merge commit, or with
--squash one new commit. Nothing changes, and the exit is 3, while its worktree
holds uncommitted work, while the checkout of the branch merged into has
uncommitted changes, or when the merge would conflict (the files are named).
The agent's worktree and branch stay until you remove them
(ctx agents rm AGENT --remove-worktree).`,
		Example: `  ctx agents diff expiry --stat && ctx agents merge expiry
  ctx agents merge expiry --squash
  ctx agents merge expiry --into release`,
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(c *cobra.Command, args []string) error {
			o.Agent = args[0]
			return runAgentsMerge(o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Into, "into", "", "merge into this branch, not the one it started from")
	f.BoolVar(&o.Squash, "squash", false, "one new commit with the branch's changes, not its history")
	f.BoolVar(&o.JSON, "json", false, "print the result as JSON")
	return cmd
}

func runAgentsMerge(o *agentsMergeOptions) error {
	a, rec, err := o.one(o.Agent)
	if err != nil {
		return err
	}
	res, err := a.Merge(rec, agents.MergeOptions{Into: o.Into, Squash: o.Squash})
	if err != nil {
		return err
	}
	if o.JSON {
		return o.writeJSON(res)
	}
	switch res.How {
	case "up-to-date":
		fmt.Fprintf(o.Out, "%s is up to date with %s: nothing to merge\n", res.Into, res.Branch)
	case "fast-forward":
		fmt.Fprintf(o.Out, "merged %s into %s: fast-forward to %s (%s)\n", res.Branch, res.Into, agents.ShortSHA(res.Commit), count(res.Commits, "commit"))
	case "squash":
		fmt.Fprintf(o.Out, "merged %s into %s: %s squashed as %s\n", res.Branch, res.Into, count(res.Commits, "commit"), agents.ShortSHA(res.Commit))
	default:
		fmt.Fprintf(o.Out, "merged %s into %s: merge commit %s (%s)\n", res.Branch, res.Into, agents.ShortSHA(res.Commit), count(res.Commits, "commit"))
	}
	fmt.Fprintf(o.Err, "the worktree stays at %s; ctx agents rm %s --remove-worktree removes it with the agent\n", rec.Worktree.Path, rec.Name)
	return nil
}
