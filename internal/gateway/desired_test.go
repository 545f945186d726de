//go:build linux

package gateway

import (
	"fmt"
	"net/netip"
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubewin/kubewin/internal/plan"
)

func testConfig() GroupConfig {
	return GroupConfig{
		APIVersion: ConfigAPIVersion, Kind: ConfigKind, Name: "wingw", Interface: "eth1",
		Members: []plan.GatewayMemberPlan{
			{Node: "gw1", IP: "192.168.50.11", Priority: 150, RouterID: "kubewin_wingw_gw1"},
			{Node: "gw2", IP: "192.168.50.12", Priority: 140, RouterID: "kubewin_wingw_gw2"},
		},
		VRRPVersion: 3, AdvertIntervalSeconds: 0.1, VRIDRange: [2]int{100, 101}, VIPsPerInstance: 4,
		ClusterCIDRs: []string{"10.128.0.0/16"}, NodeCIDRMaskSize: 24,
		RouterVIPs: []string{"192.168.50.200", "192.168.50.201"}, WindowsNodeSelector: DefaultWindowsNodeSelector,
	}
}

type nodeOpt func(*corev1.Node)

func node(name, uid string, created int, cidrs []string, opts ...nodeOpt) *corev1.Node {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID(uid),
		CreationTimestamp: metav1.NewTime(time.Unix(int64(created), 0))}}
	n.Spec.PodCIDRs = cidrs
	for _, o := range opts {
		o(n)
	}
	return n
}

func deleting(n *corev1.Node) {
	t := metav1.NewTime(time.Unix(9999, 0))
	n.DeletionTimestamp = &t
}

func TestPodCIDROwners(t *testing.T) {
	tests := []struct {
		name        string
		nodes       []*corev1.Node
		want        []plan.WindowsPodCIDR
		wantSkipped []string // node/uid of skipped nodes
	}{
		{"one node", []*corev1.Node{node("a", "1", 1, []string{"10.128.1.0/24"})},
			[]plan.WindowsPodCIDR{{Name: "a", PodCIDR: "10.128.1.0/24"}}, nil},
		{"no pod CIDR yet is not an error", []*corev1.Node{node("a", "1", 1, nil)}, []plan.WindowsPodCIDR{}, nil},
		{"legacy spec.podCIDR", []*corev1.Node{node("a", "1", 1, nil, func(n *corev1.Node) { n.Spec.PodCIDR = "10.128.2.0/24" })},
			[]plan.WindowsPodCIDR{{Name: "a", PodCIDR: "10.128.2.0/24"}}, nil},
		{"dual stack takes the IPv4 CIDR", []*corev1.Node{node("a", "1", 1, []string{"fd00::/64", "10.128.3.0/24"})},
			[]plan.WindowsPodCIDR{{Name: "a", PodCIDR: "10.128.3.0/24"}}, nil},
		{"IPv6 only is skipped", []*corev1.Node{node("a", "1", 1, []string{"fd00::/64"})}, []plan.WindowsPodCIDR{}, []string{"a/1"}},
		{"garbage is skipped", []*corev1.Node{node("a", "1", 1, []string{"ten"})}, []plan.WindowsPodCIDR{}, []string{"a/1"}},
		{"host bits are skipped", []*corev1.Node{node("a", "1", 1, []string{"10.128.1.5/24"})}, []plan.WindowsPodCIDR{}, []string{"a/1"}},
		{"reused CIDR: the newer node owns it", []*corev1.Node{
			node("old", "1", 1, []string{"10.128.1.0/24"}), node("new", "2", 2, []string{"10.128.1.0/24"})},
			[]plan.WindowsPodCIDR{{Name: "new", PodCIDR: "10.128.1.0/24"}}, []string{"old/1"}},
		{"reused CIDR: order of the list does not matter", []*corev1.Node{
			node("new", "2", 2, []string{"10.128.1.0/24"}), node("old", "1", 1, []string{"10.128.1.0/24"})},
			[]plan.WindowsPodCIDR{{Name: "new", PodCIDR: "10.128.1.0/24"}}, []string{"old/1"}},
		{"a terminating node loses to a live one even if newer", []*corev1.Node{
			node("old", "1", 1, []string{"10.128.1.0/24"}), node("new", "2", 2, []string{"10.128.1.0/24"}, deleting)},
			[]plan.WindowsPodCIDR{{Name: "old", PodCIDR: "10.128.1.0/24"}}, []string{"new/2"}},
		{"same creation time: larger UID wins, deterministically", []*corev1.Node{
			node("x", "b", 1, []string{"10.128.1.0/24"}), node("y", "a", 1, []string{"10.128.1.0/24"})},
			[]plan.WindowsPodCIDR{{Name: "x", PodCIDR: "10.128.1.0/24"}}, []string{"y/a"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, skipped := podCIDROwners(tt.nodes)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("owners %+v, want %+v", got, tt.want)
			}
			var s []string
			for _, k := range skipped {
				s = append(s, k.Node+"/"+k.UID)
			}
			if !reflect.DeepEqual(s, tt.wantSkipped) {
				t.Errorf("skipped %v, want %v", s, tt.wantSkipped)
			}
		})
	}
}

// TestLayoutSkipsBadNodes: one node the planner rejects must not stop the others.
func TestLayoutSkipsBadNodes(t *testing.T) {
	cfg := testConfig()
	nodes := []*corev1.Node{
		node("ok", "1", 1, []string{"10.128.1.0/24"}),
		node("outside", "2", 1, []string{"10.200.1.0/24"}),      // outside the cluster CIDR
		node("beyond-range", "3", 1, []string{"10.128.9.0/24"}), // slot 9 / 4 = instance 2, range has 2
		node("wrong-mask", "4", 1, []string{"10.128.16.0/23"}),  // not a /24 node CIDR
		node("ok2", "5", 1, []string{"10.128.5.0/24"}),
	}
	g, skipped, err := Layout(cfg, nodes)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"10.128.1.1/24", "10.128.5.1/24"}; !reflect.DeepEqual(g.VIPs, want) {
		t.Errorf("VIPs %v, want %v", g.VIPs, want)
	}
	reasons := map[string]string{}
	for _, s := range skipped {
		reasons[s.Node] = s.Reason
	}
	for n, want := range map[string]string{"outside": "outside the cluster CIDRs", "beyond-range": "VRID", "wrong-mask": "not a /24"} {
		if !strings.Contains(reasons[n], want) {
			t.Errorf("%s skipped with %q, want a reason containing %q", n, reasons[n], want)
		}
	}
	if len(g.Instances) != 2 || g.Instances[0].VRID != 100 || g.Instances[1].VRID != 101 ||
		g.Instances[0].RouterVIP != "192.168.50.200" || g.Instances[1].RouterVIP != "192.168.50.201" {
		t.Errorf("instances %+v: want VRID 100 (slot 1) and 101 (slot 5) with their router VIPs", g.Instances)
	}
}

// TestLayoutStableUnderChurn: a VIP's VRID depends only on its own pod CIDR.
func TestLayoutStableUnderChurn(t *testing.T) {
	cfg := testConfig()
	cfg.VRIDRange = [2]int{1, 255}
	var all []*corev1.Node
	for i := 0; i < 200; i++ {
		all = append(all, node(fmt.Sprintf("w%d", i), fmt.Sprint(i), 1, []string{fmt.Sprintf("10.128.%d.0/24", i)}))
	}
	vrid := func(g plan.GatewayGroupPlan) map[string]int {
		m := map[string]int{}
		for _, in := range g.Instances {
			for _, v := range in.VIPs {
				m[v.Address] = in.VRID
			}
		}
		return m
	}
	full, _, err := Layout(cfg, all)
	if err != nil {
		t.Fatal(err)
	}
	ref := vrid(full)
	for _, keep := range []int{2, 3, 7} {
		var sub []*corev1.Node
		for i, n := range all {
			if i%keep == 0 {
				sub = append(sub, n)
			}
		}
		g, _, err := Layout(cfg, sub)
		if err != nil {
			t.Fatal(err)
		}
		for addr, v := range vrid(g) {
			if ref[addr] != v {
				t.Errorf("every %d: %s moved from VRID %d to %d", keep, addr, ref[addr], v)
			}
		}
	}
}

func TestHolding(t *testing.T) {
	g := plan.GatewayGroupPlan{Instances: []plan.VRRPInstancePlan{
		{Name: "A", VRID: 1, RouterVIP: "192.168.50.200", VIPs: []plan.VIPPlan{{Address: "10.128.1.1/24"}, {Address: "10.128.2.1/24"}}},
		{Name: "B", VRID: 2, VIPs: []plan.VIPPlan{{Address: "10.128.9.1/24"}}},
	}}
	addrs := map[netip.Addr]bool{
		netip.MustParseAddr("10.128.2.1"): true, netip.MustParseAddr("192.168.50.200"): true,
		netip.MustParseAddr("10.128.9.1"): true, netip.MustParseAddr("192.168.50.11"): true,
	}
	h := holding(g, addrs)
	want := Holding{VIPs: []string{"10.128.2.1/24", "10.128.9.1/24"}, Instances: []string{"A", "B"}, Partial: []string{"A"}}
	if !reflect.DeepEqual(h, want) {
		t.Errorf("holding %+v, want %+v", h, want)
	}
}

func TestDesiredRoutes(t *testing.T) {
	g := plan.GatewayGroupPlan{Instances: []plan.VRRPInstancePlan{
		{Name: "A", VRID: 1, RouterVIP: "192.168.50.200", VIPs: []plan.VIPPlan{{Address: "10.128.2.1/24", PodCIDR: "10.128.2.0/24"}, {Address: "10.128.1.1/24", PodCIDR: "10.128.1.0/24"}}},
		{Name: "B", VRID: 2, VIPs: []plan.VIPPlan{{Address: "10.128.9.1/24", PodCIDR: "10.128.9.0/24"}}},
	}}
	routes, without := DesiredRoutes(g)
	via := netip.MustParseAddr("192.168.50.200")
	want := []DesiredRoute{{Dst: netip.MustParsePrefix("10.128.1.0/24"), Via: via}, {Dst: netip.MustParsePrefix("10.128.2.0/24"), Via: via}}
	if !reflect.DeepEqual(routes, want) || without != 1 {
		t.Errorf("routes %v (%d without router VIP), want %v (1)", routes, without, want)
	}
}

func TestDiffStrings(t *testing.T) {
	a, b := diffStrings([]string{"a", "b", "d"}, []string{"b", "c", "d", "e"})
	if !reflect.DeepEqual(a, []string{"a"}) || !reflect.DeepEqual(b, []string{"c", "e"}) {
		t.Errorf("diff = %v, %v", a, b)
	}
}
