//go:build windows

package nodecheck

import (
	"context"
	"fmt"
	"runtime"
	"time"

	"github.com/Microsoft/hcsshim"
	"github.com/Microsoft/hcsshim/hcn"

	"github.com/kubewin/kubewin/internal/plan"
	"github.com/kubewin/kubewin/internal/render"
)

// Run probes from a real pod's network compartment on the pod network (the check pod join
// starts, or any pod there): sockets this thread creates while it is switched into the pod's
// compartment (SetCurrentThreadCompartmentId, iphlpapi; hcsshim exports it) send as the pod
// does, through its gateway — the host endpoint — and so through the host's forwarding, which
// probes from the host endpoint itself would not exercise. The compartment is the pod
// endpoint's HNS namespace's NamespaceId (hcsshim v0.15.0 hcn/hcnnamespace.go: "a namespace (AKA
// compartment)"); that NamespaceId is the compartment ID SetCurrentThreadCompartmentId takes is a
// question only a Windows host answers (CONTRIBUTING.md). Without a pod endpoint the
// probes go from the host endpoint (.2), and the report says that forwarding was not exercised.
// Compiled and vetted for Windows only; RunFrom's logic is tested on Linux.
func Run(ctx context.Context, paths render.NodePaths, p *plan.Plan, n plan.NodePlan, timeout time.Duration) (*Report, error) {
	w := n.Windows
	if w == nil || w.HostEndpointIP == "" {
		return nil, fmt.Errorf("node %s has no host endpoint in its plan", n.Name)
	}
	compartment, podIP, why := podCompartment(w)
	if compartment == 0 {
		rep, err := RunFrom(ctx, p, n, timeout, w.HostEndpointIP)
		if rep != nil {
			rep.Source += " (the host endpoint: " + why + "; the host's forwarding is not exercised)"
		}
		return rep, err
	}
	ps, err := probes(p, n, timeout, "")
	if err != nil {
		return nil, err
	}
	if _, err := inCompartment(compartment, func() (string, error) { return "", nil }); err != nil {
		// A pod that went away with its compartment: the host endpoint says more than nothing.
		rep, rerr := RunFrom(ctx, p, n, timeout, w.HostEndpointIP)
		if rep != nil {
			rep.Source += " (the host endpoint: " + err.Error() + "; the host's forwarding is not exercised)"
		}
		return rep, rerr
	}
	rep := &Report{Node: n.Name, Source: fmt.Sprintf("%s (compartment %d of a pod)", podIP, compartment)}
	for _, pr := range ps {
		rep.Results = append(rep.Results, result(pr, func() (string, error) {
			return inCompartment(compartment, func() (string, error) { return pr.run(ctx) })
		}))
	}
	return rep, nil
}

// podCompartment finds a pod endpoint on the node's pod network (not the host endpoint) and the
// compartment of its namespace; 0 and why when there is none.
func podCompartment(w *plan.WindowsNodePlan) (uint32, string, string) {
	network, err := hcn.GetNetworkByName(w.HNSNetworkName)
	if err != nil {
		return 0, "", "HNS network " + w.HNSNetworkName + ": " + err.Error()
	}
	eps, err := hcn.ListEndpointsOfNetwork(network.Id)
	if err != nil {
		return 0, "", "endpoints of " + w.HNSNetworkName + ": " + err.Error()
	}
	for _, e := range eps {
		if e.HostComputeNamespace == "" || len(e.IpConfigurations) == 0 || e.IpConfigurations[0].IpAddress == w.HostEndpointIP {
			continue
		}
		ns, err := hcn.GetNamespaceByID(e.HostComputeNamespace)
		// Only a process-isolated pod's namespace is a compartment of this host: a Hyper-V
		// isolated pod's is a Guest namespace inside its utility VM (hcn.NamespaceTypeGuest).
		if err != nil || ns.NamespaceId == 0 || ns.Type != hcn.NamespaceTypeHost {
			continue
		}
		return ns.NamespaceId, e.IpConfigurations[0].IpAddress, ""
	}
	return 0, "", "no pod endpoint on " + w.HNSNetworkName
}

// inCompartment runs f on a locked OS thread switched into compartment id, then switches the
// thread back to the host's default compartment (1). A thread that cannot be switched back stays
// locked, so the Go runtime discards it with the goroutine.
func inCompartment(id uint32, f func() (string, error)) (string, error) {
	runtime.LockOSThread()
	if err := hcsshim.SetCurrentThreadCompartmentId(id); err != nil {
		runtime.UnlockOSThread()
		return "", fmt.Errorf("enter compartment %d: %w", id, err)
	}
	out, ferr := f()
	if err := hcsshim.SetCurrentThreadCompartmentId(1); err != nil {
		return out, fmt.Errorf("leave compartment %d: %w (probe: %v)", id, err, ferr)
	}
	runtime.UnlockOSThread()
	return out, ferr
}
