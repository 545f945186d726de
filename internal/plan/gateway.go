package plan

import (
	"cmp"
	"fmt"
	"math"
	"net/netip"
	"slices"
	"strconv"
	"strings"
)

// WindowsPodCIDR is a Windows node whose pod-CIDR gateway a group holds.
type WindowsPodCIDR struct {
	Name    string `json:"name"`
	PodCIDR string `json:"podCIDR"`
}

// GatewayLayoutInput is everything LayoutGatewayGroup needs. The planner fills it from the spec;
// the gateway controller fills it from plan.json (GatewayGroupPlan.LayoutInput) and the live
// Node objects. Only ClusterCIDRs and RouterVIPs are order-sensitive: slot numbers count through
// the cluster CIDRs in order and RouterVIPs[i] belongs to VRID VRIDRange[0]+i.
type GatewayLayoutInput struct {
	Name, Interface       string
	Members               []GatewayMemberPlan
	VRRPVersion           int
	AdvertIntervalSeconds float64
	VRIDRange             [2]int
	VIPsPerInstance       int
	ClusterCIDRs          []string
	NodeCIDRMaskSize      int
	RouterVIPs            []string
	WindowsNodes          []WindowsPodCIDR
	// RouterVIPsRequired makes a missing router VIP for an instance in use an error. The planner
	// sets it when Linux nodes must route Windows pod CIDRs via router VIPs (the Linux CNI does
	// not export the holder's connected route).
	RouterVIPsRequired bool
}

// LayoutGatewayGroup assigns every Windows pod-CIDR gateway of a group to a VRRP instance.
//
// Scheme (stable under churn): a pod CIDR's slot is its index among the node CIDRs of the
// cluster CIDRs, counted through ClusterCIDRs in order (the same index kube-controller-manager's
// CidrSet uses). instance = slot / VIPsPerInstance, VRID = VRIDRange[0] + instance. A VIP
// therefore depends only on its own pod CIDR: Windows nodes coming or going never move another
// node's VIP to a different instance, so keepalived reloads never drop a surviving gateway.
// The price is sparseness: a range of R VRIDs covers the first R*VIPsPerInstance slots, and a
// node beyond that is an error naming it (only instances actually in use count).
//
// The result depends only on the input's content, not its order (members and Windows nodes are
// sorted), so every member computes the same keepalived configuration.
func LayoutGatewayGroup(in GatewayLayoutInput) (GatewayGroupPlan, error) {
	var errs errorList
	out := GatewayGroupPlan{
		Name:                  in.Name,
		Interface:             in.Interface,
		VRRPVersion:           in.VRRPVersion,
		AdvertIntervalSeconds: in.AdvertIntervalSeconds,
		VRIDRange:             in.VRIDRange,
		VIPsPerInstance:       in.VIPsPerInstance,
		RouterVIPs:            slices.Clone(in.RouterVIPs),
		RouterVIPsRequired:    in.RouterVIPsRequired,
		Members:               []GatewayMemberPlan{},
		Instances:             []VRRPInstancePlan{},
		VRIDs:                 []int{},
		VIPs:                  []string{},
	}
	if in.Name == "" {
		errs.add("name", "a gateway group needs a name")
	}
	if in.Interface == "" {
		errs.add("interface", "no interface: the members' cluster NICs differ or are unknown; name the interface on the Windows nodes' segment")
	}
	checkAdvert(in.VRRPVersion, in.AdvertIntervalSeconds, &errs)
	first, last := in.VRIDRange[0], in.VRIDRange[1]
	rangeOK := first >= 1 && first <= last && last <= 255
	if !rangeOK {
		errs.add("vridRange", "%d-%d is not a range inside 1-255", first, last)
	}
	vpi := in.VIPsPerInstance
	if vpi < 1 || vpi > 255 {
		errs.add("vipsPerInstance", "%d is outside 1-255 (keepalived sends at most 255 addresses per advertisement)", vpi)
	}
	out.Members = layoutMembers(in.Name, in.Members, &errs)
	routerVIPs := parseRouterVIPs(in.RouterVIPs, &errs)

	slots, err := newSlotter(in.ClusterCIDRs, in.NodeCIDRMaskSize)
	if err != nil {
		errs.add("clusterCIDRs", "%v", err)
	}
	if slots == nil || !rangeOK || vpi < 1 || vpi > 255 {
		return out, errs.err()
	}

	type vip struct {
		node   string
		prefix netip.Prefix
		slot   int64
	}
	nodes := slices.Clone(in.WindowsNodes)
	slices.SortFunc(nodes, func(a, b WindowsPodCIDR) int {
		return cmp.Or(cmp.Compare(a.Name, b.Name), cmp.Compare(a.PodCIDR, b.PodCIDR))
	})
	vips := make([]vip, 0, len(nodes))
	for k, n := range nodes {
		if k > 0 && nodes[k-1].Name == n.Name {
			errs.add("windowsNodes", "node %s is listed twice", n.Name)
			continue
		}
		p, err := parseV4Prefix(n.PodCIDR)
		if err != nil {
			errs.add("windowsNodes", "node %s: %v", n.Name, err)
			continue
		}
		if p.Bits() > 30 {
			errs.add("windowsNodes", "node %s: pod CIDR %s has no room for gateway .1 and host endpoint .2", n.Name, p)
			continue
		}
		slot, ok := slots.slot(p)
		if !ok {
			errs.add("windowsNodes", "node %s: pod CIDR %s is outside the cluster CIDRs %s", n.Name, p, strings.Join(in.ClusterCIDRs, ", "))
			continue
		}
		vips = append(vips, vip{node: n.Name, prefix: p, slot: slot})
	}
	slices.SortFunc(vips, func(a, b vip) int { return cmp.Or(cmp.Compare(a.slot, b.slot), cmp.Compare(a.node, b.node)) })

	for k := 0; k < len(vips); {
		instance := vips[k].slot / int64(vpi)
		end := k
		for end < len(vips) && vips[end].slot/int64(vpi) == instance {
			end++
		}
		group := vips[k:end]
		k = end
		if instance > int64(last-first) {
			names := make([]string, len(group))
			for i, v := range group {
				names[i] = v.node
			}
			errs.add("vridRange", "Windows node(s) %s need VRID %d (pod CIDR slot %d / %d VIPs per instance = instance %d), outside %d-%d; widen the range or raise vipsPerInstance",
				strings.Join(names, ", "), int64(first)+instance, group[0].slot, vpi, instance, first, last)
			continue
		}
		vrid := first + int(instance)
		inst := VRRPInstancePlan{Name: instanceName(in.Name, vrid), VRID: vrid, VIPs: make([]VIPPlan, 0, len(group))}
		for i := 1; i < len(group); i++ {
			if group[i].slot == group[i-1].slot {
				errs.add("windowsNodes", "nodes %s and %s have overlapping pod CIDRs %s and %s",
					group[i-1].node, group[i].node, group[i-1].prefix, group[i].prefix)
			}
		}
		for _, v := range group {
			inst.VIPs = append(inst.VIPs, VIPPlan{
				Address:     netip.PrefixFrom(nthAddr(v.prefix, 1), v.prefix.Bits()).String(),
				PodCIDR:     v.prefix.String(),
				WindowsNode: v.node,
			})
		}
		// Slots ascend with addresses inside one cluster CIDR, but not across cluster CIDRs.
		slices.SortFunc(inst.VIPs, func(a, b VIPPlan) int { return compareAddrString(a.Address, b.Address) })
		idx := int(instance)
		switch {
		case idx < len(routerVIPs) && routerVIPs[idx].IsValid():
			inst.RouterVIP = strings.TrimSpace(in.RouterVIPs[idx])
		case idx < len(routerVIPs):
			// already reported by parseRouterVIPs
		case in.RouterVIPsRequired:
			errs.add("routerVIPs", "instance %s (VRID %d) serves %s and needs routerVIPs[%d]: Linux nodes route Windows pod CIDRs via the router VIP of their instance (one address per VRID, starting at vridRange.first)",
				inst.Name, vrid, inst.VIPs[0].WindowsNode, idx)
		}
		out.Instances = append(out.Instances, inst)
		out.VRIDs = append(out.VRIDs, vrid)
		for _, v := range inst.VIPs {
			out.VIPs = append(out.VIPs, v.Address)
		}
	}
	return out, errs.err()
}

// checkAdvert enforces keepalived's advert_int rules: VRRPv2 carries whole seconds (1-255),
// VRRPv3 centiseconds in 12 bits (0.01-40.95 s).
func checkAdvert(version int, secs float64, errs *errorList) {
	switch version {
	case 2:
		if secs < 1 || secs > 255 || secs != math.Trunc(secs) {
			errs.add("advertInterval", "%gs: VRRPv2 needs whole seconds from 1 to 255", secs)
		}
	case 3:
		cs := secs * 100
		if cs < 1 || cs > 4095 || math.Abs(cs-math.Round(cs)) > 1e-6 {
			errs.add("advertInterval", "%gs: VRRPv3 needs a multiple of 0.01 s from 0.01 to 40.95", secs)
		}
	default:
		errs.add("vrrpVersion", "%d: must be 2 or 3", version)
	}
}

func layoutMembers(group string, in []GatewayMemberPlan, errs *errorList) []GatewayMemberPlan {
	if len(in) == 0 {
		errs.add("members", "a gateway group needs at least one member")
	}
	members := make([]GatewayMemberPlan, 0, len(in))
	seenIP := map[netip.Addr]string{}
	for i, m := range in {
		field := fmt.Sprintf("members[%d]", i)
		if m.Node == "" {
			errs.add(field, "member without a node name")
			continue
		}
		ip, err := parseV4Addr(m.IP)
		if err != nil {
			errs.add(field, "node %s: %v", m.Node, err)
			continue
		}
		if other, dup := seenIP[ip]; dup {
			errs.add(field, "node %s has the same address %s as %s", m.Node, ip, other)
			continue
		}
		seenIP[ip] = m.Node
		if m.Priority < 1 || m.Priority > 254 {
			errs.add(field+".priority", "%d is outside 1-254 (255 is reserved for the address owner)", m.Priority)
		}
		m.IP = ip.String()
		if m.RouterID == "" {
			m.RouterID = RouterID(group, m.Node)
		}
		members = append(members, m)
	}
	// Highest priority first (the initial holder), then by name.
	slices.SortFunc(members, func(a, b GatewayMemberPlan) int {
		return cmp.Or(cmp.Compare(b.Priority, a.Priority), cmp.Compare(a.Node, b.Node))
	})
	for i := 1; i < len(members); i++ {
		if members[i].Node == members[i-1].Node {
			errs.add("members", "node %s is listed twice", members[i].Node)
		}
	}
	return members
}

func parseRouterVIPs(in []string, errs *errorList) []netip.Addr {
	out := make([]netip.Addr, len(in))
	for i, s := range in {
		a, err := parseV4Addr(s)
		if err != nil {
			errs.add(fmt.Sprintf("routerVIPs[%d]", i), "%v", err)
			continue
		}
		if j := slices.Index(out[:i], a); j >= 0 {
			errs.add(fmt.Sprintf("routerVIPs[%d]", i), "%s is already routerVIPs[%d]", a, j)
			continue
		}
		out[i] = a
	}
	return out
}

// RouterID is the keepalived router_id of a member: distinct per node, as seed 000 requires.
func RouterID(group, node string) string {
	return "kubewin_" + sanitizeIdent(group) + "_" + sanitizeIdent(node)
}

func instanceName(group string, vrid int) string {
	return "VI_" + strings.ToUpper(sanitizeIdent(group)) + "_" + strconv.Itoa(vrid)
}

func compareAddrString(a, b string) int {
	pa, ea := netip.ParsePrefix(a)
	pb, eb := netip.ParsePrefix(b)
	if ea != nil || eb != nil {
		return cmp.Compare(a, b)
	}
	return comparePrefix(pa, pb)
}

// slotter numbers node CIDRs through the cluster CIDRs in order.
type slotter struct {
	clusters []netip.Prefix
	offsets  []int64
	mask     int
}

func newSlotter(clusterCIDRs []string, mask int) (*slotter, error) {
	if len(clusterCIDRs) == 0 {
		return nil, fmt.Errorf("no cluster CIDRs")
	}
	s := &slotter{mask: mask}
	var off int64
	for _, c := range clusterCIDRs {
		p, err := parseV4Prefix(c)
		if err != nil {
			return nil, err
		}
		if mask < p.Bits() || mask > 32 {
			return nil, fmt.Errorf("node CIDR mask /%d does not fit in %s", mask, p)
		}
		s.clusters = append(s.clusters, p)
		s.offsets = append(s.offsets, off)
		off += int64(1) << uint(mask-p.Bits())
	}
	return s, nil
}

// slot returns the index of p's node CIDR, or false when p is outside every cluster CIDR.
func (s *slotter) slot(p netip.Prefix) (int64, bool) {
	for k, c := range s.clusters {
		if contains(c, p) {
			return s.offsets[k] + int64((u32(p.Addr())-u32(c.Addr()))>>uint(32-s.mask)), true
		}
	}
	return 0, false
}

// LayoutInput rebuilds the input that produced g, with a new set of Windows nodes: what the
// gateway controller calls with the plan and the Windows nodes it currently sees.
func (g GatewayGroupPlan) LayoutInput(n NetworkingPlan, windows []WindowsPodCIDR) GatewayLayoutInput {
	return GatewayLayoutInput{
		Name:                  g.Name,
		Interface:             g.Interface,
		Members:               slices.Clone(g.Members),
		VRRPVersion:           g.VRRPVersion,
		AdvertIntervalSeconds: g.AdvertIntervalSeconds,
		VRIDRange:             g.VRIDRange,
		VIPsPerInstance:       g.VIPsPerInstance,
		ClusterCIDRs:          slices.Clone(n.ClusterCIDRs),
		NodeCIDRMaskSize:      n.NodeCIDRMaskSize,
		RouterVIPs:            slices.Clone(g.RouterVIPs),
		WindowsNodes:          slices.Clone(windows),
		RouterVIPsRequired:    g.RouterVIPsRequired,
	}
}

// WindowsNodes lists the Windows nodes the group serves, in VIP order.
func (g GatewayGroupPlan) WindowsNodes() []WindowsPodCIDR {
	var out []WindowsPodCIDR
	for _, in := range g.Instances {
		for _, v := range in.VIPs {
			out = append(out, WindowsPodCIDR{Name: v.WindowsNode, PodCIDR: v.PodCIDR})
		}
	}
	return out
}
