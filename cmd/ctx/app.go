package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/ctxtools/ctx/agents"
	"github.com/ctxtools/ctx/demo"
	"github.com/ctxtools/ctx/hosts"
	"github.com/ctxtools/ctx/internal/durable"
	"github.com/ctxtools/ctx/internal/events"
	"github.com/ctxtools/ctx/internal/state"
	"github.com/ctxtools/ctx/internal/termtext"
	"github.com/ctxtools/ctx/loader"
)

// Exit codes, documented in the README and in `ctx --help`.
const (
	exitOK      = 0
	exitFailure = 1
	exitInput   = 2 // usage, bad input, an unknown or ambiguous project, no workspace
	// exitNotNow is "not now": the agent is busy, its conversation is open elsewhere,
	// or git stands in the way. The message names the flag that overrides it.
	exitNotNow = 3
)

// Streams are the standard streams a command may use, injected so tests run commands in
// memory. Out carries data, Err carries talk.
type Streams struct {
	In       io.Reader
	Out      io.Writer
	Err      io.Writer
	OutIsTTY bool
	InIsTTY  bool
	// Width is the width in columns text on Out is fitted to (internal/termtext):
	// the terminal's when Out is a terminal, else 80 (pipeWidth); $COLUMNS overrides
	// either. 0 leaves lines whole.
	Width int
}

// SystemStreams returns the process's own streams.
func SystemStreams() Streams {
	s := Streams{In: os.Stdin, Out: os.Stdout, Err: os.Stderr,
		OutIsTTY: term.IsTerminal(int(os.Stdout.Fd())), InIsTTY: term.IsTerminal(int(os.Stdin.Fd()))}
	if s.OutIsTTY {
		s.Width = terminalWidth(int(os.Stdout.Fd()), os.Getenv("COLUMNS"))
	} else {
		s.Width = pipeWidth(os.Getenv("COLUMNS"))
	}
	return s
}

// terminalWidth is the width of the terminal fd is: $COLUMNS when it is a number
// (a person's override), else what the terminal says, else 80.
func terminalWidth(fd int, columns string) int {
	if n, ok := columnsOverride(columns); ok {
		return n
	}
	if w, _, err := term.GetSize(fd); err == nil && w > 0 {
		return w
	}
	return 80
}

// inTerminal reports whether a person can answer a question on stdin.
func (s Streams) inTerminal() bool { return s.InIsTTY }

// App is what every command shares: streams, environment and the --workspace flag.
type App struct {
	Streams
	Getenv        func(string) string
	WorkspaceFlag string
	// AgentsHost is the agents commands' --host: "" for this machine (and, for list,
	// every host).
	AgentsHost string

	state *state.Store // opened once per workspace (State)
}

// State is the state of ws (nil outside a workspace), opened once per command.
func (a *App) State(ws *loader.Workspace) *state.Store {
	if a.state == nil || a.state.WS != ws {
		a.state = state.Open(ws, a.Getenv)
	}
	return a.state
}

// Color reports whether output may use ANSI colour: only on a terminal, never when
// NO_COLOR is set or TERM is dumb.
func (a *App) Color() bool {
	return a.OutIsTTY && a.Getenv("NO_COLOR") == "" && a.Getenv("TERM") != "dumb"
}

// Workspace discovers the workspace for this invocation.
func (a *App) Workspace() (*loader.Workspace, error) {
	return a.workspaceFrom("")
}

// workspaceFrom discovers the workspace walking up from cwd (a hook's payload names
// the agent's folder), or from the current folder when cwd is empty.
func (a *App) workspaceFrom(cwd string) (*loader.Workspace, error) {
	if cwd == "" {
		var err error
		if cwd, err = os.Getwd(); err != nil {
			return nil, fmt.Errorf("current folder: %w", err)
		}
	}
	ws, err := loader.Discover(loader.DiscoverOptions{
		Flag:          a.WorkspaceFlag,
		CtxWorkspace:  a.Getenv("CTX_WORKSPACE"),
		ClaudeProject: a.Getenv("CLAUDE_PROJECT_DIR"),
		Cwd:           cwd,
	})
	if err != nil {
		// ws is not nil with a *loader.ConfigError: the workspace on its defaults, for
		// the hooks and doctor, which go on; every other command stops on the error.
		return ws, inputError(err)
	}
	return ws, nil
}

// Now is the current time, or $CTX_NOW (RFC 3339) when set: tests and reproducible
// examples pin the clock with it.
func (a *App) Now() time.Time {
	if v := a.Getenv("CTX_NOW"); v != "" {
		if t, err := time.Parse(time.RFC3339, v); err == nil {
			return t
		}
	}
	return time.Now()
}

// Warn prints one warning line on stderr.
func (a *App) Warn(format string, args ...any) {
	fmt.Fprintf(a.Err, "ctx: warning: "+format+"\n", args...)
}

// Note prints a line on stderr about an ordinary state a person may not expect (an
// empty list, and what fills it): no warning, nothing wrong.
func (a *App) Note(format string, args ...any) {
	fmt.Fprintf(a.Err, "ctx: "+format+"\n", args...)
}

// warnProblems prints a warning for every link that takes one of the workspace's own
// folders outside it, and for every problem of the projects.
func (a *App) warnProblems(ws *loader.Workspace, projects ...*loader.Project) {
	for _, problem := range ws.LinkProblems() {
		a.Warn("%s", problem)
	}
	for _, p := range projects {
		for _, problem := range p.Problems {
			a.Warn("%s", problem)
		}
	}
}

// exitError carries an exit code with an error. A silent one has been reported
// already (a hook's blocking reason on stderr) and is not printed again.
type exitError struct {
	code   int
	err    error
	silent bool
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// inputError marks err as bad input (exit 2).
func inputError(err error) error {
	if err == nil {
		return nil
	}
	return &exitError{code: exitInput, err: err}
}

// exitCode maps an error to the documented exit codes: the one place where a kind of
// failure becomes a code.
func exitCode(err error) int {
	var ee *exitError
	var nf *loader.NotFoundError
	var amb *loader.AmbiguousError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &ee):
		return ee.code
	case errors.As(err, &nf), errors.As(err, &amb), errors.Is(err, loader.ErrNoWorkspace), errors.Is(err, loader.ErrNoSavePoint),
		errors.Is(err, loader.ErrBadName), errors.Is(err, events.ErrNoTarget), errors.Is(err, events.ErrNoProjects), errors.Is(err, demo.ErrNotEmpty),
		errors.Is(err, durable.ErrOutside):
		return exitInput
	}
	var hnf *hosts.NotFoundError
	var unreachable *hosts.UnreachableError
	var remote *hosts.RemoteError
	switch {
	case errors.As(err, &hnf):
		return exitInput
	case errors.As(err, &unreachable):
		return exitNotNow
	case errors.As(err, &remote):
		if remote.Code == exitInput || remote.Code == exitNotNow {
			return remote.Code
		}
		return exitFailure
	}
	switch agents.KindOf(err) {
	case agents.KindNotNow:
		return exitNotNow
	case agents.KindNotFound, agents.KindBadInput:
		return exitInput
	}
	return exitFailure
}

// Main runs ctx with args and returns the exit code. Errors are printed once, as
// "ctx: <error>", on stderr.
func Main(args []string, streams Streams, getenv func(string) string) int {
	app := &App{Streams: streams, Getenv: getenv}
	if streams.Width > 0 {
		fw := termtext.NewWriter(streams.Out, streams.Width)
		defer func() { _ = fw.Flush() }()
		app.Out = fw
	}
	root := newRootCmdFor(app, args)
	root.SetArgs(args)
	root.SetIn(streams.In)
	root.SetOut(app.Out)
	root.SetErr(streams.Err)
	err := root.Execute()
	if err == nil {
		return exitOK
	}
	var ee *exitError
	if errors.As(err, &ee) && ee.silent {
		return ee.code
	}
	fmt.Fprintf(streams.Err, "ctx: %v\n", err)
	// cobra reports an unknown command as a plain error.
	if strings.HasPrefix(err.Error(), "unknown command") {
		return exitInput
	}
	return exitCode(err)
}

// usageArgs wraps a cobra argument count check so that its complaint says what is
// missing or extra and how the command is used, and exits with code 2.
func usageArgs(check cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if check(cmd, args) == nil {
			return nil
		}
		what := "an argument is missing"
		if len(args) > 0 && check(cmd, args[:len(args)-1]) == nil {
			what = fmt.Sprintf("unexpected argument %q", args[len(args)-1])
		}
		name := strings.TrimPrefix(cmd.CommandPath(), cmd.Root().Name()+" ")
		return inputError(fmt.Errorf("%s: %s; usage: %s", name, what, cmd.UseLine()))
	}
}
