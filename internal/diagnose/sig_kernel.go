package diagnose

// Linux kernel prerequisites of a node, as the tools that meet them first say it: modprobe
// (kmod tools/modprobe.c: "modprobe: FATAL: Module %s not found in directory %s"; the older
// module-init-tools "FATAL: Module %s not found."), sysctl (procps-ng sysctl.c: "sysctl: cannot
// stat /proc/sys/%s: No such file or directory", "sysctl: setting key \"%s\": %s", "sysctl:
// permission denied on key '%s'"), the kernel's overlayfs (fs/overlayfs/super.c), the kubelet's
// and kubeadm's cgroup checks (pkg/kubelet/cm/container_manager_linux.go "Following Cgroup
// subsystem not mounted: %v"; kubernetes/system-validators validators/cgroup_validator.go
// "missing required cgroups: %s", "missing optional cgroups: %s").
const (
	refK8sPrereq   = "https://kubernetes.io/docs/setup/production-environment/container-runtimes/#prerequisite-ipv4-forwarding-optional"
	refKmod        = "https://github.com/kmod-project/kmod/blob/master/tools/modprobe.c"
	refProcpsSysct = "https://gitlab.com/procps-ng/procps/-/blob/master/src/sysctl.c"
)

// kernelSignatures: modules, sysctls, cgroup controllers and filesystems a Linux node needs.
// After the component-specific entries (kube-proxy's own module and sysctl lines come first).
func kernelSignatures() []Signature {
	return []Signature{
		{
			// containerd's optional snapshotters probe their module at start (the aufs plugin runs
			// modprobe aufs; zfs and btrfs check their filesystem) and are skipped when it is absent
			// (containerd snapshots/aufs, "aufs is not supported (modprobe aufs failed: …)"). Before
			// KERNEL-MODULE-MISSING, which is about modules the node needs.
			ID: "KERNEL-MODULE-OPTIONAL-SNAPSHOTTER", Component: "containerd", Severity: SevInfo,
			Title:   "containerd skipped a snapshotter whose kernel module is absent (harmless)",
			Literal: "FATAL: Module",
			Pattern: `FATAL: Module (?P<module>aufs|zfs|btrfs) not found`,
			Cause: "containerd probes its optional {module} snapshotter at start and skips it when the kernel has no {module} " +
				"module; nodes use the overlayfs snapshotter, so this says nothing about a failure.",
			Fix:  "Nothing to do unless the configured snapshotter is {module}.",
			Refs: []string{"https://github.com/containerd/containerd/blob/v1.7.0/snapshots/aufs/aufs.go", refKmod},
		},
		{
			ID: "KERNEL-MODULE-MISSING", Component: "kernel", Severity: SevError,
			Title:   "a kernel module Kubernetes needs does not exist for the running kernel",
			Literal: "FATAL: Module",
			Pattern: `FATAL: Module (?P<module>[\w-]+) not found(?: in directory (?P<dir>/lib/modules/?(?P<kernel>[^\s"\\]*)))?`,
			Cause: "modprobe found no module {module} for the running kernel[[ {kernel}]]: the kernel was built without it (vendor " +
				"and board kernels, e.g. for ARM boards, often lack br_netfilter, ip_vs or vxlan), its modules package is not " +
				"installed (linux-modules-extra), the name does not exist in this kernel version (nf_conntrack_ipv4 was merged " +
				"into nf_conntrack in Linux 4.19), it is built into the kernel (then there is nothing to load), or /lib/modules " +
				"does not match the running kernel (upgraded without a reboot, or not mounted into the container). Every " +
				"Linux node needs overlay and br_netfilter (bridge-nf-call-iptables), kube-proxy's IPVS mode ip_vs and nf_conntrack.",
			Fix: "uname -r and ls /lib/modules/$(uname -r); zgrep -E 'CONFIG_BRIDGE_NETFILTER|CONFIG_IP_VS|CONFIG_NF_CONNTRACK|CONFIG_VXLAN' " +
				"/proc/config.gz (=y: built in, nothing to load; not set: use another kernel); install the kernel's modules " +
				"package (apt install linux-modules-extra-$(uname -r)) or reboot into the kernel whose modules are installed; on " +
				"kernels >= 4.19 load nf_conntrack instead of nf_conntrack_ipv4. Persist the modules in /etc/modules-load.d/k8s.conf.",
			Refs: []string{refKmod, refK8sPrereq},
		},
		{
			ID: "KERNEL-SYSCTL-MISSING", Component: "kernel", Severity: SevError,
			Title:   "a sysctl Kubernetes sets does not exist (its module is not loaded)",
			Literal: "sysctl: ",
			Pattern: `sysctl: (?:cannot stat /proc/sys/(?P<key>[^\s:]+): No such file or directory|setting key "(?P<key>[^"]+)": No such file or directory)`,
			Cause: "The sysctl {key} does not exist in this kernel now: net.bridge.* appear only once the br_netfilter module is " +
				"loaded, net.netfilter.nf_conntrack_* once nf_conntrack is, net.ipv4.vs.* once ip_vs is, net.ipv6.* not at all when " +
				"IPv6 is disabled (ipv6.disable=1). Loading the sysctl file before the module (systemd-sysctl runs early at boot) " +
				"gives the same error; without bridge-nf-call-iptables pod traffic through the bridge bypasses iptables and " +
				"Services break.",
			Fix: "modprobe br_netfilter (or the module the key belongs to), persist it (echo br_netfilter > /etc/modules-load.d/k8s.conf), " +
				"then sysctl --system; if modprobe says the module is not found, see the kernel's configuration.",
			Refs: []string{refProcpsSysct, refK8sPrereq},
		},
		{
			ID: "KERNEL-SYSCTL-DENIED", Component: "kernel", Severity: SevError,
			Title:   "a sysctl cannot be set here (read-only /proc/sys or no permission)",
			Literal: "sysctl: ",
			Pattern: `sysctl: (?:permission denied on key '(?P<key>[^']+)'|setting key "(?P<key>[^"]+)": (?P<reason>Read-only file system|Permission denied|Operation not permitted))`,
			Cause: "sysctl could not set {key}[[ ({reason})]]: it runs in a container or an unprivileged LXC/VM sandbox whose /proc/sys " +
				"is read-only or whose network namespace does not own that key, or without root. The setting Kubernetes needs " +
				"is then not applied on the node.",
			Fix: "Set the key on the host (or the LXC host: lxc config / raw.lxc, privileged container) and run the node as a " +
				"privileged container or a real VM; as root: sysctl -w {key}=<value>.",
			Refs: []string{refProcpsSysct, refK8sPrereq},
		},
		{
			// fs/overlayfs/super.c: "overlayfs: filesystem on '%s' not supported as upperdir",
			// "overlayfs: upper fs does not support tmpfile.", "... RENAME_WHITEOUT.", "overlayfs:
			// upper fs missing required features."
			ID: "KERNEL-OVERLAY-UPPERDIR", Component: "kernel", Severity: SevError,
			Title:   "overlayfs cannot use the container storage's filesystem",
			Literal: "overlayfs: ",
			Pattern: `overlayfs: (?:filesystem on '(?P<path>[^']+)' not supported as upperdir|upper fs (?P<what>does not support [\w ]+|missing required features))`,
			Cause: "The kernel's overlayfs refused the filesystem under the container runtime's storage[[ ({path})]][[: upper fs {what}]]: " +
				"it lacks what an overlay upper layer needs (d_type, xattrs, whiteouts) — ZFS before 2.2, XFS made with ftype=0, " +
				"NFS, ecryptfs, or an overlay/aufs root inside a container or snap. The overlayfs snapshotter cannot create " +
				"containers there.",
			Fix: "Put /var/lib/containerd (or the snapshotter's root) on ext4 or on XFS with ftype=1 (xfs_info shows ftype), or use " +
				"a snapshotter for that filesystem (zfs, native); check with docker info / ctr plugins ls that the overlayfs " +
				"snapshotter is ok.",
			Refs: []string{"https://github.com/torvalds/linux/blob/master/fs/overlayfs/super.c",
				"https://github.com/containerd/containerd/blob/main/docs/snapshotters/README.md"},
		},
		{
			ID: "KERNEL-CGROUP-MISSING", Component: "kernel", Severity: SevError,
			Title:   "a cgroup controller the kubelet needs is not enabled",
			Literal: "missing required cgroups",
			Pattern: `missing required cgroups: (?P<cgroups>[\w ]+)`,
			Cause: "The kernel runs without the[[ {cgroups}]] cgroup controller the kubelet needs (memory above all): Raspberry Pi " +
				"OS and other board images boot with the memory controller disabled, or the kernel was built without it, or " +
				"cgroup v1 hierarchies are not mounted. The kubelet refuses to start and kubeadm's SystemVerification fails.",
			Fix: "Add cgroup_enable=memory cgroup_memory=1 (and for cgroup v2 systemd.unified_cgroup_hierarchy=1) to the kernel " +
				"command line (/boot/firmware/cmdline.txt or /boot/cmdline.txt on Raspberry Pi, GRUB_CMDLINE_LINUX elsewhere), " +
				"reboot, and check grep memory /proc/cgroups (enabled = 1) or cat /sys/fs/cgroup/cgroup.controllers.",
			Refs: []string{"https://github.com/kubernetes/kubernetes/blob/master/pkg/kubelet/cm/container_manager_linux.go",
				"https://github.com/kubernetes/system-validators/blob/master/validators/cgroup_validator.go"},
		},
		{
			ID: "KERNEL-CGROUP-NOT-MOUNTED", Component: "kernel", Severity: SevError,
			Title:   "a cgroup controller the kubelet needs is not enabled",
			Literal: "subsystem not mounted",
			Pattern: `Following Cgroup subsystem not mounted: \[(?P<cgroups>[^\]]+)\]`,
			Cause: "The kernel runs without the[[ {cgroups}]] cgroup controller the kubelet needs (memory above all): Raspberry Pi " +
				"OS and other board images boot with the memory controller disabled, or the kernel was built without it, or " +
				"cgroup v1 hierarchies are not mounted. The kubelet refuses to start and kubeadm's SystemVerification fails.",
			Fix: "Add cgroup_enable=memory cgroup_memory=1 (and for cgroup v2 systemd.unified_cgroup_hierarchy=1) to the kernel " +
				"command line (/boot/firmware/cmdline.txt or /boot/cmdline.txt on Raspberry Pi, GRUB_CMDLINE_LINUX elsewhere), " +
				"reboot, and check grep memory /proc/cgroups (enabled = 1) or cat /sys/fs/cgroup/cgroup.controllers.",
			Refs: []string{"https://github.com/kubernetes/kubernetes/blob/master/pkg/kubelet/cm/container_manager_linux.go",
				"https://github.com/kubernetes/system-validators/blob/master/validators/cgroup_validator.go"},
		},
		{
			ID: "KERNEL-CGROUP-OPTIONAL", Component: "kernel", Severity: SevWarning,
			Title:   "optional cgroup controllers are missing",
			Literal: "missing optional cgroups",
			Pattern: `missing optional cgroups: (?P<cgroups>[\w ]+)`,
			Cause: "kubeadm's SystemVerification found the optional cgroup controllers {cgroups} missing: with cgroup v2 some v1 " +
				"controllers have no counterpart (blkio is io, hugetlb needs huge pages), or the kernel was built without them. " +
				"Only the features that use them (I/O limits, huge pages) are unavailable; the join continues.",
			Fix: "Nothing for a plain node; enable the controllers on the kernel command line or in the kernel only if you use " +
				"those features.",
			Refs: []string{"https://github.com/kubernetes/system-validators/blob/master/validators/cgroup_validator.go"},
		},
	}
}
