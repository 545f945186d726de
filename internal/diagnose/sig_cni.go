package diagnose

// cniSignatures: CNI plugins (win-bridge, win-overlay, flannel, host-local) and their wiring.
func cniSignatures() []Signature {
	return []Signature{
		{
			// azure-container-networking cni/network plugin: the JSON store (azure-vnet.json) is guarded
			// by azure-vnet.json.lock; Azure/azure-container-networking#242, #289, #339, #464, #1359.
			ID: "CNI-AZURE-STORE-LOCK", Component: "cni", Severity: SevError,
			Title:   "Azure CNI cannot lock its state store",
			Literal: "locking store",
			Pattern: `(?:Timed out on locking store|Failed to lock store|of network plugin)[:,]? ?(?:err:)?(?P<why>[^."\\]*)`,
			Cause:   azureStoreLockCause,
			Fix:     azureStoreLockFix,
			Refs:    azureStoreLockRefs,
		},
		{
			// Older azure-vnet wording of the same failure: "err:Store is locked." (#242, #194).
			ID: "CNI-AZURE-STORE-LOCKED", Component: "cni", Severity: SevError,
			Title:   "Azure CNI cannot lock its state store (store is locked)",
			Literal: "Store is locked",
			Pattern: `(?:Timed out on locking store|Failed to initialize key-value store of network plugin), ?err: ?(?P<why>Store is locked)`,
			Cause:   azureStoreLockCause,
			Fix:     azureStoreLockFix,
			Refs:    azureStoreLockRefs,
		},
		{
			// libcni's FindInPath returns "no plugin name provided" when the conf's "type" is empty: a
			// conflist fed to a runtime that reads single .conf files (kubelet <= 1.7), or a conf without
			// "type" (lyft/cni-ipvlan-vpc-k8s#7): old kubelet's "Error adding network: ...". The wincni-era
			// forms ("from network <name>", teardown "... network: ...") are CNI-NO-PLUGIN-NAME, evaluated after this.
			ID: "CNI-CONFIG-NO-TYPE", Component: "cni", Severity: SevError,
			Title:   "CNI config names no plugin type",
			Literal: "no plugin name provided",
			Pattern: `Error (?P<action>adding|deleting) network: no plugin name provided\b`,
			Cause: "The runtime loaded a CNI network config whose plugin \"type\" is empty, so libcni has no binary to run" +
				"[[ (while {action} the pod network)]]: typically a .conflist (\"plugins\": [...]) read by a runtime or kubelet that only " +
				"understands single-plugin .conf files, or a hand-written conf missing \"type\".",
			Fix: "Check the first file (lexical order) in the CNI conf dir (/etc/cni/net.d, C:\\etc\\cni\\net.d or containerd's conf_dir): " +
				"it must have a \"type\" naming a binary in the bin dir, or be a .conflist read by a runtime that supports lists " +
				"(kubelet >= 1.8 / containerd); remove stray or half-written confs and restart the runtime.",
			Refs: []string{"https://github.com/lyft/cni-ipvlan-vpc-k8s/issues/7", "https://www.cni.dev/docs/spec/"},
		},
		{
			ID: "CNI-NO-PLUGIN-NAME", Component: "cni", Severity: SevError,
			Title:   "old wincni.exe: 'no plugin name provided'",
			Literal: "no plugin name provided",
			Pattern: `(?:from network (?P<network>\S+)|network): no plugin name provided`,
			Cause:   "The legacy wincni.exe from microsoft/SDN is in use (network {network}); it is unmaintained and fails on teardown, mangles DNS suffixes and ExceptionLists.",
			Fix:     "Replace wincni.exe with win-bridge (or win-overlay) from containernetworking/plugins v1.x, set \"type\": \"win-bridge\" in the CNI conf, and recreate the pods.",
			Refs:    []string{"https://github.com/containernetworking/plugins/tree/main/plugins/main/windows"},
		},
		{
			ID: "CNI-PLUGIN-NOT-FOUND", Component: "cni", Severity: SevError,
			Title:    "CNI plugin binary not found",
			Literal:  "failed to find plugin",
			Pattern:  `failed to find plugin \\?"(?P<plugin>[^"\\]+)\\?" in path \[(?P<path>[^\]]*)\]`,
			Cause:    "The CNI conf names plugin {plugin} but no such binary is in [{path}].",
			Fix:      "Copy {plugin}.exe into the CNI bin_dir ({path}) or fix bin_dir in containerd's config.toml; restart containerd.",
			FixLinux: "Install the CNI plugin binary {plugin} (containernetworking/plugins release archive) into the bin_dir ({path}; /opt/cni/bin by default) or fix bin_dir in containerd's config.toml; systemctl restart containerd.",
			Refs:     []string{"https://www.cni.dev/docs/spec/"},
		},
		{
			// host-local ("failed to allocate for range 0: no IP addresses available in range set"), Azure CNI
			// ("[azure-vnet-ipam] Failed to allocate address: No available addresses", "Failed to allocate pool:
			// No available address pools": Azure/azure-container-networking#333, Azure/aks-engine#4263) and
			// Cilium ("unable to allocate IP via local cilium agent: ... range is full": cilium/cilium#10627).
			ID: "CNI-IPAM-EXHAUSTED", Component: "cni", Severity: SevError,
			Title:   "pod IP range exhausted",
			Literal: "to allocate ",
			Pattern: `(?:no IP addresses available in range set: (?P<range>[\d.:a-fA-F-]+)|Failed to allocate (?:address|pool): (?P<azure>No available address(?:es| pools))|unable to allocate IP via local cilium agent: .*?(?P<cilium>range is full))`,
			Cause: "The IPAM plugin has no free pod address on this node[[ (host-local range {range})]][[ (Azure CNI: {azure})]][[ (Cilium: {cilium})]]: " +
				"host-local's node pod CIDR is full or reservations of dead pods leaked (files under /var/lib/cni/networks/<network>); Azure CNI " +
				"has used every secondary IP configuration of the node's NIC (more pods than IPs per node, or a self-built VM whose NIC has no " +
				"secondary IPs for pods); Cilium's per-node pod CIDR is exhausted.",
			Fix: "host-local: drain the node, remove reservation files whose container no longer exists (or the whole dir after a drain), restart " +
				"the runtime, or give nodes a larger pod CIDR. Azure CNI: add secondary IP configurations to the NIC or lower --max-pods to the IPs " +
				"per NIC. Cilium: check cilium status --verbose for leaked IPs, enlarge the per-node CIDR (cluster-pool) or lower max pods.",
			Refs: []string{"https://www.cni.dev/plugins/current/ipam/host-local/", "https://github.com/Azure/azure-container-networking/issues/333",
				"https://github.com/cilium/cilium/issues/10627"},
		},
		{
			// kubernetes-sigs/sig-windows-tools#245, #292: the 'nat' conf that containerd's Windows install
			// scripts write (0-containerd-nat.json) sorts first, so pods get the nat plugin, which tries to
			// create a 'nat' HNS network that already exists.
			ID: "CNI-NAT-NETWORK-EXISTS", Component: "cni", Severity: SevError,
			Title:   "containerd's 'nat' CNI config is used and its HNS network already exists",
			Literal: "hcnCreateNetwork failed in Win32: The object already exists",
			Pattern: `plugin type=\\?"nat\\?"(?: name=\\?"(?P<network>[^"\\]+)\\?")? failed \(add\): hcnCreateNetwork failed in Win32: The object already exists`,
			Cause: "The pod network is set up by the 'nat' CNI plugin[[ (network {network})]], not the cluster's CNI: a leftover 'nat' conf " +
				"(0-containerd-nat.json, written by containerd's Windows install scripts) sorts before the flannel/Calico conf in the CNI conf dir, " +
				"and its ADD tries to create the 'nat' HNS network, which already exists (0x1392).",
			Fix: "Delete the nat conf from containerd's conf_dir (C:\\Program Files\\containerd\\cni\\conf\\0-containerd-nat.json, or C:\\etc\\cni\\net.d) " +
				"so only the cluster's conf is left, restart containerd and recreate the pods; remove the nat network if nothing uses it " +
				"(Get-HnsNetwork | ? Name -eq nat | Remove-HnsNetwork).",
			Refs: []string{"https://github.com/kubernetes-sigs/sig-windows-tools/issues/245", "https://github.com/kubernetes-sigs/sig-windows-tools/issues/292"},
		},
		{
			// projectcalico/calico#4334, kubernetes/kubernetes#94924: Docker-era Windows CNI plugins (Calico,
			// flannel's win-overlay) expected the runtime to have created the pod's HNS endpoint; under
			// containerd nothing does, so the lookup by name fails.
			ID: "CNI-CONTAINERD-ENDPOINT-MISSING", Component: "cni", Severity: SevError,
			Title:   "Windows CNI plugin looks up a pod HNS endpoint that containerd never created",
			Literal: "failed to setup network for sandbox",
			Pattern: `failed to setup network for sandbox \\?"[0-9a-f]+\\?": (?:error while ProvisionEndpoint\(.*?)?Endpoint (?P<endpoint>[0-9a-f]{12,}_[^\s"\\]+) not found`,
			Cause: "The CNI plugin expected the pod's HNS endpoint {endpoint} to exist already: Windows CNI builds written for dockershim " +
				"(older Calico for Windows, flannel's win-overlay/win-bridge before containerd support) only attach an endpoint the runtime " +
				"created, and containerd does not create one.",
			Fix: "Use CNI plugins that support containerd: containernetworking/plugins win-bridge/win-overlay >= 0.8.6 (1.x recommended), " +
				"Calico for Windows >= 3.17 with its containerd install, sdnbridge/sdnoverlay from microsoft/windows-container-networking; " +
				"then recreate the pods.",
			Refs: []string{"https://github.com/projectcalico/calico/issues/4334", "https://github.com/kubernetes/kubernetes/issues/94924"},
		},
		{
			// kubernetes-sigs/sig-windows-tools#171: under dockershim the win-bridge ADD (also re-run by the status hook)
			// cannot find the endpoint of a running sandbox.
			ID: "CNI-WIN-ENDPOINT-VANISHED", Component: "cni", Severity: SevError,
			Title:   "win-bridge/win-overlay cannot find the sandbox's HNS endpoint",
			Literal: "failed to find HNSEndpoint",
			Pattern: `error while executing ADD command: error while ProvisionEndpoint\(.*?failed to find HNSEndpoint (?P<endpoint>[^\s:"\\]+)`,
			Cause: "The CNI ADD (or dockershim's status hook, which re-runs it) looked for HNS endpoint {endpoint} and it is gone: the endpoint " +
				"was removed underneath the sandbox (HNS restart, network recreated by flanneld/kube-proxy start-up scripts, stale " +
				"endpoints cleaned up), so pods on the node lose networking and restart.",
			Fix: "Check whether the HNS network was recreated (Get-HnsNetwork: its Id changes; flanneld or a start script deleting cbr0) and " +
				"stop whatever recreates it; then restart the affected pods (or kubelet) so sandboxes get new endpoints.",
			Refs: []string{"https://github.com/kubernetes-sigs/sig-windows-tools/issues/171"},
		},
		{
			// containerd/containerd#5892: a Windows CNI plugin built for dockershim gets containerd's namespace GUID.
			ID: "CNI-NETNS-PARSE", Component: "cni", Severity: SevError,
			Title:   "Windows CNI plugin cannot parse containerd's network namespace",
			Literal: "failed to parse netns",
			Pattern: `failed to parse netns (?P<netns>[^\s"\\]+)`,
			Cause: "containerd passes the sandbox's HCN namespace id ({netns}) as the netns; the CNI plugin cannot parse it because it was " +
				"built for dockershim (it expects a container id / none) — the plugin is not containerd-ready.",
			Fix: "Upgrade the Windows CNI plugins to containerd-capable releases (containernetworking/plugins >= 0.8.6 win-bridge/win-overlay, " +
				"current Calico / Azure CNI / sdnbridge) and restart containerd.",
			Refs: []string{"https://github.com/containerd/containerd/issues/5892"},
		},
		{
			// Azure/azure-container-networking#774: azure-vnet returned nothing to containerd.
			ID: "CNI-PLUGIN-EMPTY-OUTPUT", Component: "cni", Severity: SevError,
			Title:   "CNI plugin returned no output to containerd",
			Literal: "failed to setup network for sandbox",
			Pattern: `failed to setup network for sandbox \\?"[0-9a-f]+\\?": unexpected end of JSON input`,
			Cause: "containerd ran the CNI plugin and got an empty stdout instead of a result or error JSON: the plugin crashed, was killed, " +
				"or exited early without printing (Azure CNI on Windows, for one, exited silently in some versions); its own log holds the reason.",
			Fix: "Read the plugin's own log (Azure CNI: C:\\k\\azure-vnet.log; others: their log file or kubelet/containerd stderr), run the " +
				"plugin binary by hand to see it start, and upgrade it to a release that reports errors.",
			Refs: []string{"https://github.com/Azure/azure-container-networking/issues/774"},
		},
		{
			// kubernetes/kubernetes#69165: libcni could not decode the plugin's error output (dockershim era).
			ID: "CNI-EMPTY-DIAGNOSTIC", Component: "cni", Severity: SevError,
			Title:   "CNI plugin failed without printing an error",
			Literal: "netplugin failed but error parsing its diagnostic message",
			Pattern: `netplugin failed but error parsing its diagnostic message \\?"(?P<output>[^"\\]*)\\?": (?P<why>[^,\]"\\]+)`,
			Cause: "The CNI plugin exited non-zero and printed no error JSON[[ (its output: {output})]] ({why}): the plugin binary crashed, was " +
				"killed, or is not a CNI plugin at all (wrong file, wrong architecture), so the runtime cannot say why it failed.",
			Fix: "Run the plugin from the CNI bin dir by hand (CNI_COMMAND=VERSION) to see that it starts; check its own log and the node's " +
				"event log for a crash; reinstall the plugin binaries matching the node's OS/architecture.",
			Refs: []string{"https://github.com/kubernetes/kubernetes/issues/69165"},
		},
		{
			// ovn-kubernetes/ovn-kubernetes#331: the ovn-k8s CNI plugin's config file was missing or its path empty.
			ID: "CNI-PLUGIN-CONFIG-FILE-MISSING", Component: "cni", Severity: SevError,
			Title:   "CNI plugin cannot open its own config file",
			Literal: "failed to open config file",
			Pattern: `failed to open config file ?(?P<file>.*?) ?: open .*?: (?P<why>no such file or directory|The system cannot find the (?:file|path) specified)`,
			Cause: "The CNI plugin (ovn-k8s-cni-overlay and similar plugins that read a config file beside the CNI conf) could not open its " +
				"config file[[ {file}]] ({why}): the file was never written on this node, or the path it was given is empty.",
			Fix: "Create the plugin's config file where it expects it (ovn-kubernetes: /etc/openvswitch/ovn_k8s.conf, written by the node " +
				"set-up) or fix the path in the CNI conf/plugin flags, then retry the pod.",
			Refs: []string{"https://github.com/ovn-kubernetes/ovn-kubernetes/issues/331"},
		},
		{
			// containernetworking/cni#909: the bridge plugin's iptables call fails with the nf_tables backend.
			ID: "CNI-BRIDGE-IPTABLES-FAILED", Component: "cni", Severity: SevError,
			Title:   "bridge CNI plugin: iptables rule rejected",
			Literal: "failed (add): running [",
			Pattern: `plugin type=\\?"(?P<plugin>bridge|portmap|firewall)\\?" failed \(add\): running \[(?P<cmd>[^\]]*iptables[^\]]*)\]: exit status (?P<status>\d+): (?P<message>[^"\\]*)`,
			Cause: "The {plugin} plugin's iptables command failed (exit {status}: {message}). With the nf_tables backend 'RULE_APPEND failed " +
				"(Invalid argument)' means the kernel lacks a match the rule uses (xt_comment for '-m comment', nf_nat/xt_MASQUERADE), " +
				"typical of minimal, WSL or container-host kernels, or a mix of iptables-legacy and iptables-nft rules.",
			Fix: "Load the missing modules (modprobe xt_comment nf_nat xt_MASQUERADE) or use a kernel with them; or switch to iptables-legacy " +
				"(update-alternatives --set iptables /usr/sbin/iptables-legacy) when the host's other tools use legacy tables.",
			Refs: []string{"https://github.com/containernetworking/cni/issues/909", "https://github.com/containerd/nerdctl/issues/1333"},
		},
		{
			// Azure/azure-container-networking#715: azure-vnet DEL fails when HNS no longer has the endpoint
			// its state file (azure-vnet.json) lists.
			ID: "AZURE-CNI-DEL-ENDPOINT-NOT-FOUND", Component: "cni", Severity: SevWarning,
			Title:   "Azure CNI DEL fails: HNS endpoint from its state file not found",
			Literal: "The endpoint was not found",
			Pattern: `(?:HNSEndpointRequest DELETE response:.*?err:|Failed to delete endpoint: )hns failed with error : The endpoint was not found`,
			Cause: "azure-vnet's state file (azure-vnet.json) still lists an endpoint that HNS no longer has (removed by an HNS restart, " +
				"reboot or cleanup); older Azure CNI fails the whole DEL instead of treating the endpoint as already deleted, so sandboxes " +
				"cannot be torn down and the stale entry stays.",
			Fix: "Upgrade Azure CNI (later releases ignore a missing endpoint on DEL); meanwhile remove the stale endpoint entry from " +
				"C:\\k\\azure-vnet.json with no pods starting (or drain the node, delete azure-vnet.json and restart).",
			Refs: []string{"https://github.com/Azure/azure-container-networking/issues/715"},
		},
		{
			ID: "CNI-VERSION-INCOMPATIBLE", Component: "cni", Severity: SevError,
			Title:   "CNI config version not supported by the plugin",
			Literal: "incompatible CNI versions",
			Pattern: `incompatible CNI versions; config is \\?"(?P<version>[\d.]+)\\?", plugin supports \[(?P<supported>[^\]]*)\]`,
			Cause:   "The CNI conf declares cniVersion {version}, the plugin binary supports only [{supported}].",
			Fix:     "Lower cniVersion in the conf to one of [{supported}] or upgrade the plugin binaries.",
			Refs:    []string{"https://www.cni.dev/docs/spec/"},
		},
		{
			// win-bridge/win-overlay look up the HNS network named by the CNI conf's "name"
			// (containernetworking/plugins v0.8.x plugins/main/windows/win-bridge: errors.Annotatef(err,
			// "error while GETHNSNewtorkByName(%s)", n.Name), the misspelling is upstream's; hcsshim
			// GetHNSNetworkByName returns NetworkNotFoundError "Network %s not found"); v1.x says
			// "network %v not found". The issue-23 regression: a CreatePodSandbox line carrying it.
			ID: "CNI-WIN-HNS-NETWORK-MISSING", Component: "cni", Severity: SevError,
			Title:   "win-bridge/win-overlay: the HNS network named in the CNI conf does not exist",
			Literal: "ByName(",
			Pattern: `GetHNS(?:Network|Newtork)ByName\((?P<network>[^)]*)\): (?:Network|network) (?:name )?\\?"?(?P<name>[^\s"\\]+)\\?"? not found`,
			Cause: "The CNI plugin looked up the HNS network {network} (the \"name\" of its CNI conf) and HNS has none: the network " +
				"was never created on this node, a reboot or HNS reset removed it, or it carries another name. Every pod sandbox on the node fails.",
			Fix: "Get-HnsNetwork | Select Name,Type: create the L2Bridge/Overlay network before pods start (kubewin join and its node " +
				"service do; the flannel/Calico Windows pods do for theirs) or make the conf's \"name\" the existing network's.",
			Refs: []string{"https://github.com/containernetworking/plugins/blob/v0.8.6/plugins/main/windows/win-bridge/win-bridge_windows.go",
				"https://github.com/microsoft/hcsshim/blob/main/hnsnetwork.go"},
		},
		{
			ID: "CNI-REMOTE-ENDPOINT-1909", Component: "cni", Severity: SevWarning,
			Title:   "local HNS endpoint flagged IsRemoteEndpoint (1909 + win-bridge 0.8.5)",
			Literal: "IsRemoteEndpoint",
			Pattern: `^\s*IsRemoteEndpoint\s*:\s*True\s*$|"IsRemoteEndpoint"\s*:\s*true`,
			Cause:   "On Windows Server 1909 with win-bridge 0.8.5, scaling a ReplicaSet marks the earlier pods' endpoints IsRemoteEndpoint=True and their network stops (kube-proxy running as LocalSystem service). Remote endpoints kube-proxy creates for other nodes' pods legitimately carry this flag: it matters when the IP is a local pod.",
			Fix:     "Run kube-proxy under another account: sc config kubeproxy obj= \"NT AUTHORITY\\NetworkService\"; upgrade win-bridge; compare the endpoint IP with the node's pod CIDR.",
			Refs:    []string{"https://github.com/containernetworking/plugins/issues"},
		},
		{
			// azure-vnet (Azure CNI) creating or attaching an endpoint for a container that HCS no longer
			// knows: Azure/azure-container-networking#235.
			ID: "CNI-ENDPOINT-CONTAINER-GONE", Component: "cni", Severity: SevWarning,
			Title:   "CNI endpoint for a container that no longer exists",
			Literal: "A Compute System with the specified identifier does not exist",
			Pattern: `(?:Failed to attach endpoint|Failed to create endpoint \S+, err):\s*A Compute System with the specified identifier does not exist`,
			Cause: "The container was gone (deleted or restarted) before the CNI plugin finished ADD, so HCS could not attach the endpoint; " +
				"the plugin may leave the endpoint behind.",
			Fix:  "Usually transient: the kubelet recreates the sandbox. If it repeats, look for pods restarting in a loop; remove leaked endpoints (Get-HnsEndpoint).",
			Refs: []string{"https://github.com/Azure/azure-container-networking/issues/235"},
		},
	}
}

// The Azure CNI store-lock entries share one explanation (two wordings of the same failure).
const (
	azureStoreLockCause = "azure-vnet serialises every ADD/DEL on azure-vnet.json.lock: many pods starting at once queue past the timeout, or an " +
		"azure-vnet process killed while holding it (a loaded node, a crash) left the lock file behind so every later call fails ({why})."
	azureStoreLockFix = "If calls fail continuously: check that no azure-vnet process runs, delete the stale azure-vnet.json.lock (C:\\k or " +
		"/var/run), and upgrade Azure CNI (later releases use a process lock that dies with its owner); otherwise stagger pod starts."
)

var azureStoreLockRefs = []string{"https://github.com/Azure/azure-container-networking/issues/464", "https://github.com/Azure/azure-container-networking/issues/1359"}
