// Package nodecheck runs live flow checks from a node, from a real pod network address: it adds
// a probe network namespace to the node's pod network with the node's own CNI configuration
// (libcni, as the container runtime does for a pod), probes from inside it, and removes it. The
// results use verify's vocabulary (flow kinds, ok/FAIL) so a live failure points at the hop
// verify models. On Windows the probes are sent from the host endpoint's pod network address
// (RunFrom): the path through the node's HNS network and kube-proxy's load balancers, though not
// through a pod's own compartment — a probe in an HNS endpoint of its own is not written yet.
package nodecheck

import (
	"context"
	"fmt"
	"net/netip"
	"time"

	"github.com/kubewin/kubewin/internal/plan"
	"github.com/kubewin/kubewin/internal/verify"
)

// Result is one probe.
type Result struct {
	// Flow is verify's flow kind ("pod→node own node", "pod→service").
	Flow string `json:"flow"`
	// Target says what was probed ("pod CIDR gateway 10.244.0.1", "Service kubernetes 10.96.0.1:443").
	Target  string `json:"target"`
	Verdict string `json:"verdict"` // verify.VerdictOK or verify.VerdictFail
	Detail  string `json:"detail,omitempty"`
	// Millis is how long the probe took.
	Millis int64 `json:"ms"`
}

// Report is a check run.
type Report struct {
	Node string `json:"node"`
	// Source is the probe's pod network address.
	Source  string   `json:"source"`
	Results []Result `json:"results"`
}

// Failed reports whether a probe failed.
func (r *Report) Failed() bool {
	for _, x := range r.Results {
		if x.Verdict != verify.VerdictOK {
			return true
		}
	}
	return false
}

// probe is one check to run from inside the probe namespace.
type probe struct {
	kind   verify.FlowKind
	target string
	run    func(ctx context.Context) (string, error)
}

// probes are the checks for a node: the pod CIDR's gateway answers (ICMP), the node's own IP
// answers from a pod (the kubelet's port), the kubernetes Service's ClusterIP completes a TLS
// handshake (kube-proxy's rules and the API server behind them), and the cluster DNS Service
// answers for kubernetes.default.
func probes(p *plan.Plan, n plan.NodePlan, timeout time.Duration, source string) ([]probe, error) {
	pod, err := netip.ParsePrefix(n.PodCIDR)
	if err != nil {
		return nil, fmt.Errorf("pod CIDR %q: %w", n.PodCIDR, err)
	}
	gw := pod.Masked().Addr().Next()
	if n.Gateway != "" {
		if a, err := netip.ParseAddr(n.Gateway); err == nil {
			gw = a
		}
	}
	svc, err := netip.ParsePrefix(p.Networking.ServiceCIDR)
	if err != nil {
		return nil, fmt.Errorf("service CIDR %q: %w", p.Networking.ServiceCIDR, err)
	}
	apiVIP := svc.Masked().Addr().Next()
	dns := p.Networking.ClusterDNS
	name := "kubernetes.default.svc." + p.Networking.ClusterDomain + "."
	return []probe{
		{verify.KindPodNodeLocal, "pod CIDR gateway " + gw.String(), func(ctx context.Context) (string, error) {
			return pingICMP(ctx, gw.String(), timeout, source)
		}},
		{verify.KindPodNodeLocal, "node IP " + n.NodeIP + ":10250 (kubelet)", func(ctx context.Context) (string, error) {
			return dialTCP(ctx, n.NodeIP+":10250", timeout, source)
		}},
		{verify.KindPodService, "Service default/kubernetes " + apiVIP.String() + ":443 (TLS)", func(ctx context.Context) (string, error) {
			return tlsHandshake(ctx, apiVIP.String()+":443", timeout, source)
		}},
		{verify.KindPodService, "cluster DNS " + dns + ":53 for " + name, func(ctx context.Context) (string, error) {
			return queryDNS(ctx, dns+":53", name, timeout, source)
		}},
	}, nil
}

// RunFrom runs the probes from source, an address of this host inside the node's pod network
// (a Windows node's host endpoint, .2 of its pod CIDR), instead of from a probe namespace.
func RunFrom(ctx context.Context, p *plan.Plan, n plan.NodePlan, timeout time.Duration, source string) (*Report, error) {
	ps, err := probes(p, n, timeout, source)
	if err != nil {
		return nil, err
	}
	rep := &Report{Node: n.Name, Source: source}
	for _, pr := range ps {
		rep.Results = append(rep.Results, result(pr, func() (string, error) { return pr.run(ctx) }))
	}
	return rep, nil
}

// result runs one probe through run (in the probe namespace, or as it is) and times it.
func result(pr probe, run func() (string, error)) Result {
	began := time.Now()
	detail, err := run()
	r := Result{Flow: pr.kind.String(), Target: pr.target, Verdict: verify.VerdictOK, Detail: detail, Millis: time.Since(began).Milliseconds()}
	if err != nil {
		r.Verdict, r.Detail = verify.VerdictFail, err.Error()
	}
	return r
}
