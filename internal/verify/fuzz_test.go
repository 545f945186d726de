package verify

import (
	"strings"
	"testing"
)

// The fuzzers check that no input panics or loops, and that what parses is self-consistent.

func addFiles(f *testing.F, files ...string) {
	for _, name := range files {
		f.Add(readTestdata(f, name))
	}
}

func FuzzParseRouteN(f *testing.F) {
	addFiles(f, "seed/master1.route-n.txt", "seed/master3.route-n.txt", "seed/master1-after-keepalived.route-n.txt",
		"broken/bad-genmask.route-n.txt", "broken/master1.route-n-block-overlap.txt")
	f.Add([]byte("Destination Gateway Genmask Flags MSS Window irtt Iface\n0.0.0.0 1.2.3.4 0.0.0.0 UG 0 0 0 eth0\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := ParseRouteN("fuzz", data)
		if err != nil {
			if _, ok := err.(*DumpError); !ok {
				t.Fatalf("error of type %T: %v", err, err)
			}
			return
		}
		for _, r := range d.Routes {
			if r.Dst.Addr&^mask(r.Dst.Len) != 0 {
				t.Fatalf("unmasked prefix %v", r.Dst)
			}
		}
		NewTable(d.Routes)
	})
}

func FuzzParseIPRoute(f *testing.F) {
	addFiles(f, "real/master3.ip-route.txt", "broken/node001.ip-route-asymmetric.txt", "broken/duplicate.ip-route.txt")
	f.Add([]byte("10.5.0.0/16 proto bird\n\tnexthop via 1.2.3.4 dev eth1 weight 1\nlocal 10.0.0.1 dev eth0 table local\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := ParseIPRoute("fuzz", data)
		if err != nil {
			if _, ok := err.(*DumpError); !ok {
				t.Fatalf("error of type %T: %v", err, err)
			}
			return
		}
		for _, r := range d.Routes {
			if r.Type == RouteUnicast && r.Via == 0 && r.Dev == "" {
				t.Fatalf("route without next hop accepted: %v", r)
			}
		}
	})
}

func FuzzParseHNS(f *testing.F) {
	addFiles(f, "seed/node009.endpoints.json", "seed/node009.endpoints-with-cbr0.utf16.json", "seed/node009.networks.json",
		"seed/node009.policylists.json", "seed/node009.endpoints-v2.json", "broken/node009.endpoints-depth2.json",
		"seed/node009.endpoints-policies.json")
	f.Add([]byte(`{"ID":"x","IPAddress":"10.0.0.5"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := ParseHNS("fuzz", data)
		if err != nil {
			if _, ok := err.(*DumpError); !ok {
				t.Fatalf("error of type %T: %v", err, err)
			}
			return
		}
		kinds := 0
		for _, n := range []int{len(d.Networks), len(d.Endpoints), len(d.PolicyLists)} {
			if n > 0 {
				kinds++
			}
		}
		if kinds > 1 {
			t.Fatalf("mixed kinds accepted")
		}
	})
}

func FuzzParseKeepalived(f *testing.F) {
	addFiles(f, "real/master1.keepalived.data", "real/master3.keepalived.data", "broken/master1.keepalived-also-master.data")
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := ParseKeepalived("fuzz", data)
		if err != nil {
			return
		}
		for _, in := range d.Instances {
			if in.VRID < 1 || in.VRID > 255 || !vrrpStates[in.State] {
				t.Fatalf("bad instance accepted: %+v", in)
			}
		}
	})
}

func FuzzParseDump(f *testing.F) {
	addFiles(f, "seed/master1.route-n.txt", "real/master3.ip-route.txt", "seed/node009.endpoints.json", "real/master3.keepalived.data")
	f.Fuzz(func(t *testing.T, data []byte) {
		ParseDump("node", "fuzz", data)
	})
}

func FuzzParseServices(f *testing.F) {
	f.Add([]byte(`[{"name":"web","clusterIP":"10.176.0.50","ports":[{"protocol":"TCP","port":80,"targetPort":8080,"nodePort":30500}],"backends":["10.160.3.10"],"externalTrafficPolicy":"Local"}]`))
	f.Add([]byte(`[{"name":"dns","clusterIP":"10.176.0.10","ports":[{"protocol":"UDP","port":53}],"backends":[]}]`))
	f.Add([]byte(`[{"name":"x","extra":1}]`))
	f.Add([]byte(`[`))
	f.Fuzz(func(t *testing.T, data []byte) {
		out, err := ParseServices("services.json", data)
		if err == nil && out == nil {
			t.Fatal("nil list without an error")
		}
		if err != nil && !strings.HasPrefix(err.Error(), "services.json:") {
			t.Fatalf("error without file and line: %v", err)
		}
	})
}
