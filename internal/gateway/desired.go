package gateway

import (
	"fmt"
	"net/netip"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubewin/kubewin/internal/plan"
)

// Skipped is a Windows node that gets no gateway VIP, with the reason (logged and counted).
type Skipped struct {
	Node   string
	UID    string
	Reason string
}

// podCIDROwners picks, for every IPv4 pod CIDR, the one node that owns it.
//
// A pod CIDR is the key, not the node name: when a CIDR is reused — the old node deleted and a
// new node (new UID, maybe the same name) given the same range — the VIP, its VRID and the
// rendered address stay the same, so keepalived keeps holding it without a flap, whichever order
// the delete and the add arrive in. When two live nodes claim one CIDR (the old one terminating,
// or a real conflict), the node not being deleted wins, then the newer one (the reuse case),
// then the larger UID; the loser is reported.
func podCIDROwners(nodes []*corev1.Node) ([]plan.WindowsPodCIDR, []Skipped) {
	type claim struct {
		node *corev1.Node
		cidr netip.Prefix
	}
	owners := map[netip.Prefix]claim{}
	var skipped []Skipped
	for _, n := range nodes {
		cidr, ok, reason := ipv4PodCIDR(n)
		if !ok {
			if reason != "" {
				skipped = append(skipped, Skipped{Node: n.Name, UID: string(n.UID), Reason: reason})
			}
			continue
		}
		prev, taken := owners[cidr]
		if !taken {
			owners[cidr] = claim{n, cidr}
			continue
		}
		winner, loser := prev.node, n
		if wins(n, prev.node) {
			winner, loser = n, prev.node
		}
		owners[cidr] = claim{winner, cidr}
		skipped = append(skipped, Skipped{Node: loser.Name, UID: string(loser.UID),
			Reason: fmt.Sprintf("pod CIDR %s is also assigned to node %s (uid %s), which owns its gateway", cidr, winner.Name, winner.UID)})
	}
	out := make([]plan.WindowsPodCIDR, 0, len(owners))
	for cidr, c := range owners {
		out = append(out, plan.WindowsPodCIDR{Name: c.node.Name, PodCIDR: cidr.String()})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].PodCIDR < out[j].PodCIDR })
	sort.Slice(skipped, func(i, j int) bool {
		if skipped[i].Node != skipped[j].Node {
			return skipped[i].Node < skipped[j].Node
		}
		return skipped[i].UID < skipped[j].UID
	})
	return out, skipped
}

// wins reports whether a should own a CIDR that b also claims.
func wins(a, b *corev1.Node) bool {
	if (a.DeletionTimestamp == nil) != (b.DeletionTimestamp == nil) {
		return a.DeletionTimestamp == nil
	}
	if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
		return b.CreationTimestamp.Before(&a.CreationTimestamp)
	}
	return a.UID > b.UID
}

// ipv4PodCIDR returns the node's IPv4 pod CIDR (spec.podCIDRs, falling back to spec.podCIDR).
// A node without one is not an error (the allocator has not run yet): reason is empty.
func ipv4PodCIDR(n *corev1.Node) (netip.Prefix, bool, string) {
	cidrs := n.Spec.PodCIDRs
	if len(cidrs) == 0 && n.Spec.PodCIDR != "" {
		cidrs = []string{n.Spec.PodCIDR}
	}
	for _, s := range cidrs {
		p, err := netip.ParsePrefix(s)
		if err != nil {
			return netip.Prefix{}, false, fmt.Sprintf("spec.podCIDRs entry %q is not a CIDR", s)
		}
		if p.Addr().Is4() {
			if p.Masked() != p {
				return netip.Prefix{}, false, fmt.Sprintf("spec.podCIDRs entry %q has host bits set", s)
			}
			if p.Bits() > 30 {
				return netip.Prefix{}, false, fmt.Sprintf("pod CIDR %s is too small for a gateway (.1) and a host endpoint (.2)", s)
			}
			return p, true, ""
		}
	}
	if len(cidrs) > 0 {
		return netip.Prefix{}, false, "no IPv4 pod CIDR (IPv6-only gateways are not supported)"
	}
	return netip.Prefix{}, false, ""
}

// Layout computes the group's VRRP layout for the given Windows nodes with the planner — the
// single place both the controller and the route keeper derive VIPs and routes from.
//
// The planner rejects a whole layout for one bad node (pod CIDR outside the cluster CIDRs or
// beyond the VRID range, a missing router VIP). A controller must not stop converging for
// everyone because of one node, so on such an error each node is laid out alone, the nodes the
// planner rejects alone are skipped with the planner's own message, and the rest is laid out.
func Layout(cfg GroupConfig, nodes []*corev1.Node) (plan.GatewayGroupPlan, []Skipped, error) {
	windows, skipped := podCIDROwners(nodes)
	var kept []plan.WindowsPodCIDR
	for _, w := range windows {
		if bits := netip.MustParsePrefix(w.PodCIDR).Bits(); bits != cfg.NodeCIDRMaskSize {
			skipped = append(skipped, Skipped{Node: w.Name, Reason: fmt.Sprintf("pod CIDR %s is not a /%d node CIDR of the cluster", w.PodCIDR, cfg.NodeCIDRMaskSize)})
			continue
		}
		kept = append(kept, w)
	}
	g, err := plan.LayoutGatewayGroup(cfg.layoutInput(kept))
	if err == nil {
		return g, skipped, nil
	}
	if _, groupErr := plan.LayoutGatewayGroup(cfg.layoutInput(nil)); groupErr != nil {
		return plan.GatewayGroupPlan{}, skipped, fmt.Errorf("lay out gateway group %s: %w", cfg.Name, groupErr)
	}
	var good []plan.WindowsPodCIDR
	for _, w := range kept {
		if _, err := plan.LayoutGatewayGroup(cfg.layoutInput([]plan.WindowsPodCIDR{w})); err != nil {
			skipped = append(skipped, Skipped{Node: w.Name, Reason: err.Error()})
			continue
		}
		good = append(good, w)
	}
	g, err = plan.LayoutGatewayGroup(cfg.layoutInput(good))
	if err != nil {
		return plan.GatewayGroupPlan{}, skipped, fmt.Errorf("lay out gateway group %s for %d Windows nodes: %w", cfg.Name, len(good), err)
	}
	return g, skipped, nil
}

// summarize keeps log lines short during a 1,000-node churn.
func summarize(s []string) string {
	const max = 8
	if len(s) <= max {
		return strings.Join(s, ",")
	}
	return fmt.Sprintf("%s,... (%d in all)", strings.Join(s[:max], ","), len(s))
}
