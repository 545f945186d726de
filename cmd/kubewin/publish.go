package main

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	"github.com/kubewin/kubewin/internal/bootstrap"
	"github.com/kubewin/kubewin/internal/cliutil"
	"github.com/kubewin/kubewin/internal/plan"
)

func newPublishCmd(s streams) *cobra.Command {
	var (
		access clusterAccess
		file   string
		dryRun bool
		output string
	)
	cmd := &cobra.Command{
		Use:   "publish [-f cluster.yaml]",
		Short: "Store the effective cluster description where joining nodes (and only they) can read it",
		Long: `publish plans the cluster description (so only a plannable one is published), then stores it
in the ConfigMap kube-system/kubewin-cluster (key cluster.yaml, with its sha256 in an annotation)
and lets the groups system:bootstrappers and system:nodes get exactly that ConfigMap: a bootstrap
token can read the description and nothing else in kube-system. A node joining with
kubewin join computes its own plan from it, its own facts and the pod CIDR it is given, so nodes
need no per-node file. Publishing again with the same description changes nothing.

Exit codes: 0 published (or printed with --dry-run), 1 the API server refused, 2 bad input.`,
		Example: `  kubewin publish -f cluster.yaml
  kubewin publish -f cluster.yaml --dry-run -o yaml   # the objects, nothing written`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := cliutil.ValidateFormat(output, "text", "json", "yaml"); err != nil {
				return err
			}
			c, src, err := loadClusterSpec(s, file)
			if err != nil {
				return err
			}
			if _, err := plan.New(c); err != nil {
				return specError(src, err)
			}
			data, err := yaml.Marshal(c)
			if err != nil {
				return fmt.Errorf("encode the cluster description: %w", err)
			}
			if dryRun {
				objs := bootstrap.PublishObjects(data)
				if output == "json" {
					return json.NewEncoder(s.out).Encode(struct {
						Objects any `json:"objects"`
					}{objs})
				}
				return printYAMLObjects(s, objs)
			}
			_, client, err := tokenClient(access)
			if err != nil {
				return err
			}
			changes, err := bootstrap.Publish(cmd.Context(), client, data)
			if err != nil {
				return fmt.Errorf("publish: %w", err)
			}
			if output == "json" {
				return json.NewEncoder(s.out).Encode(struct {
					ConfigMap string             `json:"configMap"`
					Changes   []bootstrap.Change `json:"changes"`
				}{bootstrap.PublishedNamespace + "/" + bootstrap.PublishedName, changes})
			}
			for _, ch := range changes {
				fmt.Fprintf(s.out, "%-9s %s\n", ch.Action, ch.Object)
			}
			return nil
		},
	}
	f := cmd.Flags()
	access.addFlags(f)
	f.StringVarP(&file, "file", "f", "", "cluster description (YAML or JSON); - for standard input (default: the embedded example)")
	f.BoolVar(&dryRun, "dry-run", false, "print the objects; write nothing")
	f.StringVarP(&output, "output", "o", "text", "output format: text, json or yaml (yaml: with --dry-run, the objects)")
	return cmd
}
