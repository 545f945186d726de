package join_test

// A real flannel cluster on this machine (issue 26): the multi-node harness's control plane
// (kube-controller-manager allocating pod CIDRs, its DaemonSet controller, kube-scheduler) with
// flannel's own manifest applied — its RBAC, its kube-flannel-cfg ConfigMap in vxlan mode with
// VNI 4096 and port 4789 as Windows nodes need them (flannel-io/flannel Documentation/backends.md)
// and its DaemonSet — and flanneld v0.28.4, built from its Go module by
// hack/kube-binaries/build.sh, running with the kube subnet manager on every Linux node.
// `kubewin discover` reads that cluster and picks design flannel/hostprocess; two Linux nodes
// join it with the command `kubewin token create` printed; pods on the two nodes talk over
// flannel's VXLAN; the Windows DaemonSets `kubewin plan` renders for the discovered design are
// applied with strict field validation and admission, and the scheduler puts their pods on a
// Windows Node object and on no Linux node.
//
// Harness workarounds, on top of the ones e2e_linux_test.go's header lists (never part of what
// kubewin or flannel installs):
//   - No image registry: flannel's DaemonSet is applied as published except imagePullPolicy
//     Never, so its pods (made by the DaemonSet controller, bound by the scheduler) never pull;
//     the harness does for each such pod what its containers would: install-cni-plugin copies
//     the flannel CNI plugin into the node's CNI bin directory, install-cni copies the
//     ConfigMap's cni-conf.json to 10-flannel.conflist, and kube-flannel runs flanneld
//     --ip-masq --kube-subnet-mgr in the node's network namespace with the pod's POD_NAME and
//     POD_NAMESPACE, net-conf.json from the ConfigMap and a token of ServiceAccount flannel
//     bound to that pod (restarted when it exits, as the kubelet would). flanneld reaches the
//     API server directly (--kubeconfig-file): no kube-proxy serves the kubernetes Service here.
//   - The nodes share this host's filesystem: the conflist's subnetFile, dataDir and IPAM
//     dataDir, and flanneld's --subnet-file, point below each node's own root instead of
//     /run/flannel and /var/lib/cni.
//   - The flannel CNI plugin is containernetworking/plugins v0.9.1's (see
//     hack/kube-binaries/flannel-cni/tools.go): flannel-io/cni-plugin is not served here.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	vnetns "github.com/vishvananda/netns"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/yaml"

	"github.com/kubewin/kubewin/internal/discover"
	"github.com/kubewin/kubewin/internal/join"
	"github.com/kubewin/kubewin/internal/plan"
	"github.com/kubewin/kubewin/internal/render"
	"github.com/kubewin/kubewin/internal/testenv"
	"github.com/kubewin/kubewin/pkg/api/v1alpha1"
)

// flannelManifest is flannel-io/flannel v0.28.4 Documentation/kube-flannel.yml as published,
// except net-conf.json's Backend (VNI 4096 and Port 4789: the values flanneld on Windows accepts,
// which Linux and Windows nodes must share) and imagePullPolicy Never (the harness workaround
// above).
const flannelManifest = `---
kind: Namespace
apiVersion: v1
metadata:
  name: kube-flannel
  labels:
    k8s-app: flannel
    pod-security.kubernetes.io/enforce: privileged
---
kind: ClusterRole
apiVersion: rbac.authorization.k8s.io/v1
metadata:
  labels:
    k8s-app: flannel
  name: flannel
rules:
- apiGroups: [""]
  resources: [pods]
  verbs: [get]
- apiGroups: [""]
  resources: [nodes]
  verbs: [get, list, watch]
- apiGroups: [""]
  resources: [nodes/status]
  verbs: [patch]
---
kind: ClusterRoleBinding
apiVersion: rbac.authorization.k8s.io/v1
metadata:
  labels:
    k8s-app: flannel
  name: flannel
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: flannel
subjects:
- kind: ServiceAccount
  name: flannel
  namespace: kube-flannel
---
apiVersion: v1
kind: ServiceAccount
metadata:
  labels:
    k8s-app: flannel
  name: flannel
  namespace: kube-flannel
---
kind: ConfigMap
apiVersion: v1
metadata:
  name: kube-flannel-cfg
  namespace: kube-flannel
  labels:
    tier: node
    k8s-app: flannel
    app: flannel
data:
  cni-conf.json: |
    {
      "name": "cbr0",
      "cniVersion": "0.3.1",
      "plugins": [
        {
          "type": "flannel",
          "delegate": {
            "hairpinMode": true,
            "isDefaultGateway": true
          }
        },
        {
          "type": "portmap",
          "capabilities": {
            "portMappings": true
          }
        }
      ]
    }
  net-conf.json: |
    {
      "Network": "10.244.0.0/16",
      "EnableNFTables": false,
      "Backend": {
        "Type": "vxlan",
        "VNI": 4096,
        "Port": 4789
      }
    }
---
apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: kube-flannel-ds
  namespace: kube-flannel
  labels:
    tier: node
    app: flannel
    k8s-app: flannel
spec:
  selector:
    matchLabels:
      app: flannel
  template:
    metadata:
      labels:
        tier: node
        app: flannel
    spec:
      affinity:
        nodeAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
            nodeSelectorTerms:
            - matchExpressions:
              - key: kubernetes.io/os
                operator: In
                values:
                - linux
      hostNetwork: true
      priorityClassName: system-node-critical
      tolerations:
      - operator: Exists
        effect: NoSchedule
      serviceAccountName: flannel
      initContainers:
      - name: install-cni-plugin
        image: ghcr.io/flannel-io/flannel-cni-plugin:v1.9.1-flannel1
        imagePullPolicy: Never
        command: [cp]
        args: [-f, /flannel, /opt/cni/bin/flannel]
        volumeMounts:
        - name: cni-plugin
          mountPath: /opt/cni/bin
      - name: install-cni
        image: ghcr.io/flannel-io/flannel:v0.28.4
        imagePullPolicy: Never
        command: [cp]
        args: [-f, /etc/kube-flannel/cni-conf.json, /etc/cni/net.d/10-flannel.conflist]
        volumeMounts:
        - name: cni
          mountPath: /etc/cni/net.d
        - name: flannel-cfg
          mountPath: /etc/kube-flannel/
      containers:
      - name: kube-flannel
        image: ghcr.io/flannel-io/flannel:v0.28.4
        imagePullPolicy: Never
        command: [/opt/bin/flanneld]
        args: [--ip-masq, --kube-subnet-mgr]
        resources:
          requests:
            cpu: "100m"
            memory: "50Mi"
        securityContext:
          privileged: false
          capabilities:
            add: ["NET_ADMIN", "NET_RAW"]
        env:
        - name: POD_NAME
          valueFrom:
            fieldRef:
              fieldPath: metadata.name
        - name: POD_NAMESPACE
          valueFrom:
            fieldRef:
              fieldPath: metadata.namespace
        - name: EVENT_QUEUE_DEPTH
          value: "5000"
        - name: CONT_WHEN_CACHE_NOT_READY
          value: "false"
        volumeMounts:
        - name: run
          mountPath: /run/flannel
        - name: flannel-cfg
          mountPath: /etc/kube-flannel/
        - name: xtables-lock
          mountPath: /run/xtables.lock
      volumes:
      - name: run
        hostPath:
          path: /run/flannel
      - name: cni-plugin
        hostPath:
          path: /opt/cni/bin
      - name: cni
        hostPath:
          path: /etc/cni/net.d
      - name: flannel-cfg
        configMap:
          name: kube-flannel-cfg
      - name: xtables-lock
        hostPath:
          path: /run/xtables.lock
          type: FileOrCreate
`

const (
	flannelNS  = "kube-flannel"
	flannelDS  = "kube-flannel-ds"
	flannelVNI = 4096
	// flannelVXLANPort is IANA's VXLAN port, the only one flanneld on Windows accepts.
	flannelVXLANPort = 4789
)

// flannelBinaries are flanneld and the flannel CNI plugin build.sh built for the release
// hack/kube-binaries/flannel/go.mod pins.
func flannelBinaries(t *testing.T, assets string) (flanneld, plugin, version string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "hack", "kube-binaries", "flannel", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^require github.com/flannel-io/flannel (v[0-9.]+)$`).FindSubmatch(data)
	if m == nil {
		t.Fatal("hack/kube-binaries/flannel/go.mod pins no flannel release")
	}
	version = string(m[1])
	dir := filepath.Join(assets, "flannel-"+version)
	flanneld, plugin = filepath.Join(dir, "flanneld"), filepath.Join(dir, "flannel")
	for _, f := range []string{flanneld, plugin} {
		if _, err := os.Stat(f); err != nil {
			t.Fatalf("flannel %s (hack/kube-binaries/build.sh builds it): %v", version, err)
		}
	}
	return flanneld, plugin, version
}

func TestFlannelClusterEndToEnd(t *testing.T) {
	began := time.Now()
	m := newMultiNode(t, multiNodeOptions{Nodes: 2, NamePrefix: "kw-fl", ClusterCIDR: "10.244.0.0/16", Scheduler: true})
	flanneld, plugin, version := flannelBinaries(t, m.assets)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()

	// The cluster's flannel, as its manifest installs it.
	objs, err := testenv.DecodeObjects([]byte(flannelManifest))
	if err != nil {
		t.Fatal(err)
	}
	if err := m.cp.CreateObjects(ctx, objs...); err != nil {
		t.Fatalf("apply flannel's manifest: %v", err)
	}

	// discover reads the cluster and picks the design; what Windows lacks is named.
	res := discoverCluster(t, m)
	s := res.Cluster.Spec
	if s.Design != v1alpha1.DesignFlannelHostProcess || s.LinuxCNI.Type != "flannel" || s.LinuxCNI.Flannel == nil {
		t.Fatalf("discover: design %q, linuxCNI %+v; want flannel/hostprocess on flannel", s.Design, s.LinuxCNI)
	}
	if f := s.LinuxCNI.Flannel; f.Backend != "vxlan" || f.VNI != flannelVNI || f.Port != flannelVXLANPort {
		t.Errorf("discover: flannel %+v, want vxlan VNI %d port %d", *f, flannelVNI, flannelVXLANPort)
	}
	if got, want := prerequisiteIDs(res), []string{"flannel-windows-daemonset", "kube-proxy-windows-daemonset"}; !slices.Equal(got, want) {
		t.Errorf("discover: Windows prerequisites %v, want %v", got, want)
	}
	// The DaemonSet's image tag is the release the Windows nodes should run too.
	if !slices.ContainsFunc(res.Notes, func(n string) bool { return strings.Contains(n, "the cluster runs flannel "+version) }) {
		t.Errorf("discover does not name the cluster's flannel release %s: %q", version, res.Notes)
	}
	for _, p := range res.WindowsPrerequisites {
		t.Logf("discover: missing for Windows: %s: %s (fix: %s)", p.ID, p.Problem, p.Fix)
	}
	// The admin completes what discover could not read from this cluster and publishes it; the
	// token create of the harness printed the join command the nodes use.
	spec := completeDiscovered(t, res, m)
	specFile := filepath.Join(m.work, "flannel-cluster.yaml")
	writeFile(t, specFile, spec)
	// publish also applies what discover found missing for Windows (the kube-proxy and flannel
	// Windows HostProcess DaemonSets): after it, token create + join are all a node needs.
	published := run(t, nil, m.kubewin, "publish", "-f", specFile, "--kubeconfig", m.cp.KubeconfigPath)
	for _, want := range []string{"DaemonSet kube-system/kube-proxy-windows", "DaemonSet " + flannelNS + "/"} {
		if !strings.Contains(published, want) {
			t.Errorf("publish did not apply %s:\n%s", want, published)
		}
	}
	if res := discoverCluster(t, m); len(res.WindowsPrerequisites) != 0 {
		t.Errorf("discover after publish: prerequisites %+v", res.WindowsPrerequisites)
	}

	// flannel's DaemonSet pods, played on each node once the scheduler has bound them; node 0's
	// only after a first join has shown what it says without flannel.
	gates := []chan struct{}{make(chan struct{}), make(chan struct{})}
	for i, n := range m.nodes {
		startFlannelPod(t, m, n, flanneld, plugin, gates[i])
	}
	close(gates[1])

	n0 := m.nodes[0]
	out, code, err := execInNetns(n0.ns, n0.env, m.kubewin, append(append([]string(nil), n0.args...), "--timeout", "60s")...)
	if err != nil {
		t.Fatal(err)
	}
	if code != 1 || !strings.Contains(out, "join step pod-network") || !strings.Contains(out, "flannel") {
		t.Fatalf("join without flannel on the node: exit %d, want 1 from the pod-network step naming what flannel has not made:\n%s", code, out)
	}
	for _, want := range []string{"no CNI configuration in " + n0.paths.CNIConfDir, "pod " + flannelNS + "/" + flannelDS + "-"} {
		if !strings.Contains(out, want) {
			t.Errorf("join without flannel does not name %q:\n%s", want, lastLines(out, 6))
		}
	}
	t.Logf("join without flannel: %s", lastLines(out, 1))
	// The JSON result comes first, then the error line (stderr).
	var first join.Result
	if err := json.NewDecoder(bytes.NewReader(lastJSON(out))).Decode(&first); err != nil {
		t.Fatalf("join -o json: %v\n%s", err, out)
	}
	joinAppliedEffects(t, spec, n0, first)
	close(gates[0])

	joined := time.Now()
	m.joinAll(t)
	t.Logf("both nodes joined with flannel in %s", time.Since(joined).Round(time.Millisecond))

	podCIDRs := map[string]string{}
	for _, n := range m.nodes {
		node, err := m.admin.CoreV1().Nodes().Get(ctx, n.name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !nodeReady(node) || node.Spec.PodCIDR == "" {
			t.Fatalf("%s: Ready %v, pod CIDR %q", n.name, nodeReady(node), node.Spec.PodCIDR)
		}
		podCIDRs[n.name] = node.Spec.PodCIDR
		// flanneld's kube subnet manager published the node's VTEP on its Node (pkg/subnet/kube
		// annotations flannel.alpha.coreos.com/*).
		if bt, ip := node.Annotations["flannel.alpha.coreos.com/backend-type"], node.Annotations["flannel.alpha.coreos.com/public-ip"]; bt != "vxlan" || ip != n.ip {
			t.Errorf("%s: flannel annotations backend-type %q public-ip %q, want vxlan and %s", n.name, bt, ip, n.ip)
		}
		// join took flannel's network and wrote no CNI configuration of its own.
		entries, _ := os.ReadDir(n.paths.CNIConfDir)
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		if !slices.Equal(names, []string{"10-flannel.conflist"}) {
			t.Errorf("%s: CNI configurations %v, want flannel's alone", n.name, names)
		}
		// The node's host effects were applied in its namespace (net.ipv4.ip_forward starts at
		// 0 in a new network namespace): flannel forwards pod traffic only with it.
		if v := strings.TrimSpace(mustNetns(t, n.ns, "cat", "/proc/sys/net/ipv4/ip_forward")); v != "1" {
			t.Errorf("%s: net.ipv4.ip_forward = %s after join, want 1 (the plan's sysctl effect)", n.name, v)
		}
		dev := flannelDevice(t, n.ns.Handle())
		t.Logf("%s: pod CIDR %s, %s VNI %d port %d on %s", n.name, node.Spec.PodCIDR, dev.Name, dev.VxlanId, dev.Port, n.ip)
	}
	// A second join of a joined flannel node changes nothing.
	out, code, err = execInNetns(n0.ns, n0.env, m.kubewin, n0.args...)
	var again join.Result
	if err != nil || code != 0 || json.Unmarshal(lastJSON(out), &again) != nil {
		t.Fatalf("second join: exit %d %v\n%s", code, err, out)
	}
	if again.Changed() {
		t.Errorf("second join changed something: %+v", again.Steps)
	}
	if !stepSays(again, "pod-network", "flannel lease "+strings.TrimSuffix(podCIDRs[n0.name], "0/24")+"1/24") {
		t.Errorf("second join's pod-network step does not name flannel's lease of %s: %+v", podCIDRs[n0.name], again.Steps)
	}

	// Pods on the two nodes talk over flannel's VXLAN.
	podTraffic(t, ctx, m)

	// The Windows side of the discovered design: kubewin plan's DaemonSets (the files publish
	// applied; applying them again as the same field manager changes nothing) on the API server
	// and scheduled onto a Windows Node, not onto the Linux nodes.
	windowsDaemonSets(t, ctx, m, specFile)
	res = discoverCluster(t, m)
	if len(res.WindowsPrerequisites) != 0 {
		t.Errorf("discover after applying the plan: prerequisites %+v", res.WindowsPrerequisites)
	}
	t.Logf("flannel %s cluster end to end in %s", version, time.Since(began).Round(time.Second))
}

// discoverCluster runs kubewin discover against the cluster (exit 0, or 1 with findings).
func discoverCluster(t *testing.T, m *multiNode) *discover.Result {
	t.Helper()
	cmd := exec.Command(m.kubewin, "discover", "-o", "json", "--kubeconfig", m.cp.KubeconfigPath)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var ee *exec.ExitError
	if err != nil && (!errors.As(err, &ee) || ee.ExitCode() != 1) {
		t.Fatalf("kubewin discover: %v\n%s", err, stderr.String())
	}
	var res discover.Result
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("kubewin discover -o json: %v\n%s", err, out)
	}
	return &res
}

func prerequisiteIDs(res *discover.Result) []string {
	var ids []string
	for _, p := range res.WindowsPrerequisites {
		ids = append(ids, p.ID)
	}
	sort.Strings(ids)
	return ids
}

// completeDiscovered is the discovered description with what this cluster cannot tell discover
// (it has no kubeadm ConfigMap, no kube-dns and no Node yet): the values discover reports
// missing, supplied as the admin would, and this machine's cgroup driver.
func completeDiscovered(t *testing.T, res *discover.Result, m *multiNode) string {
	t.Helper()
	c := res.Cluster
	for _, miss := range res.Missing {
		t.Logf("discover: missing %s (%s)", miss.Field, miss.Supply)
	}
	if c.Spec.Networking.ServiceCIDR == "" {
		c.Spec.Networking.ServiceCIDR = "10.96.0.0/12"
	}
	if c.Spec.Networking.ClusterDNS == "" {
		c.Spec.Networking.ClusterDNS = "10.96.0.10"
	}
	if c.Spec.Networking.NodeCIDRMaskSize == 0 {
		c.Spec.Networking.NodeCIDRMaskSize = 24
	}
	if c.Spec.KubernetesVersion == "" {
		c.Spec.KubernetesVersion = "v1.37.1"
	}
	c.Spec.ContainerRuntime.CgroupDriver = "cgroupfs"
	if len(c.Spec.Nodes) == 0 {
		c.Spec.Nodes = []v1alpha1.Node{{Name: "cp1", OS: v1alpha1.OSLinux, Role: v1alpha1.RoleControlPlane,
			NICs: []v1alpha1.NIC{{Name: "eth0", IP: m.hostIP, Prefix: m.prefix}}}}
	}
	data, err := yaml.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	if errs := v1alpha1.Validate(c); len(errs) > 0 {
		t.Fatalf("the completed discovered description: %v\n%s", errs, data)
	}
	return string(data)
}

// startFlannelPod plays flannel's DaemonSet pod on node n once gate is closed (see the header):
// it waits for the pod the DaemonSet controller made and the scheduler bound to n, does what its
// init containers do, and runs flanneld as its container, restarting it when it exits, until
// the test ends.
func startFlannelPod(t *testing.T, m *multiNode, n *mnNode, flanneld, plugin string, gate <-chan struct{}) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	log := filepath.Join(n.work, "flanneld.log")
	go func() { done <- playFlannelPod(ctx, m, n, flanneld, plugin, gate, log) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("%s: flannel pod: %v\n%s", n.name, err, tailFile(log, 2000))
		}
	})
}

func playFlannelPod(ctx context.Context, m *multiNode, n *mnNode, flanneld, plugin string, gate <-chan struct{}, log string) error {
	select {
	case <-gate:
	case <-ctx.Done():
		return nil
	}
	var pod *corev1.Pod
	for pod == nil {
		pods, err := m.admin.CoreV1().Pods(flannelNS).List(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("spec.nodeName", n.name).String()})
		if err == nil {
			for i := range pods.Items {
				if strings.HasPrefix(pods.Items[i].Name, flannelDS+"-") {
					pod = &pods.Items[i]
				}
			}
		}
		if pod == nil {
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(300 * time.Millisecond):
			}
		}
	}
	// install-cni-plugin: cp -f /flannel /opt/cni/bin/flannel.
	bin, err := os.ReadFile(plugin)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(n.paths.CNIBinDir, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(n.paths.CNIBinDir, "flannel"), bin, 0o755); err != nil {
		return err
	}
	// install-cni: cp -f /etc/kube-flannel/cni-conf.json /etc/cni/net.d/10-flannel.conflist,
	// with the node's own paths for what flannel keeps on the host.
	cm, err := m.admin.CoreV1().ConfigMaps(flannelNS).Get(ctx, "kube-flannel-cfg", metav1.GetOptions{})
	if err != nil {
		return err
	}
	runDir := filepath.Join(n.root, "run", "flannel")
	subnetFile := filepath.Join(runDir, "subnet.env")
	var conf map[string]any
	if err := json.Unmarshal([]byte(cm.Data["cni-conf.json"]), &conf); err != nil {
		return fmt.Errorf("cni-conf.json: %w", err)
	}
	plugins, _ := conf["plugins"].([]any)
	if len(plugins) == 0 {
		return fmt.Errorf("cni-conf.json has no plugins")
	}
	fl := plugins[0].(map[string]any)
	fl["subnetFile"] = subnetFile
	fl["dataDir"] = filepath.Join(n.root, "var", "lib", "cni", "flannel")
	fl["ipam"] = map[string]any{"dataDir": filepath.Join(n.root, "var", "lib", "cni", "networks")}
	confData, err := json.MarshalIndent(conf, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(n.paths.CNIConfDir, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(n.paths.CNIConfDir, "10-flannel.conflist"), confData, 0o644); err != nil {
		return err
	}
	// The configMap volume and the ServiceAccount token the kubelet would mount.
	cfgDir := filepath.Join(n.work, "kube-flannel-cfg")
	if err := os.MkdirAll(cfgDir, 0o755); err != nil {
		return err
	}
	netConf := filepath.Join(cfgDir, "net-conf.json")
	if err := os.WriteFile(netConf, []byte(cm.Data["net-conf.json"]), 0o644); err != nil {
		return err
	}
	expiry := int64(3600)
	tr, err := m.admin.CoreV1().ServiceAccounts(flannelNS).CreateToken(ctx, "flannel", &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{
		ExpirationSeconds: &expiry, BoundObjectRef: &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: pod.Name, UID: pod.UID}}}, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("token of ServiceAccount flannel: %w", err)
	}
	kc := clientcmdapi.NewConfig()
	kc.Clusters["c"] = &clientcmdapi.Cluster{Server: m.cp.Host, CertificateAuthorityData: m.cp.Config.CAData}
	kc.AuthInfos["flannel"] = &clientcmdapi.AuthInfo{Token: tr.Status.Token}
	kc.Contexts["c"] = &clientcmdapi.Context{Cluster: "c", AuthInfo: "flannel"}
	kc.CurrentContext = "c"
	kubeconfig := filepath.Join(cfgDir, "kubeconfig")
	if err := clientcmd.WriteToFile(*kc, kubeconfig); err != nil {
		return err
	}
	if err := os.MkdirAll(runDir, 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	args := []string{"--net=" + n.ns.Path(), flanneld, "--ip-masq", "--kube-subnet-mgr",
		"--kubeconfig-file=" + kubeconfig, "--net-config-path=" + netConf, "--subnet-file=" + subnetFile}
	for {
		cmd := exec.Command("nsenter", args...)
		cmd.Env = append(os.Environ(), "POD_NAME="+pod.Name, "POD_NAMESPACE="+flannelNS, "EVENT_QUEUE_DEPTH=5000", "CONT_WHEN_CACHE_NOT_READY=false")
		cmd.Stdout, cmd.Stderr = f, f
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
		if err := cmd.Start(); err != nil {
			return err
		}
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		select {
		case <-ctx.Done():
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
			select {
			case <-exited:
			case <-time.After(10 * time.Second):
				_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
				<-exited
			}
			return nil
		case err := <-exited:
			fmt.Fprintf(f, "--- harness: flanneld exited (%v); restarting as the kubelet would\n", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(2 * time.Second):
		}
	}
}

// flannelDevice is flanneld's VXLAN device in a node's namespace: flannel.<VNI> with the VNI and
// UDP port of net-conf.json (flannel-io/flannel pkg/backend/vxlan/vxlan.go names it).
func flannelDevice(t *testing.T, h *netlink.Handle) *netlink.Vxlan {
	t.Helper()
	name := fmt.Sprintf("flannel.%d", flannelVNI)
	link, err := h.LinkByName(name)
	if err != nil {
		t.Fatalf("no %s in the node's namespace: %v", name, err)
	}
	vx, ok := link.(*netlink.Vxlan)
	if !ok {
		t.Fatalf("%s is a %s, not a VXLAN device", name, link.Type())
	}
	if vx.VxlanId != flannelVNI || vx.Port != flannelVXLANPort {
		t.Errorf("%s: VNI %d port %d, want %d and %d", name, vx.VxlanId, vx.Port, flannelVNI, flannelVXLANPort)
	}
	return vx
}

// podTraffic runs a pod on each node and exchanges a TCP message between their network
// namespaces: pod 0 connects to pod 1's address, which lives only on node 1, so the packets
// cross flannel's VXLAN device (its counters on node 0 grow) and arrive from pod 0's own address
// (pod-to-pod traffic is not masqueraded: flanneld --ip-masq masquerades only traffic leaving
// the cluster network).
func podTraffic(t *testing.T, ctx context.Context, m *multiNode) {
	t.Helper()
	var ips []string
	for i, n := range m.nodes {
		name := fmt.Sprintf("talk-%d", i)
		zero := int64(0)
		if _, err := m.admin.CoreV1().Pods("default").Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: corev1.PodSpec{NodeName: n.name, TerminationGracePeriodSeconds: &zero,
				Containers: []corev1.Container{{Name: "pause", Image: plan.DefaultPauseImage, ImagePullPolicy: corev1.PullIfNotPresent}}}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		var pod *corev1.Pod
		if err := waitFor(2*time.Minute, func() bool {
			p, err := m.admin.CoreV1().Pods("default").Get(ctx, name, metav1.GetOptions{})
			pod = p
			return err == nil && p.Status.Phase == corev1.PodRunning && p.Status.PodIP != ""
		}); err != nil {
			t.Fatalf("pod %s on %s: %v (%+v)\n%s", name, n.name, err, pod.Status, tailFile(n.kubeletLog(), 2000))
		}
		_, cidr, _ := net.ParseCIDR(mustNode(t, ctx, m, n.name).Spec.PodCIDR)
		if !cidr.Contains(net.ParseIP(pod.Status.PodIP)) {
			t.Errorf("pod %s has %s, outside %s's pod CIDR %s", name, pod.Status.PodIP, n.name, cidr)
		}
		ips = append(ips, pod.Status.PodIP)
	}
	from, to := podNetnsOf(t, ips[0]), podNetnsOf(t, ips[1])
	dev := fmt.Sprintf("flannel.%d", flannelVNI)
	before := flannelDevice(t, m.nodes[0].ns.Handle()).Statistics.TxPackets

	var ln net.Listener
	if err := inNetnsPath(to, func() (err error) { ln, err = net.Listen("tcp4", net.JoinHostPort(ips[1], "0")); return err }); err != nil {
		t.Fatalf("listen in pod talk-1: %v", err)
	}
	defer ln.Close()
	accepted := make(chan string, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			accepted <- "accept: " + err.Error()
			return
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(time.Minute))
		buf := make([]byte, 64)
		k, _ := io.ReadAtLeast(c, buf, len("hello from talk-0"))
		_, _ = c.Write([]byte("hello from talk-1"))
		accepted <- c.RemoteAddr().(*net.TCPAddr).IP.String() + " said " + string(buf[:k])
	}()
	var reply string
	t0 := time.Now()
	err := inNetnsPath(from, func() error {
		c, err := net.DialTimeout("tcp4", ln.Addr().String(), 30*time.Second)
		if err != nil {
			return err
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(time.Minute))
		if _, err := c.Write([]byte("hello from talk-0")); err != nil {
			return err
		}
		buf := make([]byte, 64)
		k, err := io.ReadAtLeast(c, buf, len("hello from talk-1"))
		reply = string(buf[:k])
		return err
	})
	if err != nil {
		t.Fatalf("TCP from pod talk-0 (%s) to talk-1 (%s): %v", ips[0], ln.Addr(), err)
	}
	got := <-accepted
	if want := ips[0] + " said hello from talk-0"; got != want || reply != "hello from talk-1" {
		t.Errorf("TCP exchange: talk-1 got %q (want %q), talk-0 got %q", got, want, reply)
	}
	after := flannelDevice(t, m.nodes[0].ns.Handle()).Statistics.TxPackets
	if after <= before {
		t.Errorf("%s on %s sent no packets during the exchange (%d before, %d after)", dev, m.nodes[0].name, before, after)
	}
	t.Logf("pods: %s on %s and %s on %s exchanged over TCP in %s; %s on %s sent %d packets", ips[0], m.nodes[0].name, ips[1], m.nodes[1].name,
		time.Since(t0).Round(time.Millisecond), dev, m.nodes[0].name, after-before)
}

func mustNode(t *testing.T, ctx context.Context, m *multiNode, name string) *corev1.Node {
	t.Helper()
	n, err := m.admin.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// podNetnsOf finds the pod network namespace containerd made (/run/netns/cni-<uuid>) that holds
// ip.
func podNetnsOf(t *testing.T, ip string) string {
	t.Helper()
	entries, _ := os.ReadDir("/run/netns")
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), "cni-") {
			continue
		}
		p := filepath.Join("/run/netns", e.Name())
		out, err := exec.Command("nsenter", "--net="+p, "ip", "-o", "-4", "addr", "show").CombinedOutput()
		if err == nil && strings.Contains(string(out), " "+ip+"/") {
			return p
		}
	}
	t.Fatalf("no pod network namespace holds %s", ip)
	return ""
}

// inNetnsPath runs fn on a thread in the network namespace at path; sockets fn creates stay in
// that namespace.
func inNetnsPath(path string, fn func() error) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	orig, err := vnetns.Get()
	if err != nil {
		return err
	}
	defer orig.Close()
	target, err := vnetns.GetFromPath(path)
	if err != nil {
		return err
	}
	defer target.Close()
	if err := vnetns.Set(target); err != nil {
		return err
	}
	defer func() { _ = vnetns.Set(orig) }()
	return fn()
}

// windowsDaemonSets applies what `kubewin plan` renders for the discovered design under
// cluster/hostprocess/ with server-side apply and strict field validation (as `kubectl apply
// --server-side --field-manager=kubewin --validate=strict` does; admission runs on every
// object), registers a Windows Node object as a Windows kubelet would, and waits for the
// DaemonSet controller's pods and the scheduler's binding: each Windows DaemonSet has its pod on
// the Windows Node and none on a Linux node; flannel's Linux DaemonSet has none there.
func windowsDaemonSets(t *testing.T, ctx context.Context, m *multiNode, specFile string) {
	t.Helper()
	dir := filepath.Join(m.work, "plan")
	run(t, nil, m.kubewin, "plan", "-f", specFile, "-d", dir)
	files, _ := filepath.Glob(filepath.Join(dir, "cluster", "hostprocess", "*.yaml"))
	if len(files) == 0 {
		t.Fatalf("kubewin plan rendered nothing under cluster/hostprocess/ for the discovered design")
	}
	dyn, err := dynamic.NewForConfig(m.cp.Config)
	if err != nil {
		t.Fatal(err)
	}
	dc, err := discovery.NewDiscoveryClientForConfig(m.cp.Config)
	if err != nil {
		t.Fatal(err)
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))
	type dsRef struct{ ns, name string }
	var windowsDS []dsRef
	applied := map[string]int{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		objs, err := testenv.DecodeObjects(data)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, o := range objs {
			gvk := o.GroupVersionKind()
			mp, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
			if err != nil {
				t.Fatalf("%s: %s is not served: %v", f, gvk, err)
			}
			var ri dynamic.ResourceInterface = dyn.Resource(mp.Resource)
			if mp.Scope.Name() == meta.RESTScopeNameNamespace {
				ri = dyn.Resource(mp.Resource).Namespace(o.GetNamespace())
			}
			body, err := json.Marshal(o.Object)
			if err != nil {
				t.Fatal(err)
			}
			force := false
			if _, err := ri.Patch(ctx, o.GetName(), types.ApplyPatchType, body,
				metav1.PatchOptions{FieldManager: "kubewin", FieldValidation: "Strict", Force: &force}); err != nil {
				t.Fatalf("%s: server-side apply %s %s/%s: %v", filepath.Base(f), gvk.Kind, o.GetNamespace(), o.GetName(), err)
			}
			applied[gvk.Kind]++
			if gvk.Kind == "DaemonSet" {
				windowsDS = append(windowsDS, dsRef{o.GetNamespace(), o.GetName()})
			}
		}
	}
	t.Logf("applied from kubewin plan's cluster/hostprocess/: %v", applied)
	if len(windowsDS) != 2 {
		t.Fatalf("kubewin plan rendered %d DaemonSets for flannel/hostprocess, want flannel's and kube-proxy's: %v", len(windowsDS), windowsDS)
	}

	// The Windows Node as a Windows kubelet registers it (labels from
	// k8s.io/kubernetes pkg/kubelet/kubelet_node_status.go, kubewin's os=windows taint), with the
	// capacity and Ready condition its status would report: the scheduler needs allocatable pods.
	win := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "kw-fl-win", Labels: map[string]string{
		corev1.LabelOSStable: "windows", corev1.LabelArchStable: "amd64", corev1.LabelHostname: "kw-fl-win",
		"node.kubernetes.io/windows-build": "10.0.20348"}},
		Spec: corev1.NodeSpec{Taints: []corev1.Taint{{Key: "os", Value: "windows", Effect: corev1.TaintEffectNoSchedule}}}}
	if _, err := m.admin.CoreV1().Nodes().Create(ctx, win, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.admin.CoreV1().Nodes().Delete(context.Background(), win.Name, metav1.DeleteOptions{}) })
	capacity := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("8Gi"), corev1.ResourcePods: resource.MustParse("110")}
	// kube-controller-manager writes the new Node too (its pod CIDR, taints): read, then write.
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur, err := m.admin.CoreV1().Nodes().Get(ctx, win.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		cur.Status = corev1.NodeStatus{Capacity: capacity, Allocatable: capacity,
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady", LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now()}},
			NodeInfo:   corev1.NodeSystemInfo{OperatingSystem: "windows", Architecture: "amd64", KubeletVersion: "v1.37.1"}}
		_, err = m.admin.CoreV1().Nodes().UpdateStatus(ctx, cur, metav1.UpdateOptions{})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	scheduled := time.Now()
	linux := map[string]bool{}
	for _, n := range m.nodes {
		linux[n.name] = true
	}
	for _, d := range windowsDS {
		var where []string
		if err := waitFor(2*time.Minute, func() bool {
			pods, err := m.admin.CoreV1().Pods(d.ns).List(ctx, metav1.ListOptions{})
			if err != nil {
				return false
			}
			where = nil
			for _, p := range pods.Items {
				if ownedBy(&p, d.name) {
					where = append(where, p.Spec.NodeName+" "+podScheduled(&p))
				}
			}
			return len(where) == 1 && strings.HasPrefix(where[0], win.Name+" ")
		}); err != nil {
			t.Fatalf("DaemonSet %s/%s: pods on %v, want one bound to %s by the scheduler: %v", d.ns, d.name, where, win.Name, err)
		}
		ds, err := m.admin.AppsV1().DaemonSets(d.ns).Get(ctx, d.name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if ds.Status.DesiredNumberScheduled != 1 {
			t.Errorf("DaemonSet %s/%s wants %d nodes, want the Windows node alone", d.ns, d.name, ds.Status.DesiredNumberScheduled)
		}
		t.Logf("DaemonSet %s/%s: pod on %s (%s after the Windows Node registered)", d.ns, d.name, where[0], time.Since(scheduled).Round(time.Millisecond))
	}
	// flannel's Linux DaemonSet: a pod on each Linux node, none on the Windows node.
	pods, err := m.admin.CoreV1().Pods(flannelNS).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var onLinux int
	for _, p := range pods.Items {
		if !ownedBy(&p, flannelDS) {
			continue
		}
		if p.Spec.NodeName == win.Name {
			t.Errorf("flannel's Linux DaemonSet has pod %s on the Windows node", p.Name)
		}
		if linux[p.Spec.NodeName] {
			onLinux++
		}
	}
	if onLinux != len(m.nodes) {
		t.Errorf("flannel's Linux DaemonSet has %d pods on the %d Linux nodes", onLinux, len(m.nodes))
	}
}

func ownedBy(p *corev1.Pod, ds string) bool {
	for _, o := range p.OwnerReferences {
		if o.Kind == "DaemonSet" && o.Name == ds {
			return true
		}
	}
	return false
}

// podScheduled is the PodScheduled condition's status and reason ("True" once bound).
func podScheduled(p *corev1.Pod) string {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled {
			return string(c.Status) + " " + c.Reason
		}
	}
	return "unscheduled"
}

// joinAppliedEffects checks that the join's configuration step named every host effect render
// plans for the node — the one list join's executors and the node bundle are made from — as
// applied or found in place: a join that ignores one fails here.
func joinAppliedEffects(t *testing.T, spec string, n *mnNode, r join.Result) {
	t.Helper()
	c, _, err := v1alpha1.Parse("cluster.yaml", []byte(spec))
	if err != nil {
		t.Fatal(err)
	}
	c.Spec.Nodes = append(c.Spec.Nodes, v1alpha1.Node{Name: n.name, OS: v1alpha1.OSLinux, Role: v1alpha1.RoleWorker,
		NICs: []v1alpha1.NIC{{Name: "eth0", IP: n.ip, Prefix: 24}}})
	p, err := plan.New(c)
	if err != nil {
		t.Fatal(err)
	}
	var effects []render.HostEffect
	for _, np := range p.Nodes {
		if np.Name == n.name {
			if effects, err = render.NodeEffects(p, np); err != nil {
				t.Fatal(err)
			}
		}
	}
	if len(effects) == 0 {
		t.Fatalf("no host effects planned for %s", n.name)
	}
	for _, e := range effects {
		var what string
		switch e.Kind {
		case render.EffectModule:
			what = "kernel module " + e.Module
		case render.EffectSysctl:
			what = "sysctl " + e.Sysctl.Key + " = " + e.Sysctl.Value
		case render.EffectRegistryHost:
			what = filepath.Join(n.paths.ContainerdCertsDir, e.RegistryHost.Dir, "hosts.toml")
		default:
			t.Errorf("%s: effect %s of a flannel Linux node has no check here", n.name, e)
			continue
		}
		if !stepSays(r, "configuration", what) {
			t.Errorf("%s: join's configuration step does not name effect %s (%q)", n.name, e, what)
		}
	}
	t.Logf("%s: join applied its %d host effects", n.name, len(effects))
}

func stepSays(r join.Result, step, what string) bool {
	for _, s := range r.Steps {
		if s.Name != step {
			continue
		}
		for _, c := range s.Changes {
			if strings.Contains(c.What, what) {
				return true
			}
		}
	}
	return false
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
