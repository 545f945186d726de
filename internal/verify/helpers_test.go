package verify

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/kubewin/kubewin/internal/plan"
	"github.com/kubewin/kubewin/pkg/api/v1alpha1"
)

// example returns the embedded example spec and its real plan, with two stated differences
// that most tests need so that they test what they name: the network beyond the default
// gateways routes the cluster subnet back (networking.upstreamRoutes; seed 000's office network
// does not — TestUpstreamRoutesDefault covers that), and no "all" rp_filter (issue 11 moves
// the gateway members' loose mode to the interface; TestFelixLooseRPF covers "all").
func example(t testing.TB) (*v1alpha1.Cluster, *plan.Plan) {
	t.Helper()
	c, p := exampleAsIs(t)
	routedUpstream(c, p)
	return c, p
}

// routedUpstream applies example's two stated differences to any spec and its plan: every
// node subnet is routed back by the upstream network, and no "all" rp_filter.
func routedUpstream(c *v1alpha1.Cluster, p *plan.Plan) {
	c.Spec.Networking.UpstreamRoutes = append([]string(nil), p.Networking.NodeSubnets...)
	for _, n := range c.Spec.Nodes {
		for _, nic := range n.NICs {
			if nic.Gateway != "" {
				if pr, err := netip.ParsePrefix(fmt.Sprintf("%s/%d", nic.IP, nic.Prefix)); err == nil {
					c.Spec.Networking.UpstreamRoutes = append(c.Spec.Networking.UpstreamRoutes, pr.Masked().String())
				}
			}
		}
	}
	slices.Sort(c.Spec.Networking.UpstreamRoutes)
	c.Spec.Networking.UpstreamRoutes = slices.Compact(c.Spec.Networking.UpstreamRoutes)
	for i := range p.Nodes {
		if l := p.Nodes[i].Linux; l != nil && l.Sysctls["net.ipv4.conf.all.rp_filter"] != "" {
			sc := map[string]string{}
			for k, v := range l.Sysctls {
				if k != "net.ipv4.conf.all.rp_filter" {
					sc[k] = v
				}
			}
			lc := *l
			lc.Sysctls = sc
			p.Nodes[i].Linux = &lc
		}
	}
}

// exampleAsIs is the embedded example and its plan, unchanged.
func exampleAsIs(t testing.TB) (*v1alpha1.Cluster, *plan.Plan) {
	t.Helper()
	c, _, err := v1alpha1.ParseExample()
	if err != nil {
		t.Fatalf("parse example: %v", err)
	}
	p, err := plan.New(c)
	if err != nil {
		t.Fatalf("plan example: %v", err)
	}
	return c, p
}

func build(t testing.TB, c *v1alpha1.Cluster, p *plan.Plan, ds *DumpSet) *Model {
	t.Helper()
	m, err := Build(Input{Plan: p, Spec: c, Dumps: ds})
	if err != nil {
		t.Fatalf("build model: %v", err)
	}
	return m
}

func run(t testing.TB, m *Model) *Report {
	t.Helper()
	return NewVerifier(m, false).Run()
}

// dumpSet parses NODE=testdata-relative-path dumps.
func dumpSet(t testing.TB, specs ...string) *DumpSet {
	t.Helper()
	if len(specs) == 0 {
		return nil
	}
	ds := &DumpSet{}
	for _, s := range specs {
		node, rel, _ := strings.Cut(s, "=")
		f, err := ParseDump(node, rel, readTestdata(t, rel))
		if err != nil {
			t.Fatalf("dump %s: %v", s, err)
		}
		ds.Files = append(ds.Files, f)
	}
	return ds
}

func errorsAs(err error, target any) bool { return errors.As(err, target) }
