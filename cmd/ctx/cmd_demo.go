package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/ctxtools/ctx/demo"
)

type demoOptions struct {
	*App
	Dir  string
	JSON bool
}

func newDemoCmd(app *App) *cobra.Command {
	opts := &demoOptions{App: app}
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Write an example workspace and load a project from it",
		Long: `Write the example workspace built into ctx (a small web shop team with a few
projects) to a new temporary folder, or to --dir, and show what
'ctx --resume --project 1' prints there. Nothing outside that folder is touched.`,
		Example: `  ctx demo
  ctx demo --dir /tmp/ctx-demo && cd /tmp/ctx-demo && ctx projects`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runDemo(opts)
		},
	}
	cmd.Flags().StringVar(&opts.Dir, "dir", "", "write the example here (an empty or new folder) instead of a temporary folder")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the load result as JSON")
	return cmd
}

func runDemo(opts *demoOptions) error {
	dir := opts.Dir
	if dir == "" {
		tmp, err := os.MkdirTemp("", "ctx-demo-")
		if err != nil {
			return fmt.Errorf("demo: %w", err)
		}
		dir = tmp
	}
	if err := demo.Write(dir); err != nil {
		return err
	}
	fmt.Fprintf(opts.Err, "ctx: wrote the example workspace to %s\n", dir)
	next := fmt.Sprintf("`ctx --workspace %s projects`", dir)
	if thisBinary() == "" {
		// go run: most likely no ctx on the PATH yet.
		next = "`make install` (ctx on your PATH), then\n     " + next
	}
	fmt.Fprintf(opts.Err, "ctx: this is `ctx --resume --project 1` there\nctx: next: %s\n\n", next)
	load := &loadOptions{App: &App{Streams: opts.Streams, Getenv: noSession(opts.Getenv), WorkspaceFlag: dir}, Query: "1", JSON: opts.JSON}
	return runLoad(load)
}

// noSession hides the agent session id so that the demo never binds a real session to
// an example project.
func noSession(getenv func(string) string) func(string) string {
	return func(key string) string {
		if key == "CLAUDE_CODE_SESSION_ID" {
			return ""
		}
		return getenv(key)
	}
}
