package v1alpha1

// Routing inputs that decide which flows verify can call working. They live on CalicoSettings
// and Networking (types.go); their meaning and validation are here.
//
// CalicoSettings.VXLANMode is the IP pools' vxlanMode: Always, CrossSubnet or Never (default).
// With VXLAN pools Felix programs the routes to other nodes' blocks and BIRD is not used
// (calico_backend vxlan), so no BGP session exports a gateway holder's connected route to the
// other Linux nodes. A pool uses one encapsulation: a vxlanMode other than Never wins over
// ipipMode (whose default, Always, is applied before validation).
//
// CalicoSettings.ClusterRoutes names who programs the routes to other nodes' blocks: "BIRD"
// (default) or "Felix" — FelixConfiguration spec.programClusterRoutes: Enabled, which the Tigera
// operator sets for Installation spec.calicoNetwork.clusterRoutingMode: Felix (opt-in since
// Calico 3.32). Felix programs routes for IPAM blocks only; BIRD then keeps routes inside the
// IP pools out of the kernel, so a VIP holder's exported route to a Windows pod CIDR inside a
// pool never reaches the other Linux nodes.
//
// CalicoSettings.IgnoreLooseRPF is Felix's IgnoreLooseRPF. Without it Felix exits fatally when
// net.ipv4.conf.all.rp_filter is 2 (projectcalico/calico felix/dataplane/linux/int_dataplane.go:
// "Kernel's RPF check is set to 'loose'"), and calico-node is not ready on that node.
//
// Networking.UpstreamRoutes are the prefixes the network beyond the NICs' default gateways
// routes back toward the cluster. Default: the subnets of the NICs that have a gateway — a NIC
// subnet without one (seed 000's 100.100.126.0/23) is not reachable from outside, so replies to
// addresses there (a Windows pod's OutBoundNAT address) die.

// Calico cluster route programmers.
const (
	CalicoClusterRoutesBIRD  = "BIRD"
	CalicoClusterRoutesFelix = "Felix"
)

func (v *validator) calicoRouting(cs *CalicoSettings) {
	p := linuxCNI.Child("calico")
	if cs.VXLANMode != "" {
		v.oneOf(p.Child("vxlanMode"), cs.VXLANMode, "Always", "CrossSubnet", "Never")
	}
	if cs.ClusterRoutes != "" {
		v.oneOf(p.Child("clusterRoutes"), cs.ClusterRoutes, CalicoClusterRoutesBIRD, CalicoClusterRoutesFelix)
	}
}

func (v *validator) upstreamRoutes(n Networking) {
	for i, s := range n.UpstreamRoutes {
		v.cidr(networking.Child("upstreamRoutes").Index(i), s, false)
	}
}
