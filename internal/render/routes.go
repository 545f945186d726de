package render

import (
	"bytes"
	"fmt"
	"net/netip"
	"text/tabwriter"

	"github.com/kubewin/kubewin/internal/plan"
)

type torRouteTable struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Cluster    string `json:"cluster"`
	Design     string `json:"design"`
	// GatewayAddresses are addresses the router itself must hold (design upstream-tor/router).
	GatewayAddresses []string     `json:"gatewayAddresses"`
	Routes           []plan.Route `json:"routes"`
}

// TorRoutesJSON renders cluster/tor-routes.json.
func TorRoutesJSON(p *plan.Plan) ([]byte, error) {
	if err := checkRoutes(p.TorRoutes); err != nil {
		return nil, fmt.Errorf("render ToR routes: %w", err)
	}
	t := torRouteTable{
		APIVersion: plan.APIVersion, Kind: "TorRouteTable", Cluster: p.Cluster.Name, Design: p.Cluster.Design,
		GatewayAddresses: p.TorGatewayAddresses, Routes: p.TorRoutes,
	}
	if t.GatewayAddresses == nil {
		t.GatewayAddresses = []string{}
	}
	if t.Routes == nil {
		t.Routes = []plan.Route{}
	}
	return jsonIndent(t)
}

// TorRoutesText renders cluster/tor-routes.txt: the same table for people and router configs.
func TorRoutesText(p *plan.Plan) ([]byte, error) {
	if err := checkRoutes(p.TorRoutes); err != nil {
		return nil, fmt.Errorf("render ToR routes: %w", err)
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "# Static routes for the router(s) of the cluster network of %s (design %s).\n# %s\n", p.Cluster.Name, p.Cluster.Design, generatedBy)
	if len(p.TorGatewayAddresses) > 0 {
		b.WriteString("#\n# Addresses the router holds itself (pod-CIDR gateways):\n")
		for _, a := range p.TorGatewayAddresses {
			fmt.Fprintf(&b, "#   %s\n", a)
		}
	}
	if len(p.TorRoutes) == 0 {
		b.WriteString("#\n# This design needs no static routes on the router.\n")
		return b.Bytes(), nil
	}
	b.WriteString("\n")
	tw := tabwriter.NewWriter(&b, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "# destination\tnext hop\tdevice\treason")
	for _, r := range p.TorRoutes {
		dev := r.Dev
		if dev == "" {
			dev = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.Destination, r.Via, dev, sanitizeComment(r.Reason))
	}
	if err := tw.Flush(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func checkRoutes(rs []plan.Route) error {
	for _, r := range rs {
		if _, err := netip.ParsePrefix(r.Destination); err != nil {
			return fmt.Errorf("route destination %q: %w", r.Destination, err)
		}
		if _, err := netip.ParseAddr(r.Via); err != nil {
			return fmt.Errorf("route %s next hop %q: %w", r.Destination, r.Via, err)
		}
	}
	return nil
}
