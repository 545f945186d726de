package join

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
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
	_, err := h.Node.HNSProcessID(ctx)
	if errors.Is(err, winnode.ErrServiceNotInstalled) {
		return fmt.Errorf("%w: the Containers feature is not installed (no Host Network Service): Install-WindowsFeature -Name Containers, restart, then run join again", ErrBadInput)
	}
	if err != nil {
		// Installed but not running: start it rather than fail (whether HNS is only started on
		// demand on a fresh Windows Server 2022 is not verified here; starting it is harmless).
		if serr := h.Node.StartService(ctx, "hns"); serr != nil {
			return fmt.Errorf("the Host Network Service: %v; starting it: %w", err, serr)
		}
		if _, err := h.Node.HNSProcessID(ctx); err != nil {
			return fmt.Errorf("the Host Network Service: %w", err)
		}
	}
	return nil
}

// checkWindowsDesign refuses what join does not do on Windows yet, before anything is written.
func (j *joiner) checkWindowsDesign() error {
	h, _ := j.windows()
	w := j.nodePlan.Windows
	if w == nil {
		return fmt.Errorf("%w: the cluster description plans node %s without a Windows part", ErrBadInput, j.node)
	}
	if !strings.EqualFold(strings.TrimRight(w.InstallDir, `\`), strings.TrimRight(h.InstallDir, `\`)) {
		return fmt.Errorf("%w: the cluster description installs Windows nodes under %s (spec.windows.installDir); run join with --root %s",
			ErrBadInput, w.InstallDir, w.InstallDir)
	}
	if w.CNIPlugin == "flannel" && !cniOwned(j.nodePlan) {
		// flanneld runs under WinSW and leases its own subnet (render/flannel.go); join would
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

// windowsBinary is one file join installs on a Windows node: its name in SHA256SUMS and where
// it goes.
type windowsBinary struct{ name, dst string }

// windowsPrograms are the programs join installs on a Windows node besides the CNI plugins:
// containerd's two in RuntimeBinDir, the Kubernetes ones in BinDir.
var windowsPrograms = []string{"containerd.exe", "containerd-shim-runhcs-v1.exe", "kubelet.exe", "kube-proxy.exe", "kube-log-runner.exe"}

func (j *joiner) windowsBinaries() []windowsBinary {
	if cniOwned(j.nodePlan) {
		return j.hostProcessBinaries() // windows_hostprocess.go
	}
	p, w := j.paths, j.nodePlan.Windows
	var out []windowsBinary
	for _, name := range windowsPrograms {
		dir := p.BinDir
		if strings.HasPrefix(name, "containerd") {
			dir = p.RuntimeBinDir
		}
		out = append(out, windowsBinary{name, filepath.Join(dir, name)})
	}
	for _, plugin := range []string{w.CNIPlugin, "host-local"} {
		out = append(out, windowsBinary{"cni/" + plugin + ".exe", filepath.Join(p.CNIBinDir, plugin+".exe")})
	}
	return out
}

// windowsInstallBinaries puts the programs in place without stopping anything: a program that
// runs (the kubelet, containerd, a pod's runhcs shim, which outlives containerd) cannot be
// overwritten on Windows, but it can be renamed, so the old file is moved aside and the new one
// takes its name (replaceAside). The services whose program changed are restarted by the
// node-service step, whose inputs digest covers the programs' checksums.
func (j *joiner) windowsInstallBinaries(ctx context.Context) ([]Change, error) {
	h, _ := j.windows()
	var out []Change
	for _, b := range j.windowsBinaries() {
		removeAside(b.dst)
		ch, err := j.bin.installWith(ctx, j.sums, b.name, b.dst, replaceAside)
		if err != nil {
			return out, err
		}
		out = append(out, ch)
	}
	// The node service runs kubewin from the install dir, not from wherever join was started
	// (a download folder the operator cleans up).
	if h.Kubewin != "" {
		dst := filepath.Join(j.paths.BinDir, "kubewin.exe")
		removeAside(dst)
		data, err := os.ReadFile(h.Kubewin)
		if err != nil {
			return out, fmt.Errorf("read %s: %w", h.Kubewin, err)
		}
		j.kubewinSum = inputsDigest(data)
		cur, err := os.ReadFile(dst)
		switch {
		case err == nil && bytes.Equal(cur, data):
			out = append(out, Change{What: dst, Action: ActionUnchanged})
		default:
			action := ActionCreated
			if err == nil {
				action = ActionUpdated
			}
			tmp, err := os.CreateTemp(filepath.Dir(dst), ".kubewin.exe.*")
			if err != nil {
				return out, fmt.Errorf("install %s: %w", dst, err)
			}
			_, werr := tmp.Write(data)
			if cerr := tmp.Close(); werr == nil {
				werr = cerr
			}
			if werr == nil {
				werr = replaceAside(tmp.Name(), dst)
			}
			if werr != nil {
				_ = os.Remove(tmp.Name())
				return out, fmt.Errorf("install %s: %w", dst, werr)
			}
			out = append(out, Change{What: dst, Action: action})
		}
	}
	return out, nil
}

// asideSuffix names the previous version of a program join moved aside.
const asideSuffix = ".old-"

// replaceAside renames dst (when it exists) to dst.old-<time>, then tmp to dst, then removes
// the old file if it can: Windows lets a running program's file be renamed but not replaced or
// deleted (it then stays until its process ends, and the next join removes it). restic's
// self-update does the same for the same reason (restic/restic
// internal/selfupdate/download_windows.go).
func replaceAside(tmp, dst string) error {
	if _, err := os.Stat(dst); err == nil {
		old := dst + asideSuffix + strconv.FormatInt(time.Now().UnixNano(), 10)
		if err := os.Rename(dst, old); err != nil {
			return fmt.Errorf("move the running %s aside: %w", filepath.Base(dst), err)
		}
		defer os.Remove(old)
	}
	return os.Rename(tmp, dst)
}

// removeAside removes the previous versions of dst that earlier joins moved aside and that no
// process runs any more (a running one cannot be removed and stays).
func removeAside(dst string) {
	old, _ := filepath.Glob(dst + asideSuffix + "*")
	for _, o := range old {
		_ = os.Remove(o)
	}
}

// windowsConfigure writes the files of a Windows node that do not depend on its pod CIDR, with
// the renderer of kubewin plan's bundle, at the paths the bundle's services read.
func (j *joiner) windowsConfigure(ctx context.Context) ([]Change, error) {
	if cniOwned(j.nodePlan) {
		return j.hostProcessConfigure(ctx) // windows_hostprocess.go
	}
	h, _ := j.windows()
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
	hosts, err := applyRegistryHosts(j.effects, j.paths)
	changes = append(changes, hosts...)
	if err != nil {
		return changes, err
	}
	// The protected DACLs of the effects (windowsACLs in render/effects.go): the data and pki
	// directories for SYSTEM and Administrators, and what kube-proxy reads for its own account
	// when it has one — under LocalSystem the same paths get SYSTEM and Administrators only,
	// which also takes back what an earlier join granted another account.
	access, err := applyACLs(ctx, h.Node, j.effects, j.paths)
	changes = append(changes, access...)
	// What each service reads at start (its files and its programs): the node-service step
	// restarts a running service whose inputs differ from those it was last started with.
	sums := j.sums
	j.inputs = map[string]string{
		"containerd":    inputsDigest(ctrd, []byte(sums["containerd.exe"]), []byte(sums["containerd-shim-runhcs-v1.exe"])),
		"kubelet":       inputsDigest(kubelet, j.trust.CAPEM, []byte(sums["kubelet.exe"]), []byte(sums["kube-log-runner.exe"])),
		"kube-proxy":    inputsDigest(proxy, proxyKubeconfig, []byte(sums["kube-proxy.exe"]), []byte(sums["kube-log-runner.exe"])),
		NodeServiceName: j.kubewinSum,
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
func (j *joiner) windowsServiceConfigs(effects []render.HostEffect) ([]winnode.ServiceConfig, error) {
	out, err := windowsServiceConfigsFrom(effects)
	if err != nil {
		return nil, err
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

// windowsServicesRecord is what join last installed and started on a Windows node.
type windowsServicesRecord struct {
	Services []winnode.ServiceConfig `json:"services"`
	// Inputs is, per service, the digest of its definition and of what it reads at start
	// (files, programs), as of the last join that had it running.
	Inputs map[string]string `json:"inputs"`
}

// windowsNodeService registers the services (created, or updated when their definition
// changed), opens the firewall ports, starts containerd and the kubelet — the kubelet registers
// the Node, whose pod CIDR the pod network needs — and the kubewin node service, and restarts a
// running service whose definition, files or program changed since the last join started it
// (recorded in WindowsServicesRecord, written only once every restart succeeded, so a failed
// restart is tried again by the next join).
func (j *joiner) windowsNodeService(ctx context.Context) ([]Change, error) {
	h, _ := j.windows()
	out, err := applyFirewallRules(ctx, h.Node, j.effects)
	if err != nil {
		return out, err
	}
	cfgs, err := j.windowsServiceConfigs(j.effects)
	if err != nil {
		return out, err
	}
	var rec windowsServicesRecord
	recordPath := WindowsServicesRecord(j.paths)
	if data, err := os.ReadFile(recordPath); err == nil {
		_ = json.Unmarshal(data, &rec) // an unreadable record: every definition is written again
	}
	recorded := map[string]winnode.ServiceConfig{}
	for _, c := range rec.Services {
		recorded[c.Name] = c
	}
	inputs := map[string]string{}
	for _, cfg := range cfgs {
		what := "service " + cfg.Name
		def, err := json.Marshal(cfg)
		if err != nil {
			return out, fmt.Errorf("%s: %w", what, err)
		}
		inputs[cfg.Name] = inputsDigest(def, []byte(j.inputs[cfg.Name]))
		_, err = h.Node.ServiceStatus(ctx, cfg.Name)
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
		}
	}
	// restarted: a dependent restarted with containerd has read its new inputs already.
	restarted := map[string]bool{}
	for _, name := range []string{"containerd", "kubelet", "kube-proxy", NodeServiceName} {
		if !slices.ContainsFunc(cfgs, func(c winnode.ServiceConfig) bool { return c.Name == name }) {
			continue // kube-proxy is a HostProcess pod on a node whose network a CNI pod owns
		}
		st, err := h.Node.ServiceStatus(ctx, name)
		if err != nil {
			return out, err
		}
		switch {
		case st.State != winnode.ServiceRunning && name == "kube-proxy":
			// Started by the pod-network step, once its HNS network exists.
		case st.State != winnode.ServiceRunning:
			if err := h.Node.StartService(ctx, name); err != nil {
				return out, fmt.Errorf("start service %s: %w", name, err)
			}
			out = append(out, Change{What: "service " + name + " started", Action: ActionUpdated})
		case rec.Inputs[name] != inputs[name] && !restarted[name]:
			names, ch, err := restartWithDependents(ctx, h.Node, cfgs, name)
			out = append(out, ch...)
			if err != nil {
				return out, fmt.Errorf("restart service %s (its definition, configuration or program changed): %w", name, err)
			}
			for _, n := range names {
				restarted[n] = true
			}
		}
	}
	data, err := json.MarshalIndent(windowsServicesRecord{Services: cfgs, Inputs: inputs}, "", "  ")
	if err != nil {
		return out, fmt.Errorf("record the services: %w", err)
	}
	if _, err := writeFiles([]File{{Path: recordPath, Data: append(data, '\n'), Mode: 0o644}}); err != nil {
		return out, err
	}
	return out, nil
}

// restartWithDependents restarts name; the running services that depend on it are stopped
// first and started again after it (the SCM refuses to stop a service whose dependents run:
// ERROR_DEPENDENT_SERVICES_RUNNING).
func restartWithDependents(ctx context.Context, h winnode.Host, cfgs []winnode.ServiceConfig, name string) ([]string, []Change, error) {
	var dependents []string
	for _, c := range cfgs {
		if slices.Contains(c.DependsOn, name) {
			if st, err := h.ServiceStatus(ctx, c.Name); err == nil && st.State == winnode.ServiceRunning {
				dependents = append(dependents, c.Name)
			}
		}
	}
	var out []Change
	for _, d := range dependents {
		if err := h.StopService(ctx, d); err != nil {
			return nil, out, fmt.Errorf("stop %s, which depends on it: %w", d, err)
		}
	}
	if err := h.RestartService(ctx, name); err != nil {
		return nil, out, err
	}
	out = append(out, Change{What: "service " + name + " restarted (its definition, configuration or program changed)", Action: ActionUpdated})
	for _, d := range dependents {
		if err := h.StartService(ctx, d); err != nil {
			return nil, out, fmt.Errorf("start %s again: %w", d, err)
		}
		out = append(out, Change{What: "service " + d + " restarted (it depends on " + name + ")", Action: ActionUpdated})
	}
	return append([]string{name}, dependents...), out, nil
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
	if cniOwned(j.nodePlan) {
		return j.hostProcessPodNetwork(ctx) // windows_hostprocess.go
	}
	h, _ := j.windows()
	conf, err := render.CNIConfig(j.nodePlan)
	if err != nil {
		return nil, err
	}
	desired, err := winnode.DesiredForNode(j.nodePlan, j.effects)
	if err != nil {
		return nil, err
	}
	// The node service may be running a pass of its own (a re-join): one at a time.
	lock, err := lockReconcile(ctx, j.paths)
	if err != nil {
		return nil, err
	}
	defer lock.release()
	r := newWindowsReconciler(h, desired, j.paths)
	var out []Change
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
	// The CNI configuration only once the HNS network exists: containerd reports NetworkReady
	// as soon as a configuration is there (and the kubelet schedules pods), and win-bridge needs
	// the network to exist already (containernetworking/plugins win-bridge_windows.go).
	cni, err := writeFiles([]File{{Path: filepath.Join(j.paths.CNIConfDir, render.CNIConfigName(j.nodePlan.Windows)), Data: conf, Mode: 0o644}})
	out = append(out, cni...)
	if err != nil {
		return out, err
	}
	if len(out) == 0 || !slices.ContainsFunc(out, func(c Change) bool { return c.Action != ActionUnchanged }) {
		out = append(out, Change{What: "HNS network " + desired.ProxyNetwork + " for " + j.podCIDR, Action: ActionUnchanged})
	}
	return out, nil
}

// newWindowsReconciler is the Reconciler join and the node service run: the routes it keeps
// from before the vSwitch (the metadata route) are saved below the data directory, so a later
// pass, in another process after a reboot, puts them back.
func newWindowsReconciler(h *WindowsHost, d winnode.Desired, paths render.NodePaths) *winnode.Reconciler {
	r := &winnode.Reconciler{Host: h.Node, Desired: d, PassTimeout: h.PassTimeout, Preserved: loadKeptRoutes(paths)}
	r.OnPreserve = func(rs []winnode.HostRoute) {
		kept := make([]keptRoute, 0, len(rs))
		for _, rt := range rs {
			kept = append(kept, keptRoute{Destination: rt.DestinationPrefix, Via: rt.NextHop})
		}
		if data, err := json.MarshalIndent(kept, "", "  "); err == nil {
			_, _ = writeFiles([]File{{Path: keptRoutesPath(paths), Data: append(data, '\n'), Mode: 0o644}})
		}
	}
	return r
}

// keptRoute is one entry of kept-routes.json, the file hns\setup.ps1 of the bundle keeps the
// same routes in (render/hns.go): a node installed from the bundle and joined later, or the
// other way round, reads what the other wrote.
type keptRoute struct {
	Destination string `json:"Destination"`
	Via         string `json:"Via"`
}

func keptRoutesPath(paths render.NodePaths) string {
	return filepath.Join(paths.DataDir, "kept-routes.json")
}

// loadKeptRoutes reads kept-routes.json; entries that are not an IPv4 prefix and next hop are
// left out (they are kept again at the next vSwitch).
func loadKeptRoutes(paths render.NodePaths) []winnode.HostRoute {
	data, err := os.ReadFile(keptRoutesPath(paths))
	if err != nil {
		return nil
	}
	var kept []keptRoute
	if json.Unmarshal(data, &kept) != nil {
		return nil
	}
	var out []winnode.HostRoute
	for _, k := range kept {
		dst, err1 := netip.ParsePrefix(k.Destination)
		via, err2 := netip.ParseAddr(k.Via)
		if err1 == nil && err2 == nil && dst.Addr().Is4() && via.Is4() {
			out = append(out, winnode.HostRoute{DestinationPrefix: dst.Masked().String(), NextHop: via.String()})
		}
	}
	return out
}

// WindowsDesired is the state the node service keeps on a joined Windows node: the plan
// LoadPlanned makes again from what join saved. Before join has read the pod CIDR there is
// none (os.ErrNotExist).
func WindowsDesired(ctx context.Context, h *WindowsHost, paths render.NodePaths) (winnode.Desired, error) {
	pl, err := LoadPlanned(ctx, h, paths)
	if err != nil {
		return winnode.Desired{}, err
	}
	d, err := winnode.DesiredFromPlan(pl.Plan, pl.Node)
	if err == nil && d.CNINetwork != nil {
		d.CNINetwork.Owner = pl.CNIDaemonSet
	}
	return d, err
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
		if !strings.HasPrefix(i.Name, "vEthernet (") {
			return i, nil
		}
		// The vSwitch's vNIC: the adapter is the one with its MAC that is not a vNIC, listed
		// as bound (IP unbound) since the listing includes all interfaces. A vNIC without one
		// (an internal switch's, "vEthernet (nat)") is the NIC itself; the node service finds
		// the adapter by MAC on every pass and never binds a network to a vNIC
		// (winnode.Reconciler.clusterAdapter).
		for _, a := range ifaces {
			if strings.EqualFold(a.MAC, i.MAC) && !strings.HasPrefix(a.Name, "vEthernet (") {
				a.IP, a.Prefix = i.IP, i.Prefix
				return a, nil
			}
		}
		return i, nil
	}
	return NIC{}, fmt.Errorf("no network adapter holds %s, the address this host reaches the API server from", localIP)
}
