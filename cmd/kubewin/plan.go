package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/kubewin/kubewin/internal/atomicfs"
	"github.com/kubewin/kubewin/internal/bundle"
	"github.com/kubewin/kubewin/internal/cliutil"
	"github.com/kubewin/kubewin/internal/plan"
	"github.com/kubewin/kubewin/pkg/api/v1alpha1"
)

// defaultOutputDir is where plan writes its bundle when -d is not given.
const defaultOutputDir = "kubewin-out"

// summaryNodeLimit caps the node table of the text summary; plan.json has every node.
const summaryNodeLimit = 50

func newPlanCmd(s streams) *cobra.Command {
	var (
		file, outDir, output string
		fromCluster, force   bool
		access               clusterAccess
	)
	cmd := &cobra.Command{
		Use:   "plan [-f cluster.yaml] [-d DIR] [-o text|json]",
		Short: "Plan every node and render the files each node and its gateways need",
		Long: `plan reads a cluster description, decides everything (pod CIDRs, gateways and their
VRRP layout, routes, OutBoundNAT exceptions, labels, taints, images) and renders the bundle:

  DIR/plan.json                      every decision, as data
  DIR/cluster/                       RuntimeClasses, Calico IPReservation, ToR route table,
                                     flannel net-conf (flannel designs), gateway-<group>.yaml
                                     (kubewin gateway DaemonSets that keep the VIPs current)
  DIR/nodes/<windows node>/          CNI conf, HNS network + scripts, kubelet config + flags,
                                     kube-proxy config, containerd config, pause Dockerfile,
                                     services, firewall rules, README.md with the steps
  DIR/nodes/<linux node>/            modules-load.d, sysctl.d, containerd config, routes,
                                     keepalived.conf on gateway members

Without -f the embedded example (kubewin example) is planned. With --from-cluster the cluster
your kubeconfig points at is discovered (read-only) and -f, if given, is a partial description
whose values override the discovered ones (nodes are matched by name); the bundle then also holds
cluster.yaml, the effective description it was planned from. The bundle is written to a
temporary directory beside DIR and renamed into place: DIR holds either the previous bundle or
the complete new one, never a mix. A non-empty DIR without a previous bundle (plan.json) is
refused, not deleted, unless --force. On bad input nothing is written and every problem is listed
with its file, line, field and what was expected.

Exit codes: 0 written, 2 bad input or usage (nothing written).`,
		Example: `  kubewin plan                                # the embedded example into ./kubewin-out
  kubewin plan -f cluster.yaml -d /srv/kubewin
  kubewin plan -f cluster.yaml -o json | jq '.nodes[] | {name, podCIDR, gateway}'
  kubewin example > cluster.yaml && kubewin plan -f cluster.yaml
  kubewin plan --from-cluster -f overrides.yaml   # discovered values, overridden by overrides.yaml`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := cliutil.ValidateFormat(output, "text", "json"); err != nil {
				return err
			}
			if outDir == "" {
				return cliutil.BadInputf("--output-dir must not be empty")
			}
			if !force {
				if err := checkReplaceable(outDir); err != nil {
					return cliutil.BadInput(err)
				}
			}
			var (
				c     *v1alpha1.Cluster
				src   *v1alpha1.Source
				extra []atomicfs.File
				err   error
			)
			if fromCluster {
				c, src, extra, err = discoverClusterSpec(cmd.Context(), s, access, file)
			} else {
				c, src, err = loadClusterSpec(s, file)
			}
			if err != nil {
				return err
			}
			p, err := plan.New(c)
			if err != nil {
				return specError(src, err)
			}
			files, err := bundle.Build(p)
			if err != nil {
				return cliutil.BadInput(fmt.Errorf("render bundle: %w", err))
			}
			files = append(files, extra...)
			if err := atomicfs.WriteTree(outDir, files); err != nil {
				return cliutil.BadInput(fmt.Errorf("write bundle: %w", err))
			}
			if output == "json" {
				for _, f := range files {
					if f.Path == "plan.json" {
						_, err := s.out.Write(f.Data)
						return err
					}
				}
				return fmt.Errorf("render bundle: plan.json missing")
			}
			return writePlanSummary(s.out, p, outDir, len(files))
		},
	}
	cmd.Flags().StringVarP(&file, "file", "f", "", "cluster description (YAML or JSON); - for standard input (default: the embedded example)")
	cmd.Flags().StringVarP(&outDir, "output-dir", "d", defaultOutputDir, "directory the bundle is written to (replaced atomically)")
	cmd.Flags().StringVarP(&output, "output", "o", "text", "output format: text (summary) or json (plan.json, also written to DIR)")
	cmd.Flags().BoolVar(&force, "force", false, "replace DIR even if it is not empty and holds no previous bundle (its contents are deleted)")
	cmd.Flags().BoolVar(&fromCluster, "from-cluster", false, "discover the cluster through the API (see kubewin discover); -f then names a partial description whose values override discovered ones")
	access.addFlags(cmd.Flags())
	return cmd
}

// loadClusterSpec parses the cluster description named by -f: the embedded example when empty,
// standard input for "-".
func loadClusterSpec(s streams, file string) (*v1alpha1.Cluster, *v1alpha1.Source, error) {
	var (
		c   *v1alpha1.Cluster
		src *v1alpha1.Source
		err error
	)
	if file == "" {
		c, src, err = v1alpha1.ParseExample()
	} else {
		name, data, rerr := readSpecInput(s, file)
		if rerr != nil {
			return nil, nil, rerr
		}
		c, src, err = v1alpha1.Parse(name, data)
	}
	if err != nil {
		return nil, nil, specError(src, err)
	}
	return c, src, nil
}

// specError turns a spec or planner error into exit code 2 listing every problem with its
// file, line and field path (planner errors carry only field paths; src places them).
func specError(src *v1alpha1.Source, err error) error {
	var list v1alpha1.ErrorList
	if !errors.As(err, &list) {
		return cliutil.BadInput(err)
	}
	list = src.Annotate(list)
	var b strings.Builder
	fmt.Fprintf(&b, "invalid cluster description (%s):", cliutil.Plural(len(list), "problem"))
	for _, e := range list {
		b.WriteString("\n  ")
		b.WriteString(e.Error())
	}
	return cliutil.BadInput(errors.New(b.String()))
}

// checkReplaceable refuses an output directory whose contents plan would delete without them
// being a previous bundle: WriteTree replaces the whole directory, and `-d /srv` must not wipe
// what a user keeps there. Empty directories, missing ones and previous bundles (plan.json at
// the top) are fine.
func checkReplaceable(dir string) error {
	fi, err := os.Lstat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("output directory: %w", err)
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		return fmt.Errorf("output directory %s is a symbolic link; plan replaces the directory itself, so give its target", dir)
	}
	if !fi.IsDir() {
		return fmt.Errorf("output directory %s exists and is not a directory", dir)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("output directory: %w", err)
	}
	if len(entries) == 0 {
		return nil
	}
	if pj, err := os.Lstat(filepath.Join(dir, "plan.json")); err == nil && pj.Mode().IsRegular() {
		return nil
	}
	return fmt.Errorf("output directory %s is not empty and holds no previous kubewin bundle (no plan.json); plan replaces the whole directory, so choose a new or empty one, or pass --force to delete its %d entries", dir, len(entries))
}

func writePlanSummary(w io.Writer, p *plan.Plan, dir string, nfiles int) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Cluster %s: Kubernetes %s, design %s, Linux CNI %s, %s\n", p.Cluster.Name,
		p.Cluster.KubernetesVersion, p.Cluster.Design, p.Cluster.LinuxCNI, p.Cluster.ContainerRuntime)
	var nwin int
	for _, n := range p.Nodes {
		if n.Windows != nil {
			nwin++
		}
	}
	fmt.Fprintf(&b, "\nNodes: %d (%d Windows, %d Linux)\n", len(p.Nodes), nwin, len(p.Nodes)-nwin)
	nodes := p.Nodes
	if len(nodes) > summaryNodeLimit {
		// Windows nodes first: they are the ones this tool exists for.
		nodes = append([]plan.NodePlan(nil), nodes...)
		sort.SliceStable(nodes, func(i, j int) bool { return nodes[i].Windows != nil && nodes[j].Windows == nil })
		nodes = nodes[:summaryNodeLimit]
	}
	tw := tabwriter.NewWriter(&b, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "  NAME\tOS\tNODE IP\tPOD CIDR\tGATEWAY\tENDPOINT")
	for _, n := range nodes {
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s (%s)\t%s\t%s\n", n.Name, n.OS, n.NodeIP, n.PodCIDR, n.PodCIDRSource, dash(n.Gateway), dash(n.Endpoint))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(nodes) < len(p.Nodes) {
		fmt.Fprintf(&b, "  ... and %d more (see plan.json)\n", len(p.Nodes)-len(nodes))
	}
	if len(p.GatewayGroups) > 0 {
		b.WriteString("\nGateway groups:\n")
		for _, g := range p.GatewayGroups {
			var members []string
			for _, m := range g.Members {
				members = append(members, fmt.Sprintf("%s %s (priority %d)", m.Node, m.IP, m.Priority))
			}
			vrids := make([]string, len(g.VRIDs))
			for i, v := range g.VRIDs {
				vrids[i] = fmt.Sprint(v)
			}
			fmt.Fprintf(&b, "  %s on %s, VRRPv%d advert %gs: %s\n", g.Name, g.Interface, g.VRRPVersion, g.AdvertIntervalSeconds, strings.Join(members, ", "))
			fmt.Fprintf(&b, "    VRIDs %s; %s: %s\n", strings.Join(vrids, ", "), cliutil.Plural(len(g.VIPs), "VIP"), abbreviate(g.VIPs, 8))
		}
	}
	if len(p.TorRoutes) > 0 {
		fmt.Fprintf(&b, "\nRouter: %s (cluster/tor-routes.txt)\n", cliutil.Plural(len(p.TorRoutes), "static route"))
	}
	if len(p.Notes) > 0 {
		b.WriteString("\nNotes:\n")
		for _, n := range p.Notes {
			fmt.Fprintf(&b, "  - %s\n", n)
		}
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		abs = dir
	}
	fmt.Fprintf(&b, "\nWrote %s to %s\n", cliutil.Plural(nfiles, "file"), abs)
	_, err = io.WriteString(w, b.String())
	return err
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func abbreviate(items []string, max int) string {
	if len(items) <= max {
		return strings.Join(items, ", ")
	}
	return strings.Join(items[:max], ", ") + fmt.Sprintf(", ... (%d more)", len(items)-max)
}
