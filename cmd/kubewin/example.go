package main

import (
	"github.com/spf13/cobra"

	"github.com/kubewin/kubewin/internal/cliutil"
)

// TODO(owner of 'example'): placeholder until the command lands; replace this whole file.
func newExampleCmd(s streams) *cobra.Command {
	return &cobra.Command{
		Use:    "example",
		Short:  "not built yet",
		Hidden: true,
		RunE: func(*cobra.Command, []string) error {
			return cliutil.BadInputf("'example' is not built yet")
		},
	}
}
