package join_test

// The Windows join, end to end as far as this machine allows: a real control plane (etcd,
// kube-apiserver with Node,RBAC and NodeRestriction, kube-controller-manager allocating pod
// CIDRs, signing and approving the kubelet's CSRs) and `join.Run` with a WindowsHost whose
// Windows side is winnode.MemHost — the in-memory model of a Windows host, not Windows: no
// Windows machine runs here and wine cannot run Go 1.26 binaries.
//
// What the harness does in place of the Windows kubelet, which cannot run here: when the model's
// "kubelet" service is started, it runs the kubelet's own TLS bootstrap code
// (k8s.io/kubernetes pkg/kubelet/certificate/bootstrap.LoadClientCert) on the files join wrote,
// and registers the Node with the credential that yields, as the kubelet's first status sync
// does. It does not make the Node Ready: the ready and check-pod steps (shared with Linux and
// run for real by TestJoinEndToEnd) are skipped.

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/kubernetes/pkg/kubelet/certificate/bootstrap"

	kwbootstrap "github.com/kubewin/kubewin/internal/bootstrap"
	"github.com/kubewin/kubewin/internal/join"
	"github.com/kubewin/kubewin/internal/nodestatus"
	"github.com/kubewin/kubewin/internal/render"
	"github.com/kubewin/kubewin/internal/testenv"
	"github.com/kubewin/kubewin/internal/winnode"
)

const windowsSpec = `apiVersion: kubewin.io/v1alpha1
kind: Cluster
metadata:
  name: win-e2e
spec:
  kubernetesVersion: v1.37.1
%s
  networking:
    podCIDRs: [10.244.0.0/16]
    serviceCIDR: 10.96.0.0/12
    clusterDNS: 10.96.0.10
    nodeCIDRMaskSize: 24
  nodes:
  - name: cp1
    os: linux
    role: control-plane
    nics:
    - {name: eth0, ip: 192.168.7.10, prefix: 24, gateway: 192.168.7.1}
`

// The designs the tests publish.
const (
	torRouterDesign = `  design: upstream-tor/router
  linuxCNI: {type: other}
  torRouter: {name: tor1, ip: 192.168.7.1}`
	flannelDesign = `  design: flannel/host-gw
  linuxCNI: {type: flannel}`
)

const (
	winNode    = "win-e2e-1"
	winMAC     = "00:15:5d:00:07:31"
	winAdapter = "Ethernet0"
)

// windowsJoin is the cluster side and the in-memory Windows host of one test.
type windowsJoin struct {
	cp    *testenv.ControlPlane
	admin kubernetes.Interface
	token *kwbootstrap.Token
	mem   *winnode.MemHost
	host  *join.WindowsHost
	paths render.NodePaths
	root  string
	// binaries is the --binaries directory, staged once.
	binaries string
	stop     context.CancelFunc
	kubeNN   chan error
}

func newWindowsJoin(t *testing.T, kcmArgs ...string) *windowsJoin {
	t.Helper()
	w := &windowsJoin{}
	// Node,RBAC and NodeRestriction as kubeadm clusters (the node "connects" from loopback).
	w.cp = testenv.StartControlPlane(t, testenv.WithNodeAccess("127.0.0.1"))
	w.cp.StartControllerManager(t, "10.244.0.0/16", 24, kcmArgs...)
	w.admin = w.cp.Clientset(t)
	ctx := context.Background()
	ca := w.cp.Config.TLSClientConfig.CAData
	var err error
	if len(ca) == 0 {
		if ca, err = os.ReadFile(w.cp.Config.TLSClientConfig.CAFile); err != nil {
			t.Fatal(err)
		}
	}
	if w.token, err = kwbootstrap.NewToken(w.cp.Host, ca, kwbootstrap.TokenOptions{}, time.Now()); err != nil {
		t.Fatal(err)
	}
	if _, err := kwbootstrap.Apply(ctx, w.admin, w.token); err != nil {
		t.Fatal(err)
	}
	w.publish(t, torRouterDesign)

	w.root = t.TempDir()
	w.binaries = windowsBinaries(w.root)
	w.paths = render.WindowsPathsUnder(filepath.Join(w.root, "k"), filepath.Join(w.root, "containerd"))
	w.mem = winnode.NewMemHost(winnode.Adapter{Name: winAdapter, MAC: winMAC, IPv4: []string{"192.168.7.31"}})
	kubewinExe := filepath.Join(w.root, "download", "kubewin.exe")
	writeFile(t, kubewinExe, "kubewin.exe stands in here")
	w.host = &join.WindowsHost{
		Node: w.mem,
		FactsFunc: func(context.Context, string) (join.Facts, error) {
			return join.Facts{Hostname: winNode, WindowsBuild: "10.0.20348",
				NIC: join.NIC{Name: winAdapter, MAC: winMAC, IP: "192.168.7.31", Prefix: 24}}, nil
		},
		InstallDir: `C:\k`, Kubewin: kubewinExe, KubewinPath: `C:\k\kubewin.exe`,
		PassTimeout: 10 * time.Second,
	}
	kctx, cancel := context.WithCancel(ctx)
	w.stop = cancel
	w.kubeNN = make(chan error, 1)
	go func() { w.kubeNN <- w.playKubelet(kctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-w.kubeNN; err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("harness kubelet: %v", err)
		}
	})
	return w
}

func (w *windowsJoin) publish(t *testing.T, design string) {
	t.Helper()
	if _, err := kwbootstrap.Publish(context.Background(), w.admin, []byte(fmt.Sprintf(windowsSpec, design))); err != nil {
		t.Fatal(err)
	}
}

// playKubelet waits until the model's kubelet service runs, then does what the Windows kubelet
// would: TLS bootstrap with the files join wrote, and the Node's registration.
func (w *windowsJoin) playKubelet(ctx context.Context) error {
	for w.mem.State("kubelet") != winnode.ServiceRunning {
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(50 * time.Millisecond):
		}
	}
	if err := bootstrap.LoadClientCert(ctx, w.paths.KubeletKubeconfig(), w.paths.BootstrapKubeconfig(), w.paths.PKIDir, types.NodeName(winNode)); err != nil {
		return fmt.Errorf("the kubelet's TLS bootstrap: %w", err)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", w.paths.KubeletKubeconfig())
	if err != nil {
		return err
	}
	c, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: winNode, Labels: map[string]string{
		"kubernetes.io/os": "windows", "kubernetes.io/hostname": winNode}}}
	if _, err := c.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("register Node %s with the node's credential: %w", winNode, err)
	}
	return nil
}

func (w *windowsJoin) options() join.Options {
	return join.Options{Server: w.cp.Host, Token: w.token.Token, CACertHash: w.token.CACertHash,
		Binaries: join.Binaries{Source: w.binaries}, Timeout: 90 * time.Second,
		Skip: []string{"ready", "check-pod"}}
}

// windowsBinaries stages files named as the Windows binaries with their SHA256SUMS (their
// content is irrelevant to the in-memory host; the checksum path is the real one).
func windowsBinaries(root string) string {
	dir := filepath.Join(root, "binaries")
	var sums strings.Builder
	for _, name := range []string{"containerd.exe", "containerd-shim-runhcs-v1.exe", "kubelet.exe", "kube-proxy.exe",
		"kube-log-runner.exe", "cni/win-bridge.exe", "cni/host-local.exe"} {
		data := []byte("windows binary " + name)
		p := filepath.Join(dir, filepath.FromSlash(name))
		_ = os.MkdirAll(filepath.Dir(p), 0o755)
		_ = os.WriteFile(p, data, 0o755)
		fmt.Fprintf(&sums, "%s  %s\n", sha256Hex(data), name)
	}
	_ = os.WriteFile(filepath.Join(dir, "SHA256SUMS"), []byte(sums.String()), 0o644)
	return dir
}

// local maps a path as a Windows service names it (C:\k\..., C:\Program Files\containerd\...)
// to where the test keeps that file.
func (w *windowsJoin) local(winPath string) (string, bool) {
	for prefix, dir := range map[string]string{`C:\k\`: w.paths.DataDir, render.WindowsContainerdDir + `\`: w.paths.RuntimeBinDir} {
		if rest, ok := strings.CutPrefix(winPath, prefix); ok {
			return filepath.Join(dir, filepath.FromSlash(strings.ReplaceAll(rest, `\`, "/"))), true
		}
	}
	return "", false
}

func TestWindowsJoinAgainstInMemoryHost(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatal("needs root like the other join tests (CI runs as root)")
	}
	w := newWindowsJoin(t)
	ctx := context.Background()
	var log strings.Builder
	o := w.options()
	o.Log = &log
	t0 := time.Now()
	res, err := join.Run(ctx, o, w.host, w.paths)
	if err != nil {
		t.Fatalf("join: %v\n%s", err, log.String())
	}
	t.Logf("Windows join (in-memory host, real control plane) in %s", time.Since(t0).Round(time.Millisecond))

	created := 0
	for _, st := range res.Steps {
		for _, c := range st.Changes {
			if strings.HasPrefix(c.What, "firewall rule ") && c.Action == join.ActionCreated {
				created++
			}
		}
	}
	if created == 0 {
		t.Errorf("the first join reports no firewall rule created: %+v", res.Steps)
	}
	node, err := w.admin.CoreV1().Nodes().Get(ctx, winNode, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if node.Spec.PodCIDR == "" || res.PodCIDR != node.Spec.PodCIDR {
		t.Fatalf("join's pod CIDR %q, the Node's (kube-controller-manager) %q", res.PodCIDR, node.Spec.PodCIDR)
	}

	t.Run("the pod network is the Node's pod CIDR, made after the kubelet registered", func(t *testing.T) {
		var pod *winnode.Network
		for _, n := range w.mem.Networks() {
			if n.Name != "External" {
				pod = &n
			}
		}
		if pod == nil || pod.Prefix != node.Spec.PodCIDR || !strings.EqualFold(pod.AdapterName, winAdapter) {
			t.Fatalf("HNS networks %+v; want the pod network %s on %s", w.mem.Networks(), node.Spec.PodCIDR, winAdapter)
		}
		eps := w.mem.Endpoints()
		if len(eps) != 1 || !eps[0].HostAttached || eps[0].NetworkID != pod.ID {
			t.Fatalf("host endpoints %+v; want one, attached, on %s", eps, pod.Name)
		}
		kubelet := w.mem.Index(0, "start", "kubelet")
		created := w.mem.Index(0, "network-create", pod.Name)
		proxy := w.mem.Index(0, "start", "kube-proxy")
		if kubelet < 0 || created < kubelet || proxy < created {
			t.Fatalf("want kubelet started (%d) before the pod network (%d) before kube-proxy (%d): %v", kubelet, created, proxy, w.mem.Events())
		}
		routes := w.mem.HostRoutes()
		if len(routes) == 0 {
			t.Fatalf("no host routes; the upstream-ToR design routes the cluster CIDR via the pod gateway")
		}
		for _, r := range routes {
			if r.InterfaceAlias != "vEthernet (cbr0)" {
				t.Errorf("route %+v not on the host endpoint's vNIC", r)
			}
		}
		for _, rule := range []string{"kubelet", "nodeport-tcp", "nodeport-udp"} {
			found := false
			for _, e := range w.mem.Events() {
				found = found || (e.Kind == "firewall-rule" && strings.Contains(e.Name, rule))
			}
			if !found {
				t.Errorf("no firewall rule for %s: %v", rule, w.mem.Events())
			}
		}
	})

	t.Run("every file a service reads is one join wrote", func(t *testing.T) {
		for _, name := range []string{"containerd", "kubelet", "kube-proxy", join.NodeServiceName} {
			def, ok := w.mem.ServiceDefinition(name)
			if !ok {
				t.Fatalf("service %s not installed", name)
			}
			if len(def.Recovery) == 0 {
				t.Errorf("service %s has no recovery actions", name)
			}
			files := 0
			for _, a := range append([]string{def.Binary}, def.Args...) {
				_, v, _ := strings.Cut(a, "=")
				if v == "" {
					v = a
				}
				p, ok := w.local(v)
				// Logs are the services' to write; the bootstrap kubeconfig is removed once the
				// kubelet has its own credential (as kubeadm does), which the kubelet then uses.
				if !ok || strings.HasSuffix(v, ".log") || strings.HasSuffix(v, `\bootstrap-kubelet.conf`) {
					continue
				}
				files++
				if _, err := os.Stat(p); err != nil {
					t.Errorf("service %s names %s, which join did not write (%v)", name, v, err)
				}
			}
			if files == 0 {
				t.Errorf("service %s names no file below the install dir: %q %q", name, def.Binary, def.Args)
			}
		}
		// The kubelet watches the static pod directory join's check pod goes to.
		kcfg, err := os.ReadFile(w.paths.KubeletConfig())
		if err != nil {
			t.Fatal(err)
		}
		var staticPods string
		for _, line := range strings.Split(string(kcfg), "\n") {
			if v, ok := strings.CutPrefix(line, "staticPodPath: "); ok {
				staticPods = strings.Trim(v, `'"`)
			}
		}
		if p, ok := w.local(staticPods); !ok {
			t.Errorf("kubelet staticPodPath %q is not below the install dir", staticPods)
		} else if st, err := os.Stat(p); err != nil || !st.IsDir() || p != render.StaticPodDir(w.paths) {
			t.Errorf("kubelet staticPodPath %s (here %s, join's %s): %v", staticPods, p, render.StaticPodDir(w.paths), err)
		}
		// Nothing join wrote below the install dir is readable by every local user.
		for _, p := range []string{w.paths.CACert(), w.paths.KubeletKubeconfig(), w.paths.KubeProxyKubeconfig(),
			join.KubeletClientCert(w.paths), w.paths.KubeletConfig()} {
			if grants, ok := w.mem.ACL(p); !ok || len(grants) != 0 {
				t.Errorf("%s: restricted %v, grants %v; want SYSTEM and Administrators only", p, ok, grants)
			}
		}
		if i, tok := w.mem.Index(0, "acl", w.paths.DataDir), w.mem.Index(0, "start", "kubelet"); i < 0 || i > tok {
			t.Errorf("the install dir's ACL (event %d) must be set before anything runs (kubelet started at %d)", i, tok)
		}
		kc, err := clientcmd.LoadFromFile(w.paths.KubeProxyKubeconfig())
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range kc.AuthInfos {
			p, ok := w.local(a.ClientCertificate)
			if !ok {
				t.Fatalf("kube-proxy's client certificate %q is not below the install dir", a.ClientCertificate)
			}
			if _, err := os.Stat(p); err != nil {
				t.Errorf("kube-proxy's credential %s (the kubelet's rotated certificate): %v", a.ClientCertificate, err)
			}
		}
		conf := filepath.Join(w.paths.CNIConfDir, "l2bridge.conf") // the HNS network's name
		if data, err := os.ReadFile(conf); err != nil || !strings.Contains(string(data), node.Spec.PodCIDR) {
			t.Errorf("CNI configuration %s for %s: %v\n%s", conf, node.Spec.PodCIDR, err, data)
		}
		if _, err := os.Stat(w.paths.BootstrapKubeconfig()); !os.IsNotExist(err) {
			t.Errorf("the bootstrap kubeconfig is still there after TLS bootstrap (%v)", err)
		}
	})

	t.Run("a second join changes nothing", func(t *testing.T) {
		res2, err := join.Run(ctx, w.options(), w.host, w.paths)
		if err != nil {
			t.Fatal(err)
		}
		if res2.Changed() {
			t.Fatalf("second join changed: %+v", res2.Steps)
		}
	})

	// A new release of a program: the running file is moved aside, not overwritten (Windows
	// refuses that), and the service running it is restarted — containerd only after its
	// dependent kubelet is stopped, as the SCM requires. kube-proxy is left alone.
	newRelease := func(t *testing.T, release string, names ...string) {
		t.Helper()
		dir := filepath.Join(w.root, "binaries")
		sums, err := os.ReadFile(filepath.Join(dir, "SHA256SUMS"))
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(string(sums)), "\n")
		for _, name := range names {
			data := []byte("windows binary " + name + ", release " + release)
			writeFile(t, filepath.Join(dir, name), string(data))
			for i, l := range lines {
				if strings.HasSuffix(l, "  "+name) {
					lines[i] = sha256Hex(data) + "  " + name
				}
			}
		}
		writeFile(t, filepath.Join(dir, "SHA256SUMS"), strings.Join(lines, "\n")+"\n")
	}
	t.Run("new kubelet.exe and containerd.exe: replaced, their services restarted in order", func(t *testing.T) {
		newRelease(t, "1.37.2", "kubelet.exe", "containerd.exe")
		before := len(w.mem.Events())
		res3, err := join.Run(ctx, w.options(), w.host, w.paths)
		if err != nil {
			t.Fatal(err)
		}
		ev := w.mem.Events()[before:]
		stopK, stopC := w.mem.Index(before, "stop", "kubelet"), w.mem.Index(before, "stop", "containerd")
		startC, startK := w.mem.Index(before, "start", "containerd"), w.mem.Index(before, "start", "kubelet")
		if stopK < 0 || stopC < stopK || startC < stopC || startK < startC {
			t.Fatalf("want kubelet stopped, containerd stopped, containerd started, kubelet started, in that order: %v", ev)
		}
		if w.mem.Count("start", "kubelet") < 2 || w.mem.State("kubelet") != winnode.ServiceRunning || w.mem.State("containerd") != winnode.ServiceRunning {
			t.Fatalf("kubelet %s, containerd %s after the join: %v", w.mem.State("kubelet"), w.mem.State("containerd"), ev)
		}
		if w.mem.Index(before, "stop", "kube-proxy") >= 0 {
			t.Errorf("kube-proxy runs neither program: %v", ev)
		}
		if again := w.mem.Index(startK+1, "start", "kubelet"); again >= 0 {
			t.Errorf("the kubelet, restarted with containerd, was restarted again: %v", ev)
		}
		if got, _ := os.ReadFile(filepath.Join(w.paths.BinDir, "kubelet.exe")); !strings.Contains(string(got), "release 1.37.2") || !res3.Changed() {
			t.Fatalf("kubelet.exe not replaced (changed %v)", res3.Changed())
		}
		if aside, _ := filepath.Glob(filepath.Join(w.paths.BinDir, "*.old-*")); len(aside) != 0 {
			t.Errorf("old versions left although nothing runs them here: %v", aside)
		}
		// Nothing changed since: nothing restarts (the ACLs are set again, to the same).
		before = len(w.mem.Events())
		res4, err := join.Run(ctx, w.options(), w.host, w.paths)
		if err != nil || res4.Changed() {
			t.Fatalf("a join after the update: %v, changed %v", err, res4.Changed())
		}
		for _, e := range w.mem.Events()[before:] {
			if e.Kind != "acl" {
				t.Fatalf("a join after the update changed the host: %v", w.mem.Events()[before:])
			}
		}
		// A restart that fails is not forgotten: the next join restarts the service again.
		newRelease(t, "1.37.3", "kubelet.exe")
		w.mem.FailStart("kubelet", "The service did not start due to a logon failure.")
		if _, err := join.Run(ctx, w.options(), w.host, w.paths); err == nil || !strings.Contains(err.Error(), "restart service kubelet") {
			t.Fatalf("a kubelet that does not start again: join says %v", err)
		}
		w.mem.FailStart("kubelet", "")
		before = len(w.mem.Events())
		if _, err := join.Run(ctx, w.options(), w.host, w.paths); err != nil {
			t.Fatal(err)
		}
		if w.mem.Index(before, "start", "kubelet") < 0 || w.mem.State("kubelet") != winnode.ServiceRunning {
			t.Fatalf("the next join did not start the kubelet with release 1.37.3: %v", w.mem.Events()[before:])
		}
	})

	t.Run("node service: reboot, HNS restart, a failing kubelet", func(t *testing.T) {
		ws := &join.WindowsNodeService{Host: w.host, Paths: w.paths}
		if rep, err := ws.Repair(ctx); err != nil || len(rep) != 0 {
			t.Fatalf("a healthy node needs no repair: %v %v", rep, err)
		}
		w.mem.Reboot()
		t0 := time.Now()
		repairs, err := ws.Repair(ctx)
		if err != nil {
			t.Fatalf("repair after reboot: %v (%v)", err, repairs)
		}
		t.Logf("reboot repaired in one pass, %s: %s", time.Since(t0).Round(time.Microsecond), strings.Join(repairs, "; "))
		for _, want := range []string{"created HNS network", "created host endpoint", "started service kube-proxy", "started service kubelet"} {
			if !strings.Contains(strings.Join(repairs, "\n"), want) {
				t.Errorf("repairs after reboot lack %q: %v", want, repairs)
			}
		}
		for _, s := range ws.Status().Services {
			if s.State != "running" {
				t.Errorf("after the repair %s is %s", s.Name, s.State)
			}
		}

		w.mem.RestartHNS()
		repairs, err = ws.Repair(ctx)
		if err != nil || !strings.Contains(strings.Join(repairs, "\n"), "restarted service kube-proxy") {
			t.Fatalf("after an HNS restart: %v %v", repairs, err)
		}

		// A kubelet that will not start, with a Windows kubelet's real last words in its log (the
		// field corpus row from kubernetes-sigs/sig-windows-tools#72): the node service reports
		// it unhealthy with the diagnosis, on the Node, with the node's credential.
		fieldLine := fieldCorpusLine(t, "KUBELET-CLIENT-CA-MISSING", "kubernetes-sigs/sig-windows-tools#72")
		writeFile(t, filepath.Join(w.paths.LogDir, "kubelet.log"), fieldLine+"\n")
		w.mem.FailStart("kubelet", "The service did not respond to the start or control request in a timely fashion.")
		if err := w.mem.StopService(ctx, "kube-proxy"); err != nil {
			t.Fatal(err)
		}
		if err := w.mem.StopService(ctx, "kubelet"); err != nil {
			t.Fatal(err)
		}
		if _, err := ws.Repair(ctx); err == nil {
			t.Fatal("a kubelet that does not start: want an unhealthy pass")
		}
		assessor, err := nodestatus.NewAssessor(ws.Manifest)
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := clientcmd.BuildConfigFromFlags("", w.paths.KubeletKubeconfig())
		if err != nil {
			t.Fatal(err)
		}
		nodeClient, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			t.Fatal(err)
		}
		h := assessor.Assess(ctx, ws.Status(), nil)
		pub := &nodestatus.Publisher{Client: nodeClient, Node: winNode, Component: "kubewin-node"}
		if err := pub.Publish(ctx, h); err != nil {
			t.Fatal(err)
		}
		list, err := nodestatus.List(ctx, w.admin)
		if err != nil {
			t.Fatal(err)
		}
		var got *nodestatus.NodeHealth
		for i := range list {
			if list[i].Node == winNode {
				got = &list[i]
			}
		}
		if got == nil || got.Healthy || h.Diagnosis == nil || h.Diagnosis.ID != "KUBELET-CLIENT-CA-MISSING" || !strings.Contains(got.Message, "diagnosed "+h.Diagnosis.ID) {
			t.Fatalf("kubewin status for %s: %+v (assessment %+v); want unhealthy with a diagnosis", winNode, got, h)
		}
		t.Logf("status: %s: %s", got.Reason, got.Message)
	})
}

func TestWindowsJoinRefusals(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatal("needs root like the other join tests (CI runs as root)")
	}
	w := newWindowsJoin(t)
	ctx := context.Background()
	dropIn := filepath.Join(t.TempDir(), "local.yaml")
	writeFile(t, dropIn, "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nmaxPods: 50\n")
	for _, tc := range []struct {
		name   string
		design string
		edit   func(*join.Options, *join.WindowsHost)
		want   string
	}{
		{"another install dir", torRouterDesign, func(_ *join.Options, h *join.WindowsHost) { h.InstallDir = `D:\kube` },
			`run join with --root C:\k`},
		{"flannel design", flannelDesign, func(*join.Options, *join.WindowsHost) {},
			"flannel nodes are installed with the bundle"},
		{"no Containers feature", torRouterDesign, func(_ *join.Options, h *join.WindowsHost) {
			mem := winnode.NewMemHost(winnode.Adapter{Name: winAdapter, MAC: winMAC, IPv4: []string{"192.168.7.31"}})
			mem.RemoveContainersFeature()
			h.Node = mem
		}, "Install-WindowsFeature -Name Containers"},
		{"kubelet drop-ins", torRouterDesign, func(o *join.Options, _ *join.WindowsHost) { o.KubeletDropIns = []string{dropIn} },
			"--kubelet-config-dropin is for Linux nodes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w.publish(t, tc.design)
			o := w.options()
			h := *w.host
			tc.edit(&o, &h)
			_, err := join.Run(ctx, o, &h, w.paths)
			if !errors.Is(err, join.ErrBadInput) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v; want a bad-input error saying %q", err, tc.want)
			}
			// Only the install dir's ACL is set before the description is read (before the
			// token is written); no service, network or rule.
			for _, e := range h.Node.(*winnode.MemHost).Events() {
				if e.Kind != "acl" {
					t.Fatalf("a refused join changed the host: %v", w.mem.Events())
				}
			}
		})
	}
}

func sha256Hex(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// fieldCorpusLine is the log line of the diagnose field corpus (testdata/diagnose-field) with
// that signature and source.
func fieldCorpusLine(t *testing.T, id, source string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "diagnose-field", "errors.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range strings.Split(string(data), "\n") {
		f := strings.Split(row, "\t")
		if len(f) >= 5 && f[1] == id && f[2] == source {
			return f[4]
		}
	}
	t.Fatalf("no %s row from %s in the field corpus", id, source)
	return ""
}
