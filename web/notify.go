package web

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"time"
)

// The notify command: a person who wants to hear of an agent outside the browser (a
// desktop notification, ntfy, a webhook) configures one shell command,
//
//	serve:
//	  notify_command: notify-send "$CTX_NOTIFY_TITLE" "$CTX_NOTIFY_TEXT"
//
// and the server runs it with `sh -c` when an agent needs input or attention (a handoff
// that did not take), exits or fails. What
// the event says reaches the command only through environment variables, never in the
// command line: an agent's summary is untrusted text, and a variable's value is never
// parsed by the shell as code. The command is the person's own configuration; the API
// has no way to set or change it.

// NotifyConfig is the serve: section of .ctx/config.yaml.
type NotifyConfig struct {
	NotifyCommand string `yaml:"notify_command"`
}

// notifyTimeout bounds one run of the notify command.
const notifyTimeout = 10 * time.Second

// runNotify runs the configured command for one event, in the background; its output
// and failure go to the server's log (stderr).
func (s *Server) runNotify(event string, r Row, text string) {
	if s.opts.NotifyCommand == "" {
		return
	}
	title := r.Name
	switch event {
	case "agent.needs_input":
		title += " needs input"
	case "agent.exited":
		title += " exited"
	case "agent.failed":
		title += " failed"
	case "agent.attention":
		title += " needs attention"
	}
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), notifyTimeout)
		defer cancel()
		cmd := exec.CommandContext(ctx, "sh", "-c", s.opts.NotifyCommand)
		cmd.Env = append(os.Environ(),
			"CTX_EVENT="+event, "CTX_AGENT_ID="+r.ID, "CTX_AGENT_NAME="+r.Name, "CTX_PROJECT="+r.Project,
			"CTX_NOTIFY_TITLE="+title, "CTX_NOTIFY_TEXT="+text)
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			fmt.Fprintf(os.Stderr, "ctx serve: notify_command for %s of %s: %v\n", event, r.ID, err)
		}
	}()
}
