package verify

import (
	"fmt"
	"strings"

	"github.com/kubewin/kubewin/internal/plan"
	"github.com/kubewin/kubewin/pkg/api/v1alpha1"
)

// routingInputs are the spec's statements about routing the plan does not carry: how Calico
// programs and exports routes, and what the network beyond the default gateways routes back.
type routingInputs struct {
	// calicoVXLAN is the pools' vxlanMode (Always or CrossSubnet) when Calico encapsulates with
	// VXLAN: Felix programs the routes and BIRD does not run (nothing is exported).
	calicoVXLAN string
	// felixClusterRoutes: FelixConfiguration programClusterRoutes Enabled (Installation
	// clusterRoutingMode Felix). BIRD then keeps routes inside the IP pools out of the kernel.
	felixClusterRoutes bool
	ignoreLooseRPF     bool
	// strictAffinity is the spec's IPAMConfig strictAffinity (calico/hostprocess).
	strictAffinity bool
	pools          []Prefix
	// upstream are the prefixes the network beyond the default gateways routes back.
	upstream    []Prefix
	upstreamWhy string
}

// routingSettings reads the Calico inputs; it runs before nodes are added (Felix's check
// needs them).
func (m *Model) routingSettings(spec *v1alpha1.Cluster) {
	if cp := m.Plan.Calico; cp != nil {
		for _, s := range cp.IPPools {
			if p, err := ParsePrefix(s); err == nil {
				m.routing.pools = append(m.routing.pools, p)
			}
		}
	}
	if hp := m.Plan.HostProcess; hp != nil && hp.Calico != nil && hp.Calico.Overlay {
		// calico/hostprocess plans VXLAN pools as an Overlay network (vxlanMode Always unless
		// the spec says CrossSubnet).
		m.routing.calicoVXLAN = "Always"
	}
	if spec == nil || spec.Spec.LinuxCNI.Calico == nil {
		return
	}
	cs := spec.Spec.LinuxCNI.Calico
	m.routing.strictAffinity = cs.StrictAffinity != nil && *cs.StrictAffinity
	if cs.VXLANMode != "" && cs.VXLANMode != "Never" {
		m.routing.calicoVXLAN = cs.VXLANMode
	}
	m.routing.felixClusterRoutes = cs.ClusterRoutes == v1alpha1.CalicoClusterRoutesFelix
	m.routing.ignoreLooseRPF = cs.IgnoreLooseRPF
}

// readRouting settles the upstream routes once every node's NICs are known.
func (m *Model) readRouting(spec *v1alpha1.Cluster) error {
	if spec != nil && len(spec.Spec.Networking.UpstreamRoutes) > 0 {
		for i, s := range spec.Spec.Networking.UpstreamRoutes {
			p, err := ParsePrefix(s)
			if err != nil {
				return fmt.Errorf("spec networking.upstreamRoutes[%d]: %w", i, err)
			}
			m.routing.upstream = append(m.routing.upstream, p)
		}
		m.routing.upstreamWhy = "spec networking.upstreamRoutes"
		return nil
	}
	// Default: what the NIC gateways imply — each gateway routes its own subnet back.
	seen := map[Prefix]bool{}
	for _, n := range m.Nodes {
		for _, i := range n.Ifaces {
			if i.Gateway != 0 && i.Seg != nil && !seen[i.Seg.Prefix] {
				seen[i.Seg.Prefix] = true
				m.routing.upstream = append(m.routing.upstream, i.Seg.Prefix)
			}
		}
	}
	m.routing.upstreamWhy = "the subnets of the NICs that have a default gateway (spec networking.upstreamRoutes not set)"
	if len(m.routing.upstream) == 0 {
		return nil
	}
	var unrouted []string
	for _, s := range m.NodeSubnets {
		if _, ok := m.upstreamRoute(s.Addr); !ok {
			unrouted = append(unrouted, s.String())
		}
	}
	if len(unrouted) > 0 {
		m.Notes = append(m.Notes, fmt.Sprintf("the network beyond the default gateways is taken to route back only %s (no spec networking.upstreamRoutes): node subnet(s) %s have no gateway, so nothing outside reaches them — replies to a Windows pod's OutBoundNAT address there die; list what your network routes in networking.upstreamRoutes",
			m.upstreamList(), strings.Join(unrouted, ", ")))
	}
	return nil
}

// upstreamRoute returns the upstream prefix that covers a.
func (m *Model) upstreamRoute(a Addr) (Prefix, bool) {
	var best Prefix
	ok := false
	for _, p := range m.routing.upstream {
		if p.Contains(a) && (!ok || p.Len > best.Len) {
			best, ok = p, true
		}
	}
	return best, ok
}

func (m *Model) upstreamList() string {
	if len(m.routing.upstream) == 0 {
		return "nothing"
	}
	s := make([]string, len(m.routing.upstream))
	for i, p := range m.routing.upstream {
		s[i] = p.String()
	}
	return strings.Join(s, ", ")
}

// felixCheck marks a Linux node of a Calico cluster where Felix refuses to run: it exits
// fatally when net.ipv4.conf.all.rp_filter is 2 (loose) unless IgnoreLooseRPF is set
// (projectcalico/calico felix/dataplane/linux/int_dataplane.go reads
// /proc/sys/net/ipv4/conf/all/rp_filter: "Kernel's RPF check is set to 'loose'"). calico-node
// then fails its liveness probe and is restarted with BIRD, so the node neither programs
// Calico's routes nor exports any.
func (m *Model) felixCheck(n *Node) {
	if m.Plan.Cluster.LinuxCNI != "calico" || m.routing.ignoreLooseRPF || n.RPFilter["all"] < 2 {
		return
	}
	n.FelixDown = fmt.Sprintf("calico-node does not run on %s: the plan sets net.ipv4.conf.all.rp_filter = %d (loose) and Felix exits unless IgnoreLooseRPF is set (set loose mode on the interface instead)", n.Name, n.RPFilter["all"])
	m.Notes = append(m.Notes, n.FelixDown)
}

// cniPodGateway is the gateway the Windows CNI gives pods. win-bridge with an IPAM section
// (kubewin renders host-local; flannel's plugin adds one to its delegate) sets the endpoint
// gateway to the subnet's x.2 ("Calculate gateway for bridge network (needs to be x.2)",
// containernetworking/plugins plugins/main/windows/win-bridge/win-bridge_windows.go
// processEndpointArgs), whatever the HNS network's gateway is.
func cniPodGateway(wp *plan.WindowsNodePlan, w *WinNode) (Addr, string) {
	bridge := wp.CNIPlugin == "win-bridge" || (wp.CNIPlugin == "flannel" && wp.CNIDelegate == "win-bridge")
	if !bridge || w.NetType != "L2Bridge" || w.Subnet.Len == 0 || w.Subnet.Len > 30 {
		return 0, ""
	}
	return w.Subnet.Addr + 2, "win-bridge with host-local IPAM makes x.2 every pod's gateway (win-bridge_windows.go)"
}

// calicoIPAMBlocks moves the pods of Calico Linux nodes without a route dump into a block
// outside every node's spec.podCIDR, in designs that route to Linux pods by spec.podCIDR
// (host-gw: Windows hosts; upstream-tor/router: the ToR). calico-ipam allocates /blockSize
// blocks anywhere in its pools and ignores node.spec.podCIDR (seed 000 §2.6's route -n shows
// master1's pods in 10.161.40.64/26 while its podCIDR is 10.160.0.0/24), so routes to the
// podCIDRs miss them. Which block Calico picks is not known before deployment; the model takes
// blocks from the top of the first pool, and says so.
func (m *Model) calicoIPAMBlocks() {
	cp := m.Plan.Calico
	if cp == nil || len(m.routing.pools) == 0 || cp.BlockSize < int(m.routing.pools[0].Len) || cp.BlockSize > 30 {
		return
	}
	switch m.Design {
	case string(v1alpha1.DesignHostGW), string(v1alpha1.DesignUpstreamToRRouter):
	default:
		return
	}
	pool := m.routing.pools[0]
	taken := func(b Prefix) bool {
		for _, n := range m.Nodes {
			for _, r := range n.PodRanges {
				if r.Overlaps(b) {
					return true
				}
			}
		}
		for _, s := range cp.ReservedCIDRs {
			if r, err := ParsePrefix(s); err == nil && r.Overlaps(b) {
				return true
			}
		}
		return false
	}
	size := int64(1) << (32 - cp.BlockSize)
	next := int64(pool.Last()) + 1 - size
	for _, n := range m.Nodes {
		if n.OS != osLinux || n.DumpRoutes != nil || len(n.PodRanges) == 0 {
			continue
		}
		for next >= int64(pool.Addr) && taken(Prefix{Addr: Addr(next), Len: uint8(cp.BlockSize)}) {
			next -= size
		}
		if next < int64(pool.Addr) {
			return
		}
		b := Prefix{Addr: Addr(next), Len: uint8(cp.BlockSize)}
		m.Notes = append(m.Notes, fmt.Sprintf("%s: calico-ipam puts its pods in /%d blocks anywhere in pool %s, not in its spec.podCIDR %s; modelled as block %s (routes by spec.podCIDR miss them)",
			n.Name, cp.BlockSize, pool, n.PodRanges[0], b))
		n.PodRanges = []Prefix{b}
		n.Sources = append(n.Sources, "calico-ipam block (modelled)")
		next -= size
	}
}

// felixDownOn names the nodes without calico-node that a failed flow depended on: those it
// crossed and, for flows to or from a Windows node, the gateway holders (whose exports every
// Linux node needs to reach Windows pods).
func (m *Model) felixDownOn(path []*Node, windows bool) string {
	var names []string
	seen := map[*Node]bool{}
	add := func(n *Node) {
		if n != nil && n.FelixDown != "" && !seen[n] {
			seen[n] = true
			names = append(names, n.Name)
		}
	}
	for _, n := range path {
		add(n)
	}
	for _, g := range m.Groups {
		for _, in := range g.Instances {
			if windows {
				add(in.Holder)
			}
		}
	}
	if len(names) == 0 {
		return ""
	}
	return "calico-node is not running on " + strings.Join(names, ", ") + ": net.ipv4.conf.all.rp_filter = 2 and no IgnoreLooseRPF (Felix exits)"
}
