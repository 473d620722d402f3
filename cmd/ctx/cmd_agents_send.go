package main

import (
	"github.com/spf13/cobra"
)

type agentsSendOptions struct {
	agentsApp
	Agent string
	Text  string
}

func newAgentsSendCmd(app *App) *cobra.Command {
	o := &agentsSendOptions{agentsApp: agentsApp{app}}
	return &cobra.Command{
		Use:     "send AGENT TEXT",
		Short:   "Type a prompt into an idle agent",
		Example: `  ctx agents send expiry "Run the tests again"`,
		Args:    usageArgs(cobra.ExactArgs(2)),
		RunE: func(c *cobra.Command, args []string) error {
			o.Agent, o.Text = args[0], args[1]
			return runAgentsSend(o)
		},
	}
}

func runAgentsSend(o *agentsSendOptions) error {
	a, rec, err := o.one(o.Agent)
	if err != nil {
		return err
	}
	return a.Send(rec, o.Text)
}
