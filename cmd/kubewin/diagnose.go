package main

import (
	"github.com/spf13/cobra"

	"github.com/kubewin/kubewin/internal/cliutil"
)

// TODO(owner of 'diagnose'): placeholder until the command lands; replace this whole file.
func newDiagnoseCmd(s streams) *cobra.Command {
	return &cobra.Command{
		Use:    "diagnose",
		Short:  "not built yet",
		Hidden: true,
		RunE: func(*cobra.Command, []string) error {
			return cliutil.BadInputf("'diagnose' is not built yet")
		},
	}
}
