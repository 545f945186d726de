package diagnose

// windowsNoise: error-level kubelet lines that Windows nodes print routinely and that do not mean
// the node is broken. They are classified (severity info) so they neither hide nor pose as the
// real failure. Each entry names the thread where upstream explained it.
type noiseEntry struct {
	id, title, literal, pattern, cause, ref string
}

func windowsNoise() []noiseEntry {
	return []noiseEntry{
		{"KUBELET-WIN-NOISE-SUMMARY-STATS", "Windows kubelet: /stats/summary failed for a container",
			"serving /stats/summary", `HTTP InternalServerError serving /stats/summary: Internal Error: (?:failed to list pod stats|Missing stats)`,
			"Stats were requested for a container that was starting, stopping or already gone (HCS answers 'not valid in the current state', 'Access is denied' or 'does not exist'); the next scrape succeeds.",
			"https://github.com/kubernetes/kubernetes/issues/98509"},
		{"KUBELET-WIN-NOISE-ROOT-STATS", "Windows kubelet: missing stats for the root container",
			"Missing stats for root container", `Missing stats for root container`,
			"The Windows stats provider has no cgroup root; the eviction manager and /stats/summary report it until the first stats arrive.",
			"https://github.com/kubernetes/kubernetes/issues/43993"},
		{"KUBELET-WIN-NOISE-LIST-STATS", "Windows kubelet: ListContainerStats hit a vanished container",
			"ListContainerStats", `ListContainerStats .*failed: .*(?:does not exist|not valid in the current state|Access is denied)`,
			"A container listed a moment earlier was removed before HCS was asked for its properties; harmless unless every call fails.",
			"https://github.com/rancher/rancher/issues/27974"},
		{"KUBELET-WIN-NOISE-LOG-STATS", "Windows kubelet: container log stats unavailable",
			"Unable to fetch container log stats", `Unable to fetch container log stats`,
			"Known kubelet limitation on Windows (fsstats of the pod log directory fails, or Du is not supported on the build); only the log-size metric is missing.",
			"https://github.com/kubernetes/kubernetes/issues/99173"},
		{"KUBELET-WIN-NOISE-PODS-SIGNAL", "Windows kubelet: no 'pods' system container for the allocatable signal",
			"failed to construct signal", `failed to construct signal: \\?"allocatableMemory\.available\\?" error: system container \\?"pods\\?" not found`,
			"Older Windows kubelets had no stats for the 'pods' system container (added by kubernetes/kubernetes#66427); eviction on allocatable memory is simply unavailable.",
			"https://github.com/kubernetes/kubernetes/pull/66427"},
		{"KUBELET-WIN-NOISE-FS-CAPACITY", "Windows kubelet: filesystem capacity not known yet",
			"could not determine capacity for", `could not determine capacity for \\?"(?:runtime|root)\\?" fs\. Info: \{Usage:0 Capacity:0`,
			"At start-up the Windows stats provider reports zero capacity until the first filesystem stats arrive.",
			"https://github.com/kubernetes/kubernetes/issues/43993"},
		{"KUBELET-STATS-EXITED-CONTAINER", "Windows kubelet: stats asked HCS about a container that no longer exists",
			"hcsshim::OpenComputeSystem", `hcsshim::OpenComputeSystem \S+: A virtual machine or container with the specified identifier does not exist`,
			"The kubelet's Windows stats provider opened a container that had already exited (typically an init container); HCS no longer knows it, so that stats call fails (/stats/summary errors on kubelets before 1.19, fixed by kubernetes/kubernetes#90554); the pods are not affected.",
			"https://github.com/kubernetes/kubernetes/issues/90554"},
	}
}

func windowsNoiseSignatures() []Signature {
	var sigs []Signature
	for _, n := range windowsNoise() {
		sigs = append(sigs, Signature{
			ID: n.id, Component: "kubelet", Severity: SevInfo, Title: n.title,
			Literal: n.literal, Pattern: n.pattern,
			Cause: "Known noise on Windows nodes: " + n.cause,
			Fix:   "Nothing to do; it does not explain a NotReady node or a failing pod. Look at the other findings.",
			Refs:  []string{n.ref},
		})
	}
	return sigs
}
