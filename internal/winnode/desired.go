package winnode

import (
	"fmt"
	"net"
	"net/netip"

	"github.com/kubewin/kubewin/internal/plan"
	"github.com/kubewin/kubewin/internal/render"
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
	// SystemServices are OS services started before anything else (hns).
	SystemServices []string
	// Services in start order (containerd, kubelet, [flanneld,] kube-proxy).
	Services []ServiceSpec
	// KubeProxy names the kube-proxy service ("" when kube-proxy is a HostProcess pod).
	KubeProxy string
	// CNINetwork is set when a CNI DaemonSet's HostProcess pod owns the node's HNS network
	// (hostprocess.go): Networks, HostEndpoint, Forwarding and Routes are then empty.
	CNINetwork *CNINetwork
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

// DesiredFromPlan derives a node's Desired state from its host effects (render.NodeEffects),
// the list the bundle's scripts are rendered from too.
func DesiredFromPlan(p *plan.Plan, n plan.NodePlan) (Desired, error) {
	if n.Windows == nil {
		return Desired{}, fmt.Errorf("winnode desired state for %s: not a Windows node", n.Name)
	}
	effects, err := render.NodeEffects(p, n)
	if err != nil {
		return Desired{}, fmt.Errorf("winnode desired state for %s: %w", n.Name, err)
	}
	return DesiredForNode(n, effects)
}

// DesiredForNode is DesiredFromEffects for a planned Windows node whose effects are computed
// already: kube-proxy's network is the node's planned HNS network (flanneld's in flannel
// designs, which is not among the effects).
func DesiredForNode(n plan.NodePlan, effects []render.HostEffect) (Desired, error) {
	if n.Windows == nil {
		return Desired{}, fmt.Errorf("winnode desired state for %s: not a Windows node", n.Name)
	}
	if n.Windows.NetworkOwner == plan.NetworkOwnerDaemonSet {
		return desiredForCNINetwork(n, effects, "")
	}
	d, err := DesiredFromEffects(n.Name, effects)
	if err != nil {
		return Desired{}, err
	}
	d.ProxyNetwork = n.Windows.HNSNetworkName
	return d, nil
}

// DesiredFromEffects is the part of a node's host effects the Reconciler keeps: the OS
// services, networks, host endpoint, forwarding, routes, preserved routes and the node
// services' start order. (Firewall rules, service definitions, registry hosts and ACLs are
// applied by join, which installs what the Reconciler keeps running.) The kube-proxy network
// is the last network created, unless the caller knows better (flannel: flanneld's).
func DesiredFromEffects(node string, effects []render.HostEffect) (Desired, error) {
	d := Desired{Node: node, KubeProxy: "kube-proxy"}
	fail := func(e render.HostEffect, format string, args ...any) (Desired, error) {
		return Desired{}, fmt.Errorf("winnode desired state for %s: %s: %s", node, e, fmt.Sprintf(format, args...))
	}
	for _, e := range effects {
		switch e.Kind {
		case render.EffectSystemService:
			d.SystemServices = append(d.SystemServices, e.SystemService)
		case render.EffectNetwork:
			n := e.Network
			mac, err := net.ParseMAC(n.AdapterMAC)
			if err != nil {
				return fail(e, "adapter MAC %q: %v (the adapter is found by MAC)", n.AdapterMAC, err)
			}
			if d.AdapterMAC != "" && d.AdapterMAC != mac.String() {
				return fail(e, "adapter MAC %s differs from the other networks' %s", mac, d.AdapterMAC)
			}
			d.AdapterMAC = mac.String()
			pre, err := netip.ParsePrefix(n.Prefix)
			if err != nil {
				return fail(e, "prefix %q: %v", n.Prefix, err)
			}
			if gw, err := netip.ParseAddr(n.Gateway); err != nil || !pre.Contains(gw) {
				return fail(e, "gateway %q is not inside %s", n.Gateway, pre)
			}
			d.Networks = append(d.Networks, NetworkSpec{Name: n.Name, Type: n.Type, Prefix: pre.Masked().String(), Gateway: n.Gateway,
				Routes: []Route{{DestinationPrefix: "0.0.0.0/0", NextHop: n.Gateway}}, AdapterName: n.AdapterName, VSID: n.VSID})
			d.ProxyNetwork = n.Name
		case render.EffectHostEndpoint:
			ep := e.Endpoint
			var network *NetworkSpec
			for i := range d.Networks {
				if d.Networks[i].Name == ep.Network {
					network = &d.Networks[i]
				}
			}
			if network == nil {
				return fail(e, "its network %s is not among the networks before it", ep.Network)
			}
			ip, err := netip.ParseAddr(ep.IP)
			if err != nil || !netip.MustParsePrefix(network.Prefix).Contains(ip) {
				return fail(e, "address %q is not inside %s", ep.IP, network.Prefix)
			}
			d.HostEndpoint = &EndpointSpec{Name: ep.Name, Network: ep.Network, IP: ep.IP, PrefixLength: ep.PrefixLength}
		case render.EffectForwarding:
			role := InterfaceRole(e.Interface)
			if role != RoleHostEndpoint && role != RoleClusterVSwitch {
				return fail(e, "unknown interface role %q", e.Interface)
			}
			d.Forwarding = append(d.Forwarding, role)
		case render.EffectRoute:
			hr, err := hostRoute(*e.Route)
			if err != nil {
				return Desired{}, fmt.Errorf("winnode desired state for %s: %w", node, err)
			}
			d.Routes = append(d.Routes, hr)
		case render.EffectPreserveRoute:
			if _, err := netip.ParsePrefix(e.Destination); err != nil {
				return fail(e, "%v", err)
			}
			d.PreserveRoutes = append(d.PreserveRoutes, e.Destination)
		case render.EffectService:
			s := e.Service
			spec := ServiceSpec{Name: s.Name, DependsOn: append([]string(nil), s.DependsOn...), StartType: StartAutomatic}
			if s.Manual {
				spec.StartType, spec.AfterNetwork = StartManual, true
			}
			d.Services = append(d.Services, spec)
		case render.EffectFirewallRule, render.EffectRegistryHost, render.EffectACL:
			// applied by join (internal/join effects.go)
		default:
			return fail(e, "not an effect a Windows node has")
		}
	}
	if len(d.Networks) == 0 {
		return Desired{}, fmt.Errorf("winnode desired state for %s: no HNS network among the host effects", node)
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
