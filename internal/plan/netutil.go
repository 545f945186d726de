package plan

import (
	"cmp"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strings"
)

// parseV4Prefix parses an IPv4 CIDR and returns it with host bits cleared, as the
// kube-controller-manager does for --cluster-cidr (net.ParseCIDR keeps only the network).
func parseV4Prefix(s string) (netip.Prefix, error) {
	p, err := netip.ParsePrefix(strings.TrimSpace(s))
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("%q is not a CIDR", s)
	}
	if !p.Addr().Is4() {
		return netip.Prefix{}, fmt.Errorf("%q is not an IPv4 CIDR", s)
	}
	return p.Masked(), nil
}

// parseV4Addr parses an IPv4 address; "a.b.c.d/p" is accepted and the prefix dropped.
func parseV4Addr(s string) (netip.Addr, error) {
	t := strings.TrimSpace(s)
	if i := strings.IndexByte(t, '/'); i >= 0 {
		t = t[:i]
	}
	a, err := netip.ParseAddr(t)
	if err != nil || !a.Is4() {
		return netip.Addr{}, fmt.Errorf("%q is not an IPv4 address", s)
	}
	return a, nil
}

func u32(a netip.Addr) uint32 {
	b := a.As4()
	return uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
}

func fromU32(v uint32) netip.Addr {
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)})
}

// nthAddr returns the n-th address of p (0 is the network address).
func nthAddr(p netip.Prefix, n uint32) netip.Addr {
	return fromU32(u32(p.Addr()) + n)
}

// lastAddr is the broadcast address of p.
func lastAddr(p netip.Prefix) uint32 {
	return u32(p.Addr()) | (^uint32(0) >> uint(p.Bits()))
}

// contains reports whether outer contains all of inner.
func contains(outer, inner netip.Prefix) bool {
	return outer.Bits() <= inner.Bits() && outer.Contains(inner.Addr())
}

// toIPNet converts for the upstream allocator, which works on net.IPNet with 4-byte IPv4.
func toIPNet(p netip.Prefix) *net.IPNet {
	b := p.Addr().As4()
	return &net.IPNet{IP: net.IP(b[:]), Mask: net.CIDRMask(p.Bits(), 32)}
}

// comparePrefix orders by address, then shorter prefix first.
func comparePrefix(a, b netip.Prefix) int {
	if c := a.Addr().Compare(b.Addr()); c != 0 {
		return c
	}
	return cmp.Compare(a.Bits(), b.Bits())
}

// sortedUniquePrefixes returns the prefixes as strings, sorted numerically, duplicates removed.
func sortedUniquePrefixes(ps []netip.Prefix) []string {
	s := slices.Clone(ps)
	slices.SortFunc(s, comparePrefix)
	s = slices.Compact(s)
	out := make([]string, len(s))
	for i, p := range s {
		out[i] = p.String()
	}
	return out
}

// appendUnique appends the strings not already present, keeping first occurrences in order.
func appendUnique(dst []string, src ...string) []string {
	for _, s := range src {
		if !slices.Contains(dst, s) {
			dst = append(dst, s)
		}
	}
	return dst
}

// sanitizeIdent keeps [A-Za-z0-9_] and maps everything else to '_', which is safe in keepalived
// instance names and router_ids.
func sanitizeIdent(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	return b.String()
}
