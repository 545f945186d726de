package winnode

import (
	"encoding/json"
	"testing"

	"github.com/kubewin/kubewin/internal/render"
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
