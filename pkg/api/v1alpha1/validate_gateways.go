package v1alpha1

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/validate/content"
)

// memberNIC is a gateway member's NIC on the group's interface, when it has a valid address.
type memberNIC struct {
	index int // in the group's members
	node  *nodeInfo
	nic   *nicInfo
}

// VRRP carries the advertisement interval in whole seconds in an 8-bit field (RFC 3768, v2) and
// in centiseconds in a 12-bit field (RFC 5798, v3).
const (
	maxAdvertV2     = 255 * time.Second
	advertUnitV3    = 10 * time.Millisecond
	maxAdvertV3     = 4095 * advertUnitV3
	maxVRID         = 255
	maxVRRPPriority = 254 // 255 is reserved for the address owner
)

func (v *validator) gatewayGroups() {
	groups := v.c.Spec.GatewayGroups
	v.groupNICs = make([][]memberNIC, len(groups))
	v.groupServes = make([][]*nodeInfo, len(groups))
	names := map[string]int{}
	vips := map[netip.Addr]fieldPath{}
	for i := range groups {
		p := groupsPath.Index(i)
		g := &groups[i]
		v.groupName(p, g.Name, names, i)
		v.groupMembers(i, p, g)
		v.groupVRRP(p, g)
		v.groupWindowsNodes(i, p, g)
		v.groupRouterVIPs(i, p, g, vips)
	}
	v.vridOverlaps()
}

func (v *validator) groupName(p fieldPath, name string, seen map[string]int, i int) {
	const expected = "a DNS-1123 label such as win-gw"
	switch first, dup := seen[name]; {
	case name == "":
		v.errs.addf(p.Child("name"), expected, "missing")
	case !isDNSLabel(name):
		v.errs.addf(p.Child("name"), expected, "%q is not a DNS-1123 label", name)
	case dup:
		v.errs.addf(p.Child("name"), "a group name used once", "%q repeats gatewayGroups[%d]", name, first)
	default:
		seen[name] = i
	}
}

func (v *validator) groupMembers(i int, p fieldPath, g *GatewayGroup) {
	if len(g.Members) == 0 {
		v.errs.addf(p.Child("members"), "at least one Linux node (two or more for failover)", "missing")
		return
	}
	iface := v.groupInterface(p, g)
	seen := map[string]int{}
	prios := map[int]int{}
	for j, m := range g.Members {
		mp := p.Child("members").Index(j)
		ni := v.memberNode(mp.Child("node"), m.Node, seen, j)
		if m.Priority != 0 && v.intRange(mp.Child("priority"), m.Priority, 1, maxVRRPPriority) {
			if first, dup := prios[m.Priority]; dup {
				v.errs.addf(mp.Child("priority"), "distinct priorities, so that the failover order is defined",
					"%d repeats members[%d]", m.Priority, first)
			} else {
				prios[m.Priority] = j
			}
		}
		if ni == nil || iface == "" {
			continue
		}
		k := nicIndex(ni.node, iface)
		if k < 0 {
			v.errs.addf(p.Child("interface"), "a NIC name every member has",
				"member %q has no NIC %q", ni.node.Name, iface)
			continue
		}
		if nic := ni.nics[k]; nic != nil {
			v.groupNICs[i] = append(v.groupNICs[i], memberNIC{index: j, node: ni, nic: nic})
		}
	}
}

// groupInterface returns the interface the group's VRRP instances use: the given one, or the
// members' common cluster NIC (what SetDefaults picks).
func (v *validator) groupInterface(p fieldPath, g *GatewayGroup) string {
	if g.Interface != "" {
		return g.Interface
	}
	if iface := memberClusterNIC(v.c.Spec.Nodes, g.Members); iface != "" {
		return iface
	}
	var have []string
	for _, m := range g.Members {
		if ni := v.nodes[m.Node]; ni != nil && ni.cluster != nil {
			have = append(have, fmt.Sprintf("%s: %s", m.Node, ni.cluster.name))
		}
	}
	if len(have) > 1 {
		v.errs.addf(p.Child("interface"), "interface: the NIC name every member has on the Windows nodes' segment",
			"missing, and the members' cluster NICs differ (%s)", strings.Join(have, ", "))
	}
	return ""
}

func nicIndex(n *Node, name string) int {
	for k, nic := range n.NICs {
		if nic.Name == name {
			return k
		}
	}
	return -1
}

// memberNode checks one member's node reference and returns the node when it is a Linux node
// not already in the group.
func (v *validator) memberNode(p fieldPath, name string, seen map[string]int, j int) *nodeInfo {
	const expected = "the name of a Linux node in spec.nodes"
	ni := v.nodes[name]
	first, dup := seen[name]
	switch {
	case name == "":
		v.errs.addf(p, expected, "missing")
	case ni == nil:
		v.errs.addf(p, expected, "%q is not a node in spec.nodes", name)
	case ni.node.OS != OSLinux:
		v.errs.addf(p, expected, "%q is a %q node; keepalived gateways run on Linux", name, ni.node.OS)
	case dup:
		v.errs.addf(p, "each node once per group", "%q repeats members[%d]", name, first)
	default:
		seen[name] = j
		return ni
	}
	return nil
}

func (v *validator) groupVRRP(p fieldPath, g *GatewayGroup) {
	if r := g.VRIDRange; r != nil {
		okFirst := v.intRange(p.Child("vridRange").Child("first"), r.First, 1, maxVRID)
		okLast := v.intRange(p.Child("vridRange").Child("last"), r.Last, 1, maxVRID)
		if okFirst && okLast && r.First > r.Last {
			v.errs.addf(p.Child("vridRange"), "first <= last", "first %d is above last %d", r.First, r.Last)
		}
	}
	if g.VIPsPerInstance != 0 {
		v.intRange(p.Child("vipsPerInstance"), g.VIPsPerInstance, 1, MaxVIPsPerInstance)
	}
	version := g.VRRPVersion
	if version == 0 {
		version = DefaultVRRPVersion
	} else if !v.oneOf(p.Child("vrrpVersion"), strconv.Itoa(version), "2", "3") {
		return
	}
	if g.AdvertInterval != "" {
		v.advertInterval(p.Child("advertInterval"), g.AdvertInterval, version)
	}
}

func (v *validator) advertInterval(p fieldPath, s string, version int) {
	d, err := time.ParseDuration(s)
	switch {
	case err != nil:
		v.errs.addf(p, "a Go duration such as 100ms or 1s", "%q is not a duration", s)
	case d <= 0:
		v.errs.addf(p, "a positive duration", "%s is not positive", d)
	case version == 2 && (d%time.Second != 0 || d > maxAdvertV2):
		v.errs.addf(p, "whole seconds from 1s to 255s, or vrrpVersion: 3 for sub-second adverts",
			"%s cannot be sent: VRRPv2 carries the advert interval in whole seconds", d)
	case version == 3 && (d%advertUnitV3 != 0 || d > maxAdvertV3):
		v.errs.addf(p, "a multiple of 10ms from 10ms to 40.95s",
			"%s cannot be sent: VRRPv3 carries the advert interval in centiseconds", d)
	}
}

func (v *validator) groupWindowsNodes(i int, p fieldPath, g *GatewayGroup) {
	if len(g.WindowsNodes) == 0 {
		for _, w := range v.windows {
			v.serve(i, p.Child("windowsNodes"), w, true)
		}
		return
	}
	seen := map[string]int{}
	for k, name := range g.WindowsNodes {
		wp := p.Child("windowsNodes").Index(k)
		ni := v.nodes[name]
		first, dup := seen[name]
		switch {
		case name == "":
			v.errs.addf(wp, "the name of a Windows node", "missing")
		case ni == nil:
			v.errs.addf(wp, "the name of a Windows node in spec.nodes", "%q is not a node in spec.nodes", name)
		case ni.node.OS != OSWindows:
			v.errs.addf(wp, "the name of a Windows node", "%q is a %q node; gateways serve Windows nodes", name, ni.node.OS)
		case dup:
			v.errs.addf(wp, "each node once", "%q repeats windowsNodes[%d]", name, first)
		default:
			seen[name] = k
			v.serve(i, wp, ni, false)
		}
	}
}

// serve records that group i holds w's gateway; a Windows node has one gateway, so one group.
func (v *validator) serve(i int, p fieldPath, w *nodeInfo, implicit bool) {
	if w.node.Name == "" {
		return
	}
	if other, dup := v.served[w.node.Name]; dup {
		how := ""
		if implicit {
			how = "the group lists no windowsNodes, so it serves every Windows node, but "
		}
		v.errs.addf(p, "each Windows node served by exactly one group (list windowsNodes explicitly)",
			"%s%q is already served by gatewayGroups[%d] (%q)", how, w.node.Name, other, v.c.Spec.GatewayGroups[other].Name)
		return
	}
	v.served[w.node.Name] = i
	v.groupServes[i] = append(v.groupServes[i], w)
}

func (v *validator) groupRouterVIPs(i int, p fieldPath, g *GatewayGroup, vips map[netip.Addr]fieldPath) {
	for k, s := range g.RouterVIPs {
		rp := p.Child("routerVIPs").Index(k)
		a, ok := v.ipv4(rp, s, true)
		if !ok {
			continue
		}
		if first, dup := vips[a]; dup {
			v.errs.addf(rp, "a VIP used once", "%s repeats %s", a, first)
			continue
		}
		vips[a] = rp
		if owner, taken := v.nodeIPs[a]; taken {
			v.errs.addf(rp, "an unused address on the members' subnet", "%s is already the address of %s", a, owner)
			continue
		}
		var outside []string
		for _, m := range v.groupNICs[i] {
			if !m.nic.subnet.Contains(a) {
				outside = append(outside, fmt.Sprintf("%s %s (%s)", m.node.node.Name, m.nic.name, m.nic.subnet))
			}
		}
		if len(outside) > 0 {
			v.errs.addf(rp, "an unused address on the subnet of every member's interface",
				"%s is outside the subnet of member %s", a, listNames(outside))
		} else if len(v.groupNICs[i]) > 0 {
			if why := reservedHost(a, v.groupNICs[i][0].nic.subnet); why != "" {
				v.errs.addf(rp, "a host address of "+v.groupNICs[i][0].nic.subnet.String(), "%s is %s", a, why)
			}
		}
	}
}

// vridOverlaps reports groups on one L2 segment whose VRID ranges intersect: VRRP instances
// with the same VRID on a segment take each other's adverts as their own.
func (v *validator) vridOverlaps() {
	groups := v.c.Spec.GatewayGroups
	for j := range groups {
		for i := 0; i < j; i++ {
			si, sj := v.segment(i), v.segment(j)
			if !si.IsValid() || !sj.IsValid() || !si.Overlaps(sj) {
				continue
			}
			ri, rj := vridRange(groups[i]), vridRange(groups[j])
			if ri.First <= rj.Last && rj.First <= ri.Last {
				v.errs.addf(groupsPath.Index(j).Child("vridRange"),
					"VRID ranges that do not intersect for groups on one segment (set vridRange on each group)",
					"%d-%d intersects %d-%d of gatewayGroups[%d] (%q) on segment %s",
					rj.First, rj.Last, ri.First, ri.Last, i, groups[i].Name, sj)
			}
		}
	}
}

// segment is the subnet of the group's first member with a valid interface NIC.
func (v *validator) segment(i int) netip.Prefix {
	if len(v.groupNICs[i]) == 0 {
		return netip.Prefix{}
	}
	return v.groupNICs[i][0].nic.subnet
}

func vridRange(g GatewayGroup) Range {
	if g.VRIDRange == nil {
		return Range{First: 1, Last: maxVRID}
	}
	return *g.VRIDRange
}

func isDNSLabel(s string) bool { return s != "" && len(content.IsDNS1123Label(s)) == 0 }
