package join_test

// A multi-node harness for end-to-end tests that need more than one real Linux node: one control
// plane (as newJoinHarness builds it) shared by N nodes, each in its own network namespace with
// its own root, cgroup root, node service and binaries mirror, each joined with the command
// `kubewin token create` printed. It uses this machine's workarounds that e2e_linux_test.go's
// header comment lists (no systemd, cgroups v1, the runc wrapper, imported images, the host's
// mount namespace) and its cleanup, node by node.
//
// The nodes share one layer-2 segment: a bridge in a namespace of the test's own ("lan"), with a
// veth to this host (the control plane's address, every node's default gateway) and one to each
// node's eth0. Traffic between nodes (host-gw routes, a VXLAN overlay) stays on that bridge and
// never crosses this host's own forwarding or firewall; the host only talks to the nodes.

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	"golang.org/x/net/dns/dnsmessage"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"

	"github.com/kubewin/kubewin/internal/render"
	"github.com/kubewin/kubewin/internal/testenv"
	"github.com/kubewin/kubewin/internal/testenv/netns"
	"github.com/kubewin/kubewin/internal/testenv/nodeimage"
)

// multiNodeOptions shape a multiNode cluster; zero values take the defaults named.
type multiNodeOptions struct {
	// Nodes is the number of nodes (default 2).
	Nodes int
	// NamePrefix names the nodes NamePrefix-0, NamePrefix-1, ... (default "kw-mn").
	NamePrefix string
	// ClusterCIDR is the pod network (kube-controller-manager --cluster-cidr, the description's
	// podCIDRs); default 10.244.0.0/16, each node gets a /24 of it.
	ClusterCIDR string
	// Spec is the cluster description given the control plane's address and the segment's
	// prefix length (default: mnSpec, design host-gw with the bridge CNI of kubewin's own).
	Spec func(hostIP string, prefix int, clusterCIDR string) string
	// KCMArgs go to kube-controller-manager.
	KCMArgs []string
	// ControlPlane are extra options of the control plane (WithNodeAccess is always given).
	ControlPlane []testenv.Option
	// Scheduler starts kube-scheduler (Deployments, DaemonSets).
	Scheduler bool
	// Binaries stages node i's binaries mirror in dir and returns what join --binaries gets
	// (default: stageBinaries of the built assets, the same for every node).
	Binaries func(t *testing.T, i int, dir string) string
	// JoinArgs are extra arguments of node i's join (later ones win over the harness's).
	JoinArgs func(i int) []string
	// Env is extra environment of node i's node service (and with it containerd and the kubelet).
	Env func(i int) []string
	// Images are extra OCI tarballs imported into every node's containerd (the pause image
	// always is).
	Images []string
}

// multiNode is a control plane and its nodes.
type multiNode struct {
	opts       multiNodeOptions
	work       string
	hostIP     string
	prefix     int
	lan        *netns.NS
	cp         *testenv.ControlPlane
	admin      kubernetes.Interface
	kubewin    string
	assets     string
	joinCmd    []string
	nodes      []*mnNode
	wrapDir    string
	subnetBase string
}

// mnNode is one node of a multiNode.
type mnNode struct {
	i        int
	name     string
	ip       string
	work     string
	root     string
	paths    render.NodePaths
	ns       *netns.NS
	env      []string
	nodeLog  string
	nodeRun  *exec.Cmd
	binaries string
	// args is the whole join command line of this node.
	args     []string
	imported chan error
}

const mnDefaultCIDR = "10.244.0.0/16"

// mnSpec is a host-gw description with the bridge CNI of kubewin's own on Linux nodes.
func mnSpec(hostIP string, prefix int, clusterCIDR string) string {
	return fmt.Sprintf(`apiVersion: kubewin.io/v1alpha1
kind: Cluster
metadata:
  name: e2e-multinode
spec:
  kubernetesVersion: v1.37.1
  design: host-gw
  linuxCNI:
    type: bridge
  containerRuntime:
    cgroupDriver: cgroupfs
  networking:
    podCIDRs: [%s]
    serviceCIDR: 10.96.0.0/12
    clusterDNS: 10.96.0.10
    nodeCIDRMaskSize: 24
  nodes:
  - name: cp1
    os: linux
    role: control-plane
    nics:
    - {name: eth0, ip: %s, prefix: %d}
`, clusterCIDR, hostIP, prefix)
}

// newMultiNode builds the segment, the control plane and the nodes (node services running,
// images imported once containerd is up); join them with joinAll.
func newMultiNode(t *testing.T, o multiNodeOptions) *multiNode {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Fatal("the multi-node end-to-end tests need root (network namespaces, kubelets); CI runs as root")
	}
	if o.Nodes <= 0 {
		o.Nodes = 2
	}
	if o.NamePrefix == "" {
		o.NamePrefix = "kw-mn"
	}
	if o.ClusterCIDR == "" {
		o.ClusterCIDR = mnDefaultCIDR
	}
	if o.Spec == nil {
		o.Spec = mnSpec
	}
	m := &multiNode{opts: o, prefix: 24}
	var err error
	if m.assets, err = testenv.Assets(); err != nil {
		t.Fatal(err)
	}
	m.work = t.TempDir()
	// Registered first, so it runs last: nothing a node ran may outlive the test.
	t.Cleanup(func() {
		if left := processesUnder(m.work); len(left) > 0 {
			t.Errorf("processes left running: %s", strings.Join(left, "; "))
		}
	})

	// The segment: 10.252.R.0/24, this host .1, node i .(10+i).
	var r [1]byte
	_, _ = rand.Read(r[:])
	m.subnetBase = fmt.Sprintf("10.252.%d", r[0])
	m.hostIP = m.subnetBase + ".1"
	m.lan = netns.New(t, "lan")
	m.lan.Bridge(t, "br0")
	hostIf := fmt.Sprintf("kwm%d", os.Getpid()%1000000)
	netns.Veth(t, nil, hostIf, m.lan, "host")
	m.lan.Attach(t, "host", "br0")
	link, err := netlink.LinkByName(hostIf)
	if err != nil {
		t.Fatal(err)
	}
	addr, _ := netlink.ParseAddr(fmt.Sprintf("%s/%d", m.hostIP, m.prefix))
	if err := netlink.AddrAdd(link, addr); err != nil {
		t.Fatalf("address %s on %s: %v", m.hostIP, hostIf, err)
	}

	m.cp = testenv.StartControlPlane(t, append([]testenv.Option{testenv.WithNodeAccess(m.hostIP)}, o.ControlPlane...)...)
	m.cp.StartControllerManager(t, o.ClusterCIDR, 24, o.KCMArgs...)
	if o.Scheduler {
		m.cp.StartScheduler(t)
	}
	m.admin = m.cp.Clientset(t)

	t0 := time.Now()
	m.kubewin = buildKubewin(t, m.work)
	t.Logf("multinode: kubewin built in %s", time.Since(t0).Round(time.Millisecond))
	if m.wrapDir, err = nodeimage.BuildRuncWrapper(filepath.Join(m.work, "runcwrap")); err != nil {
		t.Fatal(err)
	}
	t0 = time.Now()
	images := append(buildImages(t, m.work), o.Images...)
	t.Logf("multinode: images built in %s", time.Since(t0).Round(time.Millisecond))

	// Admin side: publish the description, create a token; the printed command is all a node gets.
	specFile := filepath.Join(m.work, "cluster.yaml")
	writeFile(t, specFile, o.Spec(m.hostIP, m.prefix, o.ClusterCIDR))
	run(t, nil, m.kubewin, "publish", "-f", specFile, "--kubeconfig", m.cp.KubeconfigPath)
	m.joinCmd = parseJoinCommand(t, run(t, nil, m.kubewin, "token", "create", "--kubeconfig", m.cp.KubeconfigPath))

	for i := 0; i < o.Nodes; i++ {
		m.nodes = append(m.nodes, m.newNode(t, i, images))
	}
	return m
}

// newNode makes node i: its namespace on the segment, its root, cgroup root and mirror, its node
// service running; the images are imported as soon as its containerd answers.
func (m *multiNode) newNode(t *testing.T, i int, images []string) *mnNode {
	t.Helper()
	n := &mnNode{i: i, name: fmt.Sprintf("%s-%d", m.opts.NamePrefix, i), ip: fmt.Sprintf("%s.%d", m.subnetBase, 10+i)}
	n.work = filepath.Join(m.work, n.name)
	n.root = filepath.Join(n.work, "root")
	n.paths = render.LinuxPathsUnder(n.root)
	n.ns = netns.New(t, fmt.Sprintf("mn%d", i))
	lanIf := fmt.Sprintf("n%d", i)
	netns.Veth(t, m.lan, lanIf, n.ns, "eth0")
	m.lan.Attach(t, lanIf, "br0")
	n.ns.AddAddr(t, "eth0", fmt.Sprintf("%s/%d", n.ip, m.prefix))
	n.ns.AddDefaultRoute(t, m.hostIP)

	if m.opts.Binaries != nil {
		n.binaries = m.opts.Binaries(t, i, filepath.Join(n.work, "binaries"))
	} else {
		n.binaries = stageBinaries(t, m.assets, filepath.Join(n.work, "binaries"))
	}
	installRuncWrapper(t, m.wrapDir, n.paths)
	var r [3]byte
	_, _ = rand.Read(r[:])
	cgroupRoot := fmt.Sprintf("/kubewin-mn-%s-%d-%d", hex.EncodeToString(r[:]), os.Getpid(), i)
	cgroupDirs := makeCgroupRoot(t, cgroupRoot)
	dropIn := filepath.Join(n.work, "this-machine.yaml")
	// The disk is shared with other tests and builds, whose files the test does not control:
	// the kubelet's default hard eviction thresholds (imagefs.available 15 %, nodefs.available
	// 10 %: k8s.io/kubernetes v1.37.1 pkg/kubelet/eviction/defaults_linux.go) would taint the
	// nodes with disk pressure and evict their pods whenever the disk is fuller than that. All five
	// signals are given (mergeDefaultEvictionSettings is false by default: one left out would
	// have no threshold).
	writeFile(t, dropIn, fmt.Sprintf(`# This test machine, not kubewin: cgroups v1, a cgroup root of the test's own, a shared disk.
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
failCgroupV1: false
cgroupRoot: %s
evictionHard:
  memory.available: 100Mi
  nodefs.available: 1%%
  nodefs.inodesFree: 1%%
  imagefs.available: 1%%
  imagefs.inodesFree: 1%%
`, cgroupRoot))

	n.env = append(os.Environ(), "PATH="+m.wrapDir+":"+os.Getenv("PATH"))
	if m.opts.Env != nil {
		n.env = append(n.env, m.opts.Env(i)...)
	}
	n.nodeLog = filepath.Join(n.work, "node-run.log")
	n.startNodeService(t, m.kubewin)
	before := podNetns()
	t.Cleanup(func() { cleanupNode(t, n.nodeRun, n.root, n.paths, cgroupDirs, before) })
	n.imported = make(chan error, 1)
	go func() { n.imported <- importWhenUp(n.paths, m.assets, images) }()

	n.args = append(append([]string(nil), m.joinCmd...), "--binaries", n.binaries, "--root", n.root, "--init", "none",
		"--node-name", n.name, "--kubelet-config-dropin", dropIn, "--timeout", "5m", "-o", "json")
	if m.opts.JoinArgs != nil {
		n.args = append(n.args, m.opts.JoinArgs(i)...)
	}
	return n
}

// startNodeService runs the node service as join's unit would (the harness plays systemd).
func (n *mnNode) startNodeService(t *testing.T, kubewin string, extra ...string) {
	t.Helper()
	n.nodeRun = startInNetns(t, n.ns, n.env, n.nodeLog, kubewin, append([]string{"node", "run", "--root", n.root, "--health-interval", "1s"}, extra...)...)
}

// restartNodeService stops the node service (and with it its services) and starts it again.
func (n *mnNode) restartNodeService(t *testing.T, kubewin string, extra ...string) {
	t.Helper()
	stopNodeService(n.nodeRun)
	n.startNodeService(t, kubewin, extra...)
}

func (n *mnNode) kubeletLog() string { return filepath.Join(n.paths.LogDir, "kubelet.log") }

// joinResult is one node's join.
type joinResult struct {
	out  string
	code int
	took time.Duration
	err  error
}

// joinAll joins every node at once with its join command and fails the test, with the node's
// logs, if one does not finish (or its images could not be imported).
func (m *multiNode) joinAll(t *testing.T) {
	t.Helper()
	res := make([]joinResult, len(m.nodes))
	var wg sync.WaitGroup
	for i, n := range m.nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			began := time.Now()
			res[i].out, res[i].code, res[i].err = execInNetns(n.ns, n.env, m.kubewin, n.args...)
			res[i].took = time.Since(began)
		}()
	}
	wg.Wait()
	for i, n := range m.nodes {
		if err := <-n.imported; err != nil {
			t.Fatalf("%s: import images: %v", n.name, err)
		}
		if res[i].err != nil || res[i].code != 0 {
			t.Fatalf("%s: join exited %d (%v):\n%s\n--- kubelet log tail:\n%s\n--- node service:\n%s", n.name, res[i].code, res[i].err, res[i].out,
				tailFile(n.kubeletLog(), 3000), tailFile(n.nodeLog, 2000))
		}
		t.Logf("multinode: %s joined in %s", n.name, res[i].took.Round(time.Millisecond))
	}
}

// execInNetns is runInNetns for any goroutine: an error instead of t.Fatal.
func execInNetns(ns *netns.NS, env []string, bin string, args ...string) (string, int, error) {
	cmd := exec.Command("nsenter", append([]string{"--net=" + ns.Path(), bin}, args...)...)
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); ok {
		return string(out), ee.ExitCode(), nil
	}
	return string(out), 0, err
}

// startKubeProxy runs kube-proxy (iptables mode) in node i's namespace with the kubelet's
// kubeconfig, as the cluster's kube-proxy DaemonSet would run on a Linux node (kubewin leaves
// kube-proxy to the cluster there). masqueradeAll: traffic to a Service leaves with the node's
// address, so this host (where the API server and clusterServices' DNS answer) replies without
// a route to the pod CIDRs — no route on this host's table. Conntrack limits are global and not
// ours: maxPerCore 0 and zero timeouts leave them as they are. Stopped at cleanup.
func (m *multiNode) startKubeProxy(t *testing.T, n *mnNode) {
	t.Helper()
	conf := filepath.Join(n.work, "kube-proxy.yaml")
	writeFile(t, conf, fmt.Sprintf(`apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection:
  kubeconfig: %s
hostnameOverride: %s
mode: iptables
clusterCIDR: %s
iptables:
  masqueradeAll: true
conntrack:
  maxPerCore: 0
  min: 0
  tcpEstablishedTimeout: 0s
  tcpCloseWaitTimeout: 0s
`, n.paths.KubeletKubeconfig(), n.name, m.opts.ClusterCIDR))
	proxy := startInNetns(t, n.ns, n.env, filepath.Join(n.work, "kube-proxy.log"), filepath.Join(m.assets, "kube-proxy"), "--config", conf)
	t.Cleanup(func() {
		_ = syscall.Kill(-proxy.Process.Pid, syscall.SIGKILL)
		_ = proxy.Wait()
	})
}

// clusterServices gives the cluster what a real one has and this control plane lacks, so that
// kubewin node check's flows can pass from every node: the kubernetes Service's endpoint (the
// API server; this control plane runs no endpoint reconciler) and a cluster DNS — the kube-dns
// Service at the description's clusterDNS with a DNS responder of the test's on this host's
// segment address behind it, answering A queries for kubernetes.default.svc.<domain> with the
// kubernetes Service's ClusterIP (what CoreDNS answers; there is no CoreDNS image here). Both
// go through kube-proxy's rules on the node, which is the path the flow checks test.
func (m *multiNode) clusterServices(t *testing.T, ctx context.Context) {
	t.Helper()
	u, _ := url.Parse(m.cp.Host)
	apiPort, _ := strconv.Atoi(u.Port())
	kube, err := m.admin.CoreV1().Services("default").Get(ctx, "kubernetes", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ready := true
	if _, err := m.admin.DiscoveryV1().EndpointSlices("default").Create(ctx, &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: "kubernetes-e2e", Labels: map[string]string{discoveryv1.LabelServiceName: "kubernetes"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{m.hostIP}, Conditions: discoveryv1.EndpointConditions{Ready: &ready}}},
		Ports:       []discoveryv1.EndpointPort{{Name: ptrTo("https"), Port: ptrTo(int32(apiPort)), Protocol: ptrTo(corev1.ProtocolTCP)}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pc, err := net.ListenPacket("udp4", net.JoinHostPort(m.hostIP, "0"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	answer := net.ParseIP(kube.Spec.ClusterIP).To4()
	go serveDNS(pc, "kubernetes.default.svc.", answer)
	dnsPort := int32(pc.LocalAddr().(*net.UDPAddr).Port)
	if _, err := m.admin.CoreV1().Services("kube-system").Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "kube-dns"},
		Spec: corev1.ServiceSpec{ClusterIP: "10.96.0.10", Ports: []corev1.ServicePort{{Name: "dns", Port: 53, Protocol: corev1.ProtocolUDP,
			TargetPort: intstr.FromInt32(dnsPort)}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := m.admin.DiscoveryV1().EndpointSlices("kube-system").Create(ctx, &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: "kube-dns-e2e", Labels: map[string]string{discoveryv1.LabelServiceName: "kube-dns"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{m.hostIP}, Conditions: discoveryv1.EndpointConditions{Ready: &ready}}},
		Ports:       []discoveryv1.EndpointPort{{Name: ptrTo("dns"), Port: ptrTo(dnsPort), Protocol: ptrTo(corev1.ProtocolUDP)}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// serveDNS answers A queries for names under suffix (any cluster domain) with a, others with
// NXDOMAIN, until pc is closed.
func serveDNS(pc net.PacketConn, suffix string, a net.IP) {
	buf := make([]byte, 1500)
	for {
		n, from, err := pc.ReadFrom(buf)
		if err != nil {
			return
		}
		var q dnsmessage.Message
		if err := q.Unpack(buf[:n]); err != nil || len(q.Questions) != 1 {
			continue
		}
		r := dnsmessage.Message{Header: dnsmessage.Header{ID: q.ID, Response: true, Authoritative: true, RecursionDesired: q.RecursionDesired},
			Questions: q.Questions}
		qq := q.Questions[0]
		if qq.Type == dnsmessage.TypeA && strings.HasPrefix(qq.Name.String(), suffix) {
			var v [4]byte
			copy(v[:], a)
			r.Answers = []dnsmessage.Resource{{Header: dnsmessage.ResourceHeader{Name: qq.Name, Type: dnsmessage.TypeA, Class: dnsmessage.ClassINET, TTL: 5},
				Body: &dnsmessage.AResource{A: v}}}
		} else {
			r.RCode = dnsmessage.RCodeNameError
		}
		if b, err := r.Pack(); err == nil {
			_, _ = pc.WriteTo(b, from)
		}
	}
}
