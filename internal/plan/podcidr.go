package plan

import (
	"fmt"
	"net/netip"
	"slices"

	"k8s.io/kubernetes/pkg/controller/nodeipam/ipam/cidrset"

	"github.com/kubewin/kubewin/pkg/api/v1alpha1"
)

// Pod CIDR sources recorded in NodePlan.PodCIDRSource.
const (
	PodCIDRFromSpec      = "spec"
	PodCIDRAllocated     = "allocated"
	maxNodeCIDRsPerRange = 1 << 18 // e.g. /8 with /26 node CIDRs; bounds the allocator bitmap and Occupy time
)

// Pod CIDR allocation.
//
// Nodes without a podCIDR get the one kube-controller-manager's range allocator
// (--allocate-node-cidrs, --cidr-allocator-type=RangeAllocator) would give them. To be equal by
// construction rather than by imitation, the planner drives the allocator's own CidrSet
// (k8s.io/kubernetes/pkg/controller/nodeipam/ipam/cidrset, the version pinned in go.mod) in the
// order NewCIDRRangeAllocator and syncNode use it:
//
//  1. one CidrSet over the first cluster CIDR with --node-cidr-mask-size (kube-controller-manager
//     accepts one cluster CIDR per IP family and kubewin plans IPv4 only);
//  2. filterOutServiceRange: the service CIDR is Occupy()'d when it overlaps the cluster CIDR;
//  3. every node that already has spec.podCIDR is Occupy()'d (the allocator does this for the
//     initial node list before it processes any node);
//  4. every node without one gets AllocateNext(), in spec node order. AllocateNext scans from
//     nextCandidate, wraps at the end of the range, and sets nextCandidate to the slot after
//     the one it returned.
//
// What cannot be equal: a long-running kube-controller-manager keeps nextCandidate in memory,
// and the order in which it sees new nodes is informer order. The plan is therefore what a
// freshly started kube-controller-manager assigns when the nodes register in spec order — the
// usual case for nodes that are being added. Starting from nextCandidate 0 with every existing
// CIDR occupied, the scan can only wrap once the range is full, so inside one plan wrap-around
// shows up as exhaustion.
//
// A spec.podCIDR inside another cluster CIDR (Calico clusters may list several IPv4 pools) is
// accepted as given; kube-controller-manager itself would refuse a second IPv4 cluster CIDR.

// podCIDRAllocator is the allocator state for one plan.
type podCIDRAllocator struct {
	cluster netip.Prefix
	mask    int
	set     *cidrset.CidrSet
}

func newPodCIDRAllocator(cluster netip.Prefix, mask int) (*podCIDRAllocator, error) {
	if mask < cluster.Bits() || mask > 32 {
		return nil, fmt.Errorf("node CIDR mask /%d does not fit in cluster CIDR %s", mask, cluster)
	}
	if n := 1 << uint(mask-cluster.Bits()); n > maxNodeCIDRsPerRange {
		return nil, fmt.Errorf("/%d in %s gives %d node CIDRs; kubewin plans at most %d per cluster CIDR",
			mask, cluster, n, maxNodeCIDRsPerRange)
	}
	set, err := cidrset.NewCIDRSet(toIPNet(cluster), mask)
	if err != nil {
		return nil, err
	}
	return &podCIDRAllocator{cluster: cluster, mask: mask, set: set}, nil
}

// overlaps is the allocator's own test (Occupy rejects CIDRs that fail it).
func (a *podCIDRAllocator) overlaps(p netip.Prefix) bool {
	return a.cluster.Overlaps(p)
}

func (a *podCIDRAllocator) occupy(p netip.Prefix) error {
	return a.set.Occupy(toIPNet(p))
}

func (a *podCIDRAllocator) allocateNext() (netip.Prefix, error) {
	n, err := a.set.AllocateNext()
	if err != nil {
		return netip.Prefix{}, err
	}
	addr, _ := netip.AddrFromSlice(n.IP.To4())
	return netip.PrefixFrom(addr, a.mask), nil
}

// nodeCIDR is the pod CIDR decided for one spec node.
type nodeCIDR struct {
	prefix netip.Prefix
	source string
}

// allocatePodCIDRs returns one entry per spec node (zero prefix where nothing could be decided).
func allocatePodCIDRs(nodes []v1alpha1.Node, clusters []netip.Prefix, service netip.Prefix, mask int, errs *errorList) []nodeCIDR {
	out := make([]nodeCIDR, len(nodes))
	if len(clusters) == 0 {
		return out
	}
	alloc, err := newPodCIDRAllocator(clusters[0], mask)
	if err != nil {
		errs.add("spec.networking.nodeCIDRMaskSize", "%v", err)
		return out
	}
	if service.IsValid() && alloc.overlaps(service) {
		if err := alloc.occupy(service); err != nil {
			errs.add("spec.networking.serviceCIDR", "%v", err)
		}
	}

	type given struct {
		prefix netip.Prefix
		node   int
	}
	var fromSpec []given
	missing := 0
	for i, n := range nodes {
		if n.PodCIDR == "" {
			missing++
			continue
		}
		field := fmt.Sprintf("spec.nodes[%d].podCIDR", i)
		p, err := parseV4Prefix(n.PodCIDR)
		if err != nil {
			errs.add(field, "%v", err)
			continue
		}
		inside := -1
		for k, c := range clusters {
			if contains(c, p) {
				inside = k
				break
			}
		}
		switch {
		case inside < 0:
			errs.add(field, "%s is outside every cluster CIDR (%s)", p, prefixList(clusters))
			continue
		case service.IsValid() && service.Overlaps(p):
			errs.add(field, "%s overlaps the service CIDR %s", p, service)
			continue
		case inside == 0:
			if err := alloc.occupy(p); err != nil {
				errs.add(field, "%v", err)
				continue
			}
		}
		out[i] = nodeCIDR{prefix: p, source: PodCIDRFromSpec}
		fromSpec = append(fromSpec, given{p, i})
	}

	// Two nodes sharing addresses would route each other's pods to themselves; the allocator
	// would silently accept it, the planner does not.
	slices.SortFunc(fromSpec, func(a, b given) int { return comparePrefix(a.prefix, b.prefix) })
	for k := 1; k < len(fromSpec); k++ {
		prev, cur := fromSpec[k-1], fromSpec[k]
		if prev.prefix.Overlaps(cur.prefix) {
			errs.add(fmt.Sprintf("spec.nodes[%d].podCIDR", cur.node), "%s overlaps %s of node %s",
				cur.prefix, prev.prefix, nodes[prev.node].Name)
		}
	}

	for i, n := range nodes {
		if n.PodCIDR != "" {
			continue
		}
		p, err := alloc.allocateNext()
		if err != nil {
			errs.add("spec.networking.podCIDRs[0]",
				"no free /%d left in %s (%d node CIDRs) for node %s and %d more node(s) without podCIDR: %v",
				mask, clusters[0], 1<<uint(mask-clusters[0].Bits()), n.Name, missing-1, err)
			return out
		}
		missing--
		out[i] = nodeCIDR{prefix: p, source: PodCIDRAllocated}
	}
	return out
}

func prefixList(ps []netip.Prefix) string {
	s := ""
	for i, p := range ps {
		if i > 0 {
			s += ", "
		}
		s += p.String()
	}
	return s
}
