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
			// Readiness probe output, e.g. projectcalico/calico#3541, #8607, #2561 ("Number of node(s) with BGP peering
			// established = 0"), kubesphere/kubekey#134.
			ID: "CALICO-BGP-NOT-ESTABLISHED", Component: "calico", Severity: SevError,
			Title:   "calico-node not ready: BGP sessions not established",
			Literal: " established",
			Pattern: `BIRD is not ready: BGP not established with (?P<peers>[0-9a-fA-F.:,]+)|Number of node\(s\) with BGP peering established = 0\b`,
			Cause: "BIRD on this node has no established BGP session[[ with {peers}]], so routes it should export (pod blocks, a gateway VIP holder's " +
				"Windows pod CIDR) do not reach those peers. Usual causes: TCP 179 blocked between nodes, calico-node autodetected the " +
				"wrong interface/address (a docker0/bridge or second NIC), or the peers' calico-node is down.",
			Fix: "calicoctl node status on both ends; allow TCP 179 between nodes; pin address autodetection " +
				"(IP_AUTODETECTION_METHOD=interface=<cluster NIC> or Installation nodeAddressAutodetectionV4); check that calico-node runs on the peers[[ ({peers})]].",
			Refs: []string{refCalicoTroubleshoot},
		},
		{
			// projectcalico/calico#7556: calico-node's readiness probe reports Felix not ready.
			ID: "CALICO-FELIX-NOT-READY", Component: "calico", Severity: SevError,
			Title:   "calico-node not ready: Felix is not ready",
			Literal: "felix is not ready",
			Pattern: `felix is not ready: (?P<detail>[^"\\,]+)`,
			Cause: "calico-node's readiness check found Felix's health endpoint not ready ({detail}): Felix is still starting or resyncing " +
				"(right after a reboot or restart), cannot reach the datastore/API server, or keeps failing to program the dataplane; " +
				"its own log says which.",
			Fix: "Read Felix's log in calico-node (kubectl logs -c calico-node; look for [ERROR]/[FATAL] and datastore errors); if it only " +
				"follows a reboot, wait for the resync; otherwise fix the datastore connection or dataplane error it reports.",
			Refs: []string{"https://github.com/projectcalico/calico/issues/7556", refCalicoTroubleshoot},
		},
		{
			// projectcalico/calico#4037 (and #4040): in KDD mode calico-node does not create Node objects.
			ID: "CALICO-NODENAME-MISMATCH", Component: "calico", Severity: SevError,
			Title:   "calico-node's NODENAME is not a Kubernetes node name",
			Literal: "peration Create is not supported on Node",
			Pattern: `[Oo]peration Create is not supported on Node(?: type|\((?P<name>[^)]+)\))`,
			Cause: "With the Kubernetes datastore Calico cannot create Node resources, it only updates the existing Kubernetes Node named " +
				"by its NODENAME[[ ({name})]]; that node does not exist because NODENAME (on Windows the hostname by default) differs from " +
				"the name the kubelet registered (e.g. EKS/AWS internal DNS names).",
			Fix: "Set NODENAME to the name kubectl get nodes shows (Calico for Windows: $env:NODENAME / NODENAME in config.ps1; Linux: the " +
				"NODENAME env of calico-node, normally spec.nodeName) and restart calico-node.",
			Refs: []string{"https://github.com/projectcalico/calico/issues/4037"},
		},
		{
			// projectcalico/calico#8408: Node updates kept conflicting after an etcd member crash.
			ID: "CALICO-NODE-UPDATE-CONFLICT", Component: "calico", Severity: SevError,
			Title:   "calico-node cannot update its Node: update conflict",
			Literal: "Unable to set node resource configuration",
			Pattern: `Unable to set node resource configuration.*?update conflict: Node\((?P<calnode>[^)]+)\)`,
			Cause: "calico-node's startup kept getting an update conflict writing Node {calnode}: the resource version it read is stale, " +
				"which persists when the datastore is inconsistent (an etcd member crashed or was restored, API servers behind different etcd " +
				"states) or another writer keeps updating the Node.",
			Fix: "Check etcd health and that all members agree (etcdctl endpoint status --cluster: same revision/raft index); repair or " +
				"remove the broken member, then restart calico-node.",
			Refs: []string{"https://github.com/projectcalico/calico/issues/8408"},
		},
		{
			// projectcalico/calico#1009: parallel calico-node start-ups race on the global defaults.
			ID: "CALICO-GLOBAL-CONFIG-RACE", Component: "calico", Severity: SevWarning,
			Title:   "calico-node lost the race to create global default config",
			Literal: "Unable to set global default configuration",
			Pattern: `Unable to set global default configuration:? (?:error=)?resource already exists: (?P<resource>\S+)`,
			Cause: "Several calico-node instances started at once and each tried to create the same global default resource {resource}; " +
				"the losers fail with 'already exists' and restart, after which they succeed.",
			Fix:  "Nothing if calico-node is ready after its restart; if it keeps failing, upgrade Calico (later versions tolerate the race).",
			Refs: []string{"https://github.com/projectcalico/calico/issues/1009"},
		},
		{
			// projectcalico/calico#7353: UIDs for v3 resources in KDD mode broke FelixConfiguration updates (reverted).
			ID: "CALICO-GLOBAL-CONFIG-UID", Component: "calico", Severity: SevError,
			Title:   "calico-node cannot update FelixConfiguration: UID precondition failed",
			Literal: "Precondition failed: UID in precondition",
			Pattern: `Unable to set global default configuration.*?(?P<resource>FelixConfiguration\([^)]*\)|\w+\([^)]*\)).*?Precondition failed: UID in precondition`,
			Cause: "The update of {resource} carried a UID that differs from the stored object's: a Calico release changed how UIDs of " +
				"v3 resources map to the CRDs in Kubernetes-datastore mode, so updates of existing objects fail (the change was reverted upstream).",
			Fix:  "Upgrade (or roll back) calico-node to a release with the fix; do not delete and recreate FelixConfiguration default as a workaround.",
			Refs: []string{"https://github.com/projectcalico/calico/issues/7353"},
		},
		{
			// liuyi01/kubernetes-starter#22: ETCD_ENDPOINTS without the http:// scheme.
			ID: "CALICO-DATASTORE-UNREACHABLE", Component: "calico", Severity: SevError,
			Title:   "calico-node cannot access its datastore",
			Literal: "Unable to access datastore to query node configuration",
			Pattern: `Unable to access datastore to query node configuration`,
			Cause: "calico-node's startup could not query the datastore: with etcd, ETCD_ENDPOINTS is wrong (missing http:// or https:// " +
				"scheme, wrong port, certificates) or etcd is down; with the Kubernetes datastore, the API server is unreachable or the credential is rejected.",
			Fix: "Check ETCD_ENDPOINTS (full URLs like https://10.0.0.1:2379) and the etcd certificates with etcdctl from the node, or " +
				"the kubeconfig/service IP for KDD; then restart calico-node.",
			Refs: []string{"https://github.com/liuyi01/kubernetes-starter/issues/22", refCalicoTroubleshoot},
		},
		{
			// labring/sealos#2721: no interface matches the autodetection regexes.
			ID: "CALICO-IP-AUTODETECT-FAILED", Component: "calico", Severity: SevError,
			Title:   "calico-node cannot auto-detect the node IP",
			Literal: "Unable to auto-detect an IPv",
			Pattern: `Unable to auto-detect an IPv(?P<ver>[46]) address(?: using (?P<method>[^:]+))?: (?P<why>[^"\\]+)`,
			Cause: "Calico's IPv{ver} autodetection[[ ({method})]] found no address ({why}): no host interface matches the configured " +
				"interface regexes/method (interfaces named otherwise, e.g. ens/bond/vmbr), so calico-node cannot choose the node IP.",
			Fix: "Set IP_AUTODETECTION_METHOD (or the operator's nodeAddressAutodetectionV4) to match this host: interface=<regex of the NIC>, " +
				"can-reach=<API server IP> or cidrs=<node subnet>; or set IP explicitly, then restart calico-node.",
			Refs: []string{"https://github.com/labring/sealos/issues/2721", "https://docs.tigera.io/calico/latest/networking/ipam/ip-autodetection"},
		},
		{
			// projectcalico/vpp-dataplane#651: linuxDataplane VPP set before the VPP dataplane was installed.
			ID: "CALICO-DATAPLANE-DRIVER-MISSING", Component: "calico", Severity: SevError,
			Title:   "Felix DataplaneDriver points at a missing binary",
			Literal: "Failed to parse config parameter DataplaneDriver",
			Pattern: `Failed to parse config parameter DataplaneDriver; value \\?"(?P<path>[^"\\]+)\\?": missing file`,
			Cause: "Felix's DataplaneDriver is {path}, which does not exist in the calico-node image: the Installation selects an external " +
				"dataplane (linuxDataplane: VPP) before that dataplane (calico-vpp) is installed, so Felix and its helpers refuse the config.",
			Fix: "Install the dataplane first (calico-vpp manifests) or set linuxDataplane back to Iptables/BPF in the Installation, then " +
				"let calico-node restart.",
			Refs: []string{"https://github.com/projectcalico/vpp-dataplane/issues/651"},
		},
		{
			// projectcalico/calico#9905: route resolver sees an IP whose block has no node affinity.
			ID: "CALICO-ROUTE-NO-IPAM-NODE", Component: "calico", Severity: SevWarning,
			Title:   "Felix cannot route an IP: its IPAM block has no node",
			Literal: "the node it belongs to was not recorded in IPAM",
			Pattern: `Unable to create route for IP; the node it belongs to was not recorded in IPAM(?: IP=(?P<ip>\S+))?`,
			Cause: "Felix's route resolver found IP {ip} in an IPAM block that records no node affinity, so it cannot tell which node to " +
				"route it to (a block left without affinity, e.g. after its node was deleted, or an IP outside Calico's IPAM); traffic to it is not routed.",
			Fix: "calicoctl ipam check (and calicoctl ipam show --show-blocks) to find blocks without affinity or leaked IPs; release them " +
				"(calicoctl ipam release / ipam check --fix on recent versions).",
			Refs: []string{"https://github.com/projectcalico/calico/issues/9905"},
		},
		{
			// rancher/rke2#7440: Felix for Windows cannot find workloads' HNS endpoints (cause not established).
			ID: "CALICO-WIN-HNS-ENDPOINT-LOOKUP", Component: "calico", Severity: SevWarning,
			Title:   "Felix for Windows cannot look up HNS endpoints",
			Literal: "Failed to look up ",
			Pattern: `Failed to look up (?:HNS endpoint for workload(?:.*?WorkloadId:\\?"(?P<workload>[^"\\]+))?|one or more HNS endpoints)`,
			Cause: "Felix for Windows has a workload endpoint[[ ({workload})]] whose HNS endpoint it cannot find, so it cannot apply policy " +
				"to it and retries: the endpoint was not created yet or was removed (pod restarted, HNS restarted/network recreated).",
			Fix: "Compare Get-HnsEndpoint with the pods on the node; if it persists, restart the pod, and check that the Calico HNS network " +
				"was not recreated underneath (calico-node/Felix restarts just before).",
			Refs: []string{"https://github.com/rancher/rke2/issues/7440"},
		},
		{
			// justmeandopensource/kubernetes#49: the Calico CNI plugin reads the node name calico-node writes.
			ID: "CALICO-NODENAME-MISSING", Component: "calico", Severity: SevError,
			Title:   "Calico CNI: /var/lib/calico/nodename missing",
			Literal: "/var/lib/calico/nodename",
			Pattern: `stat /var/lib/calico/nodename: no such file or directory`,
			Cause: "The Calico CNI plugin reads the node name that calico-node writes to /var/lib/calico/nodename; it is missing because " +
				"calico-node is not running (yet) on this node or does not mount /var/lib/calico.",
			Fix: "kubectl -n kube-system (or calico-system) get pods -o wide | grep calico-node for this node; fix why it is not running " +
				"(its logs/events), then the sandboxes succeed on retry.",
			Refs: []string{"https://github.com/justmeandopensource/kubernetes/issues/49", refCalicoTroubleshoot},
		},
	}
}
