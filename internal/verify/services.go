package verify

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
)

// ServiceSpec is a Service as input: a ClusterIP, its ports and its endpoints' pod IPs.
type ServiceSpec struct {
	Name      string        `json:"name"`
	ClusterIP string        `json:"clusterIP"`
	Ports     []ServicePort `json:"ports"`
	// Backends are endpoint pod IPs.
	Backends []string `json:"backends"`
	// ExternalTrafficPolicy is Cluster (default) or Local: NodePort traffic goes only to
	// endpoints on the node it arrived at, with the client's address kept.
	ExternalTrafficPolicy string `json:"externalTrafficPolicy,omitempty"`
}

// ServicePort is one port of a service.
type ServicePort struct {
	Protocol   string `json:"protocol"`
	Port       int    `json:"port"`
	TargetPort int    `json:"targetPort"`
	NodePort   int    `json:"nodePort,omitempty"`
}

// Service is a resolved service.
type Service struct {
	Name     string
	VIP      Addr
	Ports    []SvcPort
	Backends []*Pod
	// Probe marks services the verifier invented to exercise each backend class.
	Probe bool
	// LocalOnly is externalTrafficPolicy: Local.
	LocalOnly bool
	sig       string
}

// SvcPort is a resolved port.
type SvcPort struct {
	Proto    Proto
	Port     int
	Target   int
	NodePort int
}

func (s *Service) port(p Proto, port int) *SvcPort {
	for i := range s.Ports {
		if s.Ports[i].Proto == p && s.Ports[i].Port == port {
			return &s.Ports[i]
		}
	}
	return nil
}

func (m *Model) nodePort(p Proto, port int) (*Service, *SvcPort) {
	if port == 0 {
		return nil, nil
	}
	s := m.nodePorts[lbKey{Proto: p, Port: port}]
	if s == nil {
		return nil, nil
	}
	for i := range s.Ports {
		if s.Ports[i].Proto == p && s.Ports[i].NodePort == port {
			return s, &s.Ports[i]
		}
	}
	return nil, nil
}

// winLBHas reports whether winkernel programmed the service port on n: always as planned,
// or per the node's Get-HnsPolicyList dump.
func (m *Model) winLBHas(n *Node, s *Service, sp *SvcPort) bool {
	if n.Win.LB == nil {
		return true
	}
	_, ok := n.Win.LB[lbKey{VIP: s.VIP, Proto: sp.Proto, Port: sp.Port}]
	return ok
}

// Probe service ports: every probe service answers on TCP 80 and UDP 53, with NodePorts.
const (
	probeTCPPort = 80
	probeUDPPort = 53
	probeNodeTCP = 30080
)

// addServices resolves the given services. Without any, the verifier invents probe services
// — one per pod class, backed by its representatives — so that every source is checked
// against a backend on each kind of node.
func (m *Model) addServices(specs []ServiceSpec) error {
	defer m.indexNodePorts()
	if specs == nil {
		return nil // the verifier adds probe services per pod class
	}
	for _, s := range specs {
		vip, err := ParseAddr(s.ClusterIP)
		if err != nil {
			return fmt.Errorf("service %s clusterIP: %w", s.Name, err)
		}
		if !m.ServiceCIDR.Contains(vip) {
			return fmt.Errorf("service %s: clusterIP %s is outside the service CIDR %s", s.Name, vip, m.ServiceCIDR)
		}
		if m.svcByVIP[vip] != nil {
			return fmt.Errorf("service %s: clusterIP %s is also service %s's", s.Name, vip, m.svcByVIP[vip].Name)
		}
		svc := &Service{Name: s.Name, VIP: vip}
		switch s.ExternalTrafficPolicy {
		case "", "Cluster":
		case "Local":
			svc.LocalOnly = true
		default:
			return fmt.Errorf("service %s: externalTrafficPolicy %q: expected Cluster or Local", s.Name, s.ExternalTrafficPolicy)
		}
		for _, p := range s.Ports {
			pr, err := ParseProto(p.Protocol)
			if err != nil || pr == ICMP {
				return fmt.Errorf("service %s port %d: protocol %q: expected TCP or UDP", s.Name, p.Port, p.Protocol)
			}
			t := p.TargetPort
			if t == 0 {
				t = p.Port
			}
			svc.Ports = append(svc.Ports, SvcPort{Proto: pr, Port: p.Port, Target: t, NodePort: p.NodePort})
		}
		for _, b := range s.Backends {
			a, err := ParseAddr(b)
			if err != nil {
				return fmt.Errorf("service %s backend: %w", s.Name, err)
			}
			pod := m.podAt(a)
			if pod == nil {
				return fmt.Errorf("service %s: backend %s is in no node's pod range", s.Name, a)
			}
			if !slices.Contains(svc.Backends, pod) {
				svc.Backends = append(svc.Backends, pod)
			}
		}
		m.Services = append(m.Services, svc)
		m.svcByVIP[vip] = svc
	}
	return nil
}

// Cluster DNS: the Service CoreDNS keeps kube-dns's name for, on UDP and TCP 53.
const (
	dnsServiceName = "kube-dns"
	dnsPort        = 53
	// dnsReplicas is the CoreDNS Deployment's replica count in kubeadm clusters.
	dnsReplicas = 2
)

// addClusterDNS models the cluster DNS service at the plan's clusterDNS address: every pod
// resolves names through it (kubelet's clusterDNS, the Windows CNI's DNS server), so it exists
// with or without --services. A given service with the same ClusterIP stands instead. Its
// endpoints are chosen by the verifier (syncDNS).
func (m *Model) addClusterDNS() error {
	s := m.Plan.Networking.ClusterDNS
	if s == "" {
		return nil
	}
	vip, err := ParseAddr(s)
	if err != nil {
		return fmt.Errorf("plan networking.clusterDNS: %w", err)
	}
	if !m.ServiceCIDR.Contains(vip) {
		return fmt.Errorf("plan networking.clusterDNS %s is outside the service CIDR %s", vip, m.ServiceCIDR)
	}
	if m.svcByVIP[vip] != nil {
		return nil
	}
	m.DNS = &Service{Name: dnsServiceName, VIP: vip,
		Ports: []SvcPort{{Proto: UDP, Port: dnsPort, Target: dnsPort}, {Proto: TCP, Port: dnsPort, Target: dnsPort}}}
	m.Services = append(m.Services, m.DNS)
	m.svcByVIP[vip] = m.DNS
	return nil
}

// dnsBackends picks the CoreDNS pods: CoreDNS runs on Linux nodes only (its nodeSelector is
// kubernetes.io/os=linux), dnsReplicas of them. Which nodes the scheduler picks is unknown, so
// the model takes the first live Linux nodes in plan order, one pod each — a choice that does
// not depend on how nodes are grouped into classes, so per-class and per-node evaluation agree.
// Pods whose endpoints are broken are skipped while others exist.
func (m *Model) dnsBackends() []*Pod {
	var out, broken []*Pod
	for _, n := range m.Nodes {
		if n.OS != osLinux || n.Down || len(n.Pods) == 0 {
			continue
		}
		p := n.Pods[0]
		if p.Broken != "" || p.Conflict != "" {
			broken = append(broken, p)
			continue
		}
		out = append(out, p)
		if len(out) == dnsReplicas {
			return out
		}
	}
	for _, p := range broken {
		if len(out) == dnsReplicas {
			break
		}
		out = append(out, p)
	}
	return out
}

// podAt maps an address to its pod class: the exact endpoint, else the node's first pod class
// (pods of one node with the same policies behave alike).
func (m *Model) podAt(a Addr) *Pod {
	n := m.OwnerOfPodIP(a)
	if n == nil {
		for _, x := range m.Nodes {
			if p := x.podByIP(a); p != nil {
				return p
			}
		}
		return nil
	}
	if p := n.podByIP(a); p != nil {
		return p
	}
	for _, p := range n.Pods {
		if p.Broken == "" {
			return p
		}
	}
	if len(n.Pods) > 0 {
		return n.Pods[0]
	}
	return nil
}

// ParseServices reads a JSON list of ServiceSpec (name, clusterIP, ports, backends); unknown
// fields are errors, located by line.
func ParseServices(file string, data []byte) ([]ServiceSpec, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var out []ServiceSpec
	if err := dec.Decode(&out); err != nil {
		off := int(dec.InputOffset())
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &se):
			off = int(se.Offset)
		case errors.As(err, &te):
			off = int(te.Offset)
		}
		return nil, dumpErr(file, lineAt(data, off), "services: %v (expected a JSON list of {name, clusterIP, ports: [{protocol, port, targetPort, nodePort}], backends: [pod IPs], externalTrafficPolicy})", err)
	}
	if out == nil {
		out = []ServiceSpec{}
	}
	return out, nil
}

// localBackend picks the endpoint of svc on n for externalTrafficPolicy Local: the flow's
// chosen backend when it is on n, else any live one there; nil when n has none.
func (w *walker) localBackend(svc *Service, n *Node) *Pod {
	if w.backend != nil && w.backend.Node == n {
		return w.backend
	}
	for _, b := range svc.Backends {
		if b.Node == n && b.Broken == "" {
			return b
		}
	}
	return nil
}

// winDSR reports whether winkernel honours externalTrafficPolicy Local on n: it does so with a
// DSR load balancer over the node's own endpoints, and only when HNS supports DSR
// (kubernetes pkg/proxy/winkernel proxier.go newServiceInfo: localTrafficDSR is cleared when
// hcn DsrSupported fails; DSR needs Windows Server 2019 / build 17763 or later).
func winDSR(n *Node) bool { return n.Win != nil && n.Win.Build >= 17763 }

// Chains kube-proxy's iptables rules send a NodePort packet of an externalTrafficPolicy Local
// service to, on a Linux node (localPolicyRoute).
const (
	npPod   = "pod"   // short-circuited pod traffic: the cluster chain, unmarked
	npHost  = "host"  // the node's own (LOCAL) traffic: masquerade mark, the cluster chain
	npLocal = "local" // everything else: local endpoints only (KUBE-SVL), or DROP without one
)

// localPolicyRoute says which chain a NodePort packet of an externalTrafficPolicy Local service
// from src takes on Linux node n. kube-proxy writes the service's KUBE-EXT chain in this order
// (kubernetes v1.37.1 pkg/proxy/iptables/proxier.go, "Set up external traffic handling"):
//  1. "pod traffic for <svc> external destinations": localDetector.IfLocal() -j <cluster
//     chain>. The detector is detect-local-mode ClusterCIDR, kube-proxy's default on Linux
//     (cmd/kube-proxy/app/server_linux.go), matching "-s <first cluster CIDR>"
//     (pkg/proxy/util/localdetector.go NewDetectLocalByCIDR);
//  2. "masquerade LOCAL traffic for <svc> external destinations": -m addrtype --src-type LOCAL
//     -j KUBE-MARK-MASQ;
//  3. "route LOCAL traffic for <svc> external destinations": -m addrtype --src-type LOCAL
//     -j <cluster chain>;
//  4. -j <local policy chain> when the node has local endpoints; otherwise the packet leaves
//     the nat table untranslated and the filter table's KUBE-EXTERNAL-SERVICES rule
//     "<svc> has no local endpoints" (-m addrtype --dst-type LOCAL --dport <nodePort>) drops it.
func (m *Model) localPolicyRoute(n *Node, src Addr) string {
	switch {
	case len(m.ClusterCIDRs) > 0 && m.ClusterCIDRs[0].Contains(src):
		return npPod
	case n.isLocal(src):
		return npHost
	}
	return npLocal
}
