package verify

import (
	"strings"
	"testing"
)

func TestParseHNSSeedEndpoints(t *testing.T) {
	for _, f := range []string{"seed/node009.endpoints-with-cbr0.json", "seed/node009.endpoints-with-cbr0.utf16.json"} {
		d, err := ParseHNS(f, readTestdata(t, f))
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if len(d.Endpoints) != 3 {
			t.Fatalf("%s: %d endpoints, want 3", f, len(d.Endpoints))
		}
		bad, good := d.Endpoints[1], d.Endpoints[2]
		if bad.IP.String() != "10.160.11.169" || !bad.IsRemote || bad.Network != "l2bridge" || bad.PrefixLen != 24 || bad.Gateway != 0 {
			t.Errorf("%s: broken endpoint %+v", f, bad)
		}
		if good.IP.String() != "10.160.11.99" || good.IsRemote || good.Gateway.String() != "10.160.11.1" || good.OutboundNAT != nil || len(good.Routes) != 0 {
			t.Errorf("%s: working endpoint %+v", f, good)
		}
		// Lines point at the element: the broken endpoint's object starts on line 19.
		if bad.Line != 19 {
			t.Errorf("%s: broken endpoint at line %d, want 19", f, bad.Line)
		}
	}
}

func TestParseHNSPoliciesV1V2(t *testing.T) {
	d, err := ParseHNS("p", readTestdata(t, "seed/node009.endpoints-policies.json"))
	if err != nil {
		t.Fatal(err)
	}
	e := d.Endpoints[1]
	if e.OutboundNAT == nil || len(e.OutboundNAT.Exceptions) != 3 || e.OutboundNAT.Exceptions[0].String() != "10.160.0.0/12" {
		t.Fatalf("OutBoundNAT %+v", e.OutboundNAT)
	}
	if len(e.Routes) != 1 || e.Routes[0].Dst.String() != "10.176.0.0/12" || !e.Routes[0].NeedEncap {
		t.Fatalf("ROUTE %+v", e.Routes)
	}
	v2, err := ParseHNS("v2", readTestdata(t, "seed/node009.endpoints-v2.json"))
	if err != nil {
		t.Fatal(err)
	}
	a, b := v2.Endpoints[0], v2.Endpoints[1]
	if a.Schema != "v2" || a.IP.String() != "10.160.11.99" || a.OutboundNAT == nil || len(a.OutboundNAT.Exceptions) != 3 ||
		len(a.Routes) != 1 || !a.Routes[0].NeedEncap || a.IsRemote {
		t.Errorf("v2 endpoint %+v", a)
	}
	if !b.IsRemote || b.IP.String() != "10.160.11.169" {
		t.Errorf("v2 remote flag (Flags=1) not read: %+v", b)
	}
	nets, err := ParseHNS("n", readTestdata(t, "seed/node009.networks.json"))
	if err != nil {
		t.Fatal(err)
	}
	n := nets.Networks[0]
	if n.Name != "l2bridge" || n.Type != "L2Bridge" || n.Adapter != "eth1" || n.Subnets[0].Prefix.String() != "10.160.11.0/24" || n.Subnets[0].Gateway.String() != "10.160.11.1" {
		t.Errorf("network %+v", n)
	}
	pl, err := ParseHNS("pl", readTestdata(t, "seed/node009.policylists.json"))
	if err != nil {
		t.Fatal(err)
	}
	if p := pl.PolicyLists[0]; len(p.LBs) != 1 || p.LBs[0].Protocol != 17 || p.LBs[0].VIPs[0].String() != "10.176.0.10" ||
		p.Endpoints[0] != "cf73a2bc-f00f-4d71-b00a-07fa2d9fb9e3" {
		t.Errorf("policy list %+v", p)
	}
	// One object instead of a list (ConvertTo-Json of a single result).
	one, err := ParseHNS("one", []byte(`{"ID":"x","IPAddress":"10.0.0.5","PrefixLength":24,"IsRemoteEndpoint":false}`))
	if err != nil || len(one.Endpoints) != 1 {
		t.Fatalf("single object: %v", err)
	}
}

func TestParseHNSErrors(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"depth2", string(readTestdata(t, "broken/node009.endpoints-depth2.json")), "Policies[0] is the string \"@{Type=OutBoundNAT; ExceptionList=System.Object[]}\", not an object: ConvertTo-Json flattened it"},
		{"syntax", "[\n  {\"ID\": \"a\",\n   \"IPAddress\": 10.0.0.1}\n]", "x:3: invalid JSON"},
		{"bad ip", "[\n {\"ID\":\"e1\",\n  \"IPAddress\":\"10.0.0.999\"}\n]", "x:3: endpoint e1: IPAddress: expected an IPv4 address"},
		{"bad exception", "[{\"ID\":\"e1\",\"IPAddress\":\"10.0.0.9\",\"Policies\":[{\"Type\":\"OutBoundNAT\",\"ExceptionList\":[\"10.0.0.0/33\"]}]}]", "endpoint e1: OutBoundNAT ExceptionList: expected an IPv4 prefix length"},
		{"route without prefix", "[{\"ID\":\"e1\",\"IPAddress\":\"10.0.0.9\",\"Policies\":[{\"Type\":\"ROUTE\",\"NeedEncap\":true}]}]", "endpoint e1: ROUTE policy without DestinationPrefix"},
		{"mixed", "[{\"ID\":\"e1\",\"IPAddress\":\"10.0.0.9\"},\n{\"Name\":\"n\",\"Subnets\":[]}]", "x:2: element is an HNS network but the file started with endpoints"},
		{"unknown", "[{\"Foo\":1}]", "neither an HNS network"},
		{"empty", "  ", "x:1: empty file"},
		{"trailing", "[{\"ID\":\"e1\",\"IPAddress\":\"10.0.0.9\"}] x", "invalid JSON"},
		{"scalar", "42", "expected a JSON array or object"},
		{"exception string", "[{\"ID\":\"e1\",\"IPAddress\":\"10.0.0.9\",\"Policies\":[{\"Type\":\"OutBoundNAT\",\"ExceptionList\":\"System.Object[]\"}]}]", "ExceptionList is the string \"System.Object[]\""},
		{"network without name", "[{\"Subnets\":[{\"AddressPrefix\":\"10.0.0.0/24\"}]}]", "network without a Name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseHNS("x", []byte(tc.in))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
		})
	}
}

func TestParseKeepalivedReal(t *testing.T) {
	m1, err := ParseKeepalived("m1", readTestdata(t, "real/master1.keepalived.data"))
	if err != nil {
		t.Fatal(err)
	}
	m3, err := ParseKeepalived("m3", readTestdata(t, "real/master3.keepalived.data"))
	if err != nil {
		t.Fatal(err)
	}
	if m1.RouterID != "LVS_WIN_GW_1" || len(m1.Instances) != 1 || m1.Instances[0].State != "BACKUP" || m1.Instances[0].Priority != 150 || m1.Instances[0].Preempt {
		t.Errorf("master1 %+v", m1)
	}
	in := m3.Instances[0]
	if in.State != "MASTER" || in.VRID != 188 || in.Interface != "eth1" || len(in.VIPs) != 1 || in.VIPs[0].Addr.String() != "10.160.11.1" || in.VIPs[0].Len != 24 || in.VIPs[0].Dev != "eth1" {
		t.Errorf("master3 %+v", in)
	}
	for _, tc := range []struct{ in, want string }{
		{"hello\n", "x:1: no \"------< VRRP Topology >------\" section"},
		{"------< VRRP Topology >------\n VRRP Instance = VI_1\n   State = SLEEPY\n", "x:3: State of VI_1: expected MASTER"},
		{"------< VRRP Topology >------\n VRRP Instance = VI_1\n   State = MASTER\n", "x:2: VRRP instance VI_1 has no Virtual Router ID line"},
		{"------< VRRP Topology >------\n VRRP Instance = VI_1\n   Virtual Router ID = 300\n", "x:3: Virtual Router ID of VI_1: expected 1-255"},
		{"------< VRRP Topology >------\n VRRP Instance = VI_1\n   State = MASTER\n   Virtual Router ID = 3\n   Virtual IP (1):\n     10.0.0.999/24 dev eth1\n", "x:6: virtual IP of VI_1"},
	} {
		if _, err := ParseKeepalived("x", []byte(tc.in)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("error %v, want %q", err, tc.want)
		}
	}
}
