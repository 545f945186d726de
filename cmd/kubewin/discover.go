package main

import (
	"github.com/spf13/cobra"

	"github.com/kubewin/kubewin/internal/cliutil"
)

// TODO(owner of 'discover'): placeholder until the command lands; replace this whole file.
func newDiscoverCmd(s streams) *cobra.Command {
	return &cobra.Command{
		Use:    "discover",
		Short:  "not built yet",
		Hidden: true,
		RunE: func(*cobra.Command, []string) error {
			return cliutil.BadInputf("'discover' is not built yet")
		},
	}
}
