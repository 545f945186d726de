package winnode

import (
	"slices"
	"testing"
)

// The host vNIC of a vSwitch carries the adapter's MAC: the Reconciler must keep binding the
// networks to the adapter, whichever of the two the host lists first.
func TestVNICWithTheAdapterMACIsNotTheClusterAdapter(t *testing.T) {
	for _, vnicFirst := range []bool{false, true} {
		name := "adapter listed first"
		if vnicFirst {
			name = "vNIC listed first"
		}
		t.Run(name, func(t *testing.T) {
			nd := newNode(t, "")
			adapter := nd.n.Windows.AdapterName
			if vnicFirst {
				// A host whose vSwitch outlived the networks (created by Hyper-V or an earlier
				// install): its vNIC holds the address and comes first in the listing.
				nd.host = NewMemHost(
					Adapter{Name: "vEthernet (" + adapter + ")", MAC: nd.n.ClusterNICMAC, IPv4: []string{nd.n.NodeIP}},
					Adapter{Name: adapter, MAC: nd.n.ClusterNICMAC},
				)
				nd.r = &Reconciler{Host: nd.host, Desired: nd.desired}
				// No services installed in this host: only the networks are judged.
				nd.r.Desired.Services = nil
			}
			nd.pass(t)
			nd.assertNetwork(t, adapter)
			nd.pass(t)
			if n := nd.host.Count("network-create", nd.desired.ProxyNetwork); n != 1 {
				t.Fatalf("pod network created %d times; want once (a vNIC taken for the adapter re-creates it every pass): %v", n, nd.host.Events())
			}
		})
	}
}

func TestMemHostVSwitchTakesTheAddress(t *testing.T) {
	nd := newNode(t, "")
	adapter := nd.n.Windows.AdapterName
	nd.healthyPass(t)
	ctx := testCtx(t)
	ads, err := nd.host.Adapters(ctx)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(ads, func(a Adapter) bool { return a.Name == "vEthernet ("+adapter+")" })
	j := slices.IndexFunc(ads, func(a Adapter) bool { return a.Name == adapter })
	if i < 0 || j < 0 || len(ads[j].IPv4) != 0 || !slices.Contains(ads[i].IPv4, nd.n.NodeIP) || !sameMAC(ads[i].MAC, ads[j].MAC) {
		t.Fatalf("after the networks: adapters %+v; want the vNIC with %s and the adapter's MAC", ads, nd.n.NodeIP)
	}
	nd.host.Reboot()
	ads, _ = nd.host.Adapters(ctx)
	if slices.ContainsFunc(ads, func(a Adapter) bool { return a.Name == "vEthernet ("+adapter+")" }) {
		t.Fatalf("after a reboot the vSwitch of the lost networks is gone; adapters %+v", ads)
	}
	j = slices.IndexFunc(ads, func(a Adapter) bool { return a.Name == adapter })
	if j < 0 || !slices.Contains(ads[j].IPv4, nd.n.NodeIP) {
		t.Fatalf("after a reboot the adapter has its address again; adapters %+v", ads)
	}
}
