package v1alpha1

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"
)

// design checks what the chosen network design needs from the rest of the spec.
func (v *validator) design() {
	s := &v.c.Spec
	d := s.Design
	var designs []string
	for _, nd := range NetworkDesigns() {
		designs = append(designs, string(nd))
	}
	if !v.oneOf(spec.Child("design"), string(d), designs...) {
		return
	}
	if len(s.GatewayGroups) > 0 && d != DesignUpstreamToRKeepalived {
		v.errs.addf(groupsPath, "no gatewayGroups for design "+string(d),
			"gateway groups are only used by design %s", DesignUpstreamToRKeepalived)
	}
	if s.TorRouter != nil && d != DesignUpstreamToRRouter {
		v.errs.addf(torRouterPath, "no torRouter for design "+string(d),
			"torRouter is only used by design %s", DesignUpstreamToRRouter)
	}
	switch d {
	case DesignUpstreamToRKeepalived:
		v.keepalivedDesign()
	case DesignUpstreamToRRouter:
		v.torRouter()
	case DesignHostGW, DesignFlannelHostGW:
		v.oneSegment()
	case DesignCalicoHostProcess, DesignFlannelHostProcess:
		v.hostProcessDesign()
	}
	if d == DesignHostGW && s.LinuxCNI.Type == "calico" {
		// host-gw routes every node's spec.podCIDR via that node, but calico-ipam hands out /26
		// blocks anywhere in its pools and ignores spec.podCIDR (seed 000 §2.6's route -n shows
		// the blocks), so Windows→Linux pod traffic would be routed to the wrong node.
		v.errs.addf(linuxCNI.Child("type"), "a CNI whose pods live in the node's spec.podCIDR (flannel, \"other\" with host-local IPAM)",
			"%q with design %s: calico-ipam assigns /26 blocks anywhere in its IP pools, not the node's spec.podCIDR, so the static routes "+
				"to each Linux node's pod CIDR would miss its pods; use design %s (Calico exports the routes over BGP) or %s",
			s.LinuxCNI.Type, d, DesignUpstreamToRKeepalived, DesignUpstreamToRRouter)
	}
	if designRunsFlannel(d) && s.LinuxCNI.Type != "flannel" && slices.Contains([]string{"calico", "bridge", "other"}, s.LinuxCNI.Type) {
		v.errs.addf(linuxCNI.Child("type"), "flannel",
			"%q: design %s runs flanneld on every node, Linux included", s.LinuxCNI.Type, d)
	}
}

// keepalivedDesign: every Windows node's gateway is a VIP held by one group, whose members must
// be on the Windows node's L2 segment to answer ARP for it.
func (v *validator) keepalivedDesign() {
	if len(v.c.Spec.GatewayGroups) == 0 {
		v.errs.addf(groupsPath, "at least one group of Linux nodes to hold the Windows pod gateways",
			"missing: design %s needs gateway groups", DesignUpstreamToRKeepalived)
		return
	}
	for _, w := range v.windows {
		if _, ok := v.served[w.node.Name]; !ok && w.node.Name != "" {
			v.errs.addf(w.path, "a gatewayGroups entry that lists it in windowsNodes (or lists none)",
				"Windows node %q is not served by any gateway group", w.node.Name)
		}
	}
	groups := v.c.Spec.GatewayGroups
	for i := range groups {
		for _, m := range v.groupNICs[i] {
			var away []string
			for _, w := range v.groupServes[i] {
				if w.cluster != nil && !onLink(m.nic, w.cluster) {
					away = append(away, fmt.Sprintf("%s (%s)", w.node.Name, w.cluster))
				}
			}
			if len(away) > 0 {
				v.errs.addf(groupsPath.Index(i).Child("members").Index(m.index).Child("node"),
					"members on the cluster subnet of the Windows nodes they serve (same L2 segment)",
					"%s's %s (%s) is not on the cluster subnet of Windows node %s",
					m.node.node.Name, m.nic.name, m.nic, listNames(away))
			}
		}
	}
}

// torRouter: the router holds the Windows pod gateways and routes every node's pod CIDR to
// that node, so it must be on every node's cluster subnet.
func (v *validator) torRouter() {
	r := v.c.Spec.TorRouter
	if r == nil {
		v.errs.addf(torRouterPath, "torRouter.ip: the router's address on the cluster network",
			"missing: design %s needs the router", DesignUpstreamToRRouter)
		return
	}
	p := torRouterPath.Child("ip")
	a, ok := v.ipv4(p, r.IP, true)
	if !ok {
		return
	}
	if owner, taken := v.nodeIPs[a]; taken {
		v.errs.addf(p, "the router's own address", "%s is the address of %s", a, owner)
		return
	}
	var away, subnets []string
	for _, ni := range v.nodeInfos {
		if ni.cluster == nil || ni.cluster.subnet.Contains(a) {
			continue
		}
		away = append(away, ni.node.Name)
		if s := ni.cluster.subnet.String(); !slices.Contains(subnets, s) {
			subnets = append(subnets, s)
		}
	}
	if len(away) > 0 {
		v.errs.addf(p, "an address on every node's cluster subnet",
			"%s is outside the cluster subnet (%s) of node %s", a, strings.Join(subnets, ", "), listNames(away))
	}
}

// oneSegment: host-gw routes send pod traffic straight to the owning node's address, so every
// node must be on one L2 subnet. The subnet most nodes share is taken as the intended one, so
// that the odd nodes out are the ones reported.
func (v *validator) oneSegment() {
	counts := map[netip.Prefix]int{}
	var ref *nodeInfo
	for _, ni := range v.nodeInfos {
		if ni.cluster == nil {
			continue
		}
		counts[ni.cluster.subnet]++
		if ref == nil || counts[ni.cluster.subnet] > counts[ref.cluster.subnet] {
			ref = ni
		}
	}
	for _, ni := range v.nodeInfos {
		if ni.cluster != nil && ni != ref && !onLink(ref.cluster, ni.cluster) {
			v.errs.addf(ni.cluster.path.Child("ip"), "every node's cluster NIC on one L2 subnet",
				"%s is not on the subnet of node %q (%s); design %s routes pod CIDRs straight to node addresses",
				ni.cluster, ref.node.Name, ref.cluster, v.c.Spec.Design)
		}
	}
}
