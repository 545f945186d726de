package v1alpha1

import (
	"fmt"
	"net"
	"net/netip"
	"regexp"
	"strconv"
	"strings"

	"github.com/distribution/reference"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/api/validate/content"

	"github.com/kubewin/kubewin/internal/platform"
)

// Paths of the spec's sections.
const (
	spec          fieldPath = "spec"
	networking    fieldPath = "spec.networking"
	linuxCNI      fieldPath = "spec.linuxCNI"
	windows       fieldPath = "spec.windows"
	images        fieldPath = "spec.images"
	nodesPath     fieldPath = "spec.nodes"
	groupsPath    fieldPath = "spec.gatewayGroups"
	torRouterPath fieldPath = "spec.torRouter"
)

func (v *validator) meta() {
	if v.c.APIVersion != GroupVersion {
		msg := fmt.Sprintf("found %q", v.c.APIVersion)
		if v.c.APIVersion == "" {
			msg = "missing"
		}
		v.errs.addf(fieldPath("apiVersion"), GroupVersion, "%s", msg)
	}
	if v.c.Kind != KindCluster {
		msg := fmt.Sprintf("found %q", v.c.Kind)
		if v.c.Kind == "" {
			msg = "missing"
		}
		v.errs.addf(fieldPath("kind"), KindCluster, "%s", msg)
	}
	p := fieldPath("metadata").Child("name")
	const expected = `a lowercase DNS-1123 name such as "mylan"`
	switch name := v.c.Metadata.Name; {
	case name == "":
		v.errs.addf(p, expected, "missing")
	case len(content.IsDNS1123Subdomain(name)) > 0:
		v.errs.addf(p, expected, "%q is not a valid name", name)
	}
}

func (v *validator) kubernetesVersion() {
	s := v.c.Spec.KubernetesVersion
	if s == "" {
		return
	}
	p := spec.Child("kubernetesVersion")
	ver, err := platform.ParseVersion(s)
	if err != nil {
		v.errs.addf(p, "v<major>.<minor>[.<patch>], e.g. "+DefaultKubernetesVersion, "%q is not a Kubernetes version", s)
		return
	}
	if platform.SupportedKubernetes(ver) {
		return
	}
	expected := "a maintained release, " + platform.SupportedKubernetesRange()
	newest := platform.NewestKubernetes()
	if ver.Major > newest.Major || (ver.Major == newest.Major && ver.Minor > newest.Minor) {
		v.errs.addf(p, expected, "%s is newer than the releases kubewin knows", ver)
		return
	}
	v.errs.addf(p, expected, "%s is no longer maintained by the Kubernetes project", ver)
}

var containerdVersionRE = regexp.MustCompile(`^v?[0-9]+\.[0-9]+(\.[0-9]+)?$`)

func (v *validator) containerRuntime() {
	rt := v.c.Spec.ContainerRuntime
	p := spec.Child("containerRuntime")
	switch name := strings.ToLower(rt.Name); {
	case name == "" || rt.Name == DefaultContainerRuntime:
	case name == "docker" || name == "dockershim" || name == "docker-ee":
		v.errs.addf(p.Child("name"), DefaultContainerRuntime,
			"%q cannot serve the kubelet: Kubernetes v1.24 removed dockershim, so nodes need a CRI runtime", rt.Name)
	default:
		v.errs.addf(p.Child("name"), DefaultContainerRuntime+" (the CRI runtime Kubernetes supports on Windows)",
			"%q is not supported", rt.Name)
	}
	if rt.CgroupDriver != "" {
		v.oneOf(p.Child("cgroupDriver"), rt.CgroupDriver, "systemd", "cgroupfs")
	}
	if rt.Version != "" && !containerdVersionRE.MatchString(rt.Version) {
		v.errs.addf(p.Child("version"), "a containerd release such as 2.1.4", "%q is not a version", rt.Version)
	}
}

func (v *validator) networking() {
	n := v.c.Spec.Networking
	if len(n.PodCIDRs) == 0 {
		v.errs.addf(networking.Child("podCIDRs"), "at least one IPv4 CIDR, e.g. [10.160.0.0/12]", "missing")
	}
	for i, s := range n.PodCIDRs {
		p := networking.Child("podCIDRs").Index(i)
		pr, ok := v.cidr(p, s, true)
		if !ok {
			continue
		}
		if other, clash := overlapping(v.podCIDRs, pr); clash {
			v.errs.addf(p, "pod CIDRs that do not overlap", "%s overlaps %s (%s)", pr, other.path, other.prefix)
			continue
		}
		v.podCIDRs = append(v.podCIDRs, pathPrefix{p, pr})
	}
	if sp, ok := v.cidr(networking.Child("serviceCIDR"), n.ServiceCIDR, true); ok {
		if other, clash := overlapping(v.podCIDRs, sp); clash {
			v.errs.addf(networking.Child("serviceCIDR"), "a service CIDR outside the pod CIDRs",
				"%s overlaps %s (%s)", sp, other.path, other.prefix)
		}
		v.service = sp
	}
	v.nodeCIDRMaskSize()
	v.clusterDNS()
	v.dnsNames()
	for i, s := range n.NodeSubnets {
		p := networking.Child("nodeSubnets").Index(i)
		if pr, ok := v.cidr(p, s, false); ok {
			v.disjointFromClusterRanges(p, "node subnet "+pr.String(), pr)
		}
	}
	v.upstreamRoutes(n)
}

// overlapping returns the first of list that overlaps p.
func overlapping(list []pathPrefix, p netip.Prefix) (pathPrefix, bool) {
	for _, o := range list {
		if o.prefix.Overlaps(p) {
			return o, true
		}
	}
	return pathPrefix{}, false
}

// disjointFromClusterRanges reports a node-side subnet that overlaps a pod or service CIDR:
// packets to it would be routed into the cluster network (or vice versa).
func (v *validator) disjointFromClusterRanges(p fieldPath, what string, pr netip.Prefix) {
	if other, clash := overlapping(v.podCIDRs, pr); clash {
		v.errs.addf(p, "node subnets disjoint from the pod and service CIDRs", "%s overlaps the pod CIDR %s (%s)",
			what, other.prefix, other.path)
	}
	if v.service.IsValid() && v.service.Overlaps(pr) {
		v.errs.addf(p, "node subnets disjoint from the pod and service CIDRs", "%s overlaps the service CIDR %s",
			what, v.service)
	}
}

// maxNodeCIDRMaskSize leaves a node's pod CIDR room for its gateway (.1), the Windows host
// endpoint (.2) and at least a few pods.
const maxNodeCIDRMaskSize = 29

func (v *validator) nodeCIDRMaskSize() {
	size := v.c.Spec.Networking.NodeCIDRMaskSize
	if size == 0 {
		size = DefaultNodeCIDRMaskSize
	}
	p := networking.Child("nodeCIDRMaskSize")
	if !v.intRange(p, size, 1, maxNodeCIDRMaskSize) {
		return
	}
	for _, pc := range v.podCIDRs {
		if size <= pc.prefix.Bits() {
			v.errs.addf(p, fmt.Sprintf("a mask size larger than %d, so that %s splits into node CIDRs", pc.prefix.Bits(), pc.prefix),
				"/%d is not smaller than the pod CIDR %s (%s)", size, pc.prefix, pc.path)
			return
		}
	}
	v.maskSize = size
}

func (v *validator) clusterDNS() {
	p := networking.Child("clusterDNS")
	a, ok := v.ipv4(p, v.c.Spec.Networking.ClusterDNS, true)
	if !ok || !v.service.IsValid() {
		return
	}
	expected := "an address inside the service CIDR " + v.service.String() + ", conventionally .10"
	switch {
	case !v.service.Contains(a):
		v.errs.addf(p, expected, "%s is outside the service CIDR", a)
	case a == v.service.Addr().Next():
		v.errs.addf(p, expected, "%s is the first service address, which the apiserver gives the kubernetes Service", a)
	case reservedHost(a, v.service) != "":
		v.errs.addf(p, expected, "%s is %s, which no Service can get", a, reservedHost(a, v.service))
	}
}

// maxDNSSearchPaths is the kubelet's limit on a pod's search list (MaxDNSSearchPaths in
// k8s.io/kubernetes/pkg/apis/core/validation); the kubelet adds three cluster suffixes.
const maxDNSSearchPaths = 32

func (v *validator) dnsNames() {
	n := v.c.Spec.Networking
	const expected = "a DNS domain such as mylan.k8s"
	if n.ClusterDomain != "" && !isDNSName(n.ClusterDomain) {
		v.errs.addf(networking.Child("clusterDomain"), "a DNS domain such as cluster.local", "%q is not a DNS domain", n.ClusterDomain)
	}
	seen := map[string]int{}
	for i, s := range n.DNSSearch {
		p := networking.Child("dnsSearch").Index(i)
		key := strings.ToLower(strings.TrimSuffix(s, "."))
		switch first, dup := seen[key]; {
		case !isDNSName(s):
			v.errs.addf(p, expected, "%q is not a DNS domain", s)
		case dup:
			v.errs.addf(p, "each suffix once", "%q repeats dnsSearch[%d]", s, first)
		default:
			seen[key] = i
		}
	}
	if max := maxDNSSearchPaths - 3; len(n.DNSSearch) > max {
		v.errs.addf(networking.Child("dnsSearch"), fmt.Sprintf("at most %d suffixes", max),
			"%d suffixes plus the 3 the kubelet adds exceed its limit of %d search paths", len(n.DNSSearch), maxDNSSearchPaths)
	}
}

// isDNSName accepts a DNS-1123 subdomain, case-insensitively and with one trailing dot.
func isDNSName(s string) bool {
	s = strings.TrimSuffix(s, ".")
	return s != "" && len(content.IsDNS1123Subdomain(strings.ToLower(s))) == 0
}

func (v *validator) linuxCNI() {
	cni := v.c.Spec.LinuxCNI
	if !v.oneOf(linuxCNI.Child("type"), cni.Type, "calico", "flannel", "bridge", "other") {
		return
	}
	if cni.Calico != nil {
		if cni.Type != "calico" {
			v.errs.addf(linuxCNI.Child("calico"), "no calico settings unless linuxCNI.type is calico",
				"calico settings are given but linuxCNI.type is %q", cni.Type)
		} else {
			v.calico(cni.Calico)
		}
	}
	if cni.Flannel != nil {
		// SetDefaults adds flannel settings for flannel/* designs; a CNI type that contradicts
		// the design is reported once, by the design rule.
		if cni.Type != "flannel" && !designRunsFlannel(v.c.Spec.Design) {
			v.errs.addf(linuxCNI.Child("flannel"), "no flannel settings unless linuxCNI.type is flannel",
				"flannel settings are given but linuxCNI.type is %q", cni.Type)
		} else if cni.Type == "flannel" {
			v.flannel(cni.Flannel)
		}
	}
}

// Calico accepts IPv4 IPAM block sizes from /20 to /32.
const (
	minCalicoBlockSize = 20
	maxCalicoBlockSize = 32
)

func (v *validator) calico(cs *CalicoSettings) {
	p := linuxCNI.Child("calico")
	blockSize := cs.BlockSize
	if blockSize != 0 && !v.intRange(p.Child("blockSize"), blockSize, minCalicoBlockSize, maxCalicoBlockSize) {
		blockSize = 0
	}
	for i, s := range cs.IPPools {
		pp := p.Child("ipPools").Index(i)
		pr, ok := v.cidr(pp, s, true)
		if ok && blockSize != 0 && blockSize < pr.Bits() {
			v.errs.addf(p.Child("blockSize"), fmt.Sprintf("a block size of at least /%d", pr.Bits()),
				"/%d blocks do not fit in the pool %s (%s)", blockSize, pr, pp)
		}
	}
	if cs.IPIPMode != "" {
		v.oneOf(p.Child("ipipMode"), cs.IPIPMode, "Always", "CrossSubnet", "Never")
	}
	if cs.Reservation != "" {
		v.oneOf(p.Child("reservation"), cs.Reservation, "IPReservation", "PoolExclusion")
	}
	v.calicoRouting(cs)
}

// Windows VXLAN (HNS overlay) only accepts VNIs from 4096 and the IANA VXLAN port.
const (
	minWindowsVNI    = 4096
	maxVNI           = 1<<24 - 1
	windowsVXLANPort = 4789
)

func (v *validator) flannel(f *FlannelSettings) {
	p := linuxCNI.Child("flannel")
	if f.Backend != "" && !v.oneOf(p.Child("backend"), f.Backend, "host-gw", "vxlan") {
		return
	}
	switch want := flannelBackendOf(v.c.Spec.Design); {
	case want != "" && f.Backend != "" && f.Backend != want:
		v.errs.addf(p.Child("backend"), want, "%q contradicts design %s", f.Backend, v.c.Spec.Design)
	}
	if f.Backend != "vxlan" {
		if f.VNI != 0 || f.Port != 0 {
			v.errs.addf(p, "vni and port only with the vxlan backend", "vni/port are set for backend %q", f.Backend)
		}
		return
	}
	if f.VNI != 0 && v.intRange(p.Child("vni"), f.VNI, 1, maxVNI) && v.hasWindows && f.VNI < minWindowsVNI {
		v.errs.addf(p.Child("vni"), fmt.Sprintf("%d or more", minWindowsVNI),
			"%d is below the smallest VNI Windows VXLAN accepts", f.VNI)
	}
	if f.Port != 0 && v.intRange(p.Child("port"), f.Port, 1, 65535) && v.hasWindows && f.Port != windowsVXLANPort {
		v.errs.addf(p.Child("port"), strconv.Itoa(windowsVXLANPort),
			"%d: Windows VXLAN only uses UDP port %d", f.Port, windowsVXLANPort)
	}
}

func flannelBackendOf(d NetworkDesign) string {
	switch d {
	case DesignFlannelHostGW:
		return "host-gw"
	case DesignFlannelVXLAN:
		return "vxlan"
	}
	return ""
}

var windowsPathRE = regexp.MustCompile(`^[A-Za-z]:\\`)

func (v *validator) windowsSettings() {
	w := v.c.Spec.Windows
	if w.InstallDir != "" && !windowsPathRE.MatchString(w.InstallDir) {
		v.errs.addf(windows.Child("installDir"), `an absolute Windows path such as C:\k`,
			"%q is not an absolute Windows path", w.InstallDir)
	}
	if w.HNSNetworkName != "" && strings.ContainsAny(w.HNSNetworkName, `"'\/`) {
		v.errs.addf(windows.Child("hnsNetworkName"), "a name without quotes or slashes, e.g. "+DefaultHNSNetworkName(v.c.Spec.Design),
			"%q cannot be written safely into PowerShell and CNI files", w.HNSNetworkName)
	}
	if s := w.SystemReservedMemory; s != "" {
		q, err := resource.ParseQuantity(s)
		if err != nil || q.Sign() <= 0 {
			v.errs.addf(windows.Child("systemReservedMemory"), "a positive quantity such as "+DefaultSystemReservedMemory,
				"%q is not a memory quantity", s)
		}
	}
}

// registryHostRE is distribution/reference's definition of a registry host[:port], anchored.
var registryHostRE = regexp.MustCompile(`^(?:` + reference.DomainRegexp.String() + `)$`)

func (v *validator) images() {
	im := v.c.Spec.Images
	if im.Registry != "" {
		r := strings.TrimSuffix(im.Registry, "/")
		if named, err := reference.ParseNormalizedNamed(r + "/pause"); err != nil || !reference.IsNameOnly(named) {
			v.errs.addf(images.Child("registry"), "host[:port][/path] without scheme or tag, e.g. repo.mylan.k8s:9999",
				"%q is not a registry prefix", im.Registry)
		}
	}
	v.imageRef(images.Child("windowsPause"), im.WindowsPause)
	v.imageRef(images.Child("linuxPause"), im.LinuxPause)
	v.imageRef(images.Child("gateway"), im.Gateway)
	seen := map[string]int{}
	for i, s := range im.InsecureRegistries {
		p := images.Child("insecureRegistries").Index(i)
		first, dup := seen[s]
		switch {
		case !isRegistryHost(s):
			v.errs.addf(p, "host[:port] without scheme, e.g. repo.mylan.k8s:8888", "%q is not a registry host", s)
		case dup:
			v.errs.addf(p, "each registry once", "%q repeats insecureRegistries[%d]", s, first)
		default:
			seen[s] = i
		}
	}
}

func (v *validator) imageRef(p fieldPath, s string) {
	if s == "" {
		return
	}
	const expected = "an image reference with a tag or digest, e.g. registry.k8s.io/pause:3.10"
	named, err := reference.ParseNormalizedNamed(s)
	switch {
	case err != nil:
		v.errs.addf(p, expected, "%q is not an image reference: %v", s, err)
	case reference.IsNameOnly(named):
		v.errs.addf(p, expected, "%q has no tag or digest; a sandbox image must be pinned", s)
	}
}

func isRegistryHost(s string) bool {
	if !registryHostRE.MatchString(s) {
		return false
	}
	if _, port, err := net.SplitHostPort(s); err == nil {
		n, err := strconv.Atoi(port)
		return err == nil && n >= 1 && n <= 65535
	}
	return true
}
