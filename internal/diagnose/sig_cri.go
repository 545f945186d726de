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
