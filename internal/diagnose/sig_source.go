package diagnose

// Source entries: a cause and a fix per code path of the components' own source, so that every
// message printed there is explained, in any release's wording (sources.go). Files and
// functions are those of the pinned sources listed in internal/diagnose/srcmsg/README.md.

const (
	refKeepalivedMan  = "keepalived.conf(5) (keepalived/doc/man/man5/keepalived.conf.5)"
	refKubeadmPreflt  = "kubernetes/kubernetes cmd/kubeadm/app/preflight/checks.go"
	refKubeadmTroubl  = "https://kubernetes.io/docs/setup/production-environment/tools/kubeadm/troubleshooting-kubeadm/"
	refContainerdConf = "containerd docs/man/containerd-config.toml.5.md"
)

func keepalivedSourceEntries() []SourceEntry {
	return []SourceEntry{
		{
			ID: "KEEPALIVED-SRC-CONFIG", Component: "keepalived", File: `(?:lib|keepalived/\w+)/\w*parser\.c`, Severity: SevError,
			Title: "keepalived.conf has an error its parser reported",
			Cause: "keepalived's config parser rejected part of keepalived.conf ({innermost}); keepalived skips what it cannot parse, " +
				"so an instance, address or check may be running without the setting you wrote (keepalived {file}).",
			Fix: "Fix the keyword or value it names (keywords are case-sensitive; a misspelt block name drops the whole block), " +
				"then validate with keepalived -t -f /etc/keepalived/keepalived.conf and restart keepalived.",
			Refs: []string{"keepalived lib/parser.c, keepalived/*/*_parser.c (report_config_error)", refKeepalivedMan},
		},
		{
			ID: "KEEPALIVED-SRC-SCRIPT", Component: "keepalived", File: `lib/notify\.c`, Severity: SevWarning,
			Title: "keepalived could not run a track or notify script as configured",
			Cause: "keepalived's script runner refused or failed a script ({innermost}): scripts run as script_user (default " +
				"keepalived_script, else root), and with enable_script_security keepalived refuses scripts that a non-root user could modify; " +
				"a tracking script that never runs never lowers the priority, so the VIP does not move when the service dies.",
			Fix: "Create the script user (useradd -r -s /sbin/nologin keepalived_script) or set global_defs { script_user root }, " +
				"enable_script_security, make the script and every directory above it owned by root and not writable by others, " +
				"and give the full path of the interpreter.",
			Refs: []string{"keepalived lib/notify.c (check_script_secure, set_script_uid_gid)", refKeepalivedMan},
		},
		{
			ID: "KEEPALIVED-SRC-TRACK", Component: "keepalived", File: `keepalived/(?:core/track_process|trackers/track_file|vrrp/vrrp_track)\.c`, Severity: SevWarning,
			Title: "A keepalived tracker (script, interface, process or file) reported a failure",
			Cause: "keepalived's tracking reported {innermost}; the instance's priority or state follows its trackers, so the VIP " +
				"moves (or goes to FAULT) because of it — or, if the tracker itself is broken, never moves.",
			Fix: "Check the tracked script/interface/process/file in keepalived.conf against the node, run the track script by hand " +
				"as the script user and look at its exit code, and check the weight each tracker applies.",
			Refs: []string{"keepalived keepalived/vrrp/vrrp_track.c, keepalived/core/track_process.c, keepalived/trackers/track_file.c", refKeepalivedMan},
		},
		{
			ID: "KEEPALIVED-SRC-CHECKER", Component: "keepalived", File: `keepalived/check/(?:check_(?:api|data|http|smtp|ssl|tcp|udp|ping|dns|file|misc|genhash|bfd)|ipwrapper|ipvswrapper|libipvs|check_daemon)\.c`, Severity: SevWarning,
			Title: "keepalived's health checker (IPVS real servers) reported a failure",
			Cause: "The checker process (Keepalived_healthcheckers) reported {innermost}: a real server failed its check, or the IPVS " +
				"configuration could not be applied (ip_vs kernel module missing, no privilege to change IPVS).",
			Fix: "If a real server is down, fix it; if IPVS cannot be set, load ip_vs (modprobe ip_vs) and run keepalived as root or " +
				"with CAP_NET_ADMIN; if you use keepalived only for a VIP, remove the virtual_server blocks.",
			Refs: []string{"keepalived keepalived/check/ (check_*.c, ipwrapper.c, ipvswrapper.c)", refKeepalivedMan},
		},
		{
			ID: "KEEPALIVED-SRC-VRRP-SOCKET", Component: "keepalived", File: `keepalived/vrrp/vrrp(?:_scheduler|_daemon)?\.c`, Severity: SevError,
			Format: `(?i)socket|bind|setsockopt|multicast|privilege|permission`,
			Title:  "keepalived cannot open or use its VRRP socket",
			Cause: "VRRP needs a raw IP socket (protocol 112) joined to the multicast group or sending unicast to its peers; " +
				"keepalived reported {innermost}, so adverts are not sent or received and both peers may hold the VIP.",
			Fix: "Run keepalived as root or with CAP_NET_RAW and CAP_NET_ADMIN (in a container: securityContext capabilities and " +
				"hostNetwork), check the interface name in keepalived.conf, and allow IP protocol 112 between the peers.",
			Refs: []string{"keepalived keepalived/vrrp/vrrp.c (open_vrrp_send_socket, open_vrrp_read_socket)", "RFC 5798 §5.1.1.3"},
		},
		{
			ID: "KEEPALIVED-SRC-NETLINK", Component: "keepalived", File: `keepalived/vrrp/vrrp_ip(?:address|route|rule)\.c`, Severity: SevError,
			Title: "keepalived could not add or remove a VIP, route or rule",
			Cause: "keepalived asked the kernel over netlink to change an address, route or rule and was refused ({innermost}).",
			Fix: "Check the interface exists and is up, the address is not already configured by another tool (netplan, " +
				"NetworkManager, a static config), and keepalived has CAP_NET_ADMIN.",
			Refs: []string{"keepalived keepalived/vrrp/vrrp_ipaddress.c, vrrp_iproute.c, vrrp_iprule.c"},
		},
	}
}

func kubeadmSourceEntries() []SourceEntry {
	return []SourceEntry{
		{
			ID: "KUBEADM-SRC-PREFLIGHT-SWAP", Component: "kubeadm", File: `cmd/kubeadm/app/preflight/checks\.go`, Func: `SwapCheck\..*`,
			Severity: SevWarning, Title: "kubeadm preflight: swap is on",
			Cause: "kubeadm's SwapCheck found swap enabled ({innermost}); the kubelet refuses to start with swap unless it is configured " +
				"for it (failSwapOn: false, NodeSwap on cgroup v2).",
			Fix:  "swapoff -a and remove the swap entry from /etc/fstab (or configure the kubelet for swap and pass --ignore-preflight-errors=Swap).",
			Refs: []string{refKubeadmPreflt + " (SwapCheck)", "https://kubernetes.io/docs/concepts/architecture/nodes/#swap-memory"},
		},
		{
			ID: "KUBEADM-SRC-PREFLIGHT-FILE-CONTENT", Component: "kubeadm", File: `cmd/kubeadm/app/preflight/checks\.go`, Func: `FileContentCheck\..*`,
			Severity: SevWarning, Title: "kubeadm preflight: a kernel setting is not as Kubernetes needs",
			Cause: "kubeadm's FileContentCheck[[ ({check})]] found {innermost}: IPv4 forwarding (and, with iptables-based " +
				"networking, bridge-nf-call-iptables from the br_netfilter module) must be 1 for pod traffic to be routed and filtered.",
			Fix: "modprobe br_netfilter; echo br_netfilter > /etc/modules-load.d/k8s.conf; set net.ipv4.ip_forward=1 and " +
				"net.bridge.bridge-nf-call-iptables=1 in /etc/sysctl.d/k8s.conf; sysctl --system.",
			Refs: []string{refKubeadmPreflt + " (FileContentCheck)", "https://kubernetes.io/docs/setup/production-environment/container-runtimes/#prerequisite-ipv4-forwarding-optional"},
		},
		{
			ID: "KUBEADM-SRC-PREFLIGHT-LEFTOVERS", Component: "kubeadm", File: `cmd/kubeadm/app/preflight/checks\.go`, Func: `(?:File|Dir)AvailableCheck\..*`,
			Severity: SevWarning, Title: "kubeadm preflight: files from an earlier init or join are still there",
			Cause: "kubeadm found[[ {path}]] already present ({innermost}): this machine was initialised or joined before and the " +
				"old kubeconfigs, manifests or etcd data would be reused.",
			Fix: "If the node may be wiped: kubeadm reset -f (then remove /etc/cni/net.d and the iptables/IPVS rules it lists), " +
				"and run the join again.",
			Refs: []string{refKubeadmPreflt + " (FileAvailableCheck, DirAvailableCheck)", "https://kubernetes.io/docs/reference/setup-tools/kubeadm/kubeadm-reset/"},
		},
		{
			ID: "KUBEADM-SRC-PREFLIGHT-PORT", Component: "kubeadm", File: `cmd/kubeadm/app/preflight/checks\.go`, Func: `PortOpenCheck\..*`,
			Severity: SevWarning, Title: "kubeadm preflight: a port Kubernetes needs is in use",
			Cause: "kubeadm's PortOpenCheck could not bind a port a component needs ({innermost}): an earlier kubelet, API server " +
				"or etcd is still running, or another service holds the port.",
			Fix:  "ss -ltnp to find the owner; stop it, or kubeadm reset -f if it is a leftover cluster component.",
			Refs: []string{refKubeadmPreflt + " (PortOpenCheck)", "https://kubernetes.io/docs/reference/networking/ports-and-protocols/"},
		},
		{
			ID: "KUBEADM-SRC-PREFLIGHT-RUNTIME", Component: "kubeadm", File: `cmd/kubeadm/app/preflight/checks\.go`, Func: `ContainerRuntime.*`,
			Severity: SevWarning, Title: "kubeadm preflight: the container runtime is not reachable or too old",
			Cause: "kubeadm could not talk to the CRI endpoint or found it lacking ({innermost}).",
			Fix: "systemctl status containerd; check that containerd's CRI plugin is enabled (disabled_plugins must not list \"cri\") " +
				"and that --cri-socket / nodeRegistration.criSocket names its socket (unix:///run/containerd/containerd.sock).",
			Refs: []string{refKubeadmPreflt + " (ContainerRuntimeCheck)", refContainerdConf},
		},
		{
			ID: "KUBEADM-SRC-PREFLIGHT-OTHER", Component: "kubeadm", File: `cmd/kubeadm/app/preflight/checks\.go`,
			Severity: SevWarning, Title: "kubeadm preflight check failed",
			Cause: "A kubeadm preflight check ({func}) failed: {innermost}. kubeadm aborts on [ERROR …] lines unless the check is " +
				"named in --ignore-preflight-errors; [WARNING …] lines only warn.",
			Fix:  "Fix what the check names; ignore a check only when you know why it does not apply to this node.",
			Refs: []string{refKubeadmPreflt, refKubeadmTroubl},
		},
		{
			ID: "KUBEADM-SRC-DISCOVERY", Component: "kubeadm", File: `cmd/kubeadm/app/discovery/.*`, Severity: SevError,
			Title: "kubeadm join could not discover or trust the cluster",
			Cause: "Discovery ({file}) failed: {innermost}. kubeadm join fetches the cluster-info ConfigMap from the API server and " +
				"checks it with the bootstrap token and the CA public-key hash; an expired token, a wrong hash or an unreachable API " +
				"server stop it here.",
			Fix: "On a control-plane node: kubeadm token create --print-join-command (a fresh token and the right hash); check that " +
				"this node reaches the API server endpoint (curl -k https://<endpoint>:6443/healthz).",
			Refs: []string{"kubernetes/kubernetes cmd/kubeadm/app/discovery/", refKubeadmTroubl},
		},
		{
			ID: "KUBEADM-SRC-KUBELET-START", Component: "kubeadm", File: `cmd/kubeadm/app/(?:phases/kubelet/.*|cmd/phases/join/kubelet\.go)`, Severity: SevError,
			Title: "kubeadm could not start or wait for the kubelet",
			Cause: "kubeadm's kubelet phase failed ({innermost}): the kubelet did not become healthy or could not be configured.",
			Fix:   "journalctl -xeu kubelet shows why (cgroup driver mismatch, swap, missing CNI, certificates); fix it and run the join again after kubeadm reset -f.",
			Refs:  []string{"kubernetes/kubernetes cmd/kubeadm/app/phases/kubelet/", refKubeadmTroubl},
		},
	}
}

func configSourceEntries() []SourceEntry {
	return []SourceEntry{
		{
			ID: "CNI-SRC-CONF-INVALID", Component: "cni", File: `libcni/conf\.go`, Severity: SevError,
			Title: "A CNI network configuration cannot be read",
			Cause: "libcni rejected a file in the CNI conf dir ({innermost}); the runtime then has no pod network (or uses another, " +
				"lexically first, file).",
			Fix: "Validate the conf/conflist as JSON (jq . file), give it \"cniVersion\", \"name\" and a \"type\" (or \"plugins\" in a " +
				".conflist), and remove stray files from the conf dir (C:\\etc\\cni\\net.d on Windows).",
			FixLinux: "Validate the conf/conflist as JSON (jq . /etc/cni/net.d/*), give it \"cniVersion\", \"name\" and a \"type\" " +
				"(or \"plugins\" in a .conflist), and remove stray files (backups, editor files) from /etc/cni/net.d.",
			Refs: []string{"containernetworking/cni libcni/conf.go", "https://www.cni.dev/docs/spec/#configuration-format"},
		},
		{
			ID: "FLANNEL-SRC-NETCONF", Component: "flannel", File: `pkg/subnet/config\.go`, Severity: SevError,
			Title: "flannel's net-conf.json is invalid",
			Cause: "flanneld could not use its network configuration ({innermost}); it exits and the node gets no subnet.",
			Fix: "Fix net-conf.json in the kube-flannel-cfg ConfigMap: \"Network\" must contain the cluster's pod CIDR, \"Backend\" " +
				"a known Type (vxlan, host-gw), and on Windows vxlan needs VNI 4096 and Port 4789.",
			Refs: []string{"flannel-io/flannel pkg/subnet/config.go (ParseConfig)", "flannel-io/flannel Documentation/configuration.md"},
		},
		{
			ID: "CONTAINERD-SRC-CONFIG", Component: "containerd", File: `(?:cmd/containerd/server|services/server)/config/config\.go`, Severity: SevError,
			Title: "containerd's config.toml is invalid or names something unsupported",
			Cause: "containerd rejected its configuration ({innermost}): a TOML error, a config version it does not support, or a " +
				"setting of the wrong plugin section (containerd 2.x renamed the CRI sections).",
			Fix: "containerd config default > /etc/containerd/config.toml as a base for this containerd version, reapply your " +
				"changes section by section (SystemdCgroup, sandbox image, registry config_path), and restart containerd.",
			Refs: []string{"containerd cmd/containerd/server/config/config.go", refContainerdConf},
		},
		{
			ID: "KUBEPROXY-SRC-CONFIG", Component: "kube-proxy", File: `cmd/kube-proxy/app/server\w*\.go`, Format: `(?i)config|decode|unmarshal|flag|mode`,
			Severity: SevError, Title: "kube-proxy cannot load its configuration",
			Cause: "kube-proxy's start-up rejected its configuration ({innermost}); it exits and Services stop working on this node.",
			Fix: "Check the kube-proxy ConfigMap (config.conf) against the KubeProxyConfiguration of this release (kubeproxy.config.k8s.io/v1alpha1): " +
				"unknown or misspelt fields are refused, and the mode must be one this OS supports (Windows: kernelspace).",
			Refs: []string{"kubernetes/kubernetes cmd/kube-proxy/app/server.go", "https://kubernetes.io/docs/reference/config-api/kube-proxy-config.v1alpha1/"},
		},
		{
			ID: "KUBELET-SRC-CONFIG", Component: "kubelet", File: `pkg/kubelet/apis/config/validation/\w+\.go`, Severity: SevError,
			Title: "The kubelet's configuration is invalid",
			Cause: "The kubelet validated its KubeletConfiguration and refused it ({innermost}); it exits without starting.",
			Fix:   "Fix the field it names in the file given by --config (and any drop-ins), then restart the kubelet.",
			Refs:  []string{"kubernetes/kubernetes pkg/kubelet/apis/config/validation/validation.go", "https://kubernetes.io/docs/reference/config-api/kubelet-config.v1beta1/"},
		},
	}
}

func runtimeSourceEntries() []SourceEntry {
	return []SourceEntry{
		{
			ID: "CALICO-SRC-AUTODETECT", Component: "calico", File: `node/pkg/lifecycle/startup/autodetection/.*`, Severity: SevError,
			Title: "calico-node could not autodetect the node's address",
			Cause: "calico-node's IP autodetection failed ({innermost}); calico-node exits and the node has no BGP/VXLAN address.",
			Fix: "Set IP_AUTODETECTION_METHOD (Installation spec.calicoNetwork.nodeAddressAutodetectionV4) to interface=<name>, " +
				"cidr=<node subnet> or can-reach=<address> so that it picks the NIC that carries node traffic.",
			Refs: []string{"projectcalico/calico node/pkg/lifecycle/startup/autodetection/", "https://docs.tigera.io/calico/latest/networking/ipam/ip-autodetection"},
		},
		{
			ID: "CALICO-SRC-TYPHA", Component: "calico", File: `typha/pkg/syncclient\w*/.*`, Severity: SevError,
			Title: "Felix cannot reach Typha",
			Cause: "Felix's Typha client failed ({innermost}); without Typha, Felix gets no policy or route updates.",
			Fix: "Check the calico-typha pods and Service, that the nodes reach port 5473, and that the Typha TLS secrets " +
				"(typha-certs, node-certs) match.",
			Refs: []string{"projectcalico/calico typha/pkg/syncclient/sync_client.go", "https://docs.tigera.io/calico/latest/reference/typha/"},
		},
		{
			ID: "HCN-SRC-CALL", Component: "hcsshim", File: `hcn/\w+\.go`, Severity: SevError,
			Title: "A Host Networking Service call failed",
			Cause: "hcsshim's hcn package reported {innermost} from HNS (networks, endpoints, load balancers, namespaces).",
			Fix: "Get-HnsNetwork / Get-HnsEndpoint to compare with what the component expected; if HNS state is stale after a " +
				"reboot or an update, restart the CNI's network and kube-proxy (or hns: Restart-Service hns) and watch the next attempt.",
			Refs: []string{"microsoft/hcsshim hcn/", "https://learn.microsoft.com/en-us/virtualization/windowscontainers/container-networking/architecture"},
		},
	}
}

// nodeSourceEntries: the node's own components past start-up — the kubelet's registration,
// cgroups, runtime connection and certificates; kube-proxy's data-plane backends; containerd's
// pulls, sandboxes and shims; flannel's lease and backends; Calico IPAM; the Windows CNI plugins;
// HCS.
func nodeSourceEntries() []SourceEntry {
	return []SourceEntry{
		{
			ID: "KUBELET-SRC-NODE-STATUS", Component: "kubelet", File: `pkg/kubelet/kubelet_node_status\.go`, Severity: SevError,
			Title: "The kubelet cannot register or update its Node",
			Cause: "kubelet's node-status code failed ({innermost}): the API server is unreachable or refuses this kubelet's " +
				"identity (the NodeRestriction admission plugin lets a kubelet write only the Node named in its client certificate, " +
				"system:node:<name>), or the node name differs from the one the certificate was issued for.",
			Fix: "Check that the node reaches the API server, that --hostname-override / nodeRegistration.name equals the CN in the " +
				"kubelet's client certificate (openssl x509 -noout -subject -in the kubelet client cert), and that the Node object was not " +
				"deleted while the kubelet kept an old certificate.",
			Refs: []string{"kubernetes/kubernetes pkg/kubelet/kubelet_node_status.go", "https://kubernetes.io/docs/reference/access-authn-authz/admission-controllers/#noderestriction"},
		},
		{
			ID: "KUBELET-SRC-CGROUPS", Component: "kubelet", File: `pkg/kubelet/cm/(?:container_manager|cgroup_manager|node_container_manager|qos_container_manager|helpers)_linux\.go`,
			Severity: SevError, Title: "The kubelet cannot set up its cgroups",
			Cause: "kubelet's container manager failed on cgroups ({innermost}): the cgroup driver differs from the runtime's " +
				"(cgroupDriver vs containerd's SystemdCgroup), a controller it needs is not enabled (memory, cpu, pids — e.g. " +
				"cgroup_enable=memory missing on some ARM kernels), or the cgroup hierarchy is not the one it expects.",
			Fix: "Make the kubelet's cgroupDriver match containerd's (systemd on systemd hosts: SystemdCgroup = true in containerd's " +
				"runc options), enable missing controllers on the kernel command line, reboot, and restart the kubelet.",
			Refs: []string{"kubernetes/kubernetes pkg/kubelet/cm/", "https://kubernetes.io/docs/tasks/administer-cluster/kubeadm/configure-cgroup-driver/"},
		},
		{
			ID: "KUBELET-SRC-RUNTIME-UNREACHABLE", Component: "kubelet", File: `pkg/(?:kubelet/)?(?:cri/)?remote/remote_(?:runtime|image)\.go|pkg/remote_(?:runtime|image)\.go`,
			Format: `(?i)connect|dial|transport|unavailable|deadline|version`, Severity: SevError,
			Title: "The kubelet cannot talk to the container runtime",
			Cause: "kubelet's CRI client failed to reach the runtime ({innermost}): containerd is not running, its CRI plugin is " +
				"disabled, or --container-runtime-endpoint names another socket/pipe.",
			Fix: "Start containerd and check its log; the endpoint must be npipe:////./pipe/containerd-containerd (Windows) and " +
				"containerd must start before the kubelet.",
			FixLinux: "systemctl status containerd; check that /etc/containerd/config.toml does not disable the cri plugin and that " +
				"the kubelet's containerRuntimeEndpoint is unix:///run/containerd/containerd.sock.",
			Refs: []string{"kubernetes/cri-client pkg/remote_runtime.go", refContainerdConf},
		},
		{
			ID: "KUBELET-SRC-CERTIFICATE", Component: "client-go", File: `(?:staging/src/k8s\.io/client-go/)?util/certificate/.*`, Severity: SevError,
			Title: "The kubelet cannot get or rotate its client certificate",
			Cause: "The certificate manager failed ({innermost}): the bootstrap token expired before the first CSR, the CSR is not " +
				"approved (no auto-approval binding for the node's group), or the old certificate expired before rotation.",
			Fix: "kubectl get csr (approve pending ones for this node); create a fresh bootstrap token and rejoin if the first " +
				"certificate was never issued; check the node's clock.",
			Refs: []string{"kubernetes/client-go util/certificate/certificate_manager.go", "https://kubernetes.io/docs/reference/access-authn-authz/kubelet-tls-bootstrapping/"},
		},
		{
			ID: "KUBEPROXY-SRC-IPTABLES", Component: "kube-proxy", File: `pkg/proxy/iptables/proxier\.go|pkg/util/iptables/iptables\.go`,
			Severity: SevError, Title: "kube-proxy cannot program iptables",
			Cause: "kube-proxy's iptables mode failed ({innermost}): iptables-restore refused the rules (the host mixes iptables-legacy " +
				"and iptables-nft, a kernel module such as the conntrack or statistic match is missing), or the xtables lock is held.",
			Fix: "Use one iptables backend on the host (update-alternatives --display iptables; the kube-proxy image picks the same one " +
				"as the host when the host's rules exist), load the missing modules, and restart kube-proxy.",
			Refs: []string{"kubernetes/kubernetes pkg/proxy/iptables/proxier.go", "https://kubernetes.io/docs/reference/networking/virtual-ips/"},
		},
		{
			ID: "KUBEPROXY-SRC-IPVS", Component: "kube-proxy", File: `pkg/proxy/ipvs/.*|pkg/util/ipset/ipset\.go`, Severity: SevError,
			Title: "kube-proxy cannot program IPVS",
			Cause: "kube-proxy's IPVS mode failed ({innermost}): the ip_vs modules (ip_vs, ip_vs_rr, ip_vs_wrr, ip_vs_sh, " +
				"nf_conntrack — nf_conntrack_ipv4 on kernels before 4.19) are not loaded, or ipset is missing.",
			Fix: "modprobe ip_vs ip_vs_rr ip_vs_wrr ip_vs_sh nf_conntrack (persist them in /etc/modules-load.d), install ipset, " +
				"and restart kube-proxy; or use mode iptables/nftables.",
			Refs: []string{"kubernetes/kubernetes pkg/proxy/ipvs/", "https://kubernetes.io/docs/reference/networking/virtual-ips/#proxy-mode-ipvs"},
		},
		{
			ID: "KUBEPROXY-SRC-NFTABLES", Component: "kube-proxy", File: `pkg/proxy/nftables/.*`, Severity: SevError,
			Title: "kube-proxy cannot program nftables",
			Cause: "kube-proxy's nftables mode failed ({innermost}); it needs the nft command and a kernel of 5.13 or later.",
			Fix:   "Install nftables (nft ≥ 1.0.1) and use a supported kernel, or switch kube-proxy to mode iptables.",
			Refs:  []string{"kubernetes/kubernetes pkg/proxy/nftables/proxier.go", "https://kubernetes.io/docs/reference/networking/virtual-ips/#proxy-mode-nftables"},
		},
		{
			ID: "KUBEPROXY-SRC-WINKERNEL", Component: "kube-proxy", File: `pkg/proxy/winkernel/.*`, Severity: SevError,
			Title: "kube-proxy (winkernel) cannot program HNS",
			Cause: "kube-proxy on Windows failed to create or update HNS endpoints, load balancers or policies ({innermost}); " +
				"Services on this node do not work until it succeeds.",
			Fix: "Get-HnsNetwork / Get-HnsPolicyList: check the network kube-proxy uses exists (winkernel.networkName), that " +
				"overlay mode has its source VIP endpoint, and that no stale load balancer holds the port; restart kube-proxy.",
			Refs: []string{"kubernetes/kubernetes pkg/proxy/winkernel/proxier.go"},
		},
		{
			ID: "CONTAINERD-SRC-IMAGE-PULL", Component: "containerd", File: `(?:pkg/cri/(?:server|sbserver)|internal/cri/server/images)/image_pull\.go`,
			Severity: SevError, Title: "containerd cannot pull an image",
			Cause: "The CRI plugin failed to pull an image ({innermost}): the registry is unreachable from the node, needs credentials, " +
				"presents a certificate the node does not trust, or the image/tag/platform does not exist (a Windows image must match " +
				"the host's build).",
			Fix: "ctr -n k8s.io images pull <image> on the node shows the raw error; configure mirrors and CAs in containerd's " +
				"certs.d/<registry>/hosts.toml (config_path), credentials in an imagePullSecret.",
			Refs: []string{"containerd internal/cri/server/images/image_pull.go", "containerd docs/hosts.md"},
		},
		{
			// Only the formats that say they are about the sandbox: sandbox_run.go also returns
			// generic ones ("failed to pull image %q: %w", "failed to create containerd task: %w",
			// "failed to get image %q: %w") that container_create.go/container_start.go, dockerd and
			// kubeadm print in the same words, so a match on them says nothing about a sandbox.
			ID: "CONTAINERD-SRC-SANDBOX", Component: "containerd", File: `(?:pkg/cri/(?:server|sbserver)|internal/cri/server)(?:/podsandbox)?/sandbox_run(?:_linux|_windows)?\.go`,
			Format:   `(?i)sandbox|sanbdox|network|cni|netns|pod|loopback|pause|resolv|hostname|nri|host ipc|namespace|[ug]id mapping|runtime|untrusted|seccomp|selinux|lease|unmount|symlink|entrypoint|ip_pref`,
			Severity: SevError, Title: "containerd cannot create a pod sandbox",
			Cause: "RunPodSandbox failed ({innermost}): usually the CNI ADD (no conf, plugin error, IPAM exhausted) or the pause " +
				"image (not pullable, wrong OS build on Windows).",
			Fix: "Read the innermost error: a CNI message points at the conf dir and the plugin; an image message at the sandbox " +
				"image (sandbox_image / pinned pause image) and the registry.",
			Refs: []string{"containerd internal/cri/server/sandbox_run.go"},
		},
		{
			ID: "CONTAINERD-SRC-SHIM", Component: "containerd", File: `(?:core/)?runtime/v2/shim(?:_load|_manager|_windows)?\.go`, Severity: SevError,
			Title: "containerd cannot start or reach a runtime shim",
			Cause: "The runtime v2 shim failed ({innermost}): the shim binary (containerd-shim-runc-v2, containerd-shim-runhcs-v1) " +
				"is missing or not in PATH, crashed, or the runtime it runs (runc, HCS) refused the container.",
			Fix:  "Check the shim binary exists next to containerd (or in PATH) and matches containerd's version; read the shim's own log.",
			Refs: []string{"containerd core/runtime/v2/shim.go"},
		},
		{
			ID: "FLANNEL-SRC-SUBNET-LEASE", Component: "flannel", File: `pkg/subnet/kube/.*`, Severity: SevError,
			Title: "flannel has no subnet lease for this node",
			Cause: "flannel's kube subnet manager failed ({innermost}): with the Kubernetes API as its store, flannel uses the " +
				"Node's spec.podCIDR, which exists only when kube-controller-manager allocates node CIDRs (--allocate-node-cidrs, " +
				"--cluster-cidr matching net-conf.json's Network), and writes its annotations on the Node.",
			Fix: "Enable --allocate-node-cidrs=true with --cluster-cidr=<Network> on kube-controller-manager (kubeadm: " +
				"--pod-network-cidr), check kubectl get node -o jsonpath='{.spec.podCIDR}', and that flannel's RBAC allows patching Nodes.",
			Refs: []string{"flannel-io/flannel pkg/subnet/kube/kube.go", "flannel-io/flannel Documentation/kubernetes.md"},
		},
		{
			ID: "FLANNEL-SRC-BACKEND", Component: "flannel", File: `pkg/backend/.*`, Severity: SevError,
			Title: "flannel's backend could not set up the node's network",
			Cause: "flannel's backend failed ({innermost}): the vxlan device or routes (Linux), or the HNS network and its " +
				"endpoints (Windows), could not be created; on Windows vxlan needs VNI 4096 and UDP port 4789 and the host-gw/vxlan " +
				"network name must match the CNI conf.",
			Fix: "Check the interface flannel selected (--iface), the backend settings in net-conf.json, and on Windows " +
				"Get-HnsNetwork for a leftover network with the same name; restart flanneld.",
			Refs: []string{"flannel-io/flannel pkg/backend/", "flannel-io/flannel Documentation/backends.md"},
		},
		{
			ID: "CALICO-SRC-IPAM", Component: "calico", File: `libcalico-go/lib/ipam/.*`, Severity: SevError,
			Title: "Calico IPAM cannot assign or release an address",
			Cause: "Calico's IPAM failed ({innermost}): no block can be claimed in the pools (exhausted, or all blocks affine to " +
				"other hosts while strictAffinity is true, as Windows nodes require), or a block's affinity conflicts.",
			Fix: "calicoctl ipam show --show-blocks and calicoctl ipam check; add or enlarge an IP pool, release leaked addresses, " +
				"and keep strictAffinity true when Windows nodes are present.",
			Refs: []string{"projectcalico/calico libcalico-go/lib/ipam/ipam.go", "https://docs.tigera.io/calico/latest/reference/resources/ipamconfig"},
		},
		{
			ID: "CALICO-SRC-STARTUP", Component: "calico", File: `node/pkg/lifecycle/startup/startup\.go`, Severity: SevError,
			Title: "calico-node start-up failed",
			Cause: "calico-node's start-up failed ({innermost}): it could not reach the datastore (the API server through the " +
				"kubernetes Service, or etcd), configure the Node resource, or find a usable IP pool; the node stays NotReady for pods.",
			Fix:  "Check the calico-node pod's log from its start, that the node reaches the kubernetes Service VIP (kube-proxy running), and the IP pools.",
			Refs: []string{"projectcalico/calico node/pkg/lifecycle/startup/startup.go"},
		},
		{
			ID: "CNI-SRC-WINDOWS-PLUGIN", Component: "cni", File: `plugins/main/windows/win-(?:bridge|overlay)/.*`, Severity: SevError,
			Title: "The win-bridge / win-overlay CNI plugin failed",
			Cause: "The Windows CNI plugin failed ({innermost}): the HNS network its conf names does not exist (not created yet, " +
				"removed by a reboot, or another name), or the endpoint could not be created or attached.",
			Fix:  "Get-HnsNetwork | Select Name,Type: the conf's \"name\" must be an existing L2Bridge/Overlay network; create the network before the first pod (kubewin join does).",
			Refs: []string{"containernetworking/plugins plugins/main/windows/"},
		},
		{
			ID: "CNI-SRC-HOST-LOCAL", Component: "cni", File: `plugins/ipam/host-local/.*`, Severity: SevError,
			Title: "host-local IPAM cannot allocate an address",
			Cause: "host-local failed ({innermost}): its range is exhausted (leaked reservations in its data dir after pods were " +
				"removed uncleanly), or the range/subnet in the conf is invalid.",
			Fix: "Compare the files in /var/lib/cni/networks/<network> with the running pods and delete the leaked ones; check " +
				"\"subnet\"/\"rangeStart\" in the conf against the node's pod CIDR.",
			Refs: []string{"containernetworking/plugins plugins/ipam/host-local/backend/allocator/allocator.go"},
		},
		{
			ID: "HCS-SRC-CALL", Component: "hcsshim", File: `internal/hcs/(?:v2/)?(?:system|process|errors|utils)\.go`, Severity: SevError,
			Title: "A Host Compute Service call failed",
			Cause: "HCS refused to create or run a container ({innermost}): a process-isolated container's image must match the " +
				"host's Windows build, the Containers feature and vmcompute must be running, and the layer files must be intact.",
			Fix: "Compare the image's OS version with the host's (cmd /c ver; the image's os.version), use Hyper-V isolation or a " +
				"matching tag otherwise; Get-Service vmcompute; restart containerd if HCS was restarted.",
			Refs: []string{"microsoft/hcsshim internal/hcs/", "https://learn.microsoft.com/en-us/virtualization/windowscontainers/deploy-containers/version-compatibility"},
		},
	}
}
