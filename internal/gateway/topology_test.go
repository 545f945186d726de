//go:build linux

package gateway_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kubewin/kubewin/internal/gateway"
	"github.com/kubewin/kubewin/internal/plan"
	"github.com/kubewin/kubewin/internal/render"
	"github.com/kubewin/kubewin/internal/testenv/netns"
)

// The test network, all inside namespaces the test creates:
//
//	sw:   bridge br0 — the cluster L2 segment (the Windows nodes' NIC segment of seed 000)
//	gw1-3: eth1 192.168.50.11-13/24, keepalived + gateway controller, ip_forward on
//	win:  a pod address 10.130.5.10/24 in Windows node pod CIDR 10.130.5.0/24, default via .1
//	      (in L2Bridge mode the pod sits on the cluster segment, as seed 000 describes)
//	lin:  another Linux node 192.168.50.21/24 with the route keeper; it reaches the pod CIDR
//	      only through the router VIP its route keeper installs.
const (
	clusterCIDR  = "10.128.0.0/14" // 1,024 /24 node CIDRs: enough slots for the 1,000-node churn
	statusNS     = "kubewin-system"
	linAddr      = "192.168.50.21"
	groupName    = "wingw"
	gwInterface  = "eth1"
	podCIDR      = "10.130.5.0/24"
	podAddr      = "10.130.5.10"
	podGatewayIP = "10.130.5.1"
)

func members() []plan.GatewayMemberPlan {
	var out []plan.GatewayMemberPlan
	for i := 1; i <= 3; i++ {
		node := fmt.Sprintf("gw%d", i)
		out = append(out, plan.GatewayMemberPlan{Node: node, IP: fmt.Sprintf("192.168.50.1%d", i),
			Priority: 160 - 10*i, RouterID: plan.RouterID(groupName, node)})
	}
	return out
}

// groupConfig is the group as `kubewin plan` would hand it over: VRRPv3, advert per argument.
func groupConfig(advert float64) gateway.GroupConfig {
	return gateway.GroupConfig{
		APIVersion: gateway.ConfigAPIVersion, Kind: gateway.ConfigKind,
		Name: groupName, Interface: gwInterface, Members: members(),
		VRRPVersion: 3, AdvertIntervalSeconds: advert, VRIDRange: [2]int{100, 120}, VIPsPerInstance: 254,
		ClusterCIDRs: []string{clusterCIDR}, NodeCIDRMaskSize: 24,
		RouterVIPs:          []string{"192.168.50.200", "192.168.50.201", "192.168.50.202", "192.168.50.203", "192.168.50.204"},
		RouterVIPsRequired:  true,
		WindowsNodeSelector: gateway.DefaultWindowsNodeSelector,
	}
}

type member struct {
	name string
	ns   *netns.NS
	dir  string
	conf string
	k    *netns.Keepalived

	mu     sync.Mutex
	cancel context.CancelFunc
	done   chan struct{}
	ctrl   *gateway.Controller
	reg    *prometheus.Registry
}

type topo struct {
	t       testing.TB
	sw      *netns.NS
	gws     []*member
	win     *netns.NS
	lin     *netns.NS
	cfg     gateway.GroupConfig
	client  kubernetes.Interface
	log     *slog.Logger
	keeper  *gateway.RouteKeeper
	kcancel context.CancelFunc
}

// newTopology builds the namespaces; nothing runs yet.
func newTopology(t testing.TB, cfg gateway.GroupConfig, client kubernetes.Interface, logTo io.Writer) *topo {
	tp := &topo{t: t, cfg: cfg, client: client, log: slog.New(slog.NewTextHandler(logTo, nil))}
	tp.sw = netns.New(t, "sw")
	tp.sw.Bridge(t, "br0")
	for i, m := range cfg.Members {
		ns := netns.New(t, m.Node)
		port := fmt.Sprintf("p-%s", m.Node)
		netns.Veth(t, ns, gwInterface, tp.sw, port)
		tp.sw.Attach(t, port, "br0")
		ns.AddAddr(t, gwInterface, m.IP+"/24")
		ns.Sysctl(t, "net.ipv4.ip_forward", "1")
		// A holder forwards pod traffic back out of the interface it came in on; redirects
		// would only teach the Linux node a shortcut that does not exist in L2Bridge mode.
		ns.Sysctl(t, "net.ipv4.conf.all.send_redirects", "0")
		ns.Sysctl(t, "net.ipv4.conf."+gwInterface+".send_redirects", "0")
		dir := filepath.Join(t.TempDir(), m.Node)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		tp.gws = append(tp.gws, &member{name: m.Node, ns: ns, dir: dir, conf: filepath.Join(dir, "keepalived.conf")})
		_ = i
	}
	tp.win = netns.New(t, "win")
	netns.Veth(t, tp.win, "eth0", tp.sw, "p-win")
	tp.sw.Attach(t, "p-win", "br0")
	tp.win.AddAddr(t, "eth0", podAddr+"/24")
	tp.win.AddDefaultRoute(t, podGatewayIP)

	tp.lin = netns.New(t, "lin")
	netns.Veth(t, tp.lin, "eth0", tp.sw, "p-lin")
	tp.sw.Attach(t, "p-lin", "br0")
	tp.lin.AddAddr(t, "eth0", linAddr+"/24")
	return tp
}

// startController runs member m's controller in-process and waits for its first sync.
func (tp *topo) startController(m *member) {
	tp.t.Helper()
	ctrl := tp.runController(m, 5*time.Second)
	select {
	case <-ctrl.Synced():
	case <-time.After(60 * time.Second):
		tp.t.Fatalf("controller %s did not sync within 60s", m.name)
	}
}

// runController starts member m's controller in-process against tp.client and returns it
// without waiting for a sync (heartbeat 0: the controller's default). Its netlink sockets are
// opened inside m's namespace (netlink.NewHandleAt / subscriptions with a namespace), so no
// goroutine ever changes its thread's namespace; keepalived -t runs through `ip netns exec`.
func (tp *topo) runController(m *member, heartbeat time.Duration) *gateway.Controller {
	tp.t.Helper()
	h := m.ns.NsHandle()
	reg := prometheus.NewRegistry()
	ctrl, err := gateway.NewController(gateway.Options{
		Config: tp.cfg, NodeName: m.name, Client: tp.client, ConfigPath: m.conf,
		Validate: func(ctx context.Context, path string) error {
			return render.ValidateKeepalivedInNetns(ctx, m.ns.Name, path)
		},
		Reloader:        gateway.PIDFileReloader{PIDFile: filepath.Join(m.dir, "keepalived.pid"), ConfigPath: m.conf},
		NetNS:           &h,
		StatusNamespace: statusNS,
		Metrics:         gateway.NewMetrics(reg, tp.cfg.Name, m.name),
		Log:             tp.log.With("test-member", m.name),
		Resync:          2 * time.Second,
		Heartbeat:       heartbeat,
	})
	if err != nil {
		tp.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := ctrl.Run(ctx); err != nil {
			tp.t.Errorf("controller %s: %v", m.name, err)
		}
	}()
	m.mu.Lock()
	m.ctrl, m.cancel, m.done, m.reg = ctrl, cancel, done, reg
	m.mu.Unlock()
	tp.t.Cleanup(func() { cancel(); <-done })
	return ctrl
}

func (tp *topo) stopController(m *member) {
	m.mu.Lock()
	cancel, done := m.cancel, m.done
	m.mu.Unlock()
	cancel()
	<-done
}

// startKeepalived starts m's keepalived on the configuration its controller installed.
func (tp *topo) startKeepalived(m *member) {
	k := netns.StartKeepalived(tp.t, m.ns, m.conf, m.dir)
	m.k = k
	tp.t.Cleanup(func() {
		if tp.t.Failed() {
			b, _ := os.ReadFile(k.LogPath)
			if dir := os.Getenv("KUBEWIN_TEST_ARTIFACTS"); dir != "" {
				// Full logs for a failed run, where the caller asked for them.
				_ = os.MkdirAll(dir, 0o755)
				_ = os.WriteFile(filepath.Join(dir, fmt.Sprintf("keepalived-%s-%d.log", m.name, k.Proc.Pid())), b, 0o644)
			}
			var keep []string
			for _, l := range strings.Split(string(b), "\n") {
				if !strings.Contains(l, "gratuitous ARP") {
					keep = append(keep, l)
				}
			}
			if len(keep) > 200 {
				keep = keep[len(keep)-200:]
			}
			tp.t.Logf("keepalived log of %s (pid %d), without GARP lines:\n%s", m.name, k.Proc.Pid(), strings.Join(keep, "\n"))
		}
	})
}

// startMembers starts every member the way the DaemonSet does: controller first (the
// configuration exists before keepalived reads it), then keepalived.
func (tp *topo) startMembers() {
	for _, m := range tp.gws {
		tp.startController(m)
	}
	for _, m := range tp.gws {
		tp.startKeepalived(m)
	}
}

func (tp *topo) startRouteKeeper() {
	tp.t.Helper()
	h := tp.lin.NsHandle()
	k, err := gateway.NewRouteKeeper(gateway.RouteOptions{Config: tp.cfg, NodeName: "lin", Client: tp.client,
		NetNS: &h, Log: tp.log.With("test-member", "routes-lin"), Resync: 2 * time.Second})
	if err != nil {
		tp.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := k.Run(ctx); err != nil {
			tp.t.Errorf("route keeper: %v", err)
		}
	}()
	tp.keeper, tp.kcancel = k, cancel
	tp.t.Cleanup(func() { cancel(); <-done })
	select {
	case <-k.Synced():
	case <-time.After(60 * time.Second):
		tp.t.Fatal("route keeper did not sync within 60s")
	}
}

// holders returns the members holding ip right now.
func (tp *topo) holders(ip string) []string {
	var out []string
	for _, m := range tp.gws {
		ok, err := m.ns.HasAddr(ip)
		if err != nil {
			tp.t.Error(err)
		}
		if ok {
			out = append(out, m.name)
		}
	}
	return out
}

// heldBy lists, per member, the addresses on its gateway interface inside the cluster CIDR.
func (tp *topo) heldBy() map[string][]netip.Addr {
	cluster := netip.MustParsePrefix(clusterCIDR)
	out := map[string][]netip.Addr{}
	for _, m := range tp.gws {
		addrs, err := m.ns.Addrs()
		if err != nil {
			tp.t.Error(err)
			return nil
		}
		for _, a := range addrs {
			ip, ok := netip.AddrFromSlice(a.IP.To4())
			if ok && cluster.Contains(ip) {
				out[m.name] = append(out[m.name], ip)
			}
		}
	}
	return out
}

func (tp *topo) member(name string) *member {
	for _, m := range tp.gws {
		if m.name == name {
			return m
		}
	}
	tp.t.Fatalf("no member %s", name)
	return nil
}

// eventually polls cond every 20ms until it holds or timeout passes.
func eventually(t testing.TB, timeout time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var last string
	for {
		ok, detail := cond()
		if ok {
			return
		}
		last = detail
		if time.Now().After(deadline) {
			t.Fatalf("%s: not reached within %s (last: %s)", what, timeout, last)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func windowsNode(name, cidr string) *corev1.Node {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"kubernetes.io/os": "windows"}}}
	if cidr != "" {
		n.Spec.PodCIDR = cidr
		n.Spec.PodCIDRs = []string{cidr}
	}
	return n
}

func createNamespace(t testing.TB, c kubernetes.Interface, name string) {
	t.Helper()
	_, err := c.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
}

// nthCIDR returns the i-th /24 of the cluster CIDR.
func nthCIDR(i int) string {
	base := netip.MustParsePrefix(clusterCIDR).Addr().As4()
	v := uint32(base[0])<<24 | uint32(base[1])<<16 | uint32(base[2])<<8 + uint32(i)<<8
	return netip.PrefixFrom(netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), 0}), 24).String()
}
