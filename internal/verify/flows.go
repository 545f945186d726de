package verify

import (
	"fmt"
	"slices"
	"strings"
)

// FlowKind is a class of flows; the constants are in report order.
type FlowKind uint8

const (
	KindPodPodSameNode FlowKind = iota
	KindPodPod
	KindPodService
	KindPodServiceLocal
	KindNodePodLocal
	KindNodePod
	KindPodNodeLocal
	KindPodNode
	KindNodeService
	KindPodExternal
	KindExtNodePort
	KindNodeNodePort
	KindNodeNode
)

var kindNames = [...]string{"pod→pod same node", "pod→pod", "pod→service", "pod→service (backend on the client's node)",
	"node→pod own node", "node→pod", "pod→node own node", "pod→node", "node→service", "pod→external",
	"external→NodePort", "node→own NodePort", "node→node"}

func (k FlowKind) String() string { return kindNames[k] }

// Verdicts.
const (
	VerdictOK          = "ok"
	VerdictFail        = "FAIL"
	VerdictUnsupported = "expected-unsupported"
)

// flowSpec is one concrete flow between representatives.
type flowSpec struct {
	kind    FlowKind
	src     Endpoint
	srcAddr Addr // overrides the source pod's address (a sibling pod)
	dst     Endpoint
	dstAddr Addr
	dport   uint16
	proto   Proto
	svc     *Service
	backend *Pod
	// weight is the number of node pairs (or nodes) the representative stands for.
	weight int
	// size and df override Options.PacketSize/DF (--flow).
	size int
	df   bool
}

func (f *flowSpec) label() string {
	return f.kind.String() + " " + osOf(f.src) + "→" + osOf(f.dst)
}

func (f *flowSpec) via() string {
	if f.svc == nil {
		return ""
	}
	return fmt.Sprintf("%s %s:%d", f.svc.Name, f.dstAddr, f.dport)
}

func osOf(e Endpoint) string {
	if e.Kind == EPExternal {
		return "external"
	}
	return e.Node.OS
}

// expectUnsupported says whether a documented Windows limit covers the flow.
func (m *Model) expectUnsupported(f *flowSpec) string {
	srcWin := f.src.Kind != EPExternal && f.src.Node.OS == osWindows
	switch {
	case f.kind == KindNodeService && srcWin:
		return "Windows nodes cannot reach service VIPs from the host"
	case f.kind == KindNodeNodePort && srcWin:
		return "NodePort access from the Windows node itself is not supported"
	case f.kind == KindPodExternal && srcWin && f.proto == ICMP:
		return "ICMP from Windows pods to remote networks cannot be translated"
	case f.kind == KindNodePod && srcWin && f.src.Node.Win.NetType == "Overlay":
		return "VXLAN (HNS Overlay) on Windows does not support node-to-remote-pod traffic"
	case (f.kind == KindPodNode || f.kind == KindPodNodeLocal) && srcWin && f.proto == ICMP && f.src.Pod != nil &&
		f.src.Pod.EP != nil && f.src.Pod.EP.OutboundNAT && !inAny(f.dstAddr, f.src.Pod.EP.Exceptions):
		// Calico's Windows ExceptionList is the service CIDR and the IP pools only
		// (cni.conf.template, winpol), so pod→node traffic is OutBoundNATed.
		return "ICMP from Windows pods to node addresses outside the CNI's OutBoundNAT ExceptionList cannot be translated"
	}
	return ""
}

// snatAllowed: the Kubernetes network model forbids NAT between pods (and from nodes to
// pods); traffic leaving the cluster, NodePorts, and pod-to-node traffic may be translated.
func snatAllowed(kind FlowKind) bool {
	switch kind {
	case KindPodExternal, KindExtNodePort, KindPodNode, KindPodNodeLocal, KindNodeService, KindNodeNodePort:
		return true
	}
	return false
}

// FlowResult is the verdict of one representative flow.
type FlowResult struct {
	Flow        string      `json:"flow"`
	Proto       string      `json:"proto"`
	Src         string      `json:"src"`
	Dst         string      `json:"dst"`
	Via         string      `json:"via,omitempty"` // service VIP:port or NodePort
	Expected    string      `json:"expected"`
	Disposition Disposition `json:"disposition"`
	Cause       string      `json:"cause,omitempty"`
	Verdict     string      `json:"verdict"`
	NodePairs   int         `json:"nodePairs"`
	Notes       []string    `json:"notes,omitempty"`
	Forward     *Trace      `json:"forward,omitempty"`
	Reply       *Trace      `json:"reply,omitempty"`

	spec  *flowSpec
	stale bool
}

// fill renames a reused class result after the current representatives.
func (r *FlowResult) fill() {
	if !r.stale || r.spec == nil {
		return
	}
	r.Src, r.Dst, r.Via = r.spec.src.String(), r.spec.dst.String(), r.spec.via()
	r.stale = false
}

// evaluate runs a flow forward and back. With record, traces are kept.
func (m *Model) evaluate(f *flowSpec, record bool, deps *depSet) FlowResult {
	res := FlowResult{Flow: f.label(), Proto: f.proto.String(), Src: f.src.String(), Dst: f.dst.String(), NodePairs: f.weight, Expected: "works"}
	res.Via = f.via()
	unsup := m.expectUnsupported(f)
	if unsup != "" {
		res.Expected = "unsupported (" + unsup + ")"
	}
	dropOK := m.expectLocalDrop(f)
	if dropOK != "" {
		res.Expected = "dropped (" + dropOK + ")"
	}
	srcAddr := f.src.Addr()
	if f.srcAddr != 0 {
		srcAddr = f.srcAddr
	}
	var start loc
	switch f.src.Kind {
	case EPPod:
		start = loc{kind: locPodOut, node: f.src.Node, pod: f.src.Pod}
	case EPHost:
		start = loc{kind: locHostOut, node: f.src.Node}
		srcAddr = 0 // chosen by routing
	case EPExternal:
		start = loc{kind: locHostOut, node: f.src.Node}
	}
	p := packet{src: srcAddr, dst: f.dstAddr, proto: f.proto, size: m.opts.PacketSize, df: m.opts.DF}
	if f.size != 0 {
		p.size, p.df = f.size, f.df
	}
	if f.proto != ICMP {
		p.sport, p.dport = 40000, f.dport
	}
	fw := &walker{m: m, backend: f.backend, deps: deps}
	if !fw.fits(p, 0, "") {
		res.Disposition, res.Cause, res.Verdict = fw.disp, fw.cause, VerdictFail
		return res
	}
	if record {
		fw.rec = &Trace{}
		res.Forward = fw.rec
	}
	fw.run(start, p)
	if record {
		fw.rec.Disposition, fw.rec.Cause = fw.disp, fw.cause
	}
	disp, cause := fw.disp, fw.cause
	if why := expectedLocalDrop(f, fw); why != "" && dropOK == "" {
		dropOK = why
		res.Expected = "dropped (" + why + ")"
	}
	origSrc := p.src
	if origSrc == 0 {
		origSrc = firstSource(fw)
	}
	if disp == Delivered {
		disp, cause = m.checkDelivery(f, fw)
	}
	if disp == Delivered || disp == DeliveredSNAT {
		// The reply retraces the connection from what was delivered.
		rw := &walker{m: m, reply: true, nat: fw.nat, deps: deps}
		if record {
			rw.rec = &Trace{}
			res.Reply = rw.rec
		}
		rp := packet{src: fw.pkt.dst, dst: fw.pkt.src, sport: fw.pkt.dport, dport: fw.pkt.sport, proto: fw.pkt.proto}
		var rstart loc
		switch fw.final.Kind {
		case EPPod:
			rstart = loc{kind: locPodOut, node: fw.final.Node, pod: fw.final.Pod}
		default:
			rstart = loc{kind: locHostOut, node: fw.final.Node}
		}
		rw.run(rstart, rp)
		if record {
			rw.rec.Disposition, rw.rec.Cause = rw.disp, rw.cause
		}
		switch {
		case rw.disp != Delivered:
			disp, cause = rw.disp, "reply: "+rw.cause
		case !rw.final.same(f.src):
			disp, cause = Dropped, fmt.Sprintf("reply: delivered to %s instead of %s", rw.final, f.src)
		case rw.pkt.src != f.dstAddr || rw.pkt.dst != origSrc:
			var pending []string
			for _, e := range fw.nat {
				if !e.undone {
					pending = append(pending, fmt.Sprintf("%s on %s (%s)", e.kind, e.node.Name, e.why()))
				}
			}
			disp, cause = Dropped, fmt.Sprintf("reply: arrives as %s -> %s but the connection is %s -> %s; not undone: %s (the reply bypassed the node that translated)",
				rw.pkt.src, rw.pkt.dst, origSrc, f.dstAddr, strings.Join(pending, "; "))
		}
		if note := asymmetry(fw.path, rw.path); note != "" {
			res.Notes = append(res.Notes, note)
		}
	}
	if disp != Delivered && disp != DeliveredSNAT && disp != AddressConflict && disp != Unsupported {
		// A collision explains failures better than where the packet happened to go.
		for _, e := range []Endpoint{f.src, f.dst} {
			if e.Kind == EPPod && e.Pod.Conflict != "" {
				disp, cause = AddressConflict, e.Pod.Conflict+"; the packet: "+string(disp)+": "+cause
				break
			}
		}
	}
	if disp != Delivered && disp != DeliveredSNAT && disp != Unsupported {
		win := f.src.Kind != EPExternal && f.src.Node.OS == osWindows || f.dst.Kind != EPExternal && f.dst.Node != nil && f.dst.Node.OS == osWindows
		nodes := append([]*Node{f.src.Node, f.dst.Node}, fw.path...)
		if why := m.felixDownOn(nodes, win); why != "" {
			cause += " [" + why + "]"
		}
	}
	res.Disposition, res.Cause = disp, cause
	switch {
	case unsup != "":
		res.Verdict = VerdictUnsupported
		if disp != Unsupported {
			res.Notes = append(res.Notes, fmt.Sprintf("expected unsupported, modelled as %s", disp))
		}
	case dropOK != "":
		res.Verdict = VerdictFail
		if disp == Dropped {
			res.Verdict = VerdictOK
		}
	case disp == Delivered || (disp == DeliveredSNAT && snatAllowed(f.kind)):
		res.Verdict = VerdictOK
	default:
		res.Verdict = VerdictFail
	}
	return res
}

func firstSource(w *walker) Addr {
	for _, e := range w.nat {
		return e.orig.src
	}
	return w.pkt.src
}

// checkDelivery compares where the packet arrived with where the flow was going.
func (m *Model) checkDelivery(f *flowSpec, w *walker) (Disposition, string) {
	want := f.dst
	got := w.final
	if f.svc != nil && f.backend != nil {
		want = Endpoint{Kind: EPPod, Node: f.backend.Node, Pod: f.backend}
		if f.svc.LocalOnly && got.Kind == EPPod && slices.Contains(f.svc.Backends, got.Pod) {
			want = got // externalTrafficPolicy Local: any endpoint on the receiving node
		}
	}
	if !got.same(want) {
		if got.Kind == EPPod && want.Kind == EPPod && got.Node != want.Node {
			return AddressConflict, fmt.Sprintf("delivered to %s on %s instead of %s: %s is in both nodes' pod ranges", got.Pod.IP, got.Node.Name, want, w.pkt.dst)
		}
		return Dropped, fmt.Sprintf("delivered to %s instead of %s", got, want)
	}
	for _, e := range []Endpoint{f.src, want} {
		if e.Kind == EPPod && e.Pod.Conflict != "" {
			return AddressConflict, e.Pod.Conflict
		}
	}
	for _, e := range w.nat {
		if e.kind == "SNAT" {
			return DeliveredSNAT, fmt.Sprintf("source rewritten on %s (%s): %s", e.node.Name, e.why(), e.xlat.src)
		}
	}
	return Delivered, ""
}

// asymmetry notes when the reply crosses different forwarding nodes than the request.
func asymmetry(fwd, rev []*Node) string {
	mid := func(p []*Node) []string {
		var out []string
		for i, n := range p {
			if i == 0 || i == len(p)-1 {
				continue
			}
			out = append(out, n.Name)
		}
		return out
	}
	a, b := mid(fwd), mid(rev)
	slices.Reverse(b)
	if slices.Equal(a, b) {
		return ""
	}
	return fmt.Sprintf("asymmetric path: request via [%s], reply via [%s]", strings.Join(a, " "), strings.Join(b, " "))
}

// expectLocalDrop says why an external→NodePort flow of an externalTrafficPolicy Local service is
// meant to be dropped: the node it is sent to has no endpoint of the service (load balancers'
// health checks steer clients away from such nodes). Windows nodes without DSR do not honour
// the policy (winDSR). A pod client of a Linux node is not meant to be dropped: kube-proxy
// short-circuits pod traffic to the cluster chain (localPolicyRoute); whether its packet still
// looks like pod traffic when it arrives is the trace's answer (expectedLocalDrop).
func (m *Model) expectLocalDrop(f *flowSpec) string {
	if f.svc == nil || !f.svc.LocalOnly || f.kind != KindExtNodePort {
		return ""
	}
	var n *Node
	for _, x := range m.Nodes {
		if (x.OS == osLinux || x.OS == osWindows) && x.isLocal(f.dstAddr) {
			n = x
		}
	}
	if n == nil || (n.Win != nil && !winDSR(n)) || (n.OS == osLinux && f.src.Kind == EPPod) {
		return ""
	}
	for _, b := range f.svc.Backends {
		if b.Node == n && b.Broken == "" {
			return ""
		}
	}
	return "externalTrafficPolicy Local and " + n.Name + " has no endpoint of " + f.svc.Name
}

// expectedLocalDrop says why a pod's NodePort flow that kube-proxy dropped under
// externalTrafficPolicy Local is kube-proxy's design and not a fault: the packet reached the node
// with a source that is neither in the cluster CIDR nor the node's own (the CNI masqueraded it on
// the way), so kube-proxy treats it as external traffic, for which the node has no endpoint.
func expectedLocalDrop(f *flowSpec, w *walker) string {
	if f.svc == nil || !f.svc.LocalOnly || f.src.Kind != EPPod || w.localDrop == "" {
		return ""
	}
	return "externalTrafficPolicy Local: the packet reaches " + w.localDrop + " no longer as pod traffic, and " + w.localDrop + " has no endpoint of " + f.svc.Name
}
