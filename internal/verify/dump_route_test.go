package verify

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func readTestdata(t testing.TB, rel string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "verify", rel))
	if err != nil {
		t.Fatalf("read testdata: %v", err)
	}
	return data
}

func TestParseRouteNSeedTables(t *testing.T) {
	d, err := ParseRouteN("master1.route-n.txt", readTestdata(t, "seed/master1.route-n.txt"))
	if err != nil {
		t.Fatalf("seed master1 table: %v", err)
	}
	if len(d.Routes) != 18 || d.Partial {
		t.Fatalf("got %d routes (partial %t), want 18 complete", len(d.Routes), d.Partial)
	}
	tab := NewTable(d.Routes)
	for _, tc := range []struct {
		dst, want string
		typ       RouteType
		kind      DevKind
	}{
		{"8.8.8.8", "0.0.0.0/0 via 172.16.126.1 dev eth0", RouteUnicast, DevNIC},
		{"10.161.40.82", "10.161.40.82/32 dev cali1e2a8bc209e", RouteUnicast, DevPod},
		{"10.161.40.83", "blackhole 10.161.40.64/26", RouteBlackhole, DevNone},
		{"10.167.99.5", "10.167.99.0/26 via 100.100.126.208 dev tunl0", RouteUnicast, DevIPIP},
		{"100.100.127.9", "100.100.126.0/23 dev eth1", RouteUnicast, DevNIC},
	} {
		a, _ := ParseAddr(tc.dst)
		r := tab.Lookup(a)
		if r == nil || r.String() != tc.want || r.Type != tc.typ || r.Kind != tc.kind {
			t.Errorf("lookup %s = %v, want %s", tc.dst, r, tc.want)
		}
	}
	for _, f := range []string{"seed/master3.route-n.txt", "seed/master1-after-keepalived.route-n.txt"} {
		d, err := ParseRouteN(f, readTestdata(t, f))
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if !d.Partial || len(d.Routes) != 2 {
			t.Errorf("%s: %d routes, partial %t; want 2 and partial (the seed elides with ...)", f, len(d.Routes), d.Partial)
		}
	}
}

func TestParseRouteNErrors(t *testing.T) {
	hdr := "Kernel IP routing table\nDestination     Gateway         Genmask         Flags Metric Ref    Use Iface\n"
	for _, tc := range []struct {
		name, in, want string
	}{
		{"bad genmask", string(readTestdata(t, "broken/bad-genmask.route-n.txt")), "x:4: Genmask 255.0.255.0 is not a contiguous netmask"},
		{"no header", "0.0.0.0 1.2.3.4 0.0.0.0 UG 0 0 0 eth0\n", "x:1: expected the route -n header"},
		{"columns", hdr + "0.0.0.0 1.2.3.4 0.0.0.0 UG 0 0 eth0\n", "x:3: expected 8 columns"},
		{"host bits", hdr + "10.0.0.1 0.0.0.0 255.255.255.0 U 0 0 0 eth0\n", "x:3: Destination 10.0.0.1 has bits outside Genmask"},
		{"flag", hdr + "10.0.0.0 0.0.0.0 255.255.255.0 UZ 0 0 0 eth0\n", "x:3: Flags: unknown flag 'Z'"},
		{"gateway flag", hdr + "10.0.0.0 1.2.3.4 255.255.255.0 U 0 0 0 eth0\n", "x:3: Flags \"U\" and Gateway 1.2.3.4 disagree"},
		{"duplicate", hdr + "10.0.0.0 0.0.0.0 255.255.255.0 U 0 0 0 eth0\n10.0.0.0 1.2.3.4 255.255.255.0 UG 0 0 0 eth1\n", "x:4: contradictory dump: a second route for 10.0.0.0/24 with metric 0 (first at line 3)"},
		{"address", hdr + "10.0.0.300 0.0.0.0 255.255.255.0 U 0 0 0 eth0\n", "x:3: Destination: expected an IPv4 address"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseRouteN("x", []byte(tc.in))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want it to contain %q", err, tc.want)
			}
		})
	}
	// A route that is not up is noted, not modelled.
	d, err := ParseRouteN("x", []byte(hdr+"10.0.0.0 0.0.0.0 255.255.255.0 H 0 0 0 eth0\n"))
	if err != nil || len(d.Routes) != 0 || len(d.Notes) != 1 {
		t.Fatalf("down route: %v %v %v", err, d.Routes, d.Notes)
	}
}

func TestParseIPRoute(t *testing.T) {
	d, err := ParseIPRoute("master3.ip-route.txt", readTestdata(t, "real/master3.ip-route.txt"))
	if err != nil {
		t.Fatalf("real ip route output: %v", err)
	}
	if len(d.Routes) != 2 || d.Routes[0].String() != "10.160.11.0/24 dev eth1" || d.Routes[0].Src.String() != "10.160.11.1" {
		t.Fatalf("routes %v", d.Routes)
	}
	in := `default via 172.16.126.1 dev eth0 proto static metric 100
blackhole 10.161.40.64/26 proto bird
10.161.40.82 dev cali1e2a8bc209e scope link
10.164.136.0/26 via 100.100.126.204 dev tunl0 proto bird onlink
unreachable 10.9.0.0/16 metric 5
10.244.1.0/24 via 10.244.1.0 dev flannel.1 onlink
10.5.0.0/16 proto bird
	nexthop via 100.100.126.203 dev eth1 weight 1
	nexthop via 100.100.126.204 dev eth1 weight 1
10.6.0.0/16 via 100.100.126.203 dev eth1 table 100
local 10.160.11.1 dev eth1 table local proto kernel scope host src 10.160.11.1
broadcast 10.160.11.255 dev eth1 table local proto kernel scope link src 10.160.11.1
fe80::/64 dev eth1 proto kernel metric 256 pref medium
172.16.126.0/24 dev eth0 proto kernel scope link src 172.16.126.202 mtu lock 1400
`
	d, err = ParseIPRoute("x", []byte(in))
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	var got []string
	for _, r := range d.Routes {
		got = append(got, r.String())
	}
	want := []string{"0.0.0.0/0 via 172.16.126.1 dev eth0", "blackhole 10.161.40.64/26", "10.161.40.82/32 dev cali1e2a8bc209e",
		"10.164.136.0/26 via 100.100.126.204 dev tunl0", "unreachable 10.9.0.0/16", "10.244.1.0/24 via 10.244.1.0 dev flannel.1",
		"10.5.0.0/16 via 100.100.126.203 dev eth1", "172.16.126.0/24 dev eth0"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("routes\n got %q\nwant %q", got, want)
	}
	if len(d.Local) != 1 || d.Local[0].String() != "10.160.11.1" {
		t.Errorf("local addresses %v", d.Local)
	}
	if d.Routes[5].Kind != DevVXLAN || d.Routes[3].Kind != DevIPIP || d.Routes[2].Kind != DevPod {
		t.Errorf("device kinds %v %v %v", d.Routes[5].Kind, d.Routes[3].Kind, d.Routes[2].Kind)
	}
	if len(d.Notes) != 3 { // multipath, table 100, IPv6
		t.Errorf("notes %q", d.Notes)
	}
	for _, tc := range []struct{ in, want string }{
		{"10.0.0.0/24 via 10.0.0.300 dev eth0\n", "x:1: via: expected an IPv4 address"},
		{"10.0.0.0/24 dev eth0 frobnicate 3\n", "x:1: unknown keyword \"frobnicate\""},
		{"10.0.0.1/24 dev eth0\n", "x:1: destination 10.0.0.1/24 has host bits set"},
		{"10.0.0.0/24 dev\n", "x:1: keyword \"dev\" without a value"},
		{"\tnexthop via 1.2.3.4 dev eth0\n", "x:1: \"nexthop\" line without a multipath route"},
		{string(readTestdata(t, "broken/duplicate.ip-route.txt")), "x:2: contradictory dump: a second route for 10.160.11.0/24"},
		{"10.5.0.0/16 proto bird\n", "x:1: route 10.5.0.0/16 has neither via nor dev"},
	} {
		if _, err := ParseIPRoute("x", []byte(tc.in)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseIPRoute(%q) error %v, want %q", tc.in, err, tc.want)
		}
	}
}

func TestTableLPM(t *testing.T) {
	tab := NewTable(nil)
	add := func(p string, via string, metric int) {
		pp, _ := ParsePrefix(p)
		a, _ := ParseAddr(via)
		tab.Add(Route{Dst: pp, Via: a, Metric: metric})
	}
	add("0.0.0.0/0", "1.1.1.1", 0)
	add("10.0.0.0/8", "2.2.2.2", 0)
	add("10.1.0.0/16", "3.3.3.3", 10)
	add("10.1.0.0/16", "4.4.4.4", 5) // lower metric wins
	add("10.1.0.0/16", "5.5.5.5", 20)
	for _, tc := range []struct{ dst, via string }{
		{"10.1.2.3", "4.4.4.4"}, {"10.2.0.1", "2.2.2.2"}, {"11.0.0.1", "1.1.1.1"},
	} {
		a, _ := ParseAddr(tc.dst)
		if r := tab.Lookup(a); r == nil || r.Via.String() != tc.via {
			t.Errorf("Lookup(%s) = %v, want via %s", tc.dst, r, tc.via)
		}
	}
	// Layers: the longest match wins across tables, the earlier table on a tie.
	local := NewTable(nil)
	pp, _ := ParsePrefix("10.1.0.0/16")
	local.Add(Route{Dst: pp, Dev: "cni0", Kind: DevBridge})
	a, _ := ParseAddr("10.1.9.9")
	if r, i := (layers{local, tab}).lookup(a); r == nil || r.Dev != "cni0" || i != 0 {
		t.Errorf("layered tie: %v from %d", r, i)
	}
	b, _ := ParseAddr("10.7.0.1")
	if r, i := (layers{local, tab}).lookup(b); r == nil || r.Via.String() != "2.2.2.2" || i != 1 {
		t.Errorf("layered longest: %v from %d", r, i)
	}
}
