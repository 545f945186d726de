package render

import (
	"fmt"
	"net/netip"
	"regexp"
	"strings"
	"testing"

	"github.com/kubewin/kubewin/internal/plan"
)

var advertBlock = regexp.MustCompile(`(?s)    virtual_ipaddress \{\n(.*?)    \}\n`)

// advertised returns the virtual_ipaddress lines of every instance, in order.
func advertised(t *testing.T, cfg []byte) []string {
	t.Helper()
	var out []string
	for _, m := range advertBlock.FindAllSubmatch(cfg, -1) {
		out = append(out, strings.TrimSpace(string(m[1])))
	}
	return out
}

// Without a router VIP the advert must not depend on the instance's gateway VIPs: members that
// reload a few hundred milliseconds apart after a Windows node joined or left would otherwise
// advertise different addresses, drop each other's adverts and all become MASTER (measured in
// internal/gateway TestStaggeredReloadWithoutRouterVIP).
func TestAdvertAnchorIndependentOfGatewayVIPs(t *testing.T) {
	base := exampleGroup()
	base.Instances = []plan.VRRPInstancePlan{{Name: "win-gw_188", VRID: 188, VIPs: vips(3, 160, 11)}}
	layouts := map[string][]plan.VIPPlan{
		"three VIPs":      vips(3, 160, 11),
		"lowest removed":  vips(2, 160, 12),
		"lower one added": vips(4, 160, 10),
		"single VIP":      vips(1, 160, 13),
		"255 VIPs":        vips(255, 170, 0),
	}
	ns := keepalivedNetns(t, base.Interface)
	var want string
	for name, vs := range layouts {
		g := base
		g.Instances = []plan.VRRPInstancePlan{{Name: "win-gw_188", VRID: 188, VIPs: vs}}
		for _, m := range g.Members {
			cfg, err := KeepalivedConfig(g, m.Node)
			if err != nil {
				t.Fatalf("%s, %s: %v", name, m.Node, err)
			}
			adv := advertised(t, cfg)
			if len(adv) != 1 {
				t.Fatalf("%s, %s: %d virtual_ipaddress blocks, want 1:\n%s", name, m.Node, len(adv), cfg)
			}
			if want == "" {
				want = adv[0]
			}
			if adv[0] != want {
				t.Errorf("%s, %s advertises %q, want %q as in every other layout and member", name, m.Node, adv[0], want)
			}
			// Every gateway VIP is held (excluded), none is advertised.
			for _, v := range vs {
				if !strings.Contains(string(cfg), "    virtual_ipaddress_excluded {\n") ||
					!strings.Contains(string(cfg), "        "+v.Address+" dev eth1\n") {
					t.Errorf("%s, %s: gateway VIP %s not in virtual_ipaddress_excluded:\n%s", name, m.Node, v.Address, cfg)
				}
			}
		}
		cfg, _ := KeepalivedConfig(g, g.Members[0].Node)
		checkKeepalived(t, ns, cfg)
	}
	f := strings.Fields(want)
	if len(f) != 5 || f[1] != "dev" || f[2] != "lo" || f[3] != "scope" || f[4] != "host" {
		t.Fatalf("advertised %q, want <anchor>/32 dev lo scope host", want)
	}
	p, err := netip.ParsePrefix(f[0])
	if err != nil || p.Bits() != 32 || !netip.MustParsePrefix("127.128.0.0/9").Contains(p.Addr()) {
		t.Errorf("anchor %q is not a /32 in 127.128.0.0/9 (loopback, never lo's 127.0.0.1)", f[0])
	}
}

func TestAdvertAnchorPerInstance(t *testing.T) {
	withRouter := exampleGroup()
	withRouter.Instances[0].RouterVIP = "100.100.127.250"
	cfg, err := KeepalivedConfig(withRouter, "master1")
	if err != nil {
		t.Fatal(err)
	}
	if got := advertised(t, cfg); len(got) != 1 || got[0] != "100.100.127.250 dev eth1" || strings.Contains(string(cfg), " dev lo") {
		t.Errorf("with a router VIP the router VIP alone is advertised, got %q:\n%s", got, cfg)
	}

	two := exampleGroup()
	two.Instances = []plan.VRRPInstancePlan{
		{Name: "a", VRID: 188, VIPs: vips(2, 160, 11)},
		{Name: "b", VRID: 189, VIPs: vips(2, 160, 20)},
	}
	other := exampleGroup()
	other.Name, other.Interface = "win-gw2", "eth2"
	other.Instances = []plan.VRRPInstancePlan{{Name: "c", VRID: 188, VIPs: vips(1, 160, 30)}}
	cfg, err = KeepalivedConfigForNode([]plan.GatewayGroupPlan{two, other}, "master1")
	if err != nil {
		t.Fatal(err)
	}
	adv := advertised(t, cfg)
	if len(adv) != 3 || adv[0] == adv[1] || adv[0] == adv[2] || adv[1] == adv[2] {
		t.Errorf("instances of one node must advertise distinct anchors (other VRID, other group with the same VRID), got %q", adv)
	}
}

// Two instances whose anchors coincide are refused with the groups named, never rendered with a
// shared advert (kubewin check groups VRRP routers by advertised address).
func TestAdvertAnchorCollisionRejected(t *testing.T) {
	seen := map[netip.Addr]string{}
	var a, b string
	for i := 0; a == ""; i++ {
		name := fmt.Sprintf("gw%d", i)
		k := advertAnchor(name, 188)
		if prev, ok := seen[k]; ok {
			a, b = prev, name
		}
		seen[k] = name
	}
	g1, g2 := exampleGroup(), exampleGroup()
	g1.Name = a
	g2.Name, g2.Interface = b, "eth2"
	_, err := KeepalivedConfigForNode([]plan.GatewayGroupPlan{g1, g2}, "master1")
	if err == nil || !strings.Contains(err.Error(), "group "+a+" VRID 188 and group "+b+" VRID 188 would both advertise") {
		t.Fatalf("groups %s and %s share an anchor; err = %v", a, b, err)
	}
	// Either group alone renders.
	if _, err := KeepalivedConfig(g1, "master1"); err != nil {
		t.Fatal(err)
	}
}
