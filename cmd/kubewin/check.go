package main

import (
	"github.com/spf13/cobra"

	"github.com/kubewin/kubewin/internal/cliutil"
)

// TODO(owner of 'check'): placeholder until the command lands; replace this whole file.
func newCheckCmd(s streams) *cobra.Command {
	return &cobra.Command{
		Use:    "check",
		Short:  "not built yet",
		Hidden: true,
		RunE: func(*cobra.Command, []string) error {
			return cliutil.BadInputf("'check' is not built yet")
		},
	}
}
