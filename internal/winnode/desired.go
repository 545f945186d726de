package winnode

import (
	"fmt"
	"net"
	"net/netip"

	"github.com/kubewin/kubewin/internal/plan"
	"github.com/kubewin/kubewin/internal/render"
)

// The placeholder network kubewin creates before the pod network (render/hns.go: it owns the
// vSwitch, so re-creating the pod network does not tear the vSwitch down). The values are the
// ones hns/setup.ps1 and hns/network.json use; TestDesiredMatchesRenderedNetwork keeps them
// equal to what render writes.
const (
	externalNetworkName   = "External"
	externalNetworkPrefix = "192.168.255.0/30"
	externalNetworkGW     = "192.168.255.1"
	externalOverlayVSID   = 9999
)

// Desired is the state of one Windows node that the Reconciler keeps.
type Desired struct {
	Node string
	// AdapterMAC selects the cluster adapter (lower case, colons). The adapter is found by MAC
	// on every pass, so a renamed adapter is still the cluster adapter.
	AdapterMAC string
	// Networks are created by kubewin, in this order; their AdapterName is replaced by the
	// current name of the adapter with AdapterMAC.
	Networks []NetworkSpec
	// HostEndpoint is the pod network's host endpoint (.2); nil in flannel designs, where
	// flanneld creates it.
	HostEndpoint *EndpointSpec
	// Forwarding are the interfaces that must forward IPv4: with host-local IPAM win-bridge makes
	// the host endpoint (.2) every pod's gateway (containernetworking/plugins
	// plugins/main/windows/win-bridge/win-bridge_windows.go), so the host routes its pods'
	// traffic in on the host endpoint's vNIC and out through the cluster adapter's vSwitch vNIC
	// (kubernetes cluster/gce/windows/k8s-node-setup.psm1 and flannel
	// pkg/backend/hostgw/hostgw_windows.go enable forwarding on both).
	Forwarding []InterfaceRole
	// PreserveRoutes are destinations whose routes on the cluster adapter must outlive the
	// vSwitch: creating it drops the cloud metadata route (k8s-node-setup.psm1; hcsshim#299).
	PreserveRoutes []string
	// Routes are the host's own routes the plan asks for (plan.WindowsNodePlan.Routes), in plan
	// order: in the upstream-ToR designs the cluster CIDRs via the pod CIDR's gateway on the host
	// endpoint's vNIC, in host-gw the other nodes' pod CIDRs via their IPs. They are added once
	// the networks and the host endpoint exist, and again whenever they are lost.
	Routes []HostRoute
	// ProxyNetwork is the network kube-proxy programs. It is the last of Networks, except in
	// flannel designs, where flanneld creates it once it holds a lease.
	ProxyNetwork string
	// Services in start order (containerd, kubelet, [flanneld,] kube-proxy).
	Services []ServiceSpec
	// KubeProxy names the kube-proxy service.
	KubeProxy string
}

// InterfaceRole names an interface by what it is for; its name is looked up on every pass
// (adapters are renamed, Windows may suffix a vNIC's name).
type InterfaceRole string

const (
	// RoleHostEndpoint is the host endpoint's vNIC: the interface holding its address.
	RoleHostEndpoint InterfaceRole = "host-endpoint"
	// RoleClusterVSwitch is the vSwitch's host vNIC on the cluster adapter: the virtual
	// interface with the cluster adapter's MAC.
	RoleClusterVSwitch InterfaceRole = "cluster-vswitch"
)

// ServiceSpec is one node service as the Reconciler sees it.
type ServiceSpec struct {
	Name      string
	DependsOn []string
	StartType StartType
	// AfterNetwork services are started only once every network of Desired.Networks exists
	// (the manual services of render/services.go: a kubelet must not register the node Ready
	// while its pod network is missing).
	AfterNetwork bool
}

// DesiredFromPlan derives a node's Desired state from the plan, with the values render uses
// for hns/network.json and services/install.ps1.
func DesiredFromPlan(p *plan.Plan, n plan.NodePlan) (Desired, error) {
	w := n.Windows
	if w == nil {
		return Desired{}, fmt.Errorf("winnode desired state for %s: not a Windows node", n.Name)
	}
	d := Desired{Node: n.Name, KubeProxy: "kube-proxy", ProxyNetwork: w.HNSNetworkName}
	if n.ClusterNICMAC == "" {
		return Desired{}, fmt.Errorf("winnode desired state for %s: the cluster NIC %q has no MAC in the plan; the adapter is found by MAC", n.Name, n.ClusterNIC)
	}
	mac, err := net.ParseMAC(n.ClusterNICMAC)
	if err != nil {
		return Desired{}, fmt.Errorf("winnode desired state for %s: cluster NIC MAC %q: %w", n.Name, n.ClusterNICMAC, err)
	}
	d.AdapterMAC = mac.String()

	external := NetworkSpec{
		Name: externalNetworkName, Type: "L2Bridge", Prefix: externalNetworkPrefix, Gateway: externalNetworkGW,
		Routes: []Route{{DestinationPrefix: "0.0.0.0/0", NextHop: externalNetworkGW}}, AdapterName: w.AdapterName,
	}
	if w.CNIPlugin == "flannel" {
		if w.HNSNetworkType == "Overlay" {
			external.Type, external.VSID = "Overlay", externalOverlayVSID
		}
		d.Networks = []NetworkSpec{external}
	} else {
		pod, err := netip.ParsePrefix(n.PodCIDR)
		if err != nil {
			return Desired{}, fmt.Errorf("winnode desired state for %s: pod CIDR %q: %w", n.Name, n.PodCIDR, err)
		}
		for _, a := range []string{w.Gateway, w.HostEndpointIP} {
			ip, err := netip.ParseAddr(a)
			if err != nil || !pod.Contains(ip) {
				return Desired{}, fmt.Errorf("winnode desired state for %s: address %q is not inside pod CIDR %s", n.Name, a, pod)
			}
		}
		podNet := NetworkSpec{
			Name: w.HNSNetworkName, Type: w.HNSNetworkType, Prefix: pod.Masked().String(), Gateway: w.Gateway,
			Routes: []Route{{DestinationPrefix: "0.0.0.0/0", NextHop: w.Gateway}}, AdapterName: w.AdapterName,
		}
		d.Networks = []NetworkSpec{external, podNet}
		d.HostEndpoint = &EndpointSpec{Name: w.HostEndpointName, Network: w.HNSNetworkName, IP: w.HostEndpointIP, PrefixLength: pod.Bits()}
		d.Forwarding = []InterfaceRole{RoleHostEndpoint, RoleClusterVSwitch}
	}
	d.PreserveRoutes = []string{metadataRoute}

	for _, rt := range w.Routes {
		hr, err := hostRoute(rt)
		if err != nil {
			return Desired{}, fmt.Errorf("winnode desired state for %s: %w", n.Name, err)
		}
		d.Routes = append(d.Routes, hr)
	}

	svcs, err := render.WindowsServices(p, n)
	if err != nil {
		return Desired{}, fmt.Errorf("winnode desired state for %s: %w", n.Name, err)
	}
	for _, s := range svcs {
		spec := ServiceSpec{Name: s.Name, DependsOn: append([]string(nil), s.DependsOn...), StartType: StartAutomatic}
		if s.Manual {
			spec.StartType, spec.AfterNetwork = StartManual, true
		}
		d.Services = append(d.Services, spec)
	}
	return d, nil
}

// hostRoute converts a plan route. Host.Routes lists IPv4 routes only, so an IPv6 route could
// never be found there and is refused here; the prefix is masked, as Windows stores it.
func hostRoute(rt plan.Route) (HostRoute, error) {
	dst, err := netip.ParsePrefix(rt.Destination)
	if err != nil || !dst.Addr().Is4() {
		return HostRoute{}, fmt.Errorf("route %s via %s: destination %q is not an IPv4 prefix", rt.Destination, rt.Via, rt.Destination)
	}
	via, err := netip.ParseAddr(rt.Via)
	if err != nil || !via.Is4() {
		return HostRoute{}, fmt.Errorf("route %s via %s: next hop %q is not an IPv4 address", rt.Destination, rt.Via, rt.Via)
	}
	return HostRoute{DestinationPrefix: dst.Masked().String(), NextHop: via.String(), InterfaceAlias: rt.Dev}, nil
}
