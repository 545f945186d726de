package main

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/kubewin/kubewin/internal/cliutil"
	"github.com/kubewin/kubewin/pkg/api/v1alpha1"
)

func newExampleCmd(s streams) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "example",
		Short: "Print an example cluster description (the seed 000 Upstream-ToR cluster)",
		Long: `Print the embedded example cluster description: an existing Calico cluster with two
networks per node, joined by a Windows Server 2019 node whose pod-CIDR gateway is a keepalived
VIP on three Linux nodes. Use it as the starting point of your own cluster.yaml.

-o yaml prints the commented file as it is; -o json prints it parsed, with every default filled.`,
		Example: "  kubewin example > cluster.yaml\n  kubewin example -o json",
		Args:    cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			if err := cliutil.ValidateFormat(output, "yaml", "json"); err != nil {
				return err
			}
			if output == "yaml" {
				_, err := s.out.Write(v1alpha1.ExampleYAML())
				return err
			}
			c, _, err := v1alpha1.ParseExample()
			if err != nil {
				// The example is tested to parse clean; reaching this is a build defect.
				return fmt.Errorf("parse embedded example: %w", err)
			}
			enc := json.NewEncoder(s.out)
			enc.SetIndent("", "  ")
			return enc.Encode(c)
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "yaml", "output format: yaml or json")
	return cmd
}
