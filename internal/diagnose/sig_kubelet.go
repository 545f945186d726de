package diagnose

const refWinTroubleshoot = "https://kubernetes.io/docs/tasks/debug/debug-cluster/windows/"

// kubeletSignatures: kubelet start-up, configuration and runtime failures, plus the Windows
// start-up noise that looks like errors but is not (severity info).
func kubeletSignatures() []Signature {
	return []Signature{
		{
			// grpc-go's channel logs every failed dial at W ("[core] ... addrConn.createTransport failed to
			// connect"), also while containerd is still starting (rancher/rke2#5725: containerd was running a
			// second later). The runtime client's own error (KUBELET-CONTAINERD-PIPE) is what says it stayed down.
			ID: "GRPC-DIAL-RETRY", Component: "kubelet", Severity: SevInfo,
			Title:   "gRPC channel retrying a dial (transient while the runtime starts)",
			Literal: "addrConn.createTransport failed to connect to",
			Pattern: `\[core\].*addrConn\.createTransport failed to connect to \{Addr: \\?"(?P<addr>[^"\\]+)`,
			Cause: "gRPC retried connecting to {addr} (typically containerd's pipe or socket during start-up). On its own this is noise; " +
				"if the runtime never comes up the kubelet/agent logs its own error, which kubewin reports separately.",
			Fix:  "Nothing, unless a runtime-connection error follows (then see that finding).",
			Refs: []string{"https://github.com/rancher/rke2/issues/5725"},
		},
		{
			ID: "KUBELET-FLEXVOLUME-INIT-OUTPUT", Component: "kubelet", Severity: SevError,
			Title:   "FlexVolume driver printed non-JSON output for init",
			Literal: "Failed to unmarshal output for command: init",
			Pattern: `Failed to unmarshal output for command: init, output: "(?P<output>(?:[^"\\]|\\.)*)`,
			Cause: "The FlexVolume driver's `init` call must print JSON, but it printed text (decoded in the sample: " +
				"typically a PowerShell error such as 'RunFlexVolume' not recognised as a cmdlet). On Windows this happens " +
				"when the driver's .ps1 files (flexvolume.ps1) are empty or missing, e.g. because the DaemonSet that " +
				"installs the driver did not finish on this node.",
			Fix: "On the node, check C:\\usr\\libexec\\kubernetes\\kubelet-plugins\\volume\\exec\\<vendor~driver>\\: " +
				"every .ps1 must be non-empty (Get-ChildItem | Select Name,Length). Delete the driver's installer pod on " +
				"this node so the DaemonSet re-copies the files, then remount (delete the affected pod).",
			Refs: []string{"https://github.com/microsoft/K8s-Storage-Plugins/tree/master/flexvolume/windows"},
		},
		{
			ID: "KUBELET-FLEXVOLUME-PROBE", Component: "kubelet", Severity: SevError,
			Title:   "FlexVolume plugin directory skipped during probing",
			Literal: "reating Flexvolume plugin from directory",
			Pattern: `[Ee]rror creating Flexvolume plugin from directory (?P<driver>[^,\s]+), skipping\. Error: (?P<error>(?:[^"\\]|\\.)*)`,
			Cause:   "kubelet could not load the FlexVolume driver {driver}: its init call failed ({error}). Volumes of this driver cannot be mounted on the node.",
			Fix:     "Repair the driver files of {driver} under the kubelet volume plugin dir (non-empty scripts, JSON output from init), then restart kubelet or wait for the next probe.",
			Refs:    []string{"https://github.com/kubernetes/community/blob/master/contributors/devel/sig-storage/flexvolume.md"},
		},
		{
			ID: "KUBELET-IDENTITY-REGISTERED", Component: "kubelet", Severity: SevInfo, Identity: true,
			Title:   "kubelet registered its node (names the node of this log)",
			Literal: "Successfully registered node",
			Pattern: `(?:Successfully registered node |"Successfully registered node" node=")(?P<node>[A-Za-z0-9][A-Za-z0-9.-]*)(?:"|$)`,
		},
		{
			ID: "KUBELET-IDENTITY-ATTEMPT", Component: "kubelet", Severity: SevInfo, Identity: true,
			Title:   "kubelet registering its node (names the node of this log)",
			Literal: "Attempting to register node",
			Pattern: `(?:Attempting to register node |"Attempting to register node" node=")(?P<node>[A-Za-z0-9][A-Za-z0-9.-]*)(?:"|$)`,
		},
		{
			ID: "KUBELET-RESOLV-CONF", Component: "kubelet", Severity: SevError,
			Title:   "kubelet looks for /etc/resolv.conf on Windows",
			Literal: "open /etc/resolv.conf",
			Pattern: `open /etc/resolv\.conf: The system cannot find the (?:file|path) specified`,
			Cause:   "kubelet's resolvConf defaults to /etc/resolv.conf, which does not exist on Windows; every pod sandbox fails.",
			Fix:     "Set resolvConf: \"\" in the KubeletConfiguration (or --resolv-conf=\"\") on Windows nodes and restart kubelet.",
			Refs:    []string{refWinTroubleshoot},
		},
		{
			ID: "KUBELET-MISSING-CLUSTER-DNS", Component: "kubelet", Severity: SevWarning,
			Title:   "kubelet has no clusterDNS; pods fall back to the node's DNS",
			Literal: "does not have ClusterDNS IP configured",
			Pattern: `kubelet does not have ClusterDNS IP configured and cannot create Pod using "(?P<policy>\w+)" policy`,
			Cause:   "Neither kubelet's clusterDNS (--cluster-dns) nor the CNI config's dns.Nameservers is set, so pods with dnsPolicy {policy} get the node's resolvers and cannot resolve cluster names.",
			Fix:     "Set clusterDNS: [<kube-dns service IP>] and clusterDomain in the KubeletConfiguration and dns.Nameservers/Search in the CNI config (win-bridge/win-overlay), then recreate the pods.",
			Refs:    []string{"https://kubernetes.io/docs/tasks/administer-cluster/dns-debugging-resolution/"},
		},
		{
			ID: "KUBELET-RUN-AS-UID-WINDOWS", Component: "kubelet", Severity: SevInfo,
			Title:   "'kubelet needs to run as uid 0' on Windows (harmless)",
			Literal: "kubelet needs to run as uid",
			Pattern: "kubelet needs to run as uid `0`\\. It is being run as -1",
			Cause:   "Windows has no uids; the check reports -1 and kubelet carries on. This E line is noise, not the failure you are looking for.",
			Fix:     "Nothing to fix; look at the other findings.",
			Refs:    []string{refWinTroubleshoot},
		},
		{
			ID: "KUBELET-RUN-AS-NONROOT", Component: "kubelet", Severity: SevError,
			Title:   "kubelet runs as a non-root user on Linux",
			Literal: "kubelet needs to run as uid",
			Pattern: "kubelet needs to run as uid `0`\\. It is being run as (?P<uid>[1-9][0-9]*)",
			Cause:   "kubelet runs as uid {uid}; it needs root to manage cgroups, mounts and the container runtime.",
			Fix:     "Run kubelet as root (systemd unit without User=), or configure rootless mode explicitly (KubeletInUserNamespace feature gate).",
			Refs:    []string{"https://kubernetes.io/docs/tasks/administer-cluster/kubelet-in-userns/"},
		},
		{
			ID: "KUBELET-IMAGE-FS-HIGH-THRESHOLD", Component: "kubelet", Severity: SevWarning,
			Title:   "image filesystem over the image GC high threshold",
			Literal: "over the high threshold",
			Pattern: `Disk usage on image filesystem is (?:at (?P<usage>\d+)% which is )?over the high threshold`,
			Cause:   "The image filesystem is {usage}% full, above imageGCHighThresholdPercent; kubelet deletes unused images and evicts pods if it cannot free enough. Windows images are several GB each.",
			Fix:     "Free space on the containerd root disk (crictl rmi --prune), move the containerd root to a larger disk, or tune imageGCHighThresholdPercent/imageGCLowThresholdPercent.",
			Refs:    []string{"https://kubernetes.io/docs/concepts/architecture/garbage-collection/#container-image-garbage-collection"},
		},
		{
			// kubernetes/kubernetes#104341, #75707: image GC asks cAdvisor for the image filesystem's
			// stats; before the first housekeeping (or when cAdvisor cannot map the runtime's root to a
			// device) there are none. Not a disk-space problem, unlike KUBELET-IMAGE-GC-FAILED.
			ID: "KUBELET-IMAGEFS-STATS-UNAVAILABLE", Component: "kubelet", Severity: SevWarning,
			Title:   "image GC has no stats for the image filesystem",
			Literal: "failed to get imageFs info",
			Pattern: `failed to get imageFs info: (?P<reason>(?:[^"\\]|\\.)+)`,
			Cause: "kubelet's image garbage collection could not read the image filesystem's stats ({reason}): cAdvisor has no data for the " +
				"container runtime's image filesystem. Right after kubelet starts this is normal (stats not initialised yet); if it repeats, " +
				"cAdvisor cannot find the runtime's root (kubelet running in a container without the runtime's directory mounted, a runtime " +
				"root on a filesystem cAdvisor does not handle, or a runtime/kubelet version mismatch). It says nothing about free disk space.",
			Fix: "If it repeats after start-up: check `crictl imagefsinfo` and `crictl info` on the node, run kubelet on the host (not in a container) " +
				"or mount the runtime's root (/var/lib/containerd, /var/lib/docker) into it, and keep kubelet and the runtime at supported versions; " +
				"restart kubelet after the runtime is up.",
			Refs: []string{"https://github.com/kubernetes/kubernetes/issues/104341", "https://github.com/kubernetes/kubernetes/issues/75707"},
		},
		{
			// microsoft/SDN#397: dockershim on Windows asked fsInfo for the Linux default /var/lib/docker.
			ID: "KUBELET-DOCKER-IMAGEFS-PATH", Component: "kubelet", Severity: SevWarning,
			Title:   "dockershim looks for the image filesystem at /var/lib/docker on Windows",
			Literal: "cannot find the path specified",
			Pattern: `(?:Failed to get dir fsInfo for \\?"(?P<path>/var/lib/docker)\\?"|ImageFsInfo from image service failed: rpc error: code = Unknown desc =|Image garbage collection failed.*: rpc error: code = Unknown desc =):? ?The system cannot find the path specified`,
			Cause: "The dockershim-era Windows kubelet asks for filesystem info of the Linux default image path /var/lib/docker, which does not " +
				"exist on a Windows node (Docker's root there is C:\\ProgramData\\docker); ImageFsInfo and image garbage collection then fail " +
				"with 'path not found'. Not a disk-space problem: image GC just cannot measure the disk.",
			Fix: "Move the node to containerd (dockershim was removed in Kubernetes 1.24; kubewin sets up containerd), or on an old dockershim " +
				"node accept the noise; do not create C:\\var\\lib\\docker as a workaround, it reports the wrong disk.",
			Refs: []string{"https://github.com/microsoft/SDN/issues/397"},
		},
		{
			// kubernetes/kubernetes#11733: kubelet in a container, cAdvisor without the docker storage dir.
			ID: "KUBELET-CADVISOR-NO-DOCKER-LABEL", Component: "kubelet", Severity: SevWarning,
			Title:   "cAdvisor cannot find Docker's image storage (label docker-images)",
			Literal: "non-existent label",
			Pattern: `non-existent label \\?"(?P<label>docker-images)\\?"`,
			Cause: "cAdvisor labels the filesystem holding Docker's storage '{label}'; it found none because it cannot see Docker's root " +
				"(kubelet running inside a container without /var/lib/docker mounted, or a Docker root/storage driver cAdvisor does not " +
				"recognise), so image garbage collection has no data.",
			Fix: "Run kubelet on the host, or mount /var/lib/docker (and /, /sys, /var/run) into the kubelet container; if Docker uses another " +
				"root (--data-root), make it visible at the same path. Better: move the node to containerd.",
			Refs: []string{"https://github.com/kubernetes/kubernetes/issues/11733"},
		},
		{
			// kubernetes/kubernetes#58217, #71704, Azure/acs-engine#510.
			ID: "KUBELET-CADVISOR-NO-ROOT-STATS", Component: "kubelet", Severity: SevError,
			Title:   "cAdvisor has no stats for the root container or root filesystem",
			Literal: "unable to find data",
			Pattern: `(?:rootfs info(?:rmation)?:? unable to find data (?:for container /|in memory cache)|unable to find data for container /(?:$|[\s"\\]))`,
			Cause: "cAdvisor has no data for the root cgroup '/' or the root filesystem, so kubelet cannot size the node (ContainerManager may " +
				"refuse to start) and image GC fails. Met in the field: kubelet running inside a container without the host's /, /sys and " +
				"runtime directories mounted, an old or customised kernel/cgroup layout cAdvisor cannot read, and the first seconds after start-up.",
			Fix: "Run kubelet on the host (systemd service) or mount /:/rootfs:ro, /sys, /var/lib/<runtime> and /var/run into its container; on an " +
				"unusual kernel update it or, as a workaround, set the feature gate LocalStorageCapacityIsolation=false (kubernetes#71704); " +
				"restart kubelet and check it persists beyond start-up.",
			Refs: []string{"https://github.com/kubernetes/kubernetes/issues/71704", "https://github.com/kubernetes/kubernetes/issues/58217"},
		},
		{
			// A first failure is what the kubelet itself expects right after start: it logs "failed
			// once. Stats initialization may not have completed yet" and records the ImageGCFailed
			// Event only for repeated failures (k8s.io/kubernetes v1.37.1 pkg/kubelet/kubelet.go,
			// StartGarbageCollection). So only a repeat, or a first failure that already says how
			// much it could not free, is a finding; a bare first failure is KUBELET-IMAGE-GC-FIRST.
			ID: "KUBELET-IMAGE-GC-FAILED", Component: "kubelet", Severity: SevWarning,
			Title:   "image garbage collection could not free enough space",
			Literal: "Image garbage collection failed",
			Pattern: `Image garbage collection failed (?:multiple times in a row(?:.*Wanted to free (?P<want>\d+) bytes, but freed (?P<freed>\d+) bytes)?|once.*Wanted to free (?P<want>\d+) bytes, but freed (?P<freed>\d+) bytes)`,
			Cause:   "All images on the node are in use (or stats were not ready): kubelet wanted to free {want} bytes and freed {freed}.",
			Fix:     "Add disk to the image filesystem or remove unused workloads/images; check `crictl images` and `crictl imagefsinfo`.",
			Refs:    []string{"https://kubernetes.io/docs/concepts/architecture/garbage-collection/"},
		},
		{
			// The kubelet's own words for a first failure (pkg/kubelet/kubelet.go, see above).
			ID: "KUBELET-IMAGE-GC-FIRST", Component: "kubelet", Severity: SevInfo,
			Title:   "a first image garbage collection failed (normal right after kubelet starts)",
			Literal: "Image garbage collection failed once",
			Pattern: `Image garbage collection failed once\. Stats initialization may not have completed yet`,
			Cause: "The kubelet's first image garbage collection ran before its image filesystem stats were ready; the kubelet logs this once " +
				"and records an ImageGCFailed Event only when the next run fails too.",
			Fix:  "Nothing, unless \"Image garbage collection failed multiple times in a row\" follows (KUBELET-IMAGE-GC-FAILED).",
			Refs: []string{"https://github.com/kubernetes/kubernetes/blob/v1.37.1/pkg/kubelet/kubelet.go"},
		},
		{
			ID: "KUBELET-CGROUP-DRIVER-MISMATCH", Component: "kubelet", Severity: SevError,
			Title:   "kubelet and container runtime use different cgroup drivers",
			Literal: "misconfiguration: kubelet cgroup driver",
			Pattern: `misconfiguration: kubelet cgroup driver: \\?"(?P<kubelet_driver>['\w]+)\\?" is different from (?P<runtime>\w+) cgroup driver: \\?"(?P<runtime_driver>['\w]+)\\?"`,
			Cause: "kubelet uses cgroupDriver {kubelet_driver} but {runtime} uses {runtime_driver}; kubelet refuses to start. If the two look " +
				"alike, the kubelet value carries literal quotes (e.g. 'systemd' written with quotes in KUBELET_EXTRA_ARGS or a sed-edited config), " +
				"so it never equals the runtime's value.",
			Fix:  "Set cgroupDriver: {runtime_driver} (plain, without quotes) in the KubeletConfiguration (or change the runtime: containerd SystemdCgroup = true for systemd) and restart kubelet.",
			Refs: []string{"https://kubernetes.io/docs/tasks/administer-cluster/kubeadm/configure-cgroup-driver/"},
		},
		{
			ID: "KUBELET-FLAG-NETWORK-PLUGIN", Component: "kubelet", Severity: SevError,
			Title:   "dockershim flag --network-plugin rejected",
			Literal: "unknown flag: --network-plugin",
			Pattern: `unknown flag: --network-plugin\b`,
			Cause:   "--network-plugin (and --cni-bin-dir/--cni-conf-dir) belonged to dockershim and were removed in Kubernetes 1.24; the CNI is now configured in the container runtime.",
			Fix:     "Remove --network-plugin, --cni-bin-dir and --cni-conf-dir from the kubelet command line (nssm get kubelet AppParameters / the service binPath); set bin_dir/conf_dir under [plugins.\"io.containerd.grpc.v1.cri\".cni] in containerd's config.toml and pass --container-runtime-endpoint=npipe:////./pipe/containerd-containerd.",
			Refs:    []string{"https://kubernetes.io/blog/2022/02/17/dockershim-faq/"},
		},
		{
			ID: "KUBELET-FLAG-CNI-DIR", Component: "kubelet", Severity: SevError,
			Title:   "dockershim flag --cni-*-dir rejected",
			Literal: "unknown flag: --cni-",
			Pattern: `unknown flag: --(?P<flag>cni-(?:bin|conf|cache)-dir)\b`,
			Cause:   "--{flag} was a dockershim flag removed in Kubernetes 1.24.",
			Fix:     "Remove --{flag} from the kubelet arguments and configure the CNI directories in containerd's config.toml (bin_dir, conf_dir).",
			Refs:    []string{"https://kubernetes.io/blog/2022/02/17/dockershim-faq/"},
		},
		{
			ID: "KUBELET-FLAG-IMAGE-PULL-DEADLINE", Component: "kubelet", Severity: SevError,
			Title:   "dockershim flag --image-pull-progress-deadline rejected",
			Literal: "unknown flag: --image-pull-progress-deadline",
			Pattern: `unknown flag: --image-pull-progress-deadline\b`,
			Cause:   "--image-pull-progress-deadline only applied to dockershim and was removed in Kubernetes 1.24.",
			Fix:     "Remove --image-pull-progress-deadline; slow Windows image pulls are governed by containerd (and runtimeRequestTimeout in the KubeletConfiguration).",
			Refs:    []string{"https://kubernetes.io/blog/2022/02/17/dockershim-faq/"},
		},
		{
			ID: "KUBELET-UNKNOWN-FLAG", Component: "kubelet", Severity: SevError, Fallback: true,
			Title:   "component rejected an unknown command-line flag",
			Literal: "unknown flag: --",
			Pattern: `unknown flag: --(?P<flag>[A-Za-z0-9][A-Za-z0-9-]*)`,
			Cause:   "--{flag} does not exist in this version of the binary (removed, renamed, or moved to the config file); the process exits at once and the service restarts in a loop.",
			Fix:     "Remove --{flag} from the service arguments (nssm get <service> AppParameters, or sc qc <service>) or set its replacement in the KubeletConfiguration/KubeProxyConfiguration file.",
			Refs:    []string{"https://kubernetes.io/docs/reference/command-line-tools-reference/kubelet/"},
		},
		{
			ID: "KUBELET-FEATURE-GATE-HYPERV", Component: "kubelet", Severity: SevError,
			Title:   "removed feature gate HyperVContainer",
			Literal: "unrecognized feature gate: HyperVContainer",
			Pattern: `unrecognized feature gate: HyperVContainer\b`,
			Cause:   "The experimental HyperVContainer gate (dockershim-era Hyper-V isolation) no longer exists; kubelet refuses to start with it.",
			Fix:     "Remove HyperVContainer=true from --feature-gates/featureGates. Hyper-V isolation today is a containerd runtime handler (runhcs-wcow-hypervisor) selected by a RuntimeClass.",
			Refs:    []string{"https://kubernetes.io/docs/concepts/containers/runtime-class/"},
		},
		{
			ID: "KUBELET-FEATURE-GATE-UNKNOWN", Component: "kubelet", Severity: SevError, Fallback: true,
			Title:   "unknown feature gate",
			Literal: "unrecognized feature gate: ",
			Pattern: `unrecognized feature gate: (?P<gate>[A-Za-z0-9]+)`,
			Cause:   "Feature gate {gate} does not exist in this version (graduated and removed, or misspelt); the component exits at start-up.",
			Fix:     "Remove {gate} from --feature-gates / featureGates of the component.",
			Refs:    []string{"https://kubernetes.io/docs/reference/command-line-tools-reference/feature-gates-removed/"},
		},
		{
			ID: "KUBELET-FLAG-DEPRECATED", Component: "kubelet", Severity: SevInfo,
			Title:   "deprecated kubelet flag (works today, removed later)",
			Literal: "has been deprecated, This parameter should be set via the config file",
			Pattern: `Flag --(?P<flag>[A-Za-z0-9-]+) has been deprecated, This parameter should be set via the config file`,
			Cause:   "--{flag} is deprecated in favour of the KubeletConfiguration file; a future release rejects it (see KUBELET-UNKNOWN-FLAG).",
			Fix:     "Move --{flag} into the file given by --config and drop it from the command line.",
			Refs:    []string{"https://kubernetes.io/docs/tasks/administer-cluster/kubelet-config-file/"},
		},
		{
			ID: "KUBELET-CNI-NOT-INITIALIZED", Component: "kubelet", Severity: SevError,
			Title:   "container runtime network not ready: CNI not initialized",
			Literal: "NetworkPluginNotReady",
			// The message after NetworkPluginNotReady names the CNI state; a line cut right after the
			// reason (kubectl describe node wraps it) is the same condition.
			Pattern:  `NetworkPluginNotReady(?:.*(?:cni plugin not initialized|cni config uninitialized)|\\?"?\s*$)`,
			Cause:    "The container runtime found no usable CNI configuration (none in its conf_dir, or the plugin binary missing), so the node stays NotReady and no pod gets a network.",
			Fix:      "Check containerd's CNI conf_dir/bin_dir (Windows: C:\\etc\\cni\\net.d and C:\\opt\\cni\\bin by default), that the conf file is valid JSON and names an existing plugin (win-bridge/win-overlay/flannel), and that the HNS network it references exists; restart containerd.",
			FixLinux: "Check containerd's CNI conf_dir/bin_dir (/etc/cni/net.d and /opt/cni/bin by default): a conf file must exist and be valid JSON naming installed plugins — usually the CNI's DaemonSet (flannel, Calico) has not written it yet, so check that pod on this node (kubectl -n kube-system get pods -o wide); then systemctl restart containerd.",
			Refs:     []string{"https://github.com/containerd/containerd/blob/main/docs/cri/config.md"},
		},
		{
			ID: "KUBELET-NO-CNI-NETWORKS", Component: "kubelet", Severity: SevWarning,
			Title:   "no CNI network configuration found",
			Literal: "networks found in",
			Pattern: `(?:Unable to update|error updating) cni config:? .*[Nn]o (?:valid )?networks found in (?P<dir>[^\s"]+)`,
			Cause:   "The CNI configuration directory {dir} holds no network configuration yet; pods cannot get networking until it does.",
			Fix:     "Write the CNI config (kubewin render produces it) into {dir}, or point the runtime's conf_dir at the directory that has it.",
			Refs:    []string{"https://www.cni.dev/docs/spec/"},
		},
		{
			ID: "KUBELET-NODE-NOT-FOUND", Component: "kubelet", Severity: SevWarning,
			Title:   "kubelet cannot find its Node object",
			Literal: `" not found`,
			Pattern: `(?:\] node|Error from server \(NotFound\): nodes) "(?P<node>[^"]+)" not found`,
			Cause:   "The Node object {node} does not exist (yet). During the first seconds of registration this is normal; if it persists, kubelet cannot register (credentials, hostname-override, or the node was deleted).",
			Fix:     "If it persists: kubectl get node {node}; check kubelet's kubeconfig credentials and --hostname-override, and the 'Unable to register node' errors.",
			Refs:    []string{"https://kubernetes.io/docs/concepts/architecture/nodes/#self-registration-of-nodes"},
		},
		{
			ID: "KUBELET-EVICTION-NO-NODE", Component: "kubelet", Severity: SevInfo,
			Title:   "eviction manager has no stats before the node registered",
			Literal: "eviction manager: failed to get summary stats",
			Pattern: `eviction manager: failed to get summary stats: failed to get node info: node "(?P<node>[^"]+)" not found`,
			Cause:   "Logged while {node} is registering; harmless at start-up, a registration problem if it persists (see KUBELET-NODE-NOT-FOUND).",
			Fix:     "Nothing to fix at start-up; if it repeats, fix registration (credentials, hostname-override).",
			Refs:    []string{refWinTroubleshoot},
		},
		{
			ID: "KUBELET-LEASE-NODE-MISSING", Component: "kubelet", Severity: SevInfo,
			Title:   "node lease owner not found before registration",
			Literal: "when trying to set owner ref to the node lease",
			Pattern: `failed to get node \\?"(?P<node>[^"\\]+)\\?" when trying to set owner ref to the node lease: nodes \\?"[^"\\]+\\?" not found`,
			Cause:   "The lease controller runs before {node} is registered; harmless at start-up.",
			Fix:     "Nothing to fix unless it repeats after 'Successfully registered node'.",
			Refs:    []string{"https://kubernetes.io/docs/concepts/architecture/leases/"},
		},
		{
			ID: "KUBELET-PROC-START-TIME", Component: "kubelet", Severity: SevInfo,
			Title:   "cannot read /proc on Windows (harmless)",
			Literal: "Could not get process start time",
			Pattern: `Could not get process start time, could not read /proc`,
			Cause:   "A Linux-only metric collector looks for /proc; Windows has none. Noise.",
			Fix:     "Nothing to fix.",
			Refs:    []string{refWinTroubleshoot},
		},
		{
			ID: "KUBELET-IPTABLES-VERSION", Component: "kubelet", Severity: SevInfo,
			Title:   "iptables not found on Windows (harmless)",
			Literal: "Error checking iptables version",
			Pattern: `Error checking iptables version, assuming version at least [\d.]+: executable file not found in %PATH%`,
			Cause:   "Old kubelets probe iptables even on Windows; there is none. Noise.",
			Fix:     "Nothing to fix.",
			Refs:    []string{refWinTroubleshoot},
		},
		{
			ID: "KUBELET-BRIDGE-NF-SYSCTL", Component: "kubelet", Severity: SevInfo,
			Title:   "bridge-nf-call-iptables sysctl missing on Windows (harmless)",
			Literal: "bridge-nf-call-iptables",
			Pattern: `can't set sysctl net/bridge/bridge-nf-call-iptables: open /proc/sys/net/bridge/bridge-nf-call-iptables: The system cannot find the path specified`,
			Cause:   "Dockershim-era kubelets try to set a Linux sysctl on Windows. Noise.",
			Fix:     "Nothing to fix.",
			Refs:    []string{refWinTroubleshoot},
		},
		{
			ID: "KUBELET-BRIDGE-NF-LINUX", Component: "kubelet", Severity: SevWarning,
			Title:   "br_netfilter not loaded on a Linux node",
			Literal: "bridge-nf-call-iptables",
			Pattern: `/proc/sys/net/bridge/bridge-nf-call-iptables (?:does not exist|contents are not set to 1)`,
			Cause:   "The br_netfilter module is not loaded, so bridged pod traffic bypasses iptables and Services break on this Linux node.",
			Fix:     "modprobe br_netfilter; echo br_netfilter > /etc/modules-load.d/k8s.conf; sysctl -w net.bridge.bridge-nf-call-iptables=1.",
			Refs:    []string{"https://kubernetes.io/docs/setup/production-environment/container-runtimes/#forwarding-ipv4-and-letting-iptables-see-bridged-traffic"},
		},
		{
			ID: "KUBELET-AWS-CREDENTIALS", Component: "kubelet", Severity: SevInfo,
			Title:   "AWS credential provider probe failed (harmless off AWS)",
			Literal: "NoCredentialProviders",
			Pattern: `while getting AWS credentials NoCredentialProviders`,
			Cause:   "The legacy in-tree AWS credential provider probes for credentials on every node. Noise unless you pull from ECR.",
			Fix:     "Nothing to fix off AWS; on AWS configure the ecr-credential-provider.",
			Refs:    []string{"https://kubernetes.io/docs/tasks/administer-cluster/kubelet-credential-provider/"},
		},
		{
			ID: "KUBELET-RUNTIME-STATUS-STARTUP", Component: "kubelet", Severity: SevInfo,
			Title:   "pod sync skipped until the runtime status is known (start-up)",
			Literal: "container runtime status check may not have completed yet",
			Pattern: `skipping pod synchronization - container runtime status check may not have completed yet`,
			Cause:   "Logged during the first seconds after kubelet starts. Noise unless it repeats for minutes.",
			Fix:     "Nothing to fix unless it repeats; then see the runtime findings (containerd pipe, CNI).",
			Refs:    []string{refWinTroubleshoot},
		},
		{
			ID: "KUBELET-API-VERSION-SKEW", Component: "kubelet", Severity: SevWarning,
			Title:   "API resource missing on the server (version skew)",
			Literal: "the server could not find the requested resource",
			Pattern: `Failed to (?:list|watch) \*(?P<kind>[\w.]+): the server could not find the requested resource`,
			Cause:   "kubelet asks for {kind}, which this kube-apiserver does not serve: kubelet is newer than the control plane.",
			Fix:     "Keep kubelet at or below the kube-apiserver version (at most three minor versions older); install the matching kubelet on the Windows node.",
			Refs:    []string{"https://kubernetes.io/releases/version-skew-policy/"},
		},
		{
			// rancher/rke2#4722, #5725: the Windows agent polls containerd while starting it; the failed
			// polls are logged and are normal start-up (KUBELET-CONTAINERD-PIPE must not claim them).
			ID: "CONTAINERD-STARTUP-WAIT", Component: "containerd", Severity: SevInfo,
			Title:   "agent waiting for containerd to start (start-up)",
			Literal: "Waiting for containerd startup",
			Pattern: `Waiting for containerd startup`,
			Cause:   "The node agent started containerd and polls it until it answers; the failed polls (pipe not found, server not initialized) are normal for the first seconds.",
			Fix:     "Nothing, unless it repeats for minutes; then read containerd's own log (it failed to start) and see KUBELET-CONTAINERD-PIPE.",
			Refs:    []string{"https://github.com/rancher/rke2/issues/4722"},
		},
		{
			ID: "KUBELET-CONTAINERD-PIPE", Component: "kubelet", Severity: SevError,
			Title:   "kubelet cannot reach containerd's named pipe",
			Literal: "pipe/containerd-containerd",
			Pattern: `pipe/containerd-containerd.*(?:The system cannot find the file specified|connection refused|context deadline exceeded|code = Unavailable)`,
			Cause:   "containerd is not running (or listens on another pipe), so kubelet has no container runtime.",
			Fix:     "Start-Service containerd; Get-Service containerd; check containerd's log; make sure kubelet uses --container-runtime-endpoint=npipe:////./pipe/containerd-containerd and the containerd service starts before kubelet (sc config kubelet depend= containerd).",
			Refs:    []string{"https://kubernetes.io/docs/setup/production-environment/container-runtimes/#containerd"},
		},
		{
			ID: "KUBELET-PLEG-NOT-HEALTHY", Component: "kubelet", Severity: SevWarning,
			Title:    "PLEG is not healthy (runtime too slow)",
			Literal:  "PLEG is not healthy",
			Pattern:  `PLEG is not healthy: pleg was last seen active (?P<ago>[\w.]+) ago`,
			Cause:    "kubelet's pod lifecycle event generator has not completed a relist for {ago}: the container runtime is hanging or overloaded (on Windows often HCS/disk I/O).",
			Fix:      "Check containerd health and node load (Get-Counter '\\Processor(_Total)\\% Processor Time'), restart containerd, reduce pod density.",
			FixLinux: "Check containerd health (crictl ps, journalctl -u containerd) and node load (top, iostat), restart containerd, reduce pod density.",
			Refs:     []string{"https://github.com/kubernetes/kubernetes/issues/45419"},
		},
		{
			ID: "KUBELET-NAMESERVER-LIMITS", Component: "kubelet", Severity: SevWarning,
			Title:   "more than three nameservers: some dropped",
			Literal: "Nameserver limits were exceeded",
			Pattern: `Nameserver limits were exceeded, some nameservers have been omitted, the applied nameserver line is: (?P<nameservers>(?:[^"\\]|\\.)+)`,
			Cause:   "The resolv.conf kubelet uses lists more than three nameservers; only '{nameservers}' are applied.",
			Fix:     "Reduce the node's resolvers to at most three, or point kubelet's resolvConf at a file with at most three.",
			Refs:    []string{"https://kubernetes.io/docs/tasks/administer-cluster/dns-debugging-resolution/#known-issues"},
		},
		{
			ID: "KUBELET-CREDENTIALSPECS-ACCESS", Component: "kubelet", Severity: SevWarning,
			Title:   "kubelet cannot read the CredentialSpecs registry key",
			Literal: "CredentialSpecs",
			Pattern: `unable to list values under registry key .*CredentialSpecs.*Access is denied`,
			Cause:   "kubelet (or dockershim) does not run as an administrator/LocalSystem, so it cannot read gMSA credential specs; gMSA pods will fail.",
			Fix:     "Run kubelet as a service under LocalSystem (sc.exe config kubelet obj= LocalSystem) or from an elevated shell.",
			Refs:    []string{"https://kubernetes.io/docs/tasks/configure-pod-container/configure-gmsa/"},
		},
		{
			ID: "KUBELET-HAIRPIN-FALLBACK", Component: "kubelet", Severity: SevInfo,
			Title:   "hairpin mode fallback (harmless on Windows)",
			Literal: "but kubenet is not enabled",
			Pattern: `Hairpin mode set to "promiscuous-bridge" but kubenet is not enabled, falling back to "hairpin-veth"`,
			Cause:   "Dockershim-era message: hairpin settings only apply to kubenet on Linux. Noise.",
			Fix:     "Nothing to fix (drop --hairpin-mode from Windows kubelet flags).",
			Refs:    []string{refWinTroubleshoot},
		},
		{
			// Since 1.28 the kubelet logs this whenever swap is on (pkg/kubelet/cm/swap_util.go); with
			// failSwapOn: false it is the normal state, so this is information, and KUBELET-SWAP-ON
			// reports the failure when there is one (Azure/AKSFlexNode#67 has both lines).
			ID: "KUBELET-SWAP-ENABLED", Component: "kubelet", Severity: SevInfo,
			Title:   "swap is on (Linux node)",
			Literal: `"Swap is on"`,
			Pattern: `"Swap is on"`,
			Cause:   "The kubelet found swap enabled (/proc/swaps lists a device or file). With failSwapOn (the default) it exits right after, with \"running with swap on is not supported\"; with failSwapOn: false it runs.",
			Fix:     "If the kubelet then exits: swapoff -a and remove the swap entries from /etc/fstab; if swap is wanted, set failSwapOn: false and memorySwap.swapBehavior.",
			Refs:    []string{"https://github.com/Azure/AKSFlexNode/issues/67", "https://kubernetes.io/docs/concepts/cluster-administration/swap-memory-management/"},
		},
		{
			// The kubelet's older wording of a --kubeconfig that does not exist (kubernetes/kubernetes#58217).
			ID: "KUBELET-KUBECONFIG-INVALID", Component: "kubelet", Severity: SevError,
			Title:   "kubelet: invalid kubeconfig (the file does not exist)",
			Literal: "invalid kubeconfig: ",
			Pattern: `invalid kubeconfig: (?:stat|open|GetFileAttributesEx) (?P<path>\S+?): ` + reFileNotFound,
			Cause:   "{path}, the kubeconfig the kubelet was given, does not exist, so it runs without API server credentials: it never reaches the API server and the node does not register.",
			Fix:     "Pass --kubeconfig (and --bootstrap-kubeconfig) with the absolute paths of the files that exist (on Windows, Windows paths); check the service's arguments.",
			Refs:    []string{"https://github.com/kubernetes/kubernetes/issues/58217"},
		},
		{
			// kubelet pkg/kubelet/cm/container_manager_linux.go (failSwapOn); kubevirt/kubevirt#478,
			// microsoft/pai#450, kubernetes-sigs/kubespray#4216, Azure/AKSFlexNode#67.
			ID: "KUBELET-SWAP-ON", Component: "kubelet", Severity: SevError,
			Title:   "kubelet refuses to start: swap is on (Linux node)",
			Literal: "with swap on",
			Pattern: `[Rr]unning with swap on is not supported`,
			Cause: "Swap is enabled on this Linux node and kubelet's failSwapOn (default true) makes it exit at start-up; /proc/swaps still lists a " +
				"swap partition or file (often re-enabled at boot by /etc/fstab, a systemd swap unit or zram although swapoff was run once).",
			Fix: "On the Linux node: swapoff -a, remove or comment the swap entries in /etc/fstab (and mask systemd swap units / zram-generator), " +
				"check `cat /proc/swaps` is empty after a reboot, then systemctl restart kubelet. To run with swap on purpose, set failSwapOn: false " +
				"(and memorySwap.swapBehavior) in the KubeletConfiguration. Windows nodes are not affected.",
			Refs: []string{"https://kubernetes.io/docs/concepts/architecture/nodes/#swap-memory", "https://github.com/kubevirt/kubevirt/issues/478"},
		},
		{
			// kubernetes/kubernetes#87918: reflector list of the kubelet's informers refused.
			ID: "KUBELET-APISERVER-UNREACHABLE", Component: "kubelet", Severity: SevError,
			Title:   "kubelet cannot connect to the API server (connection refused)",
			Literal: "connection refused",
			Pattern: `(?i:failed to (?:list|watch)) \*v1\.(?P<kind>Node|Pod|Service|CSIDriver|RuntimeClass)\b.*?dial tcp (?P<addr>[^\s:]*:\d+|\[[0-9a-fA-F:.]*\]:\d+): connect: connection refused`,
			Cause: "Nothing listens at {addr}, the API server address in kubelet's kubeconfig: the kube-apiserver is down or restarting (check it " +
				"and etcd on the control plane), or the kubeconfig names the wrong address/port (e.g. localhost on a worker, a stale load " +
				"balancer). kubelet cannot list its {kind}s, so the node does not register or goes NotReady.",
			Fix: "From the node test the address (Windows: Test-NetConnection <host> -Port <port>; Linux: curl -k https://<host>:<port>/healthz); " +
				"fix the server: line in kubelet's kubeconfig, or bring the API server back (crictl ps / static pod logs on the control plane).",
			Refs: []string{"https://github.com/kubernetes/kubernetes/issues/87918"},
		},
		{
			// kubernetes/kubernetes#63899, kelseyhightower/kubernetes-the-hard-way#247. Forbidden/x509 variants
			// of the same message are certificate problems (cert family), so only network reasons match here.
			ID: "KUBELET-REGISTER-NODE-FAILED", Component: "kubelet", Severity: SevError,
			Title:   "kubelet could not register its node with the API server",
			Literal: "Unable to register node",
			Pattern: `Unable to register node (?:\\?"(?P<node>[^"\\]+)\\?" )?with API server(?:\\?"? err=\\?"|: |$)(?P<reason>(?:[^"\\]|\\.)*?(?:connection refused|i/o timeout|no such host|no route to host|EOF|[Tt]imeout|connection reset|https://:)(?:[^"\\]|\\.)*|)(?:\\?"|$)`,
			Cause: "kubelet could not create its Node object[[ {node}]][[ ({reason})]]: the API server was unreachable or kept restarting, or " +
				"kubelet's kubeconfig is missing/incomplete so the server address is empty (https://:6443). The node never appears in kubectl get nodes.",
			Fix: "Check the server: address in kubelet's kubeconfig (and that the file exists), that the API server and etcd are stable on the " +
				"control plane, and that the node reaches the address (Test-NetConnection / curl -k https://<server>/healthz); then restart kubelet.",
			Refs: []string{"https://github.com/kubernetes/kubernetes/issues/63899", "https://github.com/kelseyhightower/kubernetes-the-hard-way/issues/247"},
		},
		{
			// kubernetes/kubernetes#66108: kubeadm nodes crash-loop until init/join writes the config.
			ID: "KUBELET-SERVICE-EXITED", Component: "kubelet", Severity: SevError,
			Title:   "systemd: the kubelet process exited",
			Literal: "kubelet.service: ",
			Pattern: `kubelet\.service: [Mm]ain process exited, code=(?P<code>\w+), status=(?P<status>\S+)`,
			Cause: "The kubelet process stopped (code={code}, status={status}) and systemd restarts it in a loop. On kubeadm nodes it exits until " +
				"kubeadm init/join has written /var/lib/kubelet/config.yaml (expected before the join, a failure after it); otherwise the reason is " +
				"in kubelet's last lines before the exit.",
			Fix: "journalctl -u kubelet -n 100 --no-pager shows the reason (missing config.yaml, swap, cgroup driver, certificates); run kubeadm " +
				"init/join if the node was not joined yet, fix the reason, systemctl restart kubelet.",
			Refs: []string{"https://github.com/kubernetes/kubernetes/issues/66108"},
		},
		{
			ID: "KUBELET-FAILED-TO-RUN", Component: "kubelet", Severity: SevError, Fallback: true,
			Title:    "kubelet exited at start-up",
			Literal:  "failed to run Kubelet",
			Pattern:  `failed to run Kubelet: (?P<reason>(?:[^"\\]|\\.)+)`,
			Cause:    "kubelet stopped during start-up: {reason}",
			Fix:      "Fix the reason shown, then restart the service (Restart-Service kubelet) and watch the log.",
			FixLinux: "Fix the reason shown, then systemctl restart kubelet and watch journalctl -fu kubelet.",
			Refs:     []string{"https://kubernetes.io/docs/reference/command-line-tools-reference/kubelet/"},
		},
		{
			// The kubelet's config validation (pkg/kubelet/apis/config/validation): calico#7552 on Windows.
			ID: "KUBELET-CONFIG-INVALID", Component: "kubelet", Severity: SevError,
			Title:   "kubelet refuses its configuration",
			Literal: "failed to validate kubelet configuration",
			Pattern: `failed to validate kubelet configuration, error: \[?(?P<errors>(?:[^"\]\\]|\\.)+)`,
			Cause:   "The kubelet validated its KubeletConfiguration (file and flags) and exits: {errors}.",
			Fix: "Correct the named fields; on Windows set cgroupsPerQOS: false and enforceNodeAllocatable: [] (kubewin check names " +
				"these before start-up).",
			Refs: []string{"https://github.com/projectcalico/calico/issues/7552", "https://github.com/kubernetes/kubernetes/blob/master/pkg/kubelet/apis/config/validation/validation_windows.go"},
		},
		{
			// A Linux DaemonSet (kube-proxy, flannel) with the xtables-lock hostPath on a Windows node:
			// kubernetes/kubernetes#71130.
			ID: "KUBELET-LINUX-POD-ON-WINDOWS", Component: "kubelet", Severity: SevError,
			Title:   "a Linux pod was scheduled on a Windows node",
			Literal: "/run/xtables.lock",
			Pattern: `open /run/xtables\.lock: The system cannot find the path specified`,
			Cause: "A pod meant for Linux (kube-proxy or a CNI DaemonSet mounting /run/xtables.lock) runs on a Windows node, where the " +
				"Linux host path does not exist: the DaemonSet has no nodeSelector kubernetes.io/os: linux and the Windows nodes are not tainted.",
			Fix: "Add nodeSelector kubernetes.io/os: linux to the Linux DaemonSets (kubectl patch ds …), and taint the Windows nodes " +
				"(os=windows:NoSchedule) so only Windows workloads land there.",
			Refs: []string{"https://github.com/kubernetes/kubernetes/issues/71130"},
		},
		{
			// kubelet kuberuntime: a sandbox name still held in the runtime (kubernetes/kubelet#18); the
			// kubelet removes it and retries.
			ID: "KUBELET-SANDBOX-NAME-CONFLICT", Component: "kubelet", Severity: SevInfo,
			Title:   "pod sandbox name conflict, stale sandbox removed",
			Literal: "Unable to create pod sandbox due to conflict",
			Pattern: `Unable to create pod sandbox due to conflict\. Attempting to remove sandbox \\?"?(?P<sandbox>[0-9a-f]+)`,
			Cause:   "The runtime still held a sandbox of the same name (left from before a restart); the kubelet removes it and retries, which usually succeeds.",
			Fix:     "Nothing if the pod starts; if it repeats for the same pod, restart the container runtime.",
			Refs:    []string{"https://github.com/kubernetes/kubelet/issues/18"},
		},
	}
}
