//go:build linux

package gateway

import (
	"fmt"
	"net/netip"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubewin/kubewin/internal/render"
)

func TestKeepalivedAddresses(t *testing.T) {
	tests := []struct {
		name string
		conf string
		want string
	}{
		{"empty", "", "[]"},
		{"global_defs only", "global_defs {\n    router_id a\n}\n", "[]"},
		{"rendered shape", `vrrp_instance VI_1 {
    virtual_ipaddress {
        192.168.50.200 dev eth1
    }
    virtual_ipaddress_excluded {
        10.130.5.1/24 dev eth1
    }
}`, "[192.168.50.200/32@eth1 10.130.5.1/24@eth1(excluded)]"},
		{"anchor on lo with scope", "vrrp_instance X {\n virtual_ipaddress {\n  127.242.21.50/32 dev lo scope host\n }\n}\n", "[127.242.21.50/32@lo]"},
		{"braces on one line, comments", "vrrp_instance X { virtual_ipaddress { 10.0.0.1/24 dev e0 } ! 10.9.9.9 dev e0\n}\n# virtual_ipaddress {\n", "[10.0.0.1/24@e0]"},
		{"no dev", "virtual_ipaddress {\n 10.0.0.2\n}\n", "[10.0.0.2/32@]"},
		{"unreadable entry skipped", "virtual_ipaddress {\n not-an-address dev e0\n 10.0.0.3/33 dev e0\n 10.0.0.4/24 dev e0\n}\n", "[10.0.0.4/24@e0]"},
		{"nested block is not a VIP block", "vrrp_instance X {\n unicast_peer {\n  10.0.0.5\n }\n track_interface {\n  e0\n }\n}\n", "[]"},
		{"unbalanced closing brace", "}\n}\nvirtual_ipaddress {\n 10.0.0.6 dev e0\n}\n", "[10.0.0.6/32@e0]"},
		{"dev followed by brace", "virtual_ipaddress { 10.0.0.7 dev }\n", "[10.0.0.7/32@]"},
		{"ipv6", "virtual_ipaddress {\n fd00::1/64 dev e0\n}\n", "[fd00::1/64@e0]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := fmtAddrs(KeepalivedAddresses([]byte(tt.conf))); got != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
		})
	}
}

// TestKeepalivedAddressesOfRenderedConfig: what the controller reads back from an installed
// file is exactly the layout's addresses (the renderer is the only writer).
func TestKeepalivedAddressesOfRenderedConfig(t *testing.T) {
	cfg := testConfig()
	var nodes []*corev1.Node
	for i := range 6 { // two instances of up to 4 VIPs, each with a router VIP
		nodes = append(nodes, node(fmt.Sprintf("win%d", i), fmt.Sprintf("uid%d", i), i, []string{fmt.Sprintf("10.128.%d.0/24", i)}))
	}
	g, skipped, err := Layout(cfg, nodes)
	if err != nil || len(skipped) > 0 {
		t.Fatalf("layout: %v, skipped %v", err, skipped)
	}
	b, err := render.KeepalivedConfig(g, cfg.Members[0].Node)
	if err != nil {
		t.Fatal(err)
	}
	var want, got []string
	for _, in := range g.Instances {
		want = append(want, netip.MustParsePrefix(in.RouterVIP+"/32").String())
		for _, v := range in.VIPs {
			want = append(want, v.Address)
		}
	}
	for _, a := range KeepalivedAddresses(b) {
		if a.Dev == cfg.Interface {
			got = append(got, a.Prefix.String())
		}
	}
	if len(want) != 8 || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("addresses on %s read back: %v, layout: %v", cfg.Interface, got, want)
	}
}

func FuzzKeepalivedAddresses(f *testing.F) {
	f.Add("vrrp_instance X {\n virtual_ipaddress {\n  192.168.50.200 dev eth1\n }\n virtual_ipaddress_excluded {\n  10.130.5.1/24 dev eth1\n }\n}\n")
	f.Add("virtual_ipaddress { 10.0.0.1/24 dev e0 } ! c\n}}}{{{")
	f.Add("virtual_ipaddress {\n fd00::1/64 dev\n")
	f.Fuzz(func(t *testing.T, s string) {
		for _, a := range KeepalivedAddresses([]byte(s)) {
			if !a.Prefix.IsValid() {
				t.Fatalf("invalid prefix from %q", s)
			}
			if a.Dev == "{" || a.Dev == "}" {
				t.Fatalf("brace as device from %q", s)
			}
			// Same input, same answer.
			if fmtAddrs(KeepalivedAddresses([]byte(s))) != fmtAddrs(KeepalivedAddresses([]byte(s))) {
				t.Fatal("not deterministic")
			}
		}
	})
}

func fmtAddrs(as []KeepalivedAddress) string {
	out := "["
	for i, a := range as {
		if i > 0 {
			out += " "
		}
		out += a.Prefix.String() + "@" + a.Dev
		if a.Excluded {
			out += "(excluded)"
		}
	}
	return out + "]"
}
