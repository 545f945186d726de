package diagnose

// rke2Signatures: rke2 (and containerd as rke2 runs it) on Windows agents: binaries, temp files
// and named pipes. Sources are the rancher/rke2 threads named on each entry.
func rke2Signatures() []Signature {
	return []Signature{
		{
			// rancher/rke2#2300, #5697, #9276: the agent runs containerd/kubelet by name. Only the node's
			// own components count: tools probed for optionally (nerdctl looking for buildctl,
			// containerd/nerdctl#2752) are missing harmlessly.
			ID: "RKE2-BINARY-NOT-IN-PATH", Component: "rke2", Severity: SevError,
			Title:   "a node binary is not on %PATH%",
			Literal: "executable file not found in %PATH%",
			Pattern: `exec: \\?"(?P<binary>(?:containerd|containerd-shim-runhcs-v1|kubelet|kube-proxy|calico-node|calico-felix|flanneld|rke2|wins|hcsshim|runhcs)(?:\.exe)?)\\?": executable file not found in %PATH%`,
			Cause: "{binary} is started by name and the service's PATH does not contain its directory (rke2 documents adding " +
				"C:\\var\\lib\\rancher\\rke2\\bin and C:\\usr\\local\\bin to the machine PATH; a service keeps the PATH it was created with).",
			Fix: "Add the binary directory to the machine PATH ([Environment]::SetEnvironmentVariable('Path', ..., 'Machine')), then restart the " +
				"service (or reboot) so it sees the new PATH; or start {binary} with an absolute path.",
			Refs: []string{"https://docs.rke2.io/install/quickstart", "https://github.com/rancher/rke2/issues/5697"},
		},
		{
			// rancher/rke2#1454.
			ID: "RKE2-TEMP-ACCESS-DENIED", Component: "rke2", Severity: SevError,
			Title:   "rke2 cannot write a file in the temp folder",
			Literal: "AppData",
			Pattern: `Failed to write (?P<path>\S+?AppData\S+?Temp\S+?): open .*` + reAccessDenied,
			Cause: "The agent writes {path} under the user's temp folder and Windows refuses it: the service runs as another account than " +
				"the profile, or the folder's ACLs/antivirus block it; the resolv.conf for the kubelet is then missing.",
			Fix:  "Run the agent as LocalSystem (as the installer's service does) or give its account write access to its TEMP; exclude the folder from antivirus.",
			Refs: []string{"https://github.com/rancher/rke2/issues/1454"},
		},
		{
			// rancher/rke2#6853: a containerd registered as its own service already owns the pipe.
			ID: "CONTAINERD-PIPE-IN-USE", Component: "containerd", Severity: SevError,
			Title:   "containerd cannot listen on its named pipe: another containerd holds it",
			Literal: "pipe/containerd-containerd",
			Pattern: `failed to get listener for (?:main )?(?:ttrpc )?endpoint: open (?P<pipe>//\./pipe/containerd-containerd\S*): ` + reAccessDenied,
			Cause: "Another containerd (for example one registered with containerd.exe --register-service) is running and owns {pipe}, " +
				"so this one exits; the kubelet may then talk to the wrong containerd with the wrong config.",
			Fix: "Keep exactly one containerd: stop and disable the extra service (Stop-Service containerd; Set-Service containerd -StartupType Disabled, " +
				"or sc.exe delete containerd), then restart the one your node manager runs.",
			Refs: []string{"https://github.com/rancher/rke2/issues/6853"},
		},
		{
			// rancher/rke2#2571.
			ID: "RKE2-RUNTIME-FILE-IN-USE", Component: "rke2", Severity: SevError,
			Title:   "runtime binaries cannot be replaced: file in use",
			Literal: "failed to extract runtime image",
			Pattern: `failed to extract runtime image: open (?P<path>\S+): The process cannot access the file because it is being used by another process`,
			Cause:   "A process from a previous run (containerd, kubelet) still has {path} open, so the new runtime image cannot be unpacked over it.",
			Fix:     "Stop the leftover processes (Get-Process containerd,kubelet | Stop-Process) before restarting the agent; make the service stop its children on exit.",
			Refs:    []string{"https://github.com/rancher/rke2/issues/2571"},
		},
		{
			// k3s/rke2 node password check (pkg/nodepassword): "Node password rejected, duplicate hostname or
			// contents of '/etc/rancher/node/password' may not match server node-passwd entry, try enabling a
			// unique node name with the --with-node-id flag" (rancher/rke2#2939).
			ID: "RKE2-NODE-PASSWORD-REJECTED", Component: "rke2", Severity: SevError,
			Title:   "rke2 server rejected the agent's node password",
			Literal: "Node password rejected",
			Pattern: `Node password rejected, duplicate hostname or contents of '(?P<path>[^']+)' may not match server node-passwd entry`,
			Cause: "The server keeps a password per node name (Secret <node>.node-password.rke2 in kube-system) and this agent presents " +
				"another one ({path}): a second machine uses the same hostname, or this node was reinstalled or its password file " +
				"was deleted after it first joined.",
			Fix: "Give each node a unique name (node-name in config.yaml, or --with-node-id), or, if this is the same node reinstalled, " +
				"delete its old entry on the server (kubectl -n kube-system delete secret <node>.node-password.rke2) and restart the agent.",
			Refs: []string{"https://github.com/rancher/rke2/issues/2939", "https://docs.k3s.io/architecture#how-agent-node-registration-works"},
		},
		{
			// rke2 pkg/windows/calico.go: the Windows agent builds calico-node's kubeconfig from the
			// calico-node service account token; 1.24 no longer auto-creates token Secrets, fixed by
			// requesting a token (rancher/rancher#37745, rancher/rke2#2940).
			ID: "RKE2-CALICO-TOKEN", Component: "rke2", Severity: SevError,
			Title:   "rke2 Windows agent could not get the calico-node token",
			Literal: "could not retrieve calico node token",
			Pattern: `could not retrieve calico node token(?: from the cluster)?`,
			Cause: "The Windows agent writes Calico's kubeconfig with the calico-node service account's token and could not get one: " +
				"from Kubernetes 1.24 no token Secret is created for service accounts, and rke2 releases that still read that " +
				"Secret fail here (fixed by requesting a token); it also fails while the server has not yet deployed Calico (no " +
				"calico-node service account in calico-system).",
			Fix: "Upgrade rke2 on the Windows node to a release with the TokenRequest fix (rancher/rke2#2940); check that the server runs " +
				"Calico (kubectl -n calico-system get sa calico-node) and restart the rke2 service.",
			Refs: []string{"https://github.com/rancher/rancher/issues/37745", "https://github.com/rancher/rke2/pull/2940"},
		},
	}
}

// kubeletFileSignatures: the kubelet's credential files missing on a Windows node.
func kubeletFileSignatures() []Signature {
	return []Signature{
		{
			// kubelet server.go; MicrosoftDocs/Virtualization-Documentation#599: the kubelet looks for
			// /var/lib/kubelet/kubeconfig (on the current drive) and runs without credentials.
			ID: "KUBELET-KUBECONFIG-MISSING", Component: "kubelet", Severity: SevError,
			Title:   "kubelet has no kubeconfig at the path it was given",
			Literal: "Could not load kubeconfig file",
			Pattern: `Could not load kubeconfig file (?P<path>\S+?): (?:GetFileAttributesEx|stat|open) \S+: ` + reFileNotFound,
			Cause: "{path} does not exist, so the kubelet falls back to a default client config: it never reaches the API server and the node " +
				"does not register. On Windows a Unix-style default path resolves on the current drive (C:\\var\\lib\\kubelet\\kubeconfig), " +
				"not where the bundle put the file (C:\\k\\config).",
			Fix:  "Pass --kubeconfig (and --bootstrap-kubeconfig) with absolute Windows paths of the files kubewin rendered; check the service's arguments (sc.exe qc kubelet).",
			Refs: []string{"https://kubernetes.io/docs/reference/command-line-tools-reference/kubelet/"},
		},
		{
			// sig-windows-tools#72: kubelet started by PrepareNode.ps1 before kubeadm join wrote the CA.
			ID: "KUBELET-CLIENT-CA-MISSING", Component: "kubelet", Severity: SevError,
			Title:   "kubelet cannot load its client CA file",
			Literal: "unable to load client CA file",
			Pattern: `unable to load client CA file (?P<path>\S+?): open \S+: ` + reFileNotFound,
			Cause: "{path} (authentication.x509.clientCAFile) does not exist yet: the kubelet service was started before the join step wrote " +
				"the cluster CA, or the config points to a Unix path that resolves elsewhere on Windows.",
			Fix:  "Start the kubelet only after the join/bootstrap wrote the CA (kubewin join orders it), or fix clientCAFile to the real path; then restart kubelet.",
			Refs: []string{"https://github.com/kubernetes-sigs/sig-windows-tools/issues/72"},
		},
	}
}
