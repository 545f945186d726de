//go:build linux

package gateway

import (
	"errors"
	"fmt"
	"net/netip"
	"sort"

	"github.com/vishvananda/netlink"

	"github.com/kubewin/kubewin/internal/plan"
)

// heldAddrs returns the IPv4 addresses on iface, read with netlink through h (a handle opened in
// the gateway's network namespace).
func heldAddrs(h *netlink.Handle, iface string) (map[netip.Addr]bool, error) {
	link, err := h.LinkByName(iface)
	if err != nil {
		return nil, fmt.Errorf("find interface %s: %w", iface, err)
	}
	addrs, err := retryDump(func() ([]netlink.Addr, error) { return h.AddrList(link, netlink.FAMILY_V4) })
	if err != nil {
		return nil, fmt.Errorf("list addresses of %s: %w", iface, err)
	}
	out := make(map[netip.Addr]bool, len(addrs))
	for _, a := range addrs {
		if ip, ok := netip.AddrFromSlice(a.IP.To4()); ok {
			out[ip] = true
		}
	}
	return out, nil
}

// retryDump repeats a netlink dump that the kernel marked interrupted (the table changed while
// it was read — keepalived adding hundreds of VIPs does that); the partial result is not used.
func retryDump[T any](f func() (T, error)) (T, error) {
	for i := 0; ; i++ {
		v, err := f()
		if errors.Is(err, netlink.ErrDumpInterrupted) && i < 50 {
			continue
		}
		return v, err
	}
}

// Holding is what one member holds of the installed layout.
type Holding struct {
	// VIPs are the held gateway VIPs (address/prefix), sorted.
	VIPs []string
	// Instances are the VRRP instances with at least one address held, sorted.
	Instances []string
	// Partial are instances only some of whose addresses are held (a transition in progress,
	// or an address removed by hand).
	Partial []string
}

// holding intersects the layout with the interface's addresses.
func holding(g plan.GatewayGroupPlan, addrs map[netip.Addr]bool) Holding {
	var h Holding
	for _, in := range g.Instances {
		held, total := 0, 0
		check := func(a string) bool {
			total++
			ip, err := parseAddrOrPrefix(a)
			if err == nil && addrs[ip] {
				held++
				return true
			}
			return false
		}
		for _, v := range in.VIPs {
			if check(v.Address) {
				h.VIPs = append(h.VIPs, v.Address)
			}
		}
		if in.RouterVIP != "" {
			check(in.RouterVIP)
		}
		if held > 0 {
			h.Instances = append(h.Instances, in.Name)
			if held < total {
				h.Partial = append(h.Partial, in.Name)
			}
		}
	}
	sortAddrStrings(h.VIPs)
	sort.Strings(h.Instances)
	sort.Strings(h.Partial)
	return h
}

func sortAddrStrings(s []string) {
	sort.Slice(s, func(i, j int) bool {
		a, _ := netip.ParsePrefix(s[i])
		b, _ := netip.ParsePrefix(s[j])
		if a.Addr() != b.Addr() {
			return a.Addr().Less(b.Addr())
		}
		return s[i] < s[j]
	})
}

// vipCount counts the gateway VIPs of a layout (router VIPs excluded).
func vipCount(g plan.GatewayGroupPlan) int {
	n := 0
	for _, in := range g.Instances {
		n += len(in.VIPs)
	}
	return n
}

// diffStrings returns the elements only in a and only in b (both sorted).
func diffStrings(a, b []string) (onlyA, onlyB []string) {
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case j == len(b) || (i < len(a) && a[i] < b[j]):
			onlyA = append(onlyA, a[i])
			i++
		case i == len(a) || b[j] < a[i]:
			onlyB = append(onlyB, b[j])
			j++
		default:
			i++
			j++
		}
	}
	return onlyA, onlyB
}
