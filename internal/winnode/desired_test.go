package winnode

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/kubewin/kubewin/internal/plan"
	"github.com/kubewin/kubewin/internal/render"
	"github.com/kubewin/kubewin/pkg/api/v1alpha1"
)

// The reconciler must build the network render describes in hns/network.json.
func TestDesiredMatchesRenderedNetwork(t *testing.T) {
	for _, design := range testDesigns {
		t.Run(designName(design), func(t *testing.T) {
			p := designPlan(t, design)
			n := windowsNode(t, p)
			d, err := DesiredFromPlan(p, n)
			if err != nil {
				t.Fatal(err)
			}
			b, err := render.HNSNetworkJSON(p, n)
			if err != nil {
				t.Fatal(err)
			}
			var spec struct {
				Network struct {
					Name, Type string
					Policies   []struct {
						Type     string
						Settings struct{ NetworkAdapterName string }
					}
					Ipams []struct {
						Subnets []struct {
							IpAddressPrefix string
							Routes          []struct{ NextHop, DestinationPrefix string }
						}
					}
				} `json:"network"`
				HostEndpoint *struct {
					Name             string
					IpConfigurations []struct {
						IpAddress    string
						PrefixLength int
					}
				} `json:"hostEndpoint"`
			}
			if err := json.Unmarshal(b, &spec); err != nil {
				t.Fatal(err)
			}
			// network.json states the network kubewin creates last (the pod network, or the
			// placeholder in flannel designs).
			last := d.Networks[len(d.Networks)-1]
			sub := spec.Network.Ipams[0].Subnets[0]
			if last.Name != spec.Network.Name || last.Type != spec.Network.Type || last.Prefix != sub.IpAddressPrefix ||
				last.Gateway != sub.Routes[0].NextHop || last.AdapterName != spec.Network.Policies[0].Settings.NetworkAdapterName {
				t.Errorf("desired %+v, rendered %s", last, b)
			}
			if (d.HostEndpoint == nil) != (spec.HostEndpoint == nil) {
				t.Fatalf("host endpoint: desired %+v, rendered %s", d.HostEndpoint, b)
			}
			if d.HostEndpoint != nil {
				ip := spec.HostEndpoint.IpConfigurations[0]
				if d.HostEndpoint.Name != spec.HostEndpoint.Name || d.HostEndpoint.IP != ip.IpAddress || d.HostEndpoint.PrefixLength != ip.PrefixLength {
					t.Errorf("desired endpoint %+v, rendered %s", d.HostEndpoint, b)
				}
			}
			if d.ProxyNetwork != n.Windows.HNSNetworkName || d.AdapterMAC != "00:15:00:00:00:02" {
				t.Errorf("proxy network %q, adapter MAC %q", d.ProxyNetwork, d.AdapterMAC)
			}
			var order []string
			for _, s := range d.Services {
				order = append(order, s.Name)
			}
			want := "containerd kubelet kube-proxy"
			if n.Windows.CNIPlugin == "flannel" {
				want = "containerd kubelet flanneld kube-proxy"
			}
			if got := joinNames(order); got != want {
				t.Errorf("services %q, want %q", got, want)
			}
		})
	}
}

// The host routes are the plan's, in plan order, with Dev as the interface alias.
func TestDesiredRoutesFromPlan(t *testing.T) {
	tests := []struct {
		design v1alpha1.NetworkDesign
		// alias and viaGateway: every route leaves on that interface, via the pod CIDR gateway.
		alias      string
		viaGateway bool
		none       bool
	}{
		{design: "", alias: "vEthernet (cbr0)", viaGateway: true},
		{design: v1alpha1.DesignHostGW, alias: ""},
		{design: v1alpha1.DesignFlannelHostGW, none: true},
		{design: v1alpha1.DesignFlannelVXLAN, none: true},
	}
	for _, tc := range tests {
		t.Run(designName(tc.design), func(t *testing.T) {
			p := designPlan(t, tc.design)
			n := windowsNode(t, p)
			d, err := DesiredFromPlan(p, n)
			if err != nil {
				t.Fatal(err)
			}
			if tc.none {
				if len(d.Routes) != 0 || len(n.Windows.Routes) != 0 {
					t.Fatalf("routes %v from plan routes %v, want none", d.Routes, n.Windows.Routes)
				}
				return
			}
			if len(d.Routes) == 0 || len(d.Routes) != len(n.Windows.Routes) {
				t.Fatalf("routes %v from plan routes %+v", d.Routes, n.Windows.Routes)
			}
			for i, pr := range n.Windows.Routes {
				want := HostRoute{DestinationPrefix: pr.Destination, NextHop: pr.Via, InterfaceAlias: pr.Dev}
				if d.Routes[i] != want {
					t.Errorf("route %d = %+v, want %+v", i, d.Routes[i], want)
				}
				if d.Routes[i].InterfaceAlias != tc.alias {
					t.Errorf("route %s leaves on %q, want %q", d.Routes[i], d.Routes[i].InterfaceAlias, tc.alias)
				}
				if tc.viaGateway && d.Routes[i].NextHop != n.Windows.Gateway {
					t.Errorf("route %s is not via the pod CIDR gateway %s", d.Routes[i], n.Windows.Gateway)
				}
			}
			if tc.alias != "" && d.HostEndpoint != nil && tc.alias != vnicName(d.HostEndpoint.Name) {
				t.Errorf("routes leave on %q, not on the host endpoint's vNIC %q", tc.alias, vnicName(d.HostEndpoint.Name))
			}
		})
	}
}

func TestDesiredFromPlanErrors(t *testing.T) {
	p := designPlan(t, "")
	n := windowsNode(t, p)
	linux := p.Nodes[0]
	if _, err := DesiredFromPlan(p, linux); err == nil {
		t.Error("a Linux node gave a desired Windows state")
	}
	noMAC := n
	noMAC.ClusterNICMAC = ""
	if _, err := DesiredFromPlan(p, noMAC); err == nil {
		t.Error("a node without cluster NIC MAC was accepted")
	}
	w := *n.Windows
	w.HostEndpointIP = "10.99.0.2"
	bad := n
	bad.Windows = &w
	if _, err := DesiredFromPlan(p, bad); err == nil {
		t.Error("a host endpoint outside the pod CIDR was accepted")
	}
	for _, r := range []plan.Route{
		{Destination: "fd00:10::/64", Via: n.Windows.Gateway}, // Host.Routes lists IPv4 only
		{Destination: "10.160.0.0/12", Via: "fd00::1"},
		{Destination: "10.160.0.0", Via: n.Windows.Gateway},
		{Destination: "10.160.0.0/12", Via: ""},
	} {
		w := *n.Windows
		w.Routes = []plan.Route{r}
		bad := n
		bad.Windows = &w
		if _, err := DesiredFromPlan(p, bad); err == nil || !strings.Contains(err.Error(), "route "+r.Destination+" via "+r.Via) {
			t.Errorf("route %+v: err = %v", r, err)
		}
	}
}

func joinNames(s []string) string {
	out := ""
	for i, x := range s {
		if i > 0 {
			out += " "
		}
		out += x
	}
	return out
}

func TestSameMAC(t *testing.T) {
	if !sameMAC("00-15-5D-00-00-02", "00:15:5d:00:00:02") || sameMAC("00:15:5d:00:00:02", "00:15:5d:00:00:03") || sameMAC("", "") {
		t.Error("sameMAC")
	}
}
