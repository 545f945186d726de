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
			ID: "FLANNEL-NO-INTERFACE", Component: "flannel", Severity: SevError,
			Title:   "flanneld found no usable interface",
			Literal: "Failed to find any valid interface to use",
			Pattern: `Failed to find any valid interface to use: (?P<reason>.+)`,
			Cause:   "flanneld could not pick the interface to use ({reason}); on Windows the default-route adapter is often not the cluster NIC.",
			Fix:     "Start flanneld with --iface=<the node's cluster IP> (nssm set flanneld AppParameters ... --iface=<IP>).",
			Refs:    []string{"https://github.com/flannel-io/flannel/blob/master/Documentation/configuration.md"},
		},
	}
}
