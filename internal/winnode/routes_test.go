package winnode

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kubewin/kubewin/pkg/api/v1alpha1"
)

// routeRepairs are the repairs of a pass that added routes.
func routeRepairs(rep Report) []Repair {
	var out []Repair
	for _, r := range rep.Repairs {
		if strings.HasPrefix(r.What, "added route ") {
			out = append(out, r)
		}
	}
	return out
}

func TestRoutesAddedAfterHostEndpoint(t *testing.T) {
	tests := []struct {
		design v1alpha1.NetworkDesign
		why    string
	}{
		{"", "missing (routes on the host endpoint's vNIC are lost with it)"},
		{v1alpha1.DesignHostGW, "missing (host routes are not persistent: a reboot removes them)"},
	}
	for _, tc := range tests {
		t.Run(designName(tc.design), func(t *testing.T) {
			nd := newNode(t, tc.design)
			rep := nd.healthyPass(t)
			nd.assertRoutes(t)
			// Every route after the networks and the attached host endpoint, whose vNIC the
			// upstream-ToR routes leave through.
			attach := nd.host.Index(0, "endpoint-attach", nd.desired.HostEndpoint.Name)
			lastNet := nd.host.Index(0, "network-create", nd.desired.Networks[len(nd.desired.Networks)-1].Name)
			if attach < 0 || lastNet < 0 {
				t.Fatalf("no network or host endpoint: %v", nd.host.Events())
			}
			for _, want := range nd.desired.Routes {
				if i := nd.host.Index(0, "route-add", want.DestinationPrefix); i < attach || i < lastNet {
					t.Errorf("route %s added at event %d, host endpoint attached at %d, network created at %d", want, i, attach, lastNet)
				}
			}
			added := routeRepairs(rep)
			if len(added) != len(nd.desired.Routes) {
				t.Fatalf("route repairs %+v, want one per route of %v", added, nd.desired.Routes)
			}
			for i, want := range nd.desired.Routes {
				if added[i].What != "added route "+want.String() || added[i].Why != tc.why {
					t.Errorf("repair %+v, want added route %s, %q", added[i], want, tc.why)
				}
			}
			if tc.design == "" {
				if want := "added route 10.160.0.0/12 via 10.160.11.1 on vEthernet (cbr0)"; added[0].What != want {
					t.Errorf("repair says %q, want %q", added[0].What, want)
				}
			}
			mark := len(nd.host.Events())
			if again := nd.healthyPass(t); len(again.Repairs) != 0 || len(nd.host.Events()) != mark {
				t.Errorf("second pass repaired %+v: %v", again.Repairs, nd.host.Events()[mark:])
			}
			nd.assertRoutes(t)
		})
	}
}

// The routes on the host endpoint's vNIC go with it; the next pass brings endpoint and routes
// back. After a reboot every route is gone.
func TestRoutesLostAndRestored(t *testing.T) {
	tests := []struct {
		name string
		lose func(t *testing.T, nd *node)
		// recreated: the pass creates the pod network again.
		recreated bool
	}{
		{"reboot", func(t *testing.T, nd *node) { nd.host.Reboot() }, true},
		{"host endpoint deleted", func(t *testing.T, nd *node) {
			for _, e := range nd.host.Endpoints() {
				if e.Name == nd.desired.HostEndpoint.Name {
					if err := nd.host.DeleteEndpoint(testCtx(t), e.ID); err != nil {
						t.Fatal(err)
					}
				}
			}
		}, false},
		{"pod network deleted", func(t *testing.T, nd *node) {
			n := networkNamed(nd.host.Networks(), nd.desired.ProxyNetwork)
			if err := nd.host.DeleteNetwork(testCtx(t), n.ID); err != nil {
				t.Fatal(err)
			}
		}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			nd := newNode(t, "")
			nd.healthyPass(t)
			tc.lose(t, nd)
			if have := nd.host.HostRoutes(); len(have) != 0 {
				t.Fatalf("routes %v survived", have)
			}
			mark := len(nd.host.Events())
			rep := nd.healthyPass(t)
			nd.assertNetwork(t, nd.n.Windows.AdapterName)
			nd.assertRoutes(t)
			nd.assertRunning(t)
			if created := nd.host.Index(mark, "network-create", nd.desired.ProxyNetwork) >= 0; created != tc.recreated {
				t.Errorf("pod network created again: %v, want %v: %v", created, tc.recreated, nd.host.Events()[mark:])
			}
			attach := nd.host.Index(mark, "endpoint-attach", nd.desired.HostEndpoint.Name)
			if add := nd.host.Index(mark, "route-add", nd.desired.Routes[0].DestinationPrefix); attach < 0 || add < attach {
				t.Errorf("route added at event %d, host endpoint attached at %d: %v", add, attach, nd.host.Events()[mark:])
			}
			if got := len(routeRepairs(rep)); got != len(nd.desired.Routes) {
				t.Errorf("repairs %+v, want %d routes added", rep.Repairs, len(nd.desired.Routes))
			}
			if again := nd.healthyPass(t); len(again.Repairs) != 0 {
				t.Errorf("second pass repaired %+v", again.Repairs)
			}
		})
	}
}

// A network re-created in a pass (the adapter was renamed) takes the host endpoint and its
// routes with it; the same pass puts them back.
func TestRoutesBackInThePassThatRecreatesTheNetwork(t *testing.T) {
	nd := newNode(t, "")
	nd.healthyPass(t)
	if err := nd.host.RenameAdapter(testCtx(t), nd.n.Windows.AdapterName, "Ethernet 3"); err != nil {
		t.Fatal(err)
	}
	mark := len(nd.host.Events())
	rep := nd.healthyPass(t)
	nd.assertRoutes(t)
	lost := nd.host.Index(mark, "route-lost", nd.desired.Routes[0].DestinationPrefix)
	added := nd.host.Index(mark, "route-add", nd.desired.Routes[0].DestinationPrefix)
	if lost < 0 || added < lost {
		t.Errorf("route lost at event %d, added at %d: %v", lost, added, nd.host.Events()[mark:])
	}
	if len(routeRepairs(rep)) != len(nd.desired.Routes) {
		t.Errorf("repairs %+v", rep.Repairs)
	}
}

// A route on an interface the host does not have is a problem of its own: the pass completes
// at once, adds the other routes, starts the services (they wait for the networks, not for the
// routes) and is unhealthy until the route can be added.
func TestRouteOnMissingInterface(t *testing.T) {
	nd := newNode(t, "")
	bad := HostRoute{DestinationPrefix: "10.99.0.0/16", NextHop: "10.160.11.1", InterfaceAlias: "vEthernet (nope)"}
	nd.r.Desired.Routes = append([]HostRoute{bad}, nd.desired.Routes...)
	nd.r.PassTimeout = 5 * time.Second
	start := time.Now()
	rep := nd.pass(t)
	if elapsed := time.Since(start); elapsed > time.Second {
		t.Errorf("pass took %v", elapsed)
	}
	want := `add route 10.99.0.0/16 via 10.160.11.1 on vEthernet (nope): interface "vEthernet (nope)" not found: ` +
		`no network interface with IPv4 has that name`
	if rep.Healthy || len(rep.Problems) != 1 || rep.Problems[0] != want {
		t.Fatalf("healthy %v, problems %q, want [%q]", rep.Healthy, rep.Problems, want)
	}
	nd.assertRoutes(t)
	nd.assertRunning(t)

	mark := len(nd.host.Events())
	rep = nd.pass(t)
	if rep.Healthy || rep.Reason() != want || len(rep.Repairs) != 0 || len(nd.host.Events()) != mark {
		t.Errorf("next pass: healthy %v, reason %q, repairs %+v, events %v", rep.Healthy, rep.Reason(), rep.Repairs, nd.host.Events()[mark:])
	}
	nd.r.Desired.Routes = nd.desired.Routes
	nd.healthyPass(t)
}

func TestMemHostRoutes(t *testing.T) {
	ctx := testCtx(t)
	h := NewMemHost(Adapter{Name: "Ethernet 2", MAC: "00-15-00-00-00-02", IPv4: []string{"100.100.126.216"}})
	n, err := h.CreateNetwork(ctx, NetworkSpec{Name: "cbr0", Type: "L2Bridge", Prefix: "10.160.11.0/24", Gateway: "10.160.11.1", AdapterName: "Ethernet 2"})
	if err != nil {
		t.Fatal(err)
	}
	ep, err := h.CreateEndpoint(ctx, n.ID, EndpointSpec{Name: "cbr0", IP: "10.160.11.2", PrefixLength: 24})
	if err != nil {
		t.Fatal(err)
	}
	onVNIC := HostRoute{DestinationPrefix: "10.160.0.0/12", NextHop: "10.160.11.1", InterfaceAlias: "vEthernet (cbr0)"}
	steps := []struct {
		name    string
		do      func() error
		wantErr string
		want    []HostRoute
	}{
		{"vNIC before the endpoint is attached", func() error { return h.AddRoute(ctx, onVNIC) },
			`interface "vEthernet (cbr0)" not found: no network interface with IPv4 has that name`, nil},
		{"attach", func() error { return h.AttachHostEndpoint(ctx, ep.ID) }, "", nil},
		{"vNIC of the attached endpoint, any case", func() error {
			r := onVNIC
			r.InterfaceAlias = "VETHERNET (CBR0)"
			return h.AddRoute(ctx, r)
		}, "", []HostRoute{onVNIC}},
		{"the same route again", func() error { return h.AddRoute(ctx, onVNIC) }, "", []HostRoute{onVNIC}},
		{"bound adapter: its IP is unbound", func() error {
			return h.AddRoute(ctx, HostRoute{DestinationPrefix: "10.161.0.0/16", NextHop: "100.100.126.1", InterfaceAlias: "Ethernet 2"})
		}, `interface "Ethernet 2" not found: no network interface with IPv4 has that name`, nil},
		{"the vSwitch's vNIC, unmasked prefix", func() error {
			return h.AddRoute(ctx, HostRoute{DestinationPrefix: "10.161.0.1/16", NextHop: "100.100.126.1", InterfaceAlias: "vEthernet (Ethernet 2)"})
		}, "", []HostRoute{onVNIC, {"10.161.0.0/16", "100.100.126.1", "vEthernet (Ethernet 2)"}}},
		{"no interface: Windows chooses", func() error {
			return h.AddRoute(ctx, HostRoute{DestinationPrefix: "10.162.0.0/24", NextHop: "100.100.126.203"})
		}, "", []HostRoute{onVNIC, {"10.161.0.0/16", "100.100.126.1", "vEthernet (Ethernet 2)"}, {"10.162.0.0/24", "100.100.126.203", ""}}},
		{"not IPv4", func() error {
			return h.AddRoute(ctx, HostRoute{DestinationPrefix: "fd00::/64", NextHop: "10.160.11.1"})
		},
			`destination "fd00::/64" is not an IPv4 prefix`, nil},
		{"adapter renamed: the vNIC keeps its name", func() error { return h.RenameAdapter(ctx, "Ethernet 2", "Ethernet 3") }, "",
			[]HostRoute{onVNIC, {"10.161.0.0/16", "100.100.126.1", "vEthernet (Ethernet 2)"}, {"10.162.0.0/24", "100.100.126.203", ""}}},
		{"route deleted", func() error {
			return h.DeleteRoute(ctx, HostRoute{DestinationPrefix: "10.162.0.0/24", NextHop: "100.100.126.203"})
		}, "", []HostRoute{onVNIC, {"10.161.0.0/16", "100.100.126.1", "vEthernet (Ethernet 2)"}}},
		{"endpoint deleted", func() error { return h.DeleteEndpoint(ctx, ep.ID) }, "",
			[]HostRoute{{"10.161.0.0/16", "100.100.126.1", "vEthernet (Ethernet 2)"}}},
		{"reboot", func() error { h.Reboot(); return nil }, "", []HostRoute{}},
	}
	var want []HostRoute
	for _, s := range steps {
		err := s.do()
		if s.wantErr != "" {
			if err == nil || err.Error() != s.wantErr {
				t.Fatalf("%s: err = %v, want %q", s.name, err, s.wantErr)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if s.want != nil {
			want = s.want
		}
		if have := h.HostRoutes(); !slices.Equal(have, want) {
			t.Fatalf("%s: routes %v, want %v", s.name, have, want)
		}
	}

	// Route calls are not HNS calls: a hanging HNS does not block them.
	h.HangHNS(true)
	short, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	if err := h.AddRoute(short, HostRoute{DestinationPrefix: "10.163.0.0/16", NextHop: "100.100.126.1", InterfaceAlias: "Ethernet 3"}); err != nil {
		t.Fatal(err)
	}
	if rs, err := h.Routes(short); err != nil || len(rs) != 1 {
		t.Fatalf("routes %v, %v", rs, err)
	}
}
