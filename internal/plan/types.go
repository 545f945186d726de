// Package plan turns a validated cluster spec into every decision kubewin makes, as plain data
// that serialises to plan.json. It performs no I/O and renders nothing: render, check, verify
// and the gateway controller all read a Plan.
package plan

// APIVersion and Kind of plan.json.
const (
	APIVersion = "kubewin.io/v1alpha1"
	Kind       = "Plan"
)

// Plan is the complete, deterministic plan for a cluster. Slices are sorted (nodes by name,
// groups by name, routes by destination) so that the same spec always yields the same bytes.
// Identical lists (OutBoundNAT exceptions, DNS settings, the Windows pod-CIDR routes of Linux
// nodes) share one backing array across nodes: treat a Plan as read-only.
type Plan struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`

	Cluster    ClusterInfo    `json:"cluster"`
	Networking NetworkingPlan `json:"networking"`
	Images     ImagePlan      `json:"images"`

	Nodes         []NodePlan         `json:"nodes"`
	GatewayGroups []GatewayGroupPlan `json:"gatewayGroups,omitempty"`

	// TorRoutes is the static route table a top-of-rack router (or any router on the cluster
	// network) needs: every node's pod CIDR via that node (design upstream-tor/router), or the
	// Windows pod CIDRs via their gateway holders.
	TorRoutes []Route `json:"torRoutes,omitempty"`
	// TorGatewayAddresses are the addresses the ToR router itself must hold (upstream-tor/router:
	// the .1 of every Windows pod CIDR).
	TorGatewayAddresses []string `json:"torGatewayAddresses,omitempty"`

	// Calico is set when the Linux CNI is Calico.
	Calico *CalicoPlan `json:"calico,omitempty"`
	// Flannel is set for flannel/* designs.
	Flannel *FlannelPlan `json:"flannel,omitempty"`
	// HostProcess is set for designs calico/hostprocess and flannel/hostprocess (hostprocess.go).
	HostProcess *HostProcessPlan `json:"hostProcess,omitempty"`

	// RuntimeClasses for Windows workloads, one per Windows build (plus Hyper-V variants).
	RuntimeClasses []RuntimeClassPlan `json:"runtimeClasses,omitempty"`

	// Notes are cluster-level decisions with no structured home (e.g. why no routes were
	// planned, or that gateway groups are ignored by the chosen design), sorted.
	Notes []string `json:"notes,omitempty"`
}

// ClusterInfo echoes the cluster-wide choices.
type ClusterInfo struct {
	Name              string `json:"name"`
	KubernetesVersion string `json:"kubernetesVersion"`
	Design            string `json:"design"`
	LinuxCNI          string `json:"linuxCNI"`
	ContainerRuntime  string `json:"containerRuntime"`
	CgroupDriver      string `json:"cgroupDriver"`
}

// NetworkingPlan is the resolved cluster addressing.
type NetworkingPlan struct {
	ClusterCIDRs     []string `json:"clusterCIDRs"`
	ServiceCIDR      string   `json:"serviceCIDR"`
	NodeCIDRMaskSize int      `json:"nodeCIDRMaskSize"`
	ClusterDNS       string   `json:"clusterDNS"`
	ClusterDomain    string   `json:"clusterDomain"`
	// DNSSearch is the full search list a Windows pod in namespace "default" gets:
	// default.svc.<domain>, svc.<domain>, <domain>, then the extra suffixes.
	DNSSearch []string `json:"dnsSearch"`
	// NodeSubnets are the subnets of the cluster NICs (plus spec.networking.nodeSubnets).
	NodeSubnets []string `json:"nodeSubnets"`
}

// ImagePlan holds the images chosen for the cluster.
type ImagePlan struct {
	LinuxPause string `json:"linuxPause"`
	// Gateway runs the gateway DaemonSets (kubewin gateway + keepalived); set when the plan has
	// gateway groups.
	Gateway            string   `json:"gateway,omitempty"`
	InsecureRegistries []string `json:"insecureRegistries,omitempty"`
	// Registry is spec.images.registry: the prefix that replaced the upstream registry in every
	// image kubewin chose (user-given images are used as written).
	Registry string `json:"registry,omitempty"`
}

// NodePlan is everything decided for one node.
type NodePlan struct {
	Name string `json:"name"`
	OS   string `json:"os"`
	Role string `json:"role"`

	// NodeIP is the IP of the cluster NIC (kubelet --node-ip).
	NodeIP string `json:"nodeIP"`
	// ClusterNIC is the interface name on the cluster network and ClusterNICMAC its MAC.
	ClusterNIC    string `json:"clusterNIC"`
	ClusterNICMAC string `json:"clusterNICMAC,omitempty"`
	// NodeSubnet is the cluster NIC's subnet (e.g. 100.100.126.0/23).
	NodeSubnet string `json:"nodeSubnet"`

	// PodCIDR and where it came from: "spec" or "allocated".
	PodCIDR       string `json:"podCIDR"`
	PodCIDRSource string `json:"podCIDRSource"`

	// Gateway and Endpoint duplicate Windows.Gateway / Windows.HostEndpointIP at the top level so
	// plan.json answers "what is node X's gateway" without knowing the OS (empty on Linux).
	Gateway    string   `json:"gateway,omitempty"`
	Endpoint   string   `json:"endpoint,omitempty"`
	Exceptions []string `json:"exceptions,omitempty"`

	Labels map[string]string `json:"labels"`
	Taints []Taint           `json:"taints,omitempty"`

	Windows *WindowsNodePlan `json:"windows,omitempty"`
	Linux   *LinuxNodePlan   `json:"linux,omitempty"`
}

// Taint is a node taint applied at registration.
type Taint struct {
	Key string `json:"key"`
	// Operator is set on tolerations only ("Equal").
	Operator string `json:"operator,omitempty"`
	Value    string `json:"value,omitempty"`
	Effect   string `json:"effect"`
}

// WindowsNodePlan is the Windows-specific part of a node plan.
type WindowsNodePlan struct {
	// Build is the numeric OS build (17763); BuildLabel is "10.0.17763"; ImageTag "ltsc2019".
	Build      int    `json:"build"`
	BuildLabel string `json:"buildLabel"`
	ImageTag   string `json:"imageTag"`

	InstallDir string `json:"installDir"`
	CNIBinDir  string `json:"cniBinDir"`
	CNIConfDir string `json:"cniConfDir"`
	LogDir     string `json:"logDir"`

	// HNS network: name (= CNI network name = kube-proxy winkernel.networkName), type
	// (L2Bridge or Overlay), the adapter it binds to, its subnet and gateway.
	HNSNetworkName string `json:"hnsNetworkName"`
	HNSNetworkType string `json:"hnsNetworkType"`
	AdapterName    string `json:"adapterName"`
	// Gateway is the first address of the pod CIDR; HostEndpointIP the second (endpoint cbr0,
	// attached to compartment 1 with forwarding enabled).
	Gateway          string `json:"gateway"`
	HostEndpointName string `json:"hostEndpointName"`
	HostEndpointIP   string `json:"hostEndpointIP"`
	// GatewayHolder says who answers for Gateway: "keepalived:<group>", "tor-router" or
	// "windows-host" (host-gw and flannel designs, where the host endpoint routes).
	GatewayHolder string `json:"gatewayHolder"`

	// CNI: plugin type ("win-bridge", "win-overlay", or "flannel" delegating to one of them).
	CNIPlugin string `json:"cniPlugin"`
	// CNIDelegate is the plugin flannel delegates to ("win-bridge" or "win-overlay"); empty
	// when CNIPlugin is not "flannel".
	CNIDelegate string `json:"cniDelegate,omitempty"`
	// PodIPRangeStart is the first pod CIDR address the CNI's IPAM may hand to a pod: after
	// the gateway (.1), the host endpoint (.2) and, on overlay networks, the kube-proxy source
	// VIP (.3).
	PodIPRangeStart string `json:"podIPRangeStart"`
	// OutboundNATExceptions = cluster CIDRs + service CIDR + node subnets.
	OutboundNATExceptions []string `json:"outboundNATExceptions"`
	// ServiceRoutes get a ROUTE (HNS v1) / SDNRoute (HCN v2) policy with NeedEncap.
	ServiceRoutes []string `json:"serviceRoutes"`
	// NodeRoute is the node's own address as a /32 that pods reach through the host endpoint
	// (an SDNRoute/ROUTE policy with NeedEncap, L2Bridge only): without it a pod cannot reach
	// its own node — hostNetwork and HostProcess pods, node-local endpoints, same-node NodePorts
	// (containernetworking/plugins win-bridge sample-v2.conf, microsoft/SDN l2bridge confs).
	NodeRoute  string   `json:"nodeRoute,omitempty"`
	DNSServers []string `json:"dnsServers"`
	DNSSearch  []string `json:"dnsSearch"`

	// Routes the Windows host itself needs (host-gw: other nodes' pod CIDRs via their IPs).
	Routes []Route `json:"routes,omitempty"`

	// Images.
	PauseImage      string `json:"pauseImage"`
	NanoserverImage string `json:"nanoserverImage"`

	// Runtime handlers configured in containerd ("runhcs-wcow-process" and, with Hyper-V,
	// "runhcs-wcow-hypervisor-<build>").
	RuntimeHandlers []RuntimeHandler `json:"runtimeHandlers"`

	// Kubelet settings that the renderer turns into KubeletConfiguration / flags.
	SystemReservedMemory string `json:"systemReservedMemory"`
	// KubeProxy settings.
	KubeProxyMode           string `json:"kubeProxyMode"`
	KubeProxySourceVIP      string `json:"kubeProxySourceVIP,omitempty"`
	KubeProxyServiceAccount string `json:"kubeProxyServiceAccount"`
	EnableDSR               bool   `json:"enableDSR"`

	// ContainerdPipe is the CRI endpoint.
	ContainerdPipe string `json:"containerdPipe"`
	// NetworkOwner is NetworkOwnerDaemonSet when a CNI DaemonSet's HostProcess pod creates and
	// owns the HNS network (designs calico/hostprocess, flannel/hostprocess); empty when
	// kubewin creates it.
	NetworkOwner string `json:"networkOwner,omitempty"`
}

// RuntimeHandler is one containerd runtime handler on Windows.
type RuntimeHandler struct {
	Name string `json:"name"`
	// Isolation is "process" or "hyperv".
	Isolation string `json:"isolation"`
	// SandboxImage for the handler; for hyperv the image build may be <= host build.
	SandboxImage string `json:"sandboxImage"`
	// ImageBuild is the Windows build the handler runs (hyperv only).
	ImageBuild int `json:"imageBuild,omitempty"`
}

// LinuxNodePlan is the Linux-specific part of a node plan.
type LinuxNodePlan struct {
	CgroupDriver string            `json:"cgroupDriver"`
	Modules      []string          `json:"modules"`
	Sysctls      map[string]string `json:"sysctls"`
	// Routes the node needs for the design (host-gw routes, Windows pod CIDRs via router VIPs).
	Routes []Route `json:"routes,omitempty"`
	// Gateway is set when the node is a member of a gateway group (the first by group name).
	Gateway *GatewayMembership `json:"gateway,omitempty"`
	// Gateways lists every membership, sorted by group name, when the node belongs to more
	// than one group (each group on its own interface); Gateways[0] == *Gateway.
	Gateways []GatewayMembership `json:"gateways,omitempty"`
}

// GatewayMembership is one Linux node's role in a gateway group.
type GatewayMembership struct {
	Group     string `json:"group"`
	RouterID  string `json:"routerID"`
	Priority  int    `json:"priority"`
	Interface string `json:"interface"`
	SourceIP  string `json:"sourceIP"`
	// Peers are the other members' IPs (unicast_peer).
	Peers []string `json:"peers"`
}

// Route is one static route.
type Route struct {
	Destination string `json:"destination"`
	Via         string `json:"via"`
	// Dev is the outgoing interface when known.
	Dev string `json:"dev,omitempty"`
	// Reason explains the route (e.g. "pod CIDR of node009").
	Reason string `json:"reason,omitempty"`
}

// GatewayGroupPlan is the keepalived layout of one group: identical on every member.
type GatewayGroupPlan struct {
	Name      string              `json:"name"`
	Interface string              `json:"interface"`
	Members   []GatewayMemberPlan `json:"members"`
	// VRRPVersion is 2 or 3; AdvertIntervalSeconds may be fractional only with version 3.
	VRRPVersion           int     `json:"vrrpVersion"`
	AdvertIntervalSeconds float64 `json:"advertIntervalSeconds"`
	VRIDRange             [2]int  `json:"vridRange"`
	// VIPsPerInstance, RouterVIPs and RouterVIPsRequired are the layout inputs, kept so the
	// gateway controller can recompute the layout from plan.json (see LayoutInput).
	VIPsPerInstance    int                `json:"vipsPerInstance"`
	RouterVIPs         []string           `json:"routerVIPs,omitempty"`
	RouterVIPsRequired bool               `json:"routerVIPsRequired,omitempty"`
	Instances          []VRRPInstancePlan `json:"instances"`
	// VRIDs and VIPs summarise Instances for readers of plan.json.
	VRIDs []int    `json:"vrids"`
	VIPs  []string `json:"vips"`
}

// GatewayMemberPlan is a member as every member sees it.
type GatewayMemberPlan struct {
	Node     string `json:"node"`
	IP       string `json:"ip"`
	Priority int    `json:"priority"`
	RouterID string `json:"routerID"`
}

// VRRPInstancePlan is one vrrp_instance: one VRID carrying up to 255 VIPs.
type VRRPInstancePlan struct {
	Name string `json:"name"`
	VRID int    `json:"vrid"`
	// VIPs in address/prefix form with the Windows node each serves, sorted by address.
	VIPs []VIPPlan `json:"vips"`
	// RouterVIP is the instance's address on the cluster network, if configured.
	RouterVIP string `json:"routerVIP,omitempty"`
}

// VIPPlan is one gateway VIP.
type VIPPlan struct {
	// Address with prefix, e.g. 10.160.11.1/24.
	Address string `json:"address"`
	// PodCIDR the VIP is the gateway of and WindowsNode that owns it.
	PodCIDR     string `json:"podCIDR"`
	WindowsNode string `json:"windowsNode"`
}

// CalicoPlan holds what Calico needs so its IPAM never hands out Windows pod addresses.
type CalicoPlan struct {
	IPPools []string `json:"ipPools"`
	// Reservation is "IPReservation" or "PoolExclusion".
	Reservation string `json:"reservation"`
	// ReservedCIDRs are the Windows pod CIDRs that fall inside a Calico pool.
	ReservedCIDRs []string `json:"reservedCIDRs"`
	// ExportsConnectedRoutes tells whether other Linux nodes learn the VIP holder's route.
	ExportsConnectedRoutes bool   `json:"exportsConnectedRoutes"`
	IPIPMode               string `json:"ipipMode"`
	BlockSize              int    `json:"blockSize"`
}

// FlannelPlan holds flannel's net-conf.json.
type FlannelPlan struct {
	Network string `json:"network"`
	Backend string `json:"backend"`
	VNI     int    `json:"vni,omitempty"`
	Port    int    `json:"port,omitempty"`
}

// RuntimeClassPlan is one RuntimeClass for Windows workloads.
type RuntimeClassPlan struct {
	Name         string            `json:"name"`
	Handler      string            `json:"handler"`
	NodeSelector map[string]string `json:"nodeSelector"`
	Tolerations  []Taint           `json:"tolerations,omitempty"`
}
