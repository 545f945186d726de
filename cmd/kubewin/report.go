package main

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/kubewin/kubewin/internal/atomicfs"
	"github.com/kubewin/kubewin/internal/check"
	"github.com/kubewin/kubewin/internal/check/rules"
	"github.com/kubewin/kubewin/internal/cliutil"
	"github.com/kubewin/kubewin/internal/diagnose"
	"github.com/kubewin/kubewin/internal/nodestatus"
	"github.com/kubewin/kubewin/internal/plan"
	"github.com/kubewin/kubewin/internal/report"
	"github.com/kubewin/kubewin/internal/verify"
	"github.com/kubewin/kubewin/pkg/api/v1alpha1"
)

func newReportCmd(s streams) *cobra.Command {
	var (
		file, out, bundleDir, dumpDir string
		logs, scenarios               []string
		fromCluster                   bool
		access                        clusterAccess
	)
	cmd := &cobra.Command{
		Use:   "report",
		Short: "Write one self-contained HTML page: topology, gateway holders, what works, what fails and why",
		Long: `report draws the cluster as kubewin plans it — the cluster network, Linux nodes (gateway members one
by one, the rest as classes), gateway groups with their VRIDs and current VIP holders, Windows nodes
with their HNS networks, .1 gateway and .2 host endpoint — and lays verify's results over it: the
flow matrix as a heat map, and every failing flow as a clickable path with the hop that breaks it
and its trace. A scenario switch redraws from results precomputed for each gateway member down and
for all members of a group down (or the --scenario list). With --bundle the bundle is checked and
with --logs the logs are diagnosed; their findings and fixes are listed beside the picture.

The page needs nothing else when opened: no network access, no fonts or scripts from elsewhere.
Large clusters are drawn as classes (identical nodes aggregated; click to list them).

Exit codes: 0 page written, 2 bad input. Failing flows do not change the exit code: they are
what the page is for (use kubewin verify to gate on them).`,
		Example: `  kubewin report -o report.html
  kubewin report -f cluster.yaml --bundle kubewin-out --logs node009-logs.zip -o report.html
  kubewin report -f cluster.yaml --dumps dumps/ -o now.html     # current holders and routes from dumps
  kubewin report --scenario gateway-down=master1,master2,master3 -o outage.html`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return cliutil.BadInputf("-o: give the HTML file to write")
			}
			var (
				c   *v1alpha1.Cluster
				src *v1alpha1.Source
				err error
			)
			inputs := []string{}
			if fromCluster {
				c, src, _, err = discoverClusterSpec(cmd.Context(), s, access, file)
				inputs = append(inputs, "the live cluster (discover)")
			} else {
				c, src, err = loadClusterSpec(s, file)
				if file == "" {
					inputs = append(inputs, "the embedded example")
				} else {
					inputs = append(inputs, file)
				}
			}
			if err != nil {
				return err
			}
			p, err := plan.New(c)
			if err != nil {
				return specError(src, err)
			}
			vin := verify.Input{Plan: p, Spec: c}
			if dumpDir != "" {
				// Real state (route tables, keepalived state, HNS dumps) overrides the plan per
				// node, as in kubewin verify --dump-dir: the page then shows current holders.
				fs, err := verify.LoadDumpDir(dumpDir)
				if err != nil {
					return cliutil.BadInput(err)
				}
				vin.Dumps = &verify.DumpSet{Files: fs}
				inputs = append(inputs, "dumps "+dumpDir)
			}
			if len(scenarios) == 0 {
				scenarios = report.ScenarioSet(vin)
			}
			runs, err := report.VerifyRuns(vin, scenarios)
			if err != nil {
				return cliutil.BadInput(err)
			}
			in := report.Input{Plan: p, Runs: runs, Inputs: inputs}
			if fromCluster {
				// The live nodes' health and where a rollout halted are findings of the page.
				_, client, err := tokenClient(access)
				if err != nil {
					return err
				}
				if in.Nodes, err = nodestatus.List(cmd.Context(), client); err != nil {
					return cliutil.BadInput(err)
				}
				in.Inputs = append(in.Inputs, fmt.Sprintf("%d Nodes' kubewin condition and rollout state", len(in.Nodes)))
			}
			if bundleDir != "" {
				ci := check.Input{Files: []string{bundleDir}}
				if file != "" && !fromCluster {
					ci.SpecFile = file
				} else if !fromCluster {
					ci.UseExample = true
				}
				ctx, _, err := check.Load(ci)
				if err != nil {
					return cliutil.BadInput(fmt.Errorf("check %s: %w", bundleDir, err))
				}
				rep := check.Run(ctx, rules.All(), check.Options{})
				in.Check = rep
				in.Inputs = append(in.Inputs, "bundle "+bundleDir+" (check)")
			}
			if len(logs) > 0 {
				cat, err := diagnose.DefaultCatalogue()
				if err != nil {
					return fmt.Errorf("diagnose catalogue: %w", err)
				}
				in.Diagnose = diagnose.Scan(context.Background(), cat, logs, nil, diagnose.Options{})
				in.Inputs = append(in.Inputs, fmt.Sprintf("%d log input(s) (diagnose)", len(logs)))
			}
			page, err := report.Build(in)
			if err != nil {
				return cliutil.BadInput(err)
			}
			var b bytes.Buffer
			if err := report.WriteHTML(&b, page); err != nil {
				return err
			}
			abs, err := filepath.Abs(out)
			if err != nil {
				return cliutil.BadInput(err)
			}
			if err := atomicfs.WriteFile(abs, b.Bytes(), 0o644); err != nil {
				return cliutil.BadInput(fmt.Errorf("write %s: %w", out, err))
			}
			failing := 0
			if len(page.Scenarios) > 0 {
				failing = len(page.Scenarios[0].Failures)
			}
			fmt.Fprintf(s.out, "wrote %s (%d KiB): %d nodes, %d gateway groups, %d scenarios, %d failing flow classes in the normal state, %d findings\n",
				out, (b.Len()+1023)/1024, page.Cluster.Nodes, len(page.Groups), len(page.Scenarios), failing, len(page.Findings))
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVarP(&file, "file", "f", "", "cluster description (default: the embedded example)")
	f.StringVarP(&out, "output", "o", "report.html", "HTML file to write (replaced atomically)")
	f.StringVar(&bundleDir, "bundle", "", "a bundle written by kubewin plan (or configs of your own) to check; findings are listed")
	f.StringVar(&dumpDir, "dumps", "", "directory of dumps, DIR/<node>/<file> (route -n, ip route, keepalived.data, HNS JSON), as in kubewin verify --dump-dir: current state instead of the plan")
	f.StringArrayVar(&logs, "logs", nil, "logs or log bundles to diagnose (repeatable); findings are listed")
	f.StringArrayVar(&scenarios, "scenario", nil, "scenarios to precompute, as in kubewin verify (repeatable; default: each gateway member down, all members of a group down)")
	f.BoolVar(&fromCluster, "from-cluster", false, "discover the cluster through the API (see kubewin discover); -f then overrides discovered values")
	access.addFlags(f)
	return cmd
}
