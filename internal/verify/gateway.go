package verify

import (
	"fmt"
	"slices"
)

// keepalived as the model sees it: every member starts BACKUP with nopreempt (the plan's
// configuration, seed 000 §2.6), so the first election goes to the highest priority (VRRP's
// skew time makes it time out first; ties go to the higher primary address) and afterwards
// the VIPs stay where they are: a returning higher-priority member does not take them back.
// Only when the holder stops does the highest-priority running member take over. A member
// can hold an instance only if it has the group's interface.

func (m *Model) eligible(in *Instance, mb *Member) bool {
	if !mb.Running || mb.Node.Down || in.Forced != "" {
		return false
	}
	if in.ineligible[mb.Node] {
		return false
	}
	return mb.Node.iface(in.Group.Iface) != nil
}

// best returns the running member that wins an election.
func (m *Model) best(in *Instance) *Node {
	var win *Member
	for _, mb := range in.Group.Members {
		if !m.eligible(in, mb) {
			continue
		}
		if win == nil || mb.Priority > win.Priority || (mb.Priority == win.Priority && mb.Node.IP() > win.Node.IP()) {
			win = mb
		}
	}
	if win == nil {
		return nil
	}
	return win.Node
}

func (m *Model) memberOf(in *Instance, n *Node) *Member {
	for _, mb := range in.Group.Members {
		if mb.Node == n {
			return mb
		}
	}
	return nil
}

// electAll settles every instance no dump decided.
func (m *Model) electAll() {
	for _, g := range m.Groups {
		for _, in := range g.Instances {
			if in.Holder != nil || in.decided {
				continue
			}
			if h := m.best(in); h != nil {
				m.setHolder(in, h, "elected: highest-priority running member")
			}
		}
	}
}

// setHolder moves an instance's VIPs to h (nil: nobody holds them) and updates everything
// that depends on it: addresses, ARP, connected routes, Calico's exported routes.
func (m *Model) setHolder(in *Instance, h *Node, origin string) []uint64 {
	var changed []uint64
	old := in.Holder
	addrs := in.addrs()
	if old != nil {
		for _, a := range addrs {
			if ifc := old.held[a]; ifc != nil {
				if ifc.Seg != nil && ifc.Seg.arp[a] == ifc {
					delete(ifc.Seg.arp, a)
					changed = append(changed, depARP(ifc.Seg, a))
				}
				delete(old.held, a)
			}
		}
		changed = append(changed, depNode(old))
	}
	in.Holder, in.Origin = h, origin
	if h != nil {
		ifc := h.iface(in.Group.Iface)
		for _, a := range addrs {
			if in.missing[a] != "" {
				continue
			}
			h.held[a] = ifc
			if ifc != nil && ifc.Seg != nil {
				if prev := ifc.Seg.arp[a]; prev == nil || prev.Node == h {
					ifc.Seg.arp[a] = ifc
				}
				changed = append(changed, depARP(ifc.Seg, a))
			}
		}
		changed = append(changed, depNode(h))
	}
	for _, n := range []*Node{old, h} {
		if n != nil {
			m.buildLocal(n)
		}
	}
	if m.calico != nil {
		m.calico.holderChanged(in)
	}
	changed = append(changed, m.followVIP(in)...)
	for _, v := range in.VIPs {
		changed = append(changed, depRoute(prefixOf(v.Addr, v.Len)))
		// Windows nodes served by this instance: the segment where their gateway must answer.
		if w := m.byName[v.Windows]; w != nil && w.Win != nil && w.Win.Adapter != nil && w.Win.Adapter.Seg != nil {
			changed = append(changed, depARP(w.Win.Adapter.Seg, v.Addr))
		}
	}
	return changed
}

// addVIP adds a gateway VIP to an instance and, when the instance is held, places it on the
// holder without moving the others.
func (m *Model) addVIP(in *Instance, v VIP) []uint64 {
	in.VIPs = append(in.VIPs, v)
	m.vips[v.Addr] = in
	p := prefixOf(v.Addr, v.Len)
	changed := depCover(p)
	h := in.Holder
	if h == nil || in.Forced != "" {
		return changed
	}
	ifc := h.iface(in.Group.Iface)
	h.held[v.Addr] = ifc
	if ifc != nil && ifc.Seg != nil {
		if prev := ifc.Seg.arp[v.Addr]; prev == nil {
			ifc.Seg.arp[v.Addr] = ifc
		}
		changed = append(changed, depARP(ifc.Seg, v.Addr))
		if v.Len < 32 {
			h.local.Add(Route{Dst: p, Dev: ifc.Name, Src: v.Addr, Origin: "connected route of VIP " + v.Addr.String() + " (" + in.Name + ")"})
		}
	}
	if m.calico != nil && m.calico.exportsVIP(p) && h.FelixDown == "" {
		for k, t := range m.calico.tables {
			if h.OS == osLinux && v.Len < 32 {
				t.Add(m.calico.route(k, p, h, fmt.Sprintf("calico BGP: connected route of VIP %s exported by its holder %s", v.Addr, h.Name)))
			}
		}
	}
	return changed
}

func (in *Instance) addrs() []Addr {
	out := make([]Addr, 0, len(in.VIPs)+1)
	for _, v := range in.VIPs {
		out = append(out, v.Addr)
	}
	if in.RouterVIP != 0 {
		out = append(out, in.RouterVIP)
	}
	return out
}

// failover re-elects instances whose holder cannot hold them any more, and (only where
// preemption is enabled) lets a better member take over.
func (m *Model) failover() []uint64 {
	var changed []uint64
	for _, g := range m.Groups {
		for _, in := range g.Instances {
			h := in.Holder
			if in.Forced != "" {
				if h != nil {
					changed = append(changed, m.setHolder(in, nil, "vip-unheld scenario")...)
				}
				continue
			}
			if h != nil {
				mb := m.memberOf(in, h)
				if mb != nil && m.eligible(in, mb) {
					if !in.Preempt {
						continue
					}
					if b := m.best(in); b != nil && b != h && m.memberOf(in, b).Priority > mb.Priority {
						changed = append(changed, m.setHolder(in, b, "preempted by higher priority")...)
					}
					continue
				}
			}
			nb := m.best(in)
			if nb != h {
				why := "failover: highest-priority running member"
				if nb == nil {
					why = "no running member left"
				}
				changed = append(changed, m.setHolder(in, nb, why)...)
			}
		}
	}
	return changed
}

// applyKeepalivedDumps sets holders from keepalived.data dumps.
func (m *Model) applyKeepalivedDumps(ds *DumpSet) error {
	type claim struct {
		node *Node
		at   string
	}
	claims := map[*Instance]claim{}
	dumped := map[*Instance]map[*Node]bool{}
	for _, f := range ds.Files {
		if f.Keepalived == nil {
			continue
		}
		n := m.byName[f.Node]
		var groups []*Group
		for _, g := range m.Groups {
			if slices.ContainsFunc(g.Members, func(mb *Member) bool { return mb.Node == n }) {
				groups = append(groups, g)
			}
		}
		if len(groups) == 0 {
			return dumpErr(f.Path, 1, "keepalived dump for %s, which is a member of no gateway group in the plan", f.Node)
		}
		for _, st := range f.Keepalived.Instances {
			var in *Instance
			for _, g := range groups {
				for _, x := range g.Instances {
					if x.VRID == st.VRID {
						in = x
					}
				}
			}
			at := fmt.Sprintf("%s:%d", f.Path, st.Line)
			if in == nil {
				m.Notes = append(m.Notes, fmt.Sprintf("%s: instance %s (VRID %d) is not in the plan; ignored", at, st.Name, st.VRID))
				continue
			}
			if dumped[in] == nil {
				dumped[in] = map[*Node]bool{}
			}
			dumped[in][n] = true
			if st.Preempt {
				in.Preempt = true
			}
			switch st.State {
			case "MASTER":
				if c, ok := claims[in]; ok && c.node != n {
					return dumpErr(f.Path, st.Line, "contradictory keepalived state: %s is MASTER of %s (VRID %d) here and on %s (%s)", n.Name, in.Name, in.VRID, c.node.Name, c.at)
				}
				claims[in] = claim{n, at}
				// VIPs the holder really carries.
				have := map[Addr]bool{}
				for _, v := range st.VIPs {
					have[v.Addr] = true
				}
				for _, a := range in.addrs() {
					if !have[a] {
						if in.missing == nil {
							in.missing = map[Addr]string{}
						}
						in.missing[a] = fmt.Sprintf("the MASTER %s does not configure %s (%s)", n.Name, a, at)
					}
				}
			case "FAULT", "STOP", "DELETED":
				if in.ineligible == nil {
					in.ineligible = map[*Node]bool{}
				}
				in.ineligible[n] = true
			}
		}
	}
	for _, g := range m.Groups {
		for _, in := range g.Instances {
			if c, ok := claims[in]; ok {
				if c.node.iface(g.Iface) == nil {
					return dumpErr(c.at, 0, "%s reports MASTER of %s but has no interface %s in the plan", c.node.Name, in.Name, g.Iface)
				}
				m.setHolder(in, c.node, "keepalived dump "+c.at)
				in.decided = true
				continue
			}
			if len(dumped[in]) == len(g.Members) && len(g.Members) > 0 {
				in.decided = true
				in.Origin = "every member's keepalived dump shows it BACKUP/FAULT"
			}
		}
	}
	return nil
}

// vipRoute is a dumped route that exists only because a VRRP instance's VIPs were where they
// were when the table was captured: the holder's connected route of a VIP, or another node's
// route to the VIP's subnet via the holder (the holder's connected route exported over Calico's
// BGP, seed 000 §2.6: "10.160.11.0 via 100.100.126.204 dev tunl0"). What the route stands for
// is the VIP, not the node that held it, so it follows the VIP: when the VIPs move the kernel
// loses the connected route with the address and BIRD withdraws the old holder's export and
// installs the new holder's.
type vipRoute struct {
	in     *Instance
	p      Prefix
	holder *Node // the holder when the table was dumped
	dump   Route
}

// bindVIPRoutes finds the dumped routes that follow a VIP, for the holders the dumps and the
// election settled on. A route via a member that does not hold the VIP is not one (a stale or
// static route: TestForwardingLoop), nor is one the dump says was added by hand (ip route
// "proto static" or "boot").
func (m *Model) bindVIPRoutes() {
	for _, n := range m.Nodes {
		n.vipRoutes = nil
		if n.dumpTable == nil {
			continue
		}
		for _, g := range m.Groups {
			for _, in := range g.Instances {
				h := in.Holder
				if h == nil || in.Forced != "" {
					continue
				}
				for _, v := range in.VIPs {
					p := prefixOf(v.Addr, v.Len)
					r := n.dumpTable.Exact(p)
					if v.Len >= 32 || r == nil || r.Type != RouteUnicast || r.Proto == "static" || r.Proto == "boot" {
						continue
					}
					connected := h == n && r.Via == 0 && r.Dev == g.Iface
					exported := h != n && r.Via != 0 && m.nodeIPs[r.Via] == h && m.calico != nil && m.calico.exportsVIP(p)
					if connected || exported {
						n.vipRoutes = append(n.vipRoutes, vipRoute{in: in, p: p, holder: h, dump: *r})
					}
				}
			}
		}
	}
}

// followVIP replaces the dumped routes that follow in's VIPs with what the node has for the
// current holder: the dumped route itself when the VIPs are back where they were at dump time,
// otherwise the route the model gives the node for the VIP's subnet (the new holder's connected
// route, or the CNI's route via the new holder), or none (nobody holds the VIPs, or nothing
// exports the route).
func (m *Model) followVIP(in *Instance) []uint64 {
	var changed []uint64
	for _, n := range m.Nodes {
		for _, vr := range n.vipRoutes {
			if vr.in != in {
				continue
			}
			n.dumpTable.Remove(vr.p)
			changed = append(changed, depCover(vr.p)...)
			switch in.Holder {
			case vr.holder:
				n.dumpTable.Add(vr.dump)
				continue
			case nil:
				continue
			}
			var now *Route
			for _, t := range []*Table{n.local, n.cni} {
				if r := t.Exact(vr.p); r != nil && now == nil {
					now = r
				}
			}
			if now == nil {
				continue
			}
			r := *now
			r.Origin = fmt.Sprintf("%s: the dumped route %s followed VIP subnet %s from %s to %s — %s", vr.dump.Origin, vr.dump.String(), vr.p, vr.holder.Name, in.Holder.Name, now.Origin)
			n.dumpTable.Add(r)
		}
	}
	return changed
}

// followers are the nodes whose dumped routes follow in's VIPs.
func (m *Model) followers(in *Instance) []*Node {
	var out []*Node
	for _, n := range m.Nodes {
		for _, vr := range n.vipRoutes {
			if vr.in == in {
				out = append(out, n)
				break
			}
		}
	}
	return out
}
