package v1alpha1

import (
	"encoding/binary"
	"fmt"
	"net/netip"
	"slices"
	"strings"
)

// Validate checks a cluster description and returns every problem found, sorted, with field
// paths but no positions (Parse adds those; Source.Annotate does for other callers). It accepts
// a defaulted or an undefaulted Cluster: optional fields left empty are not errors.
//
// The rules live in small methods grouped by the part of the spec they read: validate_cluster.go
// (cluster-wide settings), validate_nodes.go (nodes and NICs), validate_gateways.go (gateway
// groups) and validate_design.go (what each network design requires).
func Validate(c *Cluster) ErrorList {
	v := &validator{c: c, nodes: map[string]*nodeInfo{}, served: map[string]int{},
		nodeIPs: map[netip.Addr]fieldPath{}}
	for _, n := range c.Spec.Nodes {
		v.hasWindows = v.hasWindows || n.OS == OSWindows
	}
	v.meta()
	v.kubernetesVersion()
	v.containerRuntime()
	v.networking()
	v.linuxCNI()
	v.windowsSettings()
	v.images()
	v.nodeList()
	v.gatewayGroups()
	v.design()
	v.errs.Sort()
	return v.errs
}

// validator carries the cluster and what earlier rules learned about it (parsed addresses, node
// indices) to the rules that relate fields to each other.
type validator struct {
	c    *Cluster
	errs ErrorList

	podCIDRs    []pathPrefix // valid cluster pod CIDRs
	maskSize    int          // valid nodeCIDRMaskSize (defaulted), or 0
	service     netip.Prefix // valid service CIDR, or the zero Prefix
	nodes       map[string]*nodeInfo
	nodeInfos   []*nodeInfo
	nodeIPs     map[netip.Addr]fieldPath
	windows     []*nodeInfo    // Windows nodes in document order
	served      map[string]int // Windows node name -> index of the gateway group serving it
	groupNICs   [][]memberNIC  // per gateway group, the members' valid interface NICs
	groupServes [][]*nodeInfo  // per gateway group, the Windows nodes it serves
	hasWindows  bool
}

// pathPrefix is a parsed CIDR and the field it came from, for messages naming the other party
// of an overlap.
type pathPrefix struct {
	path   fieldPath
	prefix netip.Prefix
}

// nodeInfo is what the rules need to know about a node beyond its spec.
type nodeInfo struct {
	index   int
	node    *Node
	path    fieldPath
	nics    []*nicInfo
	cluster *nicInfo // the NIC on the cluster network, when it can be told and its address is valid
}

// nicInfo is a NIC with a valid IPv4 address and prefix length.
type nicInfo struct {
	name   string
	path   fieldPath
	addr   netip.Addr
	subnet netip.Prefix // masked
}

func (n *nicInfo) String() string {
	return fmt.Sprintf("%s/%d", n.addr, n.subnet.Bits())
}

// onLink reports whether a and b can reach each other without a router: each address is inside
// the other's subnet.
func onLink(a, b *nicInfo) bool {
	return a.subnet.Contains(b.addr) && b.subnet.Contains(a.addr)
}

// ---- parsing helpers: each reports its own error and says whether the value is usable ----

const (
	expectIPv4 = "an IPv4 address such as 10.0.0.1"
	expectCIDR = "an IPv4 CIDR such as 10.160.0.0/12"
)

// ipv4 parses s as an IPv4 address; an empty s is an error only when required.
func (v *validator) ipv4(p fieldPath, s string, required bool) (netip.Addr, bool) {
	if s == "" {
		if required {
			v.errs.addf(p, expectIPv4, "missing")
		}
		return netip.Addr{}, false
	}
	a, err := netip.ParseAddr(s)
	switch {
	case err != nil:
		v.errs.addf(p, expectIPv4, "%q is not an IP address", s)
		return netip.Addr{}, false
	case !a.Is4():
		v.errs.addf(p, expectIPv4, "%q is not IPv4; kubewin plans IPv4 clusters only", s)
		return netip.Addr{}, false
	}
	return a, true
}

// cidr parses s as a canonical IPv4 CIDR. A CIDR with host bits set is reported with its
// canonical form and returned masked, so later rules still see the network the user meant.
func (v *validator) cidr(p fieldPath, s string, required bool) (netip.Prefix, bool) {
	if s == "" {
		if required {
			v.errs.addf(p, expectCIDR, "missing")
		}
		return netip.Prefix{}, false
	}
	pr, err := netip.ParsePrefix(s)
	if err != nil {
		if _, ipErr := netip.ParseAddr(s); ipErr == nil {
			v.errs.addf(p, expectCIDR, "%q has no prefix length", s)
		} else {
			v.errs.addf(p, expectCIDR, "%q is not a CIDR", s)
		}
		return netip.Prefix{}, false
	}
	if !pr.Addr().Is4() {
		v.errs.addf(p, expectCIDR, "%q is not IPv4; kubewin plans IPv4 clusters only", s)
		return netip.Prefix{}, false
	}
	if m := pr.Masked(); m != pr {
		v.errs.addf(p, "the canonical form "+m.String(), "%q is not a network address (host bits are set)", s)
		return m, true
	}
	return pr, true
}

// oneOf checks an enumerated value; callers skip empty optional values themselves.
func (v *validator) oneOf(p fieldPath, got string, allowed ...string) bool {
	if slices.Contains(allowed, got) {
		return true
	}
	expected := "one of " + strings.Join(allowed, ", ")
	if got == "" {
		v.errs.addf(p, expected, "missing")
		return false
	}
	msg := fmt.Sprintf("%q is not supported", got)
	for _, a := range allowed {
		if strings.EqualFold(a, got) {
			msg += fmt.Sprintf("; values are case-sensitive: %q", a)
		}
	}
	v.errs.addf(p, expected, "%s", msg)
	return false
}

// intRange checks lo <= n <= hi.
func (v *validator) intRange(p fieldPath, n, lo, hi int) bool {
	if n < lo || n > hi {
		v.errs.addf(p, fmt.Sprintf("%d-%d", lo, hi), "%d is out of range", n)
		return false
	}
	return true
}

// lastAddr is the highest address of p (the broadcast address of an IPv4 subnet).
func lastAddr(p netip.Prefix) netip.Addr {
	a := p.Masked().Addr().As4()
	u := binary.BigEndian.Uint32(a[:]) | (^uint32(0) >> p.Bits())
	var out [4]byte
	binary.BigEndian.PutUint32(out[:], u)
	return netip.AddrFrom4(out)
}

// reservedHost reports why a is not a usable host address of subnet: its network or broadcast
// address. Subnets of /31 and /32 have neither (RFC 3021).
func reservedHost(a netip.Addr, subnet netip.Prefix) string {
	if subnet.Bits() >= 31 {
		return ""
	}
	switch a {
	case subnet.Masked().Addr():
		return "the network address of " + subnet.Masked().String()
	case lastAddr(subnet):
		return "the broadcast address of " + subnet.Masked().String()
	}
	return ""
}

// containsPrefix reports whether inner lies entirely inside outer.
func containsPrefix(outer, inner netip.Prefix) bool {
	return outer.Bits() <= inner.Bits() && outer.Contains(inner.Addr())
}

// listNames renders up to five names and how many more there are.
func listNames(names []string) string {
	const show = 5
	if len(names) <= show {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:show], ", "), len(names)-show)
}
