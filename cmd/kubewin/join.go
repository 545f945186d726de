package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubewin/kubewin/internal/cliutil"
	"github.com/kubewin/kubewin/internal/join"
	"github.com/kubewin/kubewin/internal/nodecheck"
	"github.com/kubewin/kubewin/internal/noderun"
	"github.com/kubewin/kubewin/internal/nodestatus"
	"github.com/kubewin/kubewin/internal/render"
	"github.com/kubewin/kubewin/internal/verify"
	"github.com/kubewin/kubewin/internal/winnode"
)

func newJoinCmd(s streams) *cobra.Command {
	var (
		o         join.Options
		binaries  string
		root      string
		initSys   string
		dryRun    bool
		output    string
		tokenFile string
	)
	cmd := &cobra.Command{
		Use:   "join --server URL --token T --ca-cert-hash sha256:H --binaries DIR",
		Short: "Make this machine a node of the cluster: discovery, credentials, files, services, Ready",
		Long: `join takes this machine to a Ready node with the command kubewin token create printed:
it reads kube-public/cluster-info, checks that the token signed it and that the CA is the one
--ca-cert-hash pins (a different CA is refused: exit 2), writes the kubelet's bootstrap
kubeconfig (0600), reads the cluster description kubewin publish stored and plans this node from
it and its own facts, installs the binaries from --binaries (each checked against SHA256SUMS;
with --binaries official:kubernetes=V,containerd=V,cni=V they are first downloaded from the
projects' releases and checked against the checksums published there, as kubewin mirror does),
renders the node's files with the same renderer as kubewin plan, installs the kubewin node
service (it supervises containerd and the kubelet), waits for the kubelet's TLS bootstrap and its
Node, reads the pod CIDR kube-controller-manager gave it and configures what depends on it,
waits for Ready and runs a check pod.

On Windows (run elevated; the Containers feature installed) the same steps write the bundle's
files below --root (C:\k, the description's windows.installDir), register containerd, the
kubelet and kube-proxy with the service control manager (recovery actions: restart), open the
firewall ports, and install the kubewin-node Windows service. Once the Node has its pod CIDR,
the HNS networks, the host endpoint and the host routes are created through HNS (hcn) and
kube-proxy starts on them; the node service keeps them after reboots and HNS restarts.
Designs: upstream-ToR and host-gw (flannel Windows nodes use the bundle).

Every step compares what is there with what should be: a second join changes nothing, and a join
that failed resumes where it stopped. Every wait is bounded (--timeout) and ends with the
reason it was still waiting.

Exit codes: 0 joined, 1 a step failed (run again to resume), 2 bad input or a CA pin mismatch.`,
		Example: `  kubewin join --server https://10.0.0.10:6443 --token abcdef.0123456789abcdef \
      --ca-cert-hash sha256:1234… --binaries /opt/kubewin/binaries
  kubewin join --server https://10.0.0.10:6443 --token abcdef.0123456789abcdef \
      --ca-cert-hash sha256:1234… --binaries official:kubernetes=v1.33.1,containerd=2.1.4,cni=1.7.1
  kubewin join --dry-run      # the steps, nothing done`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := cliutil.ValidateFormat(output, "text", "json"); err != nil {
				return err
			}
			if dryRun {
				return printJoinSteps(s, output)
			}
			if tokenFile != "" {
				if o.Token != "" {
					return cliutil.BadInputf("--token and --token-file: give one")
				}
				data, err := os.ReadFile(tokenFile)
				if err != nil {
					return cliutil.BadInputf("--token-file: %v", err)
				}
				o.Token = strings.TrimSpace(string(data))
			}
			if binaries == "" {
				return cliutil.BadInputf("--binaries: the directory or https mirror with the node binaries and SHA256SUMS, or official:kubernetes=V,containerd=V,cni=V, is required")
			}
			o.Binaries = join.Binaries{Source: binaries}
			self, err := os.Executable()
			if err != nil {
				return fmt.Errorf("locate the kubewin binary: %w", err)
			}
			root, err = filepath.Abs(root)
			if err != nil {
				return cliutil.BadInputf("--root: %v", err)
			}
			paths := join.NodePathsFor(root)
			host, err := join.NewHost(paths, root, initSys, self)
			if err != nil {
				return joinError(err)
			}
			if output == "text" {
				o.Log = s.err
			}
			// On SIGINT/SIGTERM the waits end and the step's cleanup runs (the check pod's
			// manifest is removed); a new run resumes.
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			res, err := join.Run(ctx, o, host, paths)
			if output == "json" && res != nil {
				if jerr := json.NewEncoder(s.out).Encode(res); jerr != nil && err == nil {
					err = jerr
				}
			} else if res != nil && err == nil {
				fmt.Fprintf(s.out, "node %s joined in %s: pod CIDR %s, check pod IP %s\n", res.Node,
					res.Duration.Round(100*time.Millisecond), res.PodCIDR, res.PodIP)
				if !res.Changed() {
					fmt.Fprintln(s.out, "nothing changed: the node was already joined")
				}
			}
			return joinError(err)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Server, "server", "", "API server URL (https://HOST:PORT)")
	f.StringVar(&o.Token, "token", "", "bootstrap token (kubewin token create)")
	f.StringVar(&tokenFile, "token-file", "", "read the bootstrap token from this file (keeps it out of the process list and shell history)")
	f.StringVar(&o.CACertHash, "ca-cert-hash", "", "sha256:<hex> of the cluster CA's public key")
	f.StringVar(&binaries, "binaries", "", "directory or https mirror URL with SHA256SUMS and the node binaries (kubewin mirror makes one): Linux containerd, containerd-shim-runc-v2, kubelet, cni/<plugin>; Windows containerd.exe, containerd-shim-runhcs-v1.exe, kubelet.exe, kube-proxy.exe, kube-log-runner.exe, cni/<plugin>.exe. "+
		"Or official:kubernetes=V,containerd=V,cni=V[,kubernetes-release-url=URL][,containerd-release-url=URL][,cni-release-url=URL]: the projects' release downloads (dl.k8s.io, GitHub releases unless a URL names a copy), each checked against its published .sha256/.sha512/.sha256sum, kept below the data directory")
	f.StringVar(&o.NodeName, "node-name", "", "node name (default: the hostname, lowercased)")
	f.StringArrayVar(&o.KubeletDropIns, "kubelet-config-dropin", nil, "a KubeletConfiguration fragment for the kubelet's drop-in directory (repeatable): local overrides")
	f.StringVar(&root, "root", join.DefaultRoot, "prefix of every path join writes (a test's directory, an image being built); on Windows the install dir")
	f.StringVar(&initSys, "init", "systemd", "how the node service runs: systemd (installed and started) or none (your supervisor runs `kubewin node run`)")
	f.DurationVar(&o.Timeout, "timeout", 5*time.Minute, "bound of every wait")
	f.StringSliceVar(&o.Skip, "skip", nil, "steps not to run (names: see --dry-run)")
	f.BoolVar(&dryRun, "dry-run", false, "list the steps; do nothing")
	f.StringVarP(&output, "output", "o", "text", "output format: text or json")
	return cmd
}

func joinError(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, join.ErrBadInput), errors.Is(err, join.ErrCAPinMismatch):
		return cliutil.BadInput(err)
	}
	// A step that failed (a wait that ran out, a refusal by the API server): exit 1, and a new
	// run resumes.
	return &cliutil.ExitError{Code: cliutil.ExitFindings, Err: err}
}

func printJoinSteps(s streams, output string) error {
	type step struct {
		Name        string `json:"name"`
		Description string `json:"description"`
	}
	var steps []step
	for _, st := range join.Steps() {
		steps = append(steps, step{st.Name, st.Description})
	}
	if output == "json" {
		return json.NewEncoder(s.out).Encode(struct {
			Steps []step `json:"steps"`
		}{steps})
	}
	tw := tabwriter.NewWriter(s.out, 0, 4, 2, ' ', 0)
	for i, st := range steps {
		fmt.Fprintf(tw, "%d\t%s\t%s\n", i+1, st.Name, st.Description)
	}
	return tw.Flush()
}

func newNodeCmd(s streams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "node",
		Short: "The node side: the node service (run) and live flow checks (check)",
	}
	cmd.AddCommand(newNodeRunCmd(s), newNodeCheckCmd(s), newNodeFactsCmd(s))
	return cmd
}

func newNodeFactsCmd(s streams) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "facts",
		Short: "Print the Windows host facts the node service's decisions depend on",
		Long: `facts prints what the node service reads from this Windows host before it acts: the network
interfaces (NICs bound to a vSwitch included, with their IP unbound, and IPv4 forwarding per
interface), the Host Network Service's state, the HNS networks and endpoints as HCN returns them,
the IPv4 routes, the number of load balancers, and the node services' states. A call that fails
is reported in errors. Attach the JSON to a bug report: kubewin's tests load such documents into
their model of a Windows host (internal/winnode/testdata/facts), so a real node's state becomes a
test. Run elevated on a Windows node.

Exit codes: 0 printed, 2 not a Windows host or bad flags.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := cliutil.ValidateFormat(output, "json", "text"); err != nil {
				return err
			}
			h, err := factsHost()
			if err != nil {
				return err
			}
			f := winnode.GatherFacts(cmd.Context(), h, []string{"containerd", "kubelet", "kube-proxy", join.NodeServiceName})
			if host, err := os.Hostname(); err == nil {
				f.Source = "kubewin node facts on " + host
			}
			if output == "json" {
				enc := json.NewEncoder(s.out)
				enc.SetIndent("", "  ")
				return enc.Encode(f)
			}
			tw := tabwriter.NewWriter(s.out, 0, 4, 2, ' ', 0)
			fmt.Fprintf(tw, "hns\t%s\n", f.HNS)
			for _, a := range f.Adapters {
				fmt.Fprintf(tw, "interface\t%s\t%s\t%v\tbound=%v virtual=%v forwarding=%v\n", a.Name, a.MAC, a.IPv4, a.Bound, a.Virtual, a.Forwarding)
			}
			for _, n := range f.Networks {
				fmt.Fprintf(tw, "network\t%s\t%s %s gw %s\tadapter %q\n", n.Name, n.Type, n.Prefix, n.Gateway, n.AdapterName)
			}
			for _, e := range f.Endpoints {
				fmt.Fprintf(tw, "endpoint\t%s\t%s/%d\tattached=%v\n", e.Name, e.IP, e.PrefixLength, e.HostAttached)
			}
			for _, r := range f.Routes {
				fmt.Fprintf(tw, "route\t%s\n", r)
			}
			fmt.Fprintf(tw, "load balancers\t%d\n", f.LoadBalancers)
			for _, name := range []string{"containerd", "kubelet", "kube-proxy", join.NodeServiceName} {
				fmt.Fprintf(tw, "service\t%s\t%s\n", name, f.Services[name])
			}
			for what, e := range f.Errors {
				fmt.Fprintf(tw, "error\t%s\t%s\n", what, e)
			}
			return tw.Flush()
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "json", "output format: json or text")
	return cmd
}

func newNodeRunCmd(s streams) *cobra.Command {
	var (
		root           string
		healthInterval time.Duration
		checkInterval  time.Duration
	)
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Run the node service: keep the node's services and pod network as kubewin join made them, and publish its health",
		Long: `run keeps the node's services running from <root>/var/lib/kubewin/services.json: it starts each
one when what it needs is there (the services it comes after, the files it waits for), restarts
one that exits with a bounded backoff, applies a changed manifest, rotates their logs under
<root>/var/log/kubewin, and writes its state to <root>/var/lib/kubewin/status.json. kubewin join
installs it as a systemd unit; run it under another supervisor with join --init none.
Every --health-interval it judges the node (join progress, services running, a failing service's
recent log run through kubewin diagnose) and publishes the result with the node's own credential
as the Node condition KubewinNodeService, with an Event on every change: kubewin status shows it.
It stops its services on SIGTERM/SIGINT.

On Windows join installs it as the kubewin-node Windows service. There the node's services are
the service control manager's (containerd, the kubelet, kube-proxy) and every --health-interval it
makes one bounded pass: the HNS networks, the host endpoint and the host routes for the Node's pod
CIDR (re-created after a reboot, re-bound to the cluster adapter found by MAC), the services
started in order (the kubelet and kube-proxy only once the network exists), and kube-proxy
restarted after an HNS restart dropped its load balancers. Its own log is
<root>\logs\kubewin-node.log.

On both, it carries out kubewin rollout's requests for this node, read from its own Node's
rollout.kubewin.io/ annotations: a revision's binaries fetched and checked against their sha256,
the running ones renamed aside (kept for a rollback), services restarted in dependency order,
Windows OS updates installed with wusa or DISM and the machine restarted when one asks for it;
each phase is answered on the Node (state in <root>/var/lib/kubewin/upgrade-state.json, or
<root>\upgrade-state.json on Windows).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			paths, host, err := nodeHost(root)
			if err != nil {
				return err
			}
			return runNodeService(cmd.Context(), s.err, filepath.Join(paths.LogDir, "kubewin-node.log"), func(ctx context.Context, log *slog.Logger) error {
				check := func(ctx context.Context) (string, error) { return flowCheck(ctx, host, paths) }
				if wh, ok := host.(*join.WindowsHost); ok {
					return runWindowsNode(ctx, wh, paths, healthInterval, checkInterval, check, log)
				}
				return runLinuxNode(ctx, host, paths, healthInterval, checkInterval, check, log)
			})
		},
	}
	cmd.Flags().DurationVar(&checkInterval, "check-interval", 5*time.Minute, "how often the live flow checks of kubewin node check run from the service (0: never); a failed flow makes the node unhealthy ("+nodestatus.ReasonFlowCheckFailing+")")
	cmd.Flags().DurationVar(&healthInterval, "health-interval", 10*time.Second, "how often the node's health is assessed and published (Node condition "+nodestatus.ConditionType+")")
	cmd.Flags().StringVar(&root, "root", join.DefaultRoot, "prefix of every path (as given to kubewin join --root)")
	return cmd
}

// runLinuxNode supervises containerd and the kubelet from the manifest join wrote and runs the
// health loop beside the supervisor until ctx ends; then the supervisor stops the services.
func runLinuxNode(ctx context.Context, host join.Host, paths render.NodePaths, interval, checkInterval time.Duration,
	check func(context.Context) (string, error), log *slog.Logger) error {
	manifest := join.ServicesManifest(paths)
	sup := &noderun.Supervisor{
		ManifestPath: manifest,
		StatusPath:   filepath.Join(paths.DataDir, "status.json"),
		Logger:       log,
	}
	up := linuxNodeUpgrade(paths, sup, check, log)
	loop, err := healthLoop(paths, func() (*noderun.Manifest, error) { return noderun.LoadManifest(manifest) }, sup.Status,
		func(ctx context.Context) ([]string, error) { up.step(ctx); return repairNode(ctx, host, paths) }, interval, log)
	if err != nil {
		return err
	}
	loop.Check, loop.CheckInterval = check, checkInterval
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan struct{})
	go func() { loop.Run(ctx); close(done) }()
	err = sup.Run(ctx)
	cancel()
	<-done
	return err
}

// runWindowsNode keeps a joined Windows node: every tick a pass of winnode's Reconciler (HNS
// networks, host endpoint, routes, services in order, kube-proxy after HNS restarts) and the
// same assessment and publishing as on Linux. The node's services are the SCM's, not children
// of this process: they keep running when the node service stops.
func runWindowsNode(ctx context.Context, h *join.WindowsHost, paths render.NodePaths, interval, checkInterval time.Duration,
	check func(context.Context) (string, error), log *slog.Logger) error {
	ws := &join.WindowsNodeService{Host: h, Paths: paths, ExpectedLoadBalancers: func(ctx context.Context) (int, error) {
		return servicesWithEndpoints(ctx, paths)
	}}
	up := windowsNodeUpgrade(paths, h, check, log)
	loop, err := healthLoop(paths, ws.Manifest, ws.Status, func(ctx context.Context) ([]string, error) {
		up.step(ctx)
		repaired, err := ws.Repair(ctx)
		return repaired, credentialProblem(err)
	}, interval, log)
	if err != nil {
		return err
	}
	loop.Check, loop.CheckInterval = check, checkInterval
	loop.Run(ctx)
	return nil
}

// flowCheck runs kubewin node check's probes and names the failed flows ("" when all passed).
// A node that has no plan yet (not joined up to its pod CIDR) is not checked.
func flowCheck(ctx context.Context, host join.Host, paths render.NodePaths) (string, error) {
	pl, err := join.LoadPlanned(ctx, host, paths)
	if err != nil {
		return "", fmt.Errorf("this node's plan: %w", err)
	}
	rep, err := nodecheck.Run(ctx, paths, pl.Plan, pl.Node, 3*time.Second)
	if err != nil {
		return "", err
	}
	var failed []string
	for _, r := range rep.Results {
		if r.Verdict != verify.VerdictOK {
			failed = append(failed, r.Flow+" "+r.Target+": "+r.Detail)
		}
	}
	return strings.Join(failed, "; "), nil
}

// healthLoop assesses and publishes the node's health with the node's own credential, after
// every repair pass, on Linux and Windows alike.
func healthLoop(paths render.NodePaths, manifest func() (*noderun.Manifest, error), status func() noderun.Status,
	repair func(context.Context) ([]string, error), interval time.Duration, log *slog.Logger) (*nodestatus.Loop, error) {
	assessor, err := nodestatus.NewAssessor(manifest)
	if err != nil {
		return nil, err
	}
	return &nodestatus.Loop{
		Assessor:  assessor,
		Status:    status,
		Join:      func() *nodestatus.JoinProgress { return joinProgress(paths) },
		Publisher: func() (*nodestatus.Publisher, error) { return nodePublisher(paths) },
		Repair:    repair,
		Interval:  interval,
		Log:       log,
	}, nil
}

// servicesWithEndpoints counts the Services that have a ready endpoint (EndpointSlices, which
// the node may read: system:node-proxier, bound by kubewin token create). kube-proxy
// (winkernel) programs an HNS load balancer for each and none for a Service without endpoints
// (kubernetes v1.37.1 pkg/proxy/winkernel/proxier.go syncProxyRules: "Endpoint information not
// available for service, not applying any policy", then hns.getLoadBalancer for the ClusterIP);
// the cluster's own kubernetes Service always has one, so zero load balancers on a synced
// kube-proxy means it lost them.
func servicesWithEndpoints(ctx context.Context, paths render.NodePaths) (int, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", paths.KubeletKubeconfig())
	if err != nil {
		return 0, err
	}
	cfg.Timeout = 15 * time.Second
	c, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return 0, err
	}
	slices, err := c.DiscoveryV1().EndpointSlices("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return 0, fmt.Errorf("list EndpointSlices: %w", err)
	}
	services := map[string]bool{}
	for _, es := range slices.Items {
		svc := es.Labels[discoveryv1.LabelServiceName]
		for _, ep := range es.Endpoints {
			if svc != "" && (ep.Conditions.Ready == nil || *ep.Conditions.Ready) {
				services[es.Namespace+"/"+svc] = true
			}
		}
	}
	return len(services), nil
}

// repairNode puts back what join configured that can get lost (join.Reconcile); before join has
// read the pod CIDR there is nothing to repair.
func repairNode(ctx context.Context, host join.Host, paths render.NodePaths) ([]string, error) {
	if err := join.CheckCredential(paths, time.Now()); err != nil {
		return nil, credentialProblem(err)
	}
	changes, err := join.Reconcile(ctx, host, paths)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	var out []string
	for _, c := range changes {
		out = append(out, c.What+" ("+c.Action+")")
	}
	return out, err
}

func joinProgress(paths render.NodePaths) *nodestatus.JoinProgress {
	st, err := join.ReadState(paths)
	if err != nil {
		return nil
	}
	return &nodestatus.JoinProgress{Joined: st.Joined, Step: st.Step, Error: st.Error}
}

// nodePublisher publishes as the node, with the kubelet's client certificate, once join has
// recorded the node's name and the kubelet has its credential.
func nodePublisher(paths render.NodePaths) (*nodestatus.Publisher, error) {
	st, err := join.ReadState(paths)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(filepath.Join(paths.PKIDir, "kubelet-client-current.pem")); err != nil {
		return nil, err
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", paths.KubeletKubeconfig())
	if err != nil {
		return nil, err
	}
	cfg.Timeout = 15 * time.Second
	c, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return &nodestatus.Publisher{Client: c, Node: st.Node, Component: "kubewin-node"}, nil
}

func newNodeCheckCmd(s streams) *cobra.Command {
	var (
		root    string
		timeout time.Duration
		output  string
	)
	cmd := &cobra.Command{
		Use:   "check",
		Short: "Live flow checks from this node, from a real pod network address",
		Long: `check adds a probe to this node's pod network with the node's own CNI configuration (as the
container runtime does for a pod), checks from it that the pod CIDR's gateway answers, that the
node's own IP answers (the kubelet's port), that the kubernetes Service's ClusterIP completes a
TLS handshake and that the cluster DNS Service answers for kubernetes.default, then removes the
probe. Results use kubewin verify's flow kinds, so a failure points at the hop verify models.
Nodes joined by kubewin join; run as root. On Windows (elevated) the probes are sent from the
network compartment of a pod on the node (the check pod join starts), so they pass through the
host endpoint and the host's forwarding as pod traffic does; without a pod there, from the host
endpoint's address (cbr0, .2 of the pod CIDR), which does not exercise forwarding.

Exit codes: 0 every check passed, 1 one failed, 2 the node is not joined or the probe could not
be set up.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := cliutil.ValidateFormat(output, "text", "json"); err != nil {
				return err
			}
			paths, host, err := nodeHost(root)
			if err != nil {
				return err
			}
			pl, err := join.LoadPlanned(cmd.Context(), host, paths)
			if err != nil {
				return cliutil.BadInputf("this node's plan (is it joined? kubewin join): %v", err)
			}
			rep, err := nodecheck.Run(cmd.Context(), paths, pl.Plan, pl.Node, timeout)
			if err != nil {
				return cliutil.BadInput(err)
			}
			if output == "json" {
				if err := json.NewEncoder(s.out).Encode(rep); err != nil {
					return err
				}
			} else {
				fmt.Fprintf(s.out, "node %s, probe at %s\n", rep.Node, rep.Source)
				tw := tabwriter.NewWriter(s.out, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "VERDICT\tFLOW\tTARGET\tDETAIL")
				for _, r := range rep.Results {
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.Verdict, r.Flow, r.Target, r.Detail)
				}
				if err := tw.Flush(); err != nil {
					return err
				}
			}
			if rep.Failed() {
				return cliutil.Findings()
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&root, "root", join.DefaultRoot, "prefix of every path (as given to kubewin join --root)")
	f.DurationVar(&timeout, "timeout", 3*time.Second, "bound of each probe")
	f.StringVarP(&output, "output", "o", "text", "output format: text or json")
	return cmd
}

// credentialProblem gives an expired node credential its own reason on the Node condition (it
// can be published only if the API server still accepts the credential; the node service's log
// says it in any case).
func credentialProblem(err error) error {
	if errors.Is(err, join.ErrCredentialExpired) {
		return &nodestatus.Problem{Reason: nodestatus.ReasonCredentialExpired, Err: err}
	}
	return err
}

// nodeHost is the layout below --root and this OS's host layer, for the commands that run on a
// joined node (node run, node check); errors are the caller's to fix (exit 2).
func nodeHost(root string) (render.NodePaths, join.Host, error) {
	root, err := filepath.Abs(root)
	if err != nil {
		return render.NodePaths{}, nil, cliutil.BadInputf("--root: %v", err)
	}
	paths := join.NodePathsFor(root)
	host, err := join.NewHost(paths, root, "none", "")
	if err != nil {
		return render.NodePaths{}, nil, cliutil.BadInput(err)
	}
	return paths, host, nil
}
