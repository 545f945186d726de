package v1alpha1

import (
	_ "embed"
	"strconv"
)

// Default values. They are exported so that help text, docs and tests quote the same numbers.
const (
	DefaultKubernetesVersion    = "v1.37.1"
	DefaultContainerRuntime     = "containerd"
	DefaultCgroupDriver         = "systemd"
	DefaultNodeCIDRMaskSize     = 24
	DefaultClusterDomain        = "cluster.local"
	DefaultInstallDir           = `C:\k`
	DefaultSystemReservedMemory = "2Gi"
	// DefaultKubeProxyAccount is the account kube-proxy runs as unless the spec or the build
	// table says otherwise: LocalSystem, as Calico (calico-windows kube-proxy service),
	// sig-windows-tools and rke2 (pkg/windows) run it. Builds flagged in the platform table
	// (1909, seed 000 FAQ 6) get RestrictedKubeProxyAccount instead.
	DefaultKubeProxyAccount    = "LocalSystem"
	RestrictedKubeProxyAccount = `NT AUTHORITY\NetworkService`
	DefaultCalicoIPIPMode      = "Always"
	DefaultCalicoBlockSize     = 26
	DefaultCalicoReservation   = "IPReservation"
	DefaultFlannelVNI          = 4096
	DefaultFlannelPort         = 4789
	// DefaultWindowsHostProcessImage is Microsoft's HostProcess base image (a few KB, runs on
	// every Windows build; microsoft/windows-host-process-containers-base-image README).
	DefaultWindowsHostProcessImage = "mcr.microsoft.com/oss/kubernetes/windows-host-process-containers-base-image:v1.0.0"
	// CalicoHNSNetworkName is the HNS network calico-node-windows creates, for BGP (L2Bridge)
	// and VXLAN (Overlay) alike (tigera/operator pkg/render/windows.go CNI config "name":
	// "Calico"; sig-windows-tools hostprocess/calico/kube-proxy/start.ps1 $NetworkName).
	CalicoHNSNetworkName = "Calico"
	// FlannelHostGWNetworkName is flanneld's default HNS network name for host-gw on Windows
	// (flannel-io/flannel pkg/backend/hostgw/hostgw_windows.go).
	FlannelHostGWNetworkName = "cbr0"
	DefaultVRRPVersion       = 3
	DefaultAdvertInterval    = "50ms"
	MaxVIPsPerInstance       = 255
	DefaultFirstPriority     = 150
	PriorityStep             = 10
)

//go:embed example.yaml
var exampleYAML []byte

// ExampleYAML returns the embedded example (the seed 000 cluster for current Kubernetes).
func ExampleYAML() []byte {
	out := make([]byte, len(exampleYAML))
	copy(out, exampleYAML)
	return out
}

// DefaultHNSNetworkName is the HNS/CNI network name each design uses when none is given.
func DefaultHNSNetworkName(d NetworkDesign) string {
	switch d {
	case DesignFlannelHostGW:
		return "cbr0"
	case DesignFlannelVXLAN:
		return "vxlan0"
	case DesignCalicoHostProcess:
		return CalicoHNSNetworkName
	default:
		return "l2bridge"
	}
}

// SetDefaults fills every optional field the planner relies on. It is idempotent and never
// overwrites a value the user gave.
func SetDefaults(c *Cluster) {
	s := &c.Spec
	if s.KubernetesVersion == "" {
		s.KubernetesVersion = DefaultKubernetesVersion
	}
	if s.ContainerRuntime.Name == "" {
		s.ContainerRuntime.Name = DefaultContainerRuntime
	}
	if s.ContainerRuntime.CgroupDriver == "" {
		s.ContainerRuntime.CgroupDriver = DefaultCgroupDriver
	}
	if s.Networking.NodeCIDRMaskSize == 0 {
		s.Networking.NodeCIDRMaskSize = DefaultNodeCIDRMaskSize
	}
	if s.Networking.ClusterDomain == "" {
		s.Networking.ClusterDomain = DefaultClusterDomain
	}

	switch s.LinuxCNI.Type {
	case "calico":
		if s.LinuxCNI.Calico == nil {
			s.LinuxCNI.Calico = &CalicoSettings{}
		}
		cs := s.LinuxCNI.Calico
		if len(cs.IPPools) == 0 {
			cs.IPPools = append([]string(nil), s.Networking.PodCIDRs...)
		}
		if cs.IPIPMode == "" {
			cs.IPIPMode = DefaultCalicoIPIPMode
			if s.Design == DesignCalicoHostProcess {
				// Calico for Windows has no IPIP (tigera/operator validation.go): BGP
				// without encapsulation or VXLAN.
				cs.IPIPMode = "Never"
			}
		}
		if cs.BlockSize == 0 {
			cs.BlockSize = DefaultCalicoBlockSize
		}
		if cs.Reservation == "" {
			cs.Reservation = DefaultCalicoReservation
		}
		if cs.ExportsConnectedRoutes == nil {
			t := true
			cs.ExportsConnectedRoutes = &t
		}
	}
	if s.Design == DesignFlannelHostGW || s.Design == DesignFlannelVXLAN || s.Design == DesignFlannelHostProcess || s.LinuxCNI.Type == "flannel" {
		if s.LinuxCNI.Flannel == nil {
			s.LinuxCNI.Flannel = &FlannelSettings{}
		}
		f := s.LinuxCNI.Flannel
		if f.Backend == "" {
			f.Backend = "host-gw"
			if s.Design == DesignFlannelVXLAN {
				f.Backend = "vxlan"
			}
		}
		if f.Backend == "vxlan" {
			if f.VNI == 0 {
				f.VNI = DefaultFlannelVNI
			}
			if f.Port == 0 {
				f.Port = DefaultFlannelPort
			}
		}
	}

	w := &s.Windows
	if w.InstallDir == "" {
		w.InstallDir = DefaultInstallDir
	}
	if w.HNSNetworkName == "" {
		w.HNSNetworkName = DefaultHNSNetworkName(s.Design)
		if f := s.LinuxCNI.Flannel; s.Design == DesignFlannelHostProcess && f != nil {
			w.HNSNetworkName = flannelWindowsNetworkName(f)
		}
	}
	if s.Design.HostProcess() && s.Images.WindowsHostProcess == "" {
		s.Images.WindowsHostProcess = DefaultWindowsHostProcessImage
	}
	if w.Taint == nil {
		t := true
		w.Taint = &t
	}
	if w.SystemReservedMemory == "" {
		w.SystemReservedMemory = DefaultSystemReservedMemory
	}

	for i := range s.Nodes {
		n := &s.Nodes[i]
		if n.Role == "" {
			n.Role = RoleWorker
		}
		if n.ClusterNIC == "" && len(n.NICs) == 1 {
			n.ClusterNIC = n.NICs[0].Name
		}
	}

	for i := range s.GatewayGroups {
		g := &s.GatewayGroups[i]
		if g.VRIDRange == nil {
			g.VRIDRange = &Range{First: 1, Last: 255}
		}
		if g.VIPsPerInstance == 0 {
			g.VIPsPerInstance = MaxVIPsPerInstance
		}
		if g.VRRPVersion == 0 {
			g.VRRPVersion = DefaultVRRPVersion
		}
		if g.AdvertInterval == "" {
			g.AdvertInterval = DefaultAdvertInterval
			if g.VRRPVersion == 2 {
				g.AdvertInterval = "1s"
			}
		}
		for j := range g.Members {
			if g.Members[j].Priority == 0 {
				p := DefaultFirstPriority - PriorityStep*j
				if p < 1 {
					p = 1
				}
				g.Members[j].Priority = p
			}
		}
		if g.Interface == "" {
			g.Interface = memberClusterNIC(s.Nodes, g.Members)
		}
	}
}

// memberClusterNIC returns the cluster NIC name shared by the group's members, or "" when they
// differ (validation then asks for an explicit interface).
func memberClusterNIC(nodes []Node, members []GatewayMember) string {
	name := ""
	for _, m := range members {
		for _, n := range nodes {
			if n.Name != m.Node {
				continue
			}
			nic := n.ClusterNIC
			if nic == "" && len(n.NICs) == 1 {
				nic = n.NICs[0].Name
			}
			if name == "" {
				name = nic
			} else if name != nic {
				return ""
			}
		}
	}
	return name
}

// flannelWindowsNetworkName is the HNS network flanneld on Windows creates when net-conf.json
// gives no Backend.Name: "flannel.<VNI>" for vxlan (flannel-io/flannel
// pkg/backend/vxlan/vxlan_windows.go), "cbr0" for host-gw (hostgw_windows.go).
func flannelWindowsNetworkName(f *FlannelSettings) string {
	if f.Backend == "vxlan" {
		vni := f.VNI
		if vni == 0 {
			vni = DefaultFlannelVNI
		}
		return "flannel." + strconv.Itoa(vni)
	}
	return FlannelHostGWNetworkName
}
