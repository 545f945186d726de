// Package testgen generates large, valid, deterministic cluster descriptions for benchmarks
// and scale tests of the planner, the renderer and the checks.
package testgen

import (
	"fmt"

	"github.com/kubewin/kubewin/pkg/api/v1alpha1"
)

// Limits of the generated address plan.
const (
	// MaxGatewayGroups: group g's segment is 100.(96+g).0.0/16, inside 100.64.0.0/10.
	MaxGatewayGroups = 32
	// MaxNodes: every node has a slot in 10.0.0.0/8 with /24 node CIDRs.
	MaxNodes = 1 << 16
	// linuxPerRack Linux nodes share one /22 rack segment in 100.64.0.0/11.
	linuxPerRack = 1000
)

var windowsBuilds = []string{"10.0.17763", "10.0.20348", "10.0.26100"}

// Cluster returns a cluster of linuxNodes Linux and windowsNodes Windows nodes. The same
// arguments always give the same cluster. It is a Calico cluster (10.0.0.0/8 pods with /24 node
// CIDRs, 172.20.0.0/16 services) that passes v1alpha1.Validate:
//
//   - gatewayGroups > 0: design upstream-tor/keepalived. Linux nodes sit in racks of 1000 on
//     100.64.<4r>.0/22; Windows node j belongs to group j % gatewayGroups and sits on that
//     group's segment 100.(96+g).0.0/16, where three Linux nodes (3g, 3g+1, 3g+2, modulo the
//     Linux count) have a second NIC eth<g+1> and hold the gateways. Each group has router VIPs
//     for every VRRP instance the cluster can need.
//   - gatewayGroups == 0: design host-gw with every node on 100.64.0.0/16 (host-gw needs one
//     segment).
//
// Node k (Linux first, then Windows) owns pod CIDR slot k, 10.<k/256>.<k%256>.0/24; every fourth
// node has no podCIDR so the planner's allocation runs (and, filling holes in order, gives it
// that same slot). Windows builds rotate through 17763, 20348 and 26100; Hyper-V is on, so
// every Windows node gets runtime handlers and labels for several image builds.
//
// Cluster panics on arguments outside the documented limits: it is test scaffolding, and a
// silently different cluster would make benchmark numbers meaningless.
func Cluster(linuxNodes, windowsNodes, gatewayGroups int) *v1alpha1.Cluster {
	total := linuxNodes + windowsNodes
	if linuxNodes < 0 || windowsNodes < 0 || gatewayGroups < 0 || gatewayGroups > MaxGatewayGroups || total > MaxNodes-4 {
		panic(fmt.Sprintf("testgen.Cluster(%d, %d, %d): outside the generator's limits", linuxNodes, windowsNodes, gatewayGroups))
	}
	if gatewayGroups > 0 && linuxNodes == 0 {
		panic("testgen.Cluster: gateway groups need Linux nodes")
	}
	c := &v1alpha1.Cluster{
		APIVersion: v1alpha1.GroupVersion,
		Kind:       v1alpha1.KindCluster,
		Metadata:   v1alpha1.ObjectMeta{Name: fmt.Sprintf("gen-%d-%d-%d", linuxNodes, windowsNodes, gatewayGroups)},
		Spec: v1alpha1.ClusterSpec{
			KubernetesVersion: v1alpha1.DefaultKubernetesVersion,
			Networking: v1alpha1.Networking{
				PodCIDRs:         []string{"10.0.0.0/8"},
				ServiceCIDR:      "172.20.0.0/16",
				NodeCIDRMaskSize: 24,
				ClusterDNS:       "172.20.0.10",
				DNSSearch:        []string{"corp.example"},
				NodeSubnets:      []string{"192.168.0.0/24"},
			},
			Design: v1alpha1.DesignHostGW,
			// host-gw routes each node's spec.podCIDR, which Calico's IPAM ignores: a CNI with
			// host-local IPAM over the node's pod CIDR ("other").
			LinuxCNI: v1alpha1.LinuxCNI{Type: "other"},
			Windows:  v1alpha1.WindowsSettings{HyperV: true, EnableDSR: true},
			Images: v1alpha1.Images{
				Registry:           "registry.corp.example:5000",
				InsecureRegistries: []string{"registry.corp.example:5000"},
			},
		},
	}
	s := &c.Spec
	if gatewayGroups > 0 {
		s.Design = v1alpha1.DesignUpstreamToRKeepalived
		s.LinuxCNI = v1alpha1.LinuxCNI{Type: "calico"}
	}
	s.Nodes = make([]v1alpha1.Node, 0, total)
	for i := 0; i < linuxNodes; i++ {
		n := v1alpha1.Node{
			Name: fmt.Sprintf("linux-%05d", i),
			OS:   v1alpha1.OSLinux,
			Role: v1alpha1.RoleWorker,
			NICs: []v1alpha1.NIC{{Name: "eth0", MAC: mac(0x02, i), IP: linuxIP(i, gatewayGroups), Prefix: linuxPrefix(gatewayGroups)}},
			Labels: map[string]string{
				"topology.kubernetes.io/zone": fmt.Sprintf("rack-%d", i/linuxPerRack),
			},
			ClusterNIC: "eth0",
			PodCIDR:    podCIDR(i),
		}
		if i < 3 {
			n.Role = v1alpha1.RoleControlPlane
		}
		s.Nodes = append(s.Nodes, n)
	}
	for g := 0; g < gatewayGroups; g++ {
		grp := v1alpha1.GatewayGroup{
			Name:      fmt.Sprintf("gw-%d", g),
			Interface: fmt.Sprintf("eth%d", g+1),
		}
		for m := 0; m < 3 && m < linuxNodes; m++ {
			k := (3*g + m) % linuxNodes
			n := &s.Nodes[k]
			n.NICs = append(n.NICs, v1alpha1.NIC{
				Name: grp.Interface, MAC: mac(0x06+byte(g), k), IP: fmt.Sprintf("100.%d.255.%d", 96+g, 240+m), Prefix: 16,
			})
			grp.Members = append(grp.Members, v1alpha1.GatewayMember{Node: n.Name})
		}
		// One router VIP per VRRP instance the whole slot range in use can need.
		for i := 0; i <= (total-1)/v1alpha1.MaxVIPsPerInstance && i < 255; i++ {
			grp.RouterVIPs = append(grp.RouterVIPs, fmt.Sprintf("100.%d.254.%d", 96+g, i+1))
		}
		s.GatewayGroups = append(s.GatewayGroups, grp)
	}
	for j := 0; j < windowsNodes; j++ {
		k := linuxNodes + j
		ip, prefix := fmt.Sprintf("100.64.%d.%d", (k+1)>>8, (k+1)&255), 16
		if gatewayGroups > 0 {
			g, local := j%gatewayGroups, j/gatewayGroups+10
			ip = fmt.Sprintf("100.%d.%d.%d", 96+g, local>>8, local&255)
			s.GatewayGroups[g].WindowsNodes = append(s.GatewayGroups[g].WindowsNodes, fmt.Sprintf("win-%05d", j))
		}
		s.Nodes = append(s.Nodes, v1alpha1.Node{
			Name:         fmt.Sprintf("win-%05d", j),
			OS:           v1alpha1.OSWindows,
			Role:         v1alpha1.RoleWorker,
			WindowsBuild: windowsBuilds[j%len(windowsBuilds)],
			NICs:         []v1alpha1.NIC{{Name: "Ethernet0", MAC: mac(0x04, j), IP: ip, Prefix: prefix}},
			ClusterNIC:   "Ethernet0",
			PodCIDR:      podCIDR(k),
		})
	}
	return c
}

// podCIDR is slot k of 10.0.0.0/8, or "" for every fourth node (left to the allocator).
func podCIDR(k int) string {
	if k%4 == 3 {
		return ""
	}
	return fmt.Sprintf("10.%d.%d.0/24", k>>8, k&255)
}

func linuxPrefix(groups int) int {
	if groups == 0 {
		return 16
	}
	return 22
}

// linuxIP: racks of 1000 on /22 segments, or one /16 segment for host-gw.
func linuxIP(i, groups int) string {
	if groups == 0 {
		return fmt.Sprintf("100.64.%d.%d", (i+1)>>8, (i+1)&255)
	}
	rack, host := i/linuxPerRack, i%linuxPerRack+1
	base := rack * 4
	return fmt.Sprintf("100.%d.%d.%d", 64+base/256, base%256+host>>8, host&255)
}

func mac(kind byte, i int) string {
	return fmt.Sprintf("02:%02x:00:%02x:%02x:%02x", kind, byte(i>>16), byte(i>>8), byte(i))
}
