package main

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"sigs.k8s.io/yaml"

	"github.com/kubewin/kubewin/internal/bootstrap"
	"github.com/kubewin/kubewin/internal/cliutil"
	"github.com/kubewin/kubewin/internal/plan"
	"github.com/kubewin/kubewin/internal/render"
)

func newPublishCmd(s streams) *cobra.Command {
	var (
		access clusterAccess
		file   string
		dryRun bool
		output string
		prereq string
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

For the HostProcess designs (calico/hostprocess, flannel/hostprocess) it also applies what the
cluster lacks for Windows nodes — the files kubewin plan renders under cluster/hostprocess/: the
kube-proxy (and flannel) Windows HostProcess DaemonSets with their ConfigMaps, the Calico
settings (strictAffinity, the Installation's Windows fields, taken over from the operator's
install) — by server-side apply as field manager kubewin with strict field validation, so a
Windows node then needs only kubewin token create and kubewin join. --windows-prerequisites skip
leaves them to you.

Exit codes: 0 published (or printed with --dry-run), 1 the API server refused, 2 bad input.`,
		Example: `  kubewin publish -f cluster.yaml
  kubewin publish -f cluster.yaml --dry-run -o yaml   # the objects, nothing written`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := cliutil.ValidateFormat(output, "text", "json", "yaml"); err != nil {
				return err
			}
			if prereq != "apply" && prereq != "skip" {
				return cliutil.BadInputf("--windows-prerequisites %q: expected apply or skip", prereq)
			}
			c, src, err := loadClusterSpec(s, file)
			if err != nil {
				return err
			}
			p, err := plan.New(c)
			if err != nil {
				return specError(src, err)
			}
			var manifests []render.ClusterManifest
			if prereq == "apply" {
				if manifests, err = render.HostProcessClusterManifests(p); err != nil {
					return err
				}
			}
			data, err := yaml.Marshal(c)
			if err != nil {
				return fmt.Errorf("encode the cluster description: %w", err)
			}
			if dryRun {
				objs := bootstrap.PublishObjects(data)
				if output == "json" {
					files := map[string]string{}
					for _, m := range manifests {
						files[m.Name] = string(m.Data)
					}
					return json.NewEncoder(s.out).Encode(struct {
						Objects              any               `json:"objects"`
						WindowsPrerequisites map[string]string `json:"windowsPrerequisites,omitempty"`
					}{objs, files})
				}
				if err := printYAMLObjects(s, objs); err != nil {
					return err
				}
				for _, m := range manifests {
					fmt.Fprintf(s.out, "---\n# %s (applied by kubewin publish without --dry-run)\n%s", m.Name, m.Data)
				}
				return nil
			}
			cfg, client, err := tokenClient(access)
			if err != nil {
				return err
			}
			changes, err := bootstrap.Publish(cmd.Context(), client, data)
			if err != nil {
				return fmt.Errorf("publish: %w", err)
			}
			if len(manifests) > 0 {
				dyn, mapper, err := dynamicClients(cfg)
				if err != nil {
					return err
				}
				more, err := bootstrap.ApplyPrerequisites(cmd.Context(), dyn, mapper, manifests)
				changes = append(changes, more...)
				if err != nil {
					for _, ch := range changes {
						fmt.Fprintf(s.err, "%-9s %s\n", ch.Action, ch.Object)
					}
					return fmt.Errorf("publish: Windows prerequisites of design %s: %w", c.Spec.Design, err)
				}
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
	f.StringVar(&prereq, "windows-prerequisites", "apply", "HostProcess designs: apply (server-side, field manager kubewin) what the cluster lacks for Windows nodes (kubewin plan's cluster/hostprocess/), or skip")
	f.StringVarP(&output, "output", "o", "text", "output format: text, json or yaml (yaml: with --dry-run, the objects)")
	return cmd
}

// dynamicClients are a dynamic client and a REST mapper from the API server's discovery, for
// objects of kinds kubewin has no typed client for (the Tigera operator's, Calico's).
func dynamicClients(cfg *rest.Config) (dynamic.Interface, meta.RESTMapper, error) {
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, nil, cliutil.BadInputf("kubernetes client: %v", err)
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, nil, cliutil.BadInputf("kubernetes client: %v", err)
	}
	return dyn, restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc)), nil
}
