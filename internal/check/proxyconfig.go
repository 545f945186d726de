package check

import (
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
	logsapi "k8s.io/component-base/logs/api/v1"
	proxyv1alpha1 "k8s.io/kube-proxy/config/v1alpha1"
	netutils "k8s.io/utils/net"
	"k8s.io/utils/ptr"

	"github.com/kubewin/kubewin/internal/platform"
)

// Values of k8s.io/kubernetes constants kube-proxy's defaults use.
const (
	proxyHealthzPort     = 10256 // ports.ProxyHealthzPort
	proxyStatusPort      = 10249 // ports.ProxyStatusPort
	kubeProxyOOMScoreAdj = -999  // qos.KubeProxyOOMScoreAdj
	protobufContentType  = "application/vnd.kubernetes.protobuf"
)

// setKubeProxyDefaults is k8s.io/kubernetes/pkg/proxy/apis/config/v1alpha1.
// SetObjectDefaults_KubeProxyConfiguration of the pinned release, ported to the same versioned
// type. TestKubeProxyDefaultsMatchUpstream and FuzzKubeProxyDefaults compare it with the real one.
func setKubeProxyDefaults(obj *proxyv1alpha1.KubeProxyConfiguration) {
	if len(obj.BindAddress) == 0 {
		obj.BindAddress = "0.0.0.0"
	}
	healthz, metrics := "[::]", "[::1]"
	if netutils.ParseIPSloppy(obj.BindAddress).To4() != nil {
		healthz, metrics = "0.0.0.0", "127.0.0.1"
	}
	if obj.HealthzBindAddress == "" {
		obj.HealthzBindAddress = fmt.Sprintf("%s:%v", healthz, proxyHealthzPort)
	} else {
		obj.HealthzBindAddress = appendPortIfNeeded(obj.HealthzBindAddress, proxyHealthzPort)
	}
	if obj.MetricsBindAddress == "" {
		obj.MetricsBindAddress = fmt.Sprintf("%s:%v", metrics, proxyStatusPort)
	} else {
		obj.MetricsBindAddress = appendPortIfNeeded(obj.MetricsBindAddress, proxyStatusPort)
	}
	if obj.OOMScoreAdj == nil {
		obj.OOMScoreAdj = ptr.To[int32](kubeProxyOOMScoreAdj)
	}
	if obj.IPTables.SyncPeriod.Duration == 0 {
		obj.IPTables.SyncPeriod = metav1.Duration{Duration: 30 * time.Second}
	}
	if obj.IPTables.MinSyncPeriod.Duration == 0 {
		obj.IPTables.MinSyncPeriod = metav1.Duration{Duration: 1 * time.Second}
	}
	if obj.IPTables.LocalhostNodePorts == nil {
		obj.IPTables.LocalhostNodePorts = ptr.To(true)
	}
	if obj.IPVS.SyncPeriod.Duration == 0 {
		obj.IPVS.SyncPeriod = metav1.Duration{Duration: 30 * time.Second}
	}
	if obj.NFTables.SyncPeriod.Duration == 0 {
		obj.NFTables.SyncPeriod = metav1.Duration{Duration: 30 * time.Second}
	}
	if obj.NFTables.MinSyncPeriod.Duration == 0 {
		obj.NFTables.MinSyncPeriod = metav1.Duration{Duration: 1 * time.Second}
	}
	if obj.Conntrack.MaxPerCore == nil {
		obj.Conntrack.MaxPerCore = ptr.To[int32](32 * 1024)
	}
	if obj.Conntrack.Min == nil {
		obj.Conntrack.Min = ptr.To[int32](128 * 1024)
	}
	if obj.IPTables.MasqueradeBit == nil {
		obj.IPTables.MasqueradeBit = ptr.To[int32](14)
	}
	if obj.NFTables.MasqueradeBit == nil {
		obj.NFTables.MasqueradeBit = ptr.To[int32](14)
	}
	if obj.Conntrack.TCPEstablishedTimeout == nil {
		obj.Conntrack.TCPEstablishedTimeout = &metav1.Duration{Duration: 24 * time.Hour}
	}
	if obj.Conntrack.TCPCloseWaitTimeout == nil {
		obj.Conntrack.TCPCloseWaitTimeout = &metav1.Duration{Duration: 1 * time.Hour}
	}
	if obj.ConfigSyncPeriod.Duration == 0 {
		obj.ConfigSyncPeriod.Duration = 15 * time.Minute
	}
	if len(obj.ClientConnection.ContentType) == 0 {
		obj.ClientConnection.ContentType = protobufContentType
	}
	if obj.ClientConnection.QPS == 0.0 {
		obj.ClientConnection.QPS = 5.0
	}
	if obj.ClientConnection.Burst == 0 {
		obj.ClientConnection.Burst = 10
	}
	if obj.FeatureGates == nil {
		obj.FeatureGates = make(map[string]bool)
	}
	logsapi.SetRecommendedLoggingConfiguration(&obj.Logging)
}

// appendPortIfNeeded is k8s.io/kubernetes/pkg/proxy/util.AppendPortIfNeeded: an IP without a
// port gets the default port; anything else is left for validation.
func appendPortIfNeeded(addr string, port int32) string {
	if _, _, err := net.SplitHostPort(addr); err == nil {
		return addr
	}
	if netutils.ParseIPSloppy(addr) == nil {
		return addr
	}
	return net.JoinHostPort(addr, strconv.Itoa(int(port)))
}

// syncSection is the section whose syncPeriod/minSyncPeriod kube-proxy uses in mode: its
// conversion to the internal type takes them from ipvs or nftables in those modes and from
// iptables otherwise, kernelspace included.
func syncSection(c *proxyv1alpha1.KubeProxyConfiguration) (string, proxyv1alpha1.KubeProxyIPTablesConfiguration) {
	switch c.Mode {
	case "ipvs":
		return "ipvs", proxyv1alpha1.KubeProxyIPTablesConfiguration{SyncPeriod: c.IPVS.SyncPeriod, MinSyncPeriod: c.IPVS.MinSyncPeriod}
	case "nftables":
		return "nftables", proxyv1alpha1.KubeProxyIPTablesConfiguration{SyncPeriod: c.NFTables.SyncPeriod, MinSyncPeriod: c.NFTables.MinSyncPeriod}
	}
	return "iptables", c.IPTables
}

// validateKubeProxy is kube-proxy's config validation, k8s.io/kubernetes/pkg/proxy/apis/config/
// validation.Validate (v1.37.1), ported check by check to the defaulted versioned type, with
// the field paths of the file (iptables.masqueradeBit) instead of the internal type's
// (KubeProxyConfiguration.KubeProxyIPTablesConfiguration.MasqueradeBit). Ported: featureGates,
// iptables.masqueradeBit, conntrack.*, oomScoreAdj, clientConnection.burst, configSyncPeriod,
// syncPeriod/minSyncPeriod, bindAddress, healthzBindAddress, metricsBindAddress,
// nodePortAddresses, showHiddenMetricsForVersion, detectLocalMode, detectLocal and clusterCIDR,
// logging. Not ported: the mode check and the ipvs/nftables sections it selects, because the
// mode is judged against the OS kube-proxy runs on, which the previous implementation cleared
// for the same reason; KW1205 reports any mode but kernelspace on Windows.
// showHiddenMetricsForVersion is compared with the previous minor of the target release.
// TestKubeProxyValidationCoversUpstream compares the port with the real function.
func validateKubeProxy(c *proxyv1alpha1.KubeProxyConfiguration, gates *GateRegistry, v platform.Version) field.ErrorList {
	var errs field.ErrorList
	gate, err := gates.Effective(c.FeatureGates)
	if err != nil {
		errs = append(errs, field.Invalid(field.NewPath("featureGates"), c.FeatureGates, err.Error()))
	}
	if b := c.IPTables.MasqueradeBit; b != nil && (*b < 0 || *b > 31) {
		errs = append(errs, field.Invalid(field.NewPath("iptables", "masqueradeBit"), b, "must be within the range [0, 31]"))
	}
	ct := field.NewPath("conntrack")
	if p := c.Conntrack.MaxPerCore; p != nil && *p < 0 {
		errs = append(errs, field.Invalid(ct.Child("maxPerCore"), p, "must be greater than or equal to 0"))
	}
	if p := c.Conntrack.Min; p != nil && *p < 0 {
		errs = append(errs, field.Invalid(ct.Child("min"), p, "must be greater than or equal to 0"))
	}
	if p := c.Conntrack.TCPEstablishedTimeout; p.Duration < 0 {
		errs = append(errs, field.Invalid(ct.Child("tcpEstablishedTimeout"), p, "must be greater than or equal to 0"))
	}
	if p := c.Conntrack.TCPCloseWaitTimeout; p.Duration < 0 {
		errs = append(errs, field.Invalid(ct.Child("tcpCloseWaitTimeout"), p, "must be greater than or equal to 0"))
	}
	if p := c.Conntrack.UDPTimeout; p.Duration < 0 {
		errs = append(errs, field.Invalid(ct.Child("udpTimeout"), p, "must be greater than or equal to 0"))
	}
	if p := c.Conntrack.UDPStreamTimeout; p.Duration < 0 {
		errs = append(errs, field.Invalid(ct.Child("udpStreamTimeout"), p, "must be greater than or equal to 0"))
	}
	if p := c.OOMScoreAdj; p != nil && (*p < -1000 || *p > 1000) {
		errs = append(errs, field.Invalid(field.NewPath("oomScoreAdj"), *p, "must be within the range [-1000, 1000]"))
	}
	errs = append(errs, apimachineryvalidation.ValidateNonnegativeField(int64(c.ClientConnection.Burst), field.NewPath("clientConnection", "burst"))...)

	if c.ConfigSyncPeriod.Duration <= 0 {
		errs = append(errs, field.Invalid(field.NewPath("configSyncPeriod"), c.ConfigSyncPeriod, "must be greater than 0"))
	}
	section, sync := syncSection(c)
	syncPath, minPath := field.NewPath(section, "syncPeriod"), field.NewPath(section, "minSyncPeriod")
	if sync.SyncPeriod.Duration <= 0 {
		errs = append(errs, field.Invalid(syncPath, sync.SyncPeriod, "must be greater than 0"))
	}
	if sync.MinSyncPeriod.Duration < 0 {
		errs = append(errs, field.Invalid(minPath, sync.MinSyncPeriod, "must be greater than or equal to 0"))
	}
	if sync.MinSyncPeriod.Duration > sync.SyncPeriod.Duration {
		errs = append(errs, field.Invalid(syncPath, sync.MinSyncPeriod, fmt.Sprintf("must be greater than or equal to %s", minPath.String())))
	}

	if netutils.ParseIPSloppy(c.BindAddress) == nil {
		errs = append(errs, field.Invalid(field.NewPath("bindAddress"), c.BindAddress, "not a valid textual representation of an IP address"))
	}
	if c.HealthzBindAddress != "" {
		errs = append(errs, validateHostPort(c.HealthzBindAddress, field.NewPath("healthzBindAddress"))...)
	}
	errs = append(errs, validateHostPort(c.MetricsBindAddress, field.NewPath("metricsBindAddress"))...)
	errs = append(errs, validateNodePortAddresses(c.NodePortAddresses, field.NewPath("nodePortAddresses"))...)
	if err := showHiddenMetricsError(c.ShowHiddenMetricsForVersion, v, field.NewPath("showHiddenMetricsForVersion")); err != nil {
		errs = append(errs, field.Invalid(field.NewPath("showHiddenMetricsForVersion"), c.ShowHiddenMetricsForVersion, "invalid showHiddenMetricsForVersion: "+err.Error()))
	}
	errs = append(errs, validateDetectLocal(c)...)
	errs = append(errs, logsapi.Validate(&c.Logging, gate, field.NewPath("logging"))...)
	return errs
}

// validateHostPort is validation.validateHostPort.
func validateHostPort(input string, fld *field.Path) field.ErrorList {
	var errs field.ErrorList
	host, port, err := net.SplitHostPort(input)
	if err != nil {
		return append(errs, field.Invalid(fld, input, "must be IP:port"))
	}
	if netutils.ParseIPSloppy(host) == nil {
		errs = append(errs, field.Invalid(fld, host, "must be a valid IP"))
	}
	if p, err := strconv.Atoi(port); err != nil || p < 1 || p > 65535 {
		errs = append(errs, field.Invalid(fld, port, "must be a valid port"))
	}
	return errs
}

// validateNodePortAddresses is validation.validateKubeProxyNodePortAddress.
func validateNodePortAddresses(addrs []string, fld *field.Path) field.ErrorList {
	var errs field.ErrorList
	seen := sets.New[string]()
	for i, a := range addrs {
		switch a {
		case "primary", "localhost", "all":
			if seen.Has(a) {
				errs = append(errs, field.Duplicate(fld.Index(i), a))
			}
			seen.Insert(a)
			continue
		}
		if _, _, err := netutils.ParseCIDRSloppy(a); err != nil {
			errs = append(errs, field.Invalid(fld.Index(i), a, "must be a valid CIDR or one of the keywords 'primary', 'localhost', 'all'"))
		}
	}
	return errs
}

// validateDetectLocal is validation.validateDetectLocalMode and validateDetectLocalConfiguration;
// the cluster CIDRs are the comma-separated clusterCIDR, as the conversion splits them.
func validateDetectLocal(c *proxyv1alpha1.KubeProxyConfiguration) field.ErrorList {
	var errs field.ErrorList
	modes := []string{"ClusterCIDR", "NodeCIDR", "BridgeInterface", "InterfaceNamePrefix", ""}
	if !sets.New(modes...).Has(string(c.DetectLocalMode)) {
		errs = append(errs, field.NotSupported(field.NewPath("detectLocalMode"), string(c.DetectLocalMode), modes))
	}
	switch c.DetectLocalMode {
	case "BridgeInterface":
		if c.DetectLocal.BridgeInterface == "" {
			errs = append(errs, field.Invalid(field.NewPath("detectLocal", "bridgeInterface"), c.DetectLocal.BridgeInterface, "must not be empty"))
		}
	case "InterfaceNamePrefix":
		if c.DetectLocal.InterfaceNamePrefix == "" {
			errs = append(errs, field.Invalid(field.NewPath("detectLocal", "interfaceNamePrefix"), c.DetectLocal.InterfaceNamePrefix, "must not be empty"))
		}
	case "ClusterCIDR":
		if c.ClusterCIDR != "" {
			errs = append(errs, validateDualStackCIDRStrings(strings.Split(c.ClusterCIDR, ","), field.NewPath("clusterCIDR"))...)
		}
	}
	return errs
}

// validateDualStackCIDRStrings is validation.validateDualStackCIDRStrings.
func validateDualStackCIDRStrings(cidrs []string, fld *field.Path) field.ErrorList {
	var errs field.ErrorList
	const pair = "must be a either a single CIDR or dual-stack pair of CIDRs (e.g. [10.100.0.0/16, fde4:8dba:82e1::/48]"
	switch {
	case len(cidrs) == 0:
		errs = append(errs, field.Invalid(fld, cidrs, "must contain at least one CIDR"))
	case len(cidrs) > 2:
		errs = append(errs, field.Invalid(fld, cidrs, pair))
	default:
		for i, s := range cidrs {
			if _, _, err := netutils.ParseCIDRSloppy(s); err != nil {
				errs = append(errs, field.Invalid(fld.Index(i), s, "must be a valid CIDR block (e.g. 10.100.0.0/16 or fde4:8dba:82e1::/48)"))
			}
		}
		if len(cidrs) == 2 {
			if dual, err := netutils.IsDualStackCIDRStrings(cidrs); err == nil && !dual {
				errs = append(errs, field.Invalid(fld, cidrs, pair))
			}
		}
	}
	return errs
}
