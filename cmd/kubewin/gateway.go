package main

import (
	"github.com/spf13/cobra"

	"github.com/kubewin/kubewin/internal/cliutil"
)

// TODO(owner of 'gateway'): placeholder until the command lands; replace this whole file.
func newGatewayCmd(s streams) *cobra.Command {
	return &cobra.Command{
		Use:    "gateway",
		Short:  "not built yet",
		Hidden: true,
		RunE: func(*cobra.Command, []string) error {
			return cliutil.BadInputf("'gateway' is not built yet")
		},
	}
}
