package main

import (
	"github.com/spf13/cobra"

	"github.com/kubewin/kubewin/internal/cliutil"
)

// TODO(owner of 'plan'): placeholder until the command lands; replace this whole file.
func newPlanCmd(s streams) *cobra.Command {
	return &cobra.Command{
		Use:    "plan",
		Short:  "not built yet",
		Hidden: true,
		RunE: func(*cobra.Command, []string) error {
			return cliutil.BadInputf("'plan' is not built yet")
		},
	}
}
