package diagnose

// kubeProxyLinuxSignatures: kube-proxy on Linux nodes (iptables, ipvs, nftables, conntrack). The
// file name avoids the _linux suffix, which would make it a Linux-only build file.
func kubeProxyLinuxSignatures() []Signature {
	return []Signature{
		{
			// iptables proxier: "Failed to execute iptables-restore" (klog structured, err= inline or
			// wrapped as err=< with the reason on the next lines; older: "Failed to execute
			// iptables-restore: exit status 2 (...)", "Failed to execute iptables-restore for nat: ...").
			// The second alternative is the continuation line of err=< as journald prints it.
			ID: "KUBEPROXY-IPTABLES-RESTORE-FAILED", Component: "kube-proxy", Severity: SevError,
			Title:   "kube-proxy's iptables-restore batch was rejected",
			Literal: "tables-restore",
			Pattern: `Failed to execute (?P<tool>ip6?tables-restore)(?: for (?P<table>\w+))?(?:.*?(?P<detail>line \d+ failed|Bad argument ` + "`" + `[^'"]+'|unknown option "[^"]+"|Couldn't load (?:match|target) ` + "`" + `[^']+'))?` +
				`|exit status \d+: (?P<tool>ip6?tables-restore) v(?P<version>[\d.]+)(?: \((?P<backend>nf_tables|legacy)\))?: (?P<detail>.+)$`,
			Cause: "kube-proxy writes all its rules in one {tool} transaction; the kernel/iptables rejected it[[ ({detail})]], so none of that batch was " +
				"applied and Service changes are not programmed on this node. Known causes: the iptables kube-proxy runs and the host's iptables " +
				"disagree (nf_tables vs legacy backend, or a version that lacks an option or extension such as --xor-mark), a rule names a chain or " +
				"match that does not exist (Bad argument `KUBE-SVC-…'), or a bug of a particular iptables version (\"line N failed\"). With err=< the " +
				"reason is on the following lines.",
			Fix: "Compare iptables --version on the host and in the kube-proxy container (kubectl -n kube-system exec <kube-proxy pod> -- iptables --version): " +
				"both must use the same backend — do not mix iptables-legacy and iptables-nft rules on one node; load the missing xt_* modules; for " +
				"\"line N failed\" run kube-proxy with -v=5 (or iptables-save) to see the rejected rule; upgrade kube-proxy/iptables, or switch to the " +
				"nftables or ipvs mode.",
			Refs: []string{"https://github.com/kubernetes/kube-proxy/issues/25", "https://github.com/kubernetes/kubernetes/issues/112292",
				"https://github.com/kubernetes/kubernetes/issues/36652"},
		},
		{
			// iptables proxier syncProxyRules: "Failed to ensure chain jumps" err=< ... (current) and
			// "Failed to ensure that filter chain INPUT jumps to KUBE-...: ... Couldn't load match `x'" (old).
			ID: "KUBEPROXY-IPTABLES-MATCH-MISSING", Component: "kube-proxy", Severity: SevError,
			Title:   "kube-proxy cannot install its iptables jump rules",
			Literal: "Failed to ensure ",
			Pattern: `Failed to ensure chain jumps"?(?: err=(?:<|"(?P<err>[^"]*)"))?|Failed to ensure that \w+ chain \S+ jumps to \S+?: .*Couldn't (?:load|find) match ` + "`" + `(?P<match>[^']+)'`,
			Cause: "kube-proxy could not check or add the rules that jump from the built-in chains (INPUT, OUTPUT, PREROUTING…) into its KUBE-* chains, " +
				"so no Service rule is reached and it retries every sync. In the reported cases the host's iptables lacks a match extension kube-proxy " +
				"uses[[ ({match})]]: ip6tables on nf_tables without conntrack support (\"Couldn't find match `conntrack'\"), or a kernel without " +
				"CONFIG_NETFILTER_XT_MATCH_COMMENT (\"Couldn't load match `comment'\"). The err=< continuation lines name the match[[: {err}]].",
			Fix: "Load the module for the match (modprobe xt_conntrack nf_conntrack xt_comment xt_mark; check zgrep XT_MATCH /proc/config.gz), make " +
				"sure iptables and ip6tables use the same backend as the kernel supports (iptables-nft vs legacy), or use a kernel that has the " +
				"netfilter match modules kube-proxy needs.",
			Refs: []string{"https://github.com/k3s-io/k3s/issues/1812", "https://github.com/k3s-io/k3s/issues/6093"},
		},
		{
			ID: "KUBEPROXY-IPTABLES-NFT-INCOMPATIBLE", Component: "kube-proxy", Severity: SevError,
			Title:   "iptables-nft cannot read a chain that holds raw nft rules",
			Literal: "is incompatible, use 'nft' tool",
			Pattern: `(?P<tool>ip6?tables)(?:-\w+)? v(?P<version>[\d.]+) \(nf_tables\): (?:chain ` + "`?" + `(?P<chain>[^\s` + "`" + `']+)'? in )?table ` + "`?" + `(?P<table>[^\s` + "`" + `']+)'? is incompatible, use 'nft' tool`,
			Cause: "The {table} table[[ (chain {chain})]] holds rules that this iptables-nft ({version}) cannot translate back into iptables syntax — " +
				"rules added with the nft tool, by another agent using nftables, or by a newer iptables-nft — so iptables refuses to list or change it " +
				"and kube-proxy (or any iptables user on the node, e.g. a network policy controller) cannot program its rules.",
			Fix: "nft list table ip {table} to see the foreign rules; move them into their own nft table (not the ip nat/filter tables iptables-nft " +
				"owns) or add them with iptables; use the same iptables version on the host and in the kube-proxy image; or run kube-proxy in " +
				"nftables mode.",
			Refs: []string{"https://github.com/ubicloud/ubicloud/issues/2966", "https://github.com/k3s-io/k3s/issues/11415"},
		},
		{
			ID: "KUBEPROXY-IPTABLES-MODULE-MISSING", Component: "kube-proxy", Severity: SevError,
			Title:   "the kernel has no legacy iptables module",
			Literal: "not found in directory /lib/modules",
			Pattern: `modprobe: FATAL: Module (?P<module>ip6?_tables|ip6?table_\w+|x_tables) not found in directory /lib/modules/?(?P<kernel>\S*)`,
			Cause: "modprobe found no {module} module for the running kernel[[ {kernel}]]: the kernel is built for nftables only (no legacy x_tables " +
				"modules), its extra-modules package is not installed, or /lib/modules does not match the running kernel (upgraded without reboot, " +
				"not mounted into the container). iptables-legacy cannot work, so kube-proxy in iptables mode with the legacy backend fails and restarts.",
			Fix: "Use the iptables-nft backend (update-alternatives --set iptables /usr/sbin/iptables-nft) or run kube-proxy with --proxy-mode=nftables " +
				"(mode: nftables); or install the kernel's modules package (e.g. linux-modules-extra-$(uname -r)) / reboot into the kernel whose modules are installed.",
			Refs: []string{"https://github.com/canonical/microk8s/issues/5525"},
		},
		{
			// pkg/proxy/ipvs: the IPVS mode needs ip_vs, ip_vs_rr, ip_vs_wrr, ip_vs_sh and nf_conntrack
			// (nf_conntrack_ipv4 before Linux 4.19).
			ID: "KUBEPROXY-IPVS-MODULES-MISSING", Component: "kube-proxy", Severity: SevWarning,
			Title:   "IPVS kernel modules missing: kube-proxy falls back to iptables",
			Literal: "kernel modules are not loaded",
			Pattern: `required kernel modules are not loaded: \[(?P<modules>[^\]]*)\]`,
			Cause: "kube-proxy was asked for the IPVS mode but found the kernel modules [{modules}] missing, so it does not use IPVS (it falls back to " +
				"iptables, or fails on recent releases). Causes: the modules are not loaded and /lib/modules is not mounted into the kube-proxy pod; on " +
				"Linux >= 4.19 nf_conntrack_ipv4 was merged into nf_conntrack, which older kube-proxy still asked for; older kube-proxy only looked at " +
				"loaded modules and missed IPVS built into the kernel.",
			Fix: "modprobe -a ip_vs ip_vs_rr ip_vs_wrr ip_vs_sh nf_conntrack (nf_conntrack_ipv4 on kernels < 4.19) and persist them in " +
				"/etc/modules-load.d/ipvs.conf; mount /lib/modules read-only into the kube-proxy pod; upgrade kube-proxy if the kernel is >= 4.19 or has " +
				"IPVS built in; or choose mode: iptables/nftables explicitly.",
			Refs: []string{"https://github.com/kubernetes/kubernetes/issues/63801", "https://github.com/kubernetes/kubernetes/issues/70304"},
		},
		{
			// Older kube-proxy's IPVS check ran modprobe for each module and said so at warning
			// level with its own advice to ignore it (kubernetes v1.12 pkg/proxy/ipvs/proxier.go,
			// LinuxKernelHandler.GetModules); whether IPVS is usable is decided after, from the
			// modules the kernel has, and printed as "required kernel modules are not loaded"
			// (KUBEPROXY-IPVS-MODULES-MISSING) or "can't use the IPVS proxier".
			ID: "KUBEPROXY-IPVS-MODPROBE", Component: "kube-proxy", Severity: SevInfo,
			Title:   "kube-proxy could not modprobe an IPVS module itself (harmless when the host loaded it)",
			Literal: "with modprobe",
			Pattern: `Failed to load kernel module (?P<modules>\S+) with modprobe`,
			Cause: "kube-proxy tried modprobe {modules} from inside its container, where /lib/modules is usually not mounted; kube-proxy says " +
				"itself that this can be ignored. It matters only if a \"required kernel modules are not loaded\" or \"can't use the IPVS proxier\" " +
				"line follows (nf_conntrack_ipv4 was merged into nf_conntrack in Linux 4.19).",
			Fix:  "Nothing on its own; if IPVS is wanted and not used, load the modules on the host (modprobe -a ip_vs ip_vs_rr ip_vs_wrr ip_vs_sh nf_conntrack).",
			Refs: []string{"https://github.com/kubernetes/kubernetes/blob/v1.12.0/pkg/proxy/ipvs/proxier.go"},
		},
		{
			// ipset cannot resolve protocol names without /etc/protocols.
			ID: "KUBEPROXY-IPSET-NO-PROTOCOLS", Component: "kube-proxy", Severity: SevError,
			Title:   "ipset cannot parse 'tcp' (no /etc/protocols in the image)",
			Literal: "is invalid as number",
			Pattern: `ipset v(?P<version>[\d.]+): Syntax error: '(?P<proto>tcp|udp|sctp)' is invalid as number`,
			Cause: "ipset (v{version}) could not translate the protocol name '{proto}' because /etc/protocols (and /etc/services) is missing where it " +
				"runs — a kube-proxy image built without them (self-built or some arm images, early 1.10/1.11 images); ipvs-mode kube-proxy cannot add " +
				"its Service entries to the ipsets.",
			Fix: "Use the upstream kube-proxy image of a fixed release, or add /etc/protocols and /etc/services to the image (install netbase) or mount " +
				"the host's files into the kube-proxy pod.",
			Refs: []string{"https://github.com/kubernetes/kubernetes/issues/68703", "https://github.com/kubernetes/kubernetes/issues/79400"},
		},
		{
			// pkg/proxy/ipvs ipset.go: "Failed to make sure ip set: ... exist, error: error creating ipset X",
			// "Failed to add entry: ... to ip set: X, error: ...", and the start-up check
			// "can't use the IPVS proxier: error getting ipset version".
			ID: "KUBEPROXY-IPSET-FAILED", Component: "kube-proxy", Severity: SevError,
			Title:   "ipvs-mode kube-proxy cannot run ipset",
			Literal: "ipset",
			Pattern: `Failed to make sure ip set: .*error creating ipset (?P<set>[\w-]+)|Failed to add entry: (?P<entry>\S+) to ip set: (?P<set>[\w-]+)|(?P<check>error getting ipset version)`,
			Cause: "The ipset command kube-proxy runs in IPVS mode failed[[ for the set {set}]][[ (entry {entry})]][[ ({check})]]; the line only has its exit " +
				"status. Known causes: the kernel's ip_set modules are missing or cannot be loaded (ipset version also asks the kernel), the set " +
				"type or an option kube-proxy uses is not supported by this kernel/ipset (CentOS 7 with 1.11.0), a set of the same name but another " +
				"type left by an older kube-proxy, or an ipset too old to parse the entries.",
			Fix: "Run the command by hand in the kube-proxy container to see ipset's message (ipset version; ipset create TEST hash:ip,port,ip " +
				"family inet hashsize 1024 maxelem 65536 -exist); lsmod | grep ip_set and modprobe ip_set ip_set_hash_ip ip_set_hash_ipport " +
				"ip_set_hash_ipportip ip_set_hash_ipportnet ip_set_bitmap_port; ipset destroy stale KUBE-* sets after an upgrade; upgrade kube-proxy; " +
				"or use the iptables/nftables mode where the kernel has no ipset support.",
			Refs: []string{"https://github.com/kubernetes/kubernetes/issues/67292", "https://github.com/kubernetes/kubernetes/issues/65611",
				"https://github.com/kubernetes/kubernetes/issues/77265", "https://github.com/dyrnq/install-docker/issues/24"},
		},
		{
			ID: "KUBEPROXY-CONNTRACK-MISSING", Component: "kube-proxy", Severity: SevError,
			Title:   "the conntrack binary is not installed",
			Literal: "ooking for path of conntrack",
			Pattern: `[Ll]ooking for path of conntrack: exec: "conntrack": executable file not found`,
			Cause: "kube-proxy shells out to the conntrack tool to flush stale connection-tracking entries when UDP endpoints change, and the host " +
				"(or image) has no conntrack binary. Stale entries then keep sending UDP traffic (DNS, for one) to deleted pods.",
			Fix:  "Install the conntrack package on the node (apt-get install conntrack / dnf install conntrack-tools) — kubeadm's preflight checks for it — and restart kube-proxy.",
			Refs: []string{"https://github.com/kubernetes-retired/contrib/issues/1816", "https://github.com/rootsongjc/kubernetes-handbook/issues/19"},
		},
		{
			ID: "KUBEPROXY-CONNTRACK-SYSCTL-MISSING", Component: "kube-proxy", Severity: SevError,
			Title:   "nf_conntrack sysctls missing (module not loaded)",
			Literal: "/proc/sys/net/netfilter/nf_conntrack_",
			Pattern: `open (?P<path>/proc/sys/net/netfilter/nf_conntrack_\w+): no such file or directory`,
			Cause: "kube-proxy sets conntrack limits at start-up and {path} does not exist: the nf_conntrack module is not loaded (nothing loaded " +
				"it — e.g. a host with nftables but no iptables rules, or a minimal image), so kube-proxy exits.",
			Fix: "modprobe nf_conntrack and persist it (echo nf_conntrack > /etc/modules-load.d/k8s.conf); or set conntrack.maxPerCore: 0 (and " +
				"conntrack.min: 0) in the KubeProxyConfiguration to leave the limits alone.",
			Refs: []string{"https://github.com/kubernetes/kops/issues/17915"},
		},
		{
			// nftables proxier: every log line carries ipFamily; the err value names the nft failure.
			ID: "KUBEPROXY-NFT-FAILED", Component: "kube-proxy", Severity: SevError,
			Title:   "kube-proxy (nftables mode) cannot run nft",
			Literal: `ipFamily="IPv`,
			Pattern: `"(?:Failed to list existing (?:sets|maps|chains|tables)|nftables sync failed|Failed to run nft)" err="(?P<err>(?:[^"]*?(?P<segv>segmentation fault))?[^"]*)".*ipFamily="(?P<family>IPv[46])"`,
			Cause: "kube-proxy's nftables proxier ({family}) could not run nft ({err}); Service rules are not synced on this node.[[ nft crashed " +
				"({segv}): the nft in the kube-proxy image segfaults on sets created by a newer nft (1.1.3+) on the host.]]",
			Fix: "Run nft list ruleset inside the kube-proxy container to reproduce; find the host tables/sets written by a newer nft (nft list tables " +
				"on the host) and move or drop them, use a kube-proxy image with a current nft, or switch to the iptables mode until fixed.",
			Refs: []string{"https://github.com/kubernetes/kubernetes/issues/136786"},
		},
		{
			// nft -f /dev/stdin as kube-proxy (knftables) runs it.
			ID: "KUBEPROXY-NFT-RULE-REJECTED", Component: "kube-proxy", Severity: SevError,
			Title:   "nft rejected a rule (missing nftables kernel support)",
			Literal: "Could not process rule",
			Pattern: `(?P<file>/dev/stdin|[\w/.-]+\.nft):(?P<line>\d+):[\d-]+: Error: Could not process rule: (?P<reason>No such file or directory|Operation not supported)`,
			Cause: "nft rejected line {line} of the batch it read from {file} with \"{reason}\"; the whole transaction is dropped, so kube-proxy " +
				"(nftables mode) programs nothing. The kernel lacks an nftables expression the rule uses — kube-proxy needs e.g. fib " +
				"(CONFIG_NFT_FIB_IPV4/IPV6) for its local-address checks, ct and numgen — or the rule refers to a table, chain or set that does not exist.",
			Fix: "Check the kernel (zgrep -E 'NFT_FIB|NFT_CT|NFT_NUMGEN' /proc/config.gz; modprobe nft_fib_ipv4 nft_fib_ipv6 nft_fib_inet), use a " +
				"kernel built with the nftables expressions kube-proxy needs, or run kube-proxy in the iptables mode.",
			Refs: []string{"https://github.com/siderolabs/pkgs/issues/951"},
		},
		{
			ID: "KUBEPROXY-NO-HOST-IP", Component: "kube-proxy", Severity: SevError,
			Title:   "kube-proxy could not pick a host IP",
			Literal: "failed to select a host interface",
			Pattern: `failed to select a host interface: (?P<detail>[^"]+)`,
			Cause: "kube-proxy had no node IP from the Node object or --bind-address and found no interface to take it from ({detail}): no default " +
				"route, or the interface on it has no global unicast address yet (kube-proxy started before the network was up).",
			Fix: "Check ip route show default and ip -4 addr; start kube-proxy after the network (After=network-online.target), or set " +
				"--bind-address / bindAddress (and hostnameOverride so the Node IP is found) explicitly.",
			Refs: []string{"https://github.com/kubernetes/kubernetes/issues/16785"},
		},
		{
			ID: "KUBEPROXY-HEALTHZ-PORT-IN-USE", Component: "kube-proxy", Severity: SevError,
			Title:   "kube-proxy's healthz port is already taken",
			Literal: "Failed to start node healthz",
			Pattern: `Failed to start node healthz on (?P<addr>\S+?):? listen \S+ \S+ bind: (?:address already in use|Only one usage of each socket address)`,
			Cause: "Another process already listens on kube-proxy's health check address {addr} (10256 by default): usually a second kube-proxy " +
				"(a leftover systemd or static kube-proxy next to the DaemonSet, or two DaemonSets), so two proxies program this node and the load " +
				"balancer health checks reach the wrong one.",
			Fix: "ss -ltnp 'sport = :10256' (Windows: netstat -ano | findstr 10256) to find the owner; stop the duplicate kube-proxy, or move " +
				"healthzBindAddress if another service needs the port.",
			Refs: []string{"https://github.com/kubernetes/kubernetes/issues/85483"},
		},
		{
			// iptables/ipvs proxier: "can't open %s, skipping this externalIP|nodePort: %v" (old, also an
			// event) and "can't open port, skipping it" err=... port=... (structured).
			ID: "KUBEPROXY-PORT-IN-USE", Component: "kube-proxy", Severity: SevWarning,
			Title:   "kube-proxy could not hold a Service port (already in use)",
			Literal: "can't open",
			Pattern: `can't open (?:"(?P<what>[^"]+)" \((?P<addr>[^)]+)\), skipping this (?P<kind>\w+)|port, skipping it).*?bind: address already in use`,
			Cause: "kube-proxy opens the node ports and external IP ports it programs so that no other process can take them; another process on the " +
				"node already listens on[[ {addr} ({what})]] that address/port, so kube-proxy skipped holding it. The Service rules are still written, " +
				"but a local listener (a hostNetwork pod, a hostPort, keepalived/haproxy, a system service) competes with the Service for that port.",
			Fix:  "ss -ltnp 'sport = :<port>' to find the owner; move the Service's nodePort/externalIP or the other listener so they do not share an address and port.",
			Refs: []string{"https://github.com/redhat-cop/keepalived-operator/issues/68"},
		},
		{
			ID: "KUBEPROXY-NO-HEALTHCHECK-NODEPORT", Component: "kube-proxy", Severity: SevWarning,
			Title:   "local-traffic Service has no health check node port",
			Literal: "has no healthcheck nodeport",
			Pattern: `Service "(?P<service>[^"]+)" has no healthcheck nodeport`,
			Cause: "The Service {service} asks for node-local external traffic (the OnlyLocal annotation / externalTrafficPolicy: Local) but carries no " +
				"health check node port (the service.beta.kubernetes.io/healthcheck-nodeport annotation in 1.5/1.6), so kube-proxy serves no health " +
				"check for it; 1.5/1.6 allocated one only for type LoadBalancer, and logged this on every sync for NodePort Services.",
			Fix: "For type LoadBalancer, let the API server allocate the health check port (recreate the Service, or use spec.externalTrafficPolicy: " +
				"Local / spec.healthCheckNodePort on current releases); for a NodePort Service the message is noise of those releases — upgrade.",
			Refs: []string{"https://github.com/kubernetes/kubernetes/issues/44963", "https://github.com/kubernetes/kubernetes/issues/42888"},
		},
		// "Running modprobe %s failed with message: `%s`, error: %v" is printed by the IPVS netlink
		// library (docker/libnetwork ipvs/netlink.go, later github.com/moby/ipvs), not by kube-proxy
		// itself: kube-proxy's IPVS proxier vendored it (kubernetes v1.8–v1.16 vendor/github.com/docker/
		// libnetwork/ipvs), and dockerd calls it for swarm service load balancing. The library runs the
		// modprobe binary (exec.Command("modprobe", "-va", "ip_vs")), so what failed decides the cause:
		// the binary itself, the program's view of /lib/modules, or the host kernel.
		{
			// A kube-proxy image without the host's modules.dep cannot load ip_vs (Azure/acs-engine#2388).
			ID: "KUBEPROXY-IPVS-MODPROBE-FAILED", Component: "kube-proxy", Severity: SevWarning,
			Title:   "modprobe ip_vs failed: /lib/modules not visible to the program",
			Literal: "Running modprobe ip_vs",
			Pattern: `(?:(?P<program>dockerd|kube-proxy)\b.*?)?Running modprobe (?P<module>ip_vs\w*) failed with message: (?P<message>.*?(?:moddep|modules\.dep|can't change directory to '/lib/modules|/lib/modules[^'\s]*': No such file).*)`,
			Cause: "The program[[ ({program})]] ran modprobe {module} through the IPVS netlink library and modprobe could not read the module index ({message}): " +
				"in a container the host's /lib/modules (modules.dep for the running kernel) is not mounted, or it belongs to another kernel " +
				"(a host upgraded but not rebooted), so IPVS is not available; kube-proxy falls back to iptables.",
			Fix: "Load the modules on the host (modprobe -a ip_vs ip_vs_rr ip_vs_wrr ip_vs_sh nf_conntrack, and list them in " +
				"/etc/modules-load.d), or mount /lib/modules read-only into the pod; reboot a host whose kernel was upgraded; or run " +
				"kube-proxy in iptables/nftables mode.",
			Refs: []string{"https://github.com/Azure/acs-engine/issues/2388", "moby/ipvs netlink.go (formerly docker/libnetwork ipvs/netlink.go)"},
		},
		{
			ID: "IPVS-MODPROBE-BINARY-MISSING", Component: "kube-proxy", Severity: SevWarning,
			Title:   "modprobe ip_vs failed: no modprobe binary in the program's image",
			Literal: "Running modprobe ip_vs",
			Pattern: `(?:(?P<program>dockerd|kube-proxy)\b.*?)?Running modprobe (?P<module>ip_vs\w*) failed with message: .*?(?P<msg>exec: \\?"modprobe\\?": executable file not found in \$PATH)`,
			Cause: "The program[[ ({program})]] tried to load {module} by running modprobe ({msg}): there is no modprobe executable in its PATH: the image it runs " +
				"from (hyperkube and early kube-proxy images, distroless images) ships no kmod, so it cannot load kernel modules itself and " +
				"IPVS is only usable when the host has already loaded them; otherwise kube-proxy falls back to iptables.",
			Fix: "Load the modules on the host before the program starts (modprobe -a ip_vs ip_vs_rr ip_vs_wrr ip_vs_sh nf_conntrack; " +
				"persist them in /etc/modules-load.d/ipvs.conf), or use an image that contains kmod/modprobe; or run kube-proxy in iptables mode.",
			Refs: []string{"moby/ipvs netlink.go (exec.Command(\"modprobe\", …))", "https://kubernetes.io/docs/reference/networking/virtual-ips/#proxy-mode-ipvs"},
		},
		{
			ID: "IPVS-MODULE-NOT-IN-KERNEL", Component: "kernel", Severity: SevWarning,
			Title:   "modprobe ip_vs failed: the running kernel has no such module",
			Literal: "Running modprobe ip_vs",
			Pattern: `(?:(?P<program>dockerd|kube-proxy)\b.*?)?Running modprobe (?P<module>ip_vs\w*) failed with message: .*?(?P<msg>Module (?P<missing>\w+) not found[^\x60]*)`,
			Cause: "The program[[ ({program})]] ran modprobe {module} and modprobe found no such module for the running kernel ({msg}): the " +
				"host's kernel was built without IPVS (minimal, vendor or appliance kernels such as Photon OS or board kernels), or its " +
				"extra-modules package is not installed; IPVS load balancing is unavailable on this host (kube-proxy falls back to iptables; " +
				"dockerd's swarm service load balancing fails).",
			Fix: "Check on the host: modinfo ip_vs; ls /lib/modules/$(uname -r)/kernel/net/netfilter/ipvs. Install the kernel's extra " +
				"modules package (linux-modules-extra-$(uname -r) on Ubuntu) or a kernel with CONFIG_IP_VS=m, or run kube-proxy in iptables/nftables mode.",
			Refs: []string{"moby/ipvs netlink.go", "https://kubernetes.io/docs/reference/networking/virtual-ips/#proxy-mode-ipvs"},
		},
	}
}
