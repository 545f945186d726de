package plan

import (
	"bytes"
	"errors"
	"testing"

	"github.com/kubewin/kubewin/pkg/api/v1alpha1"
)

// FuzzNew feeds odd values into the fields the planner parses itself; New must answer with a
// plan or a v1alpha1.ErrorList, never panic, and be deterministic.
func FuzzNew(f *testing.F) {
	f.Add("10.0.0.0/16", "10.96.0.0/16", 24, "10.0.5.0/24", "", "ltsc2022", "upstream-tor/keepalived", 1, 255, 255, "100ms", 3, "192.168.0.250")
	f.Add("10.0.0.0/30", "10.0.0.0/31", 32, "10.0.0.0/32", "10.0.0.1/32", "17763", "flannel/vxlan", 0, 0, 0, "1s", 2, "")
	f.Add("0.0.0.0/0", "::/0", 0, "garbage", "10.0.0.0/8", "", "host-gw", 300, -1, 1000, "-5s", 9, "x")
	f.Add("10.0.0.0/8", "10.0.0.0/8", 8, "10.0.0.0/8", "", "10.0.26100.1", "upstream-tor/router", 255, 255, 1, "0.001s", 3, "1.2.3.4/33")
	f.Fuzz(func(t *testing.T, cluster, service string, mask int, winCIDR, linCIDR, build, design string,
		first, last, vpi int, advert string, vrrp int, routerVIP string) {
		nodes := []v1alpha1.Node{
			lnx("m1", "192.168.0.11", linCIDR),
			lnx("m2", "192.168.0.12", ""),
			win("w1", "192.168.0.21", build, winCIDR),
		}
		c := small(v1alpha1.NetworkDesign(design), "flannel", nodes...)
		c.Spec.Networking.PodCIDRs = []string{cluster}
		c.Spec.Networking.ServiceCIDR = service
		c.Spec.Networking.NodeCIDRMaskSize = mask
		c.Spec.TorRouter = &v1alpha1.TorRouter{IP: routerVIP}
		g := gwGroup("gw", "m1", "m2")
		g.VRIDRange = &v1alpha1.Range{First: first, Last: last}
		g.VIPsPerInstance, g.AdvertInterval, g.VRRPVersion = vpi, advert, vrrp
		g.RouterVIPs = []string{routerVIP}
		c.Spec.GatewayGroups = []v1alpha1.GatewayGroup{g}
		p, err := New(c)
		if err != nil {
			var el v1alpha1.ErrorList
			if !errors.As(err, &el) || len(el) == 0 {
				t.Fatalf("error %v (%T) is not a non-empty ErrorList", err, err)
			}
			return
		}
		a, err1 := p.JSON()
		p2, _ := New(c)
		b, err2 := p2.JSON()
		if err1 != nil || err2 != nil || !bytes.Equal(a, b) {
			t.Fatal("plan.json not deterministic")
		}
	})
}

func FuzzLayoutGatewayGroup(f *testing.F) {
	f.Add("10.0.0.0/16", 24, "10.0.7.0/24", "10.0.8.0/25", 1, 255, 255, 0.1, 3, "192.168.0.250", true)
	f.Add("10.0.0.0/0", 40, "x", "", 0, 0, 0, -1.0, 2, "", false)
	f.Add("255.255.255.0/24", 30, "255.255.255.252/30", "255.255.255.0/24", 255, 255, 1, 40.95, 3, "1.1.1.1/0", true)
	f.Fuzz(func(t *testing.T, cluster string, mask int, a, b string, first, last, vpi int, advert float64, vrrp int, rvip string, need bool) {
		in := GatewayLayoutInput{
			Name: "gw", Interface: "eth1",
			Members:     []GatewayMemberPlan{{Node: "m1", IP: "192.168.0.1", Priority: 100}},
			VRRPVersion: vrrp, AdvertIntervalSeconds: advert, VRIDRange: [2]int{first, last}, VIPsPerInstance: vpi,
			ClusterCIDRs: []string{cluster}, NodeCIDRMaskSize: mask, RouterVIPs: []string{rvip},
			WindowsNodes:       []WindowsPodCIDR{{"a", a}, {"b", b}},
			RouterVIPsRequired: need,
		}
		g, err := LayoutGatewayGroup(in)
		if err != nil {
			var el v1alpha1.ErrorList
			if !errors.As(err, &el) || len(el) == 0 {
				t.Fatalf("error %v (%T) is not a non-empty ErrorList", err, err)
			}
			return
		}
		checkLayoutInvariants(t, in, g)
	})
}
