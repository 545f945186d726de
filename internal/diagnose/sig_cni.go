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
			Title:   "CNI plugin binary not found",
			Literal: "failed to find plugin",
			Pattern: `failed to find plugin \\?"(?P<plugin>[^"\\]+)\\?" in path \[(?P<path>[^\]]*)\]`,
			Cause:   "The CNI conf names plugin {plugin} but no such binary is in [{path}].",
			Fix:     "Copy {plugin}.exe into the CNI bin_dir ({path}) or fix bin_dir in containerd's config.toml; restart containerd.",
			Refs:    []string{"https://www.cni.dev/docs/spec/"},
		},
		{
			ID: "CNI-IPAM-EXHAUSTED", Component: "cni", Severity: SevError,
			Title:   "pod IP range exhausted",
			Literal: "no IP addresses available in range set",
			Pattern: `no IP addresses available in range set: (?P<range>[\d.:a-fA-F-]+)`,
			Cause:   "host-local IPAM has no free address in {range}: the node's pod CIDR is full, or leaked reservations were never released.",
			Fix:     "Remove stale reservations (files under the IPAM data dir whose container no longer exists), or give the node a larger pod CIDR.",
			Refs:    []string{"https://www.cni.dev/plugins/current/ipam/host-local/"},
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
			ID: "CNI-REMOTE-ENDPOINT-1909", Component: "cni", Severity: SevWarning,
			Title:   "local HNS endpoint flagged IsRemoteEndpoint (1909 + win-bridge 0.8.5)",
			Literal: "IsRemoteEndpoint",
			Pattern: `^\s*IsRemoteEndpoint\s*:\s*True\s*$|"IsRemoteEndpoint"\s*:\s*true`,
			Cause:   "On Windows Server 1909 with win-bridge 0.8.5, scaling a ReplicaSet marks the earlier pods' endpoints IsRemoteEndpoint=True and their network stops (kube-proxy running as LocalSystem service). Remote endpoints kube-proxy creates for other nodes' pods legitimately carry this flag: it matters when the IP is a local pod.",
			Fix:     "Run kube-proxy under another account: sc config kubeproxy obj= \"NT AUTHORITY\\NetworkService\"; upgrade win-bridge; compare the endpoint IP with the node's pod CIDR.",
			Refs:    []string{"https://github.com/containernetworking/plugins/issues"},
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
