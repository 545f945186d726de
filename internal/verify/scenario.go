package verify

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kubewin/kubewin/internal/plan"
	"github.com/kubewin/kubewin/pkg/api/v1alpha1"
)

// Scenario is a fault (or recovery) applied to the model before verifying again.
type Scenario struct {
	// Kind is gateway-down, gateway-up, node-down, node-up or vip-unheld.
	Kind    string
	Targets []string
}

func (s Scenario) String() string { return s.Kind + "=" + strings.Join(s.Targets, ",") }

var scenarioKinds = []string{"gateway-down", "gateway-up", "node-down", "node-up", "vip-unheld"}

// ParseScenario parses KIND=TARGET[,TARGET].
func ParseScenario(s string) (Scenario, error) {
	k, v, ok := strings.Cut(s, "=")
	if !ok || v == "" {
		return Scenario{}, fmt.Errorf("scenario %q: expected KIND=TARGET[,TARGET] with KIND one of %s", s, strings.Join(scenarioKinds, ", "))
	}
	if !slices.Contains(scenarioKinds, k) {
		return Scenario{}, fmt.Errorf("scenario %q: unknown kind %q (expected one of %s)", s, k, strings.Join(scenarioKinds, ", "))
	}
	var ts []string
	for _, t := range strings.Split(v, ",") {
		if t = strings.TrimSpace(t); t != "" {
			ts = append(ts, t)
		}
	}
	if len(ts) == 0 {
		return Scenario{}, fmt.Errorf("scenario %q: no target", s)
	}
	return Scenario{Kind: k, Targets: ts}, nil
}

// Apply changes the model and marks what the next Run must re-evaluate.
func (v *Verifier) Apply(sc Scenario) error {
	m := v.m
	var changed []uint64
	switch sc.Kind {
	case "gateway-down", "gateway-up", "node-down", "node-up":
		for _, t := range sc.Targets {
			n := m.byName[t]
			if n == nil || (n.OS != osLinux && n.OS != osWindows) {
				return fmt.Errorf("scenario %s: no node %q in the plan", sc, t)
			}
			member := false
			for _, g := range m.Groups {
				for _, mb := range g.Members {
					if mb.Node == n {
						member = true
						mb.Running = sc.Kind == "gateway-up" || sc.Kind == "node-up"
					}
				}
			}
			if !member && strings.HasPrefix(sc.Kind, "gateway") {
				return fmt.Errorf("scenario %s: %s is a member of no gateway group", sc, t)
			}
			switch sc.Kind {
			case "node-down":
				if !n.Down {
					n.Down = true
					changed = append(changed, m.nodeGone(n)...)
				}
			case "node-up":
				if n.Down {
					n.Down = false
					changed = append(changed, m.nodeBack(n)...)
				}
			}
			changed = append(changed, depNode(n))
			v.dirty[n] = true
		}
	case "vip-unheld":
		for _, t := range sc.Targets {
			ins := m.instancesFor(t)
			if len(ins) == 0 {
				return fmt.Errorf("scenario %s: %q is no gateway VIP, Windows node with a keepalived gateway, group or VRRP instance", sc, t)
			}
			for _, in := range ins {
				in.Forced = "vip-unheld scenario (" + t + ")"
			}
		}
	default:
		return fmt.Errorf("unknown scenario %q", sc.Kind)
	}
	changed = append(changed, v.failover()...)
	v.invalidate(changed)
	v.Scenarios = append(v.Scenarios, sc.String())
	return nil
}

// failover re-elects holders and marks holders and served Windows nodes dirty.
func (v *Verifier) failover() []uint64 {
	m := v.m
	before := map[*Instance]*Node{}
	for _, g := range m.Groups {
		for _, in := range g.Instances {
			before[in] = in.Holder
		}
	}
	changed := m.failover()
	for _, g := range m.Groups {
		for _, in := range g.Instances {
			if before[in] == in.Holder && in.Forced == "" {
				continue
			}
			// Hosts keep the MAC of whoever held the VIPs last (a holder that took over from
			// nobody starts from failed entries: no transient).
			switch {
			case before[in] != nil && before[in] != in.Holder:
				v.moved[in] = before[in]
			case in.Holder != nil && (before[in] == nil || v.moved[in] == in.Holder):
				delete(v.moved, in)
			}
			for _, n := range append([]*Node{before[in], in.Holder}, m.followers(in)...) {
				if n != nil {
					v.dirty[n] = true
				}
			}
			for _, vip := range in.VIPs {
				if w := m.byName[vip.Windows]; w != nil {
					v.dirty[w] = true
				}
			}
		}
	}
	return changed
}

func (m *Model) instancesFor(t string) []*Instance {
	var out []*Instance
	a, aerr := ParseAddr(t)
	for _, g := range m.Groups {
		for _, in := range g.Instances {
			hit := g.Name == t || in.Name == t
			for _, vip := range in.VIPs {
				if vip.Windows == t || (aerr == nil && vip.Addr == a) {
					hit = true
				}
			}
			if aerr == nil && in.RouterVIP == a {
				hit = true
			}
			if hit {
				out = append(out, in)
			}
		}
	}
	return out
}

// nodeGone withdraws a dead node: BGP/flannel routes to it go, its addresses stop answering.
func (m *Model) nodeGone(n *Node) []uint64 {
	if m.calico != nil {
		m.calico.nodeRemoved(n)
	}
	if m.flannel != nil {
		m.flannel.nodeRemoved(n)
	}
	return nodePresenceDeps(n)
}

func (m *Model) nodeBack(n *Node) []uint64 {
	if m.calico != nil {
		m.calico.nodeAdded(n)
	}
	if m.flannel != nil {
		m.flannel.nodeAdded(n)
	}
	return nodePresenceDeps(n)
}

// nodePresenceDeps are the facts a node's death or return changes: the node, the routes to its
// pod ranges and the ARP answers for its addresses.
func nodePresenceDeps(n *Node) []uint64 {
	changed := []uint64{depNode(n)}
	for _, r := range n.PodRanges {
		changed = append(changed, depRoute(r))
	}
	for _, i := range n.Ifaces {
		if i.Seg != nil {
			changed = append(changed, depARP(i.Seg, i.Addr))
		}
	}
	return changed
}

// Join adds a node planned after the model was built (the planner's NodePlan for it, the
// spec node for its NICs, and — for a Windows node of a keepalived design — its gateway VIP
// and the instance that carries it).
func (v *Verifier) Join(np *plan.NodePlan, sn *v1alpha1.Node, vip *plan.VIPPlan, instance string) error {
	m := v.m
	segs := len(m.Segments)
	if err := m.addPlannedNode(np, sn); err != nil {
		return err
	}
	n := m.byName[np.Name]
	if n.Win != nil && n.Win.calicoPending {
		// calico/hostprocess: the joining node's IPAM block, among the blocks now in use.
		if err := m.calicoWindowsBlocks(); err != nil {
			return fmt.Errorf("join %s: %w", np.Name, err)
		}
	}
	var changed []uint64
	if len(m.Segments) != segs {
		// A new segment changes no existing signature (IDs only grow).
		changed = append(changed, depNode(n))
	}
	if n.OS == osLinux && len(n.PodRanges) > 0 {
		pod := &Pod{Node: n, Name: "pod", IP: n.PodRanges[0].Nth(10), Count: 1, Origin: "plan"}
		if n.PodRanges[0].Contains(pod.IP + 1) {
			pod.Sib = pod.IP + 1
		}
		n.Pods = []*Pod{pod}
	}
	for _, r := range n.PodRanges {
		if o, _, ok := m.podOwner.get(r.Addr); ok && o != n {
			m.markConflict(o, n, o.PodRanges[0], r)
			v.dirty[o] = true
		}
		m.podOwner.set(r, n)
		changed = append(changed, depCover(r)...)
	}
	if w := n.Win; w != nil && w.Adapter != nil && w.Adapter.Seg != nil && w.Subnet.Len > 0 && w.NetType != "Overlay" {
		w.Adapter.Seg.bridges.set(w.Subnet, n)
		changed = append(changed, depARP(w.Adapter.Seg, w.Subnet.Addr))
	}
	for _, i := range n.Ifaces {
		if i.Seg != nil {
			changed = append(changed, depARP(i.Seg, i.Addr))
		}
	}
	m.buildLocal(n)
	if m.calico != nil && (n.OS == osLinux || m.calico.windowsPeer(n)) {
		m.calico.nodeAdded(n)
	}
	if m.flannel != nil {
		m.flannel.nodeAdded(n)
	}
	if vip != nil && n.Win != nil {
		var in *Instance
		for _, g := range m.Groups {
			for _, x := range g.Instances {
				if x.Name == instance {
					in = x
				}
			}
		}
		if in == nil {
			return fmt.Errorf("join %s: no VRRP instance %q", np.Name, instance)
		}
		pfx, a, err := parseIfacePrefix(vip.Address)
		if err != nil {
			return fmt.Errorf("join %s: VIP: %w", np.Name, err)
		}
		pc, err := ParsePrefix(vip.PodCIDR)
		if err != nil {
			return fmt.Errorf("join %s: VIP pod CIDR: %w", np.Name, err)
		}
		n.Win.Group = in.Group
		changed = append(changed, m.addVIP(in, VIP{Addr: a, Len: pfx.Len, PodCIDR: pc, Windows: np.Name})...)
		if in.Holder == nil {
			changed = append(changed, v.failover()...)
		}
	}
	// A table the classes have not seen (new explicit routes) changes every signature.
	for _, t := range []*Table{n.explicit, n.cni} {
		if t != nil {
			if _, ok := v.ci.tabID[t]; !ok {
				v.ci = m.classify(v.naive)
				v.cache = map[flowKey]*cached{}
				v.byDep = map[uint64][]flowKey{}
				return nil
			}
		}
	}
	v.dirty[n] = true
	v.invalidate(changed)
	return nil
}
