package join_test

// The gateway end-to-end test: the kubewin gateway DaemonSet that `kubewin plan` renders runs as
// a real pod under a real kubelet on a node that joined with kubewin join (as in
// TestJoinEndToEnd), and keepalived in it holds a Windows node's gateway VIP in the node's
// network namespace.
//
// What runs for real: etcd, kube-apiserver (Node,RBAC, NodeRestriction and ServiceAccount
// admission, the lease endpoint reconciler), kube-controller-manager (node IPAM, CSR signing and
// approval, ServiceAccount and token controllers, kube-root-ca.crt publisher, DaemonSet
// controller), kube-scheduler, and on the node kubelet, containerd, runc, kube-proxy (iptables),
// and in the gateway pod kubewin gateway (init and controller), keepalived and chrt. The gateway
// pods reach the API server the way they do on a real cluster: in-cluster configuration with
// their ServiceAccount's token, through the kubernetes Service's ClusterIP, which kube-proxy
// in the node's namespace translates to the API server's advertised address.
//
// What exists only in the description: the Windows node win1 (a Node object kubewin plan
// renders in cluster/windows-nodes.yaml, applied with the admin client; no kubelet) and the
// second gateway member kw-gw-peer (a gateway group needs two members; the peer is down, so the
// joined node is MASTER alone, as after a peer failure).
//
// Workarounds for this machine, beyond TestJoinEndToEnd's (never part of what kubewin installs):
//   - No image registry: the gateway image is the release's (internal/release/gatewayimage,
//     kubewin with keepalived and chrt from Debian packages), imported into the node's
//     containerd, and the plan pins it by digest (images.gateway: name:tag@sha256:…, as a
//     release's user would). The rendered DaemonSet sets no imagePullPolicy, and an image with
//     a digest defaults to IfNotPresent, so the kubelet uses the imported image and pulls
//     nothing.
//   - Real-time group scheduling on cgroups v1: new cgroups get no real-time budget, so chrt
//     --rr fails in every container; the nodeimage/rtbudget runc wrapper gives containers that
//     start with chrt a budget (see its package comment).

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kubewin/kubewin/internal/gateway"
	"github.com/kubewin/kubewin/internal/release/gatewayimage"
	"github.com/kubewin/kubewin/internal/render"
	"github.com/kubewin/kubewin/internal/testenv"
	"github.com/kubewin/kubewin/internal/testenv/netns"
	"github.com/kubewin/kubewin/internal/testenv/nodeimage"
)

// gatewaySpec: %[1]s is the /24 of the node's veth (host .1, node .2, the absent peer .3, the
// Windows node .10, the router VIP .250), %[2]s the gateway group's name.
const gatewaySpec = `apiVersion: kubewin.io/v1alpha1
kind: Cluster
metadata:
  name: e2e-gw
spec:
  kubernetesVersion: v1.37.1
  design: upstream-tor/keepalived
  linuxCNI:
    type: bridge
  containerRuntime:
    cgroupDriver: cgroupfs
  networking:
    podCIDRs: [10.244.0.0/16]
    serviceCIDR: 10.96.0.0/12
    clusterDNS: 10.96.0.10
    nodeCIDRMaskSize: 24
  images:
    gateway: %[3]s
  gatewayGroups:
  - name: %[2]s
    interface: eth0
    members:
    - {node: kw-gw-node, priority: 150}
    - {node: kw-gw-peer, priority: 100}
    routerVIPs: [%[1]s.250]
  nodes:
  - name: cp1
    os: linux
    role: control-plane
    nics:
    - {name: eth0, ip: %[1]s.1, prefix: 24}
  - name: kw-gw-node
    os: linux
    role: worker
    nics:
    - {name: eth0, ip: %[1]s.2, prefix: 24}
  - name: kw-gw-peer
    os: linux
    role: worker
    nics:
    - {name: eth0, ip: %[1]s.3, prefix: 24}
  - name: win1
    os: windows
    role: worker
    windowsBuild: 10.0.20348
    podCIDR: 10.244.200.0/24
    nics:
    - {name: eth0, ip: %[1]s.10, prefix: 24, gateway: %[1]s.1}
`

const (
	gwNodeName   = "kw-gw-node"
	gatewayImage = "kubewin.test/gateway:e2e"
	// winGatewayVIP is win1's pod-CIDR gateway (.1 of 10.244.200.0/24), which the group holds.
	winGatewayVIP = "10.244.200.1/24"
	gwNamespace   = "kubewin-system"
)

func TestGatewayPodEndToEnd(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatal("the gateway end-to-end test needs root (network namespaces, a kubelet); CI runs as root")
	}
	began := time.Now()
	assets, err := testenv.Assets()
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	root := filepath.Join(work, "node")
	paths := render.LinuxPathsUnder(root)
	ctx := context.Background()

	var r [2]byte
	_, _ = rand.Read(r[:])
	subnet := fmt.Sprintf("10.252.%d", r[0])
	// The group's name is the test's own: the gateway's hostPath state directory
	// (/var/lib/kubewin/gateway/<group>) is on this machine, shared with concurrent runs.
	group := "e2e" + hex.EncodeToString(r[:])
	ns, hostIP, _ := nodeNetwork(t, subnet, 24, "gwnode", "kwg")

	cp := testenv.StartControlPlane(t, testenv.WithNodeAccess(hostIP), testenv.WithServiceAccounts())
	cp.StartControllerManager(t, "10.244.0.0/16", 24)
	cp.StartScheduler(t)
	admin := cp.Clientset(t)

	kubewin := buildKubewin(t, work)
	binaries := stageBinaries(t, assets, filepath.Join(work, "binaries"))
	wrapDir, err := nodeimage.BuildRuncWrapper(filepath.Join(work, "runcwrap"))
	if err != nil {
		t.Fatal(err)
	}
	installRuncWrapper(t, wrapDir, paths)
	rtWrap, err := nodeimage.BuildRTBudgetWrapper(work)
	if err != nil {
		t.Fatal(err)
	}
	cgroupRoot := "/kubewin-gw-e2e-" + hex.EncodeToString(r[:]) + fmt.Sprint(os.Getpid())
	cgroupDirs := makeCgroupRoot(t, cgroupRoot)
	dropIn := filepath.Join(work, "this-machine.yaml")
	writeFile(t, dropIn, fmt.Sprintf(`# This test machine, not kubewin: cgroups v1 and a cgroup root of the test's own.
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
failCgroupV1: false
cgroupRoot: %s
`, cgroupRoot))
	stateDir := "/var/lib/kubewin/gateway/" + group
	removeHostState := hostStateCleanup(stateDir)
	t.Cleanup(removeHostState)

	// The gateway image, built as a release builds it; the plan pins it by digest.
	gatewayTar, gatewayDigest := buildGatewayImage(t, work, kubewin)
	pinned := gatewayImage + "@" + gatewayDigest

	// Admin side: plan (the gateway manifests and the Windows Node objects), publish, token.
	specFile := filepath.Join(work, "cluster.yaml")
	writeFile(t, specFile, fmt.Sprintf(gatewaySpec, subnet, group, pinned))
	planDir := filepath.Join(work, "plan")
	run(t, nil, kubewin, "plan", "-f", specFile, "-d", planDir)
	run(t, nil, kubewin, "publish", "-f", specFile, "--kubeconfig", cp.KubeconfigPath)
	if err := cp.CreateFiles(ctx, filepath.Join(planDir, "cluster", "windows-nodes.yaml")); err != nil {
		t.Fatalf("apply the Windows Node objects of the plan: %v", err)
	}
	joinArgs := parseJoinCommand(t, run(t, nil, kubewin, "token", "create", "--kubeconfig", cp.KubeconfigPath))

	// Node side, as in TestJoinEndToEnd; runcwrap executes rtbudget, which executes runc.
	env := append(os.Environ(), "PATH="+wrapDir+":"+os.Getenv("PATH"), nodeimage.RealRuncEnv+"="+rtWrap)
	nodeLog := filepath.Join(work, "node-run.log")
	nodeRun := startInNetns(t, ns, env, nodeLog, kubewin, "node", "run", "--root", root)
	podNetnsBefore := podNetns()
	t.Cleanup(func() { cleanupNode(t, nodeRun, root, paths, cgroupDirs, podNetnsBefore) })

	images := append(buildImages(t, work), gatewayTar)
	imported := make(chan error, 1)
	go func() { imported <- importWhenUp(paths, assets, images) }()
	nodeArgs := append(joinArgs, "--binaries", binaries, "--root", root, "--init", "none",
		"--node-name", gwNodeName, "--kubelet-config-dropin", dropIn, "--timeout", "3m", "-o", "json")
	out, code := runInNetns(t, ns, env, kubewin, nodeArgs...)
	if err := <-imported; err != nil {
		t.Fatalf("import images: %v", err)
	}
	if code != 0 {
		t.Fatalf("join exited %d:\n%s\n--- kubelet log tail:\n%s", code, out, tailFile(filepath.Join(paths.LogDir, "kubelet.log"), 3000))
	}
	t.Logf("node %s joined, %s after the start", gwNodeName, time.Since(began).Round(time.Second))

	// kube-proxy in the node's namespace with the node's credential, as TestJoinEndToEnd runs it:
	// the gateway pods use the host network, so its rules lead them from the kubernetes
	// Service's ClusterIP (their in-cluster configuration) to the API server.
	stopProxy := startKubeProxy(t, ns, env, assets, work, paths, gwNodeName)
	defer stopProxy()
	svc, err := admin.CoreV1().Services("default").Get(ctx, "kubernetes", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := waitFor(time.Minute, func() bool {
		out, _ := exec.Command("nsenter", "--net="+ns.Path(), "iptables-save", "-t", "nat").CombinedOutput()
		return strings.Contains(string(out), "-d "+svc.Spec.ClusterIP+"/32") && strings.Contains(string(out), "default/kubernetes:https")
	}); err != nil {
		t.Fatalf("kube-proxy did not program the kubernetes Service %s (the lease reconciler names %s as its endpoint): %v\n%s",
			svc.Spec.ClusterIP, hostIP, err, tailFile(filepath.Join(work, "kube-proxy.log"), 3000))
	}

	// Apply what kubewin plan rendered for the group, unchanged.
	manifest := filepath.Join(planDir, "cluster", "gateway-"+group+".yaml")
	if err := cp.CreateFiles(ctx, manifest); err != nil {
		t.Fatalf("apply %s: %v", manifest, err)
	}
	dsName := "kubewin-gateway-" + group
	var pod *corev1.Pod
	if err := waitFor(3*time.Minute, func() bool {
		pod = runningPod(ctx, admin, "app.kubernetes.io/component=gateway,"+gateway.StatusLabelGroup+"="+group)
		return pod != nil
	}); err != nil {
		t.Fatalf("gateway pod not Running and ready on %s: %v\n%s\n--- kubelet log tail:\n%s", gwNodeName, err,
			describePods(ctx, admin), tailFile(filepath.Join(paths.LogDir, "kubelet.log"), 4000))
	}
	for _, c := range append(pod.Spec.InitContainers, pod.Spec.Containers...) {
		if c.Image != pinned {
			t.Errorf("container %s of %s runs %s, want the image pinned by digest %s", c.Name, pod.Name, c.Image, pinned)
		}
	}
	if pod.Spec.NodeName != gwNodeName {
		t.Errorf("gateway pod %s runs on %q, want %s", pod.Name, pod.Spec.NodeName, gwNodeName)
	}
	t.Logf("gateway pod %s Running on %s, %s after the start", pod.Name, pod.Spec.NodeName, time.Since(began).Round(time.Second))

	// keepalived in the pod is MASTER and the Windows node's gateway VIP is on the member's
	// interface in the node's namespace.
	keepalivedLog := func() string {
		logs, _ := filepath.Glob(filepath.Join(paths.PodLogsDir, gwNamespace+"_"+pod.Name+"_*", "keepalived", "*.log"))
		var b strings.Builder
		for _, l := range logs {
			b.WriteString(tailFile(l, 1<<20))
		}
		return b.String()
	}
	master := regexp.MustCompile(`\(VI_\S+\) Entering MASTER STATE`)
	if err := waitFor(time.Minute, func() bool { return master.MatchString(keepalivedLog()) }); err != nil {
		t.Fatalf("keepalived did not become MASTER: %v\n%s", err, tailLines(keepalivedLog(), 30))
	}
	if err := waitFor(30*time.Second, func() bool { return hasAddr(ns, winGatewayVIP) }); err != nil {
		t.Fatalf("VIP %s not on eth0 of the node's namespace: %v\n%s", winGatewayVIP, err, nsAddrs(ns))
	}
	// The controller saw it with its in-cluster client and reported it in its status object.
	statusName := gateway.StatusName(group, gwNodeName)
	if err := waitFor(time.Minute, func() bool {
		cm, err := admin.CoreV1().ConfigMaps(gwNamespace).Get(ctx, statusName, metav1.GetOptions{})
		if err != nil {
			return false
		}
		for _, v := range gateway.ParseHeld(cm) {
			if v == winGatewayVIP {
				return true
			}
		}
		return false
	}); err != nil {
		cm, _ := admin.CoreV1().ConfigMaps(gwNamespace).Get(ctx, statusName, metav1.GetOptions{})
		t.Fatalf("status %s/%s does not report %s held: %v\n%+v", gwNamespace, statusName, winGatewayVIP, err, cm)
	}
	// keepalived runs with the real-time priority the manifest gives it, and no container of the
	// pod had to be restarted to get there.
	if pols := keepalivedPolicies(t, ns); len(pols) == 0 {
		t.Errorf("no keepalived process in the node's network namespace")
	} else {
		for _, p := range pols {
			if !strings.Contains(p, "SCHED_RR") || !strings.Contains(p, "priority: 10") {
				t.Errorf("keepalived does not run SCHED_RR priority 10:\n%s", p)
			}
		}
	}
	if p, err := admin.CoreV1().Pods(gwNamespace).Get(ctx, pod.Name, metav1.GetOptions{}); err == nil {
		for _, c := range append(p.Status.InitContainerStatuses, p.Status.ContainerStatuses...) {
			if c.RestartCount != 0 {
				t.Errorf("container %s of %s restarted %d times: %+v", c.Name, p.Name, c.RestartCount, c.LastTerminationState)
			}
		}
	}
	// The route keeper of the same manifest runs on the (only) Linux node.
	if err := waitFor(time.Minute, func() bool {
		return runningPod(ctx, admin, "app.kubernetes.io/component=routes,"+gateway.StatusLabelGroup+"="+group) != nil
	}); err != nil {
		t.Errorf("route keeper pod not Running: %v\n%s", err, describePods(ctx, admin))
	}
	t.Logf("keepalived MASTER, %s on eth0, status reported, %s after the start", winGatewayVIP, time.Since(began).Round(time.Second))

	// Removing the gateway DaemonSet stops the pod; keepalived releases its VIPs when it is
	// stopped (SIGTERM), so the member's interface no longer carries the gateway.
	fg := metav1.DeletePropagationForeground
	if err := admin.AppsV1().DaemonSets(gwNamespace).Delete(ctx, dsName, metav1.DeleteOptions{PropagationPolicy: &fg}); err != nil {
		t.Fatal(err)
	}
	if err := waitFor(2*time.Minute, func() bool {
		_, err := admin.CoreV1().Pods(gwNamespace).Get(ctx, pod.Name, metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	}); err != nil {
		t.Fatalf("gateway pod %s not gone after the DaemonSet was deleted: %v\n%s", pod.Name, err, describePods(ctx, admin))
	}
	if err := waitFor(30*time.Second, func() bool { return !hasAddr(ns, winGatewayVIP) }); err != nil {
		t.Errorf("VIP %s still on eth0 after the gateway pod is gone: %v\n%s", winGatewayVIP, err, nsAddrs(ns))
	}
	t.Logf("DaemonSet deleted: pod gone and VIP released, %s after the start", time.Since(began).Round(time.Second))
}

// buildGatewayImage builds the gateway image with the release's builder (gatewayimage, as
// hack/release.sh does): this test's kubewin binary on a base of keepalived, chrt and their
// libraries from Debian's amd64 packages (cached under ~/.cache/kubewin/apt), in an OCI layout
// tarball named gatewayImage. It returns the tarball and the image index's digest.
func buildGatewayImage(t *testing.T, work, kubewin string) (string, string) {
	t.Helper()
	aptDir, err := gatewayimage.DefaultAptDir()
	if err != nil {
		t.Fatal(err)
	}
	tar := filepath.Join(work, "gateway.oci.tar")
	res, err := gatewayimage.Build(context.Background(), gatewayimage.Options{
		Ref: gatewayImage, Version: "v0.0.0-e2e", Commit: "e2e", Created: time.Unix(0, 0),
		Source: "https://github.com/kubewin/kubewin", Kubewin: map[string]string{"amd64": kubewin},
		Apt: gatewayimage.Apt{Dir: aptDir},
	}, tar)
	if err != nil {
		t.Fatal(err)
	}
	return tar, res.Digest
}

// runningPod returns a pod matching selector that is Running with every container ready.
func runningPod(ctx context.Context, cs kubernetes.Interface, selector string) *corev1.Pod {
	list, err := cs.CoreV1().Pods(gwNamespace).List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return nil
	}
	for i := range list.Items {
		p := &list.Items[i]
		if p.Status.Phase != corev1.PodRunning || p.DeletionTimestamp != nil {
			continue
		}
		ready := len(p.Status.ContainerStatuses) > 0
		for _, c := range p.Status.ContainerStatuses {
			ready = ready && c.Ready
		}
		if ready {
			return p
		}
	}
	return nil
}

func describePods(ctx context.Context, cs kubernetes.Interface) string {
	var b strings.Builder
	pods, err := cs.CoreV1().Pods(gwNamespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err.Error()
	}
	for _, p := range pods.Items {
		fmt.Fprintf(&b, "pod %s on %q: %s\n", p.Name, p.Spec.NodeName, p.Status.Phase)
		for _, c := range append(p.Status.InitContainerStatuses, p.Status.ContainerStatuses...) {
			fmt.Fprintf(&b, "  %s ready=%v restarts=%d state=%+v last=%+v\n", c.Name, c.Ready, c.RestartCount, c.State, c.LastTerminationState)
		}
	}
	events, _ := cs.CoreV1().Events(gwNamespace).List(ctx, metav1.ListOptions{})
	if events != nil {
		for _, e := range events.Items {
			fmt.Fprintf(&b, "event %s %s: %s %s\n", e.InvolvedObject.Name, e.Type, e.Reason, e.Message)
		}
	}
	return b.String()
}

// keepalivedPolicies returns `chrt -p` of every keepalived process in the node's namespace.
func keepalivedPolicies(t *testing.T, ns *netns.NS) []string {
	t.Helper()
	var want syscall.Stat_t
	if err := syscall.Stat(ns.Path(), &want); err != nil {
		t.Fatal(err)
	}
	procs, _ := filepath.Glob("/proc/[0-9]*/comm")
	var out []string
	for _, comm := range procs {
		name, err := os.ReadFile(comm)
		if err != nil || strings.TrimSpace(string(name)) != "keepalived" {
			continue
		}
		dir := filepath.Dir(comm)
		var st syscall.Stat_t
		if syscall.Stat(filepath.Join(dir, "ns", "net"), &st) != nil || st.Ino != want.Ino || st.Dev != want.Dev {
			continue
		}
		b, _ := exec.Command("chrt", "-p", filepath.Base(dir)).CombinedOutput()
		out = append(out, string(b))
	}
	return out
}

func nsAddrs(ns *netns.NS) string {
	out, _ := exec.Command("nsenter", "--net="+ns.Path(), "ip", "-4", "addr", "show", "dev", "eth0").CombinedOutput()
	return string(out)
}

func hasAddr(ns *netns.NS, cidr string) bool {
	return strings.Contains(nsAddrs(ns), " inet "+cidr+" ")
}

func tailLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// hostStateCleanup returns a function that removes the gateway's hostPath state directory and
// the parents the kubelet created for it (DirectoryOrCreate), but none that existed before.
func hostStateCleanup(dir string) func() {
	var created []string
	for d := dir; d != "/"; d = filepath.Dir(d) {
		if _, err := os.Stat(d); err == nil {
			break
		}
		created = append(created, d)
	}
	return func() {
		for _, d := range created {
			if d == dir {
				_ = os.RemoveAll(d)
				continue
			}
			_ = os.Remove(d) // only when empty: a concurrent run may use it
		}
	}
}
