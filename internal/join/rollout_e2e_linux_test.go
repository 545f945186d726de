package join_test

// The rollout end-to-end test: `kubewin rollout` (the real CLI) upgrades the kubelet of two real
// Linux nodes (multiNode: real kubelets, containerd, runc and CNI plugins, each supervised by
// `kubewin node run`) from v1.37.0, which they joined with, to v1.37.1, the API server's release
// (the skew policy forbids a kubelet newer than the API server). The revisions' binaries come
// from a mirror in join's layout (SHA256SUMS) served over https from this host's segment address
// with a CA of the test's own, which the node services trust through SSL_CERT_FILE (Go's
// crypto/x509 on Linux reads it instead of the system roots: the test machine's trust store,
// not kubewin's).
//
// What it shows: the canary is cordoned and drained through the Eviction API while a
// PodDisruptionBudget holds (the Deployment never has fewer healthy pods than the budget, from a
// pod watch), its node service swaps the kubelet, the gates pass (Node Ready, the node service's
// condition, the node service's live flow check from a pod network address, a DaemonSet's pod on
// the node Ready under the new kubelet), then the second node; each Node then reports kubelet
// v1.37.1. The orchestrator is SIGKILLed mid-way and a new one resumes from the cluster's state.
// Then a broken revision: the canary rolls back and is Ready on the previous release, the
// rollout halts with the reason in its status, and the second node is untouched.

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/kubewin/kubewin/internal/noderun"
	"github.com/kubewin/kubewin/internal/plan"
	"github.com/kubewin/kubewin/internal/rollout"
	"github.com/kubewin/kubewin/internal/rollout/api"
	"github.com/kubewin/kubewin/internal/testenv"
)

const (
	rolloutPool     = "linux"
	rolloutFrom     = "v1.37.0" // hack/kube-binaries/kubelet-prev
	rolloutTo       = "v1.37.1" // the API server's release (hack/kube-binaries/kube-apiserver)
	rolloutNodes    = "kw-ro"
	rolloutReplicas = 4
	rolloutBudget   = 3 // the PodDisruptionBudget's minAvailable
)

func TestRolloutKubeletUpgradeTwoNodes(t *testing.T) {
	assets, err := testenv.Assets()
	if err != nil {
		t.Fatal(err)
	}
	prevKubelet := filepath.Join(assets, "kubelet-"+rolloutFrom)
	if _, err := os.Stat(prevKubelet); err != nil {
		t.Fatalf("the previous kubelet release (hack/kube-binaries/build.sh builds it): %v", err)
	}
	ca := newMirrorCA(t, t.TempDir())
	m := newMultiNode(t, multiNodeOptions{
		Nodes: 2, NamePrefix: rolloutNodes, ClusterCIDR: "10.246.0.0/16", Scheduler: true,
		// The nodes join with kubelet v1.37.0; everything else as the join test has it.
		Binaries: func(t *testing.T, _ int, dir string) string {
			stageMirror(t, dir, nodeFiles(assets, map[string]string{"kubelet": prevKubelet}))
			return dir
		},
		Env: func(int) []string { return []string{"SSL_CERT_FILE=" + ca.certFile} },
	})
	ctx := context.Background()
	m.joinAll(t)
	for _, n := range m.nodes {
		if v := kubeletVersion(t, ctx, m.admin, n.name); v != rolloutFrom {
			t.Fatalf("%s joined with kubelet %s, want %s", n.name, v, rolloutFrom)
		}
		m.startKubeProxy(t, n)
	}
	m.clusterServices(t, ctx)
	// Every flow of kubewin node check passes on both nodes before anything changes: a flow
	// check that fails later is the revision's doing.
	for _, n := range m.nodes {
		var out string
		if err := waitFor(3*time.Minute, func() bool {
			var code int
			out, code = runInNetns(t, n.ns, n.env, m.kubewin, "node", "check", "--root", n.root)
			return code == 0
		}); err != nil {
			t.Fatalf("%s: kubewin node check does not pass before the rollout: %v\n%s\n--- kube-proxy:\n%s", n.name, err, out, tailFile(filepath.Join(n.work, "kube-proxy.log"), 2000))
		}
	}

	// The revisions' mirrors, served over https on this host's segment address.
	mirrors := filepath.Join(t.TempDir(), "mirrors")
	good := stageMirror(t, filepath.Join(mirrors, rolloutTo), map[string]string{"kubelet": filepath.Join(assets, "kubelet")})
	// The broken revision is a mis-packaged mirror: its "kubelet" is the kube-proxy program of
	// the same release (a build job that copied the wrong output; the publisher's checksum is
	// of that file, so the node's verified fetch accepts it). Started with the node's kubelet
	// command line it exits at once on a flag only the kubelet knows (pflag's "unknown flag"):
	// a kubelet that cannot start with the node's configuration, which the node service must
	// notice, undo and report, whatever the file claims to be.
	broken := stageMirror(t, filepath.Join(mirrors, "misbuilt"), map[string]string{"kubelet": filepath.Join(assets, "kube-proxy")})
	base := serveMirror(t, ca, m.hostIP, mirrors)

	// The pool, a DaemonSet (its pod stays through a drain: the probe that the new kubelet runs
	// pods) and a Deployment spread over both nodes under a PodDisruptionBudget.
	for _, n := range m.nodes {
		patch := fmt.Sprintf(`{"metadata":{"labels":{%q:%q}}}`, api.LabelPool, rolloutPool)
		if _, err := m.admin.CoreV1().Nodes().Patch(ctx, n.name, "application/merge-patch+json", []byte(patch), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	createWorkloads(t, ctx, m.admin)
	if err := waitFor(3*time.Minute, func() bool { return workloadsSpread(ctx, m.admin, m.nodes) }); err != nil {
		t.Fatalf("the Deployment is not spread 2/2 with the DaemonSet Ready on both nodes: %v\n%s", err, describePodsIn(ctx, m.admin, "default"))
	}
	pods := watchBudget(t, m.admin)
	nodes := watchPool(t, m.admin)

	// --- The upgrade, with the orchestrator killed mid-way. ---
	work := t.TempDir()
	goodFile := filepath.Join(work, "good.yaml")
	writeFile(t, goodFile, revisionYAML("v1-37-1", rolloutTo, base+"/"+rolloutTo, good))
	timing := []string{"--settle", "5s", "--drain-timeout", "5m", "--apply-timeout", "5m", "--gate-timeout", "5m", "--rollback-timeout", "5m"}
	common := []string{"--pool", rolloutPool, "--kubeconfig", m.cp.KubeconfigPath}
	probe := "ready:daemonset/default/agent"
	began := time.Now()
	first := startOrchestrator(t, filepath.Join(work, "orchestrator-1.log"), m.kubewin,
		append(append([]string{"rollout", "start", "--to", goodFile, "--probe", probe}, common...), timing...)...)
	canary := m.nodes[0].name // the first pending node by name
	if err := waitFor(5*time.Minute, func() bool { return nodes.reached(canary, api.PhaseApplying) }); err != nil {
		t.Fatalf("the canary did not reach %s: %v\n%s", api.PhaseApplying, err, tailFile(first.log, 3000))
	}
	// SIGKILL: no Lease release, no last write; the node service goes on with its apply.
	first.kill()
	killed := time.Now()
	t.Logf("rollout: orchestrator SIGKILLed %s after the start, canary %s in %s", killed.Sub(began).Round(time.Millisecond), canary, api.PhaseApplying)
	second := startOrchestrator(t, filepath.Join(work, "orchestrator-2.log"), m.kubewin,
		append(append([]string{"rollout", "run"}, common...), timing...)...)
	if code := second.wait(t, 15*time.Minute); code != 0 {
		t.Fatalf("rollout run exited %d:\n%s\n--- %s node service:\n%s\n--- %s kubelet:\n%s", code, tailFile(second.log, 6000),
			canary, tailFile(m.nodes[0].nodeLog, 3000), canary, tailFile(m.nodes[0].kubeletLog(), 2000))
	}
	poolDone := time.Since(began)
	st := rolloutStatus(t, m.kubewin, common)
	if st.State != rollout.StateSucceeded {
		t.Fatalf("rollout state %s (%s), want %s", st.State, st.Reason, rollout.StateSucceeded)
	}
	for _, ns := range st.Nodes {
		if ns.Phase != api.PhaseSucceeded || ns.Current != "v1-37-1" || ns.Unschedulable || !ns.Ready {
			t.Errorf("after the rollout: %+v, want Succeeded at v1-37-1, Ready and uncordoned", ns)
		}
	}
	if !strings.Contains(tailFile(second.log, 1<<20), "leading") {
		t.Errorf("the second orchestrator never took the pool's Lease:\n%s", tailFile(second.log, 3000))
	}
	for _, n := range m.nodes {
		var v string
		if err := waitFor(2*time.Minute, func() bool { v = kubeletVersion(t, ctx, m.admin, n.name); return v == rolloutTo }); err != nil {
			t.Errorf("%s reports kubelet %s after the rollout, want %s", n.name, v, rolloutTo)
		}
	}
	// Order: the canary succeeded before the second node was cordoned; never both at once.
	if c, s := nodes.firstAt(canary, api.PhaseSucceeded), nodes.firstAt(m.nodes[1].name, api.PhaseCordoned); c.IsZero() || s.IsZero() || !c.Before(s) {
		t.Errorf("the canary succeeded at %s, the second node was cordoned at %s: the canary goes first and alone", c, s)
	}
	if max := nodes.maxCordoned(); max != 1 {
		t.Errorf("%d nodes were cordoned at once, want 1 (max unavailable 1)", max)
	}
	evicted, minHealthy := pods.result()
	if minHealthy < rolloutBudget {
		t.Errorf("the Deployment had %d healthy pods at one point, below its budget of %d", minHealthy, rolloutBudget)
	}
	refused := drainRefusals(t, ctx, m.admin)
	if refused == 0 {
		t.Errorf("no eviction was refused by the PodDisruptionBudget: the drains did not go through the budget")
	}
	for _, ns := range st.Nodes {
		c, a, v, d := nodes.firstAt(ns.Node, api.PhaseCordoned), nodes.firstAt(ns.Node, api.PhaseApplying), nodes.firstAt(ns.Node, api.PhaseVerifying), nodes.firstAt(ns.Node, api.PhaseSucceeded)
		// The Ready gate waits --settle after Ready's last transition: when that was after the
		// apply began, the restarted kubelet reported NotReady for a while.
		var readySince time.Time
		if n, err := m.admin.CoreV1().Nodes().Get(ctx, ns.Node, metav1.GetOptions{}); err == nil {
			for _, cond := range n.Status.Conditions {
				if cond.Type == corev1.NodeReady {
					readySince = cond.LastTransitionTime.Time
				}
			}
		}
		ready := "Ready throughout"
		if readySince.After(a) {
			ready = fmt.Sprintf("Ready again %s after the apply began", readySince.Sub(a).Round(time.Second))
		}
		t.Logf("rollout: %s cordon → gates passed and uncordoned in %.1f s (watched: drain %s, apply %s, gates %s; %s)", ns.Node, ns.Seconds,
			a.Sub(c).Round(time.Millisecond), v.Sub(a).Round(time.Millisecond), d.Sub(v).Round(time.Millisecond), ready)
	}
	t.Logf("rollout: pool of %d nodes %s → %s in %s (orchestrator killed once; a new one took over after the Lease expired)",
		len(m.nodes), rolloutFrom, rolloutTo, poolDone.Round(time.Millisecond))
	t.Logf("rollout: %d pods evicted, %d evictions refused by the budget and retried, fewest healthy pods %d of %d (budget minAvailable %d)",
		evicted, refused, minHealthy, rolloutReplicas, rolloutBudget)

	// --- The broken revision: the canary rolls back, the rollout halts, the other node is untouched. ---
	otherBefore := kubeletService(t, m.nodes[1])
	brokenFile := filepath.Join(work, "broken.yaml")
	writeFile(t, brokenFile, revisionYAML("v1-37-1-misbuilt", rolloutTo, base+"/misbuilt", broken))
	third := startOrchestrator(t, filepath.Join(work, "orchestrator-3.log"), m.kubewin,
		append(append([]string{"rollout", "start", "--to", brokenFile, "--probe", probe}, common...), timing...)...)
	if code := third.wait(t, 15*time.Minute); code != 1 {
		t.Fatalf("rollout start of the broken revision exited %d, want 1 (halted):\n%s", code, tailFile(third.log, 6000))
	}
	st = rolloutStatus(t, m.kubewin, common)
	t.Logf("rollout status after the broken revision: %s: %s", st.State, st.Reason)
	if st.State != rollout.StateHalted || !strings.Contains(st.Reason, canary) || !strings.Contains(st.Reason, "kubelet did not start") {
		t.Errorf("rollout state %s (%s), want %s naming %s and the kubelet that did not start", st.State, st.Reason, rollout.StateHalted, canary)
	}
	byName := map[string]rollout.NodeStatus{}
	for _, ns := range st.Nodes {
		byName[ns.Node] = ns
	}
	// The failed apply's fetch dropped what the first apply kept aside: no previous revision.
	if c := byName[canary]; c.Phase != api.PhaseRolledBack || c.Current != "v1-37-1" || c.Previous != "" || !c.Ready || !c.Unschedulable {
		t.Errorf("canary after the broken revision: %+v, want RolledBack to v1-37-1 keeping nothing, Ready, left cordoned", c)
	}
	if v := kubeletVersion(t, ctx, m.admin, canary); v != rolloutTo {
		t.Errorf("%s reports kubelet %s after its rollback, want %s", canary, v, rolloutTo)
	}
	if sum := fileSHA256(t, filepath.Join(m.nodes[0].paths.BinDir, "kubelet")); sum != good["kubelet"] {
		t.Errorf("%s runs a kubelet of sha256 %s after the rollback, want v1.37.1's %s", canary, sum, good["kubelet"])
	}
	other := m.nodes[1]
	if o := byName[other.name]; o.Phase != api.PhasePending || o.Unschedulable || o.Current != "v1-37-1" {
		t.Errorf("second node after the halt: %+v, want Pending, schedulable, still at v1-37-1", o)
	}
	if after := kubeletService(t, other); after.PID != otherBefore.PID || after.Restarts != otherBefore.Restarts {
		t.Errorf("%s's kubelet was restarted during the halted rollout: %+v, before %+v", other.name, after, otherBefore)
	}
	if sum := fileSHA256(t, filepath.Join(other.paths.BinDir, "kubelet")); sum != good["kubelet"] {
		t.Errorf("%s's kubelet changed during the halted rollout (sha256 %s)", other.name, sum)
	}
	if _, minHealthy := pods.result(); minHealthy < rolloutBudget {
		t.Errorf("the Deployment had %d healthy pods at one point, below its budget of %d", minHealthy, rolloutBudget)
	}
	applying, failed, rolledBack := nodes.lastNodePhase(canary, api.NodeApplying), nodes.lastNodePhase(canary, api.NodeFailed), nodes.lastAt(canary, api.PhaseRolledBack)
	if applying.IsZero() || failed.IsZero() || rolledBack.IsZero() || !applying.Before(failed) || failed.After(rolledBack) {
		t.Errorf("canary timeline: applying %s, failed %s, rolled back %s", applying, failed, rolledBack)
	} else {
		t.Logf("rollback: %s began the broken apply; the kubelet failed and the node service put v1.37.1 back and reported Failed %s later; RolledBack and Ready %s after that (%s from the apply's start)",
			canary, failed.Sub(applying).Round(time.Millisecond), rolledBack.Sub(failed).Round(time.Millisecond), rolledBack.Sub(applying).Round(time.Millisecond))
	}

	// --- A revision under which the flow check fails: the gate rolls the canary back. ---
	// An admin looked at the canary and puts it back into service.
	if _, err := m.admin.CoreV1().Nodes().Patch(ctx, canary, "application/merge-patch+json", []byte(`{"spec":{"unschedulable":false}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	// Another mis-packaged mirror: its CNI "bridge" is the portmap plugin of the same release.
	// The node applies it (no service restarts for a CNI plugin, the kubelet's file is the one
	// that runs), but a pod network interface can no longer be made: portmap refuses to be the
	// first plugin of a chain ("must be called as chained plugin", containernetworking/plugins
	// v1.9.1 plugins/meta/portmap/main.go). The node service's flow check, from a probe added to
	// the pod network as the runtime adds a pod, fails; that gate is definitive.
	cni := stageMirror(t, filepath.Join(mirrors, "cni-misbuilt"), map[string]string{"kubelet": filepath.Join(assets, "kubelet"), "cni/bridge": filepath.Join(assets, "cni/portmap")})
	cniFile := filepath.Join(work, "cni.yaml")
	writeFile(t, cniFile, revisionYAML("v1-37-1-cni-misbuilt", rolloutTo, base+"/cni-misbuilt", cni))
	otherBefore = kubeletService(t, other)
	bridgeBefore := fileSHA256(t, filepath.Join(m.nodes[0].paths.CNIBinDir, "bridge"))
	fourth := startOrchestrator(t, filepath.Join(work, "orchestrator-4.log"), m.kubewin,
		append(append([]string{"rollout", "start", "--to", cniFile, "--probe", probe}, common...), timing...)...)
	if code := fourth.wait(t, 15*time.Minute); code != 1 {
		t.Fatalf("rollout start of the CNI revision exited %d, want 1 (halted):\n%s", code, tailFile(fourth.log, 6000))
	}
	st = rolloutStatus(t, m.kubewin, common)
	t.Logf("rollout status after the CNI revision: %s: %s", st.State, st.Reason)
	if st.State != rollout.StateHalted || !strings.Contains(st.Reason, canary) || !strings.Contains(st.Reason, "gate flow check") {
		t.Errorf("rollout state %s (%s), want %s naming %s and the failed flow check", st.State, st.Reason, rollout.StateHalted, canary)
	}
	byName = map[string]rollout.NodeStatus{}
	for _, ns := range st.Nodes {
		byName[ns.Node] = ns
	}
	if c := byName[canary]; c.Phase != api.PhaseRolledBack || c.Current != "v1-37-1" || !c.Ready {
		t.Errorf("canary after the CNI revision: %+v, want RolledBack to v1-37-1 and Ready", c)
	}
	if sum := fileSHA256(t, filepath.Join(m.nodes[0].paths.CNIBinDir, "bridge")); sum != bridgeBefore {
		t.Errorf("%s's CNI bridge plugin after the rollback has sha256 %s, want the one before %s", canary, sum, bridgeBefore)
	}
	if o := byName[other.name]; o.Phase != api.PhasePending || o.Unschedulable || o.Current != "v1-37-1" {
		t.Errorf("second node after the halt: %+v, want Pending, schedulable, still at v1-37-1", o)
	}
	if after := kubeletService(t, other); after.PID != otherBefore.PID || after.Restarts != otherBefore.Restarts {
		t.Errorf("%s's kubelet was restarted during the halted rollout: %+v, before %+v", other.name, after, otherBefore)
	}
	// The pod network works again on the canary: every flow passes.
	if out, code := runInNetns(t, m.nodes[0].ns, m.nodes[0].env, m.kubewin, "node", "check", "--root", m.nodes[0].root); code != 0 {
		t.Errorf("%s: kubewin node check after the rollback exited %d:\n%s", canary, code, out)
	}
	gateFailed, back := nodes.lastAt(canary, api.PhaseRollingBack), nodes.lastAt(canary, api.PhaseRolledBack)
	if gateFailed.IsZero() || back.IsZero() || back.Before(gateFailed) {
		t.Errorf("canary timeline: rolling back %s, rolled back %s", gateFailed, back)
	} else {
		t.Logf("rollback: %s's flow check gate failed; RolledBack to v1-37-1 and Ready %s later", canary, back.Sub(gateFailed).Round(time.Millisecond))
	}
	if _, minHealthy := pods.result(); minHealthy < rolloutBudget {
		t.Errorf("the Deployment had %d healthy pods at one point, below its budget of %d", minHealthy, rolloutBudget)
	}
}

// nodeFiles is what join installs on a Linux node, from the built assets, with overrides
// (name in SHA256SUMS → file).
func nodeFiles(assets string, override map[string]string) map[string]string {
	files := map[string]string{}
	for _, name := range []string{"containerd", "containerd-shim-runc-v2", "kubelet", "cni/bridge", "cni/host-local", "cni/loopback", "cni/portmap"} {
		files[name] = filepath.Join(assets, name)
	}
	for k, v := range override {
		files[k] = v
	}
	return files
}

// stageMirror lays out files (name → source) in join's mirror layout with SHA256SUMS and
// returns each name's sha256.
func stageMirror(t *testing.T, dir string, files map[string]string) map[string]string {
	t.Helper()
	sums := map[string]string{}
	var lines []string
	for name, src := range files {
		data, err := os.ReadFile(src)
		if err != nil {
			t.Fatalf("mirror %s: %v", name, err)
		}
		writeFileMode(t, filepath.Join(dir, name), data, 0o755)
		s := sha256.Sum256(data)
		sums[name] = hex.EncodeToString(s[:])
		lines = append(lines, sums[name]+"  "+name)
	}
	sort.Strings(lines)
	writeFile(t, filepath.Join(dir, "SHA256SUMS"), strings.Join(lines, "\n")+"\n")
	return sums
}

func revisionYAML(name, kubelet, source string, sums map[string]string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "name: %s\nkubelet: %s\nbinaries:\n  source: %s\n  checksums:\n", name, kubelet, source)
	keys := make([]string, 0, len(sums))
	for k := range sums {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, "    %s: %s\n", k, sums[k])
	}
	return b.String()
}

func fileSHA256(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := sha256.Sum256(data)
	return hex.EncodeToString(s[:])
}

func kubeletVersion(t *testing.T, ctx context.Context, c kubernetes.Interface, node string) string {
	t.Helper()
	n, err := c.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return n.Status.NodeInfo.KubeletVersion
}

func kubeletService(t *testing.T, n *mnNode) noderun.ServiceStatus {
	t.Helper()
	return serviceStatus(t, filepath.Join(n.paths.DataDir, "status.json"), "kubelet")
}

// mirrorCA is the test's own CA for the mirror's serving certificate.
type mirrorCA struct {
	cert     *x509.Certificate
	key      *ecdsa.PrivateKey
	certFile string
}

func newMirrorCA(t *testing.T, dir string) *mirrorCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "kubewin rollout e2e mirror CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	ca := &mirrorCA{cert: cert, key: key, certFile: filepath.Join(dir, "mirror-ca.pem")}
	writeFile(t, ca.certFile, string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})))
	return ca
}

// serveMirror serves dir over https on ip (a random port) with a certificate of ca for ip, until
// the test ends; it returns the base URL.
func serveMirror(t *testing.T, ca *mirrorCA, ip, dir string) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: ip},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IPAddresses: []net.IP{net.ParseIP(ip)}, KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp4", net.JoinHostPort(ip, "0"))
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.FileServer(http.Dir(dir)), ReadHeaderTimeout: 30 * time.Second,
		TLSConfig: &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}, MinVersion: tls.VersionTLS12}}
	go func() { _ = srv.ServeTLS(l, "", "") }()
	t.Cleanup(func() { _ = srv.Close() })
	return "https://" + l.Addr().String()
}

// createWorkloads makes the DaemonSet "agent" and the Deployment "web" (4 replicas, at most one
// more on either node than on the other, counting only nodes the pods may be scheduled to:
// nodeTaintsPolicy Honor leaves out a cordoned node) with a PodDisruptionBudget of
// minAvailable 3. Their containers run the pause image the nodes have (no registry here).
func createWorkloads(t *testing.T, ctx context.Context, c kubernetes.Interface) {
	t.Helper()
	zero := int64(0)
	pod := func(app string) corev1.PodTemplateSpec {
		return corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": app}},
			Spec: corev1.PodSpec{
				TerminationGracePeriodSeconds: &zero, AutomountServiceAccountToken: new(bool),
				Containers: []corev1.Container{{Name: app, Image: plan.DefaultPauseImage, ImagePullPolicy: corev1.PullNever}},
			},
		}
	}
	ds := pod("agent")
	ds.Spec.Tolerations = []corev1.Toleration{{Operator: corev1.TolerationOpExists}}
	if _, err := c.AppsV1().DaemonSets("default").Create(ctx, &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: "agent"},
		Spec:       appsv1.DaemonSetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "agent"}}, Template: ds},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	web := pod("web")
	honor := corev1.NodeInclusionPolicyHonor
	web.Spec.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{
		MaxSkew: 1, TopologyKey: corev1.LabelHostname, WhenUnsatisfiable: corev1.DoNotSchedule, NodeTaintsPolicy: &honor,
		LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
	}}
	replicas := int32(rolloutReplicas)
	if _, err := c.AppsV1().Deployments("default").Create(ctx, &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec:       appsv1.DeploymentSpec{Replicas: &replicas, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}, Template: web},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	minAvailable := intstr.FromInt32(rolloutBudget)
	if _, err := c.PolicyV1().PodDisruptionBudgets("default").Create(ctx, &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec:       policyv1.PodDisruptionBudgetSpec{MinAvailable: &minAvailable, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// workloadsSpread: two Ready web pods and a Ready agent pod on every node, and the budget's
// controller has seen them (one disruption allowed).
func workloadsSpread(ctx context.Context, c kubernetes.Interface, nodes []*mnNode) bool {
	list, err := c.CoreV1().Pods("default").List(ctx, metav1.ListOptions{})
	if err != nil {
		return false
	}
	web, agent := map[string]int{}, map[string]int{}
	for _, p := range list.Items {
		if !podHealthy(&p) {
			continue
		}
		switch p.Labels["app"] {
		case "web":
			web[p.Spec.NodeName]++
		case "agent":
			agent[p.Spec.NodeName]++
		}
	}
	for _, n := range nodes {
		if web[n.name] != rolloutReplicas/len(nodes) || agent[n.name] != 1 {
			return false
		}
	}
	pdb, err := c.PolicyV1().PodDisruptionBudgets("default").Get(ctx, "web", metav1.GetOptions{})
	return err == nil && pdb.Status.CurrentHealthy == rolloutReplicas && pdb.Status.DisruptionsAllowed == rolloutReplicas-rolloutBudget
}

// podHealthy is what a PodDisruptionBudget counts: Ready and not being deleted
// (k8s.io/kubernetes v1.37.1 pkg/controller/disruption/disruption.go countHealthyPods).
func podHealthy(p *corev1.Pod) bool {
	if p.DeletionTimestamp != nil {
		return false
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func describePodsIn(ctx context.Context, c kubernetes.Interface, ns string) string {
	list, err := c.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err.Error()
	}
	var b strings.Builder
	for _, p := range list.Items {
		fmt.Fprintf(&b, "%s on %q: %s healthy=%t %s\n", p.Name, p.Spec.NodeName, p.Status.Phase, podHealthy(&p), p.Status.Message)
	}
	return b.String()
}

// budgetWatch follows the web pods through an informer: the fewest healthy at any point (in the
// API server's order of changes) and how many were deleted (evicted).
type budgetWatch struct {
	mu         sync.Mutex
	healthy    map[string]bool
	deleted    map[string]bool
	minHealthy int
}

func watchBudget(t *testing.T, c kubernetes.Interface) *budgetWatch {
	t.Helper()
	w := &budgetWatch{healthy: map[string]bool{}, deleted: map[string]bool{}, minHealthy: rolloutReplicas}
	f := informers.NewSharedInformerFactoryWithOptions(c, 0, informers.WithNamespace("default"),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = "app=web" }))
	inf := f.Core().V1().Pods().Informer()
	update := func(obj any) {
		p, ok := obj.(*corev1.Pod)
		if !ok {
			return
		}
		w.mu.Lock()
		defer w.mu.Unlock()
		w.healthy[p.Name] = podHealthy(p)
		if p.DeletionTimestamp != nil {
			w.deleted[p.Name] = true
		}
		w.count()
	}
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    update,
		UpdateFunc: func(_, obj any) { update(obj) },
		DeleteFunc: func(obj any) {
			if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = d.Obj
			}
			if p, ok := obj.(*corev1.Pod); ok {
				w.mu.Lock()
				defer w.mu.Unlock()
				delete(w.healthy, p.Name)
				w.deleted[p.Name] = true
				w.count()
			}
		},
	}); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	t.Cleanup(func() { close(stop) })
	f.Start(stop)
	if !cache.WaitForCacheSync(stop, inf.HasSynced) {
		t.Fatal("pod informer did not sync")
	}
	return w
}

// count records the healthy pods now (w.mu held). Before the informer has synced the
// Deployment's pods one by one it may see fewer: only counts once all were seen healthy.
func (w *budgetWatch) count() {
	n := 0
	for _, h := range w.healthy {
		if h {
			n++
		}
	}
	if len(w.healthy)+len(w.deleted) >= rolloutReplicas && n < w.minHealthy {
		w.minHealthy = n
	}
}

func (w *budgetWatch) result() (evicted, minHealthy int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.deleted), w.minHealthy
}

// poolWatch records every change of the pool's Nodes' rollout phases, node phases and cordons,
// in the API server's order.
type poolWatch struct {
	mu     sync.Mutex
	events []poolEvent
	last   map[string]poolEvent
	max    int
	cord   map[string]bool
}

type poolEvent struct {
	at            time.Time
	node          string
	phase         api.Phase
	nodePhase     api.NodePhase
	unschedulable bool
}

func watchPool(t *testing.T, c kubernetes.Interface) *poolWatch {
	t.Helper()
	w := &poolWatch{last: map[string]poolEvent{}, cord: map[string]bool{}}
	f := informers.NewSharedInformerFactoryWithOptions(c, 0,
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = api.LabelPool + "=" + rolloutPool }))
	inf := f.Core().V1().Nodes().Informer()
	update := func(obj any) {
		n, ok := obj.(*corev1.Node)
		if !ok {
			return
		}
		s := api.ReadNodeState(n.Annotations)
		ev := poolEvent{at: time.Now(), node: n.Name, phase: s.Phase, nodePhase: s.NodePhase, unschedulable: n.Spec.Unschedulable}
		w.mu.Lock()
		defer w.mu.Unlock()
		if l, ok := w.last[n.Name]; ok && l.phase == ev.phase && l.nodePhase == ev.nodePhase && l.unschedulable == ev.unschedulable {
			return
		}
		w.last[n.Name] = ev
		w.events = append(w.events, ev)
		w.cord[n.Name] = n.Spec.Unschedulable
		k := 0
		for _, c := range w.cord {
			if c {
				k++
			}
		}
		w.max = max(w.max, k)
	}
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: update, UpdateFunc: func(_, obj any) { update(obj) }}); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	t.Cleanup(func() { close(stop) })
	f.Start(stop)
	if !cache.WaitForCacheSync(stop, inf.HasSynced) {
		t.Fatal("node informer did not sync")
	}
	return w
}

func (w *poolWatch) reached(node string, p api.Phase) bool { return !w.firstAt(node, p).IsZero() }

// firstAt and lastAt: when node first (last) entered phase p; zero if never.
func (w *poolWatch) firstAt(node string, p api.Phase) time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, e := range w.events {
		if e.node == node && e.phase == p {
			return e.at
		}
	}
	return time.Time{}
}

func (w *poolWatch) lastAt(node string, p api.Phase) time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	var at time.Time
	for i, e := range w.events {
		if e.node == node && e.phase == p && (i == 0 || !w.samePhaseBefore(i, node, p)) {
			at = e.at
		}
	}
	return at
}

// samePhaseBefore: the node's previous event already had phase p (w.mu held).
func (w *poolWatch) samePhaseBefore(i int, node string, p api.Phase) bool {
	for j := i - 1; j >= 0; j-- {
		if w.events[j].node == node {
			return w.events[j].phase == p
		}
	}
	return false
}

// lastNodePhase: when node's node service last entered p.
func (w *poolWatch) lastNodePhase(node string, p api.NodePhase) time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	var at time.Time
	prev := api.NodePhase("")
	for _, e := range w.events {
		if e.node != node {
			continue
		}
		if e.nodePhase == p && prev != p {
			at = e.at
		}
		prev = e.nodePhase
	}
	return at
}

func (w *poolWatch) maxCordoned() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.max
}

// orchestrator is a kubewin rollout process.
type orchestrator struct {
	cmd  *exec.Cmd
	log  string
	done chan struct{}
}

func startOrchestrator(t *testing.T, logPath, kubewin string, args ...string) *orchestrator {
	t.Helper()
	f, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cmd := exec.Command(kubewin, args...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	o := &orchestrator{cmd: cmd, log: logPath, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(o.done) }()
	t.Cleanup(o.kill)
	return o
}

func (o *orchestrator) kill() {
	select {
	case <-o.done:
	default:
		_ = syscall.Kill(-o.cmd.Process.Pid, syscall.SIGKILL)
		<-o.done
	}
}

// wait returns the exit code, failing the test if the process has not ended within timeout.
func (o *orchestrator) wait(t *testing.T, timeout time.Duration) int {
	t.Helper()
	select {
	case <-o.done:
	case <-time.After(timeout):
		o.kill()
		t.Fatalf("kubewin rollout still running after %s:\n%s", timeout, tailFile(o.log, 4000))
	}
	return o.cmd.ProcessState.ExitCode()
}

func rolloutStatus(t *testing.T, kubewin string, common []string) rollout.Status {
	t.Helper()
	cmd := exec.Command(kubewin, append([]string{"rollout", "status", "-o", "json"}, common...)...)
	out, err := cmd.Output()
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		t.Fatal(err)
	}
	var st rollout.Status
	if err := json.Unmarshal(out, &st); err != nil {
		t.Fatalf("kubewin rollout status -o json: %v\n%s", err, out)
	}
	return st
}

// drainRefusals adds up the evictions the budget refused, from the orchestrator's
// RolloutDrained Events ("..., N evictions refused by a PodDisruptionBudget and retried, ...").
func drainRefusals(t *testing.T, ctx context.Context, c kubernetes.Interface) int {
	t.Helper()
	evs, err := c.CoreV1().Events("default").List(ctx, metav1.ListOptions{FieldSelector: "reason=" + rollout.ReasonDrained})
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, e := range evs.Items {
		var evicted, refused int
		if _, err := fmt.Sscanf(e.Message[strings.Index(e.Message, ": ")+2:], "%d pods evicted, %d evictions refused", &evicted, &refused); err != nil {
			t.Errorf("RolloutDrained Event %q: %v", e.Message, err)
			continue
		}
		t.Logf("drain of %s: %s", e.InvolvedObject.Name, e.Message)
		total += refused
	}
	return total
}
