package diagnose

const refWinVersionCompat = "https://learn.microsoft.com/en-us/virtualization/windowscontainers/deploy-containers/version-compatibility"

// containerdSignatures: container runtime, images and sandboxes (containerd, and docker where
// the seeds show its wording).
func containerdSignatures() []Signature {
	return []Signature{
		{
			ID: "CONTAINERD-OS-MISMATCH", Component: "containerd", Severity: SevError,
			Title:   "container image OS build does not match the host",
			Literal: "does not match the host operating system",
			Pattern: `The container operating system does not match the host operating system`,
			Cause:   "Process isolation needs the image's Windows build to equal the host's (e.g. ltsc2019 = 17763, ltsc2022 = 20348); the image (often the pause image) was built for another build. Hyper-V isolation allows image build <= host build.",
			Fix:     "Use an image tag matching the host build (or a multi-arch manifest such as mcr.microsoft.com/oss/kubernetes/pause:3.9 as sandbox image), or run the pod with a Hyper-V runtime handler via a RuntimeClass.",
			Refs:    []string{refWinVersionCompat},
		},
		{
			ID: "CONTAINERD-NO-MATCHING-MANIFEST", Component: "containerd", Severity: SevError,
			Title:   "image has no variant for this Windows build",
			Literal: "no matching manifest for",
			Pattern: `no matching manifest for (?P<platform>windows/[\w.]+(?: [\d.]+)?) in the manifest list entries`,
			Cause:   "The image's manifest list has no entry for {platform}.",
			Fix:     "Pick a tag built for this Windows build (see the image's tags), or build/push one; check `crictl pull` on the node.",
			Refs:    []string{refWinVersionCompat},
		},
		{
			ID: "CONTAINERD-NO-PLATFORM-MATCH", Component: "containerd", Severity: SevError,
			Title:   "containerd found no image for this platform",
			Literal: "no match for platform in manifest",
			Pattern: `no match for platform in manifest(?:: not found)?`,
			Cause:   "containerd found no manifest for windows/amd64 and this OS build in the image (Linux-only image, or wrong Windows build).",
			Fix:     "Use a Windows image for this build; schedule Linux images on Linux nodes (nodeSelector kubernetes.io/os).",
			Refs:    []string{refWinVersionCompat},
		},
		{
			ID: "CONTAINERD-SANDBOX-IMAGE", Component: "containerd", Severity: SevError,
			Title:   "pause (sandbox) image unavailable",
			Literal: "failed to get sandbox image",
			Pattern: `failed to get sandbox image \\?"(?P<image>[^"\\]+)\\?"`,
			Cause:   "containerd cannot pull the sandbox image {image}, so no pod can start (registry unreachable, proxy, or no Windows variant).",
			Fix:     "Set sandbox_image in containerd's config.toml to a reachable Windows-capable pause image (mcr.microsoft.com/oss/kubernetes/pause:3.9), pre-pull it (crictl pull), restart containerd.",
			Refs:    []string{"https://github.com/containerd/containerd/blob/main/docs/cri/config.md"},
		},
		{
			ID: "CONTAINERD-CNI-CONFIG-MISSING", Component: "containerd", Severity: SevError,
			Title:   "containerd found no CNI network config",
			Literal: "no network config found in",
			Pattern: `no network config found in (?P<dir>(?:[A-Za-z]:|/)[^":]*)`,
			Cause:   "containerd's CNI conf_dir {dir} has no network configuration, so the runtime network is not ready.",
			Fix:     "Write the CNI conf (win-bridge/win-overlay/flannel) into {dir} or point conf_dir in config.toml at the right directory; restart containerd.",
			Refs:    []string{"https://github.com/containerd/containerd/blob/main/docs/cri/config.md"},
		},
		{
			ID: "CONTAINERD-HYPERV-MISSING", Component: "containerd", Severity: SevError,
			Title:   "Hyper-V isolation requested but Hyper-V is not installed",
			Literal: "a required feature is not installed",
			Pattern: `The virtual machine could not be started because a required feature is not installed`,
			Cause:   "The pod asked for Hyper-V isolation (runtime handler) but the Hyper-V role is not installed (or nested virtualization is off on the VM).",
			Fix:     "Install-WindowsFeature -Name Hyper-V -IncludeManagementTools -Restart (enable nested virtualization on VMs), or use process isolation with a matching image build.",
			Refs:    []string{"https://learn.microsoft.com/en-us/virtualization/windowscontainers/manage-containers/hyperv-container"},
		},
		{
			// containerd/containerd#5729, projectcalico/cni-plugin#1158: the compute system is created
			// but attaching it to the pod's HNS namespace fails; the thread ties it to a CNI set up with
			// wrong values (Calico config.ps1 service CIDR), i.e. a broken endpoint/namespace.
			ID: "CONTAINERD-HCS-ATTACH-NAMESPACE", Component: "containerd", Severity: SevError,
			Title:   "HCS cannot attach the container to the pod's network namespace",
			Literal: "operation for attach namespace failed",
			Pattern: `(?:CreateComputeSystem (?P<id>[\w-]+): )?The requested operation for attach namespace failed`,
			Cause: "The container was created but HCS could not join it to the network namespace the CNI prepared: the HNS endpoint in " +
				"that namespace is invalid or gone (CNI configured with a wrong service CIDR/DNS values, HNS restarted between the CNI ADD " +
				"and the container start, or the endpoint was deleted by kube-proxy/another CNI run). It is a networking failure, not an image one.",
			Fix: "Check the CNI's values (service CIDR, DNS, network name) against the cluster (kubewin check), look at Get-HnsEndpoint for " +
				"the pod's endpoint, restart the pod; if HNS restarted, restart the CNI agent and kube-proxy first.",
			Refs: []string{"https://github.com/containerd/containerd/issues/5729", "https://github.com/projectcalico/cni-plugin/issues/1158"},
		},
		{
			// docker/hub-feedback#1361, moby/moby#32838 (1709 images on an older host), docker/for-win#1577,
			// Azure/ACS#105: the layer is downloaded but HCS cannot import it into windowsfilter/snapshots.
			ID: "CONTAINERD-IMPORT-LAYER", Component: "containerd", Severity: SevError,
			Title:   "Windows image layer could not be imported (hcsshim::ImportLayer)",
			Literal: "ImportLayer failed in Win32",
			Pattern: `ImportLayer failed in Win32: ?(?P<message>[^(]*?) ?\((?P<code>0x[0-9a-fA-F]+)\)`,
			Cause: "HCS could not import a downloaded layer ({message}, {code}). Met in the field: an image built for a newer Windows release " +
				"than the host (pulling e.g. a 1709/ltsc2022 image onto an older build), a container storage volume that is too small, or " +
				"access denied by antivirus/filter drivers on the layer or temp folder.",
			Fix: "Pull the image tag that matches the host build (kubewin plan picks it; check the node's build against the image's " +
				"os.version), free or enlarge the container storage, exclude the containerd/docker root and temp from antivirus, and retry.",
			Refs: []string{refWinVersionCompat, "https://github.com/moby/moby/issues/32838"},
		},
		{
			ID: "CONTAINERD-HCS-CREATE-FAILED", Component: "containerd", Severity: SevError, Fallback: true,
			Title:   "HCS could not create the container",
			Literal: "CreateComputeSystem",
			Pattern: `CreateComputeSystem (?P<id>[\w-]+): (?P<message>[^:"\\]+)`,
			Cause:   "The Host Compute Service refused to create container {id}: {message}",
			Fix:     "Check the message: image/host build mismatch, missing Hyper-V, disk full, or a stale container with the same id (crictl ps -a; crictl rm).",
			Refs:    []string{refWinVersionCompat},
		},
		{
			ID: "CONTAINERD-WINCAT-MISSING", Component: "containerd", Severity: SevError,
			Title:   "port-forward fails: wincat missing from the pause image",
			Literal: "wincat not found",
			Pattern: `unable to do port forwarding: wincat not found`,
			Cause:   "kubectl port-forward on Windows runs wincat inside the pod's pause container; the pause image in use does not ship it (pre-1.15 or a home-made pause image).",
			Fix:     "Use mcr.microsoft.com/oss/kubernetes/pause:3.9 (or any pause image that contains wincat) as the sandbox image and recreate the pod.",
			Refs:    []string{refWinTroubleshoot},
		},
		{
			ID: "CONTAINERD-IMAGE-PULL-BACKOFF", Component: "containerd", Severity: SevWarning,
			Title:   "image pull backing off",
			Literal: "Back-off pulling image",
			Pattern: `Back-off pulling image \\?"(?P<image>[^"\\]+)`,
			Cause:   "Pulling {image} keeps failing (name/tag wrong, registry unreachable or auth, or no Windows variant).",
			Fix:     "crictl pull {image} on the node to see the real error; fix the tag/credentials/proxy.",
			Refs:    []string{"https://kubernetes.io/docs/concepts/containers/images/#imagepullbackoff"},
		},
		{
			// runc libcontainer/process_linux.go; seen wrapped by containerd/kubelet in
			// opencontainers/runc#4905, concourse/concourse#8792, moby/moby#40835.
			ID: "RUNC-FINAL-CHILD-PID", Component: "containerd", Severity: SevError,
			Title:   "runc could not start the container's init (final child's PID from pipe: EOF)",
			Literal: "final child's ",
			Pattern: `(?i)(?:can't get|getting the) final child's pid from pipe`,
			Cause: "runc's init process died before reporting its PID, so every sandbox/container on the node fails to start. Causes met in the " +
				"field: the init could not write /proc/self/oom_score_adj (no CAP_SYS_RESOURCE in a nested or restricted host), a kernel/seccomp " +
				"refusal early in init, pid or memory exhaustion (too many processes, a cgroup pids limit), or a runc too old for the kernel.",
			Fix: "Run the failing container with runc directly to see init's error (runc --debug run); check dmesg, the pids cgroup limit and free " +
				"memory; on nested/restricted hosts grant CAP_SYS_RESOURCE or avoid negative oomScoreAdj; update runc to the containerd release's version.",
			Refs: []string{"https://github.com/opencontainers/runc/blob/main/libcontainer/process_linux.go"},
		},
	}
}
