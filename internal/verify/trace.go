package verify

import (
	"fmt"
	"strings"
)

// Proto is an IP protocol the model distinguishes.
type Proto uint8

const (
	TCP Proto = iota + 1
	UDP
	ICMP
)

func (p Proto) String() string {
	switch p {
	case TCP:
		return "tcp"
	case UDP:
		return "udp"
	case ICMP:
		return "icmp"
	}
	return "?"
}

// ParseProto parses tcp, udp or icmp.
func ParseProto(s string) (Proto, error) {
	switch strings.ToLower(s) {
	case "tcp":
		return TCP, nil
	case "udp":
		return UDP, nil
	case "icmp":
		return ICMP, nil
	}
	return 0, fmt.Errorf("unknown protocol %q: expected tcp, udp or icmp", s)
}

// Disposition is how a flow ends, after Batfish's flow dispositions.
type Disposition string

const (
	Delivered Disposition = "delivered"
	// DeliveredSNAT: delivered, but with the source rewritten: pod-to-pod and pod-to-service
	// traffic must keep its source (the Kubernetes network model).
	DeliveredSNAT Disposition = "delivered-with-SNAT"
	NoRoute       Disposition = "no-route"
	// NoARP: the next hop does not resolve on the segment (includes a gateway VIP that nobody
	// holds, or whose holder is on another segment).
	NoARP Disposition = "no-ARP"
	// Unsupported: a documented Windows platform limit.
	Unsupported Disposition = "unsupported-on-Windows"
	Loop        Disposition = "loop"
	// Dropped: discarded by a node (forwarding off, rp_filter, broken HNS endpoint, a reply
	// whose NAT was not undone).
	Dropped Disposition = "dropped"
	// AddressConflict: the destination address belongs to more than one node's pods.
	AddressConflict Disposition = "address-conflict"
)

// Step is one thing a node did to the packet.
type Step struct {
	Action string `json:"action"`
	Detail string `json:"detail"`
	Before string `json:"before,omitempty"`
	After  string `json:"after,omitempty"`
	Source string `json:"source,omitempty"`
}

// Hop is the packet's visit to one node.
type Hop struct {
	Node   string `json:"node"`
	In     string `json:"in,omitempty"`
	Packet string `json:"packet"`
	Steps  []Step `json:"steps"`
}

// Trace is one direction of a flow.
type Trace struct {
	Hops        []Hop       `json:"hops"`
	Disposition Disposition `json:"disposition"`
	Cause       string      `json:"cause,omitempty"`
}

func (t *Trace) hop(node *Node, in string, p packet) {
	if t == nil {
		return
	}
	t.Hops = append(t.Hops, Hop{Node: node.Name, In: in, Packet: p.String()})
}

func (t *Trace) step(s Step) {
	if t == nil || len(t.Hops) == 0 {
		return
	}
	h := &t.Hops[len(t.Hops)-1]
	h.Steps = append(h.Steps, s)
}

// Text renders the trace indented for terminals.
func (t *Trace) Text(indent string) string {
	var b strings.Builder
	for i, h := range t.Hops {
		in := ""
		if h.In != "" {
			in = " in " + h.In
		}
		fmt.Fprintf(&b, "%s%d. %s%s  [%s]\n", indent, i+1, h.Node, in, h.Packet)
		for _, s := range h.Steps {
			line := s.Action + ": " + s.Detail
			if s.Before != "" || s.After != "" {
				line += " (" + s.Before + " -> " + s.After + ")"
			}
			if s.Source != "" {
				line += "  {" + s.Source + "}"
			}
			fmt.Fprintf(&b, "%s     %s\n", indent, line)
		}
	}
	fmt.Fprintf(&b, "%s=> %s", indent, t.Disposition)
	if t.Cause != "" {
		fmt.Fprintf(&b, ": %s", t.Cause)
	}
	b.WriteString("\n")
	return b.String()
}

// packet is the header the model tracks; outer is set while encapsulated.
type packet struct {
	src, dst     Addr
	sport, dport uint16
	proto        Proto
	outer        *outerHdr
	// size is the IP packet's size in bytes (0: not checked); df its don't-fragment bit.
	size int
	df   bool
}

type outerHdr struct {
	src, dst Addr
	kind     string // ipip or vxlan
}

func (p packet) String() string {
	var s string
	src := p.src.String()
	if p.src == 0 {
		src = "(source chosen by routing)"
	}
	if p.proto == ICMP {
		s = fmt.Sprintf("icmp %s -> %s", src, p.dst)
	} else {
		s = fmt.Sprintf("%s %s:%d -> %s:%d", p.proto, src, p.sport, p.dst, p.dport)
	}
	if p.outer != nil {
		s = fmt.Sprintf("%s %s -> %s [%s]", p.outer.kind, p.outer.src, p.outer.dst, s)
	}
	return s
}

func (p packet) tuple() tuple {
	return tuple{p.src, p.dst, p.sport, p.dport, p.proto}
}

type tuple struct {
	src, dst     Addr
	sport, dport uint16
	proto        Proto
}

func (t tuple) reverse() tuple { return tuple{t.dst, t.src, t.dport, t.sport, t.proto} }

func (t tuple) String() string {
	if t.proto == ICMP {
		return fmt.Sprintf("%s -> %s", t.src, t.dst)
	}
	return fmt.Sprintf("%s:%d -> %s:%d", t.src, t.sport, t.dst, t.dport)
}
