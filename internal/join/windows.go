package join

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/kubewin/kubewin/internal/plan"
	"github.com/kubewin/kubewin/internal/render"
	"github.com/kubewin/kubewin/internal/winnode"
)

// WindowsHost is join's host layer on a Windows machine. The steps are the Linux ones; what
// differs is below: the bundle's files at the bundle's paths (the same renderer as kubewin
// plan), the node services registered with the service control manager (containerd
// automatic; the kubelet and kube-proxy manual, started by the node service once the HNS
// network exists, as in the bundle's services/install.ps1), firewall rules, and the pod
// network — HNS networks, the host endpoint, host routes — made by winnode's Reconciler once
// the Node's pod CIDR is known. That Reconciler is also what `kubewin node run` runs forever.
//
// Node is the real host (hcn and the SCM, winnode.WindowsHost) on a Windows node, and
// winnode.MemHost — the in-memory model of a Windows host — in tests on Linux.
type WindowsHost struct {
	Node winnode.Host
	// FactsFunc gathers this machine's facts (host_windows.go on a Windows node).
	FactsFunc func(ctx context.Context, server string) (Facts, error)
	// InstallDir is the Windows path the description's windows.installDir must name: the
	// directory Paths are below (the same on a Windows node; a test keeps its files elsewhere).
	InstallDir string
	// Kubewin is the kubewin.exe the kubewin-node service runs (installed into Paths.BinDir).
	Kubewin string
	// KubewinPath is that copy's Windows path, as the service's command line names it.
	KubewinPath string
	// PassTimeout bounds one Reconciler pass (winnode.DefaultPassTimeout when zero).
	PassTimeout time.Duration
}

func (h *WindowsHost) OS() string { return "windows" }

func (h *WindowsHost) Facts(ctx context.Context, server string) (Facts, error) {
	if h.FactsFunc == nil {
		return Facts{}, errors.New("windows host: no facts source")
	}
	return h.FactsFunc(ctx, server)
}

// NodeServiceName is the SCM name of the kubewin node service.
const NodeServiceName = "kubewin-node"

// Service recovery of the node services: the bundle's (render/services.go: restart after
// 10 s, 10 s, then 30 s; the count resets after a day).
var (
	windowsRecovery      = []time.Duration{10 * time.Second, 10 * time.Second, 30 * time.Second}
	windowsRecoveryReset = 24 * time.Hour
)

func (j *joiner) windows() (*WindowsHost, bool) {
	h, ok := j.host.(*WindowsHost)
	return h, ok
}

// windowsPreflight checks that the machine can be a node: the Containers feature, whose Host
// Network Service (hns) runs the pod network.
func (j *joiner) windowsPreflight(ctx context.Context) error {
	h, _ := j.windows()
	if _, err := h.Node.HNSProcessID(ctx); err != nil {
		if errors.Is(err, winnode.ErrServiceNotInstalled) {
			return fmt.Errorf("%w: the Containers feature is not installed (no Host Network Service): Install-WindowsFeature -Name Containers, restart, then run join again", ErrBadInput)
		}
		return fmt.Errorf("the Host Network Service: %w", err)
	}
	return nil
}

// checkWindowsDesign refuses what join does not do on Windows yet, before anything is written.
func (j *joiner) checkWindowsDesign() error {
	h, _ := j.windows()
	w := j.nodePlan.Windows
	if w == nil {
		return fmt.Errorf("plan node %s: no Windows plan", j.node)
	}
	if !strings.EqualFold(strings.TrimRight(w.InstallDir, `\`), strings.TrimRight(h.InstallDir, `\`)) {
		return fmt.Errorf("%w: the cluster description installs Windows nodes under %s (spec.windows.installDir); run join with --root %s",
			ErrBadInput, w.InstallDir, w.InstallDir)
	}
	if w.CNIPlugin == "flannel" {
		// flanneld runs under nssm and leases its own subnet (render/flannel.go); join would
		// have to supervise it and wait for its network instead of creating one.
		return fmt.Errorf("%w: design %s: kubewin join on Windows supports the designs whose pod network kubewin creates (upstream-ToR, host-gw); flannel nodes are installed with the bundle of kubewin plan",
			ErrBadInput, j.spec.Spec.Design)
	}
	if len(j.o.KubeletDropIns) > 0 {
		return fmt.Errorf("%w: --kubelet-config-dropin is for Linux nodes (the Windows kubelet's flags, shared with the bundle, have no --config-dir yet)", ErrBadInput)
	}
	return nil
}

// windowsRestrict gives the install dir a protected DACL — SYSTEM and Administrators only,
// inherited by all below it — before join writes the bootstrap token, the kubelet's key and the
// kubeconfigs there: file modes mean nothing on Windows, and a directory made at C:\ inherits
// read access for every local user (the bundle's services/install.ps1 restricts pki and the
// kubeconfigs the same way with icacls). It is set on every join, so a loosened ACL is put back.
func (j *joiner) windowsRestrict(ctx context.Context) (Change, error) {
	h, _ := j.windows()
	if err := os.MkdirAll(j.paths.DataDir, 0o755); err != nil {
		return Change{}, fmt.Errorf("create %s: %w", j.paths.DataDir, err)
	}
	if err := h.Node.RestrictACL(ctx, j.paths.DataDir); err != nil {
		return Change{}, err
	}
	return Change{What: j.paths.DataDir + " (SYSTEM and Administrators only)", Action: ActionUnchanged}, nil
}

// windowsProxyAccess lets kube-proxy read what it needs when it runs under an account of its
// own (spec windows.kubeProxyServiceAccount; seed 000 FAQ 6): its configuration, its kubeconfig,
// the node credential it names (the pki directory), its programs, and its log directory.
func (j *joiner) windowsProxyAccess(ctx context.Context) ([]Change, error) {
	h, _ := j.windows()
	account := j.nodePlan.Windows.KubeProxyServiceAccount
	if account == "" || strings.EqualFold(account, "LocalSystem") {
		return nil, nil
	}
	var out []Change
	for _, g := range []struct{ path, access string }{
		{j.paths.KubeProxyConfigDir, "R"}, {j.paths.KubeProxyKubeconfig(), "R"}, {j.paths.PKIDir, "R"},
		{filepath.Join(j.paths.BinDir, "kube-proxy.exe"), "R"}, {filepath.Join(j.paths.BinDir, "kube-log-runner.exe"), "R"},
		{j.paths.LogDir, "M"},
	} {
		if err := h.Node.RestrictACL(ctx, g.path, winnode.ACLGrant{Account: account, Access: g.access}); err != nil {
			return out, err
		}
		out = append(out, Change{What: g.path + " (readable by " + account + ", kube-proxy's account)", Action: ActionUnchanged})
	}
	return out, nil
}

// windowsBinary is one file join installs on a Windows node: its name in SHA256SUMS, where it
// goes, and the services that run it (stopped before it is replaced: Windows does not let a
// running program's file be overwritten).
type windowsBinary struct {
	name, dst string
	usedBy    []string
}

func (j *joiner) windowsBinaries() []windowsBinary {
	p, w := j.paths, j.nodePlan.Windows
	// Stopping containerd needs the kubelet stopped first (it depends on containerd).
	out := []windowsBinary{
		{"containerd.exe", filepath.Join(p.RuntimeBinDir, "containerd.exe"), []string{"kubelet", "containerd"}},
		{"containerd-shim-runhcs-v1.exe", filepath.Join(p.RuntimeBinDir, "containerd-shim-runhcs-v1.exe"), []string{"kubelet", "containerd"}},
		{"kubelet.exe", filepath.Join(p.BinDir, "kubelet.exe"), []string{"kubelet"}},
		{"kube-proxy.exe", filepath.Join(p.BinDir, "kube-proxy.exe"), []string{"kube-proxy"}},
		{"kube-log-runner.exe", filepath.Join(p.BinDir, "kube-log-runner.exe"), []string{"kubelet", "kube-proxy"}},
	}
	for _, plugin := range []string{w.CNIPlugin, "host-local"} {
		out = append(out, windowsBinary{"cni/" + plugin + ".exe", filepath.Join(p.CNIBinDir, plugin+".exe"), nil})
	}
	return out
}

func (j *joiner) windowsInstallBinaries(ctx context.Context) ([]Change, error) {
	h, _ := j.windows()
	var out []Change
	for _, b := range j.windowsBinaries() {
		if cur, err := fileSHA256(b.dst); err == nil && cur != j.sums[b.name] {
			stopped, err := j.stopWindowsServices(ctx, b.usedBy, b.dst+" is replaced")
			out = append(out, stopped...)
			if err != nil {
				return out, err
			}
		}
		ch, err := j.o.Binaries.install(ctx, j.sums, b.name, b.dst)
		if err != nil {
			return out, err
		}
		out = append(out, ch)
	}
	// The node service runs kubewin from the install dir, not from wherever join was started
	// (a download folder the operator cleans up).
	if h.Kubewin != "" {
		data, err := os.ReadFile(h.Kubewin)
		if err != nil {
			return out, fmt.Errorf("read %s: %w", h.Kubewin, err)
		}
		dst := filepath.Join(j.paths.BinDir, "kubewin.exe")
		if cur, err := os.ReadFile(dst); err == nil && !bytes.Equal(cur, data) {
			stopped, err := j.stopWindowsServices(ctx, []string{NodeServiceName}, dst+" is replaced")
			out = append(out, stopped...)
			if err != nil {
				return out, err
			}
		}
		ch, err := writeFiles([]File{{Path: dst, Data: data, Mode: 0o755}})
		if err != nil {
			return out, err
		}
		out = append(out, ch...)
	}
	return out, nil
}

// stopWindowsServices stops the running ones of names, in order; the node-service and
// pod-network steps start them again.
func (j *joiner) stopWindowsServices(ctx context.Context, names []string, why string) ([]Change, error) {
	h, _ := j.windows()
	var out []Change
	for _, name := range names {
		st, err := h.Node.ServiceStatus(ctx, name)
		if errors.Is(err, winnode.ErrServiceNotInstalled) || (err == nil && st.State == winnode.ServiceStopped) {
			continue
		}
		if err != nil {
			return out, err
		}
		if err := h.Node.StopService(ctx, name); err != nil {
			return out, fmt.Errorf("stop service %s (%s): %w", name, why, err)
		}
		out = append(out, Change{What: "service " + name + " stopped (" + why + ")", Action: ActionUpdated})
	}
	return out, nil
}

// windowsConfigure writes the files of a Windows node that do not depend on its pod CIDR, with
// the renderer of kubewin plan's bundle, at the paths the bundle's services read.
func (j *joiner) windowsConfigure(ctx context.Context) ([]Change, error) {
	p, n := j.plan, j.nodePlan
	ctrd, err := render.WindowsContainerdConfig(p, n)
	if err != nil {
		return nil, err
	}
	kubelet, err := render.KubeletConfig(p, n)
	if err != nil {
		return nil, err
	}
	proxy, err := render.KubeProxyConfig(p, n)
	if err != nil {
		return nil, err
	}
	proxyKubeconfig, err := nodeCredentialKubeconfig(j.trust.Server, n.Windows)
	if err != nil {
		return nil, err
	}
	for _, d := range []string{j.paths.LogDir, render.StaticPodDir(j.paths), j.paths.CNIConfDir, filepath.Join(j.paths.DataDir, "cni", "ipam")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, fmt.Errorf("create %s: %w", d, err)
		}
	}
	files := []File{
		{Path: j.paths.ContainerdConfig(), Data: ctrd, Mode: 0o644},
		{Path: j.paths.KubeletConfig(), Data: kubelet, Mode: 0o644},
		{Path: j.paths.KubeProxyConfig(), Data: proxy, Mode: 0o644},
		{Path: j.paths.KubeProxyKubeconfig(), Data: proxyKubeconfig, Mode: 0o600},
	}
	changes, err := writeFiles(files)
	if err != nil {
		return changes, err
	}
	access, err := j.windowsProxyAccess(ctx)
	changes = append(changes, access...)
	// A service whose file changed reads it only at start: the node-service step restarts it.
	owner := map[string]string{files[0].Path: "containerd", files[1].Path: "kubelet", files[2].Path: "kube-proxy", files[3].Path: "kube-proxy"}
	for _, c := range changes {
		if c.Action == ActionUpdated {
			j.restart = append(j.restart, owner[c.What])
		}
	}
	return changes, err
}

// nodeCredentialKubeconfig is kube-proxy's kubeconfig on a Windows node: the node's own
// credential, the kubelet's client certificate that the kubelet renews (the decision and its
// sources are in internal/bootstrap's package comment; `kubewin token create` binds
// system:node-proxier to system:nodes). client-go reads the certificate files again when
// they change, so kube-proxy follows the renewals.
func nodeCredentialKubeconfig(server string, w *plan.WindowsNodePlan) ([]byte, error) {
	pki := strings.TrimRight(w.InstallDir, `\`) + `\pki\`
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["cluster"] = &clientcmdapi.Cluster{Server: server, CertificateAuthority: pki + "ca.crt"}
	cfg.AuthInfos["node"] = &clientcmdapi.AuthInfo{ClientCertificate: pki + "kubelet-client-current.pem", ClientKey: pki + "kubelet-client-current.pem"}
	cfg.Contexts["node"] = &clientcmdapi.Context{Cluster: "cluster", AuthInfo: "node"}
	cfg.CurrentContext = "node"
	b, err := clientcmd.Write(*cfg)
	if err != nil {
		return nil, fmt.Errorf("write kube-proxy kubeconfig: %w", err)
	}
	return b, nil
}

// windowsServiceConfigs are the SCM services of the node, the bundle's (render.WindowsServices)
// with the bundle's recovery actions, then the kubewin node service.
func (j *joiner) windowsServiceConfigs() ([]winnode.ServiceConfig, error) {
	svcs, err := render.WindowsServices(j.plan, j.nodePlan)
	if err != nil {
		return nil, err
	}
	var out []winnode.ServiceConfig
	for _, s := range svcs {
		if s.NSSM != nil {
			return nil, fmt.Errorf("service %s runs under nssm: not installed by join", s.Name)
		}
		st := winnode.StartAutomatic
		if s.Manual {
			st = winnode.StartManual
		}
		out = append(out, winnode.ServiceConfig{Name: s.Name, DisplayName: s.DisplayName, Description: s.Description,
			Binary: s.Binary, Args: slices.Clone(s.Args), DependsOn: slices.Clone(s.DependsOn), StartType: st, Account: s.Account,
			Recovery: windowsRecovery, RecoveryReset: windowsRecoveryReset})
	}
	h, _ := j.windows()
	out = append(out, winnode.ServiceConfig{
		Name: NodeServiceName, DisplayName: "kubewin node service",
		Description: "Keeps node " + j.node + " joined and healthy: HNS network, services, repairs, status (kubewin node run)",
		Binary:      h.KubewinPath, Args: []string{"node", "run", "--root", h.InstallDir},
		StartType: winnode.StartAutomatic, Recovery: windowsRecovery, RecoveryReset: windowsRecoveryReset,
	})
	return out, nil
}

// windowsNodeService registers the services (created, or updated when their definition
// changed since the last join: join keeps the definitions it installed in
// WindowsServicesRecord), opens the firewall ports, and starts containerd and the kubelet —
// the kubelet registers the Node, whose pod CIDR the pod network needs — and the kubewin node
// service.
func (j *joiner) windowsNodeService(ctx context.Context) ([]Change, error) {
	h, _ := j.windows()
	var out []Change
	rules, err := render.FirewallRules(j.nodePlan)
	if err != nil {
		return nil, err
	}
	for _, r := range rules {
		rule := winnode.FirewallRule{Name: r.Name, DisplayName: r.DisplayName, Protocol: r.Protocol, LocalPorts: r.LocalPort}
		if err := h.Node.EnsureFirewallRule(ctx, rule); err != nil {
			return out, fmt.Errorf("firewall rule %s: %w", r.Name, err)
		}
		out = append(out, Change{What: "firewall rule " + r.Name + " (" + r.Protocol + " " + r.LocalPort + ")", Action: ActionUnchanged})
	}
	cfgs, err := j.windowsServiceConfigs()
	if err != nil {
		return out, err
	}
	recorded := map[string]winnode.ServiceConfig{}
	record := WindowsServicesRecord(j.paths)
	if data, err := os.ReadFile(record); err == nil {
		var old []winnode.ServiceConfig
		if json.Unmarshal(data, &old) == nil {
			for _, c := range old {
				recorded[c.Name] = c
			}
		}
	}
	for _, cfg := range cfgs {
		what := "service " + cfg.Name
		st, err := h.Node.ServiceStatus(ctx, cfg.Name)
		switch {
		case errors.Is(err, winnode.ErrServiceNotInstalled):
			if err := h.Node.InstallService(ctx, cfg); err != nil {
				return out, fmt.Errorf("install %s: %w", what, err)
			}
			out = append(out, Change{What: what, Action: ActionCreated})
		case err != nil:
			return out, fmt.Errorf("%s: %w", what, err)
		case reflect.DeepEqual(recorded[cfg.Name], cfg):
			out = append(out, Change{What: what, Action: ActionUnchanged})
		default:
			if err := h.Node.UpdateService(ctx, cfg); err != nil {
				return out, fmt.Errorf("update %s: %w", what, err)
			}
			out = append(out, Change{What: what, Action: ActionUpdated})
			if st.State == winnode.ServiceRunning {
				j.restart = append(j.restart, cfg.Name)
			}
		}
	}
	data, err := json.MarshalIndent(cfgs, "", "  ")
	if err != nil {
		return out, fmt.Errorf("record the services: %w", err)
	}
	if _, err := writeFiles([]File{{Path: record, Data: append(data, '\n'), Mode: 0o644}}); err != nil {
		return out, err
	}
	for _, name := range []string{"containerd", "kubelet", NodeServiceName} {
		st, err := h.Node.ServiceStatus(ctx, name)
		if err != nil {
			return out, err
		}
		switch {
		case st.State != winnode.ServiceRunning:
			if err := h.Node.StartService(ctx, name); err != nil {
				return out, fmt.Errorf("start service %s: %w", name, err)
			}
			out = append(out, Change{What: "service " + name + " started", Action: ActionUpdated})
		case slices.Contains(j.restart, name):
			if err := h.Node.RestartService(ctx, name); err != nil {
				return out, fmt.Errorf("restart service %s (its configuration changed): %w", name, err)
			}
			out = append(out, Change{What: "service " + name + " restarted (its configuration changed)", Action: ActionUpdated})
		}
	}
	return out, nil
}

// WindowsServicesRecord is where join keeps the service definitions it installed on a Windows
// node (the SCM's own copy cannot be compared: it holds one quoted command line).
func WindowsServicesRecord(paths render.NodePaths) string {
	return filepath.Join(paths.DataDir, "windows-services.json")
}

// windowsPodNetwork writes the CNI configuration for the Node's pod CIDR and runs the node
// service's Reconciler until the HNS networks, the host endpoint and the host routes exist and
// kube-proxy runs on its network (bounded by the join's Timeout).
func (j *joiner) windowsPodNetwork(ctx context.Context) ([]Change, error) {
	h, _ := j.windows()
	conf, err := render.CNIConfig(j.nodePlan)
	if err != nil {
		return nil, err
	}
	out, err := writeFiles([]File{{Path: filepath.Join(j.paths.CNIConfDir, render.CNIConfigName(j.nodePlan.Windows)), Data: conf, Mode: 0o644}})
	if err != nil {
		return out, err
	}
	desired, err := winnode.DesiredFromPlan(j.plan, j.nodePlan)
	if err != nil {
		return out, err
	}
	r := &winnode.Reconciler{Host: h.Node, Desired: desired, PassTimeout: h.PassTimeout}
	if slices.Contains(j.restart, "kube-proxy") {
		if st, err := h.Node.ServiceStatus(ctx, "kube-proxy"); err == nil && st.State == winnode.ServiceRunning {
			if err := h.Node.RestartService(ctx, "kube-proxy"); err != nil {
				return out, fmt.Errorf("restart service kube-proxy (its configuration changed): %w", err)
			}
			out = append(out, Change{What: "service kube-proxy restarted (its configuration changed)", Action: ActionUpdated})
		}
	}
	err = j.poll(ctx, "pod network", func() (bool, string, error) {
		rep, err := r.Reconcile(ctx)
		for _, rp := range rep.Repairs {
			out = append(out, Change{What: rp.What + " (" + rp.Why + ")", Action: ActionCreated})
		}
		if err != nil {
			return false, err.Error(), nil
		}
		return rep.Healthy, rep.Reason(), nil
	})
	if err != nil {
		return out, err
	}
	if len(out) == 0 || !slices.ContainsFunc(out, func(c Change) bool { return c.Action != ActionUnchanged }) {
		out = append(out, Change{What: "HNS network " + desired.ProxyNetwork + " for " + j.podCIDR, Action: ActionUnchanged})
	}
	return out, nil
}

// WindowsDesired is the state the node service keeps on a joined Windows node: the plan
// LoadPlanned makes again from what join saved. Before join has read the pod CIDR there is
// none (os.ErrNotExist).
func WindowsDesired(ctx context.Context, h *WindowsHost, paths render.NodePaths) (winnode.Desired, error) {
	pl, err := LoadPlanned(ctx, h, paths)
	if err != nil {
		return winnode.Desired{}, err
	}
	return winnode.DesiredFromPlan(pl.Plan, pl.Node)
}

// windowsClusterNIC picks the cluster NIC among the host's interfaces: the one holding
// localIP, the address the host reaches the API server from. Once an HNS network's vSwitch is
// bound to the adapter, the address sits on the host vNIC "vEthernet (<adapter>)", which has
// the adapter's MAC; the cluster NIC is then the adapter itself, the one the HNS networks name
// (NetAdapterName) — so a second join plans the same node as the first.
func windowsClusterNIC(ifaces []NIC, localIP string) (NIC, error) {
	for _, i := range ifaces {
		if i.IP != localIP {
			continue
		}
		if inner, ok := strings.CutPrefix(i.Name, "vEthernet ("); ok && strings.HasSuffix(inner, ")") {
			inner = strings.TrimSuffix(inner, ")")
			for _, a := range ifaces {
				if a.Name == inner && strings.EqualFold(a.MAC, i.MAC) {
					a.IP, a.Prefix = i.IP, i.Prefix
					return a, nil
				}
			}
		}
		return i, nil
	}
	return NIC{}, fmt.Errorf("no network adapter holds %s, the address this host reaches the API server from", localIP)
}
