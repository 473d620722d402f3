package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"time"

	"github.com/spf13/cobra"

	"github.com/ctxtools/ctx/internal/claude"
	"github.com/ctxtools/ctx/internal/state"
)

// statusLineBudget bounds the person's own status-line command: Claude Code redraws
// the line several times a second and cancels a slow one itself.
const statusLineBudget = 5 * time.Second

type statusLineOptions struct {
	*App
	Chained []string // the person's own status-line command, after --
}

func newStatusLineCmd(app *App) *cobra.Command {
	opts := &statusLineOptions{App: app}
	return &cobra.Command{
		Use:   "statusline [-- COMMAND]",
		Short: "Status line for Claude Code: records the context window, then shows your own line",
		Long: `A command for Claude Code's statusLine setting. It reads the JSON Claude Code
passes to status lines and records the session's context window size (which only
Claude Code knows for sure: it depends on the model and the plan), so that ctx's
usage thresholds use the real window. Then it runs your own status-line command,
given after --, with the same input, and prints its output unchanged; without
one it prints a short line of its own.

'ctx init --statusline' installs it, wrapping the statusLine you had.`,
		Example: `  ctx statusline
  ctx statusline -- '~/.claude/statusline.sh'`,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Chained = args
			return runStatusLine(opts)
		},
	}
}

// statusInput is the part of Claude Code's status-line JSON that ctx reads.
type statusInput struct {
	HookEventName  string `json:"hook_event_name"`
	SessionID      string `json:"session_id"`
	TranscriptPath string `json:"transcript_path"`
	Cwd            string `json:"cwd"`
	Model          struct {
		ID          string `json:"id"`
		DisplayName string `json:"display_name"`
	} `json:"model"`
	Workspace struct {
		CurrentDir string `json:"current_dir"`
		ProjectDir string `json:"project_dir"`
	} `json:"workspace"`
	ContextWindow struct {
		Size           int      `json:"context_window_size"`
		UsedPercentage *float64 `json:"used_percentage"`
	} `json:"context_window"`
}

// runStatusLine never fails the status line over ctx's own part: a window it cannot
// record is a warning on stderr, which Claude Code does not show. Input that is not
// Claude Code's status-line JSON for a session (empty, not JSON, another event, no
// session id that is a safe identifier) records nothing; the line is printed all the
// same.
func runStatusLine(opts *statusLineOptions) error {
	data, _ := opts.readStdin(hookStdinWait)
	in, inErr := readStatusInput(data)
	if inErr != nil {
		opts.Warn("statusline: %v; nothing recorded", inErr)
	}
	if inErr == nil && in.ContextWindow.Size > 0 {
		ws, _ := opts.workspaceFrom(cmp.Or(in.Workspace.ProjectDir, in.Workspace.CurrentDir, in.Cwd))
		err := opts.State(ws).RecordWindow(state.WindowRecord{
			SessionID: in.SessionID, Window: in.ContextWindow.Size, Model: in.Model.ID, At: opts.Now().UTC(),
		})
		if err != nil {
			opts.Warn("statusline: %v", err)
		}
	}
	if len(opts.Chained) == 0 {
		return statusLineOwn(opts, in)
	}
	ctx, cancel := context.WithTimeout(context.Background(), statusLineBudget)
	defer cancel()
	var cmd *exec.Cmd
	if len(opts.Chained) == 1 {
		cmd = exec.CommandContext(ctx, "sh", "-c", opts.Chained[0])
	} else {
		cmd = exec.CommandContext(ctx, opts.Chained[0], opts.Chained[1:]...)
	}
	cmd.Stdin = bytes.NewReader(data)
	cmd.Stdout = opts.dataOut()
	cmd.Stderr = opts.Err
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		// Their status, as if Claude Code had run their command itself.
		code := ee.ExitCode()
		if code <= 0 {
			code = exitFailure // ended by a signal
		}
		return &exitError{code: code, err: err, silent: true}
	}
	if err != nil {
		return fmt.Errorf("statusline: %w", err)
	}
	return nil
}

// readStatusInput decodes the status-line JSON. What it could decode is returned even
// with an error, for the line to show. As with hook payloads, a field of an unexpected
// type is left empty rather than cost the rest.
func readStatusInput(data []byte) (statusInput, error) {
	var in statusInput
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return in, errors.New("status-line JSON: empty")
	}
	var te *json.UnmarshalTypeError
	if err := json.Unmarshal(data, &in); err != nil && !errors.As(err, &te) {
		return in, fmt.Errorf("status-line JSON: %w", err)
	}
	if err := claude.CheckEventName(in.HookEventName, claude.EventStatus); err != nil {
		return in, fmt.Errorf("status-line JSON: %w", err)
	}
	if err := state.CheckSessionID(in.SessionID); err != nil {
		return in, fmt.Errorf("status-line JSON: %w", err)
	}
	return in, nil
}

// statusLineOwn prints ctx's own short line: the model and how full the window is.
func statusLineOwn(opts *statusLineOptions, in statusInput) error {
	line := "ctx"
	if in.Model.DisplayName != "" {
		line += " · " + in.Model.DisplayName
	}
	if p := in.ContextWindow.UsedPercentage; p != nil {
		line += fmt.Sprintf(" · context %.0f%%", *p)
	}
	if in.ContextWindow.Size > 0 {
		line += fmt.Sprintf(" of %dk", in.ContextWindow.Size/1000)
	}
	_, err := fmt.Fprintln(opts.dataOut(), line)
	return err
}

// currentDir is the folder ctx runs in ("" when it cannot be read).
func currentDir() string {
	d, _ := os.Getwd()
	return d
}

// installStatusLine puts `ctx statusline` into Claude Code's statusLine setting of the
// settings file init writes, never clobbering one: a status line of the person's own
// (in that file, or with --statusline in another level's) is wrapped, so that it still
// shows, unchanged. Without --statusline, a status line elsewhere is left alone.
func installStatusLine(opts *initOptions, root string, level claude.Level, settings, bin string, keepBackup bool) error {
	w := opts.Out
	prefix := ""
	if opts.DryRun {
		prefix = "would "
	}
	own, err := readStatusLine(settings)
	if err != nil {
		return inputError(err)
	}
	chained, from := "", settings
	switch {
	case own.Present:
		if isCtx, _ := claude.CtxStatusLine(own.Command); isCtx {
			fmt.Fprintf(w, "statusline already runs ctx in %s\n", shortPath(root, settings))
			return nil
		}
		if !opts.StatusLine {
			fmt.Fprintf(w, "statusline your own in %s is left alone;\n          `%s --statusline` wraps it so ctx learns the real context window\n", shortPath(root, settings), initCommand(level))
			return nil
		}
		chained = own.Command
	default:
		for _, f := range claude.SettingsFiles(root, opts.Getenv) {
			if f.Path == settings {
				continue
			}
			if other, err := readStatusLine(f.Path); err == nil && other.Present && other.Command != "" {
				if isCtx, _ := claude.CtxStatusLine(other.Command); isCtx {
					fmt.Fprintf(w, "statusline already runs ctx in %s\n", shortPath(root, f.Path))
					return nil
				}
				if !opts.StatusLine {
					fmt.Fprintf(w, "statusline yours in %s is left alone;\n          `%s --statusline` wraps it so ctx learns the real context window\n", shortPath(root, f.Path), initCommand(level))
					return nil
				}
				chained, from = other.Command, f.Path
				break
			}
		}
	}
	changed, backup, err := claude.WriteStatusLine(settings, claude.StatusLineCommand(bin, chained), opts.DryRun, keepBackup)
	if err != nil {
		return inputError(err)
	}
	switch {
	case !changed:
		fmt.Fprintf(w, "statusline already runs ctx in %s\n", shortPath(root, settings))
	case chained != "":
		fmt.Fprintf(w, "statusline %sset in %s: ctx statusline,\n          then your own from %s, unchanged\n", prefix, shortPath(root, settings), shortPath(root, from))
	default:
		fmt.Fprintf(w, "statusline %sset in %s: ctx statusline\n", prefix, shortPath(root, settings))
	}
	if backup != "" {
		fmt.Fprintf(w, "          previous file kept as %s\n", shortPath(root, backup))
	}
	return nil
}

// readStatusLine reads the statusLine setting of a settings file (none when the file
// does not exist).
func readStatusLine(path string) (claude.StatusLine, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return claude.StatusLine{}, nil
	}
	if err != nil {
		return claude.StatusLine{}, err
	}
	sl, err := claude.ReadStatusLine(data)
	if err != nil {
		return sl, fmt.Errorf("%s: %w", path, err)
	}
	return sl, nil
}

// checkStatusLine says, for `ctx doctor`, whether Claude Code's status line runs
// `ctx statusline`. Without it ctx takes the window from the model table, which is
// right for most plans: a note, not a failure.
func checkStatusLine(out io.Writer, s style, root string, getenv func(string) string) {
	for _, f := range claude.SettingsFiles(root, getenv) {
		sl, err := readStatusLine(f.Path)
		if err != nil || !sl.Present {
			continue
		}
		if isCtx, chained := claude.CtxStatusLine(sl.Command); isCtx {
			detail := "runs ctx statusline (" + f.Path + ")"
			if chained != "" {
				detail += ", then yours"
			}
			fmt.Fprintf(out, "%s  %-10s %s\n", s.green("ok  "), "statusline", detail)
			return
		}
		fmt.Fprintf(out, "%s  %-10s %s\n", s.wrap("33", "note"), "statusline",
			"yours in "+f.Path+" does not tell ctx the context window; `ctx init --statusline` wraps it, unchanged")
		return
	}
	fmt.Fprintf(out, "%s  %-10s %s\n", s.wrap("33", "note"), "statusline",
		"none set; `ctx init` sets ctx statusline, which tells ctx the real context window")
}
