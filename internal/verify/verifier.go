package verify

import (
	"fmt"
	"slices"
	"strings"
)

// Verifier evaluates every flow class of a model and keeps per-class results, so that after a
// change (a node joins, a gateway dies) only the classes whose facts changed are evaluated
// again.
type Verifier struct {
	m        *Model
	ci       *classIndex
	naive    bool
	cache    map[flowKey]*cached
	byDep    map[uint64][]flowKey
	userSvcs bool
	probes   map[string]*Service
	probeVIP Addr
	probeSeq int
	dirty    map[*Node]bool
	// moved maps instances whose VIPs the scenarios moved to their former holder (the
	// "during failover" view).
	moved map[*Instance]*Node
	// Scenarios applied, for the report.
	Scenarios []string
	// Stats of the last run.
	Evaluated, Reused int
	last              []FlowResult
	lastSpecs         int
}

// flowKey names a class-level flow by interned class signatures (see classIndex.intern).
type flowKey struct {
	kind  FlowKind
	proto Proto
	local bool // backend on the source node (services, NodePorts)
	src   int
	dst   int
	svc   int
}

type cached struct {
	res    FlowResult
	traced *FlowResult
	valid  bool
}

// NewVerifier classifies the model's nodes. With naive set, every node is its own class: the
// per-node-pair evaluation the benchmarks compare against. Signatures live on the model's
// nodes, so a model has one verifier.
func NewVerifier(m *Model, naive bool) *Verifier {
	v := &Verifier{m: m, naive: naive, cache: map[flowKey]*cached{}, byDep: map[uint64][]flowKey{},
		probes: map[string]*Service{}, dirty: map[*Node]bool{}, moved: map[*Instance]*Node{}}
	v.userSvcs = slices.ContainsFunc(m.Services, func(s *Service) bool { return s != m.DNS })
	v.ci = m.classify(naive)
	v.probeVIP = m.ServiceCIDR.Nth(1000)
	if m.ServiceCIDR.Len > 22 {
		v.probeVIP = m.ServiceCIDR.Nth(16)
	}
	return v
}

// Model returns the verifier's model.
func (v *Verifier) Model() *Model { return v.m }

// reclassify recomputes signatures of dirty nodes.
func (v *Verifier) reclassify() {
	if len(v.dirty) == 0 {
		return
	}
	nodes := make([]*Node, 0, len(v.dirty))
	for n := range v.dirty {
		nodes = append(nodes, n)
	}
	slices.SortFunc(nodes, func(a, b *Node) int { return a.ID - b.ID })
	for _, n := range nodes {
		v.ci.remove(n)
		if n.OS == osLinux || n.OS == osWindows {
			v.m.sign(n, v.ci)
			v.ci.add(n)
		}
	}
	v.ci.sortAll()
	v.dirty = map[*Node]bool{}
}

// invalidate drops cached results that read any of the changed facts.
func (v *Verifier) invalidate(keys []uint64) {
	for _, k := range keys {
		if k == depAll {
			v.cache = map[flowKey]*cached{}
			v.byDep = map[uint64][]flowKey{}
			return
		}
	}
	for _, k := range keys {
		for _, fk := range v.byDep[k] {
			if c := v.cache[fk]; c != nil {
				c.valid = false
			}
		}
		delete(v.byDep, k)
	}
}

// syncProbes keeps one probe service per pod class when no services were given, and the
// cluster DNS service's endpoints on live nodes.
func (v *Verifier) syncProbes() {
	m := v.m
	if m.DNS != nil {
		m.DNS.Backends = m.dnsBackends()
	}
	if v.userSvcs {
		return
	}
	want := map[string]bool{}
	for _, pc := range v.ci.pods {
		want[pc.Sig] = true
		s := v.probes[pc.Sig]
		if s == nil {
			for m.svcByVIP[v.probeVIP] != nil {
				v.probeVIP++
			}
			v.probeSeq++
			s = &Service{Name: fmt.Sprintf("probe-%d", v.probeSeq), VIP: v.probeVIP, Probe: true,
				Ports: []SvcPort{{Proto: TCP, Port: probeTCPPort, Target: 8080, NodePort: probeNodeTCP + v.probeSeq - 1}, {Proto: UDP, Port: probeUDPPort, Target: 5353}}}
			v.probeVIP++
			v.probes[pc.Sig] = s
			m.svcByVIP[s.VIP] = s
		}
		// Backends: the first two pods of the class, on different nodes when possible.
		s.Backends = s.Backends[:0]
		for _, p := range pc.Pods {
			if p.Node.Down || p.Broken != "" && len(pc.Pods) > 1 {
				continue
			}
			if len(s.Backends) == 1 && s.Backends[0].Node == p.Node {
				continue
			}
			s.Backends = append(s.Backends, p)
			if len(s.Backends) == 2 {
				break
			}
		}
		if len(s.Backends) == 0 && len(pc.Pods) > 0 {
			s.Backends = append(s.Backends, pc.Pods[0])
		}
	}
	for sig, s := range v.probes {
		if !want[sig] {
			delete(v.probes, sig)
			delete(m.svcByVIP, s.VIP)
		}
	}
	m.Services = m.Services[:0]
	for _, pc := range v.ci.pods {
		m.Services = append(m.Services, v.probes[pc.Sig])
	}
	if m.DNS != nil {
		m.Services = append(m.Services, m.DNS)
	}
	m.indexNodePorts()
}

// Run evaluates every flow class (reusing valid cached results) and builds the report.
func (v *Verifier) Run() *Report {
	v.reclassify()
	v.syncProbes()
	v.Evaluated, v.Reused = 0, 0
	specs := v.enumerate()
	results := make([]FlowResult, 0, len(specs))
	for i, s := range specs {
		c := v.cache[s.key]
		if c != nil && c.valid {
			// The class result stands; the representatives it names may have changed, which
			// fill() corrects when the result is shown.
			res := c.res
			res.NodePairs = s.spec.weight
			res.spec, res.stale = &specs[i].spec, true
			results = append(results, res)
			v.Reused++
			continue
		}
		deps := newDeps()
		spec := s.spec
		res := v.m.evaluate(&spec, false, deps)
		v.Evaluated++
		v.cache[s.key] = &cached{res: res, valid: true}
		for _, k := range deps.unique() {
			v.byDep[k] = append(v.byDep[k], s.key)
		}
		results = append(results, res)
	}
	v.last = results
	rep := v.report(specs, results)
	rep.DuringFailover = v.during(specs)
	return rep
}

// Results are every representative flow of the last Run, without traces.
func (v *Verifier) Results() []FlowResult {
	for i := range v.last {
		v.last[i].fill()
	}
	return v.last
}

// traced returns the flow with traces, cached with its class result.
func (v *Verifier) traced(s keyedSpec) FlowResult {
	c := v.cache[s.key]
	if c != nil && c.valid && c.traced != nil {
		res := *c.traced
		res.NodePairs = s.spec.weight
		return res
	}
	res := v.trace(s.spec)
	if c != nil && c.valid {
		c.traced = &res
	}
	return res
}

// Trace evaluates one flow with full traces.
func (v *Verifier) trace(spec flowSpec) FlowResult {
	return v.m.evaluate(&spec, true, nil)
}

type keyedSpec struct {
	key  flowKey
	spec flowSpec
}

var (
	l4Protos  = []Proto{TCP, UDP, ICMP}
	podPorts  = map[Proto]uint16{TCP: 8080, UDP: 5353}
	extPorts  = map[Proto]uint16{TCP: 443, UDP: 53}
	svcProtos = []Proto{TCP, UDP}
)

func (v *Verifier) podClassOf(p *Pod) *PodClass { return p.class }

// enumerate lists one representative flow per (kind, protocol, class combination).
func (v *Verifier) enumerate() []keyedSpec {
	m := v.m
	out := make([]keyedSpec, 0, v.lastSpecs)
	add := func(k flowKey, s flowSpec) { out = append(out, keyedSpec{k, s}) }
	defer func() { v.lastSpecs = len(out) }()
	liveCache := map[*PodClass][]*Pod{}
	live := func(pc *PodClass) []*Pod {
		if ps, ok := liveCache[pc]; ok {
			return ps
		}
		ps := pc.Pods
		if slices.ContainsFunc(ps, func(p *Pod) bool { return p.Node.Down }) {
			ps = slices.DeleteFunc(slices.Clone(ps), func(p *Pod) bool { return p.Node.Down })
		}
		liveCache[pc] = ps
		return ps
	}
	podEP := func(p *Pod) Endpoint { return Endpoint{Kind: EPPod, Node: p.Node, Pod: p} }
	hostEP := func(n *Node) Endpoint { return Endpoint{Kind: EPHost, Node: n} }
	liveNodes := func(c *Class) []*Node {
		if !slices.ContainsFunc(c.Nodes, func(n *Node) bool { return n.Down }) {
			return c.Nodes
		}
		return slices.DeleteFunc(slices.Clone(c.Nodes), func(n *Node) bool { return n.Down })
	}
	pcs := v.ci.pods
	ncs := v.ci.nodes
	// Same node pod→pod.
	for _, a := range pcs {
		pa := live(a)
		if len(pa) == 0 {
			continue
		}
		x := pa[0]
		for _, q := range x.Node.Pods {
			dst := q.IP
			if q == x {
				if x.Sib == 0 {
					continue
				}
				dst = x.Sib
			}
			for _, pr := range l4Protos {
				add(flowKey{kind: KindPodPodSameNode, proto: pr, src: a.Key, dst: v.podClassOf(q).Key},
					flowSpec{kind: KindPodPodSameNode, src: podEP(x), dst: podEP(q), dstAddr: dst, dport: podPorts[pr], proto: pr, weight: len(pa)})
			}
		}
	}
	// Cross-node pod→pod.
	for _, a := range pcs {
		pa := live(a)
		for _, b := range pcs {
			pb := live(b)
			x, y := repPair(pa, pb)
			if x == nil {
				continue
			}
			w := pairWeight(pa, pb)
			for _, pr := range l4Protos {
				add(flowKey{kind: KindPodPod, proto: pr, src: a.Key, dst: b.Key},
					flowSpec{kind: KindPodPod, src: podEP(x), dst: podEP(y), dstAddr: y.IP, dport: podPorts[pr], proto: pr, weight: w})
			}
		}
	}
	// Services, grouped by class (ports, and the VIP when a node's winkernel state is dumped);
	// every backend of every service in the class stands for one flow per client.
	type svcBackend struct {
		pod *Pod
		svc *Service
	}
	type svcClass struct {
		key   int
		pods  map[*PodClass][]svcBackend
		order []*PodClass
	}
	var sclasses []*svcClass
	bySig := map[string]*svcClass{}
	anyLB := false
	for _, n := range m.Nodes {
		if n.Win != nil && n.Win.LB != nil {
			anyLB = true
		}
	}
	for _, s := range m.Services {
		if s.sig == "" {
			var b strings.Builder
			for _, p := range s.Ports {
				fmt.Fprintf(&b, "%s/%d/%t;", p.Proto, p.Port, p.NodePort != 0)
			}
			s.sig = b.String()
		}
		sig := s.sig
		if anyLB {
			sig += s.VIP.String()
		}
		sc := bySig[sig]
		if sc == nil {
			sc = &svcClass{key: v.ci.intern("svc:" + sig), pods: map[*PodClass][]svcBackend{}}
			bySig[sig] = sc
			sclasses = append(sclasses, sc)
		}
		for _, bp := range s.Backends {
			pc := v.podClassOf(bp)
			if pc == nil || bp.Node.Down {
				continue
			}
			if _, ok := sc.pods[pc]; !ok {
				sc.order = append(sc.order, pc)
			}
			sc.pods[pc] = append(sc.pods[pc], svcBackend{bp, s})
		}
	}
	for _, sc := range sclasses {
		slices.SortFunc(sc.order, func(a, b *PodClass) int { return a.ID - b.ID })
	}
	pick := func(list []svcBackend, notOn, on *Node) (svcBackend, bool) {
		for _, e := range list {
			if (notOn != nil && e.pod.Node == notOn) || (on != nil && e.pod.Node != on) {
				continue
			}
			return e, true
		}
		return svcBackend{}, false
	}
	podsOf := func(list []svcBackend) []*Pod {
		out := make([]*Pod, len(list))
		for i, e := range list {
			out[i] = e.pod
		}
		return out
	}
	svcPort := func(s *Service, pr Proto) *SvcPort {
		for i := range s.Ports {
			if s.Ports[i].Proto == pr {
				return &s.Ports[i]
			}
		}
		return nil
	}
	svcFlow := func(kind FlowKind, pr Proto, src Endpoint, srcAddr Addr, e svcBackend, w int, nodePort *Node) (flowSpec, bool) {
		sp := svcPort(e.svc, pr)
		if sp == nil || (nodePort != nil && sp.NodePort == 0) {
			return flowSpec{}, false
		}
		f := flowSpec{kind: kind, src: src, srcAddr: srcAddr, dst: podEP(e.pod), dstAddr: e.svc.VIP, dport: uint16(sp.Port), proto: pr, svc: e.svc, backend: e.pod, weight: w}
		if nodePort != nil {
			f.dport = uint16(sp.NodePort)
			f.dstAddr = nodePort.IP()
			if src.Kind == EPExternal {
				f.dstAddr = nodePortAddr(nodePort)
			}
		}
		return f, true
	}
	for _, sc := range sclasses {
		for _, bc := range sc.order {
			list := sc.pods[bc]
			backends := podsOf(list)
			// Backends per node class (for "backend on the ingress node" counts) and per node.
			perClass := map[*Class]int{}
			perNode := map[*Node]int{}
			for _, b := range backends {
				perClass[b.Node.class]++
				perNode[b.Node]++
			}
			// Client/backend pairs on different nodes, per client class.
			svcWeights := make([]int, len(pcs))
			for ai, a := range pcs {
				pa := live(a)
				w := len(pa) * len(backends)
				if len(pa) > 0 && perClass[pa[0].Node.class] > 0 {
					for _, x := range pa {
						w -= perNode[x.Node]
					}
				}
				svcWeights[ai] = w
			}
			for _, pr := range svcProtos {
				// pod→service from every pod class, backend on another node.
				for ai, a := range pcs {
					pa := live(a)
					w := svcWeights[ai]
					if w == 0 {
						continue
					}
					for _, x := range pa[:min(len(pa), 2)] {
						if e, ok := pick(list, x.Node, nil); ok {
							if f, ok := svcFlow(KindPodService, pr, podEP(x), 0, e, w, nil); ok {
								add(flowKey{kind: KindPodService, proto: pr, src: a.Key, dst: bc.Key, svc: sc.key}, f)
							}
							break
						}
					}
				}
				// Clients on the backend's own node.
				e := list[0]
				for _, q := range e.pod.Node.Pods {
					var sa Addr
					if q == e.pod {
						if q.Sib == 0 {
							continue
						}
						sa = q.Sib
					}
					qc := v.podClassOf(q)
					if qc == nil {
						continue
					}
					if f, ok := svcFlow(KindPodServiceLocal, pr, podEP(q), sa, e, sameNodeWeight(live(qc), perNode), nil); ok {
						add(flowKey{kind: KindPodServiceLocal, proto: pr, src: qc.Key, dst: bc.Key, svc: sc.key}, f)
					}
				}
				// node→service, external→NodePort and node→own NodePort from every node class,
				// with the backend on another node and on the node itself.
				for _, c := range ncs {
					ns := liveNodes(c)
					if len(ns) == 0 {
						continue
					}
					local := perClass[c]
					for _, isLocal := range []bool{false, true} {
						w := len(ns)*len(backends) - local
						if isLocal {
							w = local
						}
						if w == 0 {
							continue
						}
						// The representative is a node of the class that has such a backend:
						// the class's first node may host the only backend of the class
						// (no backend elsewhere) or none of them (no local backend).
						var x *Node
						var e svcBackend
						ok := false
						for _, n := range ns {
							if isLocal {
								e, ok = pick(list, nil, n)
							} else {
								e, ok = pick(list, n, nil)
							}
							if ok {
								x = n
								break
							}
						}
						if !ok {
							continue
						}
						if f, ok := svcFlow(KindNodeService, pr, hostEP(x), 0, e, w, nil); ok {
							add(flowKey{kind: KindNodeService, proto: pr, src: c.Key, dst: bc.Key, svc: sc.key, local: isLocal}, f)
						}
						if f, ok := svcFlow(KindExtNodePort, pr, Endpoint{Kind: EPExternal, Node: m.Ext}, 0, e, w, x); ok && m.hasEdge() {
							add(flowKey{kind: KindExtNodePort, proto: pr, src: c.Key, dst: bc.Key, svc: sc.key, local: isLocal}, f)
						}
						if f, ok := svcFlow(KindNodeNodePort, pr, hostEP(x), 0, e, w, x); ok {
							add(flowKey{kind: KindNodeNodePort, proto: pr, src: c.Key, dst: bc.Key, svc: sc.key, local: isLocal}, f)
						}
					}
				}
			}
		}
	}
	// node→pod and pod→node.
	for _, c := range ncs {
		ns := liveNodes(c)
		if len(ns) == 0 {
			continue
		}
		x := ns[0]
		for _, q := range x.Pods {
			qc := v.podClassOf(q)
			for _, pr := range l4Protos {
				add(flowKey{kind: KindNodePodLocal, proto: pr, src: c.Key, dst: qc.Key},
					flowSpec{kind: KindNodePodLocal, src: hostEP(x), dst: podEP(q), dstAddr: q.IP, dport: podPorts[pr], proto: pr, weight: len(ns)})
				add(flowKey{kind: KindPodNodeLocal, proto: pr, src: qc.Key, dst: c.Key},
					flowSpec{kind: KindPodNodeLocal, src: podEP(q), dst: hostEP(x), dstAddr: x.IP(), dport: podPorts[pr], proto: pr, weight: len(ns)})
			}
		}
		for _, b := range pcs {
			pb := live(b)
			var y *Pod
			for _, p := range pb {
				if p.Node != x {
					y = p
					break
				}
			}
			if y == nil {
				continue
			}
			w := len(ns) * len(pb)
			if pb[0].Node.sig == c.Sig {
				w -= len(pb) // a node's own pods are the "own node" flow
			}
			for _, pr := range l4Protos {
				add(flowKey{kind: KindNodePod, proto: pr, src: c.Key, dst: b.Key},
					flowSpec{kind: KindNodePod, src: hostEP(x), dst: podEP(y), dstAddr: y.IP, dport: podPorts[pr], proto: pr, weight: w})
			}
		}
	}
	for _, a := range pcs {
		pa := live(a)
		if len(pa) == 0 {
			continue
		}
		for _, c := range ncs {
			ns := liveNodes(c)
			var x *Pod
			var y *Node
			for _, p := range pa[:min(len(pa), 2)] {
				for _, n := range ns {
					if n != p.Node {
						x, y = p, n
						break
					}
				}
				if x != nil {
					break
				}
			}
			if x == nil {
				continue
			}
			w := len(pa) * len(ns)
			if pa[0].Node.sig == c.Sig {
				w -= len(pa)
			}
			for _, pr := range l4Protos {
				add(flowKey{kind: KindPodNode, proto: pr, src: a.Key, dst: c.Key},
					flowSpec{kind: KindPodNode, src: podEP(x), dst: hostEP(y), dstAddr: y.IP(), dport: podPorts[pr], proto: pr, weight: w})
			}
		}
		if !m.hasEdge() {
			continue
		}
		for _, pr := range l4Protos {
			add(flowKey{kind: KindPodExternal, proto: pr, src: a.Key},
				flowSpec{kind: KindPodExternal, src: podEP(pa[0]), dst: Endpoint{Kind: EPExternal, Node: m.Ext}, dstAddr: m.External, dport: extPorts[pr], proto: pr, weight: len(pa)})
		}
	}
	return out
}

// nodePortAddr is the address external clients use for a node's NodePorts: on Linux the NIC
// facing the default gateway (replies leave that way), on Windows the vSwitch adapter (VFP
// serves NodePorts only there).
func nodePortAddr(n *Node) Addr {
	if n.Win != nil && n.Win.Adapter != nil {
		return n.Win.Adapter.Addr
	}
	for _, i := range n.Ifaces {
		if i.Gateway != 0 {
			return i.Addr
		}
	}
	return n.IP()
}

// repPair picks representatives of two pod classes on different nodes.
func repPair(a, b []*Pod) (*Pod, *Pod) {
	for _, x := range a[:min(len(a), 2)] {
		for _, y := range b {
			if y.Node != x.Node {
				return x, y
			}
		}
	}
	return nil, nil
}

// sameNodeWeight counts (client, backend) pairs on one node.
func sameNodeWeight(clients []*Pod, perNode map[*Node]int) int {
	w := 0
	for _, c := range clients {
		w += perNode[c.Node]
	}
	return w
}

// pairWeight counts the pod pairs on different nodes. Pods of one node share its signature,
// so classes of different node signatures never share a node.
func pairWeight(a, b []*Pod) int {
	w := len(a) * len(b)
	if len(a) == 0 || len(b) == 0 || a[0].Node.sig != b[0].Node.sig {
		return w
	}
	if len(a) <= len(b) {
		nodes := map[*Node]int{}
		for _, y := range b {
			nodes[y.Node]++
		}
		for _, x := range a {
			w -= nodes[x.Node]
		}
	} else {
		nodes := map[*Node]int{}
		for _, x := range a {
			nodes[x.Node]++
		}
		for _, y := range b {
			w -= nodes[y.Node]
		}
	}
	return w
}
