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
			Literal: "platform",
			Pattern: `no match for platform in manifest(?:: not found)?|image operating system \\?"(?P<os>\w+)\\?" cannot be used on this platform`,
			Cause:   "containerd found no manifest for this node's OS/architecture and OS build in the image[[ (the image is built for {os})]]: a Linux-only image scheduled on a Windows node (often a DaemonSet or sidecar without a nodeSelector), or no entry for this Windows build.",
			Fix:     "Use a Windows image for this build; schedule Linux images on Linux nodes (nodeSelector kubernetes.io/os).",
			Refs:    []string{refWinVersionCompat},
		},
		{
			ID: "CONTAINERD-SANDBOX-IMAGE", Component: "containerd", Severity: SevError,
			Title:   "pause (sandbox) image unavailable",
			Literal: " image",
			Pattern: `failed to get sandbox image \\?"(?P<image>[^"\\]+)\\?"|No such image: (?P<image>[^\s"\\]*pause[^\s"\\]*)`,
			Cause:   "The runtime does not have the sandbox (pause) image {image} and cannot pull it, so no pod can start (registry unreachable, proxy, pull timeout, or no Windows variant; a setup script whose pull timed out then finds 'No such image' when it tags or inspects it).",
			Fix:     "Set sandbox_image in containerd's config.toml to a reachable Windows-capable pause image (mcr.microsoft.com/oss/kubernetes/pause:3.9), pre-pull it (crictl pull), restart containerd.",
			Refs:    []string{"https://github.com/containerd/containerd/blob/main/docs/cri/config.md"},
		},
		{
			ID: "CONTAINERD-CNI-CONFIG-MISSING", Component: "containerd", Severity: SevError,
			Title:   "containerd found no CNI network config",
			Literal: " network ",
			Pattern: `no network config found in (?P<dir>(?:[A-Za-z]:|/)[^":]*)|failed to get network status for sandbox \\?"(?P<sandbox>[0-9a-f]+)\\?": Unexpected command output Device \\?"eth0\\?" does not exist`,
			Cause:   "containerd has no loaded CNI network configuration[[ in its conf_dir {dir}]]: the directory is empty, or the config was written after containerd's CRI plugin started and has not been loaded yet, so the runtime network is not ready and sandboxes get no interface.",
			Fix:     "Write the CNI conf (win-bridge/win-overlay/flannel) into containerd's conf_dir[[ ({dir})]] or point conf_dir in config.toml at the right directory; restart containerd so it loads it, then recreate the pods created meanwhile.",
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
			// containerd/nerdctl#2752, #1068, microsoft/hcsshim#2380, moby/moby#43685, docker/for-win#933. After
			// CONTAINERD-IMPORT-LAYER, which claims the "register layer ... ImportLayer failed" form.
			ID: "CONTAINERD-LAYER-EXTRACT-FAILED", Component: "containerd", Severity: SevError,
			Title:   "Windows image layer could not be extracted/registered",
			Literal: " layer",
			Pattern: `failed to (?:extract|register) layer(?: (?P<digest>sha256:\S+?))?: (?P<detail>(?:[^"\\]|\\.)*?(?:ProcessBaseLayer|failed in Win32|re-exec error)(?:[^"\\]|\\.)*)`,
			Cause: "The Windows snapshotter (containerd) or windowsfilter graph driver (docker) could not unpack an image layer: {detail}. Met in " +
				"the field: the snapshot directory it expects is missing or not accessible (damaged runtime root, 'Access is denied' on some " +
				"Windows 11 hosts, antivirus/filter drivers), a Linux image's layer pulled onto Windows (e.g. --all-platforms) whose files " +
				"cannot be created on NTFS, the layer helper process crashing at start (exit status 3221225794 = 0xC0000142, DLL " +
				"initialisation failed), or a base layer this host cannot process.",
			Fix: "Pull only images for this OS and Windows build (no --all-platforms; check the image's os.version); exclude the runtime root " +
				"(C:\\ProgramData\\containerd, C:\\ProgramData\\docker) from antivirus and run the runtime as LocalSystem; remove the image and " +
				"its half-extracted snapshots (ctr -n k8s.io images rm, ctr snapshots ls/rm) and pull again; restart containerd/docker, reboot " +
				"if the helper process cannot start.",
			Refs: []string{"https://github.com/containerd/nerdctl/issues/1068", "https://github.com/microsoft/hcsshim/issues/2380", "https://github.com/moby/moby/issues/43685"},
		},
		{
			// microsoft/hcsshim#919 (0x15 under load), docker/for-win#6421 (0x1).
			ID: "CONTAINERD-PREPARE-LAYER", Component: "containerd", Severity: SevError,
			Title:   "container storage could not be mounted (hcsshim::PrepareLayer)",
			Literal: "PrepareLayer",
			Pattern: `PrepareLayer(?: - failed)? failed in Win32: ?(?P<message>[^(]*?) ?\((?P<code>0x[0-9a-fA-F]+)\)`,
			Cause: "Mounting the container's layers (its scratch layer over the image layers, via the Windows container filter drivers) failed: " +
				"{message} ({code}). Met in the field: 'The device is not ready' (0x15) when the host is under heavy disk/container churn, and " +
				"'Incorrect function' (0x1) when the filesystem filter stack refuses the mount (third-party filter drivers such as antivirus, " +
				"or a runtime root on a volume that does not support the container filters).",
			Fix: "Retry (the pod restarts); if it persists check `fltmc filters` for third-party filters and exclude the runtime root from them, keep " +
				"the runtime root on a local NTFS volume, reduce parallel container starts, restart the container runtime (and vmcompute) or the host.",
			Refs: []string{"https://github.com/microsoft/hcsshim/issues/919", "https://github.com/docker/for-win/issues/6421"},
		},
		{
			// containerd/containerd#6300, microsoft/hcsshim#674.
			ID: "CONTAINERD-PROCESS-NOT-FOUND", Component: "containerd", Severity: SevError,
			Title:   "the container's command was not found in the Windows container",
			Literal: "CreateProcess",
			Pattern: `CreateProcess (?P<id>[0-9a-f]{12,}): (?:The system cannot find the file specified|系统找不到指定的文件)`,
			Cause: "HCS started container {id} but could not start its process: the command/entrypoint names an executable that does not exist " +
				"in the image (a shell builtin such as echo or a Linux path such as /bin/sh in a Windows container, a typo, or an image whose " +
				"entrypoint was built for another OS).",
			Fix: "Use an executable that exists in the image: cmd /c <builtin ...>, powershell -Command ... (not in nanoserver), or the full " +
				"path with .exe; check the image's Entrypoint/Cmd (crictl inspecti / docker inspect) and the pod's command/args.",
			Refs: []string{"https://github.com/microsoft/hcsshim/issues/674", "https://github.com/containerd/containerd/issues/6300"},
		},
		{
			// microsoft/navcontainerhelper#3923, microsoft/hcsshim#598.
			ID: "CONTAINERD-HCS-START-EXITED", Component: "containerd", Severity: SevError,
			Title:   "the container (or its utility VM) exited while HCS started it (0xc0370106)",
			Literal: "exited unexpectedly",
			Pattern: `encountered an error during (?:hcs::System::)?Start: failure in a Windows system call: (?P<message>The (?:virtual machine or container|compute system) exited unexpectedly)\.? ?\((?P<code>0xc0370106)\)`,
			Cause: "HCS created the container but it exited during start ({message}, {code}): the compute system or its Hyper-V utility VM " +
				"stopped at once. Reported on single hosts while others worked: a host-side HCS/vmcompute or Hyper-V problem (pending update, " +
				"memory pressure for Hyper-V isolation, damaged container base layer) rather than the workload.",
			Fix: "Read Event Viewer > Applications and Services > Microsoft > Windows > Hyper-V-Compute (Admin/Operational) for the reason; " +
				"try process isolation with an image matching the host build, free memory, restart vmcompute (Restart-Service vmcompute) and " +
				"the runtime, install pending updates and reboot; re-pull the base image if only one image fails.",
			Refs: []string{"https://github.com/microsoft/hcsshim/issues/598", "https://github.com/microsoft/navcontainerhelper/issues/3923"},
		},
		{
			// docker/for-win#1666 (0x80010002 Call was canceled by the message filter).
			ID: "CONTAINERD-HCS-START-FAILED", Component: "containerd", Severity: SevError,
			Title:   "HCS could not start the container",
			Literal: "encountered an error during",
			Pattern: `encountered an error during (?:hcs::System::)?Start: failure in a Windows system call: (?P<message>[^(]*?)\.? ?\((?P<code>0x[0-9a-fA-F]+)\)`,
			Cause: "The Host Compute Service refused to start the container: {message} ({code}). When every container on the host fails this " +
				"way (e.g. 0x80010002 'Call was canceled by the message filter'), the vmcompute service itself is stuck, not the image.",
			Fix: "Restart-Service vmcompute, then the container runtime (containerd/docker); if it persists reboot the host and check the " +
				"Hyper-V-Compute event log; for a single image, check its build against the host (kubewin plan).",
			Refs: []string{"https://github.com/docker/for-win/issues/1666"},
		},
		{
			// microsoft/containerregistry#78.
			ID: "IMAGE-MANIFEST-NOT-FOUND", Component: "containerd", Severity: SevError,
			Title:   "image tag or repository not found in the registry (manifest unknown)",
			Literal: "manifest unknown",
			Pattern: `(?:manifest for (?P<image>\S+) not found: )?manifest unknown`,
			Cause:   "The registry has no manifest for the requested reference[[ {image}]]: the tag was never published, was removed, or the repository path is wrong (e.g. an old mcr.microsoft.com/k8s/core path).",
			Fix:     "List the repository's tags (for MCR: https://mcr.microsoft.com/v2/<repo>/tags/list) and use an existing tag/path, e.g. mcr.microsoft.com/oss/kubernetes/pause:3.9 for the sandbox image.",
			Refs:    []string{"https://github.com/microsoft/containerregistry/issues/78"},
		},
		{
			// ciiiii/cloudflare-docker-proxy#98: a registry mirror answered 400 to a blob fetch.
			ID: "CONTAINERD-PULL-FAILED", Component: "containerd", Severity: SevError,
			Title:   "registry answered an unexpected HTTP status during a pull",
			Literal: "unexpected status",
			Pattern: `(?:failed to pull and unpack image \\?"(?P<image>[^"\\]+)\\?": .*?)?unexpected status(?: code)?:? (?:(?P<url>https?://\S+?): )?(?P<status>\d{3}(?: [A-Z][A-Za-z]*)*)`,
			Cause: "Pulling[[ {image}]] failed because the registry (or a mirror/proxy in front of it) answered HTTP {status}[[ for {url}]]: 400 " +
				"from a misbehaving mirror or proxy, 401/403 missing or wrong credentials, 404 wrong name/tag, 429 rate limit.",
			Fix: "Pull by hand on the node (crictl pull <image>) to see it again; for a mirror, test it directly or remove it from containerd's " +
				"registry config (config.toml / hosts.toml) and pull from the origin; fix credentials (imagePullSecrets) for 401/403.",
			Refs: []string{"https://github.com/containerd/containerd/blob/main/docs/hosts.md"},
		},
		{
			// kata-containers/tests#1851, containerd/cri#34. Windows pipe errors are KUBELET-CONTAINERD-PIPE.
			ID: "CRI-RUNTIME-UNAVAILABLE", Component: "containerd", Severity: SevError,
			Title:   "CRI connection to the container runtime is down",
			Literal: "transport",
			Pattern: `code = Unavailable desc = transport is closing|(?:code = Unavailable desc = connection error: desc = |addrConn\.resetTransport failed to create client transport: connection error: desc = )\\?"transport: (?:Error while dialing:? )?dial unix (?P<endpoint>[^:"\\]+)`,
			Cause: "kubelet (or crictl) lost or could not open its gRPC connection to the container runtime[[ at {endpoint}]]: the runtime is not " +
				"running, crashed or restarted during the call, or listens on another socket.",
			Fix: "systemctl status containerd (journalctl -u containerd for the crash), start/restart it, and check that --container-runtime-endpoint " +
				"names the socket it listens on (unix:///run/containerd/containerd.sock).",
			Refs: []string{"https://github.com/containerd/cri/issues/34", "https://github.com/kata-containers/tests/issues/1851"},
		},
		{
			// kubernetes/kubernetes#107561 (Windows).
			ID: "SANDBOX-NAME-RESERVED", Component: "containerd", Severity: SevWarning,
			Title:   "pod sandbox name still reserved by an earlier attempt",
			Literal: "failed to reserve sandbox name",
			Pattern: `failed to reserve sandbox name \\*"(?P<name>[^"\\]+)\\*": name \\*"[^"\\]+\\*" is reserved for\s*\\*"(?P<id>[0-9a-f]+)`,
			Cause: "An earlier RunPodSandbox for the same pod is still running in containerd, or was abandoned when kubelet's call timed out, " +
				"so sandbox {id} still holds the name {name} and every retry fails. It follows a slow sandbox start (pause image pull, CNI ADD, " +
				"HCS on Windows), which is the real problem.",
			Fix: "Find what sandbox {id} waits for (crictl inspectp {id}, containerd and CNI logs); once it finishes or is removed " +
				"(crictl stopp {id}; crictl rmp {id}) the pod proceeds; raise runtimeRequestTimeout if sandbox starts are merely slow.",
			Refs: []string{"https://github.com/kubernetes/kubernetes/issues/107561"},
		},
		{
			// containerd/containerd#5864.
			ID: "RUNC-SELINUX-KEYCREATE", Component: "containerd", Severity: SevError,
			Title:   "runc cannot set the SELinux keyring label (/proc/self/attr/keycreate)",
			Literal: "/proc/self/attr/keycreate",
			Pattern: `write /proc/self/attr/keycreate: (?P<error>[a-z ]+)`,
			Cause: "runc labels the container's session keyring with the process's SELinux label; the host kernel/policy rejected it ({error}): " +
				"SELinux policy without the container types (container-selinux missing or outdated), a label the policy does not know, or an " +
				"SELinux state that does not match what the runtime was told (selinux enabled in the runtime on a host where it is off or broken).",
			Fix: "Check getenforce and the audit log (ausearch -m avc), install/update container-selinux, or disable SELinux labelling in the " +
				"runtime (containerd CRI enable_selinux = false / docker --selinux-enabled=false) if the host does not use it; restart the runtime.",
			Refs: []string{"https://github.com/containerd/containerd/issues/5864"},
		},
		{
			// moby/moby#42953.
			ID: "RUNC-INIT-PIPE-RESET", Component: "containerd", Severity: SevError,
			Title:   "runc init died during preliminary setup (read init-p: connection reset)",
			Literal: "read init-p: connection reset by peer",
			Pattern: `read init-p: connection reset by peer`,
			Cause: "runc's init process exited before finishing its setup handshake with runc, so the container was never created. Known " +
				"reasons: init killed for memory (a container memory limit of a few MB, or the host out of memory), a pids limit, or a " +
				"kernel/seccomp refusal of something init does; runc's own error is lost with the pipe.",
			Fix: "Check dmesg/journal for OOM kills at that time, raise the container's memory limit (runc needs some MB of its own), check pids " +
				"limits, and update runc/containerd; rerun with runc --debug to see init's error.",
			Refs: []string{"https://github.com/moby/moby/issues/42953"},
		},
		{
			// opencontainers/runc#3312.
			ID: "RUNC-SYSTEMD-SCOPE", Component: "containerd", Severity: SevError,
			Title:   "systemd refused to create the container's scope unit",
			Literal: "error creating systemd unit",
			Pattern: "error creating systemd unit \\\\?`(?P<unit>[^`\\\\]+)\\\\?`: got \\\\?`(?P<result>\\w+)",
			Cause: "With the systemd cgroup driver runc asks systemd for a transient unit {unit}; systemd answered '{result}'. The refusal " +
				"comes from systemd, not runc: typically a unit of the same name left failed or active by an earlier container, or systemd/dbus " +
				"in a bad state.",
			Fix: "systemctl status {unit} and journalctl -u {unit} for systemd's reason; systemctl reset-failed {unit} (or stop the stale scope), " +
				"systemctl daemon-reexec if systemd itself misbehaves; update runc (newer versions reset failed units themselves).",
			Refs: []string{"https://github.com/opencontainers/runc/issues/3312"},
		},
		{
			// AliyunContainerService/pouch#787 (containerd v1 shim wording, typo included).
			ID: "RUNC-DID-NOT-TERMINATE", Component: "containerd", Severity: SevError,
			Title:   "runc failed without leaving an error (runc did not terminate successfully)",
			Literal: "runc did not terminate",
			Pattern: `runc did not terminate suc+es+ful+y`,
			Cause: "The shim ran runc, which failed before writing its log.json: the runc binary itself is broken or incompatible (wrong " +
				"architecture, built against missing libraries such as libseccomp, or a version the containerd/shim does not support).",
			Fix: "Run runc --version on the node; reinstall the runc that matches the containerd release (or rebuild it for this host), then restart " +
				"the runtime.",
			Refs: []string{"https://github.com/AliyunContainerService/pouch/issues/787"},
		},
		{
			// hcsshim internal/hcs/system.go CreateComputeSystem wraps vmcompute's HRESULT as
			// "hcs::CreateComputeSystem <id>: <message>"; E_ACCESSDENIED (0x80070005) is "Access is
			// denied." The Host Compute Service (vmcompute, running as SYSTEM, granting the container
			// the virtual machine / container SIDs) opens the container's layer folders, its scratch
			// and every mounted host path; a denial is about those files, not the network or the image.
			ID: "HCS-CREATE-ACCESS-DENIED", Component: "containerd", Severity: SevError,
			Title:   "HCS was denied access while creating a container",
			Literal: "CreateComputeSystem",
			Pattern: `CreateComputeSystem (?P<id>[\w-]+) ?: ` + reAccessDenied,
			Cause: "The Host Compute Service refused to create container {id} with E_ACCESSDENIED: a file or folder it must open for the " +
				"container is not accessible — a host path mounted into the container (or its parent) whose ACL does not grant the " +
				"container's account, layer or scratch folders under the runtime root whose ACLs were changed (copied or restored data " +
				"root), an antivirus/EDR filter blocking vmcompute, or a HostProcess/privileged container the runtime does not allow for this account.",
			Fix: "Check the mounts of the pod/container (icacls <host path>: grant the account the container runs as, or Users read), " +
				"exclude the runtime root (C:\\ProgramData\\containerd, C:\\ProgramData\\docker) from antivirus scanning, and read the " +
				"Microsoft-Windows-Hyper-V-Compute-Admin event log for the file vmcompute was denied.",
			Refs: []string{"microsoft/hcsshim internal/hcs/system.go (CreateComputeSystem)", "https://learn.microsoft.com/virtualization/windowscontainers/troubleshooting"},
		},
		{
			// Go net/http transport.go: a TLS client that gets an HTTP/1.x answer to its ClientHello
			// returns errors.New("http: server gave HTTP response to HTTPS client"). Docker, containerd
			// and every Go registry client print it when a registry serves plain HTTP and is not
			// configured as an insecure/HTTP registry.
			ID: "REGISTRY-PLAIN-HTTP", Component: "containerd", Severity: SevError,
			Title:   "the image registry speaks plain HTTP, the client uses HTTPS",
			Literal: "server gave HTTP response to HTTPS client",
			Pattern: `(?:failed to pull (?:and unpack )?image \\?"?(?P<image>[^\s"\\]+?)\\?"?:? .*?)?(?:https://(?P<registry>[^/"\s]+)/.*?)?http: server gave HTTP response to HTTPS client`,
			Cause: "The registry[[ {registry}]] answered a TLS connection with plain HTTP: it serves HTTP only, and the client (docker, " +
				"containerd, crictl, kubeadm's preflight image pull) connects with HTTPS unless the registry is configured as an " +
				"insecure/HTTP registry on this node[[; image {image} cannot be pulled]].",
			Fix: "Either give the registry TLS (a certificate the node trusts), or declare it plain HTTP on every node: Docker — " +
				"\"insecure-registries\": [\"<host:port>\"] in daemon.json and restart docker; containerd — config_path = \"/etc/containerd/certs.d\" " +
				"and certs.d/<host:port>/hosts.toml with server = \"http://<host:port>\" and [host.\"http://<host:port>\"]; then pull again.",
			Refs: []string{"golang/go src/net/http/transport.go", "https://docs.docker.com/reference/cli/dockerd/#insecure-registries", "containerd docs/hosts.md"},
		},
		{
			ID: "CONTAINERD-HCS-CREATE-FAILED", Component: "containerd", Severity: SevError, Fallback: true,
			Title:   "HCS could not create the container",
			Literal: "CreateComputeSystem",
			Pattern: `CreateComputeSystem (?P<id>[\w-]+) ?: (?P<message>[^:"\\]+)`,
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
		{
			// "cni plugin not initialized" is containerd's own wording of the NetworkPluginNotReady
			// condition, also quoted without it (kubernetes-sigs/sig-windows-dev-tools#91).
			ID: "CONTAINERD-CNI-NOT-INITIALIZED", Component: "containerd", Severity: SevError,
			Title:    "containerd: cni plugin not initialized",
			Literal:  "cni plugin not initialized",
			Pattern:  `cni plugin not initialized`,
			Cause:    "The container runtime found no usable CNI configuration (none in its conf_dir, or the plugin binary missing), so the node stays NotReady and no pod gets a network.",
			Fix:      "Check containerd's CNI conf_dir/bin_dir (Windows: C:\\etc\\cni\\net.d and C:\\opt\\cni\\bin by default), that the conf file is valid JSON and names an existing plugin, and that the HNS network it references exists; restart containerd.",
			FixLinux: "Check containerd's CNI conf_dir/bin_dir (/etc/cni/net.d and /opt/cni/bin by default): a conf file must exist and be valid JSON naming installed plugins — usually the CNI's DaemonSet (flannel, Calico) has not written it yet, so check that pod on this node; then systemctl restart containerd.",
			Refs:     []string{"https://github.com/containerd/containerd/blob/main/docs/cri/config.md", "https://github.com/kubernetes-sigs/sig-windows-dev-tools/issues/91"},
		},
	}
}
