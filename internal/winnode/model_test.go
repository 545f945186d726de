package winnode

import (
	"slices"
	"sort"
	"strings"
	"testing"
)

// Every scenario under every Model: where the sources disagree or are silent (networks across
// a reboot, bound NICs in the listing, the hns start type, vNIC name suffixes, forwarding across
// a reboot, HCN echoing the adapter), the Reconciler must bring the node back either way.
func TestScenariosUnderEveryModel(t *testing.T) {
	models := Models()
	names := make([]string, 0, len(models))
	for n := range models {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		m := models[name]
		for _, design := range testDesigns {
			t.Run(name+"/"+designName(design), func(t *testing.T) {
				nd := newNodeModel(t, design, m)
				nd.healthyPass(t)
				nd.assertConverged(t, "first boot")
				nd.host.Reboot()
				nd.healthyPass(t)
				nd.assertConverged(t, "after a reboot")
				nd.host.RestartHNS()
				nd.healthyPass(t)
				nd.assertConverged(t, "after an HNS restart")
				nd.host.Reboot()
				nd.host.Reboot()
				nd.healthyPass(t)
				nd.assertConverged(t, "after two reboots")
				if again := nd.healthyPass(t); len(again.Repairs) != 0 {
					t.Errorf("a pass on a converged node repaired %+v", again.Repairs)
				}
			})
		}
	}
}

// assertConverged checks everything the node needs: networks on the adapter (never a vNIC),
// the host endpoint, forwarding, routes, services.
func (nd *node) assertConverged(t *testing.T, when string) {
	t.Helper()
	adapter := nd.n.Windows.AdapterName
	for _, n := range nd.host.Networks() {
		if isVNICName(n.AdapterName) {
			t.Fatalf("%s: HNS network %s bound to the vNIC %q", when, n.Name, n.AdapterName)
		}
	}
	nd.assertNetwork(t, adapter)
	nd.assertRunning(t)
	ads, _ := nd.host.Adapters(testCtx(t))
	for _, role := range nd.desired.Forwarding {
		st := &passState{adapters: ads}
		a := nd.r.roleInterface(st, role)
		if a == nil || !a.Forwarding {
			t.Errorf("%s: %s interface %+v does not forward; adapters %+v", when, role, a, ads)
		}
	}
	have := nd.host.HostRoutes()
	for _, want := range nd.desired.Routes {
		if !slices.ContainsFunc(have, func(h HostRoute) bool {
			return sameRoute(h, want) && (want.InterfaceAlias == "" || strings.HasPrefix(h.InterfaceAlias, want.InterfaceAlias))
		}) {
			t.Errorf("%s: route %s missing; host routes %v", when, want, have)
		}
	}
	if t.Failed() {
		t.Logf("events: %v", nd.host.Events())
	}
}

// Finding 1 (issue 22): pods use the host endpoint as their gateway, so the host must forward
// on the host endpoint's vNIC and on the vSwitch's vNIC; before the fix nothing enabled it.
func TestForwardingEnabledOnBothVNICs(t *testing.T) {
	nd := newNode(t, "")
	rep := nd.healthyPass(t)
	adapter := nd.n.Windows.AdapterName
	for _, want := range []string{"vEthernet (" + nd.desired.HostEndpoint.Name + ")", "vEthernet (" + adapter + ")"} {
		if nd.host.Count("forwarding", want) != 1 {
			t.Errorf("forwarding on %s enabled %d times; events %v", want, nd.host.Count("forwarding", want), nd.host.Events())
		}
		if !slices.ContainsFunc(rep.Repairs, func(r Repair) bool { return r.What == "enabled IPv4 forwarding on "+want }) {
			t.Errorf("repairs %+v do not name forwarding on %s", rep.Repairs, want)
		}
	}
	// The endpoint's vNIC is new after a reboot: forwarding is off again and put back.
	nd.host.Reboot()
	nd.healthyPass(t)
	if n := nd.host.Count("forwarding", "vEthernet ("+nd.desired.HostEndpoint.Name+")"); n != 2 {
		t.Errorf("forwarding on the new host endpoint vNIC enabled %d times in all, want 2", n)
	}
	// Flannel designs: flanneld owns its endpoint and forwarding.
	fl := newNode(t, "flannel/host-gw")
	fl.healthyPass(t)
	for _, e := range fl.host.Events() {
		if e.Kind == "forwarding" {
			t.Errorf("flannel design: kubewin set forwarding %v", e)
		}
	}
}

// Finding 2: once the vSwitch exists and a listing leaves the bound NIC out, the only adapter
// with the cluster MAC is the vNIC; HNS refuses a vEthernet adapter name (MemHost too).
func TestBoundNICHiddenNeverPassesTheVNIC(t *testing.T) {
	for _, persist := range []bool{false, true} {
		m := Model{HideBoundAdapters: true, NetworksPersist: persist}
		nd := newNodeModel(t, "", m)
		nd.healthyPass(t)
		// An HNS reset that lost the pod network but kept the vSwitch (External).
		ctx := testCtx(t)
		nets, _ := nd.host.ListNetworks(ctx)
		for _, n := range nets {
			if n.Name == nd.desired.ProxyNetwork {
				if err := nd.r.deleteNetwork(ctx, n); err != nil {
					t.Fatal(err)
				}
			}
		}
		ads, _ := nd.host.Adapters(ctx)
		if slices.ContainsFunc(ads, func(a Adapter) bool { return a.Name == nd.n.Windows.AdapterName }) {
			t.Fatalf("the model lists the bound NIC although HideBoundAdapters: %+v", ads)
		}
		rep := nd.healthyPass(t)
		nd.assertNetwork(t, nd.n.Windows.AdapterName)
		if !slices.ContainsFunc(rep.Repairs, func(r Repair) bool { return strings.Contains(r.What, "on adapter "+nd.n.Windows.AdapterName) }) {
			t.Errorf("repairs %+v", rep.Repairs)
		}
	}
}

// The MemHost refuses a vNIC as a network's adapter, as HNS does.
func TestMemHostRefusesVNICAdapter(t *testing.T) {
	h := NewMemHost(Adapter{Name: "vEthernet (Ethernet)", MAC: "00-15-00-00-00-02", Virtual: true, IPv4: []string{"10.0.0.5"}})
	_, err := h.CreateNetwork(testCtx(t), NetworkSpec{Name: "x", Type: "L2Bridge", Prefix: "10.1.0.0/24", Gateway: "10.1.0.1", AdapterName: "vEthernet (Ethernet)"})
	if err == nil || !strings.Contains(err.Error(), "Hyper-V virtual adapter") {
		t.Fatalf("err = %v", err)
	}
}

// Finding 5: hns may be Manual and stopped after boot; the node service starts it, and only
// then the networks and services.
func TestHNSStoppedAfterBootIsStarted(t *testing.T) {
	nd := newNodeModel(t, "", Model{HNSManualStart: true})
	nd.healthyPass(t)
	nd.host.Reboot()
	if st, _ := nd.host.ServiceStatus(testCtx(t), HNSServiceName); st.State != ServiceStopped {
		t.Fatalf("hns after reboot: %s, want Stopped under HNSManualStart", st.State)
	}
	mark := len(nd.host.Events())
	rep := nd.healthyPass(t)
	if len(rep.Repairs) == 0 || rep.Repairs[0].What != "started service hns" {
		t.Fatalf("first repair %+v, want hns started", rep.Repairs)
	}
	hns := nd.host.Index(mark, "start", HNSServiceName)
	net := nd.host.Index(mark, "network-create", nd.desired.ProxyNetwork)
	if hns < 0 || (net >= 0 && net < hns) {
		t.Errorf("hns started at %d, network created at %d: %v", hns, net, nd.host.Events()[mark:])
	}
	nd.assertRunning(t)
}

// Minor: the metadata route is dropped when the vSwitch is created; the Reconciler keeps it on
// the vSwitch's vNIC, also across a reboot (the caller hands Preserved back).
func TestMetadataRouteKept(t *testing.T) {
	for _, persist := range []bool{false, true} {
		nd := newNodeModel(t, "", Model{NetworksPersist: persist})
		adapter := nd.n.Windows.AdapterName
		meta := HostRoute{DestinationPrefix: "169.254.169.254/32", NextHop: "100.100.126.1", InterfaceAlias: adapter}
		nd.host.SetRoute(meta)
		// The other NIC's own route to the metadata server is not the Reconciler's to remove.
		other := HostRoute{DestinationPrefix: "169.254.169.254/32", NextHop: "172.16.126.1", InterfaceAlias: "eth0"}
		nd.host.SetRoute(other)
		var saved []HostRoute
		nd.r.OnPreserve = func(rs []HostRoute) { saved = rs }
		rep := nd.healthyPass(t)
		onVNIC := HostRoute{DestinationPrefix: meta.DestinationPrefix, NextHop: meta.NextHop, InterfaceAlias: "vEthernet (" + adapter + ")"}
		if !slices.Contains(nd.host.HostRoutes(), onVNIC) {
			t.Fatalf("metadata route not on the vNIC: %v; events %v", nd.host.HostRoutes(), nd.host.Events())
		}
		if !slices.Contains(nd.host.HostRoutes(), other) {
			t.Fatalf("the other NIC's metadata route was removed: %v", nd.host.HostRoutes())
		}
		if nd.host.Count("route-lost", meta.DestinationPrefix) != 1 {
			t.Errorf("the model did not drop the metadata route at vSwitch creation: %v", nd.host.Events())
		}
		if !slices.ContainsFunc(rep.Repairs, func(r Repair) bool { return strings.Contains(r.Why, "creating the vSwitch drops it") }) {
			t.Errorf("repairs %+v", rep.Repairs)
		}
		// A new node service process after a reboot: Preserved comes from what was saved.
		nd.host.Reboot()
		nd.r = &Reconciler{Host: nd.host, Desired: nd.desired, Preserved: saved}
		nd.healthyPass(t)
		if !slices.Contains(nd.host.HostRoutes(), onVNIC) {
			t.Fatalf("persist=%v: metadata route not back after a reboot: %v", persist, nd.host.HostRoutes())
		}
	}
}

// Minor: a route to a planned destination that leaves elsewhere is removed.
func TestConflictingRouteRemoved(t *testing.T) {
	nd := newNode(t, "")
	nd.healthyPass(t)
	want := nd.desired.Routes[0]
	stale := HostRoute{DestinationPrefix: want.DestinationPrefix, NextHop: "10.99.0.1", InterfaceAlias: "vEthernet (" + nd.n.Windows.AdapterName + ")"}
	nd.host.SetRoute(stale)
	rep := nd.healthyPass(t)
	if slices.Contains(nd.host.HostRoutes(), stale) {
		t.Fatalf("stale route kept: %v", nd.host.HostRoutes())
	}
	if !slices.ContainsFunc(rep.Repairs, func(r Repair) bool { return r.What == "removed route "+stale.String() }) {
		t.Errorf("repairs %+v", rep.Repairs)
	}
	nd.assertRoutes(t)
}

// Minor: Windows may suffix a vNIC's name; routes and forwarding follow the vNIC by address.
func TestSuffixedVNIC(t *testing.T) {
	nd := newNodeModel(t, "", Model{VNICSuffix: " 2"})
	nd.healthyPass(t)
	vnic := "vEthernet (" + nd.desired.HostEndpoint.Name + ") 2"
	if nd.host.Count("forwarding", vnic) != 1 {
		t.Errorf("forwarding not on %s: %v", vnic, nd.host.Events())
	}
	for _, rt := range nd.host.HostRoutes() {
		if strings.HasPrefix(rt.InterfaceAlias, "vEthernet ("+nd.desired.HostEndpoint.Name+")") && rt.InterfaceAlias != vnic {
			t.Errorf("route %v not on the suffixed vNIC", rt)
		}
	}
	if again := nd.healthyPass(t); len(again.Repairs) != 0 {
		t.Errorf("second pass repaired %+v (attach judged by the exact name?)", again.Repairs)
	}
}

// Two non-virtual adapters with the cluster MAC (an SR-IOV virtual function beside the synthetic
// NIC): the planned adapter is bound, whichever the host lists first.
func TestClusterAdapterAmongSameMAC(t *testing.T) {
	nd := newNode(t, "")
	adapter := nd.n.Windows.AdapterName
	vf := Adapter{Name: "Ethernet 5", MAC: nd.n.ClusterNICMAC}
	nd.host = NewMemHost(vf, Adapter{Name: adapter, MAC: nd.n.ClusterNICMAC, IPv4: []string{nd.n.NodeIP}})
	nd.r = &Reconciler{Host: nd.host, Desired: nd.desired}
	nd.r.Desired.Services = nil
	nd.pass(t)
	nd.assertNetwork(t, adapter)
	// Renamed since the plan: the one with the address, not the VF.
	nd2 := newNode(t, "")
	nd2.host = NewMemHost(vf, Adapter{Name: "Ethernet 7", MAC: nd2.n.ClusterNICMAC, IPv4: []string{nd2.n.NodeIP}})
	nd2.r = &Reconciler{Host: nd2.host, Desired: nd2.desired}
	nd2.r.Desired.Services = nil
	nd2.pass(t)
	nd2.assertNetwork(t, "Ethernet 7")
}
