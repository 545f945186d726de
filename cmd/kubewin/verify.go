package main

import (
	"github.com/spf13/cobra"

	"github.com/kubewin/kubewin/internal/cliutil"
)

// TODO(owner of 'verify'): placeholder until the command lands; replace this whole file.
func newVerifyCmd(s streams) *cobra.Command {
	return &cobra.Command{
		Use:    "verify",
		Short:  "not built yet",
		Hidden: true,
		RunE: func(*cobra.Command, []string) error {
			return cliutil.BadInputf("'verify' is not built yet")
		},
	}
}
