package diagnose

// kubeProxySignatures: kube-proxy in winkernel (kernelspace) mode.
func kubeProxySignatures() []Signature {
	return []Signature{
		{
			// winkernel proxier: "Unable to find HNS Network specified by %s. Please check network name
			// and CNI deployment" (older releases: "Unable to find Hns Network speficied by %s. Please check
			// environment variable KUBE_NETWORK"); kubernetes/kubernetes#79515,
			// MicrosoftDocs/Virtualization-Documentation#759.
			ID: "KUBEPROXY-HNS-NETWORK-NOT-FOUND", Component: "kube-proxy", Severity: SevError,
			Title:   "kube-proxy cannot find the HNS network it was told to use",
			Literal: "Unable to find H",
			// The message alone, or cut after "Network" where a console wrapped it (its second half is
			// KUBEPROXY-HNS-NETWORK-NOT-FOUND-TAIL).
			Pattern: `Unable to find (?i:hns) Network(?: spe(?:cified|ficied) by (?P<network>[^\s.]+)|$)`,
			Cause: "kube-proxy found no HNS network[[ named {network}]] (the name it looks for comes from winkernel.networkName / --network-name / KUBE_NETWORK): the CNI has not " +
				"created it yet (flanneld/calico-node not running, first pod not started), it was removed by a reboot or HNS reset, " +
				"or the name differs from the one the CNI uses (cbr0, vxlan0, Calico, flannel.4096). kube-proxy programs no Service until it exists.",
			Fix: "Get-HnsNetwork | Select Name,Type: start the CNI side first (kubewin orders network before kube-proxy), then set " +
				"kube-proxy's network name to the listed name (a regular expression such as Calico.* where the CNI renames it) and restart kube-proxy.",
			Refs: []string{"https://github.com/kubernetes/kubernetes/blob/v1.37.1/pkg/proxy/winkernel/proxier.go"},
		},
		{
			// winkernel proxier: "Unable to find HNS Network specified by %s. Please check network name
			// and CNI deployment" (older releases: "Unable to find Hns Network speficied by %s. Please check
			// environment variable KUBE_NETWORK"); kubernetes/kubernetes#79515,
			// MicrosoftDocs/Virtualization-Documentation#759.
			ID: "KUBEPROXY-HNS-NETWORK-NOT-FOUND-TAIL", Component: "kube-proxy", Severity: SevError,
			Title:   "kube-proxy cannot find the HNS network it was told to use",
			Literal: "variable KUBE_NETWORK",
			// The second half of the older message where a console wrapped it after "Network".
			Pattern: `^\W*spe(?:cified|ficied) by (?P<network>[^\s.]+)\. Please check environment variable KUBE_NETWORK`,
			Cause: "kube-proxy found no HNS network[[ named {network}]] (the name it looks for comes from winkernel.networkName / --network-name / KUBE_NETWORK): the CNI has not " +
				"created it yet (flanneld/calico-node not running, first pod not started), it was removed by a reboot or HNS reset, " +
				"or the name differs from the one the CNI uses (cbr0, vxlan0, Calico, flannel.4096). kube-proxy programs no Service until it exists.",
			Fix: "Get-HnsNetwork | Select Name,Type: start the CNI side first (kubewin orders network before kube-proxy), then set " +
				"kube-proxy's network name to the listed name (a regular expression such as Calico.* where the CNI renames it) and restart kube-proxy.",
			Refs: []string{"https://github.com/kubernetes/kubernetes/blob/v1.37.1/pkg/proxy/winkernel/proxier.go"},
		},
		{
			// The same lookup's inner message from the hns helpers (hnsV2.go "Network Id %s not found",
			// proxier.go "Network %s not found"), printed just before the entry above.
			ID: "KUBEPROXY-HNS-NETWORK-LOOKUP", Component: "kube-proxy", Severity: SevError,
			Title:   "kube-proxy: HNS network lookup failed",
			Literal: "] Network ",
			Pattern: `(?:hnsV2|hns|proxier)\.go:\d+\] Network (?:Id )?(?P<network>\S*) +not found\s*$`,
			Cause: "kube-proxy looked up its HNS network ({network}) and HNS has none by that name or id: the CNI has not created it " +
				"yet, a reboot/HNS reset removed it, or the configured name differs from the CNI's network name.",
			Fix:  "Get-HnsNetwork | Select Name,Id; make kube-proxy's network name (winkernel.networkName / KUBE_NETWORK) match and start the CNI first.",
			Refs: []string{"https://github.com/kubernetes/kubernetes/blob/v1.37.1/pkg/proxy/winkernel/hns.go"},
		},
		{
			ID: "KUBEPROXY-KUBE-NETWORK-UNSET", Component: "kube-proxy", Severity: SevError,
			Title:   "kube-proxy does not know the HNS network name",
			Literal: "KUBE_NETWORK and network-flag not initialized",
			Pattern: `Environment variable KUBE_NETWORK and network-flag not initialized`,
			Cause:   "winkernel needs the name of the HNS network the pods use; neither --network-name / winkernel.networkName nor the KUBE_NETWORK environment variable is set, so the proxier is not created.",
			Fix:     "Set winkernel.networkName in the KubeProxyConfiguration (or --network-name, or nssm set kube-proxy AppEnvironmentExtra KUBE_NETWORK=<HNS network name, e.g. cbr0>) and restart kube-proxy.",
			Refs:    []string{"https://kubernetes.io/docs/reference/config-api/kube-proxy-config.v1alpha1/#kubeproxy-config-k8s-io-v1alpha1-KubeProxyWinkernelConfiguration"},
		},
		{
			ID: "KUBEPROXY-LB-PORT-EXISTS", Component: "kube-proxy", Severity: SevError,
			Title:   "HNS load balancer already exists (0x803b0013)",
			Literal: "hcnCreateLoadBalancer",
			Pattern: `hcnCreateLoadBalancer failed in Win32: The specified port already exists\.?(?: ?\(0x803b0013\))?`,
			Cause:   "A stale HNS load balancer (left by a previous kube-proxy or a crashed sync) already owns the VIP/port, so the Service policy cannot be created and the Service does not work on this node.",
			Fix:     "List and remove stale load balancers, then restart kube-proxy: hnsdiag list loadbalancers; hnsdiag delete loadbalancers <id> (or Get-HnsPolicyList | Remove-HnsPolicyList); Restart-Service kube-proxy.",
			Refs:    []string{"https://learn.microsoft.com/en-us/virtualization/windowscontainers/kubernetes/common-problems"},
		},
		{
			ID: "KUBEPROXY-POLICY-CREATE-FAILED", Component: "kube-proxy", Severity: SevError, Fallback: true,
			Title:   "kube-proxy could not create a Service policy",
			Literal: "policy creation failed",
			Pattern: `"(?P<kind>ClusterIP|Nodeport|ExternalIP|IngressIP|Healthcheck loadbalancer) policy creation failed"`,
			Cause:   "HNS rejected the {kind} load-balancer policy of a Service; the Service is broken on this node.",
			Fix:     "Read the err= value in the sample (HNS code), check the HNS network (Get-HnsNetwork) and stale policies (hnsdiag list loadbalancers), restart kube-proxy.",
			Refs:    []string{"https://learn.microsoft.com/en-us/virtualization/api/hcn/reference/hcn-errors"},
		},
		{
			ID: "KUBEPROXY-ENDPOINT-INFO-MISSING", Component: "kube-proxy", Severity: SevWarning,
			Title:   "no endpoint information for a Service",
			Literal: "Endpoint information not available for service",
			Pattern: `Endpoint information not available for service(?: (?P<service>[^\s,]+?)\.? Not applying|, not applying any policy)`,
			Cause:   "kube-proxy has no usable endpoints for {service}: the endpoints are not ready, or creating their HNS endpoints failed (see the HNS findings next to it).",
			Fix:     "kubectl get endpointslices for the Service; if endpoints exist, fix the HNS error reported just before this line.",
			Refs:    []string{"https://kubernetes.io/docs/tasks/debug/debug-application/debug-service/"},
		},
		{
			ID: "KUBEPROXY-SOURCE-VIP-UNSET", Component: "kube-proxy", Severity: SevError,
			Title:   "overlay kube-proxy without a source VIP",
			Literal: "source-vip flag not set",
			Pattern: `source-vip flag not set`,
			Cause:   "On an overlay (VXLAN) network winkernel needs a source VIP (an IP from the node's pod subnet reserved for kube-proxy); none is configured.",
			Fix:     "Reserve an IP in the node's pod CIDR (host-local IPAM or the flannel sourceVip.json trick) and set winkernel.sourceVip (or --source-vip) to it.",
			Refs:    []string{"https://kubernetes.io/docs/reference/config-api/kube-proxy-config.v1alpha1/"},
		},
		{
			// winkernel's "Unable to find HNS Network specified, please check network name and CNI
			// deployment" and the k3s/rke2 agent that waits for the CNI's network to read kube-proxy's
			// source VIP ("can't find HNS network, retrying<name>", k3s-io/k3s#6499).
			ID: "KUBEPROXY-HNS-NETWORK-MISSING", Component: "kube-proxy", Severity: SevError,
			Title:   "kube-proxy cannot find its HNS network",
			Literal: "find HNS ",
			Pattern: `Unable to find HNS Network specified, please check network name and CNI deployment"?(?:.*hnsNetworkName="(?P<network>[^"]*)")?|can't find HNS network, retrying ?(?P<network>[^"\s\\]+)`,
			Cause: "The HNS network {network} that kube-proxy's winkernel proxier needs (winkernel.networkName/KUBE_NETWORK, or the network a k3s/rke2 agent " +
				"waits for to read the source VIP it hands to kube-proxy) does not exist (yet): the CNI/flanneld has not created it, or the name differs " +
				"from the one the CNI really creates (e.g. an agent waiting for flannel's vxlan0 while Calico creates its own network).",
			Fix: "Get-HnsNetwork | Select Name,Type; create the network (kubewin's node script or flanneld) or fix the name in the kube-proxy/agent config " +
				"to the network the CNI creates, then restart kube-proxy.",
			Refs: []string{"https://kubernetes.io/docs/setup/production-environment/windows/intro-windows-in-kubernetes/", "https://github.com/k3s-io/k3s/issues/6499"},
		},
		{
			ID: "KUBEPROXY-HNS-NOT-FOUND-NAMED", Component: "kube-proxy", Severity: SevError,
			Title:   "kube-proxy could not find the named HNS network",
			Literal: "could not find HNS network",
			Pattern: `could not find HNS network (?P<network>[^\s"]+)`,
			Cause:   "The HNS network {network} does not exist on the node.",
			Fix:     "Get-HnsNetwork | Select Name; create {network} or set winkernel.networkName to an existing network.",
			Refs:    []string{"https://kubernetes.io/docs/reference/config-api/kube-proxy-config.v1alpha1/"},
		},
		{
			ID: "KUBEPROXY-NODE-IP-UNKNOWN", Component: "kube-proxy", Severity: SevWarning,
			Title:   "kube-proxy cannot find its Node (hostname-override?)",
			Literal: "node's IP, assuming",
			Pattern: `node's IP, assuming (?:loopback|127\.0\.0\.1)`,
			Cause:   kubeProxyNodeCause,
			Fix:     kubeProxyNodeFix,
			Refs:    []string{"https://learn.microsoft.com/en-us/virtualization/windowscontainers/kubernetes/common-problems"},
		},
		{
			// The same failure as kube-proxy before 1.20 words it (cmd/kube-proxy/app/server.go,
			// "Failed to retrieve node info", a warning; it then runs with 127.0.0.1 as node IP):
			// kubernetes/kubernetes#57518, kubernetes/kops#2915.
			ID: "KUBEPROXY-NODE-INFO-NOT-FOUND", Component: "kube-proxy", Severity: SevWarning,
			Title:   "kube-proxy finds no Node of its name (hostname-override?)",
			Literal: "Failed to retrieve node info",
			Pattern: `Failed to retrieve node info(?::|"? err=") ?nodes \\?"(?P<name>[^"\\]+)\\?" not found`,
			Cause:   kubeProxyNodeCause,
			Fix:     kubeProxyNodeFix,
			Refs:    []string{"https://github.com/kubernetes/kubernetes/issues/57518", "https://github.com/kubernetes/kops/issues/2915"},
		},
		{
			// kube-proxy before 1.10 (pkg/proxy/iptables/proxier.go) when it has no node IP:
			// Azure/acs-engine#2388.
			ID: "KUBEPROXY-INVALID-NODE-IP", Component: "kube-proxy", Severity: SevWarning,
			Title:   "kube-proxy runs with 127.0.0.1 as its node IP",
			Literal: "invalid nodeIP, initializing kube-proxy with 127.0.0.1",
			Pattern: `invalid nodeIP, initializing kube-proxy with 127\.0\.0\.1 as nodeIP`,
			Cause:   kubeProxyNodeCause,
			Fix:     kubeProxyNodeFix + " Or pass --bind-address with the node's IP.",
			Refs:    []string{"https://github.com/Azure/acs-engine/issues/2388"},
		},
		{
			// kube-proxy 1.15-1.16 exits when it cannot get a node IP for the host name:
			// kubernetes/kubernetes#82412 (the host name resolved to 127.0.0.1).
			ID: "KUBEPROXY-NODE-IP-FOR-HOSTNAME", Component: "kube-proxy", Severity: SevError,
			Title:   "kube-proxy cannot get its node IP from the host name",
			Literal: "unable to get node IP for hostname",
			Pattern: `unable to get node IP for hostname (?P<name>\S+)`,
			Cause: "kube-proxy found no usable node IP for the host name {name} (it resolves only to a loopback address, or no Node of that " +
				"name exists) and exits. " + kubeProxyNodeCause,
			Fix:  kubeProxyNodeFix + " Make the host name resolve to the node's cluster IP (not 127.0.0.1 in /etc/hosts or the hosts file).",
			Refs: []string{"https://github.com/kubernetes/kubernetes/issues/82412"},
		},
		{
			ID: "KUBEPROXY-HNS-NOT-RUNNING", Component: "kube-proxy", Severity: SevError,
			Title:   "the HNS service is not running",
			Literal: "HNS is not running",
			Pattern: `HNS is not running(?:\.|,) (?:Unable to read network|skipping delete loadbalancer)`,
			Cause:   "The Host Network Service is stopped or crashed; no HNS network, endpoint or load balancer can be read or changed.",
			Fix:     "Get-Service hns; Start-Service hns; check the Microsoft-Windows-Host-Network-Service-Admin event log for why it stopped.",
			Refs:    []string{"https://learn.microsoft.com/en-us/virtualization/windowscontainers/container-networking/troubleshooting"},
		},
	}
}

// kubeProxyLBFallback is tried after the HNS code table (sig_hns.go): a known code explains a
// failed load balancer better than this generic entry.
func kubeProxyLBFallback() []Signature {
	return []Signature{
		{
			ID: "KUBEPROXY-LB-CREATE-FAILED", Component: "kube-proxy", Severity: SevError, Fallback: true,
			Title:   "HNS load balancer creation failed",
			Literal: "hcnCreateLoadBalancer",
			Pattern: `hcnCreateLoadBalancer failed in Win32: (?P<message>[^(]*)\((?P<code>0x[0-9a-fA-F]+)\)`,
			Cause:   "HNS rejected a Service load balancer: {message}({code}[[, {code_name}]]).",
			Fix:     "Look the code up (kubewin diagnose lists HNS codes), inspect with hnsdiag list loadbalancers / Get-HnsNetwork, and restart kube-proxy after fixing the network.",
			Refs:    []string{"https://learn.microsoft.com/en-us/virtualization/api/hcn/reference/hcn-errors"},
		},
	}
}

// kubeProxyNodeCause and kubeProxyNodeFix are shared by the wordings of "kube-proxy finds no Node
// of its name" across releases.
const (
	kubeProxyNodeCause = "kube-proxy looked up its Node and found none, so it does not know the node's IP (it falls back to 127.0.0.1 or exits): " +
		"the name kube-proxy uses (the host name, or --hostname-override) differs from the name kubelet registered — short name vs FQDN, a cloud " +
		"instance name, or kubelet started with --hostname-override and kube-proxy without it. On Linux ClusterIP/NodePort rules then use the wrong " +
		"node IP; on Windows winkernel treats local pods as remote and deletes their HNS endpoints (pods lose their vNICs)."
	kubeProxyNodeFix = "kubectl get nodes and compare with hostname / hostname -f on the node; start kube-proxy with --hostname-override=<the Node name> " +
		"(hostnameOverride in the KubeProxyConfiguration), the same value kubelet uses."
)
