package diagnose

// kubeadm's preflight checks, one entry per check, from the messages in
// k8s.io/kubernetes cmd/kubeadm/app/preflight/checks.go and checks_linux.go (v1.37.1; the same
// wordings since 1.1x), cmd/kubeadm/app/util/initsystem and cmd/kubeadm/app/apis/kubeadm/validation,
// and kubernetes/system-validators (validators/docker_validator.go) for SystemVerification.
// kubeadm prints them as "\t[WARNING <check>]: <message>" or "\t[ERROR <check>]: <message>"
// (RunChecks); the entries are warnings, and an [ERROR …] line is an error because kubeadm
// aborts on it (Line.abortsOperation). The message alone (a wrapped or quoted line) matches too.
const refKubeadmChecks = "https://github.com/kubernetes/kubernetes/blob/master/cmd/kubeadm/app/preflight/checks.go"

type preflightEntry struct {
	id, title, literal, pattern, cause, fix string
	sev                                     Severity
}

func kubeadmPreflightChecks() []preflightEntry {
	return []preflightEntry{
		{"KUBEADM-PREFLIGHT-NUMCPU", "kubeadm preflight: too few CPUs for a control-plane node", "available CPUs",
			`the number of available CPUs (?P<have>\d+) is less than the required (?P<need>\d+)`,
			"kubeadm's NumCPU check (control-plane nodes only) counted {have} CPU(s) on this machine; a control-plane node needs " +
				"{need}. As [ERROR NumCPU] it stops kubeadm init / join --control-plane.",
			"Give the machine at least {need} vCPUs (nproc shows what the OS sees), or for a test cluster only pass " +
				"--ignore-preflight-errors=NumCPU.", SevWarning},
		{"KUBEADM-PREFLIGHT-MEM", "kubeadm preflight: too little memory", "is less than the minimum",
			`the system RAM \((?P<have>\d+) MB\) is less than the minimum (?P<need>\d+) MB`,
			"kubeadm's Mem check found {have} MB of RAM; a control-plane node needs at least {need} MB (etcd and the API " +
				"server are evicted or killed below that).",
			"Give the machine more memory (free -m), or for a test cluster only pass --ignore-preflight-errors=Mem.", SevWarning},
		{"KUBEADM-PREFLIGHT-HOSTNAME", "kubeadm preflight: the node name does not resolve", "could not be reached",
			`hostname "(?P<node>[^"]+)" could not be reached`,
			"kubeadm's Hostname check could not resolve the node name {node} to an address: no DNS record and no /etc/hosts " +
				"entry. The node registers under this name; components that reach it by name (kubectl logs/exec through " +
				"the API server with hostname-preferred addresses) fail.",
			"Add the node's address and name to /etc/hosts (or DNS): echo \"<node-ip> {node}\" >> /etc/hosts, or join with " +
				"--node-name set to a name that resolves.", SevWarning},
		{"KUBEADM-PREFLIGHT-SERVICE", "kubeadm preflight: a service is not enabled or not running", "service is not",
			`(?P<svc>[\w.-]+) service is not (?P<state>enabled|active), please run '(?P<cmd>[^']+)'`,
			"kubeadm's Service-{svc} check found the {svc} unit not {state}: it will not start at boot (not enabled) or is " +
				"not running now (not active). For the kubelet kubeadm starts it itself during init/join, but it will not " +
				"come back after a reboot unless enabled.",
			"Run {cmd} (systemctl enable --now {svc}.service).", SevWarning},
		{"KUBEADM-PREFLIGHT-NO-INIT-SYSTEM", "kubeadm preflight: no init system to manage services", "no supported init system",
			`no supported init system detected(?:: (?P<reason>[^\n]+))?`,
			"kubeadm found no init system it can use (systemd or OpenRC on Linux, the Service Control Manager on Windows" +
				"[[: {reason}]]): it runs in a container, in WSL without systemd, or without the rights to query services, " +
				"so it cannot check or start the kubelet and the runtime.",
			"Run kubeadm on the host with systemd (WSL: [boot] systemd=true in /etc/wsl.conf), as root / an elevated " +
				"PowerShell on Windows; or start the kubelet and the runtime yourself.", SevWarning},
		{"KUBEADM-PREFLIGHT-EXECUTABLE", "kubeadm preflight: a program the node needs is not installed", "not found in system path",
			`(?P<exe>[\w.+-]+) not found in system path`,
			"kubeadm's FileExisting-{exe} check did not find {exe} in PATH: the kubelet, kube-proxy or kubeadm call it " +
				"(conntrack, iptables, ip, ethtool, socat for port-forward, nsenter, mount, tc, ebtables; crictl for " +
				"kubeadm's own runtime checks), so the features that use it fail on this node.",
			"Install the package that provides {exe} (apt/dnf install cri-tools conntrack socat ethtool ebtables iproute2 " +
				"iptables); the distribution's kubeadm and kubelet packages depend on them.", SevWarning},
		{"KUBEADM-PREFLIGHT-K8S-VERSION", "kubeadm preflight: kubeadm is older than the Kubernetes version asked for",
			"is greater than kubeadm version",
			`Kubernetes version is greater than kubeadm version[^\n]*?(?:Kubernetes version: (?P<want>[\w.+-]+)\.? Kubeadm version: (?P<have>[\w.+-]+))?`,
			"The control-plane version requested (kubernetesVersion / --kubernetes-version[[, {want}]]) is newer than this " +
				"kubeadm[[ ({have})]]: kubeadm deploys and configures only its own minor version (and the one before), so a " +
				"newer control plane gets flags and manifests it does not support.",
			"Install kubeadm of the cluster's minor version first (then kubelet and kubectl), or request a kubernetesVersion " +
				"of kubeadm's minor.", SevWarning},
		{"KUBEADM-PREFLIGHT-KUBELET-VERSION", "kubeadm preflight: the kubelet's version does not fit the control plane",
			"Kubelet version",
			`(?:the kubelet version is higher than the control plane version|Kubelet version "?(?P<kubelet>[^"\s]+)"? is lower than kubeadm can support)`,
			"kubeadm's KubeletVersion check: the installed kubelet[[ ({kubelet})]] is outside the supported skew — it may not " +
				"be newer than the control plane, nor older than the oldest release this kubeadm supports. A package " +
				"upgrade moved the kubelet past the cluster, or an old kubelet package stayed.",
			"Install the kubelet of the cluster's version (apt-get install kubelet=<version>, then apt-mark hold kubelet " +
				"kubeadm kubectl) and run the join again.", SevWarning},
		{"KUBEADM-PREFLIGHT-DOCKER-CGROUP-DRIVER", "kubeadm preflight: Docker uses the cgroupfs driver", "as the Docker cgroup driver",
			`detected "(?P<driver>\w+)" as the Docker cgroup driver`,
			"Docker runs with the {driver} cgroup driver while kubeadm sets up the kubelet for systemd (the recommended " +
				"driver, kubeadm's default since 1.22): kubelet and runtime must use the same driver, otherwise the kubelet " +
				"does not start (\"misconfiguration: kubelet cgroup driver … is different from docker cgroup driver\") or " +
				"the node becomes unstable under memory pressure.",
			"Set \"exec-opts\": [\"native.cgroupdriver=systemd\"] in /etc/docker/daemon.json and restart Docker (or set the " +
				"kubelet's cgroupDriver to the runtime's), then run kubeadm again.", SevWarning},
		{"KUBEADM-PREFLIGHT-GRAPH-DRIVER", "kubeadm preflight: Docker's storage driver is not in the validator's list", "unsupported graph driver",
			`unsupported graph driver: (?P<driver>\S+)`,
			"kubeadm's SystemVerification (kubernetes/system-validators' Docker check) accepts only the storage drivers its " +
				"release lists, and Docker reports {driver}: an older kubeadm that does not list it yet, or Docker on a " +
				"filesystem that makes it pick vfs/devicemapper. As [ERROR SystemVerification] it stops init/join.",
			"If Docker's driver is overlay2 on ext4/xfs (docker info), upgrade kubeadm or pass " +
				"--ignore-preflight-errors=SystemVerification; otherwise configure Docker for overlay2 on a supported filesystem.", SevWarning},
		{"KUBEADM-PREFLIGHT-DOCKER-VERSION", "kubeadm preflight: Docker is newer than kubeadm validated", "most recently validated version",
			`(?P<runtime>\w+) version is greater than the most recently validated version\.?(?: Docker version: (?P<have>[\w.+-]+)\.?)?`,
			"kubeadm's SystemVerification has not been validated with this Docker release[[ ({have})]]; it only warns and the " +
				"join continues. It explains no failure by itself.",
			"Nothing to do unless the runtime misbehaves; use a runtime version the Kubernetes release notes list.", SevWarning},
		{"KUBEADM-PREFLIGHT-PORT-IN-USE", "kubeadm preflight: a port Kubernetes needs is in use", "is in use",
			`(?:^|[\s:])Port (?P<port>\d+) is in use`,
			"Port {port} is held by another process: a kubelet (10250), API server (6443), scheduler (10259, 10251 before " +
				"1.24), controller-manager (10257, 10252) or etcd (2379-2380) left from an earlier kubeadm init or join, or " +
				"another service. kubeadm's PortOpenCheck stops init/join.",
			"ss -ltnp 'sport = :{port}' names the owner; if it is a leftover cluster component run kubeadm reset -f (it stops " +
				"the static pods), otherwise stop or move that service.", SevError},
		{"KUBEADM-CRISOCKET-NOT-ABSOLUTE", "kubeadm config: criSocket is not a valid socket URL", "path is not absolute",
			`criSocket: Invalid value: "(?P<socket>[^"]+)": path is not absolute`,
			"kubeadm rejected nodeRegistration.criSocket {socket}: it must be an absolute path or a URL with its scheme — " +
				"unix:///var/run/containerd/containerd.sock on Linux, npipe:////./pipe/containerd-containerd on Windows; a " +
				"Windows pipe written without npipe:// (//./pipe/…) is read as a relative path.",
			"Set criSocket (or --cri-socket) to npipe:////./pipe/containerd-containerd on Windows or " +
				"unix:///var/run/containerd/containerd.sock on Linux and run kubeadm again.", SevError},
	}
}

func kubeadmPreflightSignatures() []Signature {
	var sigs []Signature
	for _, e := range kubeadmPreflightChecks() {
		sigs = append(sigs, Signature{
			// The check's own words lead the cause: the entry explains them, the user recognises them.
			ID: e.id, Component: "kubeadm", Severity: e.sev, Title: e.title, Literal: e.literal, Pattern: `(?P<msg>` + e.pattern + `)`,
			Cause: "[[kubeadm: \"{msg}\". ]]" + e.cause, Fix: e.fix,
			Refs: []string{refKubeadmChecks, "https://kubernetes.io/docs/reference/setup-tools/kubeadm/kubeadm-init/#preflight-checks"},
		})
	}
	return sigs
}
