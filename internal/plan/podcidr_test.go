package plan

import (
	"net/netip"
	"testing"

	"github.com/kubewin/kubewin/pkg/api/v1alpha1"
)

// Hand-computed range-allocator outcomes: existing CIDRs and an overlapping service CIDR are
// occupied first, then nodes without podCIDR take the lowest free slot from nextCandidate 0
// in spec order.
func TestPodCIDRAllocation(t *testing.T) {
	type want struct{ cidr, source string }
	cases := []struct {
		name     string
		clusters []string
		service  string
		mask     int
		podCIDRs []string // per node, "" = allocate
		want     []want
	}{
		{"fill holes in spec order", []string{"10.0.0.0/22"}, "10.96.0.0/16", 24,
			[]string{"10.0.1.0/24", "", "", ""},
			[]want{{"10.0.1.0/24", "spec"}, {"10.0.0.0/24", "allocated"}, {"10.0.2.0/24", "allocated"}, {"10.0.3.0/24", "allocated"}}},
		{"service CIDR inside the cluster CIDR is skipped", []string{"10.0.0.0/22"}, "10.0.0.0/24", 24,
			[]string{"", ""},
			[]want{{"10.0.1.0/24", "allocated"}, {"10.0.2.0/24", "allocated"}}},
		{"a wider spec CIDR occupies every slot it covers", []string{"10.0.0.0/22"}, "10.96.0.0/16", 24,
			[]string{"", "10.0.0.0/23", ""},
			[]want{{"10.0.2.0/24", "allocated"}, {"10.0.0.0/23", "spec"}, {"10.0.3.0/24", "allocated"}}},
		{"spec CIDR in a second cluster CIDR is kept and not occupied", []string{"10.0.0.0/23", "10.9.0.0/16"}, "10.96.0.0/16", 24,
			[]string{"10.9.7.0/24", "", ""},
			[]want{{"10.9.7.0/24", "spec"}, {"10.0.0.0/24", "allocated"}, {"10.0.1.0/24", "allocated"}}},
		{"node mask /26", []string{"10.0.0.0/24"}, "10.96.0.0/16", 26,
			[]string{"10.0.0.64/26", "", ""},
			[]want{{"10.0.0.64/26", "spec"}, {"10.0.0.0/26", "allocated"}, {"10.0.0.128/26", "allocated"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var nodes []v1alpha1.Node
			for i, pc := range tc.podCIDRs {
				nodes = append(nodes, lnx("n"+string(rune('a'+i)), "192.168.0."+string(rune('1'+i)), pc))
			}
			c := small(v1alpha1.DesignFlannelHostGW, "flannel", nodes...)
			c.Spec.Networking.PodCIDRs = tc.clusters
			c.Spec.Networking.ServiceCIDR = tc.service
			c.Spec.Networking.NodeCIDRMaskSize = tc.mask
			p, err := New(c)
			if err != nil {
				t.Fatal(err)
			}
			for i, w := range tc.want {
				n := p.Nodes[i] // names sort like spec order here
				if n.PodCIDR != w.cidr || n.PodCIDRSource != w.source {
					t.Errorf("%s: %s (%s), want %s (%s)", n.Name, n.PodCIDR, n.PodCIDRSource, w.cidr, w.source)
				}
			}
		})
	}
}

func TestPodCIDRErrors(t *testing.T) {
	cases := []struct {
		name      string
		clusters  []string
		service   string
		podCIDRs  []string
		field     string
		fragments []string
	}{
		{"exhausted", []string{"10.0.0.0/23"}, "10.96.0.0/16", []string{"", "", ""},
			"spec.networking.podCIDRs[0]", []string{"no free /24 left in 10.0.0.0/23", "node nc"}},
		{"exhausted by the service CIDR", []string{"10.0.0.0/23"}, "10.0.0.0/24", []string{"", ""},
			"spec.networking.podCIDRs[0]", []string{"node nb"}},
		{"outside", []string{"10.0.0.0/16"}, "10.96.0.0/16", []string{"10.1.0.0/24"},
			"spec.nodes[0].podCIDR", []string{"outside every cluster CIDR"}},
		{"overlap between nodes", []string{"10.0.0.0/16"}, "10.96.0.0/16", []string{"10.0.0.0/23", "10.0.1.0/24"},
			"spec.nodes[1].podCIDR", []string{"overlaps 10.0.0.0/23 of node na"}},
		{"overlap with services", []string{"10.0.0.0/16"}, "10.0.5.0/24", []string{"10.0.5.0/24"},
			"spec.nodes[0].podCIDR", []string{"service CIDR"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var nodes []v1alpha1.Node
			for i, pc := range tc.podCIDRs {
				nodes = append(nodes, lnx("n"+string(rune('a'+i)), "192.168.0."+string(rune('1'+i)), pc))
			}
			c := small(v1alpha1.DesignFlannelHostGW, "flannel", nodes...)
			c.Spec.Networking.PodCIDRs = tc.clusters
			c.Spec.Networking.ServiceCIDR = tc.service
			_, err := New(c)
			wantFieldError(t, err, tc.field, tc.fragments...)
		})
	}
}

// The allocator's rotation: a released slot is not reused until the scan comes round to it,
// and the scan wraps from the last slot to the first. Release is only reachable through the
// upstream set here, the planner never releases.
func TestAllocatorRotationAndWrap(t *testing.T) {
	a, err := newPodCIDRAllocator(netip.MustParsePrefix("10.0.0.0/22"), 24)
	if err != nil {
		t.Fatal(err)
	}
	next := func() string {
		p, err := a.allocateNext()
		if err != nil {
			return err.Error()
		}
		return p.String()
	}
	steps := []struct {
		release string
		want    string
	}{
		{"", "10.0.0.0/24"},
		{"", "10.0.1.0/24"},
		{"10.0.0.0/24", "10.0.2.0/24"}, // slot 0 freed, but nextCandidate is 2
		{"", "10.0.3.0/24"},
		{"", "10.0.0.0/24"}, // nextCandidate wrapped 3 -> 0
		{"", "CIDR allocation failed; there are no remaining CIDRs left to allocate in the accepted range"},
		{"10.0.2.0/24", "10.0.2.0/24"}, // nextCandidate 1: scan 1 (used) -> 2
	}
	for i, s := range steps {
		if s.release != "" {
			if err := a.set.Release(toIPNet(netip.MustParsePrefix(s.release))); err != nil {
				t.Fatal(err)
			}
		}
		if got := next(); got != s.want {
			t.Errorf("step %d: got %s, want %s", i, got, s.want)
		}
	}
}

func TestAllocatorRejectsHugeRanges(t *testing.T) {
	if _, err := newPodCIDRAllocator(netip.MustParsePrefix("0.0.0.0/0"), 32); err == nil {
		t.Error("2^32 node CIDRs accepted")
	}
	if _, err := newPodCIDRAllocator(netip.MustParsePrefix("10.0.0.0/16"), 8); err == nil {
		t.Error("mask shorter than the cluster CIDR accepted")
	}
}
