package plan

import (
	"slices"
	"strings"

	"github.com/kubewin/kubewin/pkg/api/v1alpha1"
)

// Sysctls every Linux node needs (the kubeadm prerequisites) and the loose reverse-path filter
// of gateway members.
const (
	sysctlForward    = "net.ipv4.ip_forward"
	sysctlBridgeNF   = "net.bridge.bridge-nf-call-iptables"
	sysctlBridgeNF6  = "net.bridge.bridge-nf-call-ip6tables"
	rpFilterLoose    = "2"
	linuxModuleOvl   = "overlay"
	linuxModuleBrNF  = "br_netfilter"
	viaRouterVIPNote = "via the router VIP of "
)

// linuxRoutes are the Windows pod-CIDR routes of Linux nodes, decided once per cluster.
type linuxRoutes struct {
	// common is what a Linux node that is a member of no gateway group gets; nodes share it.
	common []Route
	// viaVIP and direct per gateway group: non-members route via the instance's router VIP,
	// members directly to the Windows node on the group interface.
	viaVIP, direct map[*group][]Route
}

func (b *builder) sharedLinuxRoutes() linuxRoutes {
	lr := linuxRoutes{viaVIP: map[*group][]Route{}, direct: map[*group][]Route{}}
	switch b.s.Design {
	case v1alpha1.DesignUpstreamToRKeepalived:
		if b.calicoExports() {
			return lr
		}
		for _, g := range b.groups {
			for _, inst := range g.plan.Instances {
				via := inst.RouterVIP
				if i := strings.IndexByte(via, '/'); i >= 0 {
					via = via[:i]
				}
				for _, v := range inst.VIPs {
					w := &b.nodes[b.byName[v.WindowsNode]]
					if via != "" {
						lr.viaVIP[g] = append(lr.viaVIP[g], Route{Destination: v.PodCIDR, Via: via,
							Reason: "pod CIDR of " + v.WindowsNode + " " + viaRouterVIPNote + inst.Name + " (gateway group " + g.plan.Name + ")"})
					}
					lr.direct[g] = append(lr.direct[g], Route{Destination: v.PodCIDR, Via: w.ip.String(), Dev: g.plan.Interface,
						Reason: "pod CIDR of " + v.WindowsNode + ": gateway member routes straight to the Windows node"})
				}
			}
			lr.common = append(lr.common, lr.viaVIP[g]...)
		}
		sortRoutes(lr.common)
	case v1alpha1.DesignUpstreamToRRouter:
		via := b.s.TorRouter.IP
		for _, w := range b.windowsNodes() {
			lr.common = append(lr.common, Route{Destination: w.cidr.prefix.String(), Via: via,
				Reason: "pod CIDR of " + w.spec.Name + ": its gateway is on the ToR router"})
		}
		sortRoutes(lr.common)
	}
	lr.common = slices.Clip(lr.common)
	return lr
}

func (b *builder) linuxPlan(n *node, lr linuxRoutes) *LinuxNodePlan {
	lp := &LinuxNodePlan{
		CgroupDriver: b.s.ContainerRuntime.CgroupDriver,
		Modules:      []string{linuxModuleOvl, linuxModuleBrNF},
		Sysctls: map[string]string{
			sysctlForward:   "1",
			sysctlBridgeNF:  "1",
			sysctlBridgeNF6: "1",
		},
	}
	ms := b.members[n.spec.Name]
	if len(ms) > 0 {
		lp.Gateway = &ms[0]
		if len(ms) > 1 {
			lp.Gateways = ms
		}
		// Loose reverse-path filtering on gateway members: after a failover, Windows hosts keep
		// sending to the old holder's MAC until their ARP entry is refreshed, and replies to
		// traffic that entered through one holder may come back through another; strict mode
		// would drop packets from Windows pod addresses whose route on this node points
		// elsewhere (tunl0, another member, the router VIP). The kernel uses the larger of
		// conf/all and conf/<iface> (Documentation/networking/ip-sysctl.rst, rp_filter), so
		// loose mode on the gateway interface is enough. conf/all stays as it is: Felix exits
		// fatally when all.rp_filter is 2 unless IgnoreLooseRPF is set (projectcalico/calico
		// felix/dataplane/linux/int_dataplane.go: "Kernel's RPF check is set to 'loose'"), which
		// would stop calico-node — and with it the route export — on every gateway member.
		for _, m := range ms {
			lp.Sysctls["net.ipv4.conf."+strings.ReplaceAll(m.Interface, ".", "/")+".rp_filter"] = rpFilterLoose
		}
	}
	switch b.s.Design {
	case v1alpha1.DesignHostGW:
		lp.Routes = b.hostGWRoutes(n, n.nic.Name)
	case v1alpha1.DesignUpstreamToRKeepalived:
		if len(ms) == 0 {
			lp.Routes = lr.common
			break
		}
		var rs []Route
		for _, g := range b.groups {
			if g.members[n.spec.Name] {
				rs = append(rs, lr.direct[g]...)
			} else {
				rs = append(rs, lr.viaVIP[g]...)
			}
		}
		sortRoutes(rs)
		lp.Routes = rs
	case v1alpha1.DesignUpstreamToRRouter:
		lp.Routes = lr.common
	}
	return lp
}
