package diagnose

// eventSignatures: Kubernetes events as shown by kubectl describe / kubectl get events that no
// component family explains more specifically.
func eventSignatures() []Signature {
	return []Signature{
		{
			ID: "EVENTS-SANDBOX-FAILED", Component: "events", Severity: SevError, Fallback: true,
			Title: "pod sandbox creation failed",
			// Older kubelets wrote "Failed create pod sandbox".
			Literal: "create pod sandbox",
			Pattern: `Failed (?:to )?create pod sandbox: (?P<reason>.+)`,
			Cause:   "The runtime could not create the pod's sandbox (pause container + network): {reason}",
			Fix:     "Fix the reason (CNI conf, HNS network, pause image); kubectl describe pod shows the latest attempt.",
			Refs:    []string{refWinTroubleshoot},
		},
		{
			ID: "EVENTS-NETWORK-NOT-READY", Component: "events", Severity: SevError, Fallback: true,
			Title:   "runtime network not ready",
			Literal: "container runtime network not ready",
			Pattern: `container runtime network not ready:? ?(?P<detail>(?:[^"\\]|\\.)*)`,
			Cause:   "The node's CNI is not ready: {detail}",
			Fix:     "Check the CNI conf and plugin binaries in containerd's conf_dir/bin_dir, and that the HNS network exists; restart containerd.",
			Refs:    []string{refWinTroubleshoot},
		},
		{
			ID: "EVENTS-INVALID-DISK-CAPACITY", Component: "events", Severity: SevInfo,
			Title:   "invalid capacity 0 on image filesystem (start-up)",
			Literal: "invalid capacity 0 on image filesystem",
			Pattern: `invalid capacity 0 on image filesystem`,
			Cause:   "Emitted once when kubelet starts before the runtime reports image-filesystem stats. Noise unless it repeats.",
			Fix:     "Nothing to fix unless it repeats; then check `crictl imagefsinfo`.",
			Refs:    []string{refWinTroubleshoot},
		},
		{
			ID: "EVENTS-FAILED-MOUNT", Component: "events", Severity: SevError,
			Title:   "volume mount failed",
			Literal: "MountVolume.SetUp failed for volume",
			Pattern: `MountVolume\.SetUp failed for volume \\?"(?P<volume>[^"\\]+)\\?"\s*:?\s*(?P<reason>.*)`,
			Cause:   "Volume {volume} could not be mounted: {reason}",
			Fix:     "Check the volume source exists (secret/configMap name, SMB share credentials, FlexVolume/CSI driver on the node).",
			Refs:    []string{"https://kubernetes.io/docs/concepts/storage/volumes/"},
		},
	}
}
