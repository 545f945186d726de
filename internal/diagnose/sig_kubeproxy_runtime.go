package diagnose

// kube-proxy's run-time failures whose generic source entries (KUBEPROXY-SRC-IPTABLES,
// KUBEPROXY-SRC-IPVS, KUBEPROXY-SRC-NFTABLES) would name the wrong cause: a sysctl or /sys file it
// may not write, IPVS sync-time disagreements with the kernel, an nft without JSON. Message
// formats from k8s.io/kubernetes (pkg/proxy/util/utils.go "can't set sysctl %s to %d: %v", older
// "can't set sysctl %s: %v"; pkg/proxy/conntrack/sysctls.go writes
// /sys/module/nf_conntrack/parameters/hashsize; pkg/proxy/ipvs/graceful_termination.go "failed
// to delete rs %q, can't find the real server"; pkg/proxy/ipvs/netlink_linux.go "error unbind
// address: %s from interface: %s, err: %v"), github.com/moby/ipvs ipvs_linux.go ("Expected only
// one service obtained=%d", netlink_linux.go "Could not get ipvs family information from the
// kernel…") and sigs.k8s.io/knftables (runs nft --json).
const refKubeProxyConf = "https://kubernetes.io/docs/reference/config-api/kube-proxy-config.v1alpha1/"

const (
	kpIPVSStateCause = "kube-proxy's IPVS sync found the kernel's IPVS table or the kube-ipvs0 addresses other than it " +
		"expected ({what}): something else changed them — a second kube-proxy, kube-router or keepalived managing IPVS " +
		"on the same node, a manual ipvsadm -C — the entry was already gone (graceful termination deleting a real " +
		"server that was removed meanwhile), or the kernel added an address kube-proxy never set (an IPv6 link-local " +
		"address on kube-ipvs0). kube-proxy retries on the next sync; it matters only when it repeats for one service. " +
		"The ip_vs modules are loaded (IPVS answered)."
	kpIPVSStateFix = "ipvsadm -Ln and ip addr show kube-ipvs0: make sure only kube-proxy manages IPVS on the node (no " +
		"keepalived virtual_server, kube-router service proxy or second kube-proxy); disable IPv6 address generation on " +
		"the dummy (sysctl -w net.ipv6.conf.kube-ipvs0.disable_ipv6=1); upgrade kube-proxy if it repeats (graceful " +
		"termination and sync fixes landed through 1.1x)."
)

const (
	kpIPVSSchedCause = "The kernel refused IPVS service[[ {svc}]] with ENOENT: the scheduler module the service asks for " +
		"(ip_vs_rr by default; ip_vs_wrr, ip_vs_sh, ip_vs_lc …) is not loaded and kube-proxy's container cannot load it " +
		"(no /lib/modules mounted), so the kernel finds no such scheduler. The service gets no IPVS entry and " +
		"ClusterIPs do not answer."
	kpIPVSSchedFix = "On the host: modprobe -a ip_vs ip_vs_rr ip_vs_wrr ip_vs_sh nf_conntrack and persist them in " +
		"/etc/modules-load.d/ipvs.conf (plus the module of ipvs.scheduler if another one is configured); dmesg shows " +
		"\"Scheduler module ip_vs_<name> not found\"; then restart kube-proxy."
)

func kubeProxyRuntimeSignatures() []Signature {
	return []Signature{
		{
			ID: "KUBEPROXY-SYSCTL-NOT-WRITABLE", Component: "kube-proxy", Severity: SevError,
			Title:   "kube-proxy may not write a sysctl it needs",
			Literal: "can't set sysctl",
			Pattern: `can't set sysctl (?P<key>[\w/.-]+)(?: to \d+)?: (?:open \S+: )?(?P<reason>read-only file system|permission denied|operation not permitted)`,
			Cause: "kube-proxy could not write {key} ({reason}) and stops creating its proxier: its /proc/sys is read-only — it " +
				"runs unprivileged (kube-proxy must be a privileged container), in an unprivileged LXC or a rootless/nested " +
				"container runtime, or an AppArmor/SELinux profile denies the write (containerd's default AppArmor profile " +
				"does for non-privileged containers). net/ipv4/conf/all/route_localnet is set for NodePorts on localhost, " +
				"net/ipv4/vs/* for the IPVS mode, net/netfilter/nf_conntrack_* for conntrack limits.",
			Fix: "Run kube-proxy privileged (securityContext.privileged: true, as kubeadm's DaemonSet does) on a host or a " +
				"privileged container; set the key on the host first (sysctl -w {key}=1 with dots), or avoid it: " +
				"iptables.localhostNodePorts: false (--iptables-localhost-nodeports=false) for route_localnet, " +
				"conntrack.maxPerCore: 0 for the conntrack keys.",
			Refs: []string{"https://github.com/kubernetes/kubernetes/blob/master/pkg/proxy/util/utils.go", refKubeProxyConf},
		},
		{
			ID: "KUBEPROXY-CONNTRACK-HASHSIZE", Component: "kube-proxy", Severity: SevError,
			Title:   "kube-proxy cannot raise the conntrack hash size",
			Literal: "nf_conntrack/parameters/hashsize",
			Pattern: `/sys/module/nf_conntrack/parameters/hashsize: (?P<reason>operation not supported|read-only file system|permission denied|no such file or directory)`,
			Cause: "kube-proxy raises nf_conntrack's hash size by writing /sys/module/nf_conntrack/parameters/hashsize and this " +
				"failed ({reason}): /sys is read-only where it runs (kind, Docker-in-Docker, LXC, an unprivileged container), or " +
				"nf_conntrack is built into the kernel or not loaded. kube-proxy exits before it programs any rule.",
			Fix: "Set conntrack.maxPerCore: 0 (and conntrack.min: 0) in the KubeProxyConfiguration (--conntrack-max-per-core=0) so " +
				"kube-proxy leaves the conntrack limits alone, or run it privileged on a host with nf_conntrack loaded (modprobe " +
				"nf_conntrack).",
			Refs: []string{"https://github.com/kubernetes/kubernetes/blob/master/pkg/proxy/conntrack/sysctls.go", refKubeProxyConf},
		},
		{
			ID: "KUBEPROXY-IPVS-RS-GONE", Component: "kube-proxy", Severity: SevError,
			Title:   "kube-proxy's IPVS state differs from the kernel's (real server already gone)",
			Literal: "can't find the real server",
			Pattern: `(?P<what>[Ff]ailed to delete rs "?(?P<rs>[^",]+)"?, can't find the real server)`,
			Cause:   kpIPVSStateCause,
			Fix:     kpIPVSStateFix,
			Refs:    []string{"https://github.com/kubernetes/kubernetes/blob/master/pkg/proxy/ipvs/graceful_termination.go"},
		},
		{
			ID: "KUBEPROXY-IPVS-SERVICE-MISSING", Component: "kube-proxy", Severity: SevError,
			Title:   "kube-proxy's IPVS state differs from the kernel's (service not found)",
			Literal: "Expected only one service",
			Pattern: `(?P<what>Expected only one service obtained=\d+)`,
			Cause:   kpIPVSStateCause,
			Fix:     kpIPVSStateFix,
			Refs:    []string{"https://github.com/moby/ipvs/blob/master/ipvs_linux.go"},
		},
		{
			ID: "KUBEPROXY-IPVS-UNBIND", Component: "kube-proxy", Severity: SevError,
			Title:   "kube-proxy could not remove a service address from kube-ipvs0",
			Literal: "error unbind address",
			Pattern: `(?P<what>error unbind address: (?P<addr>\S+) from interface: (?P<dev>\S+), err: (?P<reason>[^"\n]+))`,
			Cause:   kpIPVSStateCause,
			Fix:     kpIPVSStateFix,
			Refs:    []string{"https://github.com/kubernetes/kubernetes/blob/master/pkg/proxy/ipvs/netlink_linux.go"},
		},
		{
			// The kernel answers ENOENT to IPVS_CMD_NEW_SERVICE when the service's scheduler module
			// (ip_vs_rr, ip_vs_wrr, ip_vs_sh …) is not loaded: net/netfilter/ipvs/ip_vs_ctl.c
			// ip_vs_add_service, "Scheduler module ip_vs_%s not found" in the kernel log.
			// kube-proxy: pkg/proxy/ipvs/proxier.go "Failed to add IPVS service" / "Failed to sync service".
			ID: "KUBEPROXY-IPVS-SCHEDULER-MISSING", Component: "kube-proxy", Severity: SevError,
			Title:   "IPVS refused a service: its scheduler module is not loaded",
			Literal: "IPVS service",
			Pattern: `Failed to add IPVS service (?P<svc>"[^"]+"|\S+): no such file or directory`,
			Cause:   kpIPVSSchedCause,
			Fix:     kpIPVSSchedFix,
			Refs:    []string{"https://github.com/torvalds/linux/blob/master/net/netfilter/ipvs/ip_vs_ctl.c", "https://kubernetes.io/docs/reference/networking/virtual-ips/#proxy-mode-ipvs"},
		},
		{
			ID: "KUBEPROXY-IPVS-SYNC-ENOENT", Component: "kube-proxy", Severity: SevError,
			Title:   "IPVS refused a service: its scheduler module is not loaded",
			Literal: "Failed to sync service",
			Pattern: `Failed to sync service: (?P<svc>\S+?),? err: no such file or directory`,
			Cause:   kpIPVSSchedCause,
			Fix:     kpIPVSSchedFix,
			Refs:    []string{"https://github.com/torvalds/linux/blob/master/net/netfilter/ipvs/ip_vs_ctl.c", "https://kubernetes.io/docs/reference/networking/virtual-ips/#proxy-mode-ipvs"},
		},
		{
			ID: "IPVS-NOT-IN-KERNEL", Component: "kube-proxy", Severity: SevError,
			Title:   "the kernel answered no IPVS family (ip_vs not loaded)",
			Literal: "ipvs family information",
			Pattern: `Could not get ipvs family information from the kernel`,
			Cause: "The IPVS generic-netlink family is not registered: the ip_vs module is not loaded or not built for this " +
				"kernel, so nothing that uses IPVS (kube-proxy's IPVS mode, Docker's service load balancing) can program it.",
			Fix: "modprobe ip_vs ip_vs_rr ip_vs_wrr ip_vs_sh and persist them in /etc/modules-load.d/; if modprobe finds no module " +
				"use a kernel with CONFIG_IP_VS, or run kube-proxy in iptables/nftables mode.",
			Refs: []string{"https://github.com/moby/ipvs/blob/master/netlink_linux.go"},
		},
		{
			ID: "KUBEPROXY-NFT-NO-JSON", Component: "kube-proxy", Severity: SevError,
			Title:   "the nft command has no JSON support (kube-proxy's nftables mode needs it)",
			Literal: "JSON support not compiled-in",
			Pattern: `JSON support not compiled-in`,
			Cause: "The nft binary kube-proxy runs was built without JSON support, and kube-proxy's nftables mode (knftables) " +
				"reads the ruleset with nft --json, so it cannot list or sync its rules: a minimal or self-built nftables " +
				"(configured without --with-json) in the image or on the host.",
			Fix: "Use an nftables built with JSON (distribution packages link libjansson; nft -V lists json: yes) in the kube-proxy " +
				"image or on the host, or run kube-proxy in iptables mode.",
			Refs: []string{"https://github.com/kubernetes-sigs/knftables/blob/main/nftables.go", "https://kubernetes.io/docs/reference/networking/virtual-ips/#proxy-mode-nftables"},
		},
	}
}
