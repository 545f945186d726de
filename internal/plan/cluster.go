package plan

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/kubewin/kubewin/pkg/api/v1alpha1"
)

// designChecks verifies what a design needs beyond the per-node facts.
func (b *builder) designChecks() {
	switch b.s.Design {
	case v1alpha1.DesignUpstreamToRKeepalived, v1alpha1.DesignHostGW, v1alpha1.DesignFlannelHostGW, v1alpha1.DesignFlannelVXLAN,
		v1alpha1.DesignCalicoHostProcess, v1alpha1.DesignFlannelHostProcess:
	case v1alpha1.DesignUpstreamToRRouter:
		if b.s.TorRouter == nil {
			b.errs.add("spec.torRouter", "design %s needs the router's address", b.s.Design)
		} else if _, err := parseV4Addr(b.s.TorRouter.IP); err != nil || strings.Contains(b.s.TorRouter.IP, "/") {
			b.errs.add("spec.torRouter.ip", "%q is not an IPv4 address", b.s.TorRouter.IP)
		}
	default:
		b.errs.add("spec.design", "%q is not a known network design", b.s.Design)
	}
}

// torRoutes fills the route table of a router on the cluster network.
//
//   - upstream-tor/router: every node's pod CIDR via that node (Linux nodes only when their CNI
//     uses node podCIDRs, i.e. not Calico), and the router holds the .1 of every Windows pod
//     CIDR, written with the pod CIDR's prefix length ("10.160.11.1/24") because that is the
//     interface address the router configures.
//   - upstream-tor/keepalived: each Windows pod CIDR via the router VIP of its instance, for
//     instances that have one. A router that is not a cluster node then reaches Windows pods
//     through whichever member holds the instance, and follows failovers with the router VIP.
//     Without router VIPs there is no stable next hop for a router to use, so nothing is listed.
//   - other designs: nodes route for themselves; nothing is listed.
func (b *builder) torRoutes(p *Plan) {
	switch b.s.Design {
	case v1alpha1.DesignUpstreamToRRouter:
		for i := range b.nodes {
			n := &b.nodes[i]
			if n.windows() {
				p.TorRoutes = append(p.TorRoutes, Route{Destination: n.cidr.prefix.String(), Via: n.ip.String(), Reason: "pod CIDR of Windows node " + n.spec.Name})
				p.TorGatewayAddresses = append(p.TorGatewayAddresses, gatewayAddress(n.cidr.prefix))
			} else if b.s.LinuxCNI.Type != "calico" {
				p.TorRoutes = append(p.TorRoutes, Route{Destination: n.cidr.prefix.String(), Via: n.ip.String(), Reason: "pod CIDR of Linux node " + n.spec.Name})
			}
		}
		slices.SortFunc(p.TorGatewayAddresses, compareAddrString)
	case v1alpha1.DesignUpstreamToRKeepalived:
		for _, g := range b.groups {
			for _, inst := range g.plan.Instances {
				if inst.RouterVIP == "" {
					continue
				}
				via, _, _ := strings.Cut(inst.RouterVIP, "/")
				for _, v := range inst.VIPs {
					p.TorRoutes = append(p.TorRoutes, Route{Destination: v.PodCIDR, Via: via,
						Reason: "pod CIDR of " + v.WindowsNode + " " + viaRouterVIPNote + inst.Name + " (gateway group " + g.plan.Name + ")"})
				}
			}
		}
	}
	sortRoutes(p.TorRoutes)
}

// calicoPlan lists the Windows pod CIDRs that Calico IPAM must never use. Calico allocates
// /BlockSize blocks anywhere in its pools and ignores node.spec.podCIDR, so a Windows pod CIDR
// inside a pool is reserved (IPReservation) or cut out of the pools (PoolExclusion).
func (b *builder) calicoPlan() *CalicoPlan {
	if b.s.LinuxCNI.Type != "calico" || b.s.LinuxCNI.Calico == nil {
		return nil
	}
	cs := b.s.LinuxCNI.Calico
	var pools []netip.Prefix
	for i, s := range cs.IPPools {
		pp, err := parseV4Prefix(s)
		if err != nil {
			b.errs.add(fmt.Sprintf("spec.linuxCNI.calico.ipPools[%d]", i), "%v", err)
			continue
		}
		pools = append(pools, pp)
	}
	var reserved []netip.Prefix
	// With Calico for Windows (calico/hostprocess) Windows pods get their addresses from Calico
	// IPAM like Linux pods; the node's pod CIDR is unused, so there is nothing to reserve.
	for _, w := range b.windowsNodes() {
		if b.s.Design == v1alpha1.DesignCalicoHostProcess {
			break
		}
		for _, pp := range pools {
			if pp.Overlaps(w.cidr.prefix) {
				reserved = append(reserved, w.cidr.prefix)
				break
			}
		}
	}
	return &CalicoPlan{
		IPPools:                prefixStrings(pools),
		Reservation:            cs.Reservation,
		ReservedCIDRs:          sortedUniquePrefixes(reserved),
		ExportsConnectedRoutes: b.calicoExports(),
		IPIPMode:               cs.IPIPMode,
		BlockSize:              cs.BlockSize,
	}
}

// flannelPlan is flannel's net-conf.json: the network is the first cluster CIDR (flannel takes
// one IPv4 network); VNI and port only matter to vxlan.
func (b *builder) flannelPlan() *FlannelPlan {
	f := b.s.LinuxCNI.Flannel
	if f == nil || len(b.clusters) == 0 {
		return nil
	}
	fp := &FlannelPlan{Network: b.clusters[0].String(), Backend: f.Backend}
	if f.Backend == "vxlan" {
		fp.VNI, fp.Port = f.VNI, f.Port
	}
	return fp
}
