package verify

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
)

// Report is the outcome of a verification run.
type Report struct {
	Cluster     string       `json:"cluster"`
	Design      string       `json:"design"`
	LinuxCNI    string       `json:"linuxCNI"`
	Nodes       int          `json:"nodes"`
	NodeClasses int          `json:"nodeClasses"`
	PodClasses  int          `json:"podClasses"`
	Services    int          `json:"services"`
	Scenarios   []string     `json:"scenarios,omitempty"`
	Gateways    []GatewayVIP `json:"gateways,omitempty"`
	Summary     Summary      `json:"summary"`
	Matrix      []Row        `json:"matrix"`
	Failures    []FlowResult `json:"failures"`
	// Unsupported are flows a documented Windows limit rules out (not failures).
	Unsupported []FlowResult `json:"expectedUnsupported,omitempty"`
	// DuringFailover is the view while hosts' ARP entries still hold the MAC of a moved VIP's
	// former holder (nil when no scenario moved a VIP).
	DuringFailover *During  `json:"duringFailover,omitempty"`
	Notes          []string `json:"notes,omitempty"`
}

// GatewayVIP says who holds a VRRP instance.
type GatewayVIP struct {
	Group    string   `json:"group"`
	Instance string   `json:"instance"`
	VIPs     []string `json:"vips"`
	Holder   string   `json:"holder"`
	Why      string   `json:"why,omitempty"`
}

// Summary counts representative flows and the node pairs they stand for.
type Summary struct {
	Flows               int `json:"flows"`
	OK                  int `json:"ok"`
	Failed              int `json:"failed"`
	ExpectedUnsupported int `json:"expectedUnsupported"`
	NodePairs           int `json:"nodePairs"`
	FailedNodePairs     int `json:"failedNodePairs"`
}

// Row is one flow class and protocol of the matrix.
type Row struct {
	Flow         string              `json:"flow"`
	Proto        string              `json:"proto"`
	OK           int                 `json:"ok"`
	Failed       int                 `json:"failed"`
	Unsupported  int                 `json:"expectedUnsupported"`
	NodePairs    int                 `json:"nodePairs"`
	Dispositions map[Disposition]int `json:"dispositions"`
}

// Failed reports whether any expected flow failed.
func (r *Report) Failed() bool { return r.Summary.Failed > 0 }

func rowRank(flow string) int {
	best, rank := -1, len(kindNames)
	for i, k := range kindNames {
		if strings.HasPrefix(flow, k+" ") && len(k) > best {
			best, rank = len(k), i
		}
	}
	return rank
}

func protoRank(p string) int {
	switch p {
	case "tcp":
		return 0
	case "udp":
		return 1
	}
	return 2
}

// MaxTraces limits how many failing flows carry full traces.
const MaxTraces = 40

func (v *Verifier) report(specs []keyedSpec, results []FlowResult) *Report {
	m := v.m
	r := &Report{Cluster: m.Plan.Cluster.Name, Design: m.Design, LinuxCNI: m.Plan.Cluster.LinuxCNI,
		NodeClasses: len(v.ci.nodes), PodClasses: len(v.ci.pods), Services: len(m.Services), Scenarios: v.Scenarios}
	for _, n := range m.Nodes {
		if n.OS == osLinux || n.OS == osWindows {
			r.Nodes++
		}
	}
	for _, g := range m.Groups {
		for _, in := range g.Instances {
			gv := GatewayVIP{Group: g.Name, Instance: in.Name, Holder: holderName(in), Why: in.Origin}
			if in.Forced != "" {
				gv.Why = in.Forced
			}
			for _, a := range in.addrs() {
				gv.VIPs = append(gv.VIPs, a.String())
			}
			r.Gateways = append(r.Gateways, gv)
		}
	}
	rows := map[string]*Row{}
	var failIdx []int
	for i := range results {
		res := &results[i]
		key := res.Flow + "\x00" + res.Proto
		row := rows[key]
		if row == nil {
			row = &Row{Flow: res.Flow, Proto: res.Proto, Dispositions: map[Disposition]int{}}
			rows[key] = row
		}
		row.Dispositions[res.Disposition]++
		row.NodePairs += res.NodePairs
		r.Summary.Flows++
		r.Summary.NodePairs += res.NodePairs
		switch res.Verdict {
		case VerdictOK:
			row.OK++
			r.Summary.OK++
		case VerdictFail:
			row.Failed++
			r.Summary.Failed++
			r.Summary.FailedNodePairs += res.NodePairs
			failIdx = append(failIdx, i)
		case VerdictUnsupported:
			row.Unsupported++
			r.Summary.ExpectedUnsupported++
			res.fill()
			r.Unsupported = append(r.Unsupported, *res)
		}
	}
	for _, row := range rows {
		r.Matrix = append(r.Matrix, *row)
	}
	slices.SortFunc(r.Matrix, func(a, b Row) int {
		if x, y := rowRank(a.Flow), rowRank(b.Flow); x != y {
			return x - y
		}
		if a.Flow != b.Flow {
			return strings.Compare(a.Flow, b.Flow)
		}
		return protoRank(a.Proto) - protoRank(b.Proto)
	})
	slices.SortStableFunc(failIdx, func(a, b int) int {
		x, y := results[a], results[b]
		if p, q := rowRank(x.Flow), rowRank(y.Flow); p != q {
			return p - q
		}
		if x.Flow != y.Flow {
			return strings.Compare(x.Flow, y.Flow)
		}
		return protoRank(x.Proto) - protoRank(y.Proto)
	})
	for n, i := range failIdx {
		res := results[i]
		res.fill()
		if n < MaxTraces {
			res = v.traced(specs[i])
		}
		r.Failures = append(r.Failures, res)
	}
	if r.Failures == nil {
		r.Failures = []FlowResult{}
	}
	r.Notes = slices.Clone(m.Notes)
	return r
}

// WriteJSON writes the report as indented JSON.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(r)
}

// WriteText writes the matrix, then every failing flow with its traces.
func (r *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "kubewin verify: cluster %s, design %s, Linux CNI %s\n", r.Cluster, r.Design, r.LinuxCNI)
	fmt.Fprintf(&b, "%d nodes in %d classes (%d pod classes), %d services", r.Nodes, r.NodeClasses, r.PodClasses, r.Services)
	if len(r.Scenarios) > 0 {
		fmt.Fprintf(&b, "; scenario: %s", strings.Join(r.Scenarios, ", "))
	}
	b.WriteString("\n")
	for _, g := range r.Gateways {
		fmt.Fprintf(&b, "gateway %s/%s %s held by %s", g.Group, g.Instance, strings.Join(clipList(g.VIPs, 4), " "), g.Holder)
		if g.Why != "" {
			fmt.Fprintf(&b, " (%s)", g.Why)
		}
		b.WriteString("\n")
	}
	b.WriteString("\n")
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "FLOW\tPROTO\tOK\tFAIL\tUNSUPPORTED\tNODE PAIRS\tDISPOSITIONS")
	for _, row := range r.Matrix {
		var ds []string
		keys := make([]Disposition, 0, len(row.Dispositions))
		for d := range row.Dispositions {
			keys = append(keys, d)
		}
		slices.Sort(keys)
		for _, d := range keys {
			ds = append(ds, fmt.Sprintf("%s=%d", d, row.Dispositions[d]))
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t%s\n", row.Flow, row.Proto, row.OK, row.Failed, row.Unsupported, row.NodePairs, strings.Join(ds, " "))
	}
	tw.Flush()
	fmt.Fprintf(&b, "\n%d representative flows: %d ok, %d failed, %d expected-unsupported (standing for %d node pairs, %d failing)\n",
		r.Summary.Flows, r.Summary.OK, r.Summary.Failed, r.Summary.ExpectedUnsupported, r.Summary.NodePairs, r.Summary.FailedNodePairs)
	if len(r.Failures) > 0 {
		b.WriteString("\nFAILING FLOWS\n")
		for i, f := range r.Failures {
			writeFlow(&b, i+1, f)
		}
	}
	if len(r.Unsupported) > 0 {
		b.WriteString("\nEXPECTED UNSUPPORTED (documented Windows limits, not failures)\n")
		seen := map[string]bool{}
		for _, f := range r.Unsupported {
			k := f.Flow + " " + f.Proto
			if seen[k] {
				continue
			}
			seen[k] = true
			fmt.Fprintf(&b, "  %s %s: %s\n", f.Flow, f.Proto, strings.TrimSuffix(strings.TrimPrefix(f.Expected, "unsupported ("), ")"))
		}
	}
	if d := r.DuringFailover; d != nil {
		b.WriteString("\nDURING FAILOVER (hosts' ARP entries still hold the former holder's MAC)\n")
		for _, g := range d.Gateways {
			state := "keepalived stopped"
			if g.FromDown {
				state = "down"
			}
			fmt.Fprintf(&b, "  gateway %s/%s %s: %s (%s) -> %s\n    window: %s\n", g.Group, g.Instance, strings.Join(clipList(g.VIPs, 4), " "), g.From, state, g.To, g.Window)
		}
		if len(d.Flows) == 0 {
			b.WriteString("  every flow class has its steady-state verdict in the window\n")
		} else {
			fmt.Fprintf(&b, "  %d flow classes have another verdict in the window than in the steady state:\n", len(d.Flows))
			for _, f := range d.Flows {
				fmt.Fprintf(&b, "    %s %s: %s -> %s", f.Flow, f.Proto, f.Src, f.Dst)
				if f.Via != "" {
					fmt.Fprintf(&b, " via %s", f.Via)
				}
				fmt.Fprintf(&b, ": steady %s, during %s", f.Steady, f.During)
				if f.Cause != "" {
					fmt.Fprintf(&b, " (%s)", f.Cause)
				}
				b.WriteString("\n")
			}
		}
	}
	if len(r.Notes) > 0 {
		b.WriteString("\nNOTES\n")
		for _, n := range r.Notes {
			fmt.Fprintf(&b, "  %s\n", n)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func writeFlow(b *strings.Builder, i int, f FlowResult) {
	fmt.Fprintf(b, "\n[%d] %s %s: %s -> %s", i, f.Flow, f.Proto, f.Src, f.Dst)
	if f.Via != "" {
		fmt.Fprintf(b, " via %s", f.Via)
	}
	if f.NodePairs > 1 {
		fmt.Fprintf(b, "  (stands for %d node pairs)", f.NodePairs)
	}
	if f.Cause != "" {
		fmt.Fprintf(b, "\n    %s: %s\n", f.Disposition, f.Cause)
	} else {
		fmt.Fprintf(b, "\n    %s\n", f.Disposition)
	}
	for _, n := range f.Notes {
		fmt.Fprintf(b, "    note: %s\n", n)
	}
	if f.Forward != nil {
		b.WriteString("    forward:\n")
		b.WriteString(f.Forward.Text("      "))
	}
	if f.Reply != nil && len(f.Reply.Hops) > 0 {
		b.WriteString("    reply:\n")
		b.WriteString(f.Reply.Text("      "))
	}
}

// WriteFlowText renders single-flow results (kubewin verify --flow).
func WriteFlowText(w io.Writer, rs []FlowResult) error {
	var b strings.Builder
	for i, f := range rs {
		writeFlow(&b, i+1, f)
		fmt.Fprintf(&b, "    verdict: %s (expected: %s)\n", f.Verdict, f.Expected)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteFlowJSON renders single-flow results as JSON.
func WriteFlowJSON(w io.Writer, rs []FlowResult) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(map[string]any{"flows": rs})
}
