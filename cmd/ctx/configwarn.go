package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/ctxtools/ctx/internal/claude"
	"github.com/ctxtools/ctx/session"
)

// Consequences of a config problem, as the warning states them.
const (
	configFallback = "ctx goes on with its defaults and the built-in guard rules until it is fixed; `ctx doctor` checks it"
	guardEntryLeft = "the guard leaves that out and keeps its other rules; `ctx guard rules` lists what is in force"
)

// configProblem says, in one line, that the workspace's config could not be used and
// what ctx does instead: once per session for each hook and problem, so that neither
// the agent nor the person is told it on every prompt and tool call. The
// UserPromptSubmit hook says it on stdout, which Claude Code gives the model; the
// others, whose stdout is JSON or unread, on stderr.
func (h *hookRun) configProblem(err error, consequence string) {
	msg := oneLine(err.Error())
	if rt, rerr := session.OpenRuntime(h.Getenv); rerr == nil {
		sum := sha256.Sum256([]byte(msg))
		if first, _ := rt.FirstRun("config-"+h.Name, h.SessionID, hex.EncodeToString(sum[:8])); !first {
			return
		}
	}
	line := "ctx: warning: " + msg + " (" + consequence + ")"
	if h.Name == "check-context-size" {
		_ = claude.WriteText(h.Out, line)
		return
	}
	fmt.Fprintln(h.Err, line)
}

// oneLine joins the lines of a message (several problems joined) with "; ".
func oneLine(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", "; ")), " ")
}
