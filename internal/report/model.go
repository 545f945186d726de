// Package report builds `kubewin report`: one self-contained HTML page with the cluster's
// topology (networks, node classes, gateway groups and their VIP holders, Windows HNS networks),
// the verify results for the normal state and for failure scenarios (failing flows drawn broken
// at the hop that breaks them, each with its trace), and check/diagnose findings with fixes.
//
// The page is data plus a small script: Build makes a Page (plain, deterministic data), and
// WriteHTML embeds it as JSON into a template whose script draws SVG. Nothing is loaded from
// elsewhere when the page is opened (no CDN, fonts or scripts), so it works offline and in mail.
package report

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/kubewin/kubewin/internal/check"
	"github.com/kubewin/kubewin/internal/diagnose"
	"github.com/kubewin/kubewin/internal/nodestatus"
	"github.com/kubewin/kubewin/internal/plan"
	"github.com/kubewin/kubewin/internal/verify"
)

// Page is everything the page shows.
type Page struct {
	Cluster   Cluster        `json:"cluster"`
	Routing   string         `json:"routing"`
	Groups    []Group        `json:"groups"`
	Linux     []NodeClass    `json:"linux"`
	Windows   []WindowsClass `json:"windows"`
	Scenarios []Scenario     `json:"scenarios"`
	Findings  []Finding      `json:"findings"`
	// Inputs says what the page was made from (plan, bundle, logs), for the footer.
	Inputs []string `json:"inputs"`
}

// Cluster is the header.
type Cluster struct {
	Name        string   `json:"name"`
	Version     string   `json:"version"`
	Design      string   `json:"design"`
	LinuxCNI    string   `json:"linuxCNI"`
	PodCIDRs    []string `json:"podCIDRs"`
	ServiceCIDR string   `json:"serviceCIDR"`
	NodeSubnets []string `json:"nodeSubnets"`
	Nodes       int      `json:"nodes"`
}

// Group is a gateway group: its members and VRRP instances.
type Group struct {
	Name      string     `json:"name"`
	Interface string     `json:"interface"`
	VRRP      string     `json:"vrrp"`
	Members   []Member   `json:"members"`
	Instances []Instance `json:"instances"`
}

// Member is one gateway member.
type Member struct {
	Node     string `json:"node"`
	IP       string `json:"ip"`
	Priority int    `json:"priority"`
}

// Instance is one VRRP instance; its holder per scenario is in Scenario.Holders.
type Instance struct {
	Name      string   `json:"name"`
	VRID      int      `json:"vrid"`
	VIPs      []string `json:"vips"`
	RouterVIP string   `json:"routerVIP,omitempty"`
	Planned   string   `json:"planned"`
}

// NodeClass aggregates Linux nodes that look alike (role and gateway membership), so a
// 5,000-node cluster stays a handful of boxes; Nodes lists them for the expand-on-click view.
type NodeClass struct {
	Key     string   `json:"key"`
	Role    string   `json:"role"`
	Gateway string   `json:"gateway,omitempty"` // group name when the nodes are gateway members
	Nodes   []string `json:"nodes"`
	Subnets []string `json:"subnets"`
}

// WindowsClass is a Windows node, or a class of Windows nodes of one build and network type
// when there are too many to draw one by one.
type WindowsClass struct {
	Key        string      `json:"key"`
	Build      string      `json:"build"`
	HNSNetwork string      `json:"hnsNetwork"`
	HNSType    string      `json:"hnsType"`
	Nodes      []WindowsVM `json:"nodes"`
}

// WindowsVM is one Windows node's network facts.
type WindowsVM struct {
	Name     string `json:"name"`
	NodeIP   string `json:"nodeIP"`
	PodCIDR  string `json:"podCIDR"`
	Gateway  string `json:"gateway"`  // .1
	Endpoint string `json:"endpoint"` // .2, the host endpoint
	Holder   string `json:"holder"`   // planned gateway holder (or ToR)
}

// Scenario is one verify run.
type Scenario struct {
	Name        string            `json:"name"`
	Label       string            `json:"label"`
	Holders     map[string]string `json:"holders"` // instance -> holder ("" = nobody)
	Summary     verify.Summary    `json:"summary"`
	Matrix      []verify.Row      `json:"matrix"`
	Failures    []Failure         `json:"failures"`
	Unsupported int               `json:"unsupported"`
	Notes       []string          `json:"notes,omitempty"`
}

// Failure is a failing flow with where it breaks.
type Failure struct {
	ID      string   `json:"id"`
	Flow    string   `json:"flow"`
	Proto   string   `json:"proto"`
	Src     string   `json:"src"`
	Dst     string   `json:"dst"`
	Via     string   `json:"via,omitempty"`
	Cause   string   `json:"cause"`
	Path    []string `json:"path"`            // nodes the packet crossed, in order
	BreakAt string   `json:"breakAt"`         // the node where it broke
	Reply   bool     `json:"reply,omitempty"` // it broke on the way back
	Trace   string   `json:"trace"`
	Pairs   int      `json:"pairs"`
}

// Finding is a check or diagnose finding.
type Finding struct {
	Source   string `json:"source"` // check or diagnose
	ID       string `json:"id"`
	Severity string `json:"severity"`
	Where    string `json:"where"`
	What     string `json:"what"`
	Fix      string `json:"fix"`
}

// Input is what Build reads; only Plan and Runs are required.
type Input struct {
	Plan *plan.Plan
	// Runs are verify reports, the first for the normal state.
	Runs []Run
	// Check and Diagnose are optional.
	Check    *check.Report
	Diagnose *diagnose.Report
	// Nodes is the live nodes' kubewin health (nodestatus.List, with --from-cluster): an
	// unhealthy node and a rollout halted on a node are findings of the page.
	Nodes  []nodestatus.NodeHealth
	Inputs []string
}

// Run is one verify report with the scenario that produced it.
type Run struct {
	Name, Label string
	Report      *verify.Report
}

// maxWindowsDrawn is how many Windows nodes are drawn one by one; beyond it they are drawn as
// classes (build × network type) that expand on click.
const maxWindowsDrawn = 24

// Build turns the inputs into a Page. It is deterministic: same inputs, same Page.
func Build(in Input) (*Page, error) {
	p := in.Plan
	if p == nil {
		return nil, fmt.Errorf("report: no plan")
	}
	if len(in.Runs) == 0 {
		return nil, fmt.Errorf("report: no verify run")
	}
	pg := &Page{Inputs: in.Inputs, Findings: []Finding{}}
	pg.Cluster = Cluster{Name: p.Cluster.Name, Version: p.Cluster.KubernetesVersion, Design: p.Cluster.Design,
		LinuxCNI: p.Cluster.LinuxCNI, PodCIDRs: p.Networking.ClusterCIDRs, ServiceCIDR: p.Networking.ServiceCIDR,
		NodeSubnets: p.Networking.NodeSubnets, Nodes: len(p.Nodes)}
	pg.Routing = routing(p)

	for _, g := range p.GatewayGroups {
		gr := Group{Name: g.Name, Interface: g.Interface, VRRP: fmt.Sprintf("VRRPv%d, advert %gs", g.VRRPVersion, g.AdvertIntervalSeconds)}
		for _, m := range g.Members {
			gr.Members = append(gr.Members, Member{Node: m.Node, IP: m.IP, Priority: m.Priority})
		}
		for _, inst := range g.Instances {
			gi := Instance{Name: inst.Name, VRID: inst.VRID, RouterVIP: inst.RouterVIP}
			for _, v := range inst.VIPs {
				gi.VIPs = append(gi.VIPs, v.Address)
			}
			best := -1
			for _, m := range g.Members { // nopreempt: the first MASTER is the highest priority
				if m.Priority > best {
					best, gi.Planned = m.Priority, m.Node
				}
			}
			gr.Instances = append(gr.Instances, gi)
		}
		pg.Groups = append(pg.Groups, gr)
	}

	linux := map[string]*NodeClass{}
	var wins []WindowsVM
	winMeta := map[string][3]string{}
	for _, n := range p.Nodes {
		switch {
		case n.Windows != nil:
			w := n.Windows
			wins = append(wins, WindowsVM{Name: n.Name, NodeIP: n.NodeIP, PodCIDR: n.PodCIDR, Gateway: w.Gateway,
				Endpoint: w.HostEndpointIP, Holder: w.GatewayHolder})
			winMeta[n.Name] = [3]string{w.BuildLabel, w.HNSNetworkName, w.HNSNetworkType}
		default:
			gw := ""
			if n.Linux != nil && n.Linux.Gateway != nil {
				gw = n.Linux.Gateway.Group
			}
			key := n.Role + "|" + gw
			c := linux[key]
			if c == nil {
				c = &NodeClass{Key: key, Role: n.Role, Gateway: gw}
				linux[key] = c
			}
			c.Nodes = append(c.Nodes, n.Name)
			if !slices.Contains(c.Subnets, n.NodeSubnet) {
				c.Subnets = append(c.Subnets, n.NodeSubnet)
			}
		}
	}
	for _, k := range slices.Sorted(maps.Keys(linux)) {
		pg.Linux = append(pg.Linux, *linux[k])
	}
	if len(wins) <= maxWindowsDrawn {
		for _, w := range wins {
			m := winMeta[w.Name]
			pg.Windows = append(pg.Windows, WindowsClass{Key: w.Name, Build: m[0], HNSNetwork: m[1], HNSType: m[2], Nodes: []WindowsVM{w}})
		}
	} else {
		byClass := map[string]*WindowsClass{}
		for _, w := range wins {
			m := winMeta[w.Name]
			key := m[0] + " · " + m[2]
			c := byClass[key]
			if c == nil {
				c = &WindowsClass{Key: key, Build: m[0], HNSNetwork: m[1], HNSType: m[2]}
				byClass[key] = c
			}
			c.Nodes = append(c.Nodes, w)
		}
		for _, k := range slices.Sorted(maps.Keys(byClass)) {
			pg.Windows = append(pg.Windows, *byClass[k])
		}
	}

	for i, r := range in.Runs {
		pg.Scenarios = append(pg.Scenarios, scenario(i, r))
	}
	if in.Check != nil {
		for _, f := range in.Check.Findings {
			pg.Findings = append(pg.Findings, Finding{Source: "check", ID: f.RuleID, Severity: f.Severity.String(),
				Where: f.Location.String(), What: f.Message, Fix: f.Fix})
		}
	}
	if in.Diagnose != nil {
		for _, f := range in.Diagnose.Findings {
			where := ""
			if len(f.Files) > 0 {
				where = fmt.Sprintf("%s:%d", f.Files[0].Input, f.Files[0].Line)
			}
			pg.Findings = append(pg.Findings, Finding{Source: "diagnose", ID: f.ID, Severity: string(f.Severity),
				Where: where, What: f.Title + ": " + f.Cause, Fix: f.Fix})
		}
	}
	for _, n := range in.Nodes {
		if n.Managed && !n.Healthy {
			pg.Findings = append(pg.Findings, Finding{Source: "status", ID: n.Reason, Severity: string(diagnose.SevError),
				Where: "node " + n.Node, What: n.Message, Fix: "kubewin status; the node service's condition " + nodestatus.ConditionType + " says what failed and why"})
		}
		if r := n.Rollout; r.Halted() {
			why := r.Reason
			if r.NodeReason != "" && !strings.Contains(why, r.NodeReason) {
				why = strings.TrimPrefix(why+"; node: "+r.NodeReason, "; ")
			}
			pg.Findings = append(pg.Findings, Finding{Source: "rollout", ID: "Rollout" + r.Phase, Severity: string(diagnose.SevError),
				Where: "node " + n.Node, What: fmt.Sprintf("rollout %s halted here (%s, runs %s): %s", r.Rollout, r.Phase, r.Current, why),
				Fix: "fix what the reason names, then kubewin rollout resume (or abort); kubewin rollout status shows the pool"})
		}
	}
	sort.SliceStable(pg.Findings, func(i, j int) bool {
		return sevRank(pg.Findings[i].Severity) < sevRank(pg.Findings[j].Severity)
	})
	return pg, nil
}

func scenario(i int, r Run) Scenario {
	rep := r.Report
	sc := Scenario{Name: r.Name, Label: r.Label, Holders: map[string]string{}, Summary: rep.Summary,
		Matrix: rep.Matrix, Unsupported: len(rep.Unsupported), Notes: rep.Notes, Failures: []Failure{}}
	for _, g := range rep.Gateways {
		if g.Holder == "none" { // verify's word for an instance nobody holds
			g.Holder = ""
		}
		sc.Holders[g.Instance] = g.Holder
	}
	for j, f := range rep.Failures {
		fl := Failure{ID: fmt.Sprintf("s%d-f%d", i, j), Flow: f.Flow, Proto: f.Proto, Src: f.Src, Dst: f.Dst, Via: f.Via,
			Cause: f.Cause, Pairs: f.NodePairs, Path: []string{}}
		var b strings.Builder
		appendTrace := func(dir string, t *verify.Trace) {
			if t == nil {
				return
			}
			fmt.Fprintf(&b, "%s (%s)\n", dir, t.Disposition)
			for _, h := range t.Hops {
				fmt.Fprintf(&b, "  %s", h.Node)
				if h.In != "" {
					fmt.Fprintf(&b, " in %s", h.In)
				}
				fmt.Fprintf(&b, ": %s\n", h.Packet)
				for _, s := range h.Steps {
					fmt.Fprintf(&b, "    %s: %s\n", s.Action, s.Detail)
				}
				if len(fl.Path) == 0 || fl.Path[len(fl.Path)-1] != h.Node {
					fl.Path = append(fl.Path, h.Node)
				}
			}
			if t.Cause != "" {
				fmt.Fprintf(&b, "  => %s\n", t.Cause)
			}
		}
		appendTrace("forward", f.Forward)
		if f.Reply != nil && len(f.Reply.Hops) > 0 && f.Forward != nil && string(f.Forward.Disposition) == "delivered" {
			fl.Reply = true
		}
		appendTrace("reply", f.Reply)
		if len(fl.Path) > 0 {
			fl.BreakAt = fl.Path[len(fl.Path)-1]
		}
		if b.Len() == 0 {
			fmt.Fprintf(&b, "verify keeps full traces for the first %d failing flow classes of a run; trace this one with:\n  kubewin verify%s --flow %s %s --proto %s\n",
				verify.MaxTraces, scenarioFlag(r.Name), firstField(f.Src), firstField(f.Dst), f.Proto)
		}
		fl.Trace = b.String()
		sc.Failures = append(sc.Failures, fl)
	}
	return sc
}

// routing says how the other Linux nodes learn the way to Windows pod CIDRs.
func routing(p *plan.Plan) string {
	switch {
	case len(p.TorRoutes) > 0:
		return fmt.Sprintf("A ToR router holds the Windows gateways; %d static routes (cluster/tor-routes.txt)", len(p.TorRoutes))
	case len(p.GatewayGroups) > 0 && p.Calico != nil && p.Cluster.LinuxCNI == "calico":
		return "Calico BGP exports the VIP holder's connected route to each Windows pod CIDR; other Linux nodes route through the holder"
	case len(p.GatewayGroups) > 0:
		return "The kubewin route keeper installs a route to each Windows pod CIDR via its gateway group's router VIP"
	case p.Flannel != nil:
		return "flanneld programs routes (" + p.Cluster.Design + ")"
	}
	return "Static host-gw routes: every node routes every other node's pod CIDR via that node's IP"
}

func sevRank(s string) int {
	switch s {
	case "error":
		return 0
	case "warning":
		return 1
	}
	return 2
}

func firstField(s string) string {
	if f := strings.Fields(s); len(f) > 0 {
		return f[0]
	}
	return s
}

func scenarioFlag(name string) string {
	if name == "" || name == "normal" {
		return ""
	}
	return " --scenario " + name
}
