package join_test

// The join end-to-end test: a real control plane (etcd, kube-apiserver with Node,RBAC and
// NodeRestriction, kube-controller-manager with the range allocator, csrsigning and
// csrapproving), and a Linux node in a network namespace of the test's that joins with only the
// command `kubewin token create` prints: real kubelet v1.37.1, containerd v2.1.4, runc and the
// CNI reference plugins, supervised by `kubewin node run`.
//
// What the harness does because of this test machine (never part of what kubewin installs):
//   - No systemd: the harness starts `kubewin node run` itself, as the unit join writes would
//     (join --init none).
//   - cgroups v1: a kubelet drop-in sets failCgroupV1: false (the kubelet refuses v1 by
//     default since v1.35) and a cgroupRoot of the test's own, removed afterwards.
//   - No CAP_SYS_RESOURCE: runc runs through the nodeimage/runcwrap wrapper, which raises the
//     pause container's negative oom_score_adj to 0 (runc cannot lower it here).
//   - No image registry: the pause image is an OCI layout built from a static binary and
//     imported into the node's containerd.
//   - The node shares the host's mount namespace (nsenter --net only: `ip netns exec` would
//     remount /sys and hide the cgroup hierarchies), so the harness unmounts what containerd
//     mounted below the test's directory and removes the pod network namespaces it created.

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kubewin/kubewin/internal/join"
	"github.com/kubewin/kubewin/internal/nodecheck"
	"github.com/kubewin/kubewin/internal/noderun"
	"github.com/kubewin/kubewin/internal/nodestatus"
	"github.com/kubewin/kubewin/internal/plan"
	"github.com/kubewin/kubewin/internal/render"
	"github.com/kubewin/kubewin/internal/testenv"
	"github.com/kubewin/kubewin/internal/testenv/netns"
	"github.com/kubewin/kubewin/internal/testenv/nodeimage"
)

const e2eSpec = `apiVersion: kubewin.io/v1alpha1
kind: Cluster
metadata:
  name: e2e
spec:
  kubernetesVersion: v1.37.1
  design: host-gw
  linuxCNI:
    type: bridge
  containerRuntime:
    cgroupDriver: cgroupfs
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
    - {name: eth0, ip: %s, prefix: 30}
`

const nodeName = "kw-e2e-node"

// joinHarness is a real control plane and a node (network namespace, node service running,
// images imported once containerd is up) ready for `kubewin join`.
type joinHarness struct {
	work, root string
	paths      render.NodePaths
	ns         *netns.NS
	hostIP     string
	nodeIP     string
	cp         *testenv.ControlPlane
	admin      kubernetes.Interface
	kubewin    string
	assets     string
	env        []string
	nodeLog    string
	// joinArgs is the printed join command; nodeArgs adds what this machine's node needs.
	joinArgs, nodeArgs []string
	nodeRun            *exec.Cmd
	imported           chan error
}

// newJoinHarness builds the cluster and the node; kcmArgs go to kube-controller-manager.
func newJoinHarness(t *testing.T, kcmArgs ...string) *joinHarness {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Fatal("the join end-to-end test needs root (network namespaces, a kubelet); CI runs as root")
	}
	h := &joinHarness{}
	var err error
	if h.assets, err = testenv.Assets(); err != nil {
		t.Fatal(err)
	}
	h.work = t.TempDir()
	// Registered first, so it runs last: nothing the node ran may outlive the test.
	t.Cleanup(func() {
		if left := processesUnder(h.work); len(left) > 0 {
			t.Errorf("processes left running: %s", strings.Join(left, "; "))
		}
	})
	h.root = filepath.Join(h.work, "node")
	h.paths = render.LinuxPathsUnder(h.root)

	var r [1]byte
	_, _ = rand.Read(r[:])
	h.ns, h.hostIP, h.nodeIP = nodeNetwork(t, fmt.Sprintf("10.251.%d", r[0]), 30, "node", "kwj")

	h.cp = testenv.StartControlPlane(t, testenv.WithNodeAccess(h.hostIP))
	h.cp.StartControllerManager(t, "10.244.0.0/16", 24, kcmArgs...)
	h.admin = h.cp.Clientset(t)

	t0 := time.Now()
	h.kubewin = buildKubewin(t, h.work)
	t.Logf("harness: kubewin built in %s", time.Since(t0).Round(time.Millisecond))
	binaries := stageBinaries(t, h.assets, filepath.Join(h.work, "binaries"))
	wrapDir, err := nodeimage.BuildRuncWrapper(filepath.Join(h.work, "runcwrap"))
	if err != nil {
		t.Fatal(err)
	}
	installRuncWrapper(t, wrapDir, h.paths)
	cgroupRoot := "/kubewin-e2e-" + hex.EncodeToString(r[:]) + fmt.Sprint(os.Getpid())
	cgroupDirs := makeCgroupRoot(t, cgroupRoot)
	dropIn := filepath.Join(h.work, "this-machine.yaml")
	writeFile(t, dropIn, fmt.Sprintf(`# This test machine, not kubewin: cgroups v1 and a cgroup root of the test's own.
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
failCgroupV1: false
cgroupRoot: %s
`, cgroupRoot))

	// Admin side: publish the description, create a token; the printed command is all the node gets.
	specFile := filepath.Join(h.work, "cluster.yaml")
	writeFile(t, specFile, fmt.Sprintf(e2eSpec, h.hostIP))
	run(t, nil, h.kubewin, "publish", "-f", specFile, "--kubeconfig", h.cp.KubeconfigPath)
	tokenOut := run(t, nil, h.kubewin, "token", "create", "--kubeconfig", h.cp.KubeconfigPath)
	h.joinArgs = parseJoinCommand(t, tokenOut)

	// Node side. The harness plays systemd: it runs the node service join's unit would run.
	h.env = append(os.Environ(), "PATH="+wrapDir+":"+os.Getenv("PATH"))
	h.nodeLog = filepath.Join(h.work, "node-run.log")
	h.startNodeService(t)
	podNetnsBefore := podNetns()
	t.Cleanup(func() { cleanupNode(t, h.nodeRun, h.root, h.paths, cgroupDirs, podNetnsBefore) }) // the current one

	t0 = time.Now()
	images := buildImages(t, h.work)
	t.Logf("harness: images built in %s", time.Since(t0).Round(time.Millisecond))
	h.imported = make(chan error, 1)
	go func() { h.imported <- importWhenUp(h.paths, h.assets, images) }()

	h.nodeArgs = append(append([]string(nil), h.joinArgs...), "--binaries", binaries, "--root", h.root, "--init", "none",
		"--node-name", nodeName, "--kubelet-config-dropin", dropIn, "--timeout", "3m", "-o", "json")
	return h
}

func (h *joinHarness) startNodeService(t *testing.T) {
	h.nodeRun = startInNetns(t, h.ns, h.env, h.nodeLog, h.kubewin, "node", "run", "--root", h.root, "--health-interval", "1s")
}

// join runs kubewin join on the node with extra arguments (later ones win).
func (h *joinHarness) join(t *testing.T, extra ...string) (string, int) {
	return runInNetns(t, h.ns, h.env, h.kubewin, append(append([]string(nil), h.nodeArgs...), extra...)...)
}

func TestJoinEndToEnd(t *testing.T) {
	// Client certificates live 2 minutes here, so the kubelet renews its own within the test
	// (it rotates at 70-90 % of NotAfter-NotBefore, and the signer backdates NotBefore by 5 min:
	// k8s.io/kubernetes v1.37.1 pkg/controller/certificates/signer/signer.go, client-go
	// util/certificate/certificate_manager.go nextRotationDeadline).
	h := newJoinHarness(t, "--cluster-signing-duration=2m")
	ns, hostIP, nodeIP, cp, admin, kubewin, paths, env := h.ns, h.hostIP, h.nodeIP, h.cp, h.admin, h.kubewin, h.paths, h.env
	joinArgs, nodeArgs, nodeLog, assets, work := h.joinArgs, h.nodeArgs, h.nodeLog, h.assets, h.work

	began := time.Now()
	out, code := h.join(t)
	joinTime := time.Since(began)
	if err := <-h.imported; err != nil {
		t.Fatalf("import images: %v", err)
	}
	if code != 0 {
		t.Fatalf("join exited %d:\n%s\n--- kubelet log tail:\n%s\n--- node service:\n%s", code, out,
			tailFile(filepath.Join(paths.LogDir, "kubelet.log"), 3000), tailFile(nodeLog, 2000))
	}
	var res join.Result
	if err := json.Unmarshal(lastJSON(out), &res); err != nil {
		t.Fatalf("join -o json: %v\n%s", err, out)
	}
	t.Logf("join: node %s Ready in %s (pod CIDR %s, check pod %s)", res.Node, joinTime.Round(time.Millisecond), res.PodCIDR, res.PodIP)

	// What the cluster sees: the Node, Ready, with the allocated pod CIDR; the check pod ran in it.
	ctx := context.Background()
	node, err := admin.CoreV1().Nodes().Get(ctx, nodeName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !nodeReady(node) {
		t.Fatalf("Node %s is not Ready: %+v", nodeName, node.Status.Conditions)
	}
	if node.Spec.PodCIDR == "" || node.Spec.PodCIDR != res.PodCIDR {
		t.Errorf("pod CIDR: Node says %q, join says %q", node.Spec.PodCIDR, res.PodCIDR)
	}
	_, podNet, _ := net.ParseCIDR(node.Spec.PodCIDR)
	if ip := net.ParseIP(res.PodIP); ip == nil || !podNet.Contains(ip) {
		t.Errorf("check pod IP %q is not in the node's pod CIDR %s", res.PodIP, node.Spec.PodCIDR)
	}
	for _, a := range node.Status.Addresses {
		if a.Type == corev1.NodeInternalIP && a.Address != nodeIP {
			t.Errorf("Node InternalIP %s, want the cluster NIC's %s", a.Address, nodeIP)
		}
	}
	// The kubelet got its client certificate by TLS bootstrap: an approved, issued CSR of the token.
	csrs, err := admin.CertificatesV1().CertificateSigningRequests().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tokenID := strings.SplitN(argAfter(joinArgs, "--token"), ".", 2)[0]
	var issued bool
	for _, c := range csrs.Items {
		if c.Spec.Username == "system:bootstrap:"+tokenID && len(c.Status.Certificate) > 0 {
			issued = true
		}
	}
	if !issued {
		t.Errorf("no issued CSR of system:bootstrap:%s among %d", tokenID, len(csrs.Items))
	}
	// The token is needed only until TLS bootstrap; join removes the bootstrap kubeconfig then.
	if _, err := os.Stat(paths.BootstrapKubeconfig()); !os.IsNotExist(err) {
		t.Errorf("the bootstrap kubeconfig (the token) is still on the node after TLS bootstrap: %v", err)
	}

	// kube-proxy runs with the node's own credential (the kubelet's kubeconfig), as the node
	// service runs it on Windows nodes: the Services and EndpointSlices it must watch reach it
	// through the system:node-proxier binding kubewin token create made.
	kubeProxyWorks(t, ctx, admin, ns, env, assets, work, paths, func() { nodeCheckWorks(t, ctx, h) })

	// The kubelet renews its client certificate before it expires, and the renewal is approved
	// (kubewin:node-autoapprove-renewal): a CSR of system:node:<node> gets issued.
	renewed := time.Now()
	if err := waitFor(3*time.Minute, func() bool {
		list, err := admin.CertificatesV1().CertificateSigningRequests().List(ctx, metav1.ListOptions{})
		if err != nil {
			return false
		}
		for _, c := range list.Items {
			if c.Spec.Username == "system:node:"+nodeName && len(c.Status.Certificate) > 0 {
				return true
			}
		}
		return false
	}); err != nil {
		t.Fatalf("the kubelet's client certificate was not renewed: %v\n%s", err, tailFile(filepath.Join(paths.LogDir, "kubelet.log"), 3000))
	}
	t.Logf("client certificate renewed by the kubelet, %s after the check", time.Since(renewed).Round(time.Second))

	// A second join of the same node changes nothing.
	out2, code2 := runInNetns(t, ns, env, kubewin, nodeArgs...)
	if code2 != 0 {
		t.Fatalf("second join exited %d:\n%s", code2, out2)
	}
	var res2 join.Result
	if err := json.Unmarshal(lastJSON(out2), &res2); err != nil {
		t.Fatalf("second join -o json: %v\n%s", err, out2)
	}
	if res2.Changed() {
		t.Errorf("second join changed something: %+v", res2.Steps)
	}

	// A wrong CA pin is refused before anything is written: exit 2.
	bad := append([]string(nil), nodeArgs...)
	for i := range bad {
		if bad[i] == "--ca-cert-hash" {
			bad[i+1] = "sha256:" + strings.Repeat("ab", 32)
		}
	}
	badOut, badCode := runInNetns(t, ns, env, kubewin, bad...)
	if badCode != 2 || !strings.Contains(badOut, "does not match --ca-cert-hash") {
		t.Errorf("wrong CA pin: exit %d, want 2 with the mismatch named:\n%s", badCode, badOut)
	}

	// The bootstrap token, as itself against the real API server: no Secrets, no Nodes.
	tokenClient := kubernetes.NewForConfigOrDie(&rest.Config{Host: cp.Host, BearerToken: argAfter(joinArgs, "--token"),
		TLSClientConfig: rest.TLSClientConfig{CAData: cp.Config.CAData}})
	if _, err := tokenClient.CoreV1().Secrets("kube-system").List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("bootstrap token lists Secrets: %v", err)
	}
	if _, err := tokenClient.CoreV1().Nodes().Get(ctx, nodeName, metav1.GetOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("bootstrap token reads Node %s: %v", nodeName, err)
	}
	if st, err := join.ReadState(paths); err != nil || !st.Joined || st.Node != nodeName {
		t.Errorf("join state: %+v %v", st, err)
	}

	nodeServiceScenarios(t, ctx, kubewin, cp.KubeconfigPath, admin, paths)

	// A reboot as far as the network goes: the node service stops (and with it the kubelet and
	// containerd), the CNI conflist, the bridge and the design's route are gone; the node service
	// starts again and puts them back, and the node is Ready and runs a pod.
	stopNodeService(h.nodeRun)
	if left := processesUnder(h.root); len(left) > 0 {
		t.Fatalf("the node service stopped but left its services running: %s", strings.Join(left, "; "))
	}
	conf := filepath.Join(paths.CNIConfDir, render.BridgeCNIConfName)
	if err := os.Remove(conf); err != nil {
		t.Fatal(err)
	}
	routes := strings.TrimSpace(mustNetns(t, ns, "ip", "-4", "route", "show", "proto", "boot", "via", hostIP))
	var routeDst string
	for _, l := range strings.Split(routes, "\n") {
		if f := strings.Fields(l); len(f) > 0 && strings.Contains(f[0], "/") {
			routeDst = f[0]
		}
	}
	if routeDst == "" {
		t.Fatalf("no host-gw route via %s in the node's namespace:\n%s", hostIP, routes)
	}
	mustNetns(t, ns, "ip", "route", "del", routeDst)
	mustNetns(t, ns, "ip", "link", "del", "kubewin0")
	restarted := time.Now()
	h.startNodeService(t)
	if err := waitFor(2*time.Minute, func() bool {
		_, err := os.Stat(conf)
		out, _ := exec.Command("nsenter", "--net="+ns.Path(), "ip", "-4", "route", "show", routeDst).CombinedOutput()
		n, nerr := admin.CoreV1().Nodes().Get(ctx, nodeName, metav1.GetOptions{})
		return err == nil && strings.Contains(string(out), hostIP) && nerr == nil && nodeReady(n)
	}); err != nil {
		t.Fatalf("not repaired after the node service restarted: %v\n%s", err, tailFile(nodeLog, 3000))
	}
	t.Logf("node service: conflist and route %s repaired, node Ready, %s after the restart", routeDst, time.Since(restarted).Round(time.Millisecond))
	// The token is gone by now in real life (24 h); a joined node joins again without it.
	run(t, nil, kubewin, "token", "delete", strings.SplitN(argAfter(joinArgs, "--token"), ".", 2)[0], "--kubeconfig", cp.KubeconfigPath)
	out3, code3 := runInNetns(t, ns, env, kubewin, nodeArgs...)
	var res3 join.Result
	if code3 != 0 || json.Unmarshal(lastJSON(out3), &res3) != nil || res3.PodIP == "" || res3.Changed() {
		t.Fatalf("join after the repair: exit %d, a pod must run and nothing change:\n%s", code3, out3)
	}
	repairs, err := admin.CoreV1().Events("default").List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + nodeName + ",reason=" + nodestatus.ReasonRepaired})
	if err != nil || len(repairs.Items) == 0 {
		t.Errorf("no Repaired Event for %s: %v", nodeName, err)
	}
	statusOut, _ := runStatus(t, kubewin, cp.KubeconfigPath)
	if !strings.Contains(statusOut, `"lastRepair":"repaired: `) || !strings.Contains(statusOut, routeDst) {
		t.Errorf("kubewin status does not show the last repair (route %s):\n%s", routeDst, statusOut)
	}

	// The service's own live flow checks: this cluster runs no cluster DNS, which the periodic
	// check finds from a pod network address; kubewin status names the flow.
	stopNodeService(h.nodeRun)
	h.nodeRun = startInNetns(t, ns, env, nodeLog, kubewin, "node", "run", "--root", h.root, "--health-interval", "1s", "--check-interval", "2s")
	checkStart := time.Now()
	var last string
	if err := waitFor(time.Minute, func() bool {
		last, _ = runStatus(t, kubewin, cp.KubeconfigPath)
		return strings.Contains(last, `"reason":"`+nodestatus.ReasonFlowCheckFailing+`"`) && strings.Contains(last, "cluster DNS 10.96.0.10:53")
	}); err != nil {
		t.Fatalf("the periodic flow check's DNS failure is not in kubewin status: %v\n%s\n%s", err, last, tailFile(nodeLog, 3000))
	}
	t.Logf("node service: periodic flow check found the missing cluster DNS and published it %s after the start", time.Since(checkStart).Round(time.Millisecond))
}

// processesUnder lists live processes (not zombies) whose command line names dir.
func processesUnder(dir string) []string {
	var out []string
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid := e.Name()
		if pid[0] < '0' || pid[0] > '9' {
			continue
		}
		cmdline, err := os.ReadFile("/proc/" + pid + "/cmdline")
		if err != nil || len(cmdline) == 0 || !bytes.Contains(cmdline, []byte(dir)) {
			continue
		}
		out = append(out, pid+" "+strings.ReplaceAll(string(bytes.TrimRight(cmdline, "\x00")), "\x00", " "))
	}
	return out
}

// stopNodeService stops the node service as systemd would (SIGTERM; it stops its services).
func stopNodeService(c *exec.Cmd) {
	_ = c.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = c.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		_ = syscall.Kill(-c.Process.Pid, syscall.SIGKILL)
		<-done
	}
}

func mustNetns(t *testing.T, ns *netns.NS, args ...string) string {
	t.Helper()
	out, err := exec.Command("nsenter", append([]string{"--net=" + ns.Path()}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// nodeServiceScenarios: what the node service does after the join, for real — it publishes
// the node's health, restarts a killed containerd or kubelet, and explains a kubelet that will
// not start from its own log, visible from the admin side with kubewin status.
func nodeServiceScenarios(t *testing.T, ctx context.Context, kubewin, kubeconfig string, admin kubernetes.Interface, paths render.NodePaths) {
	statusOf := func() (nodestatus.NodeHealth, int) {
		out, code := runStatus(t, kubewin, kubeconfig)
		var res struct{ Nodes []nodestatus.NodeHealth }
		if err := json.Unmarshal([]byte(out), &res); err != nil {
			t.Fatalf("kubewin status -o json: %v\n%s", err, out)
		}
		for _, n := range res.Nodes {
			if n.Node == nodeName {
				return n, code
			}
		}
		t.Fatalf("kubewin status does not list %s:\n%s", nodeName, out)
		return nodestatus.NodeHealth{}, code
	}
	waitHealth := func(what string, cond func(nodestatus.NodeHealth) bool) nodestatus.NodeHealth {
		t.Helper()
		var h nodestatus.NodeHealth
		if err := waitFor(2*time.Minute, func() bool { h, _ = statusOf(); return cond(h) }); err != nil {
			t.Fatalf("%s: %v; last status %+v\n--- kubelet log:\n%s", what, err, h, tailFile(filepath.Join(paths.LogDir, "kubelet.log"), 2000))
		}
		return h
	}
	h := waitHealth("healthy node published", func(h nodestatus.NodeHealth) bool {
		return h.Managed && h.Healthy && h.Reason == nodestatus.ReasonHealthy && h.Ready
	})
	if _, code := statusOf(); code != 0 {
		t.Errorf("kubewin status exit %d with every node healthy (%+v)", code, h)
	}

	// Killed services come back (time to repair: from the kill to running again).
	statusPath := filepath.Join(paths.DataDir, "status.json")
	for _, svc := range []string{"containerd", "kubelet"} {
		before := serviceStatus(t, statusPath, svc)
		killed := time.Now()
		if err := syscall.Kill(before.PID, syscall.SIGKILL); err != nil {
			t.Fatalf("kill %s (pid %d): %v", svc, before.PID, err)
		}
		var after noderun.ServiceStatus
		if err := waitFor(time.Minute, func() bool {
			after = serviceStatus(t, statusPath, svc)
			return after.State == noderun.StateRunning && after.PID != before.PID
		}); err != nil {
			t.Fatalf("%s was not restarted: %+v", svc, after)
		}
		t.Logf("node service: %s killed, running again in %s (restarts %d)", svc, time.Since(killed).Round(time.Millisecond), after.Restarts)
	}
	waitHealth("Ready and healthy after the restarts", func(h nodestatus.NodeHealth) bool { return h.Healthy && h.Ready })

	// A kubelet that will not start: the node says why, from the kubelet's own log.
	manifestPath := join.ServicesManifest(paths)
	m, err := noderun.LoadManifest(manifestPath)
	if err != nil {
		t.Fatal(err)
	}
	good := *m
	good.Services = append([]noderun.Service(nil), m.Services...)
	for i := range m.Services {
		if m.Services[i].Name == "kubelet" {
			m.Services[i].Args = append(append([]string(nil), m.Services[i].Args...), "--no-such-flag")
		}
	}
	if err := noderun.WriteManifest(manifestPath, m); err != nil {
		t.Fatal(err)
	}
	broken := time.Now()
	h = waitHealth("the failing kubelet diagnosed", func(h nodestatus.NodeHealth) bool {
		return !h.Healthy && h.Reason == nodestatus.ReasonServiceFailing && strings.Contains(h.Message, "KUBELET-UNKNOWN-FLAG")
	})
	t.Logf("node service: kubelet failing → diagnosed and published in %s: %s", time.Since(broken).Round(time.Millisecond), h.Message)
	if _, code := statusOf(); code != 1 {
		t.Errorf("kubewin status exit %d with a failing node, want 1", code)
	}
	events, err := admin.CoreV1().Events("default").List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + nodeName + ",reason=" + nodestatus.ReasonServiceFailing})
	if err != nil || len(events.Items) == 0 {
		t.Errorf("no ServiceFailing Event for %s: %v", nodeName, err)
	}
	if err := noderun.WriteManifest(manifestPath, &good); err != nil {
		t.Fatal(err)
	}
	waitHealth("healthy again after the fix", func(h nodestatus.NodeHealth) bool { return h.Healthy && h.Ready })
}

func runStatus(t *testing.T, kubewin, kubeconfig string) (string, int) {
	t.Helper()
	cmd := exec.Command(kubewin, "status", "--kubeconfig", kubeconfig, "-o", "json")
	out, err := cmd.Output()
	if ee, ok := err.(*exec.ExitError); ok {
		return string(out), ee.ExitCode()
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(out), 0
}

func serviceStatus(t *testing.T, path, name string) noderun.ServiceStatus {
	t.Helper()
	st, err := noderun.ReadStatus(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range st.Services {
		if s.Name == name {
			return s
		}
	}
	t.Fatalf("%s lists no service %s", path, name)
	return noderun.ServiceStatus{}
}

func kubeProxyWorks(t *testing.T, ctx context.Context, admin kubernetes.Interface, ns *netns.NS, env []string, assets, work string, paths render.NodePaths, whileRunning func()) {
	t.Helper()
	// A Service with an endpoint: kube-proxy programs a KUBE-SVC chain for it only after it has
	// listed both the Service and its EndpointSlice.
	svc, err := admin.CoreV1().Services("default").Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "e2e-proxy"},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 80, Protocol: corev1.ProtocolTCP}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ready := true
	_, err = admin.DiscoveryV1().EndpointSlices("default").Create(ctx, &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: "e2e-proxy-1", Labels: map[string]string{discoveryv1.LabelServiceName: "e2e-proxy"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{"10.244.0.200"}, Conditions: discoveryv1.EndpointConditions{Ready: &ready}}},
		Ports:       []discoveryv1.EndpointPort{{Name: ptrTo("http"), Port: ptrTo[int32](80), Protocol: ptrTo(corev1.ProtocolTCP)}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(work, "kube-proxy.log")
	stop := startKubeProxy(t, ns, env, assets, work, paths, nodeName)
	defer stop()
	rule := "-d " + svc.Spec.ClusterIP + "/32"
	if err := waitFor(time.Minute, func() bool {
		out, _ := exec.Command("nsenter", "--net="+ns.Path(), "iptables-save", "-t", "nat").CombinedOutput()
		return strings.Contains(string(out), rule) && strings.Contains(string(out), "default/e2e-proxy:http")
	}); err != nil {
		t.Fatalf("kube-proxy with the node's credential did not program Service %s (%s): %v\n%s", svc.Name, svc.Spec.ClusterIP, err, tailFile(logPath, 3000))
	}
	if log := tailFile(logPath, 1<<20); strings.Contains(log, "forbidden") {
		t.Errorf("kube-proxy was refused something with the node's credential:\n%s", log)
	}
	whileRunning()
}

// nodeCheckWorks runs kubewin node check on the node while kube-proxy runs: the kubernetes
// Service gets the API server as its endpoint (this control plane runs no endpoint reconciler),
// the cluster DNS Service exists without endpoints (no DNS server here), and the host routes the
// pod CIDRs back to the node, as a ToR would — so every probe stays in this test's topology.
// Expected: gateway, node IP and the API server's Service answer; DNS fails, and says so.
func nodeCheckWorks(t *testing.T, ctx context.Context, h *joinHarness) {
	t.Helper()
	u, _ := url.Parse(h.cp.Host)
	port, _ := strconv.Atoi(u.Port())
	ready := true
	if _, err := h.admin.DiscoveryV1().EndpointSlices("default").Create(ctx, &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: "kubernetes-e2e", Labels: map[string]string{discoveryv1.LabelServiceName: "kubernetes"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{h.hostIP}, Conditions: discoveryv1.EndpointConditions{Ready: &ready}}},
		Ports:       []discoveryv1.EndpointPort{{Name: ptrTo("https"), Port: ptrTo(int32(port)), Protocol: ptrTo(corev1.ProtocolTCP)}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.admin.CoreV1().Services("kube-system").Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "kube-dns"},
		Spec:       corev1.ServiceSpec{ClusterIP: "10.96.0.10", Ports: []corev1.ServicePort{{Name: "dns", Port: 53, Protocol: corev1.ProtocolUDP}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	_, podNet, _ := net.ParseCIDR("10.244.0.0/16")
	back := &netlink.Route{Dst: podNet, Gw: net.ParseIP(h.nodeIP)}
	if err := netlink.RouteAdd(back); err != nil {
		t.Fatalf("host route to the pod CIDRs: %v", err)
	}
	defer func() { _ = netlink.RouteDel(back) }()
	if err := waitFor(time.Minute, func() bool {
		out, _ := exec.Command("nsenter", "--net="+h.ns.Path(), "iptables-save").CombinedOutput()
		return strings.Contains(string(out), "default/kubernetes:https cluster IP") && strings.Contains(string(out), "kube-system/kube-dns:dns has no endpoints")
	}); err != nil {
		t.Fatalf("kube-proxy did not program the kubernetes and kube-dns Services: %v", err)
	}
	out, code := runInNetns(t, h.ns, h.env, h.kubewin, "node", "check", "--root", h.root, "-o", "json")
	var rep nodecheck.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("kubewin node check -o json (exit %d): %v\n%s", code, err, out)
	}
	got := map[string]nodecheck.Result{}
	for _, r := range rep.Results {
		got[strings.Fields(r.Target)[0]+" "+strings.Fields(r.Target)[1]] = r
		t.Logf("node check: %-4s %-20s %s: %s (%d ms)", r.Verdict, r.Flow, r.Target, r.Detail, r.Millis)
	}
	for key, want := range map[string]string{"pod CIDR": "ok", "node IP": "ok", "Service default/kubernetes": "ok", "cluster DNS": "FAIL"} {
		if got[key].Verdict != want {
			t.Errorf("node check %s: %+v, want %s", key, got[key], want)
		}
	}
	if code != 1 || !strings.HasPrefix(rep.Source, "10.244.") {
		t.Errorf("node check: exit %d (want 1: DNS fails), probe at %q", code, rep.Source)
	}
}

// startKubeProxy runs kube-proxy (iptables mode) in the node's namespace with the kubelet's
// kubeconfig — the node's own credential, as the node service runs it on Windows nodes — and
// returns its stop function (also run at cleanup).
func startKubeProxy(t *testing.T, ns *netns.NS, env []string, assets, work string, paths render.NodePaths, node string) func() {
	t.Helper()
	// This machine's conntrack limits are global and not ours to change: maxPerCore 0 and the
	// zero timeouts leave them as they are.
	conf := filepath.Join(work, "kube-proxy.yaml")
	writeFile(t, conf, fmt.Sprintf(`apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection:
  kubeconfig: %s
hostnameOverride: %s
mode: iptables
clusterCIDR: 10.244.0.0/16
conntrack:
  maxPerCore: 0
  min: 0
  tcpEstablishedTimeout: 0s
  tcpCloseWaitTimeout: 0s
`, paths.KubeletKubeconfig(), node))
	proxy := startInNetns(t, ns, env, filepath.Join(work, "kube-proxy.log"), filepath.Join(assets, "kube-proxy"), "--config", conf)
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		_ = syscall.Kill(-proxy.Process.Pid, syscall.SIGKILL)
		_ = proxy.Wait()
	}
	t.Cleanup(stop)
	return stop
}

func ptrTo[T any](v T) *T { return &v }

func waitFor(timeout time.Duration, cond func() bool) error {
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			return fmt.Errorf("not within %s", timeout)
		}
		time.Sleep(500 * time.Millisecond)
	}
	return nil
}

// installRuncWrapper puts the harness's runc wrapper (nodeimage/runcwrap: this machine lacks
// CAP_SYS_RESOURCE) where the node's services find runc first: the node's BinDir, which
// kubewin join puts first on their PATH (a real node has the OS's runc in /usr/sbin).
func installRuncWrapper(t *testing.T, wrapDir string, paths render.NodePaths) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(wrapDir, "runc"))
	if err != nil {
		t.Fatal(err)
	}
	writeFileMode(t, filepath.Join(paths.BinDir, "runc"), data, 0o755)
}

// nodeNetwork is a node's network: a namespace (label) behind a veth whose host end (ifPrefix +
// pid) holds subnet.1 and the node's eth0 subnet.2 (/bits); the API server listens on the host
// end and is the node's default gateway.
func nodeNetwork(t *testing.T, subnet string, bits int, label, ifPrefix string) (*netns.NS, string, string) {
	t.Helper()
	hostIP, nodeIP := subnet+".1", subnet+".2"
	ns := netns.New(t, label)
	hostIf := fmt.Sprintf("%s%d", ifPrefix, os.Getpid()%1000000)
	netns.Veth(t, nil, hostIf, ns, "eth0")
	link, err := netlink.LinkByName(hostIf)
	if err != nil {
		t.Fatal(err)
	}
	addr, _ := netlink.ParseAddr(fmt.Sprintf("%s/%d", hostIP, bits))
	if err := netlink.AddrAdd(link, addr); err != nil {
		t.Fatalf("address %s on %s: %v", hostIP, hostIf, err)
	}
	ns.AddAddr(t, "eth0", fmt.Sprintf("%s/%d", nodeIP, bits))
	ns.AddDefaultRoute(t, hostIP)
	return ns, hostIP, nodeIP
}

func nodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func buildKubewin(t *testing.T, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "kubewin")
	cmd := exec.Command("go", "build", "-o", bin, "github.com/kubewin/kubewin/cmd/kubewin")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build kubewin: %v\n%s", err, out)
	}
	return bin
}

// stageBinaries lays out what join --binaries expects, with SHA256SUMS, from the built assets.
func stageBinaries(t *testing.T, assets, dir string) string {
	t.Helper()
	var sums []string
	for _, name := range []string{"containerd", "containerd-shim-runc-v2", "kubelet", "cni/bridge", "cni/host-local", "cni/loopback", "cni/portmap"} {
		data, err := os.ReadFile(filepath.Join(assets, name))
		if err != nil {
			t.Fatalf("node binaries (hack/kube-binaries/build.sh builds them): %v", err)
		}
		writeFileMode(t, filepath.Join(dir, name), data, 0o755)
		sum := sha256.Sum256(data)
		sums = append(sums, hex.EncodeToString(sum[:])+"  "+name)
	}
	sort.Strings(sums)
	writeFile(t, filepath.Join(dir, "SHA256SUMS"), strings.Join(sums, "\n")+"\n")
	return dir
}

// makeCgroupRoot creates the kubelet's cgroupRoot in every v1 hierarchy (the kubelet requires it
// to exist) and returns the directories to remove afterwards.
func makeCgroupRoot(t *testing.T, root string) []string {
	t.Helper()
	entries, err := os.ReadDir("/sys/fs/cgroup")
	if err != nil {
		t.Fatal(err)
	}
	var dirs []string
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		d := filepath.Join("/sys/fs/cgroup", e.Name(), root)
		if err := os.Mkdir(d, 0o755); err == nil {
			dirs = append(dirs, d)
		}
	}
	return dirs
}

func buildImages(t *testing.T, work string) []string {
	t.Helper()
	bin := filepath.Join(work, "images")
	pause, err := nodeimage.BuildStatic(bin, "github.com/kubewin/kubewin/internal/testenv/nodeimage/pause")
	if err != nil {
		t.Fatal(err)
	}
	// The image the plan pins as the sandbox image (and join's check pod runs).
	tar, err := nodeimage.BuildImage(filepath.Join(work, "oci"), plan.DefaultPauseImage, map[string]string{"/pause": pause}, []string{"/pause"})
	if err != nil {
		t.Fatal(err)
	}
	return []string{tar}
}

// importWhenUp waits for the node's containerd and imports the images into it.
func importWhenUp(paths render.NodePaths, assets string, images []string) error {
	deadline := time.Now().Add(3 * time.Minute)
	for {
		if c, err := net.Dial("unix", paths.ContainerdSocket); err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("containerd socket %s never appeared", paths.ContainerdSocket)
		}
		time.Sleep(200 * time.Millisecond)
	}
	for _, img := range images {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		err := nodeimage.Import(ctx, filepath.Join(assets, "ctr"), paths.ContainerdSocket, img)
		cancel()
		if err != nil {
			return err
		}
	}
	return nil
}

func startInNetns(t *testing.T, ns *netns.NS, env []string, logPath, bin string, args ...string) *exec.Cmd {
	t.Helper()
	f, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cmd := exec.Command("nsenter", append([]string{"--net=" + ns.Path(), bin}, args...)...)
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd
}

func runInNetns(t *testing.T, ns *netns.NS, env []string, bin string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command("nsenter", append([]string{"--net=" + ns.Path(), bin}, args...)...)
	cmd.Env = env
	var b bytes.Buffer
	cmd.Stdout, cmd.Stderr = &b, &b
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return b.String(), ee.ExitCode()
	}
	if err != nil {
		t.Fatal(err)
	}
	return b.String(), 0
}

func run(t *testing.T, env []string, bin string, args ...string) string {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", filepath.Base(bin), strings.Join(args, " "), err, out)
	}
	return string(out)
}

var joinLine = regexp.MustCompile(`kubewin join (--server \S+ --token \S+ --ca-cert-hash \S+)`)

func parseJoinCommand(t *testing.T, out string) []string {
	t.Helper()
	m := joinLine.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("token create printed no join command:\n%s", out)
	}
	return append([]string{"join"}, strings.Fields(m[1])...)
}

func argAfter(args []string, flag string) string {
	for i := range args[:len(args)-1] {
		if args[i] == flag {
			return args[i+1]
		}
	}
	return ""
}

// lastJSON is the JSON object join -o json printed (the output also has the step log).
func lastJSON(out string) []byte {
	i := strings.LastIndex(out, "\n{")
	if i < 0 {
		i = strings.Index(out, "{")
		if i < 0 {
			return nil
		}
		return []byte(out[i:])
	}
	return []byte(out[i+1:])
}

// cleanupNode stops the node service (it stops the kubelet and containerd), then removes what
// containerd and the kubelet left on this machine: shims and containers, mounts below the test's
// directory, pod network namespaces, the cgroup root.
func cleanupNode(t *testing.T, nodeRun *exec.Cmd, root string, paths render.NodePaths, cgroupDirs []string, netnsBefore map[string]bool) {
	if nodeRun.ProcessState == nil {
		stopNodeService(nodeRun)
	}
	if _, err := nodeimage.KillShims(paths.ContainerdSocket); err != nil {
		t.Errorf("kill shims: %v", err)
	}
	for _, d := range cgroupDirs {
		killCgroup(d)
	}
	if _, err := nodeimage.UnmountUnder(root); err != nil {
		t.Errorf("unmount: %v", err)
	}
	for p := range podNetns() {
		if !netnsBefore[p] {
			if strings.HasPrefix(p, "/run/netns/") {
				_ = syscall.Unmount(p, syscall.MNT_DETACH)
			}
			_ = os.Remove(p)
		}
	}
	// Directories containerd's CNI library made on this machine go when they are empty again
	// (os.Remove leaves a directory another run still uses).
	for _, d := range []string{cniResults, filepath.Dir(cniResults)} {
		_ = os.Remove(d)
	}
	for _, d := range cgroupDirs {
		removeCgroup(d)
	}
}

// podNetns lists the pod network namespaces containerd keeps in /run/netns (cni-<uuid>) and the
// CNI results libcni caches for containerd in /var/lib/cni/results (its cache directory is not
// configurable through containerd): both are this machine's, shared with other runs.
func podNetns() map[string]bool {
	out := map[string]bool{}
	for _, dir := range []string{"/run/netns", cniResults} {
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if dir == cniResults || strings.HasPrefix(e.Name(), "cni-") {
				out[filepath.Join(dir, e.Name())] = true
			}
		}
	}
	return out
}

const cniResults = "/var/lib/cni/results"

func killCgroup(dir string) {
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() != "cgroup.procs" {
			return nil
		}
		data, _ := os.ReadFile(p)
		for _, f := range strings.Fields(string(data)) {
			var pid int
			if _, err := fmt.Sscan(f, &pid); err == nil && pid > 1 {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
		return nil
	})
}

// removeCgroup removes a cgroup directory tree bottom-up (cgroupfs allows only rmdir).
func removeCgroup(dir string) {
	var dirs []string
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			dirs = append(dirs, p)
		}
		return nil
	})
	for i := len(dirs) - 1; i >= 0; i-- {
		for try := 0; try < 20; try++ {
			if err := syscall.Rmdir(dirs[i]); err == nil || os.IsNotExist(err) {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
}

func writeFile(t *testing.T, path, data string) { writeFileMode(t, path, []byte(data), 0o644) }

func writeFileMode(t *testing.T, path string, data []byte, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, mode); err != nil {
		t.Fatal(err)
	}
}

func tailFile(path string, n int) string {
	f, err := os.Open(path)
	if err != nil {
		return err.Error()
	}
	defer f.Close()
	data, _ := io.ReadAll(f)
	if len(data) > n {
		data = data[len(data)-n:]
	}
	return string(data)
}

// A join whose CSR nobody approves stops at tls-bootstrap within its --timeout and says why (the
// pending CSR, from the token's own view of it); once an admin approves the CSR, running the
// same join again resumes and finishes.
func TestJoinPendingCSRThenResume(t *testing.T) {
	h := newJoinHarness(t, "--controllers=*,bootstrapsigner,tokencleaner,-csrapproving")
	// First a wrong CA pin on the fresh node: refused at discovery, exit 2, nothing written.
	out, code := h.join(t, "--ca-cert-hash", "sha256:"+strings.Repeat("ab", 32))
	if code != 2 || !strings.Contains(out, "does not match --ca-cert-hash") {
		t.Errorf("wrong CA pin on a fresh node: exit %d, want 2 naming the mismatch:\n%s", code, out)
	}
	for _, f := range []string{h.paths.CACert(), h.paths.BootstrapKubeconfig()} {
		if _, err := os.Stat(f); !os.IsNotExist(err) {
			t.Errorf("%s exists after a refused CA pin (%v)", f, err)
		}
	}
	out, code = h.join(t, "--timeout", "20s")
	if err := <-h.imported; err != nil {
		t.Fatalf("import images: %v", err)
	}
	if code != 1 || !strings.Contains(out, "is pending: not approved") {
		t.Fatalf("join without an approver: exit %d, want 1 naming the pending CSR:\n%s", code, out)
	}
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, "is pending") {
			t.Logf("kubewin join says: %s", l)
		}
	}
	if st, err := join.ReadState(h.paths); err != nil || st.Step != "tls-bootstrap" || st.Error == "" || st.Joined {
		t.Errorf("join state after the failure: %+v %v", st, err)
	}
	// Until TLS bootstrap is done the token is on the node: readable by root only.
	if st, err := os.Stat(h.paths.BootstrapKubeconfig()); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("bootstrap kubeconfig: %v, want mode 0600", err)
	}
	ctx := context.Background()
	csrs, err := h.admin.CertificatesV1().CertificateSigningRequests().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range csrs.Items {
		c.Status.Conditions = append(c.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
			Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue, Reason: "TestApproved", Message: "approved by the test as an admin would"})
		if _, err := h.admin.CertificatesV1().CertificateSigningRequests().UpdateApproval(ctx, c.Name, &c, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	out, code = h.join(t)
	var res join.Result
	if code != 0 || json.Unmarshal(lastJSON(out), &res) != nil || res.PodIP == "" {
		t.Fatalf("join after the approval: exit %d\n%s\n--- kubelet:\n%s", code, out, tailFile(filepath.Join(h.paths.LogDir, "kubelet.log"), 2000))
	}
	if st, err := join.ReadState(h.paths); err != nil || !st.Joined || st.Error != "" {
		t.Errorf("join state after the resumed join: %+v %v", st, err)
	}
}
