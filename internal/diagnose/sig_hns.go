package diagnose

import (
	"fmt"
	"strings"
)

const refHCNErrors = "https://learn.microsoft.com/en-us/virtualization/api/hcn/reference/hcn-errors"

// hnsCode describes one HCN_E_* HRESULT (values as in winerror.h / golang.org/x/sys/windows).
type hnsCode struct {
	code, name, what, cause, fix string
	sev                          Severity
}

// hnsCodes are the HNS errors met when wiring Windows pod networking. They are fallbacks: a
// specific entry (e.g. KUBEPROXY-LB-PORT-EXISTS) wins when it matches the same line.
func hnsCodes() []hnsCode {
	return []hnsCode{
		{"0x803b0001", "NETWORK-NOT-FOUND", "HNS network not found", "The HNS network the CNI conf or kube-proxy names does not exist (not created yet, removed by a reboot or an HNS reset, or the name differs).", "Get-HnsNetwork | Select Name,Type,Id; recreate the network (the L2Bridge/overlay network must exist before win-bridge/win-overlay run) and make the CNI conf name match it.", SevError},
		{"0x803b0002", "ENDPOINT-NOT-FOUND", "HNS endpoint not found", "An HNS endpoint was deleted underneath the CNI/kube-proxy (HNS restart, or kube-proxy without hostname-override deleting 'remote' endpoints).", "Set kube-proxy hostnameOverride; recreate the pod; Get-HnsEndpoint to inspect.", SevError},
		{"0x803b0007", "PORT-NOT-FOUND", "HNS switch port not found", "The vSwitch port of an endpoint is gone: the vSwitch was recreated or the adapter bound to it reset.", "Recreate the pod; if it repeats, check for a flapping NIC or a vSwitch recreated by scripts (Get-VMSwitch, Get-HnsNetwork).", SevError},
		{"0x803b000d", "INVALID-POLICY", "HNS rejected a policy", "A policy in the CNI conf or kube-proxy request is invalid for this network type or Windows build (e.g. OutBoundNAT ExceptionList syntax, ROUTE/SDNRoute on a build without it, DSR without the feature).", "Validate the policies in the CNI conf (kubewin check), compare with the Windows build's supported policies, drop unsupported ones.", SevError},
		{"0x803b0010", "NETWORK-EXISTS", "HNS network already exists", "A network with the same name already exists (a previous run of the node script created it).", "Reuse the existing network, or remove it first (Get-HnsNetwork | ? Name -eq <name> | Remove-HnsNetwork) — this drops pod connectivity.", SevWarning},
		{"0x803b0012", "POLICY-EXISTS", "HNS policy already exists", "A stale load balancer/policy with the same parameters exists.", "hnsdiag list loadbalancers; remove stale ones; restart kube-proxy.", SevError},
		{"0x803b0013", "PORT-EXISTS", "HNS port already exists", "A stale object already holds the port/VIP (often a load balancer left by a previous kube-proxy).", "hnsdiag list loadbalancers; hnsdiag delete loadbalancers <id>; restart kube-proxy.", SevError},
		{"0x803b001b", "INVALID-JSON", "HNS rejected malformed JSON", "The settings sent to HNS are not valid JSON for this API version (plugin or kube-proxy newer/older than the Windows build supports).", "Use CNI plugins and kube-proxy versions supported on this Windows build; update Windows.", SevError},
		{"0x803b001c", "INVALID-JSON-REFERENCE", "HNS JSON references an unknown object", "A request referenced an HNS object (network, endpoint, policy id) that does not exist, usually a stale id cached by the CNI or kube-proxy after an HNS restart.", "Restart kube-proxy and recreate the affected pods so ids are re-read; check Get-HnsNetwork ids against the CNI conf.", SevError},
		{"0x803b001e", "INVALID-IP", "HNS rejected an IP address", "An IP (endpoint address, gateway, VIP) is not valid for the network's subnet.", "Check the pod CIDR, gateway (.1) and endpoint addresses against the HNS network subnets (Get-HnsNetwork).", SevError},
		{"0x803b0020", "MANAGER-STOPPED", "HNS manager stopped", "The Host Network Service stopped while the request ran.", "Get-Service hns; check the Host-Network-Service event log; restart hns, then kube-proxy and the CNI users.", SevError},
		{"0x803b002f", "ADDR-RESERVED", "address invalid or reserved", "The address is invalid or reserved (e.g. network/broadcast address of the subnet).", "Use a usable host address of the pod subnet.", SevError},
	}
}

// hnsSignatures: HNS/HCN error codes and host networking resource problems.
func hnsSignatures() []Signature {
	var sigs []Signature
	for _, c := range hnsCodes() {
		sigs = append(sigs, Signature{
			ID: "HNS-" + strings.ToUpper(strings.TrimPrefix(c.code, "0x")) + "-" + c.name, Component: "hns",
			Severity: c.sev, Fallback: true,
			Title:   fmt.Sprintf("%s (%s)", c.what, c.code),
			Literal: c.code,
			Pattern: `(?:(?P<op>\w+) failed in Win32: (?P<message>[^(]*?) ?)?\(` + c.code + `\)`,
			Cause:   c.cause + "[[ Operation: {op}.]]",
			Fix:     c.fix,
			Refs:    []string{refHCNErrors},
		})
	}
	return append(sigs,
		Signature{
			// HRESULT printed in decimal by PowerShell HNS helpers (HcnCreateNetwork -- HRESULT: 2151350282);
			// 2151350282 = 0x803b000a, HCN_E_INVALID_NETWORK. Bare ErrorCode=<decimal> lines are left to
			// WIN32-ERRORCODE-DECIMAL.
			ID: "HNS-803B000A-INVALID-NETWORK-CONFIG", Component: "hns", Severity: SevError,
			Title:   "HNS rejected the network configuration (0x803b000a)",
			Literal: "HRESULT: 2151350282",
			Pattern: `(?:(?P<op>\w+) -- )?HRESULT: 2151350282\b`,
			Cause: "HNS refused to create the network[[ ({op})]]: \"The provided network configuration is invalid or missing parameters\" " +
				"(0x803b000a, HCN_E_INVALID_NETWORK). The request's subnet, gateway, type or adapter does not form a valid network for HNS — e.g. an " +
				"address prefix that is not a network address, a gateway outside the prefix, or a second NAT network where the host allows one.",
			Fix: "Print the request the script sends (subnet, gateway, type) and compare with Get-HnsNetwork / Get-NetNat: give a network address " +
				"prefix (e.g. 172.22.0.0/16 with gateway 172.22.0.1), remove a conflicting NAT network, then retry.",
			Refs: []string{refHCNErrors, "https://github.com/microsoft/containers-toolkit/issues/24"},
		},
		Signature{
			ID: "HNS-ENDPOINT-ID-NOT-FOUND", Component: "hns", Severity: SevError,
			Title:   "sandbox teardown fails: its HNS endpoint no longer exists",
			Literal: "hcn endpoint with id",
			Pattern: `Failed to get hcn endpoint with id: (?P<id>[0-9a-fA-F-]+) due to err: Endpoint ID \\?"[^"\\]*\\?" not found`,
			Cause: "The HNS endpoint {id} recorded for the sandbox was removed out of band (hnsdiag delete endpoints, Remove-HnsEndpoint, an HNS " +
				"reset or reboot cleanup) and the CNI's DEL treats the missing endpoint as an error, so containerd cannot stop or remove the " +
				"sandbox — not even with crictl rmp --force; the pod stays Terminating.",
			Fix: "Upgrade containerd and the CNI plugins to releases that treat a missing endpoint as already deleted on DEL; avoid deleting HNS " +
				"endpoints of live sandboxes by hand.",
			Refs: []string{"https://github.com/containerd/containerd/issues/6135"},
		},
		Signature{
			ID: "HNS-HOT-ATTACH-NO-COMPUTE-SYSTEM", Component: "hns", Severity: SevWarning,
			Title:   "HNS endpoint hot-attach failed: the container no longer exists",
			Literal: "Failed to hot attach HNS Endpoint",
			Pattern: `Failed to hot attach HNS Endpoint \\?"(?P<endpoint>[^"\\]+)\\?" to container \\?"(?P<container>[0-9a-f]+)\\?", reason: \\?"A Compute System with the specified identifier does not exist`,
			Cause: "The CNI created the HNS endpoint {endpoint} but the container {container} (its compute system) was already gone when the endpoint " +
				"was hot-attached — the sandbox was stopped or removed while the CNI ADD ran; older ovn-kubernetes then leaked the endpoint.",
			Fix: "Look for endpoints without a container (Get-HnsEndpoint, hnsdiag list endpoints) and remove the leaked ones; find why the sandbox " +
				"died (runtime and kubelet logs); upgrade the CNI so a failed attach deletes its endpoint.",
			Refs: []string{"https://github.com/ovn-kubernetes/ovn-kubernetes/issues/390", "https://github.com/ovn-kubernetes/ovn-kubernetes/pull/391"},
		},
		Signature{
			ID: "HNS-HOT-ATTACH-INVALID-PARAM", Component: "hns", Severity: SevError,
			Title:   "HNS refused to hot-attach the pod endpoint (The parameter is incorrect)",
			Literal: "The parameter is incorrect",
			Pattern: `Failed to hot attach HNS Endpoint \\?"(?P<endpoint>[^"\\]+)\\?" to container \\?"(?P<container>[0-9a-f]+)\\?", reason: \\?"The parameter is incorrect|Failed to configure interface in pod: The parameter is incorrect`,
			Cause: "HNS rejected attaching the pod's endpoint[[ {endpoint}]] to its container[[ {container}]] with \"The parameter is incorrect\"; the CNI " +
				"deletes the endpoint and the pod gets no network. Reported on particular Windows Server 2019 (1809) images with Docker and " +
				"ovn-kubernetes, while an earlier image of the same release worked.",
			Fix:  "Compare the Windows build (winver, Get-HotFix) with a node where pods get networking; use a known-good image/update level, then recreate the pod.",
			Refs: []string{"https://github.com/ovn-kubernetes/ovn-kubernetes/issues/576", "https://github.com/ovn-kubernetes/ovn-kubernetes/issues/696"},
		},
		Signature{
			ID: "HNS-CREATE-NETWORK-INVALID-PARAMETER", Component: "hns", Severity: SevError,
			Title:   "hcnCreateNetwork: The parameter is incorrect (0x57)",
			Literal: "hcnCreateNetwork failed in Win32",
			Pattern: `hcnCreateNetwork failed in Win32: (?P<message>[^(]*?) ?\(0x57\)`,
			Cause:   "HNS rejected the network settings: usually the adapter name does not exist (NetworkAdapterName/InterfaceName), the subnet/gateway do not fit, or the NIC is already bound to another external vSwitch.",
			Fix:     "Get-NetAdapter to find the real adapter name; Get-VMSwitch / Get-HnsNetwork for an existing external switch on that NIC; fix the subnet (pod CIDR) and gateway (.1) in the network settings.",
			Refs:    []string{refHCNErrors},
		},
		Signature{
			ID: "HNS-INVALID-PARAMETER", Component: "hns", Severity: SevError, Fallback: true,
			Title:   "HNS call failed: The parameter is incorrect (0x57)",
			Literal: "The parameter is incorrect",
			Pattern: `(?P<op>hcn\w+|HNS\w*) failed (?:in Win32|with error) ?: ?The parameter is incorrect\.?(?: ?\(0x57\))?`,
			Cause:   "HNS rejected the parameters of {op} (malformed settings for this Windows build, or an object in the wrong state).",
			Fix:     "Compare the request (CNI conf / kube-proxy config) with what this Windows build supports; retry after restarting hns if objects are stale.",
			Refs:    []string{refHCNErrors},
		},
		Signature{
			ID: "HNS-V1-FAILED", Component: "hns", Severity: SevError, Fallback: true,
			Title:   "HNS (v1 API) call failed",
			Literal: "HNS failed with error",
			Pattern: `HNS failed with error ?: ?(?P<message>[^"\\]+)`,
			Cause:   "The legacy HNS v1 API failed: {message}. Plugins using the v1 API (old wincni, old flannel) are outdated.",
			Fix:     "Upgrade to HCN-based plugins (containernetworking/plugins win-bridge/win-overlay v1.x, current flannel).",
			Refs:    []string{refHCNErrors},
		},
		Signature{
			ID: "HNS-EPHEMERAL-PORTS-EXHAUSTED", Component: "hns", Severity: SevError,
			Title:   "ephemeral (dynamic) TCP ports exhausted",
			Literal: "lacked sufficient buffer space",
			Pattern: `because the system lacked sufficient buffer space or because a queue was full`,
			Cause:   "Windows ran out of dynamic ports or socket buffers (WSAENOBUFS): too many connections in TIME_WAIT or leaked sockets; every outbound connection on the node fails.",
			Fix:     "netsh int ipv4 show dynamicport tcp; Get-NetTCPConnection | Group-Object -Property State,OwningProcess | Sort Count; widen the range (netsh int ipv4 set dynamicport tcp start=10000 num=55535) and fix the leaking process.",
			Refs:    []string{"https://learn.microsoft.com/en-us/troubleshoot/windows-client/networking/tcp-ip-port-exhaustion-troubleshooting"},
		},
		Signature{
			ID: "HNS-DIAL-BIND-IN-USE", Component: "hns", Severity: SevError,
			Title:   "outbound dial could not bind a local port (port exhaustion)",
			Literal: "Only one usage of each socket address",
			Pattern: `dial (?:tcp|udp)\S* (?P<target>[\d.:\[\]a-fA-F]+): bind: Only one usage of each socket address`,
			Cause:   "Connecting to {target} failed because no local ephemeral port was free (WSAEADDRINUSE on an outbound bind): dynamic port exhaustion.",
			Fix:     "netsh int ipv4 show dynamicport tcp; find the process holding ports (Get-NetTCPConnection | Group OwningProcess | Sort Count -Desc); widen the dynamic range; check kube-proxy/DSR port reservations.",
			Refs:    []string{"https://learn.microsoft.com/en-us/troubleshoot/windows-client/networking/tcp-ip-port-exhaustion-troubleshooting"},
		},
		Signature{
			// hcsshim formats HCN failures as "<call> failed in Win32: <message> (0x<code>)"
			// (microsoft/hcsshim hcn/hcnerrors.go); 0x490 is ERROR_NOT_FOUND. After a reboot the
			// HNS network that the CNI conf names is re-created with a new id (or not at all),
			// and endpoint creation against the stale network fails this way (calico#8397,
			// sig-windows-tools#52, rke2#5335 report the network gone after reboot). Its example line is
			// written in hcsshim's format; no public thread with this exact line was found.
			ID: "HNS-ENDPOINT-ELEMENT-NOT-FOUND", Component: "hns", Severity: SevError,
			Title:   "HNS endpoint creation failed: Element not found (0x490)",
			Literal: "(0x490)",
			Pattern: `(?P<op>hcnCreateEndpoint|hcnCreateNetwork|hcnOpenNetwork|HNS\w*Endpoint\w*) failed in Win32: Element not found\. ?\(0x490\)`,
			Cause: "{op} failed with ERROR_NOT_FOUND: the HNS network (or the switch/adapter under it) the request referred to no longer exists — " +
				"typically after a reboot or an HNS restart that dropped the L2Bridge/overlay network, or a CNI/kube-proxy still holding the old network id.",
			Fix: "Get-HnsNetwork: re-create the network the CNI conf names (kubewin node run does this at boot), then restart kube-proxy and " +
				"recreate the pods whose sandboxes failed; if the cluster adapter changed, re-bind the network to it (select it by MAC).",
			Refs: []string{refHCNErrors, "https://github.com/microsoft/hcsshim/blob/main/hcn/hcnerrors.go"},
		},
	)
}
