package check

import (
	"fmt"
	"regexp"
	"time"
	"unicode"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/component-base/featuregate"
	logsapi "k8s.io/component-base/logs/api/v1"
	tracingapi "k8s.io/component-base/tracing/api/v1"
	utilsysctl "k8s.io/component-helpers/node/util/sysctl"
	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"
	"k8s.io/utils/cpuset"
	"k8s.io/utils/ptr"

	"github.com/kubewin/kubewin/internal/platform"
)

// The kubelet's config validation, k8s.io/kubernetes/pkg/kubelet/apis/config/validation
// (ValidateKubeletConfiguration, v1.37.1), ported check by check to the versioned type after
// setKubeletDefaults: the kubelet runs the same checks on Windows and Linux and exits on any of
// them. kubeletChecks below holds one entry per field, in upstream order, with the kubelet's
// own messages; validateKubeletFeatureGates ports the featureGates step that precedes them.
//
// Not ported: validateKubeletOSConfiguration. On Linux it reads the cgroup mode of the host
// kubewin runs on (the previous implementation cleared the fields it reads for that reason);
// on Windows it rejects singleProcessOOMKill, userNamespaces and defaultPodSysctls, which KW1117
// reports.
//
// Deliberate differences from running the Linux kubelet's code where kubewin runs:
//   - podLogsDir of a Windows configuration is judged with Windows path rules, as the Windows
//     kubelet does (pkg/util/filesystem.IsAbs for Windows), so C:\var\log\pods is absolute.
//   - showHiddenMetricsForVersion is compared with the previous minor of the target release;
//     component-base/metrics compares it with the version of the binary that links it, which
//     for kubewin is not a Kubernetes release.
//
// TestCheckKubeletValidationCoversUpstream runs the real validation over testdata/check/configs
// and fails when the two disagree; FuzzCheckKubeletValidation does the same on any input.

// kubeletCheck is one check of ValidateKubeletConfiguration. Field is the field the finding
// points at; Check returns the kubelet's messages.
type kubeletCheck struct {
	Field string
	Check func(c *kubeletv1beta1.KubeletConfiguration, e *kubeletEnv) []string
}

// kubeletEnv is what a check may consult beside the configuration.
type kubeletEnv struct {
	// Gate is the kubelet's feature gate with the file's featureGates applied.
	Gate featuregate.FeatureGate
	// OS is the operating system the configuration is for.
	OS OSKind
	// Version is the target release.
	Version platform.Version
}

func (e *kubeletEnv) enabled(gate string) bool { return e.Gate.Enabled(featuregate.Feature(gate)) }

func one(cond bool, format string, args ...any) []string {
	if cond {
		return []string{fmt.Sprintf(format, args...)}
	}
	return nil
}

var defaultCFSQuota = metav1.Duration{Duration: 100 * time.Millisecond}

// previousDefaultMemoryThrottlingFactor lets files with the former default (0.9) pass when
// MemoryQoS is off.
const previousDefaultMemoryThrottlingFactor = 0.9

// Enumerations of pkg/kubelet/types (not in the versioned API package).
const (
	allocatablePods                   = "pods"
	allocatableSystemReserved         = "system-reserved"
	allocatableSystemReservedCompress = "system-reserved-compressible"
	allocatableKubeReserved           = "kube-reserved"
	allocatableKubeReservedCompress   = "kube-reserved-compressible"
	allocatableNone                   = "none"
	swapLimited                       = "LimitedSwap"
	swapNone                          = "NoSwap"
)

var kubeletChecks = []kubeletCheck{
	{"nodeLeaseDurationSeconds", func(c *kubeletv1beta1.KubeletConfiguration, _ *kubeletEnv) []string {
		return one(c.NodeLeaseDurationSeconds <= 0, "invalid configuration: nodeLeaseDurationSeconds must be greater than 0")
	}},
	{"systemCgroups", func(c *kubeletv1beta1.KubeletConfiguration, _ *kubeletEnv) []string {
		return one(c.SystemCgroups != "" && c.CgroupRoot == "", "invalid configuration: systemCgroups (--system-cgroups) was specified and cgroupRoot (--cgroup-root) was not specified")
	}},
	{"eventBurst", func(c *kubeletv1beta1.KubeletConfiguration, _ *kubeletEnv) []string {
		return one(c.EventBurst < 0, "invalid configuration: eventBurst (--event-burst) %v must not be a negative number", c.EventBurst)
	}},
	{"eventRecordQPS", func(c *kubeletv1beta1.KubeletConfiguration, _ *kubeletEnv) []string {
		v := ptr.Deref(c.EventRecordQPS, 0)
		return one(v < 0, "invalid configuration: eventRecordQPS (--event-qps) %v must not be a negative number", v)
	}},
	{"healthzPort", func(c *kubeletv1beta1.KubeletConfiguration, _ *kubeletEnv) []string {
		v := ptr.Deref(c.HealthzPort, 0)
		return one(v != 0 && utilvalidation.IsValidPortNum(int(v)) != nil, "invalid configuration: healthzPort (--healthz-port) %v must be between 1 and 65535, inclusive", v)
	}},
	{"cpuCFSQuotaPeriod", func(c *kubeletv1beta1.KubeletConfiguration, e *kubeletEnv) []string {
		p := ptr.Deref(c.CPUCFSQuotaPeriod, metav1.Duration{})
		if !e.enabled("CustomCPUCFSQuotaPeriod") {
			return one(p != defaultCFSQuota, "invalid configuration: cpuCFSQuotaPeriod (--cpu-cfs-quota-period) %v requires feature gate CustomCPUCFSQuotaPeriod", p)
		}
		return one(utilvalidation.IsInRange(int(p.Duration), int(1*time.Millisecond), int(time.Second)) != nil,
			"invalid configuration: cpuCFSQuotaPeriod (--cpu-cfs-quota-period) %v must be between 1ms and 1sec, inclusive", p)
	}},
	{"imageGCHighThresholdPercent", func(c *kubeletv1beta1.KubeletConfiguration, _ *kubeletEnv) []string {
		v := ptr.Deref(c.ImageGCHighThresholdPercent, 0)
		return one(utilvalidation.IsInRange(int(v), 0, 100) != nil, "invalid configuration: imageGCHighThresholdPercent (--image-gc-high-threshold) %v must be between 0 and 100, inclusive", v)
	}},
	{"imageGCLowThresholdPercent", func(c *kubeletv1beta1.KubeletConfiguration, _ *kubeletEnv) []string {
		low, high := ptr.Deref(c.ImageGCLowThresholdPercent, 0), ptr.Deref(c.ImageGCHighThresholdPercent, 0)
		out := one(utilvalidation.IsInRange(int(low), 0, 100) != nil, "invalid configuration: imageGCLowThresholdPercent (--image-gc-low-threshold) %v must be between 0 and 100, inclusive", low)
		return append(out, one(low >= high, "invalid configuration: imageGCLowThresholdPercent (--image-gc-low-threshold) %v must be less than imageGCHighThresholdPercent (--image-gc-high-threshold) %v", low, high)...)
	}},
	{"imageMaximumGCAge", func(c *kubeletv1beta1.KubeletConfiguration, e *kubeletEnv) []string {
		return one(c.ImageMaximumGCAge.Duration != 0 && !e.enabled("ImageMaximumGCAge"), "invalid configuration: ImageMaximumGCAge feature gate is required for Kubelet configuration option imageMaximumGCAge")
	}},
	{"defaultPodSysctls", checkDefaultPodSysctls},
	{"imageMinimumGCAge", func(c *kubeletv1beta1.KubeletConfiguration, _ *kubeletEnv) []string {
		return one(c.ImageMinimumGCAge.Duration < 0, "invalid configuration: imageMinimumGCAge %v must not be negative", c.ImageMinimumGCAge.Duration)
	}},
	{"imageMaximumGCAge", func(c *kubeletv1beta1.KubeletConfiguration, _ *kubeletEnv) []string {
		mx, mn := c.ImageMaximumGCAge.Duration, c.ImageMinimumGCAge.Duration
		out := one(mx < 0, "invalid configuration: imageMaximumGCAge %v must not be negative", mx)
		return append(out, one(mx > 0 && mx <= mn, "invalid configuration: imageMaximumGCAge %v must be greater than imageMinimumGCAge %v", mx, mn)...)
	}},
	{"iptablesDropBit", func(c *kubeletv1beta1.KubeletConfiguration, _ *kubeletEnv) []string {
		v := ptr.Deref(c.IPTablesDropBit, 0)
		return one(utilvalidation.IsInRange(int(v), 0, 31) != nil, "invalid configuration: iptablesDropBit (--iptables-drop-bit) %v must be between 0 and 31, inclusive", v)
	}},
	{"iptablesMasqueradeBit", func(c *kubeletv1beta1.KubeletConfiguration, _ *kubeletEnv) []string {
		v := ptr.Deref(c.IPTablesMasqueradeBit, 0)
		return one(utilvalidation.IsInRange(int(v), 0, 31) != nil, "invalid configuration: iptablesMasqueradeBit (--iptables-masquerade-bit) %v must be between 0 and 31, inclusive", v)
	}},
	{"kubeAPIBurst", func(c *kubeletv1beta1.KubeletConfiguration, _ *kubeletEnv) []string {
		return one(c.KubeAPIBurst < 0, "invalid configuration: kubeAPIBurst (--kube-api-burst) %v must not be a negative number", c.KubeAPIBurst)
	}},
	{"kubeAPIQPS", func(c *kubeletv1beta1.KubeletConfiguration, _ *kubeletEnv) []string {
		v := ptr.Deref(c.KubeAPIQPS, 0)
		return one(v < 0, "invalid configuration: kubeAPIQPS (--kube-api-qps) %v must not be a negative number", v)
	}},
	{"nodeStatusMaxImages", func(c *kubeletv1beta1.KubeletConfiguration, _ *kubeletEnv) []string {
		v := ptr.Deref(c.NodeStatusMaxImages, 0)
		return one(v < -1, "invalid configuration: nodeStatusMaxImages (--node-status-max-images) %v must be -1 or greater", v)
	}},
	{"maxOpenFiles", func(c *kubeletv1beta1.KubeletConfiguration, _ *kubeletEnv) []string {
		return one(c.MaxOpenFiles < 0, "invalid configuration: maxOpenFiles (--max-open-files) %v must not be a negative number", c.MaxOpenFiles)
	}},
	{"maxPods", func(c *kubeletv1beta1.KubeletConfiguration, _ *kubeletEnv) []string {
		return one(c.MaxPods < 0, "invalid configuration: maxPods (--max-pods) %v must not be a negative number", c.MaxPods)
	}},
	{"oomScoreAdj", func(c *kubeletv1beta1.KubeletConfiguration, _ *kubeletEnv) []string {
		v := ptr.Deref(c.OOMScoreAdj, 0)
		return one(utilvalidation.IsInRange(int(v), -1000, 1000) != nil, "invalid configuration: oomScoreAdj (--oom-score-adj) %v must be between -1000 and 1000, inclusive", v)
	}},
	{"podsPerCore", func(c *kubeletv1beta1.KubeletConfiguration, _ *kubeletEnv) []string {
		return one(c.PodsPerCore < 0, "invalid configuration: podsPerCore (--pods-per-core) %v must not be a negative number", c.PodsPerCore)
	}},
	{"port", func(c *kubeletv1beta1.KubeletConfiguration, _ *kubeletEnv) []string {
		return one(utilvalidation.IsValidPortNum(int(c.Port)) != nil, "invalid configuration: port (--port) %v must be between 1 and 65535, inclusive", c.Port)
	}},
	{"readOnlyPort", func(c *kubeletv1beta1.KubeletConfiguration, _ *kubeletEnv) []string {
		return one(c.ReadOnlyPort != 0 && utilvalidation.IsValidPortNum(int(c.ReadOnlyPort)) != nil, "invalid configuration: readOnlyPort (--read-only-port) %v must be between 0 and 65535, inclusive", c.ReadOnlyPort)
	}},
	{"registryBurst", func(c *kubeletv1beta1.KubeletConfiguration, _ *kubeletEnv) []string {
		return one(c.RegistryBurst < 0, "invalid configuration: registryBurst (--registry-burst) %v must not be a negative number", c.RegistryBurst)
	}},
	{"registryPullQPS", func(c *kubeletv1beta1.KubeletConfiguration, _ *kubeletEnv) []string {
		v := ptr.Deref(c.RegistryPullQPS, 0)
		return one(v < 0, "invalid configuration: registryPullQPS (--registry-qps) %v must not be a negative number", v)
	}},
	{"maxParallelImagePulls", func(c *kubeletv1beta1.KubeletConfiguration, _ *kubeletEnv) []string {
		if c.MaxParallelImagePulls == nil {
			return nil
		}
		n := *c.MaxParallelImagePulls
		out := one(n < 1, "invalid configuration: maxParallelImagePulls %v must be a positive number", n)
		return append(out, one(ptr.Deref(c.SerializeImagePulls, false) && n > 1,
			"invalid configuration: maxParallelImagePulls cannot be larger than 1 unless SerializeImagePulls (--serialize-image-pulls) is set to false")...)
	}},
	{"serverTLSBootstrap", func(c *kubeletv1beta1.KubeletConfiguration, e *kubeletEnv) []string {
		return one(c.ServerTLSBootstrap && !e.enabled("RotateKubeletServerCertificate"), "invalid configuration: serverTLSBootstrap %v requires feature gate RotateKubeletServerCertificate", c.ServerTLSBootstrap)
	}},
	{"runOnce", func(c *kubeletv1beta1.KubeletConfiguration, _ *kubeletEnv) []string {
		return one(c.RunOnce, "invalid configuration: runOnce (--runOnce) %v, Runonce mode has been deprecated and should not be set", c.RunOnce)
	}},
	{"registerWithTaints", func(c *kubeletv1beta1.KubeletConfiguration, _ *kubeletEnv) []string {
		var out []string
		for _, t := range c.RegisterWithTaints {
			if checkTaintValidation(t) != nil {
				out = append(out, fmt.Sprintf("invalid taint: %v", t))
			}
			if t.TimeAdded != nil {
				out = append(out, "invalid configuration: taint.TimeAdded is not nil")
			}
		}
		return out
	}},
	{"topologyManagerPolicy", func(c *kubeletv1beta1.KubeletConfiguration, _ *kubeletEnv) []string {
		switch c.TopologyManagerPolicy {
		case kubeletv1beta1.NoneTopologyManagerPolicy, kubeletv1beta1.BestEffortTopologyManagerPolicy,
			kubeletv1beta1.RestrictedTopologyManagerPolicy, kubeletv1beta1.SingleNumaNodeTopologyManagerPolicy:
			return nil
		}
		return []string{fmt.Sprintf("invalid configuration: topologyManagerPolicy (--topology-manager-policy) %q must be one of: %q", c.TopologyManagerPolicy,
			[]string{kubeletv1beta1.NoneTopologyManagerPolicy, kubeletv1beta1.BestEffortTopologyManagerPolicy, kubeletv1beta1.RestrictedTopologyManagerPolicy, kubeletv1beta1.SingleNumaNodeTopologyManagerPolicy})}
	}},
	{"topologyManagerScope", func(c *kubeletv1beta1.KubeletConfiguration, _ *kubeletEnv) []string {
		switch c.TopologyManagerScope {
		case kubeletv1beta1.ContainerTopologyManagerScope, kubeletv1beta1.PodTopologyManagerScope:
			return nil
		}
		return []string{fmt.Sprintf("invalid configuration: topologyManagerScope (--topology-manager-scope) %q must be one of: %q, or %q", c.TopologyManagerScope,
			kubeletv1beta1.ContainerTopologyManagerScope, kubeletv1beta1.PodTopologyManagerScope)}
	}},
	{"shutdownGracePeriod", checkShutdownGracePeriod},
	{"memorySwap.swapBehavior", func(c *kubeletv1beta1.KubeletConfiguration, e *kubeletEnv) []string {
		if !e.enabled("NodeSwap") {
			return one(c.MemorySwap != (kubeletv1beta1.MemorySwapConfiguration{}), "invalid configuration: memorySwap.swapBehavior cannot be set when NodeSwap feature flag is disabled")
		}
		switch c.MemorySwap.SwapBehavior {
		case "", swapNone, swapLimited:
			return nil
		}
		return []string{fmt.Sprintf("invalid configuration: memorySwap.swapBehavior %q must be one of: \"\", %q or %q", c.MemorySwap.SwapBehavior, swapLimited, swapNone)}
	}},
	{"crashLoopBackOff.maxContainerRestartPeriod", func(c *kubeletv1beta1.KubeletConfiguration, e *kubeletEnv) []string {
		p := c.CrashLoopBackOff.MaxContainerRestartPeriod
		if !e.enabled("KubeletCrashLoopBackOffMax") {
			return one(p != nil, "invalid configuration: FeatureGate KubeletCrashLoopBackOffMax not enabled, CrashLoopBackOff.MaxContainerRestartPeriod must not be set")
		}
		if p == nil {
			return []string{"invalid configuration: FeatureGate KubeletCrashLoopBackOffMax is enabled, CrashLoopBackOff.MaxContainerRestartPeriod must be set"}
		}
		return one(utilvalidation.IsInRange(int(p.Duration.Milliseconds()), 1000, 300000) != nil,
			"invalid configuration: CrashLoopBackOff.MaxContainerRestartPeriod (got: %v seconds) must be set between 1s and 300s", p.Seconds())
	}},
	{"enforceNodeAllocatable", checkEnforceNodeAllocatable},
	{"hairpinMode", func(c *kubeletv1beta1.KubeletConfiguration, _ *kubeletEnv) []string {
		switch c.HairpinMode {
		case kubeletv1beta1.HairpinNone, kubeletv1beta1.HairpinVeth, kubeletv1beta1.PromiscuousBridge:
			return nil
		}
		return []string{fmt.Sprintf("invalid configuration: option %q specified for hairpinMode (--hairpin-mode). Valid options are %q, %q or %q",
			c.HairpinMode, kubeletv1beta1.HairpinNone, kubeletv1beta1.HairpinVeth, kubeletv1beta1.PromiscuousBridge)}
	}},
	{"imagePullCredentialsVerificationPolicy", checkImagePullCredentials},
	{"reservedSystemCPUs", func(c *kubeletv1beta1.KubeletConfiguration, _ *kubeletEnv) []string {
		if c.ReservedSystemCPUs == "" {
			return nil
		}
		out := one(c.SystemReservedCgroup != "" || c.KubeReservedCgroup != "",
			"invalid configuration: can't use reservedSystemCPUs (--reserved-cpus) with systemReservedCgroup (--system-reserved-cgroup) or kubeReservedCgroup (--kube-reserved-cgroup)")
		if _, err := cpuset.Parse(c.ReservedSystemCPUs); err != nil {
			out = append(out, fmt.Errorf("invalid configuration: unable to parse reservedSystemCPUs (--reserved-cpus) %v, error: %w", c.ReservedSystemCPUs, err).Error())
		}
		return out
	}},
	{"reservedMemory", checkReservedMemory},
	{"showHiddenMetricsForVersion", func(c *kubeletv1beta1.KubeletConfiguration, e *kubeletEnv) []string {
		if err := showHiddenMetricsError(c.ShowHiddenMetricsForVersion, e.Version, field.NewPath("showHiddenMetricsForVersion")); err != nil {
			return []string{fmt.Sprintf("invalid showHiddenMetricsForVersion: %v", err.Error())}
		}
		return nil
	}},
	{"logging", func(c *kubeletv1beta1.KubeletConfiguration, e *kubeletEnv) []string {
		return errorStrings(logsapi.Validate(&c.Logging, e.Gate, field.NewPath("logging")))
	}},
	{"tracing", func(c *kubeletv1beta1.KubeletConfiguration, e *kubeletEnv) []string {
		return errorStrings(tracingapi.ValidateTracingConfiguration(c.Tracing, e.Gate, field.NewPath("tracing")))
	}},
	{"memoryThrottlingFactor", func(c *kubeletv1beta1.KubeletConfiguration, e *kubeletEnv) []string {
		f := c.MemoryThrottlingFactor
		if f == nil {
			return nil
		}
		out := one(!e.enabled("MemoryQoS") && *f != previousDefaultMemoryThrottlingFactor, "invalid configuration: memoryThrottlingFactor must not be set when MemoryQoS feature gate is disabled")
		return append(out, one(*f <= 0 || *f > 1.0, "invalid configuration: memoryThrottlingFactor %v must be greater than 0 and less than or equal to 1.0", *f)...)
	}},
	{"memoryReservationPolicy", func(c *kubeletv1beta1.KubeletConfiguration, e *kubeletEnv) []string {
		p := c.MemoryReservationPolicy
		out := one(!e.enabled("MemoryQoS") && p == kubeletv1beta1.TieredReservationMemoryReservationPolicy,
			"invalid configuration: memoryReservationPolicy %q requires MemoryQoS feature gate to be enabled", p)
		switch p {
		case kubeletv1beta1.NoneMemoryReservationPolicy, kubeletv1beta1.TieredReservationMemoryReservationPolicy:
			return out
		}
		return append(out, fmt.Sprintf("invalid configuration: option %q specified for memoryReservationPolicy. Valid options are %q or %q", p,
			kubeletv1beta1.NoneMemoryReservationPolicy, kubeletv1beta1.TieredReservationMemoryReservationPolicy))
	}},
	{"containerRuntimeEndpoint", func(c *kubeletv1beta1.KubeletConfiguration, _ *kubeletEnv) []string {
		return one(c.ContainerRuntimeEndpoint == "", "invalid configuration: the containerRuntimeEndpoint was not specified or empty")
	}},
	{"enableSystemLogQuery", func(c *kubeletv1beta1.KubeletConfiguration, e *kubeletEnv) []string {
		q := ptr.Deref(c.EnableSystemLogQuery, false)
		out := one(q && !e.enabled("NodeLogQuery"), "invalid configuration: NodeLogQuery feature gate is required for enableSystemLogQuery")
		return append(out, one(q && !ptr.Deref(c.EnableSystemLogHandler, false), "invalid configuration: enableSystemLogHandler is required for enableSystemLogQuery")...)
	}},
	{"containerLogMaxWorkers", func(c *kubeletv1beta1.KubeletConfiguration, _ *kubeletEnv) []string {
		return one(ptr.Deref(c.ContainerLogMaxWorkers, 0) < 1, "invalid configuration: containerLogMaxWorkers must be greater than or equal to 1")
	}},
	{"containerLogMonitorInterval", func(c *kubeletv1beta1.KubeletConfiguration, _ *kubeletEnv) []string {
		return one(ptr.Deref(c.ContainerLogMonitorInterval, metav1.Duration{}).Duration.Seconds() < 3,
			"invalid configuration: containerLogMonitorInterval must be a positive time duration greater than or equal to 3s")
	}},
	{"containerLogMaxFiles", func(c *kubeletv1beta1.KubeletConfiguration, _ *kubeletEnv) []string {
		return one(ptr.Deref(c.ContainerLogMaxFiles, 0) <= 1, "invalid configuration: containerLogMaxFiles must be greater than 1")
	}},
	{"podLogsDir", checkPodLogsDir},
}

func checkDefaultPodSysctls(c *kubeletv1beta1.KubeletConfiguration, e *kubeletEnv) []string {
	if len(c.DefaultPodSysctls) == 0 {
		return nil
	}
	if !e.enabled("DefaultPodSysctls") {
		return []string{"invalid configuration: DefaultPodSysctls feature gate is required for Kubelet configuration option defaultPodSysctls"}
	}
	var out []string
	seen := sets.New[string]()
	// The kubelet ranges over the map; sorted keys make the report deterministic.
	for _, k := range sets.List(sets.KeySet(c.DefaultPodSysctls)) {
		if !isValidSysctlName(k) {
			out = append(out, fmt.Sprintf("invalid configuration: %q is not a valid sysctl name for defaultPodSysctls", k))
			continue
		}
		if ns, _, _ := utilsysctl.GetNamespace(k); ns == utilsysctl.UnknownNamespace {
			out = append(out, fmt.Sprintf("invalid configuration: %q is not known to be namespaced for defaultPodSysctls", k))
		}
		n := utilsysctl.NormalizeName(k)
		if seen.Has(n) {
			out = append(out, fmt.Sprintf("invalid configuration: duplicate sysctl %q found in defaultPodSysctls", n))
		}
		seen.Insert(n)
	}
	return out
}

// Sysctl names as validation.isValidSysctlName accepts them (from pkg/apis/policy/validation).
var sysctlRegexp = regexp.MustCompile(`^([a-z0-9]([-_a-z0-9]*[a-z0-9])?[\./])*[a-z0-9]([-_a-z0-9]*[a-z0-9])?$`)

func isValidSysctlName(name string) bool {
	return len(name) <= 253 && sysctlRegexp.MatchString(name)
}

func checkShutdownGracePeriod(c *kubeletv1beta1.KubeletConfiguration, e *kubeletEnv) []string {
	var out []string
	p, crit := c.ShutdownGracePeriod, c.ShutdownGracePeriodCriticalPods
	if e.enabled("GracefulNodeShutdown") {
		out = append(out, one(crit.Duration > p.Duration, "invalid configuration: shutdownGracePeriodCriticalPods %v must be <= shutdownGracePeriod %v", crit, p)...)
		out = append(out, one(p.Duration < 0 || (p.Duration > 0 && p.Duration < time.Second), "invalid configuration: shutdownGracePeriod %v must be either zero or otherwise >= 1 sec", p)...)
		out = append(out, one(crit.Duration < 0 || (crit.Duration > 0 && crit.Duration < time.Second), "invalid configuration: shutdownGracePeriodCriticalPods %v must be either zero or otherwise >= 1 sec", crit)...)
	}
	if (p.Duration > 0 || crit.Duration > 0) && !e.enabled("GracefulNodeShutdown") {
		out = append(out, "invalid configuration: specifying shutdownGracePeriod or shutdownGracePeriodCriticalPods requires feature gate GracefulNodeShutdown")
	}
	byPrio := len(c.ShutdownGracePeriodByPodPriority) != 0
	if e.enabled("GracefulNodeShutdownBasedOnPodPriority") {
		out = append(out, one(byPrio && (p.Duration > 0 || crit.Duration > 0), "invalid configuration: Cannot specify both shutdownGracePeriodByPodPriority and shutdownGracePeriod at the same time")...)
	} else {
		out = append(out, one(byPrio, "invalid configuration: Specifying shutdownGracePeriodByPodPriority requires feature gate GracefulNodeShutdownBasedOnPodPriority")...)
	}
	return out
}

func checkEnforceNodeAllocatable(c *kubeletv1beta1.KubeletConfiguration, _ *kubeletEnv) []string {
	var out []string
	has := map[string]bool{}
	for _, v := range c.EnforceNodeAllocatable {
		has[v] = true
	}
	if has[allocatableSystemReservedCompress] && has[allocatableSystemReserved] {
		out = append(out, fmt.Sprintf("invalid configuration: both %q and %q cannot be specified together in enforceNodeAllocatable (--enforce-node-allocatable)", allocatableSystemReserved, allocatableSystemReservedCompress))
	}
	if has[allocatableKubeReservedCompress] && has[allocatableKubeReserved] {
		out = append(out, fmt.Sprintf("invalid configuration: both %q and %q cannot be specified together in enforceNodeAllocatable (--enforce-node-allocatable)", allocatableKubeReserved, allocatableKubeReservedCompress))
	}
	seen := sets.Set[string]{}
	for _, v := range c.EnforceNodeAllocatable {
		if seen.Has(v) {
			out = append(out, fmt.Sprintf("invalid configuration: duplicated enforcements %q in enforceNodeAllocatable (--enforce-node-allocatable)", v))
			continue
		}
		seen.Insert(v)
		switch v {
		case allocatablePods:
		case allocatableSystemReserved, allocatableSystemReservedCompress:
			if c.SystemReservedCgroup == "" {
				out = append(out, fmt.Sprintf("invalid configuration: systemReservedCgroup (--system-reserved-cgroup) must be specified when %q or %q included in enforceNodeAllocatable (--enforce-node-allocatable)", allocatableSystemReserved, allocatableSystemReservedCompress))
			}
		case allocatableKubeReserved, allocatableKubeReservedCompress:
			if c.KubeReservedCgroup == "" {
				out = append(out, fmt.Sprintf("invalid configuration: kubeReservedCgroup (--kube-reserved-cgroup) must be specified when %q or %q included in enforceNodeAllocatable (--enforce-node-allocatable)", allocatableKubeReserved, allocatableKubeReservedCompress))
			}
		case allocatableNone:
			if len(c.EnforceNodeAllocatable) > 1 {
				out = append(out, fmt.Sprintf("invalid configuration: enforceNodeAllocatable (--enforce-node-allocatable) may not contain additional enforcements when %q is specified", allocatableNone))
			}
			continue
		default:
			out = append(out, fmt.Sprintf("invalid configuration: option %q specified for enforceNodeAllocatable (--enforce-node-allocatable). Valid options are %q, %q, %q, %q, %q or %q",
				v, allocatablePods, allocatableSystemReserved, allocatableSystemReservedCompress, allocatableKubeReserved, allocatableKubeReservedCompress, allocatableNone))
			continue
		}
		if !ptr.Deref(c.CgroupsPerQOS, false) {
			out = append(out, fmt.Sprintf("invalid configuration: cgroupsPerQOS (--cgroups-per-qos) must be set to true when %q contained in enforceNodeAllocatable (--enforce-node-allocatable)", v))
		}
	}
	return out
}

func checkImagePullCredentials(c *kubeletv1beta1.KubeletConfiguration, e *kubeletEnv) []string {
	policy := string(c.ImagePullCredentialsVerificationPolicy)
	allow := c.PreloadedImagesVerificationAllowlist
	if !e.enabled("KubeletEnsureSecretPulledImages") {
		out := one(len(policy) > 0, "invalid configuration: `imagePullCredentialsVerificationPolicy` must not be set if KubeletEnsureSecretPulledImages feature gate is not enabled")
		return append(out, one(len(allow) > 0, "invalid configuration: `preloadedImagesVerificationAllowlist` must not be set if KubeletEnsureSecretPulledImages feature gate is not enabled")...)
	}
	var out []string
	switch kubeletv1beta1.ImagePullCredentialsVerificationPolicy(policy) {
	case kubeletv1beta1.NeverVerify, kubeletv1beta1.NeverVerifyPreloadedImages, kubeletv1beta1.NeverVerifyAllowlistedImages, kubeletv1beta1.AlwaysVerify:
	default:
		out = append(out, fmt.Sprintf("invalid configuration: option %q specified for imagePullCredentialsVerificationPolicy. Valid options are %q, %q, %q or %q",
			policy, kubeletv1beta1.NeverVerify, kubeletv1beta1.NeverVerifyPreloadedImages, kubeletv1beta1.NeverVerifyAllowlistedImages, kubeletv1beta1.AlwaysVerify))
	}
	if len(allow) > 0 && policy != string(kubeletv1beta1.NeverVerifyAllowlistedImages) {
		out = append(out, "invalid configuration: can't set `preloadedImagesVerificationAllowlist` if `imagePullCredentialsVertificationPolicy` is not \"NeverVerifyAllowlistedImages\"")
	} else if err := validateAllowlistImagesPatterns(allow); err != nil {
		out = append(out, fmt.Errorf("invalid configuration: invalid image pattern in `preloadedImagesVerificationAllowlist`: %w", err).Error())
	}
	return out
}

func checkReservedMemory(c *kubeletv1beta1.KubeletConfiguration, _ *kubeletEnv) []string {
	var out []string
	dup := map[int32]map[corev1.ResourceName]bool{}
	for _, rm := range c.ReservedMemory {
		if dup[rm.NumaNode] == nil {
			dup[rm.NumaNode] = map[corev1.ResourceName]bool{}
		}
		// The kubelet ranges over the map; sorted keys make the report deterministic.
		for _, name := range sets.List(sets.KeySet(rm.Limits)) {
			q := rm.Limits[name]
			if name != corev1.ResourceMemory && !isHugePageResourceName(name) {
				out = append(out, fmt.Sprintf("invalid configuration: the limit type %q for NUMA node %d is not supported, only %v is accepted", name, rm.NumaNode,
					[]corev1.ResourceName{corev1.ResourceMemory, corev1.ResourceHugePagesPrefix + "<HugePageSize>"}))
			}
			if q.IsZero() {
				out = append(out, fmt.Sprintf("invalid configuration: reserved memory may not be zero for NUMA node %d and resource %q", rm.NumaNode, name))
			}
			if dup[rm.NumaNode][name] {
				out = append(out, fmt.Sprintf("invalid configuration: the reserved memory has a duplicate value for NUMA node %d and resource %q", rm.NumaNode, name))
			}
			dup[rm.NumaNode][name] = true
		}
	}
	return out
}

func checkPodLogsDir(c *kubeletv1beta1.KubeletConfiguration, e *kubeletEnv) []string {
	p := c.PodLogsDir
	abs, clean := isAbsLinux, isPathCleanLinux
	if e.OS == OSWindows {
		abs, clean = isAbsWindows, isPathCleanWindows
	}
	out := one(p == "", "invalid configuration: podLogsDir was not specified")
	out = append(out, one(!abs(p), "invalid configuration: pod logs path %q must be absolute path", p)...)
	out = append(out, one(!clean(p), "invalid configuration: pod logs path %q must be normalized", p)...)
	for _, r := range p {
		if r > unicode.MaxASCII {
			out = append(out, fmt.Sprintf("invalid configuration: pod logs path %q mut contains ASCII characters only", p))
			break
		}
	}
	return out
}

// errorStrings flattens a field.ErrorList the way the kubelet appends it to its aggregate.
func errorStrings(errs field.ErrorList) []string {
	if len(errs) == 0 {
		return nil
	}
	var out []string
	for _, e := range errs.ToAggregate().Errors() {
		out = append(out, e.Error())
	}
	return out
}

// validateKubeletFeatureGates is the start of ValidateKubeletConfiguration: the file's
// featureGates are applied to the kubelet's gate (an error there ends the validation) and the
// result is checked for gate dependencies.
func validateKubeletFeatureGates(g *GateRegistry, m map[string]bool) (featuregate.FeatureGate, []string, bool) {
	gate, err := g.Effective(m)
	if err != nil {
		return nil, splitAggregate(err), false
	}
	var out []string
	for _, e := range gate.Validate() {
		out = append(out, e.Error())
	}
	return gate, out, true
}

// kubeletProblem is one validation message and the field it is about.
type kubeletProblem struct {
	Field, Message string
}

// validateKubelet runs every ported check over a defaulted configuration.
func validateKubelet(c *kubeletv1beta1.KubeletConfiguration, gateProblems []string, env *kubeletEnv) []kubeletProblem {
	var out []kubeletProblem
	for _, m := range gateProblems {
		out = append(out, kubeletProblem{Field: "featureGates", Message: m})
	}
	for _, chk := range kubeletChecks {
		for _, m := range chk.Check(c, env) {
			out = append(out, kubeletProblem{Field: chk.Field, Message: m})
		}
	}
	return out
}
