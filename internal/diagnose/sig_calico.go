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
			// calico-node on Windows (startup "Unable to ensure network for os"), calicoctl and the CNI plugin:
			// rancher/rke2#1691, projectcalico/calico#4404, Azure/AKS-Edge#43.
			ID: "CALICO-WINDOWS-STRICT-AFFINITY", Component: "calico", Severity: SevError,
			Title:   "Calico for Windows refuses to run: IPAM strictAffinity is false",
			Literal: "global strict affinity should not be false for Windows node",
			Pattern: `global strict affinity should not be false for Windows node`,
			Cause: "Calico IPAM lets nodes borrow addresses from other nodes' blocks unless strictAffinity is true; Windows nodes cannot " +
				"use borrowed IPs, so calico-node/the CNI on Windows stop (no Calico HNS network, every sandbox fails) until it is set.",
			Fix: "Set spec.strictAffinity: true in the IPAMConfig named default (kubectl patch ipamconfig default --type merge, or calicoctl ipam configure " +
				"--strictaffinity=true) from a Linux admin host, then restart calico-node on the Windows node.",
			Refs: []string{"https://docs.tigera.io/calico/latest/getting-started/kubernetes/windows-calico/requirements"},
		},
		{
			// felix/dataplane/windows (win_dataplane.go): retried while no HNS network matches the
			// KUBE_NETWORK-style regexp; rancher/rke2#1691 (calico-node had exited).
			ID: "CALICO-WINDOWS-NO-HNS-NETWORK", Component: "calico", Severity: SevWarning,
			Title:   "Felix for Windows finds no Calico HNS network",
			Literal: "didn't find any HNS networks matching",
			Pattern: `didn't find any HNS networks matching regular expression (?P<re>\S+)`,
			Cause: "No HNS network matches {re}: calico-node's startup on this node has not created it (it exited — look for its error " +
				"just before, e.g. strict affinity, node/token errors — or is still waiting for the External network), or KUBE_NETWORK " +
				"does not match the network's name.",
			Fix:  "Get-HnsNetwork | Select Name; fix what stopped calico-node's startup (its log), or set KUBE_NETWORK to a regexp that matches the network.",
			Refs: []string{"https://github.com/projectcalico/calico/tree/master/felix/dataplane/windows"},
		},
		{
			// projectcalico/calico#7445: Windows HostProcess calico-node read the node's KUBECONFIG, so it
			// ran as system:node:<name>, which has no Calico RBAC.
			ID: "CALICO-NODE-WRONG-IDENTITY", Component: "calico", Severity: SevError,
			Title:   "calico-node runs as an identity without Calico RBAC",
			Literal: "in API group \"crd.projectcalico.org\"",
			Pattern: `User \\?"(?P<user>[^"\\]+)\\?" cannot (?P<verb>\w+) resource \\?"(?P<resource>[^"\\]+)\\?" in API group \\?"crd\.projectcalico\.org\\?"`,
			Cause: "The API server sees calico-node/Felix as {user}, which may not {verb} {resource}: it uses the wrong kubeconfig (on Windows " +
				"the node's kubelet kubeconfig from KUBECONFIG instead of the calico-node service account token), or the calico-node " +
				"ClusterRoleBinding is missing.",
			Fix: "Point calico-node at its own credential (the projected service-account token / the calico-kube-config the installer writes), " +
				"not the kubelet's; check kubectl get clusterrolebinding calico-node.",
			Refs: []string{"https://github.com/projectcalico/calico/issues/7445"},
		},
		{
			// projectcalico/calico#4597: Felix cannot even read the server version with its token.
			ID: "CALICO-CREDENTIALS-REJECTED", Component: "calico", Severity: SevError,
			Title:   "Calico's API credential is rejected (Unauthorized)",
			Literal: "the server has asked for the client to provide credentials",
			Pattern: `(?:\[ERROR\]|\[FATAL\]|\[WARNING\]).*the server has asked for the client to provide credentials`,
			Cause: "The API server rejects the token or certificate calico-node/Felix uses: an expired or revoked service-account token " +
				"(a kubeconfig with a copied token outlives its Secret or its bound lifetime), or a kubeconfig from another cluster.",
			Fix: "Recreate calico-node's credential (restart the pod so the projected token is remounted; on Windows re-run the installer that " +
				"writes calico-kube-config), and check the token's service account still exists.",
			Refs: []string{"https://github.com/projectcalico/calico/issues/4597", "https://github.com/projectcalico/calico/issues/8379"},
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
