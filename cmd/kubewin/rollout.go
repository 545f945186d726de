package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/client-go/kubernetes"

	"github.com/kubewin/kubewin/internal/cliutil"
	"github.com/kubewin/kubewin/internal/rollout"
	"github.com/kubewin/kubewin/internal/rollout/api"
)

// rolloutFlags are shared by the rollout subcommands.
type rolloutFlags struct {
	access    clusterAccess
	namespace string
	pool      string
	output    string
}

func (f *rolloutFlags) register(cmd *cobra.Command, pool bool) {
	f.access.addFlags(cmd.Flags())
	cmd.Flags().StringVar(&f.namespace, "namespace", rollout.DefaultNamespace, "namespace of the rollouts, their Leases and the http probe pods")
	if pool {
		cmd.Flags().StringVar(&f.pool, "pool", "", "the pool: the Nodes labelled "+api.LabelPool+"=POOL (required)")
	}
	cmd.Flags().StringVarP(&f.output, "output", "o", "text", "output format: text or json")
}

func (f *rolloutFlags) client() (kubernetes.Interface, error) {
	if err := cliutil.ValidateFormat(f.output, "text", "json"); err != nil {
		return nil, err
	}
	_, c, err := tokenClient(f.access)
	return c, err
}

func newRolloutCmd(s streams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "rollout",
		Short: "Upgrade and patch a pool of joined nodes: a canary, then waves, each gated and rolled back on failure",
		Long: `rollout upgrades the nodes of a pool (the Nodes labelled ` + api.LabelPool + `=POOL) to a revision: component
versions and binaries (the files join installs, pinned by sha256) and, for Windows nodes, OS updates by KB.
The canary goes first and alone, then waves of --max-unavailable. Each node is cordoned, drained through
the Eviction API (PodDisruptionBudgets respected), told its target on its Node object — its kubewin node
service alone changes it and reports back — then gated: Node Ready, the node service healthy, its flow
check from the pod network, and the --probe gates; then uncordoned. A failed gate rolls the node back to
its previous revision, records why (an Event on the Node, the rollout's status) and halts the rollout;
other nodes are not touched.

State lives in the cluster (a ConfigMap per pool in --namespace, the nodes' annotations, a Lease per pool
so one orchestrator acts): a rollout survives the orchestrator's restart, and 'rollout start --detach'
leaves it to the in-cluster orchestrator ('rollout manifest').

Exit codes: 0 done (or, for status, the rollout succeeded or is under way), 1 the rollout halted or was
aborted, 2 bad input, a refusal (version-skew policy) or the API server unreachable.`,
	}
	cmd.AddCommand(newRolloutStartCmd(s), newRolloutStatusCmd(s), newRolloutRunCmd(s), newRolloutManifestCmd(s),
		newRolloutStateCmd(s, "pause", rollout.StatePaused, "Start no further node (nodes in progress finish their step)"),
		newRolloutStateCmd(s, "resume", rollout.StateRunning, "Continue a paused rollout"),
		newRolloutStateCmd(s, "abort", rollout.StateAborted, "End the rollout: no further node starts; nodes in progress finish their step"))
	return cmd
}

// timingFlags expose the bounds of a rollout's waits.
func timingFlags(cmd *cobra.Command, t *rollout.Timing) {
	f := cmd.Flags()
	f.DurationVar(&t.DrainTimeout, "drain-timeout", t.DrainTimeout, "bound on a node's drain (evictions a budget refuses are retried until then)")
	f.DurationVar(&t.ApplyTimeout, "apply-timeout", t.ApplyTimeout, "bound on the node service's apply, reboots included")
	f.DurationVar(&t.GateTimeout, "gate-timeout", t.GateTimeout, "bound on the gates after the apply")
	f.DurationVar(&t.Settle, "settle", t.Settle, "how long a node must have been Ready before its Ready gate passes")
	f.DurationVar(&t.RollbackTimeout, "rollback-timeout", t.RollbackTimeout, "bound on a rollback until the node is Ready")
}

func signalContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
}

func identity() string {
	if p := os.Getenv("POD_NAME"); p != "" {
		return p
	}
	h, _ := os.Hostname()
	return fmt.Sprintf("%s-%d", h, os.Getpid())
}

func newRolloutStartCmd(s streams) *cobra.Command {
	var (
		f      rolloutFlags
		to     string
		spec   rollout.Spec
		detach bool
		timing = rollout.DefaultTiming()
	)
	cmd := &cobra.Command{
		Use:   "start --pool POOL --to REVISION.yaml",
		Short: "Check and record a rollout, then run it here until it ends (or leave it to the in-cluster orchestrator with --detach)",
		Long: `start refuses, before anything changes, a revision that breaks the version-skew policy
(https://kubernetes.io/releases/version-skew-policy/: kubelet and kube-proxy never newer than the API
server, at most three minors older), a pool without nodes, and Windows updates for Linux nodes.

The revision file (YAML or JSON):
  name: v1-37-2-kb5040000
  kubelet: v1.37.2
  kubeProxy: v1.37.2
  binaries: {source: https://mirror.example/kubewin/v1.37.2, checksums: {kubelet.exe: <sha256>, ...}}
  osUpdates: [{kb: KB5040000, url: https://mirror.example/kb5040000.msu, sha256: <sha256>}]

--probe (repeatable):
  ready:KIND/NAMESPACE/NAME[,min=N]   the workload's pods on the node Ready (KIND deployment, daemonset,
                                      statefulset, replicaset; at least N, default 1)
  http:URL[,timeout=10s][,image=IMG]  a GET from a pod pinned to the node exits 0`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := f.client()
			if err != nil {
				return err
			}
			if to == "" || f.pool == "" {
				return cliutil.BadInputf("--pool and --to are required")
			}
			data, err := os.ReadFile(to)
			if err != nil {
				return cliutil.BadInputf("--to: %v", err)
			}
			rev, err := rollout.ParseRevision(data)
			if err != nil {
				return cliutil.BadInputf("--to %s: %v", to, err)
			}
			spec.Pool, spec.Revision = f.pool, *rev
			rec, err := rollout.Start(cmd.Context(), c, f.namespace, spec)
			if err != nil {
				return cliutil.BadInput(err)
			}
			fmt.Fprintf(s.err, "rollout %s recorded: pool %s to %s, canary %d, max unavailable %d\n", rec.ID, spec.Pool, rev.Name, spec.Canary, spec.MaxUnavailable)
			if detach {
				return printStatus(cmd.Context(), s, c, f)
			}
			return runRollout(cmd.Context(), s, c, f, timing)
		},
	}
	f.register(cmd, true)
	cmd.Flags().StringVar(&to, "to", "", "the revision file (required)")
	cmd.Flags().IntVar(&spec.MaxUnavailable, "max-unavailable", 1, "nodes of a wave (the pool's nodes that are not Ready already count against it)")
	cmd.Flags().IntVar(&spec.Canary, "canary", 1, "nodes that go first, one at a time, before any wave")
	cmd.Flags().StringArrayVar(&spec.Probes, "probe", nil, "a user gate (repeatable): ready:KIND/NAMESPACE/NAME[,min=N] or http:URL[,timeout=D][,image=IMG]")
	cmd.Flags().BoolVar(&detach, "detach", false, "only record the rollout; the in-cluster orchestrator runs it")
	timingFlags(cmd, &timing)
	return cmd
}

// runRollout runs the pool's rollout here until it ends, then prints its status.
func runRollout(ctx context.Context, s streams, c kubernetes.Interface, f rolloutFlags, timing rollout.Timing) error {
	ctx, stop := signalContext(ctx)
	defer stop()
	o := &rollout.Orchestrator{Client: c, Namespace: f.namespace, Identity: identity(), Timing: timing,
		Log: slog.New(slog.NewTextHandler(s.err, &slog.HandlerOptions{Level: slog.LevelInfo}))}
	rec, err := o.Run(ctx, f.pool)
	// Whether it halted is told below; a status that cannot be read is worth saying.
	if perr := printStatus(context.WithoutCancel(ctx), s, c, f); perr != nil && cliutil.CodeOf(perr) != cliutil.ExitFindings {
		return perr
	}
	switch {
	case errors.Is(err, rollout.ErrHalted):
		fmt.Fprintf(s.err, "kubewin: %v\n", err)
		return cliutil.Findings()
	case err != nil:
		return cliutil.BadInput(err)
	case rec != nil && rec.State == rollout.StateAborted:
		return cliutil.Findings()
	}
	return nil
}

func newRolloutStatusCmd(s streams) *cobra.Command {
	var f rolloutFlags
	cmd := &cobra.Command{
		Use:   "status --pool POOL",
		Short: "The pool's rollout: state, why it halted, each node's phase, revision and time",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := f.client()
			if err != nil {
				return err
			}
			if f.pool == "" {
				return cliutil.BadInputf("--pool is required")
			}
			return printStatus(cmd.Context(), s, c, f)
		},
	}
	f.register(cmd, true)
	return cmd
}

// printStatus prints the pool's rollout; Findings (exit 1) when it halted or was aborted.
func printStatus(ctx context.Context, s streams, c kubernetes.Interface, f rolloutFlags) error {
	st, err := rollout.ReadStatus(ctx, c, f.namespace, f.pool)
	if err != nil {
		return cliutil.BadInput(err)
	}
	if f.output == "json" {
		if err := json.NewEncoder(s.out).Encode(st); err != nil {
			return err
		}
	} else {
		holder := st.Holder
		if holder == "" {
			holder = "none (start one: rollout run, or the in-cluster orchestrator)"
		}
		fmt.Fprintf(s.out, "pool %s → %s: %s", st.Pool, st.Revision, st.State)
		if st.Reason != "" {
			fmt.Fprintf(s.out, " (%s)", st.Reason)
		}
		fmt.Fprintf(s.out, "\ncanary %d, max unavailable %d, started %s, orchestrator %s\n", st.Canary, st.MaxUnavailable, st.Started, holder)
		tw := tabwriter.NewWriter(s.out, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "NODE\tPHASE\tNODE SERVICE\tCURRENT\tPREVIOUS\tREADY\tCORDONED\tTIME\tREASON")
		for _, n := range st.Nodes {
			took := "-"
			if n.Seconds > 0 {
				took = (time.Duration(n.Seconds) * time.Second).String()
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%t\t%t\t%s\t%s\n", n.Node, n.Phase, dash(n.NodePhase), dash(n.Current), dash(n.Previous), n.Ready, n.Unschedulable, took, firstNonEmpty(n.Reason, n.NodeReason))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	if !st.OK() {
		return cliutil.Findings()
	}
	return nil
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func newRolloutStateCmd(s streams, verb string, to rollout.State, short string) *cobra.Command {
	var f rolloutFlags
	cmd := &cobra.Command{
		Use:   verb + " --pool POOL",
		Short: short,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := f.client()
			if err != nil {
				return err
			}
			if f.pool == "" {
				return cliutil.BadInputf("--pool is required")
			}
			if _, err := rollout.SetState(cmd.Context(), c, f.namespace, f.pool, to); err != nil {
				return cliutil.BadInput(err)
			}
			return printStatus(cmd.Context(), s, c, f)
		},
	}
	f.register(cmd, true)
	return cmd
}

func newRolloutRunCmd(s streams) *cobra.Command {
	var (
		f      rolloutFlags
		all    bool
		timing = rollout.DefaultTiming()
	)
	cmd := &cobra.Command{
		Use:   "run (--pool POOL | --all)",
		Short: "Run the orchestrator: one pool's rollout until it ends, or (--all, in-cluster) every pool's, forever",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := f.client()
			if err != nil {
				return err
			}
			if all == (f.pool != "") {
				return cliutil.BadInputf("give either --pool or --all")
			}
			if !all {
				return runRollout(cmd.Context(), s, c, f, timing)
			}
			ctx, stop := signalContext(cmd.Context())
			defer stop()
			o := &rollout.Orchestrator{Client: c, Namespace: f.namespace, Identity: identity(), Timing: timing,
				Log: slog.New(slog.NewJSONHandler(s.err, &slog.HandlerOptions{Level: slog.LevelInfo}))}
			return o.RunAll(ctx)
		},
	}
	f.register(cmd, true)
	cmd.Flags().BoolVar(&all, "all", false, "every pool's rollout in --namespace, each under its Lease (the in-cluster orchestrator)")
	timingFlags(cmd, &timing)
	return cmd
}

func newRolloutManifestCmd(s streams) *cobra.Command {
	var o rollout.ManifestOptions
	cmd := &cobra.Command{
		Use:   "manifest --image IMAGE",
		Short: "Print the in-cluster orchestrator: ServiceAccount, least-privilege RBAC and a Deployment with leader election",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			m, err := rollout.Manifest(o)
			if err != nil {
				return cliutil.BadInput(err)
			}
			_, err = s.out.Write(m)
			return err
		},
	}
	cmd.Flags().StringVar(&o.Image, "image", "", "image holding kubewin (required)")
	cmd.Flags().StringVar(&o.Namespace, "namespace", rollout.DefaultNamespace, "namespace of the orchestrator, the rollouts and their Leases")
	cmd.Flags().Int32Var(&o.Replicas, "replicas", 2, "replicas (one acts per pool; another takes over within a Lease duration)")
	return cmd
}
