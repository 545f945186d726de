package plan

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
)

func layoutInput(vpi int, first, last int, nodes []WindowsPodCIDR) GatewayLayoutInput {
	return GatewayLayoutInput{
		Name:      "win-gw",
		Interface: "eth1",
		Members: []GatewayMemberPlan{
			{Node: "m2", IP: "192.168.0.12", Priority: 140},
			{Node: "m1", IP: "192.168.0.11", Priority: 150},
			{Node: "m3", IP: "192.168.0.13", Priority: 130},
		},
		VRRPVersion:           3,
		AdvertIntervalSeconds: 0.1,
		VRIDRange:             [2]int{first, last},
		VIPsPerInstance:       vpi,
		ClusterCIDRs:          []string{"10.0.0.0/16", "10.200.0.0/20"},
		NodeCIDRMaskSize:      24,
		WindowsNodes:          nodes,
	}
}

// randomNodes picks n distinct /24 slots of the two cluster CIDRs (256 + 16 slots).
func randomNodes(r *rand.Rand, n int, prefix string) []WindowsPodCIDR {
	slots := r.Perm(272)[:n]
	out := make([]WindowsPodCIDR, n)
	for i, s := range slots {
		cidr := fmt.Sprintf("10.0.%d.0/24", s)
		if s >= 256 {
			cidr = fmt.Sprintf("10.200.%d.0/24", s-256)
		}
		out[i] = WindowsPodCIDR{Name: fmt.Sprintf("%s%03d", prefix, i), PodCIDR: cidr}
	}
	return out
}

func mustLayout(t *testing.T, in GatewayLayoutInput) GatewayGroupPlan {
	t.Helper()
	g, err := LayoutGatewayGroup(in)
	if err != nil {
		t.Fatalf("layout: %v", err)
	}
	checkLayoutInvariants(t, in, g)
	return g
}

// checkLayoutInvariants: distinct VRIDs inside the range, at most VIPsPerInstance (<= 255)
// VIPs per instance, every node exactly once, VIP = .1 of its pod CIDR, sorted output.
func checkLayoutInvariants(t *testing.T, in GatewayLayoutInput, g GatewayGroupPlan) {
	t.Helper()
	seenVRID := map[int]bool{}
	seenNode := map[string]bool{}
	for _, inst := range g.Instances {
		if seenVRID[inst.VRID] {
			t.Errorf("VRID %d used by two instances", inst.VRID)
		}
		seenVRID[inst.VRID] = true
		if inst.VRID < in.VRIDRange[0] || inst.VRID > in.VRIDRange[1] {
			t.Errorf("VRID %d outside %v", inst.VRID, in.VRIDRange)
		}
		if len(inst.VIPs) == 0 || len(inst.VIPs) > in.VIPsPerInstance || len(inst.VIPs) > 255 {
			t.Errorf("instance %s has %d VIPs", inst.Name, len(inst.VIPs))
		}
		if !slices.IsSortedFunc(inst.VIPs, func(a, b VIPPlan) int { return compareAddrString(a.Address, b.Address) }) {
			t.Errorf("instance %s VIPs not sorted", inst.Name)
		}
		for _, v := range inst.VIPs {
			seenNode[v.WindowsNode] = true
			p, _ := parseV4Prefix(v.PodCIDR)
			if want := gatewayAddress(p); v.Address != want {
				t.Errorf("%s: VIP %s, want %s", v.WindowsNode, v.Address, want)
			}
		}
	}
	if len(seenNode) != len(in.WindowsNodes) {
		t.Errorf("%d nodes laid out, %d given", len(seenNode), len(in.WindowsNodes))
	}
	if !slices.IsSorted(g.VRIDs) || len(g.VRIDs) != len(g.Instances) || len(g.VIPs) != len(in.WindowsNodes) {
		t.Errorf("summaries: VRIDs %v, %d VIPs", g.VRIDs, len(g.VIPs))
	}
}

func vridOf(g GatewayGroupPlan) map[string]int {
	m := map[string]int{}
	for _, inst := range g.Instances {
		for _, v := range inst.VIPs {
			m[v.WindowsNode] = inst.VRID
		}
	}
	return m
}

// Every member must compute the same configuration whatever order it lists nodes and peers in.
func TestLayoutIgnoresInputOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for iter := 0; iter < 200; iter++ {
		vpi := 2 + r.IntN(40) // 272 slots / 2 = 136 instances fit 1-255
		in := layoutInput(vpi, 1, 255, randomNodes(r, 1+r.IntN(120), "w"))
		want := mustLayout(t, in)
		sh := in
		sh.WindowsNodes = slices.Clone(in.WindowsNodes)
		sh.Members = slices.Clone(in.Members)
		r.Shuffle(len(sh.WindowsNodes), func(i, j int) { sh.WindowsNodes[i], sh.WindowsNodes[j] = sh.WindowsNodes[j], sh.WindowsNodes[i] })
		r.Shuffle(len(sh.Members), func(i, j int) { sh.Members[i], sh.Members[j] = sh.Members[j], sh.Members[i] })
		got := mustLayout(t, sh)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("iteration %d: shuffled input changed the layout", iter)
		}
	}
}

// Windows nodes joining and leaving never move a surviving node's VIP to another VRID.
func TestLayoutStableUnderChurn(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for iter := 0; iter < 200; iter++ {
		vpi := 2 + r.IntN(40) // 272 slots / 2 = 136 instances fit 1-255
		all := randomNodes(r, 150, "w")
		before := all[:100]
		// Drop a random subset, add nodes from the unused slots.
		var after []WindowsPodCIDR
		for _, n := range before {
			if r.IntN(3) > 0 {
				after = append(after, n)
			}
		}
		after = append(after, all[100:100+r.IntN(50)]...)
		g1 := mustLayout(t, layoutInput(vpi, 1, 255, before))
		g2 := mustLayout(t, layoutInput(vpi, 1, 255, after))
		v1, v2 := vridOf(g1), vridOf(g2)
		for name, vrid := range v2 {
			if old, ok := v1[name]; ok && old != vrid {
				t.Fatalf("iteration %d: %s moved from VRID %d to %d", iter, name, old, vrid)
			}
		}
	}
}

func TestLayoutDetails(t *testing.T) {
	in := layoutInput(2, 100, 110, []WindowsPodCIDR{
		{"w.d", "10.0.20.0/24"}, {"w-c", "10.0.5.0/24"}, {"w-b", "10.0.1.0/24"}, {"w-a", "10.0.0.0/24"},
	})
	in.Name = "gw-1.x"
	in.RouterVIPs = []string{"192.168.0.250", "192.168.0.251", "192.168.0.252/24"}
	g := mustLayout(t, in)
	type inst struct {
		name, routerVIP string
		vrid            int
		nodes           []string
	}
	// slots 0,1 -> instance 0; slot 5 -> instance 2; slot 20 -> instance 10 (no router VIP).
	want := []inst{
		{"VI_GW_1_X_100", "192.168.0.250", 100, []string{"w-a", "w-b"}},
		{"VI_GW_1_X_102", "192.168.0.252/24", 102, []string{"w-c"}},
		{"VI_GW_1_X_110", "", 110, []string{"w.d"}},
	}
	if len(g.Instances) != len(want) {
		t.Fatalf("instances: %+v", g.Instances)
	}
	for i, w := range want {
		got := g.Instances[i]
		var nodes []string
		for _, v := range got.VIPs {
			nodes = append(nodes, v.WindowsNode)
		}
		if got.Name != w.name || got.VRID != w.vrid || got.RouterVIP != w.routerVIP || !slices.Equal(nodes, w.nodes) {
			t.Errorf("instance %d = %s/%d/%q/%v, want %+v", i, got.Name, got.VRID, got.RouterVIP, nodes, w)
		}
	}
	if !slices.Equal(g.VIPs, []string{"10.0.0.1/24", "10.0.1.1/24", "10.0.5.1/24", "10.0.20.1/24"}) {
		t.Errorf("VIPs = %v", g.VIPs)
	}
	var ids []string
	for _, m := range g.Members {
		ids = append(ids, m.RouterID)
	}
	if !slices.Equal(ids, []string{"kubewin_gw_1_x_m1", "kubewin_gw_1_x_m2", "kubewin_gw_1_x_m3"}) {
		t.Errorf("members/router IDs = %v", ids)
	}
}

func TestLayoutErrors(t *testing.T) {
	two := []WindowsPodCIDR{{"w-a", "10.0.0.0/24"}, {"w-far", "10.0.9.0/24"}}
	cases := []struct {
		name      string
		mod       func(*GatewayLayoutInput)
		field     string
		fragments []string
	}{
		{"VRID budget", func(in *GatewayLayoutInput) { in.VRIDRange = [2]int{188, 190} }, "vridRange",
			[]string{"w-far need VRID 197", "outside 188-190"}},
		{"router VIP missing", func(in *GatewayLayoutInput) {
			in.RouterVIPsRequired = true
			in.RouterVIPs = []string{"192.168.0.250"}
		}, "routerVIPs", []string{"VI_WIN_GW_10", "w-far", "routerVIPs[9]"}},
		{"bad router VIP", func(in *GatewayLayoutInput) { in.RouterVIPs = []string{"x"} }, "routerVIPs[0]", nil},
		{"VRRPv2 fraction", func(in *GatewayLayoutInput) { in.VRRPVersion = 2 }, "advertInterval", []string{"whole seconds"}},
		{"VRRPv3 too fine", func(in *GatewayLayoutInput) { in.AdvertIntervalSeconds = 0.005 }, "advertInterval", []string{"0.01"}},
		{"VRRP version", func(in *GatewayLayoutInput) { in.VRRPVersion = 4 }, "vrrpVersion", nil},
		{"too many VIPs per instance", func(in *GatewayLayoutInput) { in.VIPsPerInstance = 256 }, "vipsPerInstance", nil},
		{"VRID 0", func(in *GatewayLayoutInput) { in.VRIDRange = [2]int{0, 10} }, "vridRange", nil},
		{"same pod CIDR twice", func(in *GatewayLayoutInput) {
			in.WindowsNodes = append(in.WindowsNodes, WindowsPodCIDR{"w-b", "10.0.0.0/24"})
		}, "windowsNodes", []string{"w-a and w-b"}},
		{"node twice", func(in *GatewayLayoutInput) {
			in.WindowsNodes = append(in.WindowsNodes, WindowsPodCIDR{"w-a", "10.0.3.0/24"})
		}, "windowsNodes", []string{"w-a is listed twice"}},
		{"outside", func(in *GatewayLayoutInput) { in.WindowsNodes[1].PodCIDR = "10.1.0.0/24" }, "windowsNodes", []string{"outside"}},
		{"no room for .2", func(in *GatewayLayoutInput) { in.WindowsNodes[1].PodCIDR = "10.0.9.0/31" }, "windowsNodes", []string{"no room"}},
		{"priority", func(in *GatewayLayoutInput) { in.Members[0].Priority = 255 }, "members[0].priority", nil},
		{"member IP", func(in *GatewayLayoutInput) { in.Members[1].IP = "fe80::1" }, "members[1]", nil},
		{"no members", func(in *GatewayLayoutInput) { in.Members = nil }, "members", nil},
		{"no interface", func(in *GatewayLayoutInput) { in.Interface = "" }, "interface", nil},
		{"bad cluster CIDR", func(in *GatewayLayoutInput) { in.ClusterCIDRs = []string{"10.0.0.0/33"} }, "clusterCIDRs", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := layoutInput(1, 1, 255, slices.Clone(two))
			tc.mod(&in)
			_, err := LayoutGatewayGroup(in)
			wantFieldError(t, err, tc.field, tc.fragments...)
		})
	}
}

// The gateway controller recomputes a group from plan.json and the Windows nodes it sees; with
// the same nodes it must get the planner's layout back.
func TestLayoutInputRoundTrip(t *testing.T) {
	p := examplePlan(t)
	g := p.GatewayGroups[0]
	again, err := LayoutGatewayGroup(g.LayoutInput(p.Networking, g.WindowsNodes()))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(again, g) {
		t.Errorf("recomputed layout differs:\n%+v\n%+v", again, g)
	}
}
