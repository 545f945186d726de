package diagnose

const refCalicoTroubleshoot = "https://docs.tigera.io/calico/latest/operations/troubleshoot/troubleshooting"

// calicoSignatures: Calico on the Linux nodes. A gateway member whose calico-node is down exports
// nothing, so the Windows pod CIDR behind its VIP becomes unreachable from every other Linux node.
func calicoSignatures() []Signature {
	return []Signature{
		{
			ID: "CALICO-FELIX-LOOSE-RPF", Component: "calico", Severity: SevError,
			Title:   "Felix exits: net.ipv4.conf.all.rp_filter is 2 (loose)",
			Literal: "Kernel's RPF check is set to 'loose'",
			Pattern: `Kernel's RPF check is set to 'loose'\.\s+This would allow endpoints to spoof`,
			Cause: "Felix refuses to start when net.ipv4.conf.all.rp_filter is 2 and IgnoreLooseRPF is not set " +
				"(projectcalico/calico felix/dataplane/linux/int_dataplane.go), so calico-node never becomes ready on this node: " +
				"no routes are programmed and BIRD exports nothing — on a gateway member that includes the VIP holder's route to the Windows pod CIDR.",
			Fix: "Set loose mode only on the cluster interface (net.ipv4.conf.<iface>.rp_filter = 2; the kernel uses the maximum of all and the " +
				"interface), set net.ipv4.conf.all.rp_filter = 1 (sysctl --system), then restart calico-node. Only if spoofing is handled elsewhere: " +
				"FELIX_IGNORELOOSERPF=true. `kubewin check` finds it before deploying (KW1608).",
			Refs: []string{"https://github.com/projectcalico/calico/blob/master/felix/dataplane/linux/int_dataplane.go", refCalicoTroubleshoot},
		},
		{
			// Readiness probe output, e.g. projectcalico/calico#3541, #8607, kubesphere/kubekey#134.
			ID: "CALICO-BGP-NOT-ESTABLISHED", Component: "calico", Severity: SevError,
			Title:   "calico-node not ready: BGP sessions not established",
			Literal: "BIRD is not ready: BGP not established with",
			Pattern: `BIRD is not ready: BGP not established with (?P<peers>[0-9a-fA-F.:,]+)`,
			Cause: "BIRD on this node has no BGP session with {peers}, so routes it should export (pod blocks, a gateway VIP holder's " +
				"Windows pod CIDR) do not reach those peers. Usual causes: TCP 179 blocked between nodes, calico-node autodetected the " +
				"wrong interface/address (a docker0/bridge or second NIC), or the peers' calico-node is down.",
			Fix: "calicoctl node status on both ends; allow TCP 179 between nodes; pin address autodetection " +
				"(IP_AUTODETECTION_METHOD=interface=<cluster NIC> or Installation nodeAddressAutodetectionV4); check that calico-node runs on {peers}.",
			Refs: []string{refCalicoTroubleshoot},
		},
	}
}
