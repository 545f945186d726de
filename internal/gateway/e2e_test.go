//go:build linux

package gateway_test

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kubewin/kubewin/internal/gateway"
	"github.com/kubewin/kubewin/internal/plan"
	"github.com/kubewin/kubewin/internal/testenv"
)

// TestGatewayEndToEnd runs three gateway members (keepalived from Debian + the controller, each
// in its own network namespace), a Windows pod address, and a Linux node with the route keeper
// against a real kube-apiserver + etcd, and walks through the scenario in order.
//
// The controllers run in-process (goroutines): each opens its netlink sockets inside its
// member's namespace, so there is no thread-namespace switching to get wrong, and the test can
// read each member's installed layout and metrics directly. The binary's wiring of the same
// Controller is covered by TestGatewayCommand.
func TestGatewayEndToEnd(t *testing.T) {
	cp := testenv.StartControlPlane(t)
	client := cp.Clientset(t)
	createNamespace(t, client, statusNS)
	tp := newTopology(t, groupConfig(0.05), client, t.Output())
	tp.startMembers()
	tp.startRouteKeeper()
	ctx := context.Background()
	nodes := client.CoreV1().Nodes()

	for _, m := range tp.gws {
		if g := m.ctrl.Installed(); g == nil || len(g.Instances) != 0 {
			t.Fatalf("%s: want an installed configuration without instances before any Windows node, got %+v", m.name, g)
		}
	}

	t.Run("windows node with pod CIDR gets a gateway", func(t *testing.T) {
		if _, err := nodes.Create(ctx, windowsNode("win-a", podCIDR), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		eventually(t, 20*time.Second, "exactly one member holds "+podGatewayIP, func() (bool, string) {
			h := tp.holders(podGatewayIP)
			return len(h) == 1, fmt.Sprint(h)
		})
		waitRoute(t, tp, podCIDR, "192.168.50.202")
		waitPing(t, tp, 20*time.Second)
		holder := tp.holders(podGatewayIP)[0]
		waitStatus(t, client, holder, podGatewayIP+"/24", true)
		// Lower-priority members start the new VRRP instance a little later (staggered).
		for _, m := range tp.gws {
			eventually(t, 10*time.Second, m.name+" configured the VIP and reloaded", func() (bool, string) {
				c, r := gauge(t, m, "kubewin_gateway_vips_configured"), gauge(t, m, "kubewin_gateway_reloads_total")
				return c == 1 && r >= 1, fmt.Sprintf("vips_configured=%v reloads_total=%v", c, r)
			})
		}
		if got := gauge(t, tp.member(holder), "kubewin_gateway_vips_held"); got != 1 {
			t.Errorf("holder %s: vips_held = %v, want 1", holder, got)
		}
	})

	t.Run("killed holder fails over", func(t *testing.T) {
		old := tp.holders(podGatewayIP)[0]
		m := tp.member(old)
		// Kill first, then cut the port: keepalived gets no chance to see the link go down
		// and clean up (it would enter FAULT and remove its VIPs), as when a host dies.
		m.k.Kill()
		if err := tp.sw.SetLink("p-"+old, false); err != nil {
			t.Fatal(err)
		}
		tp.stopController(m) // the host is gone, its controller with it
		eventually(t, 10*time.Second, "exactly one live member takes over", func() (bool, string) {
			var live []string
			for _, h := range tp.holders(podGatewayIP) {
				if h != old {
					live = append(live, h)
				}
			}
			return len(live) == 1, fmt.Sprint(tp.holders(podGatewayIP)) // the dead host may keep its stale address
		})
		waitPing(t, tp, 10*time.Second)
		// The host comes back: a reboot clears its addresses, then the DaemonSet starts the
		// controller and keepalived again. nopreempt: the VIP stays where it is.
		flushVIPs(t, m)
		if err := tp.sw.SetLink("p-"+old, true); err != nil {
			t.Fatal(err)
		}
		tp.startController(m)
		tp.startKeepalived(m)
		time.Sleep(time.Second) // > 3 advert intervals: a preempting member would have taken it
		h := tp.holders(podGatewayIP)
		if len(h) != 1 || h[0] == old {
			t.Fatalf("after the old holder returned, holders = %v; want one member other than %s", h, old)
		}
		waitPing(t, tp, 10*time.Second)
	})

	t.Run("reused pod CIDR with a new UID keeps its gateway", func(t *testing.T) {
		stop := sampleHolders(t, tp, podGatewayIP)
		// The replacement is registered before the old object is gone (a node re-imaged under
		// a new name while the old object lingers) ...
		if _, err := nodes.Create(ctx, windowsNode("win-b", podCIDR), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := nodes.Delete(ctx, "win-a", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		eventually(t, 10*time.Second, "gateway attributed to win-b", func() (bool, string) {
			owner := ownerOf(tp, podCIDR)
			return owner == "win-b", owner
		})
		if gaps := stop(); gaps != 0 {
			t.Errorf("VIP %s was not held by exactly one member in %d samples while the CIDR moved to a new node", podGatewayIP, gaps)
		}
		// ... and the same name comes back with a new UID.
		old, err := nodes.Get(ctx, "win-b", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if err := nodes.Delete(ctx, "win-b", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		fresh, err := nodes.Create(ctx, windowsNode("win-b", podCIDR), metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if fresh.UID == old.UID {
			t.Fatal("recreated node kept its UID")
		}
		eventually(t, 20*time.Second, "recreated node served by exactly one member", func() (bool, string) {
			h := tp.holders(podGatewayIP)
			return len(h) == 1 && ownerOf(tp, podCIDR) == "win-b", fmt.Sprint(h)
		})
		waitPing(t, tp, 10*time.Second)
	})

	t.Run("API server down keeps VIPs", func(t *testing.T) {
		before := configs(t, tp)
		holder := tp.holders(podGatewayIP)
		if err := cp.StopAPIServer(); err != nil {
			t.Fatal(err)
		}
		for _, m := range tp.gws {
			eventually(t, 30*time.Second, m.name+" notices the API is gone", func() (bool, string) {
				v := gauge(t, m, "kubewin_gateway_api_reachable")
				return v == 0, fmt.Sprint(v)
			})
		}
		time.Sleep(5 * time.Second) // > 2 resyncs of 2s with the API gone
		if h := tp.holders(podGatewayIP); !reflect.DeepEqual(h, holder) {
			t.Errorf("holders changed while the API was down: %v -> %v", holder, h)
		}
		if after := configs(t, tp); !reflect.DeepEqual(before, after) {
			t.Error("keepalived configuration changed while the API was down")
		}
		waitPing(t, tp, 5*time.Second)
		if err := cp.StartAPIServer(); err != nil {
			t.Fatal(err)
		}
		// The watch resumes: a node created now is served.
		if _, err := nodes.Create(ctx, windowsNode("win-c", nthCIDR(700)), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		eventually(t, 60*time.Second, "node created after the outage is served", func() (bool, string) {
			h := tp.holders(gatewayOf(nthCIDR(700)))
			return len(h) == 1, fmt.Sprint(h)
		})
		for _, m := range tp.gws {
			eventually(t, 30*time.Second, m.name+" reports the API back", func() (bool, string) {
				v := gauge(t, m, "kubewin_gateway_api_reachable")
				return v == 1, fmt.Sprint(v)
			})
		}
	})

	t.Run("deleted node loses its VIP everywhere", func(t *testing.T) {
		for _, n := range []string{"win-b", "win-c"} {
			if err := nodes.Delete(ctx, n, metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		eventually(t, 20*time.Second, "no member holds the deleted nodes' VIPs", func() (bool, string) {
			h := append(tp.holders(podGatewayIP), tp.holders(gatewayOf(nthCIDR(700)))...)
			return len(h) == 0, fmt.Sprint(h)
		})
		eventually(t, 20*time.Second, "route to the deleted pod CIDR removed", func() (bool, string) {
			r := linRoutes(t, tp)
			_, ok := r[podCIDR]
			return !ok, fmt.Sprint(r)
		})
		for _, m := range tp.gws {
			eventually(t, 20*time.Second, m.name+" configures no instance", func() (bool, string) {
				return !strings.Contains(readFile(t, m.conf), "vrrp_instance"), ""
			})
		}
	})

	t.Run("churn of 1000 Windows nodes converges", func(t *testing.T) {
		churn(t, tp, client)
	})
}

// churn creates 1,000 Windows nodes, replaces 250 of them (same CIDRs, new names and UIDs),
// then deletes them all, checking convergence after each phase while a sampler checks that
// no VIP is ever held by two members and each VIP keeps its VRID.
func churn(t *testing.T, tp *topo, client kubernetes.Interface) {
	ctx := context.Background()
	var (
		mu       sync.Mutex
		doubles  []string
		samples  atomic.Int64
		phase    atomic.Value
		stopSamp = make(chan struct{})
		sampDone = make(chan struct{})
	)
	go func() {
		defer close(sampDone)
		for {
			select {
			case <-stopSamp:
				return
			case <-time.After(50 * time.Millisecond):
			}
			seen := map[netip.Addr]string{}
			for name, addrs := range tp.heldBy() {
				for _, a := range addrs {
					if other, dup := seen[a]; dup {
						mu.Lock()
						doubles = append(doubles, fmt.Sprintf("%s on %s and %s during %s at %s", a, other, name, phase.Load(), time.Now().Format("15:04:05.000")))
						mu.Unlock()
					}
					seen[a] = name
				}
			}
			samples.Add(1)
		}
	}()
	vridOf := map[string]int{}
	var vridChanges []string
	checkLayouts := func(phase string, want map[string]string) {
		t.Helper()
		// converged: every member installed exactly the wanted VIPs, each held once.
		eventually(t, 5*time.Minute, phase+": members converge", func() (bool, string) {
			for _, m := range tp.gws {
				g := m.ctrl.Installed()
				if g == nil || len(g.VIPs) != len(want) {
					n := -1
					if g != nil {
						n = len(g.VIPs)
					}
					return false, fmt.Sprintf("%s has %d VIPs installed, want %d", m.name, n, len(want))
				}
			}
			for _, m := range tp.gws {
				for _, in := range m.ctrl.Installed().Instances {
					for _, v := range in.VIPs {
						if want[v.PodCIDR] != v.WindowsNode {
							return false, fmt.Sprintf("%s: %s attributed to %s, want %s", m.name, v.PodCIDR, v.WindowsNode, want[v.PodCIDR])
						}
					}
				}
			}
			held := map[netip.Addr]int{}
			total := 0
			for _, addrs := range tp.heldBy() {
				for _, a := range addrs {
					held[a]++
					total++
				}
			}
			if total != len(want) {
				return false, fmt.Sprintf("%d VIPs held in all, want %d", total, len(want))
			}
			for cidr := range want {
				if held[netip.MustParseAddr(gatewayOf(cidr))] != 1 {
					return false, fmt.Sprintf("%s held %d times", gatewayOf(cidr), held[netip.MustParseAddr(gatewayOf(cidr))])
				}
			}
			return true, ""
		})
		var ref *plan.GatewayGroupPlan
		for _, m := range tp.gws {
			g := m.ctrl.Installed()
			vrids := map[int]string{}
			for _, in := range g.Instances {
				if prev, dup := vrids[in.VRID]; dup {
					t.Errorf("%s: VRID %d used by %s and %s", m.name, in.VRID, prev, in.Name)
				}
				vrids[in.VRID] = in.Name
				if in.VRID < tp.cfg.VRIDRange[0] || in.VRID > tp.cfg.VRIDRange[1] {
					t.Errorf("%s: VRID %d outside %v", m.name, in.VRID, tp.cfg.VRIDRange)
				}
				if len(in.VIPs)+1 > 255 {
					t.Errorf("%s: instance %s carries %d addresses", m.name, in.Name, len(in.VIPs)+1)
				}
				for _, v := range in.VIPs {
					if want[v.PodCIDR] != v.WindowsNode {
						t.Errorf("%s: %s attributed to %s, want %s", m.name, v.PodCIDR, v.WindowsNode, want[v.PodCIDR])
					}
					if prev, ok := vridOf[v.Address]; ok && prev != in.VRID {
						vridChanges = append(vridChanges, fmt.Sprintf("%s: %d -> %d", v.Address, prev, in.VRID))
					}
					vridOf[v.Address] = in.VRID
				}
			}
			if ref == nil {
				ref = g
			} else if !reflect.DeepEqual(ref.Instances, g.Instances) {
				t.Errorf("%s installed a different layout than %s", m.name, tp.gws[0].name)
			}
		}
	}

	want := map[string]string{}
	var names []string
	for i := 0; len(names) < 1000; i++ {
		if nthCIDR(i) == podCIDR {
			continue
		}
		names = append(names, fmt.Sprintf("win%04d", i))
		want[nthCIDR(i)] = fmt.Sprintf("win%04d", i)
	}
	cidrOf := func(name string) string {
		var i int
		fmt.Sscanf(strings.TrimPrefix(name, "win"), "%d", &i)
		return nthCIDR(i)
	}
	phase.Store("create 1000")
	began := time.Now()
	parallel(t, names, func(n string) error {
		_, err := client.CoreV1().Nodes().Create(ctx, windowsNode(n, cidrOf(n)), metav1.CreateOptions{})
		return err
	})
	checkLayouts("create 1000", want)
	t.Logf("1000 Windows nodes created and served in %s", time.Since(began).Round(time.Millisecond))

	// Replace 250 nodes: new names and UIDs on the same CIDRs, deletions and creations mixed.
	var replace []string
	for i := 0; i < len(names); i += 4 {
		replace = append(replace, names[i])
	}
	phase.Store("replace 250")
	var ops []string
	for _, n := range replace {
		ops = append(ops, "del:"+n, "add:"+n+"-r")
		want[cidrOf(n)] = n + "-r"
	}
	parallel(t, ops, func(op string) error {
		kind, n, _ := strings.Cut(op, ":")
		if kind == "del" {
			return client.CoreV1().Nodes().Delete(ctx, n, metav1.DeleteOptions{})
		}
		_, err := client.CoreV1().Nodes().Create(ctx, windowsNode(n, cidrOf(strings.TrimSuffix(n, "-r"))), metav1.CreateOptions{})
		return err
	})
	checkLayouts("replace 250", want)

	phase.Store("delete all")
	list, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: "kubernetes.io/os=windows"})
	if err != nil {
		t.Fatal(err)
	}
	var all []string
	for _, n := range list.Items {
		all = append(all, n.Name)
	}
	parallel(t, all, func(n string) error { return client.CoreV1().Nodes().Delete(ctx, n, metav1.DeleteOptions{}) })
	checkLayouts("delete all", map[string]string{})

	close(stopSamp)
	<-sampDone
	mu.Lock()
	defer mu.Unlock()
	t.Logf("%d address samples of all members during the churn", samples.Load())
	if len(doubles) > 0 {
		t.Errorf("a VIP was held by two members at %d samples, e.g. %v", len(doubles), doubles[:min(5, len(doubles))])
	}
	if len(vridChanges) > 0 {
		t.Errorf("VIPs changed VRID during the churn: %v", vridChanges[:min(5, len(vridChanges))])
	}
}

// parallel runs f over items with 16 workers (the API server, not the test, is the limit).
func parallel(t *testing.T, items []string, f func(string) error) {
	t.Helper()
	ch := make(chan string)
	var wg sync.WaitGroup
	var errMu sync.Mutex
	var firstErr error
	for w := 0; w < 16; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for it := range ch {
				if err := f(it); err != nil {
					errMu.Lock()
					if firstErr == nil {
						firstErr = fmt.Errorf("%s: %w", it, err)
					}
					errMu.Unlock()
				}
			}
		}()
	}
	for _, it := range items {
		ch <- it
	}
	close(ch)
	wg.Wait()
	if firstErr != nil {
		t.Fatal(firstErr)
	}
}

func gatewayOf(cidr string) string {
	p := netip.MustParsePrefix(cidr)
	return p.Addr().Next().String()
}

func ownerOf(tp *topo, cidr string) string {
	owner := ""
	for _, m := range tp.gws {
		g := m.ctrl.Installed()
		if g == nil {
			return ""
		}
		found := ""
		for _, in := range g.Instances {
			for _, v := range in.VIPs {
				if v.PodCIDR == cidr {
					found = v.WindowsNode
				}
			}
		}
		if owner != "" && found != owner {
			return "members disagree"
		}
		owner = found
	}
	return owner
}

func waitPing(t *testing.T, tp *topo, timeout time.Duration) {
	t.Helper()
	eventually(t, timeout, "ping from the Windows pod address to the Linux node", func() (bool, string) {
		out, err := tp.win.Run(context.Background(), "ping", "-c1", "-W1", linAddr)
		return err == nil, string(out)
	})
}

func waitRoute(t *testing.T, tp *topo, dst, via string) {
	t.Helper()
	eventually(t, 20*time.Second, "route "+dst+" via "+via+" on the Linux node", func() (bool, string) {
		r := linRoutes(t, tp)
		return r[dst] == via, fmt.Sprint(r)
	})
}

func linRoutes(t *testing.T, tp *topo) map[string]string {
	routes, err := tp.lin.Handle().RouteListFiltered(netlink.FAMILY_V4, &netlink.Route{Protocol: gateway.DefaultRouteProtocol}, netlink.RT_FILTER_PROTOCOL)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, r := range routes {
		if r.Dst != nil {
			out[r.Dst.String()] = r.Gw.String()
		}
	}
	return out
}

func waitStatus(t *testing.T, client kubernetes.Interface, member, vip string, held bool) {
	t.Helper()
	eventually(t, 20*time.Second, fmt.Sprintf("status of %s says held(%s)=%v", member, vip, held), func() (bool, string) {
		cm, err := client.CoreV1().ConfigMaps(statusNS).Get(context.Background(), gateway.StatusName(groupName, member), metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return slices.Contains(gateway.ParseHeld(cm), vip) == held, fmt.Sprint(cm.Data)
	})
}

// sampleHolders samples the holders of ip every 10ms until the returned stop is called, which
// returns the number of samples where not exactly one member held it.
func sampleHolders(t *testing.T, tp *topo, ip string) func() int {
	var bad atomic.Int64
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			case <-time.After(10 * time.Millisecond):
			}
			if n := len(tp.holders(ip)); n != 1 {
				bad.Add(1)
			}
		}
	}()
	return func() int { close(stop); <-done; return int(bad.Load()) }
}

// flushVIPs removes every address but the member's own from its gateway interface, as a
// reboot would.
func flushVIPs(t testing.TB, m *member) {
	t.Helper()
	h := m.ns.Handle()
	link, err := h.LinkByName(gwInterface)
	if err != nil {
		t.Fatal(err)
	}
	addrs, err := h.AddrList(link, netlink.FAMILY_V4)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range addrs {
		ones, _ := a.Mask.Size()
		if ones == 24 && strings.HasPrefix(a.IP.String(), "192.168.50.1") {
			continue // the node's own address
		}
		if err := h.AddrDel(link, &a); err != nil {
			t.Fatal(err)
		}
	}
}

func configs(t *testing.T, tp *topo) map[string]string {
	out := map[string]string{}
	for _, m := range tp.gws {
		out[m.name] = readFile(t, m.conf)
	}
	return out
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// gauge reads a metric value (gauge or counter) from a member's registry.
func gauge(t *testing.T, m *member, name string) float64 {
	t.Helper()
	m.mu.Lock()
	reg := m.reg
	m.mu.Unlock()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, mt := range mf.GetMetric() {
			if mt.Gauge != nil {
				return mt.GetGauge().GetValue()
			}
			if mt.Counter != nil {
				return mt.GetCounter().GetValue()
			}
		}
	}
	t.Fatalf("%s: no metric %s", m.name, name)
	return 0
}
