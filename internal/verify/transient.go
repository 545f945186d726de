package verify

import (
	"fmt"
	"time"
)

// The "during failover" view. When a scenario moves a VRRP instance's VIPs (or leaves nobody
// holding them), hosts that use a VIP as next hop keep its former holder's MAC in their ARP
// (neighbour) cache for a while, and their frames go to the former holder meanwhile. verify
// evaluates the flows a second time as they are in that window and reports the classes whose
// outcome differs from the steady state, with the window's length.

// NeighTimers are the kernel's neighbour-cache parameters that bound how long a host keeps a
// stale MAC (Linux Documentation/networking/ip-sysctl.rst "neigh/default/*" and arp(7); the
// values RFC 4861 section 10 gives for neighbour unreachability detection).
type NeighTimers struct {
	// BaseReachable is base_reachable_time_ms: an entry stays REACHABLE for a random time
	// between 1/2 and 3/2 of it after its last confirmation (net/core/neighbour.c
	// neigh_rand_reach_time).
	BaseReachable time.Duration
	// DelayFirstProbe is delay_first_probe_time: a stale entry used again waits this long
	// (DELAY) for a confirmation before probing.
	DelayFirstProbe time.Duration
	// Retrans is retrans_time_ms, the interval between probes.
	Retrans time.Duration
	// UcastSolicit is ucast_solicit, the unicast probes sent (PROBE) before the entry fails.
	UcastSolicit int
}

// DefaultNeighTimers are Linux's defaults (ip-sysctl.rst, arp(7)): base_reachable_time_ms 30000,
// delay_first_probe_time 5, retrans_time_ms 1000, ucast_solicit 3.
func DefaultNeighTimers() NeighTimers {
	return NeighTimers{BaseReachable: 30 * time.Second, DelayFirstProbe: 5 * time.Second, Retrans: time.Second, UcastSolicit: 3}
}

// StaleWindow is how long a host keeps sending to the old MAC when its entry was already STALE
// at the change: the first use starts DELAY, then UcastSolicit unanswered probes fail it.
func (t NeighTimers) StaleWindow() time.Duration {
	return t.DelayFirstProbe + time.Duration(t.UcastSolicit)*t.Retrans
}

// MaxWindow is the longest the old MAC is used without a confirmation: an entry confirmed just
// before the change stays REACHABLE up to 3/2 BaseReachable, then takes StaleWindow to fail.
func (t NeighTimers) MaxWindow() time.Duration {
	return t.BaseReachable*3/2 + t.StaleWindow()
}

// keepalived's gratuitous ARPs when it becomes MASTER: vrrp_garp_master_repeat (5) at once and
// as many again after vrrp_garp_master_delay (5 s); "Gratuitous ARP delay = 5" and "Gratuitous
// ARP repeat = 5" in keepalived's data dump (testdata/verify/real/master1.keepalived.data).
// Linux replaces an existing entry on a gratuitous ARP at once (net/ipv4/arp.c arp_process: a
// gratuitous ARP overrides locktime).
const garpMasterDelay = 5 * time.Second

// During is the "during failover" view of a report.
type During struct {
	Gateways []Transient `json:"gateways"`
	// Flows are the flow classes whose outcome in the window differs from the steady state.
	Flows []TransientFlow `json:"flows"`
}

// Transient is one instance whose VIPs moved: from whom, to whom, and for how long hosts keep
// the former holder's MAC.
type Transient struct {
	Group    string   `json:"group"`
	Instance string   `json:"instance"`
	VIPs     []string `json:"vips"`
	From     string   `json:"from"`
	FromDown bool     `json:"fromDown"`
	To       string   `json:"to"`
	// MinSeconds and MaxSeconds bound the window; Window says where they come from.
	MinSeconds float64 `json:"minSeconds"`
	MaxSeconds float64 `json:"maxSeconds"`
	Window     string  `json:"window"`
}

// TransientFlow is a flow class whose outcome differs in the window.
type TransientFlow struct {
	Flow   string      `json:"flow"`
	Proto  string      `json:"proto"`
	Src    string      `json:"src"`
	Dst    string      `json:"dst"`
	Via    string      `json:"via,omitempty"`
	Steady Disposition `json:"steady"`
	During Disposition `json:"during"`
	Cause  string      `json:"cause,omitempty"`
}

// window describes the transient of in moving from `from`.
func window(in *Instance, from *Node, t NeighTimers) Transient {
	tr := Transient{Group: in.Group.Name, Instance: in.Name, From: from.Name, FromDown: from.Down, To: holderName(in)}
	for _, a := range in.addrs() {
		tr.VIPs = append(tr.VIPs, a.String())
	}
	if tr.To != "none" {
		tr.MaxSeconds = garpMasterDelay.Seconds()
		tr.Window = fmt.Sprintf("until %s's gratuitous ARP at the takeover, which replaces the entry at once (Linux net/ipv4/arp.c); %gs later if the first burst is lost (keepalived vrrp_garp_master_delay)",
			tr.To, tr.MaxSeconds)
		return tr
	}
	tr.MinSeconds, tr.MaxSeconds = t.StaleWindow().Seconds(), t.MaxWindow().Seconds()
	tr.Window = fmt.Sprintf("no gratuitous ARP: %gs from an entry already stale (delay_first_probe_time %gs + ucast_solicit %d × retrans_time %gs), up to %gs from one confirmed just before (reachable for 0.5–1.5 × base_reachable_time %gs first; Linux ip-sysctl.rst, arp(7)); longer while a host's own TCP flow through %s gets answers, which confirm the entry",
		tr.MinSeconds, t.DelayFirstProbe.Seconds(), t.UcastSolicit, t.Retrans.Seconds(), tr.MaxSeconds, t.BaseReachable.Seconds(), from.Name)
	return tr
}

// during evaluates again, with the ARP entries of moved VIPs still pointing at their former
// holders, the flow classes of the last Run whose evaluation looked up one of those VIPs on the
// segment where the former holder would answer (the byDep index; a walk that never resolved a
// moved VIP is the same in the window), and lists those whose verdict differs. The classes and
// representatives are the steady state's; the cache is neither read nor written.
func (v *Verifier) during(specs []keyedSpec) *During {
	m := v.m
	d := &During{Flows: []TransientFlow{}}
	stale := map[Addr]*Iface{}
	affected := map[flowKey]bool{}
	for _, g := range m.Groups {
		for _, in := range g.Instances {
			from := v.moved[in]
			if from == nil {
				continue
			}
			d.Gateways = append(d.Gateways, window(in, from, DefaultNeighTimers()))
			ifc := from.iface(g.Iface)
			if ifc == nil || ifc.Seg == nil {
				continue
			}
			for _, a := range in.addrs() {
				stale[a] = ifc
				for _, k := range v.byDep[depARP(ifc.Seg, a)] {
					affected[k] = true
				}
			}
		}
	}
	if len(d.Gateways) == 0 {
		return nil
	}
	m.staleARP = stale
	defer func() { m.staleARP = nil }()
	for _, s := range specs {
		c := v.cache[s.key]
		if !affected[s.key] || c == nil {
			continue
		}
		spec := s.spec
		r := m.evaluate(&spec, false, nil)
		if r.Verdict == c.res.Verdict {
			continue
		}
		d.Flows = append(d.Flows, TransientFlow{Flow: r.Flow, Proto: r.Proto, Src: r.Src, Dst: r.Dst, Via: r.Via, Steady: c.res.Disposition, During: r.Disposition, Cause: r.Cause})
	}
	return d
}
