// Package v1alpha1 is the kubewin cluster description (apiVersion kubewin.io/v1alpha1, kind
// Cluster): what an operator knows about an existing cluster and the nodes to add to it.
// The types are plain data with JSON tags; YAML is decoded through sigs.k8s.io/yaml so the JSON
// tags are the field names users write.
package v1alpha1

const (
	// GroupVersion is the apiVersion of every kubewin document.
	GroupVersion = "kubewin.io/v1alpha1"
	// KindCluster is the kind of the cluster description.
	KindCluster = "Cluster"
)

// Cluster describes an existing cluster whose control plane and CNI run on Linux, and the Linux
// and Windows nodes that make it up or will join it.
type Cluster struct {
	APIVersion string      `json:"apiVersion"`
	Kind       string      `json:"kind"`
	Metadata   ObjectMeta  `json:"metadata"`
	Spec       ClusterSpec `json:"spec"`
}

// ObjectMeta names the cluster.
type ObjectMeta struct {
	Name string `json:"name"`
}

// ClusterSpec is the body of a Cluster.
type ClusterSpec struct {
	// KubernetesVersion the nodes run, "v1.37.1" or "1.37". Defaults to the newest supported.
	KubernetesVersion string `json:"kubernetesVersion,omitempty"`
	// ContainerRuntime of every node. Only containerd is supported by current Kubernetes.
	ContainerRuntime ContainerRuntime `json:"containerRuntime,omitempty"`
	Networking       Networking       `json:"networking"`
	// Design is how Windows pod networks are reached; see the NetworkDesign constants.
	Design NetworkDesign `json:"design"`
	// LinuxCNI is the CNI the existing Linux nodes use.
	LinuxCNI LinuxCNI `json:"linuxCNI"`
	// Windows holds settings shared by every Windows node.
	Windows WindowsSettings `json:"windows,omitempty"`
	// Images overrides registries and images.
	Images Images `json:"images,omitempty"`
	// Nodes lists every node, Linux and Windows.
	Nodes []Node `json:"nodes"`
	// GatewayGroups are sets of Linux nodes that hold the Windows pod-CIDR gateways as
	// keepalived VIPs (design upstream-tor/keepalived).
	GatewayGroups []GatewayGroup `json:"gatewayGroups,omitempty"`
	// TorRouter describes the router of design upstream-tor/router.
	TorRouter *TorRouter `json:"torRouter,omitempty"`
}

// ContainerRuntime selects and tunes the CRI runtime.
type ContainerRuntime struct {
	// Name is "containerd" (the default).
	Name string `json:"name,omitempty"`
	// Version of containerd, e.g. "2.1.4"; informs the config format rendered.
	Version string `json:"version,omitempty"`
	// CgroupDriver of Linux kubelets and containerd: "systemd" (default) or "cgroupfs".
	CgroupDriver string `json:"cgroupDriver,omitempty"`
}

// Networking is the cluster's addressing.
type Networking struct {
	// PodCIDRs are the cluster CIDRs (kube-controller-manager --cluster-cidr), IPv4.
	PodCIDRs []string `json:"podCIDRs"`
	// ServiceCIDR is --service-cluster-ip-range.
	ServiceCIDR string `json:"serviceCIDR"`
	// NodeCIDRMaskSize is --node-cidr-mask-size (default 24).
	NodeCIDRMaskSize int `json:"nodeCIDRMaskSize,omitempty"`
	// ClusterDNS is the kube-dns/CoreDNS Service IP.
	ClusterDNS string `json:"clusterDNS"`
	// ClusterDomain defaults to cluster.local.
	ClusterDomain string `json:"clusterDomain,omitempty"`
	// DNSSearch are extra search suffixes appended after the Kubernetes ones (e.g. mylan.k8s).
	DNSSearch []string `json:"dnsSearch,omitempty"`
	// APIServerEndpoint is host:port of the API server as nodes reach it without the kubernetes
	// Service (kubeadm's controlPlaneEndpoint). The HostProcess designs' pods need it: on Windows
	// the Service VIP works only once kube-proxy runs, and kube-proxy is one of those pods.
	APIServerEndpoint string `json:"apiServerEndpoint,omitempty"`
	// NodeSubnets are extra subnets to exempt from OutBoundNAT beyond the cluster NICs' subnets.
	NodeSubnets []string `json:"nodeSubnets,omitempty"`
	// UpstreamRoutes: see types_routing.go.
	UpstreamRoutes []string `json:"upstreamRoutes,omitempty"`
}

// NetworkDesign names one of the supported ways of joining Windows pod networks to the cluster.
type NetworkDesign string

const (
	// DesignUpstreamToRKeepalived: Windows pod gateways (.1) are keepalived VIPs on Linux nodes.
	DesignUpstreamToRKeepalived NetworkDesign = "upstream-tor/keepalived"
	// DesignUpstreamToRRouter: a real top-of-rack router holds gateways and static routes.
	DesignUpstreamToRRouter NetworkDesign = "upstream-tor/router"
	// DesignHostGW: every node routes every other node's pod CIDR via that node's IP.
	DesignHostGW NetworkDesign = "host-gw"
	// DesignFlannelHostGW: flanneld on every node, host-gw backend (win-bridge on Windows).
	DesignFlannelHostGW NetworkDesign = "flannel/host-gw"
	// DesignFlannelVXLAN: flanneld on every node, vxlan backend (win-overlay on Windows).
	DesignFlannelVXLAN NetworkDesign = "flannel/vxlan"
	// DesignCalicoHostProcess: Calico for Windows installed by the Tigera operator as HostProcess
	// pods (calico-node-windows); the operator's pods create the Windows HNS network, kube-proxy
	// runs as a HostProcess DaemonSet. kubewin owns the Windows node (containerd, kubelet), the
	// kube-proxy DaemonSet and the Calico settings Windows needs (IPAM strictAffinity, the
	// Installation's Windows fields); the cluster's operator owns calico-node-windows, the CNI
	// binaries and configuration on the node, and IPAM.
	DesignCalicoHostProcess NetworkDesign = "calico/hostprocess"
	// DesignFlannelHostProcess: flanneld on Windows runs as a HostProcess DaemonSet that kubewin
	// renders against the cluster's own flannel (its net-conf.json backend, vxlan or host-gw,
	// VNI and port), and kube-proxy as a HostProcess DaemonSet. The backend is not part of the
	// design name because it is the cluster's (linuxCNI.flannel.backend): what the design
	// decides is who runs flanneld on Windows and owns the HNS network (a pod, not kubewin's
	// Windows service), which every consumer — join, the node service, plan — switches on.
	DesignFlannelHostProcess NetworkDesign = "flannel/hostprocess"
)

// NetworkDesigns lists every design, in documentation order.
func NetworkDesigns() []NetworkDesign {
	return []NetworkDesign{DesignUpstreamToRKeepalived, DesignUpstreamToRRouter, DesignHostGW,
		DesignFlannelHostGW, DesignFlannelVXLAN, DesignCalicoHostProcess, DesignFlannelHostProcess}
}

// HostProcess reports whether the design's Windows pod network is made by the CNI's own
// HostProcess pods rather than by kubewin on the node.
func (d NetworkDesign) HostProcess() bool {
	return d == DesignCalicoHostProcess || d == DesignFlannelHostProcess
}

// LinuxCNI describes the CNI already running on the Linux nodes.
type LinuxCNI struct {
	// Type is "calico", "flannel", "bridge" or "other". "bridge" means the Linux nodes have no
	// CNI agent: kubewin join writes the reference bridge plugin with host-local IPAM over the
	// pod CIDR kube-controller-manager gives each node, and the design routes pod CIDRs
	// (host-gw routes or the ToR), as kubenet did.
	Type string `json:"type"`
	// Calico settings when Type is calico.
	Calico *CalicoSettings `json:"calico,omitempty"`
	// Flannel settings when Type is flannel or the design is flannel/*.
	Flannel *FlannelSettings `json:"flannel,omitempty"`
}

// CalicoSettings are the parts of the Calico configuration that matter to Windows nodes.
type CalicoSettings struct {
	// IPPools are the CIDRs of the Calico IPPools (default: the cluster pod CIDRs).
	IPPools []string `json:"ipPools,omitempty"`
	// IPIPMode is Always, CrossSubnet or Never (default Always, as in seed 000's tunl0 routes).
	IPIPMode string `json:"ipipMode,omitempty"`
	// BlockSize of IPAM blocks (default 26).
	BlockSize int `json:"blockSize,omitempty"`
	// Reservation chooses how Windows pod CIDRs are kept out of Calico IPAM:
	// "IPReservation" (default) or "PoolExclusion".
	Reservation string `json:"reservation,omitempty"`
	// ExportsConnectedRoutes is true when Calico's BGP exports the VIP holder's connected route
	// to the Windows pod CIDR (seed 000 §2.6); default true.
	ExportsConnectedRoutes *bool `json:"exportsConnectedRoutes,omitempty"`
	// VXLANMode, ClusterRoutes and IgnoreLooseRPF: see types_routing.go.
	VXLANMode      string `json:"vxlanMode,omitempty"`
	ClusterRoutes  string `json:"clusterRoutes,omitempty"`
	IgnoreLooseRPF bool   `json:"ignoreLooseRPF,omitempty"`
	// StrictAffinity is the cluster's IPAMConfig default spec.strictAffinity (unset: not
	// known). Calico for Windows needs true so that Linux nodes never borrow addresses from a
	// Windows node's blocks (docs.tigera.io, Calico for Windows, "Install using Operator").
	StrictAffinity *bool `json:"strictAffinity,omitempty"`
	// WindowsDataplane is the Tigera operator Installation's spec.calicoNetwork.windowsDataplane:
	// "HNS" makes the operator deploy calico-node-windows, "Disabled" (its default) does not.
	WindowsDataplane string `json:"windowsDataplane,omitempty"`
	// BGP is the Installation's spec.calicoNetwork.bgp: "Enabled" or "Disabled".
	BGP string `json:"bgp,omitempty"`
}

// FlannelSettings mirror flannel's net-conf.json backend.
type FlannelSettings struct {
	// Backend is "host-gw" or "vxlan".
	Backend string `json:"backend,omitempty"`
	// VNI for vxlan; Windows requires >= 4096 (default 4096).
	VNI int `json:"vni,omitempty"`
	// Port for vxlan; Windows requires 4789 (default 4789).
	Port int `json:"port,omitempty"`
}

// WindowsSettings are shared by every Windows node.
type WindowsSettings struct {
	// InstallDir is where binaries and configs live on the node (default C:\k).
	InstallDir string `json:"installDir,omitempty"`
	// HNSNetworkName is the name of the HNS network and of the CNI network (default l2bridge for
	// upstream-tor and host-gw designs, cbr0 for flannel/host-gw, vxlan0 for flannel/vxlan).
	HNSNetworkName string `json:"hnsNetworkName,omitempty"`
	// Taint adds os=windows:NoSchedule at registration (default true).
	Taint *bool `json:"taint,omitempty"`
	// HyperV adds Hyper-V isolated runtime handlers and RuntimeClasses.
	HyperV bool `json:"hyperV,omitempty"`
	// SystemReservedMemory for kubelet (default 2Gi, the docs' advice).
	SystemReservedMemory string `json:"systemReservedMemory,omitempty"`
	// KubeProxyServiceAccount is the Windows account kube-proxy runs as on every Windows node
	// (default: LocalSystem, except on builds where that breaks win-bridge endpoints — 1909,
	// seed 000 FAQ 6 — which get "NT AUTHORITY\NetworkService").
	KubeProxyServiceAccount string `json:"kubeProxyServiceAccount,omitempty"`
	// EnableDSR turns on kube-proxy Direct Server Return where the build supports it.
	EnableDSR bool `json:"enableDSR,omitempty"`
	// DaemonSets are the DaemonSets already in the cluster that run on Windows nodes (discover
	// fills it; unset means not known). Designs calico/hostprocess and flannel/hostprocess
	// render only the Windows DaemonSets the cluster lacks.
	DaemonSets []WindowsDaemonSet `json:"daemonSets,omitempty"`
}

// WindowsDaemonSet is a DaemonSet of the cluster that runs on Windows nodes.
type WindowsDaemonSet struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// Component is what it runs: "kube-proxy", "flannel", "calico-node" or "other".
	Component string `json:"component"`
	// HostProcess is true when its pods are HostProcess pods (securityContext.windowsOptions.hostProcess).
	HostProcess bool `json:"hostProcess,omitempty"`
}

// Images overrides where images come from.
type Images struct {
	// Registry prefix for images kubewin chooses (e.g. repo.mylan.k8s:9999).
	Registry string `json:"registry,omitempty"`
	// WindowsPause overrides the Windows sandbox (pause) image for every Windows node.
	WindowsPause string `json:"windowsPause,omitempty"`
	// LinuxPause overrides the Linux sandbox image.
	LinuxPause string `json:"linuxPause,omitempty"`
	// Gateway is the image of the gateway DaemonSets (kubewin, keepalived and chrt; build it with
	// deploy/gateway/Dockerfile). Defaults to kubewin-gateway:v1alpha1 under images.registry.
	Gateway string `json:"gateway,omitempty"`
	// WindowsHostProcess is the image of the HostProcess DaemonSets kubewin renders (designs
	// calico/hostprocess and flannel/hostprocess). Default: Microsoft's HostProcess base image;
	// the pods then run the binaries kubewin join installed on the node.
	WindowsHostProcess string `json:"windowsHostProcess,omitempty"`
	// InsecureRegistries are plain-HTTP registries containerd must be told about.
	InsecureRegistries []string `json:"insecureRegistries,omitempty"`
}

// OS of a node.
type OS string

const (
	OSLinux   OS = "linux"
	OSWindows OS = "windows"
)

// Role of a node.
type Role string

const (
	RoleControlPlane Role = "control-plane"
	RoleWorker       Role = "worker"
)

// Node is one machine of the cluster.
type Node struct {
	Name string `json:"name"`
	OS   OS     `json:"os"`
	// Role defaults to worker.
	Role Role `json:"role,omitempty"`
	// WindowsBuild is required for Windows nodes: "10.0.17763", "ltsc2019", "1809", ...
	WindowsBuild string `json:"windowsBuild,omitempty"`
	// NICs of the node.
	NICs []NIC `json:"nics"`
	// ClusterNIC names the NIC on the cluster network (defaults to the only NIC).
	ClusterNIC string `json:"clusterNIC,omitempty"`
	// PodCIDR is the node's spec.podCIDR; allocated by the planner when empty.
	PodCIDR string `json:"podCIDR,omitempty"`
	// Labels are extra node labels.
	Labels map[string]string `json:"labels,omitempty"`
}

// NIC is one network interface.
type NIC struct {
	Name string `json:"name"`
	// MAC as 00-15-00-00-00-02 or 00:15:00:00:00:02.
	MAC string `json:"mac,omitempty"`
	// IP is the IPv4 address of the interface.
	IP string `json:"ip"`
	// Prefix length of the interface's subnet.
	Prefix int `json:"prefix"`
	// Gateway is the default gateway reached through this NIC, if any.
	Gateway string `json:"gateway,omitempty"`
	// DNSServers configured on the NIC (informational; used in the node README).
	DNSServers []string `json:"dnsServers,omitempty"`
}

// GatewayGroup is a set of Linux nodes that hold Windows pod-CIDR gateway VIPs.
type GatewayGroup struct {
	Name string `json:"name"`
	// Interface on the members that is on the Windows nodes' L2 segment (default: the members'
	// cluster NIC).
	Interface string `json:"interface,omitempty"`
	// Members and their VRRP priorities.
	Members []GatewayMember `json:"members"`
	// WindowsNodes served by the group (default: every Windows node).
	WindowsNodes []string `json:"windowsNodes,omitempty"`
	// VRIDRange limits the virtual_router_ids this group may use on its interface (default 1-255).
	VRIDRange *Range `json:"vridRange,omitempty"`
	// VIPsPerInstance caps the VIPs in one VRRP instance (default and maximum 255).
	VIPsPerInstance int `json:"vipsPerInstance,omitempty"`
	// AdvertInterval as a Go duration (default 50ms: with VRRPv3 a dead holder is replaced in
	// about 160 ms, measured in bench/gateway). Sub-second needs VRRPv3.
	AdvertInterval string `json:"advertInterval,omitempty"`
	// VRRPVersion 2 or 3 (default 3).
	VRRPVersion int `json:"vrrpVersion,omitempty"`
	// RouterVIPs are addresses on the cluster network, one per VRRP instance in use, that move
	// with the holder; Linux nodes whose CNI does not export connected routes route Windows pod
	// CIDRs via them.
	RouterVIPs []string `json:"routerVIPs,omitempty"`
}

// GatewayMember is one keepalived node of a group.
type GatewayMember struct {
	Node string `json:"node"`
	// Priority 1-254; defaults to 150 minus 10 per position.
	Priority int `json:"priority,omitempty"`
}

// Range is an inclusive integer range.
type Range struct {
	First int `json:"first"`
	Last  int `json:"last"`
}

// TorRouter is the top-of-rack router of design upstream-tor/router.
type TorRouter struct {
	// Name for the route table file.
	Name string `json:"name,omitempty"`
	// IP of the router on the cluster network.
	IP string `json:"ip"`
}
