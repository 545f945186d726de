package diagnose

// flannelSignatures: flanneld on Windows and the flannel CNI plugin.
func flannelSignatures() []Signature {
	return []Signature{
		{
			// flannel backend/hostgw/hostgw_windows.go attaches the bridge endpoint (<network>_ep) to the
			// host compartment; flannel-io/flannel#1112 (after a Windows update and reboot: "The wrong
			// diskette is in the drive" 0x22), #1423 (after reboot).
			ID: "FLANNEL-HOST-ENDPOINT-ATTACH", Component: "flannel", Severity: SevError,
			Title:   "flanneld cannot attach the host endpoint to the host compartment",
			Literal: "failed to hot attach bridge HNSEndpoint",
			Pattern: `failed to hot attach bridge HNSEndpoint (?P<endpoint>\S+) to host compartment: (?P<message>.*?)(?:\\n|"|$)`,
			Cause: "HNS refused to hot-attach {endpoint} to the host ({message}): after a reboot or a Windows update the L2Bridge network " +
				"and its host endpoint left from before are stale, so the attach fails and flanneld exits before programming routes.",
			Fix: "Remove the stale network and endpoints (Get-HnsNetwork | ? Name -eq cbr0 | Remove-HnsNetwork; Get-HnsEndpoint | ? Name -like '*_ep' | " +
				"Remove-HnsEndpoint), restart hns, then start flanneld again; kubewin's boot task recreates the network before the services.",
			Refs: []string{"https://github.com/flannel-io/flannel/blob/master/pkg/backend/hostgw/hostgw_windows.go"},
		},
		{
			ID: "FLANNEL-WAITING-FOR-NETWORK", Component: "flannel", Severity: SevError,
			Title:   "flanneld start-up stuck 'Waiting for the Network to be created'",
			Literal: "Waiting for the Network to be created",
			Pattern: `Waiting for the Network to be created`,
			Cause:   "start.ps1/helper.psm1 waits for flanneld to create the HNS network; a timing problem with the management IP (flanneld started before the NIC/IP was ready, or NODE_NAME unset) leaves it waiting forever.",
			Fix:     "Restart start.ps1, or by hand: [Environment]::SetEnvironmentVariable(\"NODE_NAME\", \"<node name>\"); C:\\flannel\\flanneld.exe --kubeconfig-file=c:\\k\\config --iface=<node IP> --ip-masq=1 --kube-subnet-mgr=1; wait until Get-HnsNetwork shows the network (retry loop with a timeout).",
			Refs:    []string{refWinTroubleshoot},
		},
		{
			ID: "FLANNEL-SUBNET-ENV-MISSING", Component: "flannel", Severity: SevError,
			Title:   "flannel subnet.env missing",
			Literal: "/run/flannel/subnet.env",
			Pattern: `open (?:[A-Za-z]:)?/run/flannel/subnet\.env: (?:no such file or directory|The system cannot find the (?:file|path) specified)`,
			Cause:   "The flannel CNI plugin reads the node's subnet from /run/flannel/subnet.env (C:\\run\\flannel\\subnet.env on Windows), which flanneld writes when it starts: flanneld is not running or failed.",
			Fix:     "Restart flanneld and check its log; as a stop-gap copy subnet.env from a Linux node to C:\\run\\flannel\\subnet.env and set FLANNEL_SUBNET to this node's pod CIDR (.1/24).",
			Refs:    []string{refWinTroubleshoot},
		},
		{
			ID: "FLANNEL-NO-POD-CIDR", Component: "flannel", Severity: SevError,
			Title:   "node has no pod CIDR for flannel",
			Literal: "pod cidr not assigned",
			Pattern: `node \\?"(?P<node>[^"\\]+)\\?" pod cidr not assigned`,
			Cause:   "flanneld (kube-subnet-mgr) reads the subnet from node.spec.podCIDR, which is empty for {node}: the controller manager does not allocate node CIDRs.",
			Fix:     "Run kube-controller-manager with --allocate-node-cidrs=true --cluster-cidr=<pod CIDR>, or set spec.podCIDR of {node} when creating it.",
			Refs:    []string{"https://github.com/flannel-io/flannel/blob/master/Documentation/troubleshooting.md"},
		},
		{
			// flannel main.go: "Failed to find any valid interface to use", "Failed to find interface to use that
			// matches the interfaces and/or regexes provided", "Could not find valid interface matching <iface>: ..."
			// (flannel-io/flannel#944: localized Windows; kubernetes-sigs/sig-windows-tools#40: after a restart).
			ID: "FLANNEL-NO-INTERFACE", Component: "flannel", Severity: SevError,
			Title:   "flanneld found no usable interface",
			Literal: "interface",
			Pattern: `Failed to find any valid interface to use: (?P<reason>.+)|Failed to find interface to use that matches the interfaces and/or regexes provided|Could not find valid interface matching (?P<iface>[^\s:]+): (?P<lookup>.+)`,
			Cause: "flanneld could not pick the interface to use[[ ({reason})]][[ (--iface {iface}: {lookup})]]: the --iface address is not (yet) " +
				"on any adapter (after a reboot the IP moves to the vEthernet adapter of the HNS switch or is not assigned yet), the default-route " +
				"adapter is not the cluster NIC, or on non-English Windows older flanneld fails to look the adapter up by its localized name.",
			Fix: "Start flanneld with --iface=<the node's cluster IP> that Get-NetIPAddress shows (nssm set flanneld AppParameters ... --iface=<IP>), " +
				"start it only after the adapter has its IP, and on localized Windows upgrade flanneld (or use an English display language).",
			Refs: []string{"https://github.com/flannel-io/flannel/blob/master/Documentation/configuration.md", "https://github.com/flannel-io/flannel/issues/944"},
		},
		{
			// flannel pkg/backend (Windows): the HNS network whose ManagementIP is the --iface address, created by
			// start.ps1 (New-HNSNetwork ... -Name External) before flanneld; flannel-io/flannel#1109.
			ID: "FLANNEL-NO-MGMT-NETWORK", Component: "flannel", Severity: SevError,
			Title:   "flanneld on Windows finds no HNS network with the node's management IP",
			Literal: "Cannot find network with Management IP",
			Pattern: `Cannot find network with Management IP (?P<ip>\S+?)\.?(?:$|\s|"|\\)`,
			Cause: "flanneld (Windows) looks for an HNS network whose management IP is its --iface address {ip}; none exists: the External " +
				"vSwitch network the start scripts create first (New-HNSNetwork -Name External on the cluster NIC) is missing, or --iface is " +
				"not the IP of the adapter the vSwitch is bound to.",
			Fix: "Create the external network before flanneld (L2Bridge/host-gw: New-HNSNetwork -Type L2Bridge -AddressPrefix 192.168.255.0/30 " +
				"-Gateway 192.168.255.1 -Name External -AdapterName <NIC>; vxlan: -Type Overlay ... 192.168.255.0/30), wait for the network blip, " +
				"and start flanneld with --iface=<that adapter's IP>.",
			Refs: []string{"https://github.com/flannel-io/flannel/issues/1109", refWinTroubleshoot},
		},
		{
			// flannel-io/flannel#905: the vxlan backend cannot create flannel.<VNI> on this kernel.
			ID: "FLANNEL-VXLAN-UNSUPPORTED", Component: "flannel", Severity: SevError,
			Title:   "flanneld cannot create the vxlan device (operation not supported)",
			Literal: "Error registering network: operation not supported",
			Pattern: `Error registering network: operation not supported`,
			Cause: "With the vxlan backend flanneld creates the flannel.<VNI> link, and the kernel refused it: no vxlan support (module missing " +
				"or not loadable, e.g. a container/OpenVZ/LXC host kernel) or the call is not permitted there.",
			Fix: "modprobe vxlan (and make it load at boot), or run on a kernel with CONFIG_VXLAN; otherwise switch the flannel backend " +
				"(Backend Type host-gw in net-conf.json) when nodes share an L2 segment.",
			Refs: []string{"https://github.com/flannel-io/flannel/issues/905"},
		},
		{
			// kubernetes-sigs/sig-windows-tools#83: flannel host-gw through wins adds routes to other nodes' subnets.
			ID: "FLANNEL-HOSTGW-ROUTE-EXISTS", Component: "flannel", Severity: SevError,
			Title:   "flannel host-gw on Windows cannot add a route: it already exists",
			Literal: "could not create IP forward entry",
			Pattern: `could not create IP forward entry: (?P<message>The object already exists)`,
			Cause: "flannel's host-gw backend on Windows (run through wins) adds a route to each other node's pod subnet and Windows " +
				"refused one ({message}): a route for that subnet is left from an earlier flanneld run (persistent route, node re-registered " +
				"with the same subnet) or was added by hand.",
			Fix: "List the routes to the pod CIDR (Get-NetRoute | ? DestinationPrefix -like '10.244.*'), remove the stale ones " +
				"(Remove-NetRoute -DestinationPrefix <subnet>), then restart the flannel pod/service.",
			Refs: []string{"https://github.com/kubernetes-sigs/sig-windows-tools/issues/83"},
		},
		{
			// flannel-io/flannel#708: etcd subnet manager, no etcd endpoint reachable.
			ID: "FLANNEL-ETCD-UNREACHABLE", Component: "flannel", Severity: SevError,
			Title:   "flanneld cannot reach etcd",
			Literal: "All the given peers are not reachable",
			Pattern: `(?:Failed to create SubnetManager: )?(?:\d+: )?All the given peers are not reachable`,
			Cause: "flanneld uses the etcd subnet manager (--etcd-endpoints) and no etcd endpoint answered: wrong endpoint list or scheme " +
				"(http vs https), missing/wrong etcd client certificates, etcd down, or a firewall on 2379 — an etcd/connectivity problem, not flannel.",
			Fix: "Check the endpoints with etcdctl --endpoints=<same list> endpoint health using the same certificates flanneld gets " +
				"(--etcd-cafile/--etcd-certfile/--etcd-keyfile); fix etcd or the flags, or switch flanneld to --kube-subnet-mgr.",
			Refs: []string{"https://github.com/flannel-io/flannel/issues/708"},
		},
		{
			// flannel-io/flannel#676 (RBAC manifest not applied), voxpupuli/puppet-k8s#126 (ClusterRole lost 'get pods').
			ID: "FLANNEL-RBAC-PODS", Component: "flannel", Severity: SevError,
			Title:   "flannel's service account may not read its own pod",
			Literal: "error retrieving pod spec for",
			Pattern: `error retrieving pod spec for '(?P<pod>[^']+)': (?:the server does not allow access to the requested resource|pods \\?"[^"\\]*\\?" is forbidden(?:: User \\?"(?P<user>[^"\\]+)\\?")?)`,
			Cause: "With --kube-subnet-mgr flanneld reads its own pod ({pod}) at start-up and the API server forbids it[[ for {user}]]: the " +
				"flannel ClusterRole/ClusterRoleBinding is missing or lacks get on pods.",
			Fix: "Apply the RBAC objects of the flannel manifest matching your version (ClusterRole flannel with pods: get, nodes: get/list/watch, " +
				"nodes/status: patch, bound to the flannel service account), then restart the flannel pods.",
			Refs: []string{"https://github.com/flannel-io/flannel/issues/676", "https://github.com/voxpupuli/puppet-k8s/pull/126"},
		},
		{
			// easzlab/kubeasz#158: flanneld cannot reach the kubernetes service IP.
			ID: "FLANNEL-APISERVER-UNREACHABLE", Component: "flannel", Severity: SevError,
			Title:   "flanneld cannot reach the API server",
			Literal: "error retrieving pod spec for",
			Pattern: `error retrieving pod spec for '(?P<pod>[^']+)': Get \S+ dial tcp (?P<addr>\S+): (?P<why>[^"\\]+)`,
			Cause: "flanneld could not reach the API server at {addr} ({why}) when reading its pod {pod}: the kubernetes service IP is not " +
				"reachable from the node yet (kube-proxy rules missing, flannel itself is what makes pod/service networking work), or the node " +
				"routes it out of the wrong NIC (two NICs, default route on the non-cluster one).",
			Fix: "Check kube-proxy runs on the node and that the service IP answers (curl -k https://<addr>/healthz); with several NICs fix the " +
				"default route or point flannel at the API server directly (KUBERNETES_SERVICE_HOST/PORT env in the DaemonSet).",
			Refs: []string{"https://github.com/easzlab/kubeasz/issues/158"},
		},
		{
			// flannel-io/flannel#1547: the service-account token flannel presents is rejected.
			ID: "FLANNEL-API-UNAUTHORIZED", Component: "flannel", Severity: SevError,
			Title:   "flannel's API credential is rejected (Unauthorized)",
			Literal: "error retrieving pod spec for",
			Pattern: `error retrieving pod spec for '(?P<pod>[^']+)': Unauthorized`,
			Cause: "The API server rejected flannel's credential when reading its pod {pod}: an expired, revoked or foreign service-account " +
				"token (a kubeconfig with a copied token, a token signed by a rotated service-account key).",
			Fix: "Restart the flannel pod so a fresh projected token is mounted; check the flannel service account exists, and that " +
				"kube-apiserver's --service-account-key-file matches the controller-manager's signing key.",
			Refs: []string{"https://github.com/flannel-io/flannel/issues/1547"},
		},
		{
			// kubernetes-sigs/sig-windows-tools#83: rancher/wins (used by the flannel/kube-proxy pods) panicked.
			ID: "WINS-PROCESS32-MISSING", Component: "flannel", Severity: SevError,
			Title:   "wins cannot find Process32FirstW in kernel32.dll",
			Literal: "Failed to find Process32FirstW procedure",
			Pattern: `Failed to find Process32FirstW procedure in kernel32\.dll(?:: (?P<message>[^"\\]+))?`,
			Cause: "The wins helper that the flannel host-gw / kube-proxy pods call to run processes on the host panicked resolving " +
				"Process32FirstW in kernel32.dll: the wins binary on the host and the one in the pod image (or the Windows build) do not match.",
			Fix: "Install the wins release that the sig-windows-tools manifests expect on the host (wins srv app run as a service, same " +
				"version as the pod's wins cli), restart the wins service, then restart the flannel pod.",
			Refs: []string{"https://github.com/kubernetes-sigs/sig-windows-tools/issues/83"},
		},
		{
			// flannel-io/flannel#1688: kube-controller-manager's --cluster-cidr has no node-sized block left.
			ID: "KCM-CIDR-EXHAUSTED", Component: "kube-controller-manager", Severity: SevError,
			Title:   "controller manager cannot allocate a pod CIDR for a node",
			Literal: "CIDR",
			Pattern: `there are no remaining CIDRs left to allocate in the accepted range|status is now: CIDRNotAvailable|reason="?CIDRNotAvailable`,
			Cause: "kube-controller-manager's --cluster-cidr has no free block of --node-cidr-mask-size left, so a new node gets no " +
				"spec.podCIDR and flannel (kube-subnet-mgr) on it cannot acquire a lease: more nodes than the cluster CIDR divides into, or " +
				"deleted nodes' blocks not yet released.",
			Fix: "Count nodes against 2^(node-cidr-mask-size - cluster-cidr prefix); delete stale Node objects, or enlarge --cluster-cidr " +
				"(with flannel's net-conf Network) / shrink --node-cidr-mask-size on a new cluster.",
			Refs: []string{"https://github.com/flannel-io/flannel/issues/1688"},
		},
		{
			// kubernetes-sigs/sig-windows-tools#94: the Docker nat network "host" the flannel hostNetwork pod uses is gone after a reboot.
			ID: "DOCKER-NAT-HOST-NETWORK-MISSING", Component: "flannel", Severity: SevError,
			Title:   "Docker network 'host' missing on the Windows node",
			Literal: "network host not found",
			Pattern: `Error response from daemon: network host not found`,
			Cause: "The Windows hostNetwork pods of the sig-windows-tools flannel/kube-proxy DaemonSets (Docker) run on a Docker nat network " +
				"named 'host', and it no longer exists (removed with the HNS networks, typically after a reboot), so every sandbox fails.",
			Fix:  "Recreate it: docker network create -d nat host (and make the node's start-up script do it after reboots), then let kubelet retry.",
			Refs: []string{"https://github.com/kubernetes-sigs/sig-windows-tools/issues/94"},
		},
		{
			// kubernetes-sigs/sig-windows-tools#40: the services the sig-windows-tools scripts install (not nssm) wrap the binary.
			ID: "SVC-WRAPPER-PROGRAM-EXITED", Component: "service", Severity: SevError,
			Title:   "service wrapper: the wrapped program exited",
			Literal: " exited unexpectedly",
			Pattern: `(?P<program>[A-Za-z]:\\[^"\r\n]*?\.exe) exited unexpectedly (?P<exit>-?\d+)`,
			Cause: "The service wrapper used by the sig-windows-tools install scripts reports that {program} exited with code {exit}; " +
				"the wrapper only restarts it — the reason is the program's own last errors just before this line.",
			Fix: "Read {program}'s log (its last error, e.g. flanneld's interface or network error) and fix that; the wrapper will keep " +
				"restarting it until then.",
			Refs: []string{"https://github.com/kubernetes-sigs/sig-windows-tools/issues/40"},
		},
	}
}
