package check

import (
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/component-base/featuregate"
	logsapi "k8s.io/component-base/logs/api/v1"
	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"
	"k8s.io/utils/ptr"
)

// Values of k8s.io/kubernetes constants the defaults use (pkg/cluster/ports, pkg/kubelet/qos,
// pkg/kubelet/types, pkg/kubelet/apis/config/v1beta1).
const (
	kubeletPort             = 10250 // ports.KubeletPort
	kubeletOOMScoreAdj      = -999  // qos.KubeletOOMScoreAdj
	resolvConfDefault       = "/etc/resolv.conf"
	defaultPodLogsDir       = "/var/log/pods"
	defaultVolumePluginDir  = "/usr/libexec/kubernetes/kubelet-plugins/volume/exec/"
	maxContainerBackOff     = 300 * time.Second
	defaultIPTablesMasqBit  = 14
	defaultIPTablesDropBit  = 15
	defaultCgroupDriver     = "cgroupfs"
	defaultRuntimeEndpoint  = "unix:///run/containerd/containerd.sock"
	gateCrashLoopBackOffMax = "KubeletCrashLoopBackOffMax"
	gateEnsureSecretPulled  = "KubeletEnsureSecretPulledImages"
)

// setKubeletDefaults applies the kubelet's defaults to a decoded KubeletConfiguration:
// k8s.io/kubernetes/pkg/kubelet/apis/config/v1beta1.SetObjectDefaults_KubeletConfiguration of
// the pinned release, ported to the same versioned type (the kubelet defaults the file before
// it validates it, so the rules and the validation see what the kubelet sees). gate is the
// kubelet's feature gate with the file's featureGates applied. TestKubeletDefaultsMatchUpstream
// and FuzzKubeletDefaults compare the result with the real function.
func setKubeletDefaults(obj *kubeletv1beta1.KubeletConfiguration, gate featuregate.FeatureGate) {
	zero := metav1.Duration{}
	if obj.EnableServer == nil {
		obj.EnableServer = ptr.To(true)
	}
	if obj.SyncFrequency == zero {
		obj.SyncFrequency = metav1.Duration{Duration: 1 * time.Minute}
	}
	if obj.FileCheckFrequency == zero {
		obj.FileCheckFrequency = metav1.Duration{Duration: 20 * time.Second}
	}
	if obj.HTTPCheckFrequency == zero {
		obj.HTTPCheckFrequency = metav1.Duration{Duration: 20 * time.Second}
	}
	if obj.Address == "" {
		obj.Address = "0.0.0.0"
	}
	if obj.Port == 0 {
		obj.Port = kubeletPort
	}
	if obj.Authentication.Anonymous.Enabled == nil {
		obj.Authentication.Anonymous.Enabled = ptr.To(false)
	}
	if obj.Authentication.Webhook.Enabled == nil {
		obj.Authentication.Webhook.Enabled = ptr.To(true)
	}
	if obj.Authentication.Webhook.CacheTTL == zero {
		obj.Authentication.Webhook.CacheTTL = metav1.Duration{Duration: 2 * time.Minute}
	}
	if obj.Authorization.Mode == "" {
		obj.Authorization.Mode = kubeletv1beta1.KubeletAuthorizationModeWebhook
	}
	if obj.Authorization.Webhook.CacheAuthorizedTTL == zero {
		obj.Authorization.Webhook.CacheAuthorizedTTL = metav1.Duration{Duration: 5 * time.Minute}
	}
	if obj.Authorization.Webhook.CacheUnauthorizedTTL == zero {
		obj.Authorization.Webhook.CacheUnauthorizedTTL = metav1.Duration{Duration: 30 * time.Second}
	}
	if obj.RegistryPullQPS == nil {
		obj.RegistryPullQPS = ptr.To[int32](5)
	}
	if obj.RegistryBurst == 0 {
		obj.RegistryBurst = 10
	}
	if obj.EventRecordQPS == nil {
		obj.EventRecordQPS = ptr.To[int32](50)
	}
	if obj.EventBurst == 0 {
		obj.EventBurst = 100
	}
	if obj.EnableDebuggingHandlers == nil {
		obj.EnableDebuggingHandlers = ptr.To(true)
	}
	if obj.HealthzPort == nil {
		obj.HealthzPort = ptr.To[int32](10248)
	}
	if obj.HealthzBindAddress == "" {
		obj.HealthzBindAddress = "127.0.0.1"
	}
	if obj.OOMScoreAdj == nil {
		obj.OOMScoreAdj = ptr.To[int32](kubeletOOMScoreAdj)
	}
	if obj.StreamingConnectionIdleTimeout == zero {
		obj.StreamingConnectionIdleTimeout = metav1.Duration{Duration: 4 * time.Hour}
	}
	if obj.NodeStatusReportFrequency == zero {
		if obj.NodeStatusUpdateFrequency == zero {
			obj.NodeStatusReportFrequency = metav1.Duration{Duration: 5 * time.Minute}
		} else {
			obj.NodeStatusReportFrequency = obj.NodeStatusUpdateFrequency
		}
	}
	if obj.NodeStatusUpdateFrequency == zero {
		obj.NodeStatusUpdateFrequency = metav1.Duration{Duration: 10 * time.Second}
	}
	if obj.NodeLeaseDurationSeconds == 0 {
		obj.NodeLeaseDurationSeconds = 40
	}
	if obj.ImageMinimumGCAge == zero {
		obj.ImageMinimumGCAge = metav1.Duration{Duration: 2 * time.Minute}
	}
	if obj.ImageGCHighThresholdPercent == nil {
		obj.ImageGCHighThresholdPercent = ptr.To[int32](85)
	}
	if obj.ImageGCLowThresholdPercent == nil {
		obj.ImageGCLowThresholdPercent = ptr.To[int32](80)
	}
	if obj.VolumeStatsAggPeriod == zero {
		obj.VolumeStatsAggPeriod = metav1.Duration{Duration: time.Minute}
	}
	if obj.CgroupsPerQOS == nil {
		obj.CgroupsPerQOS = ptr.To(true)
	}
	if obj.CgroupDriver == "" {
		obj.CgroupDriver = defaultCgroupDriver
	}
	if obj.CPUManagerPolicy == "" {
		obj.CPUManagerPolicy = "none"
	}
	if obj.CPUManagerReconcilePeriod == zero {
		obj.CPUManagerReconcilePeriod = metav1.Duration{Duration: 10 * time.Second}
	}
	if obj.MemoryManagerPolicy == "" {
		obj.MemoryManagerPolicy = kubeletv1beta1.NoneMemoryManagerPolicy
	}
	if obj.TopologyManagerPolicy == "" {
		obj.TopologyManagerPolicy = kubeletv1beta1.NoneTopologyManagerPolicy
	}
	if obj.TopologyManagerScope == "" {
		obj.TopologyManagerScope = kubeletv1beta1.ContainerTopologyManagerScope
	}
	if obj.RuntimeRequestTimeout == zero {
		obj.RuntimeRequestTimeout = metav1.Duration{Duration: 2 * time.Minute}
	}
	if obj.HairpinMode == "" {
		obj.HairpinMode = kubeletv1beta1.PromiscuousBridge
	}
	if obj.MaxPods == 0 {
		obj.MaxPods = 110
	}
	// A negative limit means "no limit", spelled -1.
	if obj.PodPidsLimit == nil || *obj.PodPidsLimit < 0 {
		obj.PodPidsLimit = ptr.To[int64](-1)
	}
	if obj.ResolverConfig == nil {
		obj.ResolverConfig = ptr.To(resolvConfDefault)
	}
	if obj.CPUCFSQuota == nil {
		obj.CPUCFSQuota = ptr.To(true)
	}
	if obj.CPUCFSQuotaPeriod == nil {
		obj.CPUCFSQuotaPeriod = &metav1.Duration{Duration: 100 * time.Millisecond}
	}
	if obj.NodeStatusMaxImages == nil {
		obj.NodeStatusMaxImages = ptr.To[int32](50)
	}
	if obj.MaxOpenFiles == 0 {
		obj.MaxOpenFiles = 1000000
	}
	if obj.ContentType == "" {
		obj.ContentType = protobufContentType
	}
	if obj.KubeAPIQPS == nil {
		obj.KubeAPIQPS = ptr.To[int32](50)
	}
	if obj.KubeAPIBurst == 0 {
		obj.KubeAPIBurst = 100
	}
	// Parallel pulls (maxParallelImagePulls > 1) turn serialisation off unless it is set.
	if obj.SerializeImagePulls == nil {
		obj.SerializeImagePulls = ptr.To(obj.MaxParallelImagePulls == nil || *obj.MaxParallelImagePulls < 2)
	}
	if obj.EvictionPressureTransitionPeriod == zero {
		obj.EvictionPressureTransitionPeriod = metav1.Duration{Duration: 5 * time.Minute}
	}
	if obj.MergeDefaultEvictionSettings == nil {
		obj.MergeDefaultEvictionSettings = ptr.To(false)
	}
	if obj.EnableControllerAttachDetach == nil {
		obj.EnableControllerAttachDetach = ptr.To(true)
	}
	if obj.MakeIPTablesUtilChains == nil {
		obj.MakeIPTablesUtilChains = ptr.To(true)
	}
	if obj.IPTablesMasqueradeBit == nil {
		obj.IPTablesMasqueradeBit = ptr.To[int32](defaultIPTablesMasqBit)
	}
	if obj.IPTablesDropBit == nil {
		obj.IPTablesDropBit = ptr.To[int32](defaultIPTablesDropBit)
	}
	if obj.FailSwapOn == nil {
		obj.FailSwapOn = ptr.To(true)
	}
	if obj.ContainerLogMaxSize == "" {
		obj.ContainerLogMaxSize = "10Mi"
	}
	if obj.ContainerLogMaxFiles == nil {
		obj.ContainerLogMaxFiles = ptr.To[int32](5)
	}
	if obj.ContainerLogMaxWorkers == nil {
		obj.ContainerLogMaxWorkers = ptr.To[int32](1)
	}
	if obj.ContainerLogMonitorInterval == nil {
		obj.ContainerLogMonitorInterval = &metav1.Duration{Duration: 10 * time.Second}
	}
	if obj.ConfigMapAndSecretChangeDetectionStrategy == "" {
		obj.ConfigMapAndSecretChangeDetectionStrategy = kubeletv1beta1.WatchChangeDetectionStrategy
	}
	if obj.EnforceNodeAllocatable == nil {
		obj.EnforceNodeAllocatable = []string{"pods"}
	}
	if obj.VolumePluginDir == "" {
		obj.VolumePluginDir = defaultVolumePluginDir
	}
	logsapi.SetRecommendedLoggingConfiguration(&obj.Logging)
	if obj.EnableSystemLogHandler == nil {
		obj.EnableSystemLogHandler = ptr.To(true)
	}
	if obj.EnableProfilingHandler == nil {
		obj.EnableProfilingHandler = ptr.To(true)
	}
	if obj.EnableDebugFlagsHandler == nil {
		obj.EnableDebugFlagsHandler = ptr.To(true)
	}
	if obj.SeccompDefault == nil {
		obj.SeccompDefault = ptr.To(false)
	}
	if obj.FailCgroupV1 == nil {
		obj.FailCgroupV1 = ptr.To(true)
	}
	if obj.MemoryReservationPolicy == "" {
		obj.MemoryReservationPolicy = kubeletv1beta1.NoneMemoryReservationPolicy
	}
	if obj.RegisterNode == nil {
		obj.RegisterNode = ptr.To(true)
	}
	if obj.LocalStorageCapacityIsolation == nil {
		obj.LocalStorageCapacityIsolation = ptr.To(true)
	}
	if obj.ContainerRuntimeEndpoint == "" {
		obj.ContainerRuntimeEndpoint = defaultRuntimeEndpoint
	}
	if obj.PodLogsDir == "" {
		obj.PodLogsDir = defaultPodLogsDir
	}
	if gate.Enabled(gateCrashLoopBackOffMax) && obj.CrashLoopBackOff.MaxContainerRestartPeriod == nil {
		obj.CrashLoopBackOff.MaxContainerRestartPeriod = &metav1.Duration{Duration: maxContainerBackOff}
	}
	if gate.Enabled(gateEnsureSecretPulled) && obj.ImagePullCredentialsVerificationPolicy == "" {
		obj.ImagePullCredentialsVerificationPolicy = kubeletv1beta1.NeverVerifyPreloadedImages
	}
	// SetObjectDefaults also defaults the nested ResourceLists: k8s.io/kubernetes/pkg/apis/core/v1.
	// SetDefaults_ResourceList rounds every quantity up to milli scale.
	for i := range obj.ReservedMemory {
		roundUpResourceList(obj.ReservedMemory[i].Limits)
	}
}

// roundUpResourceList is k8s.io/kubernetes/pkg/apis/core/v1.SetDefaults_ResourceList.
func roundUpResourceList[K ~string](l map[K]resource.Quantity) {
	for k, q := range l {
		q.RoundUp(-3)
		l[k] = q
	}
}
