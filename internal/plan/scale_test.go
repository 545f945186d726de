package plan

import (
	"testing"

	"github.com/kubewin/kubewin/internal/testgen"
	"github.com/kubewin/kubewin/pkg/api/v1alpha1"
)

// Generated clusters plan without errors; every fourth node's pod CIDR is allocated and, since
// the allocator fills holes in spec order, lands on the slot the generator left free.
func TestGeneratedClusters(t *testing.T) {
	for _, tc := range []struct{ linux, windows, groups int }{{8, 4, 0}, {40, 30, 3}, {400, 100, 2}} {
		c := testgen.Cluster(tc.linux, tc.windows, tc.groups)
		p := mustPlan(t, c)
		specCIDR := map[string]string{}
		for _, n := range c.Spec.Nodes {
			specCIDR[n.Name] = n.PodCIDR
		}
		allocated := 0
		for _, n := range p.Nodes {
			if n.PodCIDRSource == PodCIDRAllocated {
				allocated++
			}
			if (specCIDR[n.Name] == "") != (n.PodCIDRSource == PodCIDRAllocated) {
				t.Errorf("%s: source %s with spec podCIDR %q", n.Name, n.PodCIDRSource, specCIDR[n.Name])
			}
		}
		if want := (tc.linux + tc.windows) / 4; allocated != want {
			t.Errorf("%v: %d allocated, want %d", tc, allocated, want)
		}
		served := 0
		for _, g := range p.GatewayGroups {
			served += len(g.VIPs)
			checkLayoutInvariants(t, g.LayoutInput(p.Networking, g.WindowsNodes()), g)
		}
		if tc.groups > 0 && served != tc.windows {
			t.Errorf("%v: %d VIPs for %d Windows nodes", tc, served, tc.windows)
		}
	}
}

// BenchmarkPlan5000 plans the 5,000-node cluster (4,000 Linux, 1,000 Windows, 3 gateway
// groups) the render budget is stated for.
func BenchmarkPlan5000(b *testing.B) {
	c := testgen.Cluster(4000, 1000, 3)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := New(c); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPlan5000JSON adds writing plan.json.
func BenchmarkPlan5000JSON(b *testing.B) {
	c := testgen.Cluster(4000, 1000, 3)
	b.ReportAllocs()
	for b.Loop() {
		p, err := New(c)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := p.JSON(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPlan5000NoExport: Calico without exported routes, so each of the ~4,000 non-member
// Linux nodes gets a route per Windows pod CIDR via its instance's router VIP (one shared list).
func BenchmarkPlan5000NoExport(b *testing.B) {
	c := testgen.Cluster(4000, 1000, 3)
	f := false
	c.Spec.LinuxCNI.Calico = &v1alpha1.CalicoSettings{ExportsConnectedRoutes: &f}
	b.ReportAllocs()
	for b.Loop() {
		p, err := New(c)
		if err != nil {
			b.Fatal(err)
		}
		if routes := len(p.Nodes[0].Linux.Routes); routes != 1000 {
			b.Fatalf("%d routes on %s", routes, p.Nodes[0].Name)
		}
	}
}
