package render

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/containernetworking/cni/libcni"
	"github.com/containernetworking/cni/pkg/version"
)

// cniView is what the tests read back from a rendered configuration.
type cniView struct {
	CNIVersion   string          `json:"cniVersion"`
	Name         string          `json:"name"`
	Type         string          `json:"type"`
	APIVersion   int             `json:"apiVersion"`
	Capabilities map[string]bool `json:"capabilities"`
	DNS          cniDNS          `json:"dns"`
	IPAM         *cniIPAM        `json:"ipam"`
	Policies     []struct {
		Name  string `json:"name"`
		Value struct {
			Type     string
			Settings map[string]any
		} `json:"value"`
	} `json:"policies"`
	Delegate *cniView `json:"delegate"`
}

func TestCNIConfigLoadsWithLibcni(t *testing.T) {
	for name, p := range designVariants(t) {
		for _, n := range windowsNodes(p) {
			t.Run(name+"/"+n.Name, func(t *testing.T) {
				data, err := CNIConfig(n)
				if err != nil {
					t.Fatal(err)
				}
				// containerd loads a .conf with libcni and wraps it into a list.
				conf, err := libcni.ConfFromBytes(data)
				if err != nil {
					t.Fatalf("libcni: %v\n%s", err, data)
				}
				list, err := libcni.ConfListFromConf(conf)
				if err != nil {
					t.Fatalf("libcni list: %v", err)
				}
				w := n.Windows
				if conf.Network.Name != w.HNSNetworkName || list.Name != w.HNSNetworkName {
					t.Errorf("CNI network %q, want the HNS network name %q", conf.Network.Name, w.HNSNetworkName)
				}
				if conf.Network.Type != w.CNIPlugin {
					t.Errorf("type %q, want %q", conf.Network.Type, w.CNIPlugin)
				}
				supported := version.All.SupportedVersions()
				if !slices.Contains(supported, conf.Network.CNIVersion) {
					t.Errorf("cniVersion %s not among the versions win-bridge supports %v", conf.Network.CNIVersion, supported)
				}

				var v cniView
				if err := json.Unmarshal(data, &v); err != nil {
					t.Fatal(err)
				}
				d := &v
				if w.CNIPlugin == "flannel" {
					if v.Delegate == nil || v.Delegate.Type != w.CNIDelegate {
						t.Fatalf("flannel delegate %+v, want %s", v.Delegate, w.CNIDelegate)
					}
					d = v.Delegate
				} else {
					if d.IPAM == nil || d.IPAM.Type != "host-local" || d.IPAM.Ranges[0][0].Subnet != n.PodCIDR ||
						d.IPAM.Ranges[0][0].RangeStart != w.PodIPRangeStart {
						t.Errorf("ipam %+v, want host-local over %s from %s", d.IPAM, n.PodCIDR, w.PodIPRangeStart)
					}
				}
				if d.APIVersion != 2 {
					t.Errorf("apiVersion %d, want 2 (HCN, needed with containerd)", d.APIVersion)
				}
				if !v.Capabilities["dns"] || !v.Capabilities["portMappings"] {
					t.Errorf("capabilities %v", v.Capabilities)
				}
				if !slices.Equal(d.DNS.Nameservers, w.DNSServers) || !slices.Equal(d.DNS.Search, w.DNSSearch) {
					t.Errorf("dns %+v, want %v %v", d.DNS, w.DNSServers, w.DNSSearch)
				}
				var exceptions []any
				var routes []string
				for _, pol := range d.Policies {
					if pol.Name != "EndpointPolicy" {
						t.Errorf("policy name %q", pol.Name)
					}
					switch pol.Value.Type {
					case "OutBoundNAT":
						exceptions, _ = pol.Value.Settings["Exceptions"].([]any)
					case "SDNRoute":
						routes = append(routes, pol.Value.Settings["DestinationPrefix"].(string))
						if pol.Value.Settings["NeedEncap"] != true {
							t.Errorf("SDNRoute without NeedEncap: %v", pol.Value.Settings)
						}
					default:
						t.Errorf("unexpected policy %s", pol.Value.Type)
					}
				}
				if len(exceptions) != len(w.OutboundNATExceptions) {
					t.Errorf("exceptions %v, want %v", exceptions, w.OutboundNATExceptions)
				}
				want := slices.Clone(w.ServiceRoutes)
				// L2Bridge: the node's own /32 too, or pods cannot reach their node (issue 11
				// item 4; containernetworking/plugins win-bridge sample-v2.conf).
				if w.CNIPlugin == "win-bridge" || w.CNIDelegate == "win-bridge" {
					if w.NodeRoute != n.NodeIP+"/32" {
						t.Errorf("NodeRoute = %q, want %s/32", w.NodeRoute, n.NodeIP)
					}
					want = append(want, n.NodeIP+"/32")
				} else if w.NodeRoute != "" {
					t.Errorf("overlay node has NodeRoute %q", w.NodeRoute)
				}
				if !slices.Equal(routes, want) {
					t.Errorf("SDNRoutes %v, want %v", routes, want)
				}
			})
		}
	}
}

func TestCNIConfigSeedValues(t *testing.T) {
	p := examplePlan(t)
	data, err := CNIConfig(windowsNode(t, p, "node009"))
	if err != nil {
		t.Fatal(err)
	}
	// Seed 000 §2.4.2, in HCN v2 form.
	wantContains(t, "l2bridge.conf", data, `"name": "l2bridge"`, `"type": "win-bridge"`, `"10.176.0.10"`,
		`"default.svc.cluster.local"`, `"mylan.k8s"`, `"10.160.0.0/12"`, `"10.176.0.0/12"`,
		`"DestinationPrefix": "10.176.0.0/12"`, `"NeedEncap": true`, `"subnet": "10.160.11.0/24"`, `"rangeStart": "10.160.11.3"`)
}

func TestCNIConfigRejectsBadPlans(t *testing.T) {
	p := examplePlan(t)
	n := windowsNode(t, p, "node009")
	w := *n.Windows
	w.PodIPRangeStart = "10.160.12.3"
	n.Windows = &w
	if _, err := CNIConfig(n); err == nil {
		t.Error("range start outside the pod CIDR accepted")
	}
	w.PodIPRangeStart, w.CNIPlugin = "10.160.11.3", "calico"
	if _, err := CNIConfig(n); err == nil {
		t.Error("unknown CNI plugin accepted")
	}
}
