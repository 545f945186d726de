package verify

import (
	"fmt"
	"math/bits"
	"net/netip"
	"strconv"
	"strings"
)

// Addr is an IPv4 address as a big-endian integer. The model is IPv4-only, like the cluster
// designs it verifies; a uint32 keeps route lookups allocation-free at 5,000-node scale.
type Addr uint32

// Prefix is an IPv4 prefix; Addr is always masked to Len bits.
type Prefix struct {
	Addr Addr
	Len  uint8
}

func mask(l uint8) Addr {
	if l == 0 {
		return 0
	}
	return Addr(^uint32(0) << (32 - l))
}

func (a Addr) String() string {
	b := make([]byte, 0, 15)
	for i := 3; i >= 0; i-- {
		b = strconv.AppendUint(b, uint64(byte(a>>(8*i))), 10)
		if i > 0 {
			b = append(b, '.')
		}
	}
	return string(b)
}

func (p Prefix) String() string { return p.Addr.String() + "/" + strconv.Itoa(int(p.Len)) }

// Contains reports whether a is inside p.
func (p Prefix) Contains(a Addr) bool { return a&mask(p.Len) == p.Addr }

// Covers reports whether q lies entirely inside p.
func (p Prefix) Covers(q Prefix) bool { return q.Len >= p.Len && p.Contains(q.Addr) }

// Overlaps reports whether p and q share any address.
func (p Prefix) Overlaps(q Prefix) bool { return p.Covers(q) || q.Covers(p) }

// Nth returns the n-th address of p (0 is the network address).
func (p Prefix) Nth(n uint32) Addr { return p.Addr + Addr(n) }

// Last is the last address of p.
func (p Prefix) Last() Addr { return p.Addr | ^mask(p.Len) }

func prefixOf(a Addr, l uint8) Prefix { return Prefix{Addr: a & mask(l), Len: l} }

// ParseAddr parses a dotted-quad IPv4 address.
func ParseAddr(s string) (Addr, error) {
	ip, err := netip.ParseAddr(strings.TrimSpace(s))
	if err != nil {
		return 0, fmt.Errorf("expected an IPv4 address, got %q", s)
	}
	if !ip.Is4() {
		return 0, fmt.Errorf("expected an IPv4 address, got %q", s)
	}
	b := ip.As4()
	return Addr(uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])), nil
}

// ParsePrefix parses a.b.c.d/n (a bare address is a /32); host bits must be zero.
func ParsePrefix(s string) (Prefix, error) {
	p, _, err := parseIfacePrefix(s)
	if err != nil {
		return Prefix{}, err
	}
	if p.Addr&^mask(p.Len) != 0 {
		return Prefix{}, fmt.Errorf("prefix %q has host bits set (expected %s)", s, prefixOf(p.Addr, p.Len))
	}
	return p, nil
}

// parseIfacePrefix parses an address with an optional /len and returns the address unmasked
// alongside its masked prefix.
func parseIfacePrefix(s string) (Prefix, Addr, error) {
	s = strings.TrimSpace(s)
	addr, length, found := strings.Cut(s, "/")
	a, err := ParseAddr(addr)
	if err != nil {
		return Prefix{}, 0, fmt.Errorf("expected an IPv4 prefix, got %q", s)
	}
	l := 32
	if found {
		l, err = strconv.Atoi(length)
		if err != nil || l < 0 || l > 32 {
			return Prefix{}, 0, fmt.Errorf("expected an IPv4 prefix length 0-32, got %q", s)
		}
	}
	return Prefix{Addr: a, Len: uint8(l)}, a, nil
}

// maskLen converts a dotted netmask (255.255.254.0) to a prefix length.
func maskLen(m Addr) (uint8, bool) {
	l := bits.LeadingZeros32(^uint32(m))
	if mask(uint8(l)) != m {
		return 0, false
	}
	return uint8(l), true
}
