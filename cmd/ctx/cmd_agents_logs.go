package main

import (
	"fmt"

	"github.com/spf13/cobra"
)

type agentsLogsOptions struct {
	agentsApp
	Agent string
}

func newAgentsLogsCmd(app *App) *cobra.Command {
	o := &agentsLogsOptions{agentsApp: agentsApp{app}}
	return &cobra.Command{
		Use:     "logs AGENT",
		Short:   "Print an agent's screen and history, or the scrollback its pause kept",
		Example: "  ctx agents logs expiry | less",
		Args:    usageArgs(cobra.ExactArgs(1)),
		RunE: func(c *cobra.Command, args []string) error {
			o.Agent = args[0]
			return runAgentsLogs(o)
		},
	}
}

func runAgentsLogs(o *agentsLogsOptions) error {
	a, rec, err := o.one(o.Agent)
	if err != nil {
		return err
	}
	text, err := a.Logs(rec)
	if err != nil {
		return err
	}
	_, err = fmt.Fprint(o.dataOut(), text)
	return err
}
