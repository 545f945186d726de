package render

import (
	"fmt"
	"net/netip"
	"slices"

	"github.com/kubewin/kubewin/internal/plan"
)

// CNI configuration for Windows nodes.
//
// Policy form: HCN v2 ("apiVersion": 2, policies OutBoundNAT with Settings.Exceptions and
// SDNRoute with Settings.DestinationPrefix/NeedEncap). With containerd the pod network is an
// HCN namespace; win-bridge's HNS v1 path (apiVersion unset) attaches endpoints to a container
// ID the Docker way and, for any namespace other than "none", expects the endpoint to exist
// already, so it fails under containerd (containernetworking/plugins pkg/hns
// AddHnsEndpoint vs AddHcnEndpoint). The seed's ROUTE/ExceptionList v1 policies are therefore
// expressed in their v2 form.
//
// IPAM: win-bridge's v2 path takes the endpoint address from IPAM only, so host-local hands out
// the pod CIDR from the plan's first free address; win-bridge then makes x.2 (the host endpoint
// cbr0, forwarding enabled) the pod's gateway and the Windows host routes onwards.
//
// cniVersion 1.0.0: win-bridge v1.x supports every spec version (version.All) and containerd
// 2.x loads 1.0.0 configurations through libcni.

const cniVersion = "1.0.0"

type cniConf struct {
	CNIVersion   string          `json:"cniVersion"`
	Name         string          `json:"name"`
	Type         string          `json:"type"`
	Capabilities map[string]bool `json:"capabilities,omitempty"`
	APIVersion   int             `json:"apiVersion,omitempty"`
	DNS          *cniDNS         `json:"dns,omitempty"`
	IPAM         *cniIPAM        `json:"ipam,omitempty"`
	Policies     []cniPolicy     `json:"policies,omitempty"`
	LoopbackDSR  bool            `json:"loopbackDSR,omitempty"`
	// Delegate is flannel's: the win-bridge/win-overlay configuration it completes with the
	// node's lease.
	Delegate *cniDelegate `json:"delegate,omitempty"`
}

// cniDelegate holds the fields of win-bridge/win-overlay's NetConf (pkg/hns.NetConf).
type cniDelegate struct {
	Type        string      `json:"type,omitempty"`
	APIVersion  int         `json:"apiVersion,omitempty"`
	DNS         *cniDNS     `json:"dns,omitempty"`
	IPAM        *cniIPAM    `json:"ipam,omitempty"`
	Policies    []cniPolicy `json:"policies,omitempty"`
	LoopbackDSR bool        `json:"loopbackDSR,omitempty"`
}

type cniDNS struct {
	Nameservers []string `json:"nameservers,omitempty"`
	Search      []string `json:"search,omitempty"`
}

type cniIPAM struct {
	Type    string              `json:"type"`
	DataDir string              `json:"dataDir,omitempty"`
	Ranges  [][]cniIPAMRange    `json:"ranges"`
	Routes  []map[string]string `json:"routes,omitempty"`
}

type cniIPAMRange struct {
	Subnet     string `json:"subnet"`
	RangeStart string `json:"rangeStart,omitempty"`
	RangeEnd   string `json:"rangeEnd,omitempty"`
}

type cniPolicy struct {
	Name  string         `json:"name"`
	Value cniPolicyValue `json:"value"`
}

type cniPolicyValue struct {
	Type     string `json:"Type"`
	Settings any    `json:"Settings"`
}

type outboundNATSettings struct {
	Exceptions []string `json:"Exceptions"`
}

type sdnRouteSettings struct {
	DestinationPrefix string `json:"DestinationPrefix"`
	NeedEncap         bool   `json:"NeedEncap"`
}

// CNIConfigName is the file name of a Windows node's CNI configuration: the HNS network name,
// which containerd's single-network loader and win-bridge both key on.
func CNIConfigName(w *plan.WindowsNodePlan) string { return w.HNSNetworkName + ".conf" }

// CNIConfig renders the win-bridge (or flannel-delegating) configuration of a Windows node.
func CNIConfig(n plan.NodePlan) ([]byte, error) {
	w := n.Windows
	if w == nil {
		return nil, fmt.Errorf("render CNI config for %s: not a Windows node", n.Name)
	}
	d := cniDelegate{
		APIVersion:  2,
		DNS:         &cniDNS{Nameservers: w.DNSServers, Search: w.DNSSearch},
		LoopbackDSR: w.EnableDSR,
	}
	d.Policies = append(d.Policies, cniPolicy{Name: "EndpointPolicy", Value: cniPolicyValue{
		Type: "OutBoundNAT", Settings: outboundNATSettings{Exceptions: w.OutboundNATExceptions}}})
	routes := w.ServiceRoutes
	if w.NodeRoute != "" {
		routes = append(slices.Clone(routes), w.NodeRoute)
	}
	for _, r := range routes {
		d.Policies = append(d.Policies, cniPolicy{Name: "EndpointPolicy", Value: cniPolicyValue{
			Type: "SDNRoute", Settings: sdnRouteSettings{DestinationPrefix: r, NeedEncap: true}}})
	}
	conf := cniConf{
		CNIVersion: cniVersion,
		Name:       w.HNSNetworkName,
		// kubelet/containerd fill runtimeConfig.dns with the pod's own search list (namespace
		// first) and portMappings with hostPort; win-bridge prefers them over the static dns.
		Capabilities: map[string]bool{"dns": true, "portMappings": true},
	}
	switch w.CNIPlugin {
	case "win-bridge", "win-overlay":
		ipam, err := hostLocalIPAM(n, w)
		if err != nil {
			return nil, fmt.Errorf("render CNI config for %s: %w", n.Name, err)
		}
		conf.Type = w.CNIPlugin
		conf.APIVersion, conf.DNS, conf.IPAM = d.APIVersion, d.DNS, ipam
		conf.Policies, conf.LoopbackDSR = d.Policies, d.LoopbackDSR
	case "flannel":
		// flanneld leases the subnet and the flannel plugin adds the IPAM section itself.
		if w.CNIDelegate == "" {
			return nil, fmt.Errorf("render CNI config for %s: flannel without a delegate plugin", n.Name)
		}
		conf.Type = "flannel"
		d.Type = w.CNIDelegate
		conf.Delegate = &d
	default:
		return nil, fmt.Errorf("render CNI config for %s: unsupported CNI plugin %q", n.Name, w.CNIPlugin)
	}
	b, err := jsonIndent(conf)
	if err != nil {
		return nil, fmt.Errorf("render CNI config for %s: %w", n.Name, err)
	}
	return b, nil
}

func hostLocalIPAM(n plan.NodePlan, w *plan.WindowsNodePlan) (*cniIPAM, error) {
	pod, err := netip.ParsePrefix(n.PodCIDR)
	if err != nil || !pod.Addr().Is4() {
		return nil, fmt.Errorf("pod CIDR %q is not an IPv4 prefix", n.PodCIDR)
	}
	start, err := netip.ParseAddr(w.PodIPRangeStart)
	if err != nil || !pod.Contains(start) {
		return nil, fmt.Errorf("pod IP range start %q is not inside pod CIDR %s", w.PodIPRangeStart, pod)
	}
	last := lastUsable(pod)
	if !start.Less(last) && start != last {
		return nil, fmt.Errorf("pod CIDR %s has no room for pods after %s", pod, start)
	}
	return &cniIPAM{
		Type:    "host-local",
		DataDir: w.InstallDir + `\cni\ipam`,
		Ranges:  [][]cniIPAMRange{{{Subnet: pod.Masked().String(), RangeStart: start.String(), RangeEnd: last.String()}}},
	}, nil
}

// lastUsable is the address before the broadcast address of an IPv4 prefix.
func lastUsable(p netip.Prefix) netip.Addr {
	a := p.Masked().Addr().As4()
	v := uint32(a[0])<<24 | uint32(a[1])<<16 | uint32(a[2])<<8 | uint32(a[3])
	v |= ^uint32(0) >> p.Bits()
	v--
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)})
}
