package verify

import (
	"fmt"
	"strconv"
	"strings"
)

// Flow traces one flow named on the command line. SRC and DST are a node name (its host), a
// node's pods (NODE/pod, or NODE/NAME for a dumped endpoint class), an address (pod, node,
// service VIP, or anything else for an external host), or "external". A service destination
// is traced once per backend; a node address with a NodePort port is a NodePort flow.
func (v *Verifier) Flow(src, dst string, proto Proto, port int) ([]FlowResult, error) {
	v.reclassify()
	v.syncProbes()
	m := v.m
	s, err := m.resolveEndpoint(src, false)
	if err != nil {
		return nil, fmt.Errorf("flow source: %w", err)
	}
	d, err := m.resolveEndpoint(dst, true)
	if err != nil {
		return nil, fmt.Errorf("flow destination: %w", err)
	}
	if s.ep.Kind == EPExternal && s.addr != 0 && s.addr != m.External {
		return nil, fmt.Errorf("flow source: %s is not a cluster address; use \"external\"", src)
	}
	if d.port != 0 {
		port = d.port
	}
	spec := flowSpec{src: s.ep, srcAddr: s.addr, proto: proto, weight: 1}
	if s.ep.Kind == EPPod && s.addr == s.ep.Pod.IP {
		spec.srcAddr = 0
	}
	if s.ep.Kind == EPHost {
		spec.srcAddr = 0
	}
	var out []FlowResult
	switch {
	case d.svc != nil:
		if proto == ICMP {
			return nil, fmt.Errorf("flow destination: service %s takes TCP or UDP", d.svc.Name)
		}
		sp := (*SvcPort)(nil)
		for i := range d.svc.Ports {
			p := &d.svc.Ports[i]
			if p.Proto == proto && (port == 0 || p.Port == port) {
				sp = p
				break
			}
		}
		if sp == nil {
			return nil, fmt.Errorf("flow destination: service %s has no %s port %d", d.svc.Name, proto, port)
		}
		spec.kind = KindPodService
		if s.ep.Kind == EPHost {
			spec.kind = KindNodeService
		}
		spec.dstAddr, spec.dport, spec.svc = d.svc.VIP, uint16(sp.Port), d.svc
		for _, b := range d.svc.Backends {
			fs := spec
			fs.backend = b
			fs.dst = Endpoint{Kind: EPPod, Node: b.Node, Pod: b}
			if s.ep.Kind == EPPod && b.Node == s.ep.Node {
				fs.kind = KindPodServiceLocal
			}
			out = append(out, v.trace(fs))
		}
		if len(out) == 0 {
			return nil, fmt.Errorf("flow destination: service %s has no endpoints", d.svc.Name)
		}
		return out, nil
	case d.ep.Kind == EPHost && proto != ICMP && port != 0:
		if svc, sp := m.nodePort(proto, port); svc != nil {
			spec.dstAddr, spec.dport, spec.svc = d.addr, uint16(sp.NodePort), svc
			spec.kind = KindExtNodePort
			if s.ep.Kind == EPHost && s.ep.Node == d.ep.Node {
				spec.kind = KindNodeNodePort
			}
			for _, b := range svc.Backends {
				fs := spec
				fs.backend = b
				fs.dst = Endpoint{Kind: EPPod, Node: b.Node, Pod: b}
				out = append(out, v.trace(fs))
			}
			return out, nil
		}
	}
	spec.dst, spec.dstAddr = d.ep, d.addr
	if proto != ICMP {
		spec.dport = uint16(port)
		if port == 0 {
			spec.dport = podPorts[proto]
			if d.ep.Kind == EPExternal {
				spec.dport = extPorts[proto]
			}
		}
	}
	spec.kind = flowKindOf(s.ep, d.ep)
	return []FlowResult{v.trace(spec)}, nil
}

func flowKindOf(s, d Endpoint) FlowKind {
	switch {
	case s.Kind == EPPod && d.Kind == EPPod && s.Node == d.Node:
		return KindPodPodSameNode
	case s.Kind == EPPod && d.Kind == EPPod:
		return KindPodPod
	case s.Kind == EPHost && d.Kind == EPPod && s.Node == d.Node:
		return KindNodePodLocal
	case s.Kind == EPHost && d.Kind == EPPod:
		return KindNodePod
	case s.Kind == EPPod && d.Kind == EPHost && s.Node == d.Node:
		return KindPodNodeLocal
	case s.Kind == EPPod && d.Kind == EPHost:
		return KindPodNode
	case s.Kind == EPPod && d.Kind == EPExternal:
		return KindPodExternal
	}
	return KindNodeNode
}

type resolved struct {
	ep   Endpoint
	addr Addr
	svc  *Service
	port int
}

func (m *Model) resolveEndpoint(s string, dst bool) (resolved, error) {
	if s == "external" {
		return resolved{ep: Endpoint{Kind: EPExternal, Node: m.Ext}, addr: m.External}, nil
	}
	port := 0
	if h, p, ok := strings.Cut(s, ":"); ok && dst {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return resolved{}, fmt.Errorf("%q: port must be 1-65535", s)
		}
		s, port = h, n
	}
	if a, err := ParseAddr(s); err == nil {
		if svc := m.svcByVIP[a]; svc != nil {
			if !dst {
				return resolved{}, fmt.Errorf("%s is a service VIP", a)
			}
			return resolved{svc: svc, port: port}, nil
		}
		if n := m.nodeIPs[a]; n != nil {
			return resolved{ep: Endpoint{Kind: EPHost, Node: n}, addr: a, port: port}, nil
		}
		for _, n := range m.Nodes {
			if n.OS != osLinux && n.OS != osWindows {
				continue
			}
			if n.isLocal(a) {
				return resolved{ep: Endpoint{Kind: EPHost, Node: n}, addr: a, port: port}, nil
			}
			if p := n.podByIP(a); p != nil {
				return resolved{ep: Endpoint{Kind: EPPod, Node: n, Pod: p}, addr: a, port: port}, nil
			}
		}
		if p := m.podAt(a); p != nil {
			return resolved{ep: Endpoint{Kind: EPPod, Node: p.Node, Pod: p}, addr: a, port: port}, nil
		}
		if m.ServiceCIDR.Contains(a) {
			return resolved{}, fmt.Errorf("%s is in the service CIDR but no service has it", a)
		}
		if a != m.External {
			return resolved{}, fmt.Errorf("%s is no node, pod or service address; external destinations are modelled by %s (use \"external\")", a, m.External)
		}
		return resolved{ep: Endpoint{Kind: EPExternal, Node: m.Ext}, addr: a, port: port}, nil
	}
	name, sub, hasSub := strings.Cut(s, "/")
	n := m.byName[name]
	if n == nil || (n.OS != osLinux && n.OS != osWindows) {
		return resolved{}, fmt.Errorf("%q: no node %q in the plan", s, name)
	}
	if !hasSub {
		return resolved{ep: Endpoint{Kind: EPHost, Node: n}, addr: n.IP(), port: port}, nil
	}
	for _, p := range n.Pods {
		if sub == "pod" || p.Name == sub || strings.HasPrefix(p.Name, sub) {
			return resolved{ep: Endpoint{Kind: EPPod, Node: n, Pod: p}, addr: p.IP, port: port}, nil
		}
	}
	var names []string
	for _, p := range n.Pods {
		names = append(names, p.Name)
	}
	return resolved{}, fmt.Errorf("%q: %s has no pod class %q (classes: %s)", s, name, sub, strings.Join(names, ", "))
}
