package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/spf13/cobra"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubewin/kubewin/internal/cliutil"
	"github.com/kubewin/kubewin/internal/gateway"
)

// gatewayFlags are shared by `gateway` and `gateway routes`.
type gatewayFlags struct {
	group, configPath, kubeconfig, nodeName, metricsAddr, logFormat, netns string
}

func (f *gatewayFlags) register(cmd *cobra.Command, metricsAddr string) {
	fl := cmd.Flags()
	fl.StringVar(&f.group, "group", "", "gateway group name (required)")
	fl.StringVar(&f.configPath, "config", "", "GatewayGroupConfig file (default /etc/kubewin/gateway/<group>.json, from the group's ConfigMap)")
	fl.StringVar(&f.kubeconfig, "kubeconfig", "", "kubeconfig file (default: in-cluster service account)")
	fl.StringVar(&f.nodeName, "node-name", os.Getenv("NODE_NAME"), "this node's name (default $NODE_NAME, set from the downward API)")
	fl.StringVar(&f.metricsAddr, "metrics-address", metricsAddr, "address serving /metrics and /healthz (empty: off)")
	fl.StringVar(&f.logFormat, "log-format", "text", "log format: text or json")
	fl.StringVar(&f.netns, "netns", "", "network namespace (ip netns name) holding the interfaces to manage; the API connection and metrics stay in the process's own (default: the process's own)")
}

// namespace opens --netns; nil when unset.
func (f *gatewayFlags) namespace() (*gateway.NetNS, error) {
	if f.netns == "" {
		return nil, nil
	}
	ns, err := gateway.OpenNetNS(f.netns)
	if err != nil {
		return nil, cliutil.BadInputf("--netns: %v", err)
	}
	return ns, nil
}

func (f *gatewayFlags) load() (gateway.GroupConfig, error) {
	if f.group == "" {
		return gateway.GroupConfig{}, cliutil.BadInputf("--group is required")
	}
	if f.nodeName == "" {
		return gateway.GroupConfig{}, cliutil.BadInputf("--node-name (or $NODE_NAME) is required")
	}
	if f.logFormat != "text" && f.logFormat != "json" {
		return gateway.GroupConfig{}, cliutil.BadInputf("--log-format %q: expected text or json", f.logFormat)
	}
	path := f.configPath
	if path == "" {
		path = filepath.Join("/etc/kubewin/gateway", f.group+".json")
	}
	cfg, err := gateway.LoadGroupConfig(path)
	if err != nil {
		return gateway.GroupConfig{}, cliutil.BadInput(err)
	}
	if cfg.Name != f.group {
		return gateway.GroupConfig{}, cliutil.BadInputf("%s configures gateway group %q, not --group %q", path, cfg.Name, f.group)
	}
	return cfg, nil
}

func (f *gatewayFlags) client() (kubernetes.Interface, error) {
	var rc *rest.Config
	var err error
	if f.kubeconfig == "" {
		rc, err = rest.InClusterConfig()
	} else {
		rc, err = clientcmd.BuildConfigFromFlags("", f.kubeconfig)
	}
	if err != nil {
		return nil, cliutil.BadInputf("Kubernetes client configuration: %v", err)
	}
	rc.UserAgent = "kubewin-gateway"
	cs, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return nil, cliutil.BadInputf("Kubernetes client: %v", err)
	}
	return cs, nil
}

// setup loads the group's configuration, lets check reject it (nil: no check), and opens the
// API client and the network namespace both gateway commands need; the caller closes ns.
func (f *gatewayFlags) setup(check func(gateway.GroupConfig) error) (gateway.GroupConfig, kubernetes.Interface, *gateway.NetNS, error) {
	cfg, err := f.load()
	if err != nil {
		return cfg, nil, nil, err
	}
	if check != nil {
		if err := check(cfg); err != nil {
			return cfg, nil, nil, err
		}
	}
	client, err := f.client()
	if err != nil {
		return cfg, nil, nil, err
	}
	ns, err := f.namespace()
	if err != nil {
		return cfg, nil, nil, err
	}
	return cfg, client, ns, nil
}

func (f *gatewayFlags) logger(w io.Writer) *slog.Logger {
	if f.logFormat == "json" {
		return slog.New(slog.NewJSONHandler(w, nil))
	}
	return slog.New(slog.NewTextHandler(w, nil))
}

// serveMetrics serves reg until ctx ends. A listen error is returned at once (a port clash is a
// configuration error); later serve errors are logged.
func serveMetrics(ctx context.Context, addr string, reg *prometheus.Registry, log *slog.Logger) error {
	if addr == "" {
		return nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return cliutil.BadInputf("--metrics-address %s: %v", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg}))
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok\n") })
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("metrics server", "error", err)
		}
	}()
	log.Info("serving metrics", "address", ln.Addr().String())
	return nil
}

func newRegistry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return reg
}

func newGatewayCmd(s streams) *cobra.Command {
	var (
		f                             gatewayFlags
		keepalivedConf, pidFile       string
		statusNamespace               string
		once                          bool
		onceTimeout, resync, debounce time.Duration
		keepalivedStall               time.Duration
	)
	cmd := &cobra.Command{
		Use:   "gateway --group NAME",
		Short: "Keep the Windows pod-CIDR gateway VIPs of a gateway group in keepalived (runs on each member)",
		Long: `gateway runs on every member of a gateway group, next to keepalived (DaemonSet, host network,
NET_ADMIN). It watches the Windows Node objects; for every Windows node with a pod CIDR the group
serves the CIDR's gateway (.1) as a keepalived VIP on the group's interface, and removes it when
the node goes. All members compute the same layout (deterministic VRIDs per pod-CIDR slot,
VRRPv3, unicast peers, state BACKUP + nopreempt), write keepalived.conf atomically, check it
with keepalived -t, and SIGHUP keepalived only when the file changed.

Fail-static: while the API server is unreachable the last installed configuration stays; VIPs
are never dropped because the control plane is slow. Each member reports the VIPs it holds in
the ConfigMap kubewin-gateway-<group>-<node> of --status-namespace, and serves Prometheus
metrics on --metrics-address.

keepalived is watched by what it does: when its VRRP child makes no progress (no voluntary context
switch) for --keepalived-stall (stopped, frozen, stuck in the kernel), or no keepalived runs, the
layout's VIPs are removed from the interface, since a peer holds them by then, and a frozen child is
killed (keepalived respawns it as BACKUP). This needs no API server: before the first Node list the
addresses come from the installed keepalived.conf.

--once installs the configuration once and exits (the DaemonSet's init container): with the API
unreachable until --once-timeout, an existing configuration is kept (exit 0).

Exit codes: 0 stopped by a signal (or --once done), 1 the controller failed, 2 bad flags or
configuration.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, client, ns, err := f.setup(func(cfg gateway.GroupConfig) error {
				if keepalivedStall < 0 {
					return cliutil.BadInputf("--keepalived-stall %s: must not be negative", keepalivedStall)
				}
				if _, ok := cfg.Member(f.nodeName); !ok {
					return cliutil.BadInputf("node %q is not a member of gateway group %s", f.nodeName, cfg.Name)
				}
				return nil
			})
			if err != nil {
				return err
			}
			defer ns.Close()
			log := f.logger(s.err)
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			reg := newRegistry()
			ctrl, err := gateway.NewController(gateway.Options{
				Config: cfg, NodeName: f.nodeName, Client: client, ConfigPath: keepalivedConf,
				Validate:        ns.Validator(),
				Reloader:        gateway.PIDFileReloader{PIDFile: pidFile, ConfigPath: keepalivedConf},
				NetNS:           ns.Handle(),
				StatusNamespace: statusNamespace,
				Metrics:         gateway.NewMetrics(reg, cfg.Name, f.nodeName),
				Log:             log, Resync: resync, Debounce: debounce,
				KeepalivedStall: keepalivedStall,
			})
			if err != nil {
				return cliutil.BadInput(err)
			}
			if once {
				octx, cancel := context.WithTimeout(ctx, onceTimeout)
				defer cancel()
				kept, err := ctrl.RunOnce(octx)
				if err != nil {
					return &cliutil.ExitError{Code: cliutil.ExitFindings, Err: err}
				}
				if kept {
					fmt.Fprintf(s.out, "API server unreachable; kept the existing %s\n", keepalivedConf)
				} else {
					fmt.Fprintf(s.out, "installed %s\n", keepalivedConf)
				}
				return nil
			}
			if err := serveMetrics(ctx, f.metricsAddr, reg, log); err != nil {
				return err
			}
			if err := ctrl.Run(ctx); err != nil {
				return &cliutil.ExitError{Code: cliutil.ExitFindings, Err: err}
			}
			return nil
		},
	}
	f.register(cmd, ":9477")
	fl := cmd.Flags()
	fl.StringVar(&keepalivedConf, "keepalived-config", "/etc/keepalived/keepalived.conf", "keepalived configuration file to maintain")
	fl.StringVar(&pidFile, "keepalived-pidfile", "/run/keepalived/keepalived.pid", "keepalived's pid file (keepalived -p), for SIGHUP")
	fl.StringVar(&statusNamespace, "status-namespace", "kubewin-system", "namespace of the member status ConfigMaps (empty: no status)")
	fl.BoolVar(&once, "once", false, "install the configuration once and exit")
	fl.DurationVar(&onceTimeout, "once-timeout", time.Minute, "with --once: how long to wait for the API server")
	fl.DurationVar(&resync, "resync", 30*time.Second, "periodic re-check of the installed file and held addresses")
	fl.DurationVar(&debounce, "debounce", 50*time.Millisecond, "quiet time after a Node change before a sync")
	fl.DurationVar(&keepalivedStall, "keepalived-stall", 0, "how long keepalived's VRRP child may make no progress before it counts as frozen (0: max(1s, 4 advert intervals), longer than the peers' down timer)")
	cmd.AddCommand(newGatewayRoutesCmd(s), newGatewayExecCmd(s))
	return cmd
}

func newGatewayExecCmd(s streams) *cobra.Command {
	var priority int
	cmd := &cobra.Command{
		Use:   "exec [--rt-priority N] -- COMMAND [ARGS...]",
		Short: "Run COMMAND (keepalived) with real-time scheduling, or at nice -20 where the kernel refuses it",
		Long: `exec replaces itself with COMMAND running SCHED_RR at --rt-priority, as chrt --rr does, so that a
busy node cannot delay keepalived's adverts past the peers' down timer. Where the kernel refuses
real-time scheduling (on cgroup-v1 kernels with RT group scheduling a pod's cgroup has no
real-time budget, and chrt fails), COMMAND runs SCHED_OTHER at nice -20 instead and one line on
stderr says so. The gateway DaemonSet starts keepalived this way.

Exit codes: the command's own; 2 bad flags or the command cannot be started.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			return cliutil.BadInput(gateway.ExecRealtime(priority, args, s.err))
		},
	}
	cmd.Flags().IntVar(&priority, "rt-priority", 10, "SCHED_RR priority (1-99)")
	return cmd
}

func newGatewayRoutesCmd(s streams) *cobra.Command {
	var (
		f                gatewayFlags
		metric, protocol int
		resync           time.Duration
	)
	cmd := &cobra.Command{
		Use:   "routes --group NAME",
		Short: "Keep routes to the Windows pod CIDRs via the group's router VIPs (runs on every Linux node)",
		Long: `routes keeps 'ip route replace <windows pod CIDR> via <router VIP>' in place on this node for
every Windows node the gateway group serves (for Linux CNIs that do not export the VIP holder's
connected route). Routes are tagged with --route-protocol, so only they are ever replaced or
removed; drift (a deleted or changed route) is repaired on the netlink event. Routes use
--route-metric so that on the VIP holder the connected route wins.

Exit codes: 0 stopped by a signal, 1 failed, 2 bad flags or configuration.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, client, ns, err := f.setup(nil)
			if err != nil {
				return err
			}
			defer ns.Close()
			log := f.logger(s.err)
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			reg := newRegistry()
			keeper, err := gateway.NewRouteKeeper(gateway.RouteOptions{
				Config: cfg, NodeName: f.nodeName, Client: client, Protocol: protocol, Metric: metric, NetNS: ns.Handle(),
				Metrics: gateway.NewRouteMetrics(reg, cfg.Name, f.nodeName), Log: log, Resync: resync,
			})
			if err != nil {
				return cliutil.BadInput(err)
			}
			if err := serveMetrics(ctx, f.metricsAddr, reg, log); err != nil {
				return err
			}
			if err := keeper.Run(ctx); err != nil {
				return &cliutil.ExitError{Code: cliutil.ExitFindings, Err: err}
			}
			return nil
		},
	}
	f.register(cmd, ":9478")
	cmd.Flags().IntVar(&metric, "route-metric", gateway.DefaultRouteMetric, "metric of the kept routes")
	cmd.Flags().IntVar(&protocol, "route-protocol", gateway.DefaultRouteProtocol, "rtm_protocol marking the kept routes (5-255)")
	cmd.Flags().DurationVar(&resync, "resync", 30*time.Second, "periodic full route check")
	return cmd
}
