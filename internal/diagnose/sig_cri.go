package diagnose

// The CRI API a client asks for and the runtime does not serve. gRPC answers a call to a service
// the server did not register with "unknown service %v" (grpc-go server.go, code Unimplemented);
// crictl says "validate service connection: CRI v1 runtime API is not implemented for endpoint
// %q" (kubernetes-sigs/cri-tools), the kubelet "validate CRI v1 runtime API for endpoint %q"
// (k8s.io/cri-client pkg/remote_runtime.go). kubelet and crictl >= 1.26 speak only CRI v1
// (containerd >= 1.6 serves it); containerd 2.0 dropped v1alpha2.
const refCRIv1 = "https://kubernetes.io/blog/2022/12/09/kubernetes-v1-26-release/#cri-v1alpha2-removed"

const (
	criUnimplementedCause = "The container runtime answers on its socket but does not serve the CRI API[[ {api}]] the kubelet, " +
		"crictl or kubeadm asks for: containerd's CRI plugin is disabled — the containerd.io package (Docker's repository) " +
		"installs /etc/containerd/config.toml with disabled_plugins = [\"cri\"] — or the versions do not fit: kubelet and " +
		"crictl 1.26 and later speak only CRI v1 (containerd 1.6 or later needed), containerd 2.x no longer serves v1alpha2 " +
		"to an older kubelet or crictl. kubeadm's CRI preflight check fails and the kubelet cannot start pods."
	criUnimplementedFix = "Write a complete config (containerd config default > /etc/containerd/config.toml, or remove \"cri\" " +
		"from disabled_plugins), set SystemdCgroup = true if the kubelet uses the systemd cgroup driver, restart containerd " +
		"and check crictl info; keep containerd >= 1.6 for Kubernetes >= 1.26 and crictl at the kubelet's minor version."
)

func criSignatures() []Signature {
	return []Signature{
		{
			ID: "CRI-API-UNKNOWN-SERVICE", Component: "containerd", Severity: SevError,
			Title:   "the container runtime does not serve the CRI API asked for",
			Literal: "unknown service runtime.",
			Pattern: `unknown service (?P<api>runtime\.v1(?:alpha2)?\.(?:RuntimeService|ImageService))`,
			Cause:   criUnimplementedCause,
			Fix:     criUnimplementedFix,
			Refs:    []string{refCRIv1, refContainerdConf},
		},
		{
			// hcsshim errors.go ContainerError/ProcessError.Error(): "container <id> encountered an
			// error during <op>: failure in a Windows system call: <text> (0x<code>)" (op
			// hcsshim::System::CreateProcess, hcs::System::CreateProcess, …NoStdio, Signal, Wait).
			// After CONTAINERD-HCS-START-* (catalogue order), which know Start.
			ID: "HCS-CONTAINER-OPERATION-FAILED", Component: "hcs", Severity: SevError,
			Title:   "HCS refused an operation on a running container",
			Literal: "encountered an error during",
			Pattern: `(?:container|process) (?P<id>[0-9a-f]{12,64}) encountered an error during (?P<op>[\w:]+): failure in a Windows system call: (?P<message>[^(]*?)\.? ?\((?P<code>0x[0-9a-fA-F]+)`,
			Cause: "The Host Compute Service failed {op} for container {id}: {message} ({code}[[, {code_name}]]). For CreateProcess " +
				"(kubectl exec, exec probes, the container's command): 0x2 / 0x3 means the program or its path does not exist " +
				"in the Windows image (a Linux path or a tool the image lacks), 0x6be (RPC failed) or a container-not-running " +
				"code means the container was stopping or its compute system connection broke (vmcompute restarted, the " +
				"container crashed) when the exec came.",
			Fix: "Check the command in the pod spec or probe uses programs and Windows paths that exist in the image (kubectl exec " +
				"<pod> -- cmd /c where <program>); if every exec fails with RPC errors, restart the runtime and vmcompute " +
				"(Restart-Service vmcompute) and read the Microsoft-Windows-Hyper-V-Compute-Admin event log.",
			Refs: []string{"https://github.com/microsoft/hcsshim/blob/main/errors.go"},
		},
		{
			// moby daemon/graphdriver/windows/windows.go getLayerChain: "Failed to unmarshall
			// layerchain json - %s" (errdefs WINERRUNMARSHALLLAYERS).
			ID: "HCS-LAYERCHAIN-CORRUPT", Component: "hcs", Severity: SevError,
			Title:   "a Windows image layer's layerchain.json is corrupt",
			Literal: "unmarshall layerchain json",
			Pattern: `Failed to unmarshall layerchain json - (?P<reason>[^"\n]+)`,
			Cause: "The windowsfilter driver could not read a layer's layerchain.json ({reason}): the file is empty or filled " +
				"with zero bytes, typically after the host lost power or was reset while an image was being pulled or a " +
				"container created. Every container that uses the layer fails to start.",
			Fix: "Remove the broken image and pull it again (docker image rm -f <image> / crictl rmi); if removal fails, stop the " +
				"runtime and delete the layer's directory under C:\\ProgramData\\docker\\windowsfilter (the one whose " +
				"layerchain.json is not valid JSON), then start it and pull.",
			Refs: []string{"https://github.com/moby/moby/blob/master/daemon/graphdriver/windows/windows.go"},
		},
		{
			// libcni (containernetworking/cni libcni/api.go): "plugin %s failed (add): %w" and "…
			// (delete): %w", the plugin described as type="<type>" name="<network>". A fallback: the
			// CNI entries that know the reason come first.
			ID: "CNI-PLUGIN-OPERATION-FAILED", Component: "cni", Severity: SevError, Fallback: true,
			Title:   "a CNI plugin failed to set up or tear down a pod's network",
			Literal: "plugin type=",
			Pattern: `plugin type="(?P<plugin>[^"]+)"(?: name="(?P<network>[^"]*)")? failed \((?P<op>add|delete|del|check)\): (?P<reason>[^\n]+)`,
			Cause: "The CNI plugin {plugin}[[ (network {network})]] failed the {op} of a pod's network: {reason}. On add the pod " +
				"sandbox is not created and the pod stays ContainerCreating while the kubelet retries; on delete the pod's " +
				"address or interface may stay allocated.",
			Fix: "Read the plugin's own log for the same time (calico-node/flanneld/the CNI's DaemonSet pod, or the plugin's log " +
				"file on the node) and fix what it names; check the CNI config in /etc/cni/net.d (C:\\etc\\cni\\net.d on " +
				"Windows) belongs to the running CNI.",
			Refs: []string{"https://github.com/containernetworking/cni/blob/main/libcni/api.go"},
		},
		{
			ID: "CRI-API-NOT-IMPLEMENTED", Component: "containerd", Severity: SevError,
			Title:   "the container runtime does not serve the CRI API asked for",
			Literal: "API is not implemented for endpoint",
			Pattern: `(?P<api>CRI v1 (?:runtime|image)) API is not implemented for endpoint`,
			Cause:   criUnimplementedCause,
			Fix:     criUnimplementedFix,
			Refs:    []string{refCRIv1, refContainerdConf},
		},
	}
}
