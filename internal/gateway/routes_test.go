//go:build linux

package gateway_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/vishvananda/netlink"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubewin/kubewin/internal/gateway"
	"github.com/kubewin/kubewin/internal/testenv"
	"github.com/kubewin/kubewin/internal/testenv/netns"
)

// TestRouteKeeperRepairsDrift runs the route keeper in a Linux node's namespace against a real
// API server and breaks its routes in every way it must repair, and in ways it must leave alone.
func TestRouteKeeperRepairsDrift(t *testing.T) {
	cp := testenv.StartControlPlane(t)
	client := cp.Clientset(t)
	ctx := context.Background()
	lin := netns.New(t, "rlin")
	sw := netns.New(t, "rsw")
	netns.Veth(t, lin, "eth0", sw, "p0")
	lin.AddAddr(t, "eth0", linAddr+"/24")
	h := lin.NsHandle()
	reg := prometheus.NewRegistry()
	var logOut io.Writer = t.Output()
	keeper, err := gateway.NewRouteKeeper(gateway.RouteOptions{Config: groupConfig(0.1), NodeName: "lin", Client: client,
		NetNS: &h, Metrics: gateway.NewRouteMetrics(reg, groupName, "lin"), Log: slog.New(slog.NewTextHandler(logOut, nil)), Resync: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	kctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); _ = keeper.Run(kctx) }()
	t.Cleanup(func() { cancel(); <-done })

	routes := func() map[string]netlink.Route {
		rs, err := lin.Handle().RouteList(nil, netlink.FAMILY_V4)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]netlink.Route{}
		for _, r := range rs {
			if r.Dst != nil && r.Protocol == gateway.DefaultRouteProtocol {
				out[r.Dst.String()] = r
			}
		}
		return out
	}
	want := func(what string, expect map[string]string) {
		t.Helper()
		eventually(t, 20*time.Second, what, func() (bool, string) {
			got := map[string]string{}
			for d, r := range routes() {
				got[d] = r.Gw.String()
				if r.Priority != gateway.DefaultRouteMetric {
					return false, fmt.Sprintf("%s has metric %d", d, r.Priority)
				}
			}
			return fmt.Sprint(got) == fmt.Sprint(expect), fmt.Sprint(got)
		})
	}
	a, b := nthCIDR(5), nthCIDR(300) // instances 0 and 1: router VIPs .200 and .201
	for i, c := range []string{a, b} {
		if _, err := client.CoreV1().Nodes().Create(ctx, windowsNode(fmt.Sprintf("w%d", i), c), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	want("routes via the instances' router VIPs", map[string]string{a: "192.168.50.200", b: "192.168.50.201"})

	// A foreign route (another protocol) to an unrelated prefix is never touched.
	foreign := &netlink.Route{Dst: mustNet("10.250.0.0/24"), Gw: net.ParseIP("192.168.50.99"), Protocol: netlink.RouteProtocol(4)}
	if err := lin.Handle().RouteAdd(foreign); err != nil {
		t.Fatal(err)
	}

	// Drift 1: someone deletes our route.
	r := routes()[a]
	if err := lin.Handle().RouteDel(&r); err != nil {
		t.Fatal(err)
	}
	want("deleted route repaired", map[string]string{a: "192.168.50.200", b: "192.168.50.201"})

	// Drift 2: someone points it elsewhere.
	r = routes()[b]
	r.Gw = net.ParseIP("192.168.50.99")
	if err := lin.Handle().RouteReplace(&r); err != nil {
		t.Fatal(err)
	}
	want("changed route repaired", map[string]string{a: "192.168.50.200", b: "192.168.50.201"})

	// This node becomes the holder of router VIP .200: the connected route serves; the kernel
	// refuses a local gateway, and the keeper must not fight it.
	lin.AddAddr(t, "eth0", "192.168.50.200/32")
	eventually(t, 10*time.Second, "local router VIP noticed", func() (bool, string) {
		v := metricValue(t, reg, "kubewin_gateway_routes_local_router_vips")
		return v == 1, fmt.Sprint(v)
	})
	errsBefore := metricValue(t, reg, "kubewin_gateway_routes_errors_total")

	// The Windows node of b goes away: its route is removed, the others stay.
	if err := client.CoreV1().Nodes().Delete(ctx, "w1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	want("route of the deleted node removed", map[string]string{a: "192.168.50.200"})
	if e := metricValue(t, reg, "kubewin_gateway_routes_errors_total"); e != errsBefore {
		t.Errorf("route errors went from %v to %v while holding the router VIP", errsBefore, e)
	}

	// Fail-static: with the API server gone nothing is removed, and drift is still repaired.
	if err := cp.StopAPIServer(); err != nil {
		t.Fatal(err)
	}
	if err := lin.Handle().AddrDel(mustLink(t, lin, "eth0"), mustAddr("192.168.50.200/32")); err != nil {
		t.Fatal(err)
	}
	r = routes()[a]
	if err := lin.Handle().RouteDel(&r); err != nil {
		t.Fatal(err)
	}
	want("repaired while the API server is down", map[string]string{a: "192.168.50.200"})
	if _, err := lin.Handle().RouteGet(net.ParseIP("10.250.0.5")); err != nil {
		t.Errorf("foreign route gone: %v", err)
	}
	rs, _ := lin.Handle().RouteListFiltered(netlink.FAMILY_V4, &netlink.Route{Dst: mustNet("10.250.0.0/24")}, netlink.RT_FILTER_DST)
	if len(rs) != 1 || rs[0].Protocol != 4 {
		t.Errorf("foreign route changed: %+v", rs)
	}
}

func mustNet(s string) *net.IPNet {
	_, n, err := net.ParseCIDR(s)
	if err != nil {
		panic(err)
	}
	return n
}

func mustAddr(s string) *netlink.Addr {
	a, err := netlink.ParseAddr(s)
	if err != nil {
		panic(err)
	}
	return a
}

func mustLink(t *testing.T, ns *netns.NS, name string) netlink.Link {
	l, err := ns.Handle().LinkByName(name)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func metricValue(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name {
			m := mf.GetMetric()[0]
			if m.Gauge != nil {
				return m.GetGauge().GetValue()
			}
			return m.GetCounter().GetValue()
		}
	}
	t.Fatalf("no metric %s", name)
	return 0
}
