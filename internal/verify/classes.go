package verify

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Equivalence classes. Nodes (and their pod classes) with equal signatures forward every
// flow the same way up to renaming, so one representative pair per class pair stands for all
// node pairs of those classes. A signature captures:
//   - the node's own state: OS, up/down, forwarding, rp_filter, its interfaces' segments and
//     default gateways, held VIP instances, gateway memberships, CNI, which shared route tables
//     it uses, Windows HNS settings, endpoint policies and the current holder of its gateway;
//   - how every shared table (CNI routes, interned plan routes, dumps, the ToR) treats the
//     node's pod and node addresses, relative to the node ("via self", "via VIP of X", "via
//     node Y"), so a node some table forgets is never grouped with one it covers;
//   - anything dumped or conflicting makes the node unique.
// The differential test compares class-based results with per-node-pair results.

// Class is a set of equivalent nodes.
type Class struct {
	ID int
	// Key is the interned signature: stable while the signature exists, never reused.
	Key   int
	Sig   string
	Nodes []*Node
	dirty bool
}

// PodClass is a set of equivalent pods (one per node at most, in plan mode).
type PodClass struct {
	ID    int
	Key   int
	Sig   string
	Pods  []*Pod
	dirty bool
}

type classIndex struct {
	nodes    []*Class
	bySig    map[string]*Class
	pods     []*PodClass
	podBySig map[string]*PodClass
	tabID    map[*Table]int
	tabs     []*Table
	naive    bool
	ids      map[string]int
}

// intern gives a signature a small stable number for cache keys.
func (ci *classIndex) intern(sig string) int {
	if id, ok := ci.ids[sig]; ok {
		return id
	}
	id := len(ci.ids) + 1
	ci.ids[sig] = id
	return id
}

// probeTables are the shared tables whose treatment of a node's addresses enters its
// signature: every table used by more than one node, dump tables and the ToR's.
func (m *Model) probeTables() ([]*Table, map[*Table]int) {
	ids := map[*Table]int{}
	var tabs []*Table
	add := func(t *Table) {
		if t == nil {
			return
		}
		if _, ok := ids[t]; !ok {
			ids[t] = len(tabs)
			tabs = append(tabs, t)
		}
	}
	for _, n := range m.Nodes {
		add(n.explicit)
		add(n.cni)
		add(n.dumpTable)
	}
	if m.Tor != nil {
		add(m.Tor.local)
	}
	return tabs, ids
}

func (m *Model) classify(naive bool) *classIndex {
	ci := &classIndex{bySig: map[string]*Class{}, podBySig: map[string]*PodClass{}, naive: naive, ids: map[string]int{}}
	ci.tabs, ci.tabID = m.probeTables()
	for _, n := range m.Nodes {
		if n.OS != osLinux && n.OS != osWindows {
			continue
		}
		m.sign(n, ci)
		ci.add(n)
	}
	ci.sortAll()
	return ci
}

func (ci *classIndex) add(n *Node) {
	c := ci.bySig[n.sig]
	if c == nil {
		c = &Class{Sig: n.sig, Key: ci.intern(n.sig)}
		ci.bySig[n.sig] = c
		ci.nodes = append(ci.nodes, c)
	}
	c.Nodes = append(c.Nodes, n)
	c.dirty = true
	n.class = c
	for _, p := range n.Pods {
		pc := ci.podBySig[p.sig]
		if pc == nil {
			pc = &PodClass{Sig: p.sig, Key: ci.intern(p.sig)}
			ci.podBySig[p.sig] = pc
			ci.pods = append(ci.pods, pc)
		}
		pc.Pods = append(pc.Pods, p)
		pc.dirty = true
		p.class = pc
	}
}

func (ci *classIndex) remove(n *Node) {
	c := n.class
	if c == nil {
		return
	}
	c.Nodes = slices.DeleteFunc(c.Nodes, func(x *Node) bool { return x == n })
	if len(c.Nodes) == 0 {
		delete(ci.bySig, c.Sig)
		ci.nodes = slices.DeleteFunc(ci.nodes, func(x *Class) bool { return x == c })
	}
	for _, p := range n.Pods {
		pc := ci.podBySig[p.sig]
		if pc == nil {
			continue
		}
		pc.Pods = slices.DeleteFunc(pc.Pods, func(x *Pod) bool { return x == p })
		p.class = nil
		if len(pc.Pods) == 0 {
			delete(ci.podBySig, pc.Sig)
			ci.pods = slices.DeleteFunc(ci.pods, func(x *PodClass) bool { return x == pc })
		}
	}
	n.class = nil
}

// sortAll orders classes and members by node ID for deterministic output; only classes
// that changed are re-sorted.
func (ci *classIndex) sortAll() {
	for _, c := range ci.nodes {
		if c.dirty {
			slices.SortFunc(c.Nodes, func(a, b *Node) int { return a.ID - b.ID })
			c.dirty = false
		}
	}
	sort.SliceStable(ci.nodes, func(i, j int) bool { return ci.nodes[i].Nodes[0].ID < ci.nodes[j].Nodes[0].ID })
	for i, c := range ci.nodes {
		c.ID = i
	}
	for _, pc := range ci.pods {
		if !pc.dirty {
			continue
		}
		pc.dirty = false
		slices.SortFunc(pc.Pods, func(a, b *Pod) int {
			if a.Node.ID != b.Node.ID {
				return a.Node.ID - b.Node.ID
			}
			return int(a.IP) - int(b.IP)
		})
	}
	sort.SliceStable(ci.pods, func(i, j int) bool {
		a, b := ci.pods[i].Pods[0], ci.pods[j].Pods[0]
		if a.Node.ID != b.Node.ID {
			return a.Node.ID < b.Node.ID
		}
		return a.IP < b.IP
	})
	for i, pc := range ci.pods {
		pc.ID = i
	}
}

// sign computes the node's and its pods' signatures.
func (m *Model) sign(n *Node, ci *classIndex) {
	var b strings.Builder
	if ci.naive {
		b.WriteString("node:" + n.Name + ";")
	}
	b.WriteString(n.OS)
	if n.Down {
		b.WriteString("|down")
	}
	unique := n.DumpRoutes != nil || (n.Win != nil && (n.Win.LB != nil || n.Win.Missing != "" || slices.ContainsFunc(n.Sources, func(s string) bool { return strings.HasPrefix(s, "dump") })))
	for _, p := range n.Pods {
		if p.Conflict != "" || p.Broken != "" {
			unique = true
		}
	}
	if unique {
		b.WriteString("|unique:" + n.Name)
	}
	fmt.Fprintf(&b, "|fwd=%t", n.Forward)
	if n.FelixDown != "" {
		b.WriteString("|felix-down")
	}
	keys := make([]string, 0, len(n.RPFilter))
	for k := range n.RPFilter {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, "|rp.%s=%d", k, n.RPFilter[k])
	}
	for _, i := range n.Ifaces {
		seg := -1
		if i.Seg != nil {
			seg = i.Seg.ID
		}
		fmt.Fprintf(&b, "|if:%s@%d", i.Name, seg)
		if i.Gateway != 0 {
			b.WriteString(">" + i.Gateway.String())
		}
		if i == n.Cluster {
			b.WriteString("*")
		}
	}
	var held []string
	for a, ifc := range n.held {
		if in := m.vips[a]; in != nil {
			held = append(held, in.Group.Name+"/"+in.Name+"@"+ifc.Name)
		}
	}
	slices.Sort(held)
	held = slices.Compact(held)
	for _, h := range held {
		b.WriteString("|holds:" + h)
	}
	for _, g := range m.Groups {
		for _, mb := range g.Members {
			if mb.Node == n {
				fmt.Fprintf(&b, "|member:%s:%t", g.Name, mb.Running)
			}
		}
	}
	if ci.tabID != nil {
		fmt.Fprintf(&b, "|tabs:%d,%d", tabIdx(ci, n.explicit), tabIdx(ci, n.cni))
	}
	if l := n.Linux; l != nil {
		fmt.Fprintf(&b, "|cni:%s|masq:%t", l.CNI, l.Masq)
	}
	if w := n.Win; w != nil {
		fmt.Fprintf(&b, "|hns:%s/%s|holder:%s|gw:%d|ep:%d|vni:%d/%d", w.NetName, w.NetType, w.GatewayHolder,
			int64(w.PodGateway)-int64(w.Subnet.Addr), int64(w.HostEP)-int64(w.Subnet.Addr), w.VNI, w.UDPPort)
		switch {
		case w.SourceVIP == 0:
		case w.Subnet.Contains(w.SourceVIP):
			fmt.Fprintf(&b, "|svip:%d", int64(w.SourceVIP)-int64(w.Subnet.Addr))
		default:
			b.WriteString("|svip:" + w.SourceVIP.String())
		}
		if !w.KubeProxy {
			b.WriteString("|no-kube-proxy")
		}
		if w.DSR {
			b.WriteString("|dsr")
		}
		if w.HostRoutePolicy {
			b.WriteString("|hostroute-policy")
		}
		if w.NoRouteWhy != "" {
			b.WriteString("|noroute:" + w.NoRouteWhy)
		}
		if w.Adapter != nil && w.Adapter.Seg != nil {
			fmt.Fprintf(&b, "|adapter:%d", w.Adapter.Seg.ID)
		}
		for _, r := range w.HostRoutes {
			via := m.relRoute(&r, n)
			if r.Via != 0 {
				if rel := relToNode(Prefix{Addr: r.Via, Len: 32}, n); rel != r.Via.String()+"/32" {
					via = "=via:" + rel // the node's own pod gateway, whoever holds it
				}
			}
			b.WriteString("|hostroute:" + relToNode(r.Dst, n) + via + ">" + r.Dev)
		}
		if w.Group != nil {
			b.WriteString("|group:" + w.Group.Name)
			for _, in := range w.Group.Instances {
				for _, v := range in.VIPs {
					if v.Windows == n.Name {
						b.WriteString("|gwholder:" + holderName(in))
					}
				}
			}
		}
	}
	for _, r := range n.PodRanges {
		fmt.Fprintf(&b, "|range/%d", r.Len)
	}
	// How shared tables treat this node's addresses.
	probe := []Addr{n.IP()}
	if len(n.Pods) > 0 {
		probe = append(probe, n.Pods[0].IP)
	}
	for _, t := range ci.tabs {
		for _, a := range probe {
			b.WriteString("|cov:")
			b.WriteString(strconv.Itoa(ci.tabID[t]))
			b.WriteString(m.relRoute(t.Lookup(a), n))
		}
	}
	n.sig = b.String()
	for _, p := range n.Pods {
		p.sig = n.sig + "||" + podSig(p)
	}
}

func tabIdx(ci *classIndex, t *Table) int {
	if t == nil {
		return -1
	}
	return ci.tabID[t]
}

func holderName(in *Instance) string {
	if in.Holder == nil || in.Forced != "" {
		return "none"
	}
	return in.Holder.Name
}

// relRoute describes a route relative to the destination node d.
func (m *Model) relRoute(r *Route, d *Node) string {
	if r == nil {
		return "=none"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "=%d/%d/%d", r.Type, r.Kind, r.Dst.Len)
	switch {
	case r.Via == 0:
		b.WriteString("/onlink:" + r.Dev)
	case r.Via == d.IP():
		b.WriteString("/self")
	case m.vips[r.Via] != nil:
		b.WriteString("/vip:" + m.vips[r.Via].Name)
	case m.nodeIPs[r.Via] != nil:
		b.WriteString("/node:" + m.nodeIPs[r.Via].Name)
	default:
		b.WriteString("/via:" + r.Via.String())
	}
	return b.String()
}

// relToNode describes a prefix relative to node n when it lies in one of n's pod ranges (so
// that "my pod CIDR" is the same for every node), absolutely otherwise.
func relToNode(p Prefix, n *Node) string {
	for i, r := range n.PodRanges {
		if r.Contains(p.Addr) && p.Len >= r.Len {
			return fmt.Sprintf("pods%d+%d/%d", i, int64(p.Addr)-int64(r.Addr), p.Len)
		}
	}
	return p.String()
}

func podSig(p *Pod) string {
	var b strings.Builder
	if p.Broken != "" || p.Conflict != "" {
		b.WriteString("unique:" + p.Node.Name + "/" + p.Name)
	}
	fmt.Fprintf(&b, "|sib:%t", p.Sib != 0)
	if ep := p.EP; ep != nil {
		fmt.Fprintf(&b, "|nat:%t", ep.OutboundNAT)
		for _, e := range ep.Exceptions {
			b.WriteString("," + e.String())
		}
		for _, r := range ep.Routes {
			fmt.Fprintf(&b, "|route:%s/%t", r.Dst, r.NeedEncap)
		}
		if len(p.Node.PodRanges) > 0 {
			fmt.Fprintf(&b, "|gw:%d", int64(ep.Gateway)-int64(p.Node.PodRanges[0].Addr))
		}
	}
	return b.String()
}

// depSet records the facts a flow evaluation read, for incremental invalidation.
type depSet struct {
	keys []uint64
}

func newDeps() *depSet { return &depSet{keys: make([]uint64, 0, 16)} }

func (d *depSet) add(k uint64) {
	if d != nil {
		d.keys = append(d.keys, k)
	}
}

// unique sorts and deduplicates the recorded keys.
func (d *depSet) unique() []uint64 {
	slices.Sort(d.keys)
	return slices.Compact(d.keys)
}

// depCover are the keys a new route for p can change: p itself, and the /24 buckets of the
// addresses it covers, which lookups that matched a shorter route recorded (they may now
// match p). A route shorter than /16 invalidates everything (depAll).
func depCover(p Prefix) []uint64 {
	out := []uint64{depRoute(p)}
	switch {
	case p.Len >= 24:
		out = append(out, depBucket(p.Addr))
	case p.Len >= 16:
		for a := p.Addr; p.Contains(a); a += 256 {
			out = append(out, depBucket(a))
		}
	default:
		out = append(out, depAll)
	}
	return out
}

// depAll invalidates every cached result.
const depAll = uint64(7) << 60

func depBucket(a Addr) uint64 { return 4<<60 | uint64(a>>8) }

// lookup records a route lookup of a that matched r.
func (d *depSet) lookup(a Addr, r *Route) {
	d.add(depRoute(r.Dst))
	if r.Dst.Len < 24 {
		d.add(depBucket(a))
	}
}

func depNode(n *Node) uint64             { return 1<<60 | uint64(n.ID) }
func depRoute(p Prefix) uint64           { return 2<<60 | uint64(p.Addr)<<8 | uint64(p.Len) }
func depARP(s *Segment, a Addr) uint64   { return 3<<60 | uint64(s.ID)<<32 | uint64(a) }
func (d *depSet) node(n *Node)           { d.add(depNode(n)) }
func (d *depSet) route(r *Route)         { d.add(depRoute(r.Dst)) }
func (d *depSet) arp(s *Segment, a Addr) { d.add(depARP(s, a)) }
