package plan

import (
	"net"
	"slices"

	"github.com/kubewin/kubewin/pkg/api/v1alpha1"
)

// Designs calico/hostprocess and flannel/hostprocess: the CNI's HostProcess pods make the
// Windows HNS network; kubewin plans the node (containerd with HostProcess support, the
// kubelet) and the cluster-side pieces Windows needs that the cluster lacks.

// NetworkOwnerDaemonSet marks a Windows node whose HNS network a CNI DaemonSet's HostProcess
// pod creates and owns: nothing on the node may create, change or delete it.
const NetworkOwnerDaemonSet = "cni-daemonset"

// Names of the objects kubewin renders for the HostProcess designs.
const (
	KubeProxyWindowsName      = "kube-proxy-windows"
	KubeProxyNamespace        = "kube-system"
	KubeProxyServiceAccount   = "kube-proxy"
	FlannelWindowsName        = "kube-flannel-ds-windows"
	FlannelNamespace          = "kube-flannel"
	FlannelServiceAccount     = "flannel"
	CalicoHostEndpoint        = "Calico_ep"
	SourceVIPFromEndpoint     = "host-endpoint"
	SourceVIPFromHostLocal    = "host-local"
	CalicoOperatorNamespace   = "tigera-operator"
	CalicoServicesEndpointMap = "kubernetes-services-endpoint"
)

// HostProcessPlan is the cluster side of a HostProcess design.
type HostProcessPlan struct {
	// CNI is "calico" or "flannel".
	CNI string `json:"cni"`
	// NetworkName is the HNS network the CNI's pods create (kube-proxy --network-name) and
	// NetworkType its type: Overlay (VXLAN) or L2Bridge (BGP, host-gw).
	NetworkName string `json:"networkName"`
	NetworkType string `json:"networkType"`
	// SourceVIP says how kube-proxy finds its source VIP on an Overlay network, as the
	// sig-windows-tools HostProcess start scripts did: "host-endpoint" (the address of the
	// CNI's host endpoint, Calico_ep, which calico-node-windows creates) or "host-local" (an
	// address reserved once from the network's subnet with the host-local IPAM plugin and kept
	// in a file); empty on L2Bridge networks.
	SourceVIP string `json:"sourceVIP,omitempty"`
	// APIServerHost and APIServerPort are where the pods reach the API server.
	APIServerHost string `json:"apiServerHost"`
	APIServerPort string `json:"apiServerPort"`
	// Image runs the pods (a HostProcess base image); the binaries come from BinDir on the node
	// (under InstallDir, which also holds hns.psm1).
	Image      string `json:"image"`
	InstallDir string `json:"installDir"`
	BinDir     string `json:"binDir"`
	// CNIBinDir and CNIConfDir are the node's CNI directories (containerd's bin_dir/conf_dir).
	CNIBinDir  string `json:"cniBinDir"`
	CNIConfDir string `json:"cniConfDir"`
	EnableDSR  bool   `json:"enableDSR"`
	// NodeSelector and Tolerations place the pods on Windows nodes only.
	NodeSelector map[string]string `json:"nodeSelector"`
	Tolerations  []Taint           `json:"tolerations"`
	// KubeProxy is the kube-proxy DaemonSet to render; nil when the cluster has a HostProcess
	// one for Windows already.
	KubeProxy *DaemonSetPlan `json:"kubeProxy,omitempty"`
	// Flannel is flanneld's DaemonSet (flannel/hostprocess), nil when the cluster has one.
	Flannel *FlannelHostProcessPlan `json:"flannel,omitempty"`
	// Calico are the Calico settings Windows needs (calico/hostprocess).
	Calico *CalicoWindowsPlan `json:"calico,omitempty"`
	// Replace lists the cluster's Windows DaemonSets that are not HostProcess pods and do the
	// same job as one kubewin renders: two would fight over the node's network.
	Replace []string `json:"replace,omitempty"`
}

// DaemonSetPlan names a DaemonSet and the ServiceAccount its pods use.
type DaemonSetPlan struct {
	Namespace      string `json:"namespace"`
	Name           string `json:"name"`
	ServiceAccount string `json:"serviceAccount"`
}

// FlannelHostProcessPlan is flanneld on Windows with the cluster's backend.
type FlannelHostProcessPlan struct {
	DaemonSetPlan
	Network string `json:"network"`
	Backend string `json:"backend"`
	VNI     int    `json:"vni,omitempty"`
	Port    int    `json:"port,omitempty"`
}

// CalicoWindowsPlan are the settings of the cluster's Calico that Windows needs.
type CalicoWindowsPlan struct {
	// SetStrictAffinity: the IPAMConfig default must get strictAffinity true (it is false or
	// not known).
	SetStrictAffinity bool `json:"setStrictAffinity"`
	// ServiceCIDRs, WindowsDataplane and the CNI directories are what the Installation default
	// gets (tigera/operator api/v1 installation_types.go: serviceCIDRs "required when using
	// Calico for Windows", calicoNetwork.windowsDataplane HNS, windowsNodes cniBinDir and
	// cniConfigDir, which "must match" containerd's on the Windows nodes).
	ServiceCIDRs     []string `json:"serviceCIDRs"`
	WindowsDataplane string   `json:"windowsDataplane"`
	CNILogDir        string   `json:"cniLogDir"`
	// Overlay is true for VXLAN pools (no BGP to Windows).
	Overlay bool `json:"overlay"`
}

func (b *builder) hostProcessPlan(p *Plan) *HostProcessPlan {
	s := b.s
	if !s.Design.HostProcess() {
		return nil
	}
	host, port, err := net.SplitHostPort(s.Networking.APIServerEndpoint)
	if err != nil {
		b.errs.add("spec.networking.apiServerEndpoint", "design %s needs host:port of the API server: %v", s.Design, err)
		return nil
	}
	w := &s.Windows
	hp := &HostProcessPlan{
		NetworkName:   w.HNSNetworkName,
		NetworkType:   "L2Bridge",
		APIServerHost: host,
		APIServerPort: port,
		Image:         s.Images.WindowsHostProcess,
		InstallDir:    w.InstallDir,
		BinDir:        winJoin(w.InstallDir, "bin"),
		CNIBinDir:     winJoin(w.InstallDir, "cni", "bin"),
		CNIConfDir:    winJoin(w.InstallDir, "cni", "conf"),
		EnableDSR:     w.EnableDSR,
		NodeSelector:  map[string]string{"kubernetes.io/os": "windows"},
	}
	if *w.Taint {
		t := windowsTaint()
		t.Operator = "Equal"
		hp.Tolerations = []Taint{t}
	}
	has := map[string]bool{}
	for _, ds := range w.DaemonSets {
		ref := ds.Namespace + "/" + ds.Name
		if ds.HostProcess {
			has[ds.Component] = true
		} else if ds.Component != "other" {
			hp.Replace = append(hp.Replace, ref)
		}
	}
	slices.Sort(hp.Replace)
	if !has["kube-proxy"] {
		hp.KubeProxy = &DaemonSetPlan{Namespace: KubeProxyNamespace, Name: KubeProxyWindowsName, ServiceAccount: KubeProxyServiceAccount}
	}
	switch s.Design {
	case v1alpha1.DesignCalicoHostProcess:
		hp.CNI = "calico"
		cs := s.LinuxCNI.Calico
		overlay := cs != nil && cs.VXLANMode != "" && cs.VXLANMode != "Never"
		if overlay {
			hp.NetworkType, hp.SourceVIP = "Overlay", SourceVIPFromEndpoint
		}
		hp.Calico = &CalicoWindowsPlan{
			SetStrictAffinity: cs == nil || cs.StrictAffinity == nil || !*cs.StrictAffinity,
			ServiceCIDRs:      []string{p.Networking.ServiceCIDR},
			WindowsDataplane:  "HNS",
			CNILogDir:         winJoin(w.InstallDir, "logs", "calico-cni"),
			Overlay:           overlay,
		}
	case v1alpha1.DesignFlannelHostProcess:
		hp.CNI = "flannel"
		f := s.LinuxCNI.Flannel
		if f == nil || len(b.clusters) == 0 {
			b.errs.add("spec.linuxCNI.flannel", "design %s needs the cluster's flannel backend", s.Design)
			return nil
		}
		if f.Backend == "vxlan" {
			hp.NetworkType, hp.SourceVIP = "Overlay", SourceVIPFromHostLocal
		}
		if !has["flannel"] {
			fp := &FlannelHostProcessPlan{
				DaemonSetPlan: DaemonSetPlan{Namespace: FlannelNamespace, Name: FlannelWindowsName, ServiceAccount: FlannelServiceAccount},
				Network:       b.clusters[0].String(), Backend: f.Backend,
			}
			if f.Backend == "vxlan" {
				fp.VNI, fp.Port = f.VNI, f.Port
			}
			hp.Flannel = fp
		}
	default:
		b.errs.add("spec.design", "%s is not a HostProcess design", s.Design)
		return nil
	}
	return hp
}

// hostProcessNode adjusts a Windows node plan for a HostProcess design: the CNI's pod creates
// and owns the HNS network, so kubewin plans no network, endpoint, routes or kube-proxy service
// for the node. Calico IPAM hands out /26 blocks and ignores the node's pod CIDR, so a Calico
// node has no gateway or host endpoint address kubewin could know.
func (b *builder) hostProcessNode(wp *WindowsNodePlan, sh windowsShared) {
	s := b.s
	wp.NetworkOwner = NetworkOwnerDaemonSet
	wp.GatewayHolder = "cni"
	wp.Routes = nil
	wp.KubeProxySourceVIP = ""
	switch s.Design {
	case v1alpha1.DesignCalicoHostProcess:
		wp.CNIPlugin, wp.CNIDelegate = "calico", ""
		if cs := s.LinuxCNI.Calico; cs != nil && cs.VXLANMode != "" && cs.VXLANMode != "Never" {
			wp.HNSNetworkType = "Overlay"
		}
		wp.Gateway, wp.HostEndpointName, wp.HostEndpointIP, wp.PodIPRangeStart, wp.NodeRoute = "", CalicoHostEndpoint, "", "", ""
	case v1alpha1.DesignFlannelHostProcess:
		wp.CNIPlugin, wp.CNIDelegate = "flannel", "win-bridge"
		if f := s.LinuxCNI.Flannel; f != nil && f.Backend == "vxlan" {
			wp.HNSNetworkType, wp.CNIDelegate, wp.NodeRoute = "Overlay", "win-overlay", ""
			// As the flannel pod's CNI conf says (render/hostprocess.go; sharedWindows: why).
			wp.OutboundNATExceptions = sh.overlayExceptions
		}
	}
}
