package verify

import (
	"fmt"
	"strings"

	"github.com/kubewin/kubewin/internal/plan"
)

// Designs calico/hostprocess and flannel/hostprocess: the CNI's HostProcess pod on each Windows
// node makes the HNS network, so the Windows half of the model follows what that CNI does, not
// the network kubewin would make. What each CNI does, with its source:
//
// flannel vxlan (flannel-io/flannel pkg/backend/vxlan vxlan_windows.go, device_windows.go,
// vxlan_network_windows.go):
//   - an Overlay network named flannel.<VNI> with the node's lease as its subnet and .1 as the
//     subnet's next hop; VNI >= 4096 and UDP port 4789 only ("VNI [..] must be greater than or
//     equal to 4096 on Windows", "Port [..] is not supported on Windows");
//   - a HostRoute network policy for host ↔ local pod traffic, and no host endpoint;
//   - one RemoteSubnetRoute per other lease (Linux and Windows nodes alike) with that node's
//     address as provider address: VXLAN straight to the node owning the subnet;
//   - pods join with win-overlay, whose endpoints get the network's gateway address (.1) as
//     their gateway (containernetworking/plugins plugins/main/windows/win-overlay
//     win-overlay_windows.go), a VFP-answered distributed router, never an ARP on the wire.
//   - kube-proxy's source VIP is the address host-local hands out first from the network's
//     subnet (the kube-proxy start script, render/hostprocess_scripts.go, as sig-windows-tools
//     hostprocess/flannel/kube-proxy did): host-local defaults its gateway to .1 and its range
//     to start at .1 and never allocates the gateway (containernetworking/plugins
//     plugins/ipam/host-local/backend/allocator/range.go), so on a fresh node it is .2, and pods
//     (same data directory) start at .3.
//
// flannel host-gw (flannel-io/flannel pkg/backend/hostgw/hostgw_windows.go): an L2Bridge
// network (gateway .1) with a bridge endpoint <network>_ep at .2 attached to the host with
// forwarding enabled, and host routes to every other lease via its node (routing.RouteNetwork);
// win-bridge gives pods x.2 as their gateway.
//
// Calico (projectcalico/calico cni-plugin/pkg/dataplane/windows/dataplane_windows.go,
// felix/dataplane/windows/vxlan_mgr.go, libcalico-go/lib/ipam/ipam.go):
//   - the network's subnet is the node's affine Calico IPAM block; Windows nodes refuse IPAM with
//     strictAffinity false (ErrStrictAffinity: "global strict affinity should not be false for
//     Windows node") and reserve x.0, x.1, x.2 and the broadcast address of every block;
//   - VXLAN: an Overlay network (gateway .1, VNI >= 4096: "Windows does not support VXLANVNI <
//     4096"), the host endpoint Calico_ep at .2 is a remote endpoint with the management address
//     as provider address (not attached to the host), pods get .1 as gateway, and Felix adds a
//     RemoteSubnetRoute for every remote VTEP's block — Linux and Windows nodes (no gateway VIPs);
//   - BGP: an L2Bridge network (gateway .1) with Calico_ep at .2 attached to the host with
//     forwarding, pods get .2 as gateway; the BGP mesh carries every node's blocks, Windows ones
//     included (docs.tigera.io/calico/latest/getting-started/kubernetes/windows-calico/requirements:
//     "Calico BGP ... auto-configured node-to-node BGP mesh"), the Windows end being the Windows
//     BGP router confd configures (projectcalico/calico confd/windows-packaging/config-bgp.psm1:
//     Add-BgpRouter, Add-BgpPeer), which installs the learnt routes in the host's table;
//   - IP-in-IP is not supported on Windows (docs.tigera.io .../windows-calico/limitations: "Not
//     supported: ... IP in IP overlay with BGP routing", "Cross-subnet support ... for VXLAN"):
//     a Linux node that sends IP-in-IP to a Windows node has its packets dropped there;
//   - endpoint policies: OutBoundNAT with the service CIDR plus the IP pools as exceptions
//     (node/windows-packaging/CalicoWindows/cni.conf.template and cni-plugin/internal/pkg/utils/
//     winpol/windows_policy.go, which adds the pools), a ROUTE/SDNRoute with NeedEncap for the
//     service CIDR, and on L2Bridge one for the management address /32.
//   - kube-proxy's source VIP is Calico_ep's address (the kube-proxy start script reads it, as
//     kubernetes-sigs/sig-windows-tools hostprocess/calico/kube-proxy/start.ps1 does).
//
// Both: winkernel needs a source VIP on an Overlay network (kubernetes pkg/proxy/winkernel
// proxier.go: "source-vip flag not set") and uses DSR where enabled and the build supports it.

// Who answers for a Windows pod's gateway in the HostProcess designs (WinNode.GatewayHolder).
const (
	// holderOverlay: the Overlay network's gateway (.1), answered by VFP on the node.
	holderOverlay = "hns-overlay"
	holderHost    = "windows-host"
)

// Defaults of the Calico VXLAN settings the spec does not carry: FelixConfiguration vxlanVNI
// 4096 and vxlanPort 4789 (docs.tigera.io/calico/latest/reference/resources/felixconfig).
const (
	calicoDefaultVNI  = 4096
	calicoDefaultPort = 4789
)

// hostProcessCNI says which CNI's pod owns a Windows node's network ("" when kubewin does).
func (m *Model) hostProcessCNI(wp *plan.WindowsNodePlan) string {
	if wp.NetworkOwner != plan.NetworkOwnerDaemonSet || m.Plan.HostProcess == nil {
		return ""
	}
	return m.Plan.HostProcess.CNI
}

// planHostProcessWindows fills a Windows node whose network a CNI pod makes. For Calico the
// pod subnet is an IPAM block the model picks later (calicoWindowsBlocks), once every node's
// ranges are known.
func (m *Model) planHostProcessWindows(n *Node, wp *plan.WindowsNodePlan, w *WinNode) error {
	hp := m.Plan.HostProcess
	w.hostProcess = hp.CNI
	w.NetName, w.NetType = hp.NetworkName, hp.NetworkType
	// The kube-proxy DaemonSet passes --enable-dsr when the plan enables it (render
	// hostprocess_scripts.go); the node plan keeps it only on builds with DSR support.
	w.DSR = hp.EnableDSR && wp.EnableDSR
	switch hp.CNI {
	case "flannel":
		if w.Subnet.Len == 0 {
			return fmt.Errorf("plan node %s: flannel/hostprocess needs the node's pod CIDR (its flannel lease)", n.Name)
		}
		if f := m.Plan.Flannel; f != nil && f.Backend == "vxlan" {
			w.VNI, w.UDPPort = f.VNI, f.Port
			if f.VNI < 4096 || f.Port != 4789 {
				// flanneld's Windows vxlan backend refuses the configuration, so the network is
				// never made (flannel-io/flannel pkg/backend/vxlan/vxlan_windows.go).
				w.Missing = fmt.Sprintf("flanneld on %s exits before making HNS network %s: net-conf.json has VNI %d port %d, and on Windows the VNI must be at least 4096 and the port 4789 (flannel vxlan_windows.go: \"invalid VXLAN backend config\")", n.Name, w.NetName, f.VNI, f.Port)
				m.Notes = append(m.Notes, w.Missing)
			}
		}
		if w.NetType == "Overlay" {
			m.hostProcessOverlay(n, w, "flannel", "win-overlay gives every pod the Overlay network's gateway, which VFP answers on the node (win-overlay_windows.go; flannel device_windows.go: subnet next hop .1)")
			if hp.SourceVIP == plan.SourceVIPFromHostLocal {
				w.SourceVIP = w.Subnet.Nth(2)
				w.SourceVIPWhy = "the first address host-local hands out from " + w.Subnet.String() + " (gateway .1 skipped: host-local range.go), reserved by the kube-proxy start script"
			}
		} else {
			m.hostProcessBridge(n, w, hp.NetworkName+"_ep", "flannel hostgw_windows.go: bridge endpoint at .2 attached to the host with forwarding; win-bridge makes x.2 every pod's gateway")
		}
	case "calico":
		// Calico IPAM ignores node.spec.podCIDR: the pods live in the block chosen later.
		w.calicoPending = true
		w.Subnet, n.PodRanges = Prefix{}, nil
		w.VNI, w.UDPPort = calicoDefaultVNI, calicoDefaultPort
	default:
		return fmt.Errorf("plan node %s: HostProcess CNI %q is not modelled", n.Name, hp.CNI)
	}
	m.hostProcessKubeProxy(n, w)
	return m.hostProcessPods(n, wp, w)
}

// hostProcessOverlay: an Overlay network whose gateway VFP answers; the host reaches local pods
// through the network's HostRoute policy, not through a host endpoint of its own.
func (m *Model) hostProcessOverlay(n *Node, w *WinNode, cni, why string) {
	w.Gateway = w.Subnet.Nth(1)
	w.HostEP, w.HostEPName = 0, ""
	w.GatewayHolder = holderOverlay
	w.PodGateway, w.PodGatewayWhy = w.Gateway, why
	w.HostRoutePolicy = true
	w.HostRouteWhy = "HostRoute policy of Overlay network " + w.NetName + " (flannel device_windows.go: host to local pods)"
	if cni == "calico" {
		// Calico adds no HostRoute policy and its Calico_ep is a remote endpoint; the host still
		// reaches its own pods (kubelet probes) through the Overlay network's host vNIC.
		w.HostRouteWhy = "Overlay network " + w.NetName + " on the host (local pods only; Calico_ep is a remote endpoint, not a host interface)"
	}
}

// hostProcessBridge: an L2Bridge network whose host endpoint (.2) routes for the pods.
func (m *Model) hostProcessBridge(n *Node, w *WinNode, epName, why string) {
	w.Gateway = w.Subnet.Nth(1)
	w.HostEP, w.HostEPName = w.Subnet.Nth(2), epName
	w.GatewayHolder = holderHost
	w.PodGateway, w.PodGatewayWhy = w.HostEP, why
}

// hostProcessKubeProxy: winkernel refuses an Overlay network without a source VIP.
func (m *Model) hostProcessKubeProxy(n *Node, w *WinNode) {
	w.KubeProxy, w.KubeProxyDown = true, ""
	if w.NetType == "Overlay" && w.SourceVIP == 0 && !w.calicoPending {
		w.KubeProxy = false
		w.KubeProxyDown = "kube-proxy (winkernel) does not start on " + n.Name + ": its HNS network " + w.NetName + " is Overlay and the kube-proxy DaemonSet passes no --source-vip (pkg/proxy/winkernel proxier.go: \"source-vip flag not set\")"
		m.Notes = append(m.Notes, w.KubeProxyDown)
	}
}

// hostProcessPods makes the node's pod class with the CNI's endpoint policies.
func (m *Model) hostProcessPods(n *Node, wp *plan.WindowsNodePlan, w *WinNode) error {
	hp := m.Plan.HostProcess
	ep := &EndpointPolicy{OutboundNAT: true, Gateway: w.PodGateway}
	switch hp.CNI {
	case "calico":
		// cni.conf.template: OutBoundNAT except the service CIDR, to which winpol adds the IP
		// pools; ROUTE/SDNRoute with NeedEncap for the service CIDR.
		ep.Origin = "calico CNI endpoint policies of " + n.Name + " (cni.conf.template, winpol)"
		ep.Exceptions = append(ep.Exceptions, m.ServiceCIDR)
		ep.Exceptions = append(ep.Exceptions, m.calicoPools()...)
		ep.Routes = append(ep.Routes, EncapRoute{Dst: m.ServiceCIDR, NeedEncap: true})
		if w.NetType != "Overlay" {
			// dataplane_windows.go: on L2Bridge a ROUTE to the management address /32 with
			// NeedEncap (for NodePorts).
			ep.Routes = append(ep.Routes, EncapRoute{Dst: Prefix{Addr: n.IP(), Len: 32}, NeedEncap: true})
		}
	default:
		// flannel: the CNI configuration kubewin renders into the flannel DaemonSet's ConfigMap
		// carries the plan's OutBoundNAT exceptions and service routes.
		ep.Origin = "flannel CNI configuration of " + n.Name + " (plan)"
		if err := addPlanCNIPolicies(ep, n.Name, wp); err != nil {
			return err
		}
	}
	n.Pods = nil
	if w.Subnet.Len > 0 && w.Subnet.Len <= 29 {
		// .0 network, .1 gateway, .2 host endpoint or source VIP: pods start at .3.
		start := w.Subnet.Nth(3)
		n.Pods = []*Pod{{Node: n, Name: "pod", IP: start, Sib: start + 1, Count: 1, EP: ep, Origin: "plan (" + hp.CNI + " HostProcess pod's network)"}}
	} else if w.calicoPending {
		w.pendingEP = ep
	}
	return nil
}

// calicoPools are the Calico IP pools: the spec's, else the plan's.
func (m *Model) calicoPools() []Prefix {
	if len(m.routing.pools) > 0 {
		return m.routing.pools
	}
	var out []Prefix
	if cp := m.Plan.Calico; cp != nil {
		for _, s := range cp.IPPools {
			if p, err := ParsePrefix(s); err == nil {
				out = append(out, p)
			}
		}
	}
	return out
}

// calicoWindowsBlocks gives each Calico HostProcess Windows node its affine IPAM block. Which
// block IPAM picks is not known before deployment: the model takes free /blockSize blocks from
// the top of the first pool (as calicoIPAMBlocks does for Linux nodes) and says so. With
// strictAffinity true (kubewin's Calico patch sets it) no other node allocates from it.
func (m *Model) calicoWindowsBlocks() error {
	var pending []*Node
	for _, n := range m.Nodes {
		if n.Win != nil && n.Win.calicoPending {
			pending = append(pending, n)
		}
	}
	if len(pending) == 0 {
		return nil
	}
	pools := m.calicoPools()
	cp := m.Plan.Calico
	if len(pools) == 0 || cp == nil || cp.BlockSize < int(pools[0].Len) || cp.BlockSize > 29 {
		return fmt.Errorf("calico/hostprocess: no Calico IP pool with a usable block size (Windows needs at least 4 reserved addresses per block: libcalico-go ipam.go)")
	}
	strict := m.calicoStrictAffinity()
	pool := pools[0]
	size := int64(1) << (32 - cp.BlockSize)
	next := int64(pool.Last()) + 1 - size
	taken := func(b Prefix) bool {
		for _, o := range m.Nodes {
			if o.Win != nil && o.Win.calicoPending {
				continue
			}
			for _, r := range o.PodRanges {
				if r.Overlaps(b) {
					return true
				}
			}
		}
		return false
	}
	for _, n := range pending {
		for next >= int64(pool.Addr) && taken(Prefix{Addr: Addr(next), Len: uint8(cp.BlockSize)}) {
			next -= size
		}
		if next < int64(pool.Addr) {
			return fmt.Errorf("calico/hostprocess: pool %s has no free /%d block left for %s", pool, cp.BlockSize, n.Name)
		}
		b := Prefix{Addr: Addr(next), Len: uint8(cp.BlockSize)}
		next -= size
		w := n.Win
		w.calicoPending = false
		w.Subnet = b
		n.PodRanges = []Prefix{b}
		n.Sources = append(n.Sources, "calico-ipam block (modelled)")
		m.Notes = append(m.Notes, fmt.Sprintf("%s: calico-node-windows makes HNS network %s (%s) on the node's affine Calico IPAM block, modelled as %s (which /%d block IPAM picks is known only after deployment; an HNS dump gives the real one)",
			n.Name, w.NetName, w.NetType, b, cp.BlockSize))
		if w.NetType == "Overlay" {
			m.hostProcessOverlay(n, w, "calico", "calico CNI (vxlan mode) gives every pod the block's .1, the Overlay network's gateway that VFP answers on the node (dataplane_windows.go)")
			// Calico_ep (.2) is a remote endpoint with the management address as provider
			// address; the kube-proxy start script passes its address as the source VIP.
			w.SourceVIP = b.Nth(2)
			w.SourceVIPWhy = "the address of the host endpoint " + plan.CalicoHostEndpoint + " (.2 of the block: dataplane_windows.go createAndAttachVxlanHostEP), read by the kube-proxy start script"
		} else {
			m.hostProcessBridge(n, w, plan.CalicoHostEndpoint, "calico CNI (l2bridge mode) gives every pod the block's .2, the host endpoint, so the host routes (dataplane_windows.go)")
			if m.calico != nil && m.calico.mode != "Never" || m.calico == nil && m.Plan.Calico != nil && m.Plan.Calico.IPIPMode != "" && m.Plan.Calico.IPIPMode != "Never" {
				w.NoRouteWhy = "Calico for Windows takes no routes from IP-in-IP pools: \"IP in IP overlay with BGP routing\" is not supported on Windows (docs.tigera.io/calico/latest/getting-started/kubernetes/windows-calico/limitations)"
				m.Notes = append(m.Notes, n.Name+": "+w.NoRouteWhy+"; Linux nodes send IP-in-IP to it, which Windows cannot decapsulate")
			}
		}
		if m.Plan.HostProcess.SourceVIP == "" {
			w.SourceVIP, w.SourceVIPWhy = 0, ""
		}
		m.hostProcessKubeProxy(n, w)
		ep := w.pendingEP
		w.pendingEP = nil
		if ep == nil {
			continue
		}
		ep.Gateway = w.PodGateway
		start := b.Nth(3)
		pod := &Pod{Node: n, Name: "pod", IP: start, Sib: start + 1, Count: 1, EP: ep, Origin: "plan (calico HostProcess pod's network)"}
		if !strict {
			pod.Broken = fmt.Sprintf("Calico IPAM gives %s no pod address: IPAMConfig strictAffinity is false and nothing sets it (libcalico-go ipam.go ErrStrictAffinity: \"global strict affinity should not be false for Windows node\")", n.Name)
		}
		n.Pods = []*Pod{pod}
	}
	return nil
}

// calicoStrictAffinity: the IPAMConfig's strictAffinity once kubewin's patch is applied — true
// when the spec says so or the plan sets it.
func (m *Model) calicoStrictAffinity() bool {
	if hp := m.Plan.HostProcess; hp != nil && hp.Calico != nil && hp.Calico.SetStrictAffinity {
		return true
	}
	return m.routing.strictAffinity
}

// overlayPeer reports whether VXLAN from an Overlay Windows node reaches owner's pods: a
// RemoteSubnetRoute exists for every flannel lease (flannel designs) or every Calico VTEP's
// block (Felix's vxlan_mgr.go programs one per route with a VTEP: Linux nodes with calico-node
// running and Calico Windows nodes).
func (m *Model) overlayPeer(owner *Node) bool {
	if m.flannel != nil && m.flannel.participates(owner) {
		return true
	}
	if m.calico != nil && m.calico.vxlan && m.calicoHostProcess() {
		switch {
		case owner.OS == osLinux:
			return owner.FelixDown == ""
		case owner.Win != nil:
			return owner.Win.NetType == "Overlay"
		}
	}
	return false
}

// calicoHostProcess reports whether Windows nodes run Calico (design calico/hostprocess).
func (m *Model) calicoHostProcess() bool {
	hp := m.Plan.HostProcess
	return hp != nil && hp.CNI == "calico"
}

// dsrNote describes a DSR load balancer in a trace step: winkernel creates ClusterIP load
// balancers with isDSR from --enable-dsr (kubernetes v1.37.1 pkg/proxy/winkernel proxier.go,
// loadBalancerFlags{isDSR: proxier.isDSR}), so the backend's replies skip the load balancer's
// host and VFP on the backend's port restores the VIP as their source.
func (w *WinNode) dsrNote() string {
	if !w.DSR {
		return ""
	}
	return " (DSR: kube-proxy --enable-dsr)"
}

// hostProcessResubnet re-derives what a HostProcess node's CNI puts at fixed offsets of its
// subnet after an HNS dump showed the real one (Calico's block is only known then).
func (m *Model) hostProcessResubnet(n *Node) {
	w := n.Win
	switch {
	case w.NetType == "Overlay":
		w.Gateway = w.Subnet.Nth(1)
		w.PodGateway = w.Gateway
		if w.SourceVIP != 0 {
			w.SourceVIP = w.Subnet.Nth(2)
		}
	default:
		w.Gateway, w.HostEP = w.Subnet.Nth(1), w.Subnet.Nth(2)
		w.PodGateway = w.HostEP
	}
}

// hostProcessRemoteEndpoint reports whether a remote endpoint inside the node's own subnet is
// the CNI's or kube-proxy's, not a pod: on an Overlay network Calico_ep (.2, a remote endpoint
// with the management address as provider address: dataplane_windows.go) and kube-proxy's
// source-VIP endpoint (pkg/proxy/winkernel newSourceVIP) are remote by design. Calico_ep's
// address is kube-proxy's source VIP.
func (m *Model) hostProcessRemoteEndpoint(n *Node, e HNSEndpoint) bool {
	w := n.Win
	if w.hostProcess == "" || w.NetType != "Overlay" || !e.IsRemote {
		return false
	}
	if w.hostProcess == "calico" && strings.EqualFold(e.Name, plan.CalicoHostEndpoint) && m.Plan.HostProcess.SourceVIP != "" {
		w.SourceVIP = e.IP
	}
	return true
}
