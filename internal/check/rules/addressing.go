package rules

import (
	"fmt"
	"net/netip"
	"sort"
	"strconv"
	"strings"

	"github.com/kubewin/kubewin/internal/check"
	"github.com/kubewin/kubewin/internal/plan"
	"github.com/kubewin/kubewin/internal/platform"
)

// namedPrefix is a CIDR with what it is.
type namedPrefix struct {
	p     netip.Prefix
	what  string
	field string
	node  string
}

func planPrefix(s string) (netip.Prefix, bool) {
	p, err := netip.ParsePrefix(s)
	if err != nil {
		return netip.Prefix{}, false
	}
	return p.Masked(), true
}

// firstAddr returns the first host address of p (network + 1); second is network + 2.
func nthAddr(p netip.Prefix, n int) netip.Addr {
	a := p.Masked().Addr()
	for i := 0; i < n; i++ {
		a = a.Next()
	}
	return a
}

// usableAddrs is the number of pod addresses in a pod CIDR after the network and broadcast
// addresses, the gateway (.1) and the host endpoint (.2).
func usableAddrs(p netip.Prefix) int {
	host := p.Addr().BitLen() - p.Bits()
	if host >= 30 {
		return 1 << 30
	}
	n := (1 << host) - 4
	if n < 0 {
		n = 0
	}
	return n
}

// defaultMaxPods is the kubelet's default maxPods.
const defaultMaxPods = 110

var addressingRules = []check.Rule{
	{
		ID: "KW1401", Name: "overlapping-cidrs", Family: check.FamilyAddressing, Severity: check.Error,
		Summary:   "Cluster, service and node subnets overlap",
		Why:       "An address in two ranges is routed to the wrong place: services shadow pods, or node traffic is sent into the pod network.",
		Fix:       "Choose disjoint pod, service and node ranges.",
		Reference: "kubernetes.io/docs/concepts/cluster-administration/networking",
		Check: func(ctx *check.Context, emit check.Emitter) {
			if ctx.Plan == nil {
				return
			}
			var all []namedPrefix
			for i, s := range ctx.Plan.Networking.ClusterCIDRs {
				if p, ok := planPrefix(s); ok {
					all = append(all, namedPrefix{p, "cluster CIDR", fmt.Sprintf("spec.networking.podCIDRs[%d]", i), ""})
				}
			}
			if p, ok := planPrefix(ctx.Plan.Networking.ServiceCIDR); ok {
				all = append(all, namedPrefix{p, "service CIDR", "spec.networking.serviceCIDR", ""})
			}
			for _, s := range ctx.Plan.Networking.NodeSubnets {
				if p, ok := planPrefix(s); ok {
					all = append(all, namedPrefix{p, "node subnet", "spec.networking.nodeSubnets", ""})
				}
			}
			for i := 0; i < len(all); i++ {
				for j := i + 1; j < len(all); j++ {
					a, b := all[i], all[j]
					if a.what == b.what || !overlaps(a.p, b.p) {
						continue
					}
					emit(check.Finding{Location: ctx.SpecLoc(b.field), Message: fmt.Sprintf("%s %s overlaps %s %s", b.what, b.p, a.what, a.p)})
				}
			}
		},
	},
	{
		ID: "KW1402", Name: "pod-cidr-outside-cluster-cidr", Family: check.FamilyAddressing, Severity: check.Error,
		Summary:   "A node's pod CIDR is not inside the cluster CIDR",
		Why:       "kube-proxy and the OutBoundNAT exceptions treat the cluster CIDR as pod space; pods outside it are NATed and unreachable by other nodes' routes.",
		Fix:       "Give the node a pod CIDR inside the cluster CIDR (or let kubewin allocate one).",
		Reference: "kube-controller-manager --cluster-cidr / node.spec.podCIDR",
		Check: func(ctx *check.Context, emit check.Emitter) {
			if ctx.Plan == nil {
				return
			}
			cc := parseAll(ctx.Plan.Networking.ClusterCIDRs)
			for _, n := range ctx.Plan.Nodes {
				p, ok := planPrefix(n.PodCIDR)
				if ok && !covered(p, cc) {
					emit(check.Finding{Location: ctx.PlanLoc("nodes."+n.Name+".podCIDR", n.Name),
						Message: fmt.Sprintf("pod CIDR %s of %s is outside %s", p, n.Name, joinPrefixes(cc))})
				}
			}
		},
	},
	{
		ID: "KW1403", Name: "pod-cidr-overlap", Family: check.FamilyAddressing, Severity: check.Error,
		Summary:   "Two nodes have overlapping pod CIDRs",
		Why:       "Both nodes hand out the same pod addresses; traffic for one pod reaches the other node.",
		Fix:       "Give each node its own pod CIDR (kubewin allocates them like the range allocator when left empty).",
		Reference: "kube-controller-manager range allocator",
		Check: func(ctx *check.Context, emit check.Emitter) {
			if ctx.Plan == nil {
				return
			}
			type np struct {
				p    netip.Prefix
				node string
			}
			var all []np
			for _, n := range ctx.Plan.Nodes {
				if p, ok := planPrefix(n.PodCIDR); ok {
					all = append(all, np{p, n.Name})
				}
			}
			// Sorted by start address, an overlap is always with a neighbour still open.
			sort.Slice(all, func(i, j int) bool {
				if c := all[i].p.Addr().Compare(all[j].p.Addr()); c != 0 {
					return c < 0
				}
				return all[i].p.Bits() < all[j].p.Bits()
			})
			var open []np
			for _, cur := range all {
				kept := open[:0]
				for _, o := range open {
					if o.p.Contains(cur.p.Addr()) {
						kept = append(kept, o)
					}
				}
				open = kept
				for _, o := range open {
					emit(check.Finding{Location: ctx.PlanLoc("nodes."+cur.node+".podCIDR", cur.node),
						Message: fmt.Sprintf("pod CIDR %s of %s overlaps %s of %s", cur.p, cur.node, o.p, o.node)})
				}
				open = append(open, cur)
			}
		},
	},
	{
		ID: "KW1404", Name: "calico-pool-unreserved", Family: check.FamilyAddressing, Severity: check.Error,
		Summary:   "A Windows pod CIDR lies in a Calico IP pool without a reservation",
		Why:       "Calico allocates /26 blocks anywhere in its pools and ignores node.spec.podCIDR, so Linux pods get addresses the Windows node also hands out.",
		Fix:       "Create a Calico IPReservation for the Windows pod CIDR, or shrink the pool to exclude it (spec.linuxCNI.calico.reservation).",
		Reference: refSeed000 + " §2.6 (Calico routes /26 blocks); docs.tigera.io IPReservation",
		Check: func(ctx *check.Context, emit check.Emitter) {
			if ctx.Plan == nil || ctx.Plan.Calico == nil {
				return
			}
			pools := parseAll(ctx.Plan.Calico.IPPools)
			reserved := parseAll(ctx.Plan.Calico.ReservedCIDRs)
			for _, n := range ctx.WindowsNodes() {
				p, ok := planPrefix(n.PodCIDR)
				if !ok || !anyOverlap(p, pools) {
					continue
				}
				if ctx.Plan.Calico.Reservation == "IPReservation" && covered(p, reserved) {
					continue
				}
				emit(check.Finding{Location: ctx.PlanLoc("calico.reservedCIDRs", n.Name),
					Message: fmt.Sprintf("Windows pod CIDR %s of %s is inside Calico pool %s and not reserved (reservation %q)", p, n.Name, joinPrefixes(pools), ctx.Plan.Calico.Reservation)})
			}
		},
	},
	{
		ID: "KW1405", Name: "gateway-not-first-address", Family: check.FamilyAddressing, Severity: check.Error,
		Summary:   "A Windows pod CIDR's gateway is not its first address",
		Why:       "The HNS network, the CNI conf and the gateway holder (keepalived VIP, ToR) must agree on .1; any other address leaves pods with a gateway nobody answers for.",
		Fix:       "Use the first address of the pod CIDR (network + 1) as the gateway and VIP.",
		Reference: refSeed000 + " §2.4.1/§2.6 (gateway 10.160.11.1 for 10.160.11.0/24)",
		Check: func(ctx *check.Context, emit check.Emitter) {
			for _, n := range ctx.WindowsNodes() {
				p, ok := planPrefix(n.PodCIDR)
				if !ok {
					continue
				}
				if g, err := netip.ParseAddr(n.Windows.Gateway); err != nil || g != nthAddr(p, 1) {
					emit(check.Finding{Location: ctx.PlanLoc("nodes."+n.Name+".windows.gateway", n.Name),
						Message: fmt.Sprintf("gateway %q of %s is not %s", n.Windows.Gateway, p, nthAddr(p, 1))})
				}
			}
			// Hand-written keepalived VIPs that sit in a Windows pod CIDR must be its .1, in
			// virtual_ipaddress or virtual_ipaddress_excluded alike.
			forVIPsOfWindowsPodCIDRs(ctx, func(k kInst, v check.KVIP, n *plan.NodePlan, p netip.Prefix) {
				if p.Contains(v.Prefix.Addr()) && v.Prefix.Addr() != nthAddr(p, 1) {
					emit(check.Finding{Location: check.Location{File: k.kc.File, Line: v.Line},
						Message: fmt.Sprintf("VIP %s is in %s's pod CIDR %s but is not its gateway %s", v.Raw, n.Name, p, nthAddr(p, 1))})
				}
			})
		},
	},
	{
		ID: "KW1406", Name: "host-endpoint-not-second-address", Family: check.FamilyAddressing, Severity: check.Warning,
		Summary:   "The Windows host endpoint (cbr0) is not the pod CIDR's second address",
		Why:       "win-bridge with IPAM makes .2 the endpoint gateway; a host endpoint elsewhere collides with a pod address or leaves node-to-pod traffic without a path.",
		Fix:       "Put the host endpoint at network + 2.",
		Reference: refSeed000 + " §2.4.1 (endpoint cbr0 = 10.160.11.2)",
		Check: func(ctx *check.Context, emit check.Emitter) {
			for _, n := range ctx.WindowsNodes() {
				p, ok := planPrefix(n.PodCIDR)
				if !ok || n.Windows.HostEndpointIP == "" {
					continue
				}
				if a, err := netip.ParseAddr(n.Windows.HostEndpointIP); err != nil || a != nthAddr(p, 2) {
					emit(check.Finding{Location: ctx.PlanLoc("nodes."+n.Name+".windows.hostEndpointIP", n.Name),
						Message: fmt.Sprintf("host endpoint %q of %s is not %s", n.Windows.HostEndpointIP, p, nthAddr(p, 2))})
				}
			}
		},
	},
	{
		ID: "KW1407", Name: "max-pods-exceeds-pod-cidr", Family: check.FamilyAddressing, Severity: check.Warning,
		Summary:   "A node may run more pods than its pod CIDR has addresses",
		Why:       "When the addresses run out, new pods stay in ContainerCreating with IPAM errors although the scheduler still sees capacity.",
		Fix:       "Lower --max-pods (maxPods) or give the nodes larger pod CIDRs (spec.networking.nodeCIDRMaskSize).",
		Reference: "kubelet --max-pods (default 110); kube-controller-manager --node-cidr-mask-size",
		Check: func(ctx *check.Context, emit check.Emitter) {
			for _, cl := range commandLines(ctx, platform.Kubelet) {
				np, ok := ctx.PlanNode(cl.Node)
				f, has := cl.Last("max-pods")
				if !ok || !has || !usable(f) {
					continue
				}
				n, err := strconv.Atoi(f.Value)
				p, pok := planPrefix(np.PodCIDR)
				if err == nil && pok && n > usableAddrs(p) {
					emit(check.Finding{Location: cl.Loc(&f), Message: fmt.Sprintf("--max-pods=%d but %s's pod CIDR %s has %d usable addresses", n, cl.Node, p, usableAddrs(p))})
				}
			}
			if ctx.Plan != nil && ctx.Plan.Networking.NodeCIDRMaskSize > 0 && len(commandLines(ctx, platform.Kubelet)) == 0 {
				bits := 32
				if cc := parseAll(ctx.Plan.Networking.ClusterCIDRs); len(cc) > 0 {
					bits = cc[0].Addr().BitLen()
				}
				if bits == 32 {
					p := netip.PrefixFrom(netip.IPv4Unspecified(), ctx.Plan.Networking.NodeCIDRMaskSize)
					if u := usableAddrs(p); u < defaultMaxPods {
						emit(check.Finding{Location: ctx.SpecLoc("spec.networking.nodeCIDRMaskSize"),
							Message: fmt.Sprintf("/%d pod CIDRs have %d usable addresses but the kubelet default maxPods is %d", ctx.Plan.Networking.NodeCIDRMaskSize, u, defaultMaxPods)})
					}
				}
			}
		},
	},
	{
		ID: "KW1408", Name: "windows-pod-cidr-unrouted", Family: check.FamilyAddressing, Severity: check.Error,
		Summary:   "Linux nodes (or the ToR) have no route to a Windows pod CIDR",
		Why:       "Without a route via the gateway holder, Linux pods' replies to Windows pods go to the default gateway and are lost.",
		Fix:       "Let kubewin render the routes for the design (host-gw routes, router VIP routes, or the ToR table).",
		Reference: refSeed000 + " §2.6; seed 003 (routes to every node's pod CIDR)",
		Check: func(ctx *check.Context, emit check.Emitter) {
			if ctx.Plan == nil {
				return
			}
			design := ctx.Plan.Cluster.Design
			for _, w := range ctx.WindowsNodes() {
				p, ok := planPrefix(w.PodCIDR)
				if !ok {
					continue
				}
				switch design {
				case "upstream-tor/router":
					if !routesCover(ctx.Plan.TorRoutes, p) {
						emit(check.Finding{Location: ctx.PlanLoc("torRoutes", w.Name), Message: fmt.Sprintf("the ToR route table has no route to %s (%s)", p, w.Name)})
					}
				case "host-gw":
					for _, l := range ctx.Plan.Nodes {
						if l.Linux != nil && !routesCover(l.Linux.Routes, p) {
							emit(check.Finding{Location: ctx.PlanLoc("nodes."+l.Name+".linux.routes", l.Name),
								Message: fmt.Sprintf("%s has no route to %s's pod CIDR %s", l.Name, w.Name, p)})
						}
					}
				case "upstream-tor/keepalived":
					if ctx.Plan.Calico != nil && ctx.Plan.Calico.ExportsConnectedRoutes {
						continue
					}
					for _, l := range ctx.Plan.Nodes {
						if l.Linux == nil || l.Linux.Gateway != nil {
							continue
						}
						if !routesCover(l.Linux.Routes, p) {
							emit(check.Finding{Location: ctx.PlanLoc("nodes."+l.Name+".linux.routes", l.Name),
								Message: fmt.Sprintf("%s has no route to %s's pod CIDR %s and the CNI does not export connected routes", l.Name, w.Name, p)})
						}
					}
				}
			}
		},
	},
	{
		ID: "KW1409", Name: "vip-prefix-mismatch", Family: check.FamilyAddressing, Severity: check.Warning,
		Summary:   "A gateway VIP's prefix length differs from the Windows pod CIDR's",
		Why:       "The VIP holder installs a connected route from the VIP's prefix; a different length routes too much or too little of the pod network to the Windows node.",
		Fix:       "Write the VIP with the pod CIDR's prefix (e.g. 10.160.11.1/24).",
		Reference: refSeed000 + " §2.6 (virtual_ipaddress 10.160.11.1/24)",
		Check: func(ctx *check.Context, emit check.Emitter) {
			// Excluded VIPs get the same connected route as advertised ones.
			forVIPsOfWindowsPodCIDRs(ctx, func(k kInst, v check.KVIP, n *plan.NodePlan, p netip.Prefix) {
				if v.Prefix.Addr() == nthAddr(p, 1) && v.Prefix.Bits() != p.Bits() {
					emit(check.Finding{Location: check.Location{File: k.kc.File, Line: v.Line},
						Message: fmt.Sprintf("VIP %s has /%d but %s's pod CIDR is %s", v.Raw, v.Prefix.Bits(), n.Name, p),
						Fix:     fmt.Sprintf("%s/%d", v.Prefix.Addr(), p.Bits())})
				}
			})
		},
	},
}

// forVIPsOfWindowsPodCIDRs calls fn for every valid keepalived VIP (advertised or excluded: both
// get a connected route) paired with every planned Windows node's pod CIDR.
func forVIPsOfWindowsPodCIDRs(ctx *check.Context, fn func(k kInst, v check.KVIP, n *plan.NodePlan, p netip.Prefix)) {
	for _, k := range allInstances(ctx) {
		for _, v := range k.in.AllVIPs() {
			if !v.Valid {
				continue
			}
			for _, n := range ctx.WindowsNodes() {
				if p, ok := planPrefix(n.PodCIDR); ok {
					fn(k, v, n, p)
				}
			}
		}
	}
}

func parseAll(ss []string) []netip.Prefix {
	var out []netip.Prefix
	for _, s := range ss {
		if p, ok := planPrefix(s); ok {
			out = append(out, p)
		}
	}
	return out
}

func anyOverlap(p netip.Prefix, list []netip.Prefix) bool {
	for _, l := range list {
		if l.Overlaps(p) {
			return true
		}
	}
	return false
}

func routesCover(rs []plan.Route, p netip.Prefix) bool {
	for _, r := range rs {
		if d, ok := planPrefix(r.Destination); ok && d.Bits() <= p.Bits() && d.Contains(p.Addr()) && !strings.HasPrefix(r.Destination, "0.0.0.0/0") {
			return true
		}
	}
	return false
}
