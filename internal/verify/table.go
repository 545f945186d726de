package verify

import (
	"slices"
)

// RouteType is what a route does with a matching packet.
type RouteType uint8

const (
	// RouteUnicast forwards: on-link out of Dev when Via is zero, else to Via through Dev.
	RouteUnicast RouteType = iota
	// RouteBlackhole silently discards (Calico's local block route, "*" in route -n).
	RouteBlackhole
	// RouteUnreachable rejects (unreachable/prohibit, "!" in route -n).
	RouteUnreachable
	// RouteLocal delivers to this host (table local).
	RouteLocal
)

// DevKind classifies the outgoing interface, because the model treats pod interfaces and
// tunnels differently from NICs.
type DevKind uint8

const (
	DevNIC          DevKind = iota // a NIC or VLAN on an L2 segment
	DevPod                         // cali*, veth: a local pod (Calico /32 routes)
	DevBridge                      // cni0/cbr0/docker0: local pods behind a bridge
	DevIPIP                        // tunl0: IP-in-IP to Via
	DevVXLAN                       // flannel.1 / vxlan*: VXLAN to the node owning Via
	DevNone                        // no device ("*")
	DevHostEndpoint                // Windows vEthernet (cbr0) host endpoint into the HNS network
)

func devKind(dev string) DevKind {
	switch {
	case dev == "" || dev == "*":
		return DevNone
	case dev == "tunl0":
		return DevIPIP
	case dev == "flannel.1" || hasPrefix(dev, "vxlan") || hasPrefix(dev, "flannel."):
		return DevVXLAN
	case hasPrefix(dev, "cali") || hasPrefix(dev, "veth"):
		return DevPod
	case dev == "cni0" || dev == "cbr0" || dev == "docker0" || dev == "kube-bridge":
		return DevBridge
	}
	return DevNIC
}

func hasPrefix(s, p string) bool { return len(s) >= len(p) && s[:len(p)] == p }

// Route is one entry of a node's forwarding table.
type Route struct {
	Dst    Prefix
	Type   RouteType
	Via    Addr
	Dev    string
	Kind   DevKind
	Metric int
	// Src is the preferred source address (ip route "src"), zero when absent.
	Src Addr
	// Proto is who installed the route (ip route "proto": kernel, bird, static, boot, ...),
	// empty when the dump does not say (route -n) or the route is the model's own.
	Proto string
	// Origin says where the route came from: "plan: ..." or "file:line".
	Origin string
}

func (r *Route) String() string {
	s := r.Dst.String()
	switch r.Type {
	case RouteBlackhole:
		return "blackhole " + s
	case RouteUnreachable:
		return "unreachable " + s
	case RouteLocal:
		return "local " + s + " dev " + r.Dev
	}
	if r.Via != 0 {
		s += " via " + r.Via.String()
	}
	if r.Dev != "" {
		s += " dev " + r.Dev
	}
	return s
}

// Table is a longest-prefix-match table: one hash map per prefix length, probed from /32
// down, so a lookup costs at most one map probe per length in use.
type Table struct {
	byLen [33]map[Addr]*Route
	lens  []uint8 // lengths in use, longest first
	n     int
}

// NewTable builds a table; for duplicate prefixes the lowest metric wins (the first on ties).
func NewTable(routes []Route) *Table {
	t := &Table{}
	for i := range routes {
		t.Add(routes[i])
	}
	return t
}

// Add inserts or replaces (lower metric wins) a route.
func (t *Table) Add(r Route) {
	m := t.byLen[r.Dst.Len]
	if m == nil {
		m = map[Addr]*Route{}
		t.byLen[r.Dst.Len] = m
		t.lens = append(t.lens, r.Dst.Len)
		slices.SortFunc(t.lens, func(a, b uint8) int { return int(b) - int(a) })
	}
	if old, ok := m[r.Dst.Addr]; ok {
		if old.Metric <= r.Metric {
			return
		}
	} else {
		t.n++
	}
	rr := r
	m[r.Dst.Addr] = &rr
}

// Remove deletes the route for exactly p.
func (t *Table) Remove(p Prefix) {
	if m := t.byLen[p.Len]; m != nil {
		if _, ok := m[p.Addr]; ok {
			delete(m, p.Addr)
			t.n--
		}
	}
}

// Lookup returns the longest match for a, or nil.
func (t *Table) Lookup(a Addr) *Route {
	if t == nil {
		return nil
	}
	for _, l := range t.lens {
		if r, ok := t.byLen[l][a&mask(l)]; ok {
			return r
		}
	}
	return nil
}

// Exact returns the route for exactly p, or nil.
func (t *Table) Exact(p Prefix) *Route {
	if t == nil || t.byLen[p.Len] == nil {
		return nil
	}
	return t.byLen[p.Len][p.Addr]
}

// layers is a node's forwarding table as an ordered stack of tables: a node-local table and
// tables shared by many nodes (the CNI's routes to other nodes, explicit plan routes). The
// longest match over all layers wins; on equal length the earlier layer wins, which is how a
// node's own pod route overrides the shared "pod CIDR via that node" entry for itself.
type layers []*Table

// lookup returns the winning route and the index of the layer it came from.
func (ls layers) lookup(a Addr) (*Route, int) {
	var best *Route
	bi := -1
	for i, t := range ls {
		r := t.Lookup(a)
		if r == nil {
			continue
		}
		if best == nil || r.Dst.Len > best.Dst.Len {
			best, bi = r, i
		}
	}
	return best, bi
}
