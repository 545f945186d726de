package render

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/Microsoft/hcsshim/hcn"
	"github.com/containernetworking/plugins/pkg/hns"
)

// Windows only: win-bridge's configuration type (containernetworking/plugins pkg/hns, v1.9.1)
// and hcsshim's HCN types exist only in the Windows build. `GOOS=windows go vet ./...` compiles
// this file; it runs on a Windows machine. Wine cannot stand in: Debian's wine 8.0 has no
// bcryptprimitives.dll, which the runtime of Go 1.22 and later needs at start-up (ProcessPrng),
// so a Go 1.26 test binary dies before main.

func TestCNIConfigUnmarshalsIntoWinBridgeNetConf(t *testing.T) {
	for name, p := range designVariants(t) {
		for _, n := range windowsNodes(p) {
			data, err := CNIConfig(n)
			if err != nil {
				t.Fatal(err)
			}
			var nc hns.NetConf
			if err := json.Unmarshal(data, &nc); err != nil {
				t.Fatalf("%s/%s: hns.NetConf: %v", name, n.Name, err)
			}
			if n.Windows.CNIPlugin == "flannel" {
				var outer struct {
					Delegate json.RawMessage `json:"delegate"`
				}
				if err := json.Unmarshal(data, &outer); err != nil {
					t.Fatal(err)
				}
				nc = hns.NetConf{}
				if err := json.Unmarshal(outer.Delegate, &nc); err != nil {
					t.Fatalf("%s/%s: delegate into hns.NetConf: %v", name, n.Name, err)
				}
			}
			if nc.ApiVersion != 2 {
				t.Errorf("%s/%s: ApiVersion %d", name, n.Name, nc.ApiVersion)
			}
			// The HCN path of win-bridge turns these into hcn.EndpointPolicy values.
			pols := nc.GetHostComputeEndpointPolicies()
			if len(pols) != 1+len(n.Windows.ServiceRoutes) {
				t.Errorf("%s/%s: %d HCN endpoint policies, want %d", name, n.Name, len(pols), 1+len(n.Windows.ServiceRoutes))
			}
			for _, pol := range pols {
				switch pol.Type {
				case hcn.OutBoundNAT:
					var s hcn.OutboundNatPolicySetting
					strictJSON(t, pol.Settings, &s)
					if len(s.Exceptions) != len(n.Windows.OutboundNATExceptions) {
						t.Errorf("%s/%s: exceptions %v", name, n.Name, s.Exceptions)
					}
				case hcn.SDNRoute:
					var s hcn.SDNRoutePolicySetting
					strictJSON(t, pol.Settings, &s)
					if !s.NeedEncap {
						t.Errorf("%s/%s: SDNRoute %+v without NeedEncap", name, n.Name, s)
					}
				default:
					t.Errorf("%s/%s: unexpected policy type %s", name, n.Name, pol.Type)
				}
			}
			if dns := nc.GetDNS(); len(dns.Nameservers) == 0 {
				t.Errorf("%s/%s: no DNS servers", name, n.Name)
			}
		}
	}
}

func TestHNSNetworkJSONUnmarshalsIntoHCNTypes(t *testing.T) {
	for name, p := range designVariants(t) {
		for _, n := range windowsNodes(p) {
			data, err := HNSNetworkJSON(p, n)
			if err != nil {
				t.Fatal(err)
			}
			var spec struct {
				Network      json.RawMessage `json:"network"`
				HostEndpoint json.RawMessage `json:"hostEndpoint"`
			}
			if err := json.Unmarshal(data, &spec); err != nil {
				t.Fatal(err)
			}
			var net hcn.HostComputeNetwork
			strictJSON(t, spec.Network, &net)
			if string(net.Type) != string(n.Windows.HNSNetworkType) && n.Windows.CNIPlugin != "flannel" {
				t.Errorf("%s/%s: network type %s", name, n.Name, net.Type)
			}
			for _, pol := range net.Policies {
				if pol.Type == hcn.NetAdapterName {
					var s hcn.NetAdapterNameNetworkPolicySetting
					strictJSON(t, pol.Settings, &s)
					if s.NetworkAdapterName != n.Windows.AdapterName {
						t.Errorf("%s/%s: adapter %q", name, n.Name, s.NetworkAdapterName)
					}
				}
			}
			if len(spec.HostEndpoint) > 0 {
				var ep hcn.HostComputeEndpoint
				strictJSON(t, spec.HostEndpoint, &ep)
				if ep.Name != n.Windows.HostEndpointName || ep.IpConfigurations[0].IpAddress != n.Windows.HostEndpointIP {
					t.Errorf("%s/%s: host endpoint %+v", name, n.Name, ep)
				}
			}
		}
	}
}

func strictJSON(t *testing.T, data []byte, v any) {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(data))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		t.Fatalf("strict decode into %T: %v\n%s", v, err, data)
	}
}
