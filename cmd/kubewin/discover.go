package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/kubewin/kubewin/internal/cliutil"
	"github.com/kubewin/kubewin/internal/discover"
)

func newDiscoverCmd(s streams) *cobra.Command {
	var (
		access    clusterAccess
		output    string
		printRBAC bool
	)
	cmd := &cobra.Command{
		Use:   "discover",
		Short: "Read a live cluster through the API and print its kubewin cluster spec",
		Long: `discover reads the cluster your kubeconfig points at (read-only: get and list) and prints a
kubewin.io/v1alpha1 Cluster. In YAML every value carries a comment naming its source; in JSON
the result has a provenance map. Sources that disagree are reported as conflicts (the most
trusted value is used), values no source has are listed with what to supply in your own file
(kubewin plan --from-cluster -f FILE lets that file override discovered values).

--print-rbac prints the read-only RBAC discover needs, bound to the user kubewin-discover (edit
the subjects): a ClusterRole for cluster-wide reads (Nodes, DaemonSets, ServiceCIDRs, Calico
pools, flannel's ConfigMap) and Roles in kube-system and default for the rest; -o json prints
them as one v1 List.

Exit codes: 0 complete spec; 1 conflicts, missing values or refused reads (the partial spec is
still printed); 2 bad flags, unreadable kubeconfig, an API server that cannot be reached
within --timeout or rejects the credentials, or a URL that is not a Kubernetes API server.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := cliutil.ValidateFormat(output, "yaml", "json"); err != nil {
				return err
			}
			if printRBAC {
				rbac := discover.RBACYAML
				if output == "json" {
					rbac = discover.RBACJSON
				}
				b, err := rbac()
				if err != nil {
					return err
				}
				_, err = s.out.Write(b)
				return err
			}
			cfg, opts, err := access.load()
			if err != nil {
				return err
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), access.timeout)
			defer cancel()
			res, err := discover.Discover(ctx, cfg, opts)
			if err != nil {
				var ue *discover.UnreachableError
				if errors.As(err, &ue) {
					return cliutil.BadInputf("%v (timeout %s)", err, access.timeout)
				}
				return cliutil.BadInput(err)
			}
			var out []byte
			if output == "json" {
				out, err = res.JSON()
			} else {
				out, err = res.YAML()
			}
			if err != nil {
				return err
			}
			if _, err := s.out.Write(out); err != nil {
				return fmt.Errorf("write spec: %w", err)
			}
			if res.HasFindings() {
				fmt.Fprint(s.err, res.Summary())
				return cliutil.Findings()
			}
			return nil
		},
	}
	f := cmd.Flags()
	access.addFlags(f)
	f.StringVarP(&output, "output", "o", "yaml", "output format: yaml (commented spec) or json (spec + provenance)")
	f.BoolVar(&printRBAC, "print-rbac", false, "print the read-only RBAC objects discover needs (-o yaml or json), then exit")
	return cmd
}
