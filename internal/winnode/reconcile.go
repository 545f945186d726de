package winnode

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strings"
	"time"
)

// Defaults of a Reconciler.
const (
	DefaultPassTimeout = 2 * time.Minute
	DefaultRetryMin    = 2 * time.Second
	DefaultMaxBackoff  = 2 * time.Minute
)

// Repair is one change a pass made to the host.
type Repair struct {
	What string
	Why  string
}

// Report is the outcome of one pass.
type Report struct {
	Pass    int
	Repairs []Repair
	Healthy bool
	// Problems say why the node is unhealthy, in the order they were found.
	Problems []string
	// HNSProcessID and LoadBalancers are what the pass observed.
	HNSProcessID  uint32
	LoadBalancers int
	// CNINetworkReady and CNIProblem: on a node whose network a CNI pod owns
	// (Desired.CNINetwork), whether it exists, and else (or when its pod fails) why.
	CNINetworkReady bool
	CNIProblem      string
}

// Reason is the unhealthy reason as one line ("" when healthy).
func (r Report) Reason() string { return strings.Join(r.Problems, "; ") }

func (r *Report) repair(what, why string) {
	r.Repairs = append(r.Repairs, Repair{What: what, Why: why})
}

func (r *Report) problem(format string, args ...any) {
	r.Problems = append(r.Problems, fmt.Sprintf(format, args...))
}

// Reconciler keeps a Windows node in its Desired state, one bounded pass at a time. It keeps
// what it learned in earlier passes (the HNS process ID, when it last started kube-proxy), so
// one Reconciler serves one node; it is not safe for concurrent passes.
type Reconciler struct {
	Host    Host
	Desired Desired
	// ExpectedLoadBalancers says how many load balancers kube-proxy should have programmed
	// (for example the Services with endpoints it serves). When it is above zero and HNS has
	// none, kube-proxy lost them and is restarted. Nil disables the check.
	ExpectedLoadBalancers func(ctx context.Context) (int, error)
	// PassTimeout bounds one pass (DefaultPassTimeout when zero).
	PassTimeout time.Duration
	// RetryMin is the first delay after a failed pass and MaxBackoff the longest one
	// (DefaultRetryMin, DefaultMaxBackoff when zero).
	RetryMin, MaxBackoff time.Duration
	// OnReport, when set, receives the report of every pass of Loop.
	OnReport func(Report)
	// Preserved are the routes of Desired.PreserveRoutes found on the cluster adapter before
	// the vSwitch was created; they are kept on its vNIC from then on. The caller keeps them
	// across restarts of the node service (OnPreserve) and hands them back here.
	Preserved []HostRoute
	// OnPreserve, when set, is called when Preserved changed.
	OnPreserve func([]HostRoute)
	// CNIDiagnosis, when set, says why the CNI pod of Desired.CNINetwork fails ("" when it
	// runs); its answer joins the pass's problem about that network (hostprocess.go).
	CNIDiagnosis func(ctx context.Context) string

	pass       int
	lastHNSPID uint32
	// proxyStartPass is the pass in which this Reconciler last started or restarted kube-proxy:
	// a kube-proxy that has just started has not synced yet, so zero load balancers do not mean
	// that it lost them.
	proxyStartPass int
	// pendingProxyRestart is why kube-proxy must be restarted, kept until a restart succeeds
	// (an HNS restart is seen only once, in the pass that finds the new process ID).
	pendingProxyRestart string
	// sleep waits between passes of Loop; tests replace it to record the delays.
	sleep func(ctx context.Context, d time.Duration) error
}

// passState is what one pass learns on its way.
type passState struct {
	ctx context.Context
	rep *Report
	// networksReady: every network of Desired.Networks (and the host endpoint) is in place.
	networksReady bool
	// recreated names networks deleted and created again in this pass.
	recreated map[string]bool
	// proxyWasRunning: kube-proxy ran at the start of the pass.
	proxyWasRunning bool
	hnsRestarted    bool
	// adapters is the pass's listing of the host's interfaces (listed again after a change).
	adapters []Adapter
	// adapter is the cluster adapter's name (never a vNIC's).
	adapter string
}

// Reconcile makes one pass: the cluster adapter by MAC, the HNS networks on it, the host
// endpoint, the host routes, the services in order, and kube-proxy restarted after HNS lost its load balancers.
// It returns an error only when the pass was cut short (its deadline or ctx ended); a pass
// that completed reports the node's health in the Report.
func (r *Reconciler) Reconcile(ctx context.Context) (Report, error) {
	timeout := r.PassTimeout
	if timeout <= 0 {
		timeout = DefaultPassTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	r.pass++
	rep := Report{Pass: r.pass}
	st := &passState{ctx: ctx, rep: &rep, recreated: map[string]bool{}}

	r.observeHNS(st)
	if err := ctx.Err(); err != nil {
		return r.aborted(rep, err)
	}
	if s, err := r.Host.ServiceStatus(ctx, r.Desired.KubeProxy); err == nil && s.State == ServiceRunning {
		st.proxyWasRunning = true
	}
	if r.Desired.CNINetwork != nil {
		// The CNI's pod owns the network: watched, never made (hostprocess.go).
		r.watchCNINetwork(st)
		st.networksReady = true
	} else {
		r.ensureNetworks(st)
	}
	if err := ctx.Err(); err != nil {
		return r.aborted(rep, err)
	}
	r.ensureRoutes(st)
	if err := ctx.Err(); err != nil {
		return r.aborted(rep, err)
	}
	r.ensureServices(st)
	if err := ctx.Err(); err != nil {
		return r.aborted(rep, err)
	}
	if r.Desired.KubeProxy != "" {
		r.ensureKubeProxyPrograms(st)
	}
	if err := ctx.Err(); err != nil {
		return r.aborted(rep, err)
	}
	rep.Healthy = len(rep.Problems) == 0
	return rep, nil
}

func (r *Reconciler) aborted(rep Report, err error) (Report, error) {
	rep.problem("pass %d cut short: %v", rep.Pass, err)
	rep.Healthy = false
	return rep, fmt.Errorf("winnode pass %d on %s: %w", rep.Pass, r.Desired.Node, err)
}

// observeHNS starts the system services of Desired (hns) when they are stopped (hns's start
// type may be Manual, and after a boot it then stays stopped until something starts it:
// Siemens-Healthineers/K2s issue 593), then reads the HNS process ID; a change since the last pass means HNS restarted.
func (r *Reconciler) observeHNS(st *passState) {
	for _, name := range r.Desired.SystemServices {
		s, err := r.Host.ServiceStatus(st.ctx, name)
		if err != nil || s.State != ServiceStopped {
			continue // not installed: reported below (hns) or by the service that needs it
		}
		if err := r.Host.StartService(st.ctx, name); err != nil {
			st.rep.problem("service %s is stopped and does not start: %v", name, err)
			continue
		}
		st.rep.repair("started service "+name, "it was stopped (its start type may be Manual: nothing starts it after a boot)")
	}
	pid, err := r.Host.HNSProcessID(st.ctx)
	if err != nil {
		st.rep.problem("HNS service: %v", err)
		return
	}
	st.rep.HNSProcessID = pid
	if r.lastHNSPID != 0 && pid != r.lastHNSPID {
		st.hnsRestarted = true
	}
	r.lastHNSPID = pid
}

// ensureNetworks finds the cluster adapter by MAC and makes every network of Desired exist
// with the right subnet on it, then the host endpoint and forwarding.
func (r *Reconciler) ensureNetworks(st *passState) {
	ctx, rep, d := st.ctx, st.rep, r.Desired
	if !r.listAdapters(st) {
		return
	}
	networks, err := r.Host.ListNetworks(ctx)
	if err != nil {
		rep.problem("list HNS networks: %v", err)
		return
	}
	adapter, why := r.clusterAdapter(st.adapters, networks)
	if adapter == "" {
		rep.problem("%s", why)
		return
	}
	st.adapter = adapter
	for _, spec := range d.Networks {
		spec.AdapterName = adapter
		have := networkNamed(networks, spec.Name)
		why := "missing (HNS networks do not survive a reboot)"
		if have != nil {
			diff := networkDiff(*have, spec)
			if diff == "" {
				continue
			}
			why = diff
			if err := r.deleteNetwork(ctx, *have); err != nil {
				rep.problem("HNS network %s is wrong (%s) and could not be removed: %v", spec.Name, diff, err)
				return
			}
			st.recreated[spec.Name] = true
		}
		if clusterVSwitch(st.adapters, d.AdapterMAC) == nil {
			r.preserveRoutes(st)
		}
		created, err := r.Host.CreateNetwork(ctx, spec)
		if err != nil {
			rep.problem("create HNS network %s (%s %s on adapter %s): %v", spec.Name, spec.Type, spec.Prefix, spec.AdapterName, err)
			return
		}
		networks = append(removeNetwork(networks, spec.Name), created)
		rep.repair(fmt.Sprintf("created HNS network %s (%s %s, gateway %s) on adapter %s", spec.Name, spec.Type, spec.Prefix, spec.Gateway, spec.AdapterName), why)
		// The vSwitch moved the adapter's addresses to a new vNIC.
		if !r.listAdapters(st) {
			return
		}
	}
	if d.HostEndpoint != nil && !r.ensureHostEndpoint(st, networks) {
		return
	}
	r.ensureForwarding(st)
	st.networksReady = true
}

// listAdapters lists the host's interfaces into the pass state.
func (r *Reconciler) listAdapters(st *passState) bool {
	adapters, err := r.Host.Adapters(st.ctx)
	if err != nil {
		st.rep.problem("list network adapters: %v", err)
		return false
	}
	st.adapters = adapters
	return true
}

// clusterAdapter is the name of the adapter the networks bind to, or "" and why not. It is
// never a vNIC's name (HNS refuses one: Azure azure-container-networking
// network/network_windows.go): the adapter with the cluster MAC that is not a vNIC, listed
// also when bound to a vSwitch (Bound); where the listing leaves bound NICs out, the adapter
// an existing network of Desired names (the vSwitch is reused), else the name inside the
// vSwitch vNIC's "vEthernet (<adapter>)".
func (r *Reconciler) clusterAdapter(adapters []Adapter, networks []Network) (string, string) {
	d := r.Desired
	// More than one non-virtual adapter can carry the MAC: on Azure with accelerated networking
	// the SR-IOV virtual function shares the synthetic NIC's MAC and has no IP of its own
	// (learn.microsoft.com/azure/virtual-network/accelerated-networking-how-it-works). The planned
	// name wins, then an adapter with an address or bound to a vSwitch, then the first.
	planned := ""
	if len(d.Networks) > 0 {
		planned = d.Networks[0].AdapterName
	}
	best, bestRank := "", 0
	for _, a := range adapters {
		if !sameMAC(a.MAC, d.AdapterMAC) || a.Virtual || isVNICName(a.Name) {
			continue
		}
		rank := 1
		switch {
		case planned != "" && strings.EqualFold(a.Name, planned):
			rank = 3
		case len(a.IPv4) > 0 || a.Bound:
			rank = 2
		}
		if rank > bestRank {
			best, bestRank = a.Name, rank
		}
	}
	if best != "" {
		return best, ""
	}
	for _, spec := range d.Networks {
		if n := networkNamed(networks, spec.Name); n != nil && n.AdapterName != "" && !isVNICName(n.AdapterName) {
			return n.AdapterName, ""
		}
	}
	if v := clusterVSwitch(adapters, d.AdapterMAC); v != nil {
		if inner := vnicInner(v.Name); inner != "" {
			return inner, ""
		}
	}
	return "", fmt.Sprintf("no network adapter with MAC %s (the cluster NIC of %s)", d.AdapterMAC, d.Node)
}

// clusterVSwitch is the vSwitch's host vNIC on the cluster adapter: the virtual interface with
// its MAC (nil before a vSwitch is bound to it).
func clusterVSwitch(adapters []Adapter, mac string) *Adapter {
	for i := range adapters {
		a := &adapters[i]
		if sameMAC(a.MAC, mac) && (a.Virtual || isVNICName(a.Name)) {
			return a
		}
	}
	return nil
}

// preserveRoutes remembers the routes of Desired.PreserveRoutes that leave through the cluster
// adapter, right before a network binds a vSwitch to it and HNS drops them.
func (r *Reconciler) preserveRoutes(st *passState) {
	if len(r.Desired.PreserveRoutes) == 0 {
		return
	}
	routes, err := r.Host.Routes(st.ctx)
	if err != nil {
		st.rep.problem("list host routes: %v", err)
		return
	}
	changed := false
	for _, rt := range routes {
		if !strings.EqualFold(rt.InterfaceAlias, st.adapter) {
			continue
		}
		if !slices.ContainsFunc(r.Desired.PreserveRoutes, func(p string) bool { return samePrefix(p, rt.DestinationPrefix) }) {
			continue
		}
		if slices.ContainsFunc(r.Preserved, func(p HostRoute) bool { return sameRoute(p, rt) }) {
			continue
		}
		r.Preserved = append(r.Preserved, HostRoute{DestinationPrefix: rt.DestinationPrefix, NextHop: rt.NextHop})
		changed = true
	}
	if changed && r.OnPreserve != nil {
		r.OnPreserve(slices.Clone(r.Preserved))
	}
}

// ensureForwarding enables IPv4 forwarding on the interfaces of Desired.Forwarding.
func (r *Reconciler) ensureForwarding(st *passState) {
	for _, role := range r.Desired.Forwarding {
		a := r.roleInterface(st, role)
		if a == nil {
			st.rep.problem("forwarding on the %s interface: no such interface on the host", role)
			continue
		}
		if a.Forwarding {
			continue
		}
		if err := r.Host.SetForwarding(st.ctx, a.Name); err != nil {
			st.rep.problem("enable forwarding on %s: %v", a.Name, err)
			continue
		}
		a.Forwarding = true
		st.rep.repair("enabled IPv4 forwarding on "+a.Name, "pods use the host endpoint (.2) as their gateway: the host forwards their traffic (win-bridge with IPAM)")
	}
}

// roleInterface finds an interface by role in the pass's listing (nil when there is none).
func (r *Reconciler) roleInterface(st *passState, role InterfaceRole) *Adapter {
	switch role {
	case RoleHostEndpoint:
		if r.Desired.HostEndpoint == nil {
			return nil
		}
		ip := r.Desired.HostEndpoint.IP
		for i := range st.adapters {
			if slices.Contains(st.adapters[i].IPv4, ip) {
				return &st.adapters[i]
			}
		}
	case RoleClusterVSwitch:
		return clusterVSwitch(st.adapters, r.Desired.AdapterMAC)
	}
	return nil
}

func (r *Reconciler) deleteNetwork(ctx context.Context, n Network) error {
	eps, err := r.Host.ListEndpoints(ctx)
	if err != nil {
		return err
	}
	for _, e := range eps {
		if e.NetworkID == n.ID {
			if err := r.Host.DeleteEndpoint(ctx, e.ID); err != nil {
				return fmt.Errorf("delete endpoint %s: %w", e.Name, err)
			}
		}
	}
	return r.Host.DeleteNetwork(ctx, n.ID)
}

func (r *Reconciler) ensureHostEndpoint(st *passState, networks []Network) bool {
	ctx, rep, spec := st.ctx, st.rep, *r.Desired.HostEndpoint
	network := networkNamed(networks, spec.Network)
	if network == nil {
		rep.problem("host endpoint %s: HNS network %s does not exist", spec.Name, spec.Network)
		return false
	}
	eps, err := r.Host.ListEndpoints(ctx)
	if err != nil {
		rep.problem("list HNS endpoints: %v", err)
		return false
	}
	var have *Endpoint
	for i := range eps {
		e := eps[i]
		if e.Name != spec.Name {
			continue
		}
		if e.NetworkID == network.ID && e.IP == spec.IP && e.PrefixLength == spec.PrefixLength {
			have = &eps[i]
			continue
		}
		// An endpoint of that name on another network or with another address is a leftover
		// that would make the new one ambiguous to hns.psm1 and to the operator.
		if err := r.Host.DeleteEndpoint(ctx, e.ID); err != nil {
			rep.problem("remove stale host endpoint %s (%s): %v", e.Name, e.IP, err)
			return false
		}
		rep.repair("removed stale host endpoint "+e.Name+" ("+e.IP+")", "it is not the planned "+spec.IP+" on network "+spec.Network)
	}
	if have == nil {
		created, err := r.Host.CreateEndpoint(ctx, network.ID, spec)
		if err != nil {
			rep.problem("create host endpoint %s (%s) on %s: %v", spec.Name, spec.IP, spec.Network, err)
			return false
		}
		have = &created
		rep.repair(fmt.Sprintf("created host endpoint %s (%s/%d) on %s", spec.Name, spec.IP, spec.PrefixLength, spec.Network), "missing")
	}
	if !have.HostAttached {
		if err := r.Host.AttachHostEndpoint(ctx, have.ID); err != nil {
			rep.problem("attach host endpoint %s to the host compartment: %v", spec.Name, err)
			return false
		}
		rep.repair("attached host endpoint "+spec.Name+" to the host compartment", "pods use it (.2) as their gateway")
		// The attachment created the endpoint's vNIC.
		if !r.listAdapters(st) {
			return false
		}
	}
	return true
}

// ensureRoutes adds the host routes of Desired that the host does not have, removes routes to
// the same destinations that leave elsewhere (a stale route from an earlier pod CIDR or
// gateway would take the traffic), and keeps the preserved routes on the vSwitch's vNIC. It
// runs once the networks and the host endpoint are in place: the upstream-ToR routes leave
// through the host endpoint's vNIC, which exists only then, and the vSwitch that the first
// network creates moves the cluster adapter's address to its vNIC, through which the host-gw
// routes leave. Routes are in the active store only, so they are gone after every reboot, and
// the routes on the host endpoint's vNIC go with it whenever the endpoint or its network is
// re-created; this finds them missing and adds them again.
//
// A missing route makes the pass unhealthy, but the services stay gated on the networks only:
// without the routes the host cannot forward its pods' traffic to other nodes, but the kubelet,
// the node's own pods and kube-proxy work, and holding the kubelet back would take the whole
// node out (NotReady) for a fault that cuts only cross-node pod traffic. The problem is
// reported, and the next pass, sooner after a failed one, tries the route again.
func (r *Reconciler) ensureRoutes(st *passState) {
	ctx, rep, d := st.ctx, st.rep, r.Desired
	if (len(d.Routes) == 0 && len(r.Preserved) == 0) || !st.networksReady {
		return // without the networks ensureNetworks has reported why
	}
	have, err := r.Host.Routes(ctx)
	if err != nil {
		rep.problem("list host routes: %v", err)
		return
	}
	wants := make([]HostRoute, 0, len(d.Routes)+len(r.Preserved))
	for _, want := range d.Routes {
		if d.HostEndpoint != nil && strings.EqualFold(want.InterfaceAlias, vnicName(d.HostEndpoint.Name)) {
			a := r.roleInterface(st, RoleHostEndpoint)
			if a == nil {
				rep.problem("add route %s: the host endpoint's vNIC is not on the host", want)
				continue
			}
			want.InterfaceAlias = a.Name
		}
		wants = append(wants, want)
	}
	planned := len(wants) // wants[planned:] are the kept routes
	if len(r.Preserved) > 0 {
		if v := r.roleInterface(st, RoleClusterVSwitch); v != nil {
			for _, p := range r.Preserved {
				p.InterfaceAlias = v.Name
				wants = append(wants, p)
			}
		}
	}
	for i, want := range wants {
		if ctx.Err() != nil {
			return
		}
		// A kept route is only added: another NIC's own route to the metadata server is that
		// NIC's business.
		var conflicts []HostRoute
		for _, h := range have {
			if i < planned && samePrefix(h.DestinationPrefix, want.DestinationPrefix) &&
				!slices.ContainsFunc(wants, func(w HostRoute) bool { return routeMatches(h, w) }) {
				conflicts = append(conflicts, h)
			}
		}
		for _, h := range conflicts {
			if err := r.Host.DeleteRoute(ctx, h); err != nil {
				rep.problem("remove conflicting route %s: %v", h, err)
				continue
			}
			have = slices.DeleteFunc(have, func(x HostRoute) bool { return x == h })
			rep.repair("removed route "+h.String(), "it sends "+want.DestinationPrefix+" elsewhere than "+want.String())
		}
		if slices.ContainsFunc(have, func(h HostRoute) bool { return routeMatches(h, want) }) {
			continue
		}
		if err := r.Host.AddRoute(ctx, want); err != nil {
			rep.problem("add route %s: %v", want, err)
			continue
		}
		have = append(have, want)
		why := "missing (host routes are not persistent: a reboot removes them)"
		switch {
		case slices.ContainsFunc(r.Preserved, func(p HostRoute) bool { return sameRoute(p, want) }):
			why = "kept from the cluster adapter: creating the vSwitch drops it"
		case d.HostEndpoint != nil && strings.HasPrefix(want.InterfaceAlias, vnicName(d.HostEndpoint.Name)):
			why = "missing (routes on the host endpoint's vNIC are lost with it)"
		}
		rep.repair("added route "+want.String(), why)
	}
}

// ensureServices starts what is stopped, in order: dependencies first, the after-network
// services only once the networks are ready, kube-proxy only once its network exists.
func (r *Reconciler) ensureServices(st *passState) {
	ctx, rep, d := st.ctx, st.rep, r.Desired
	running := map[string]bool{}
	for _, s := range d.Services {
		if ctx.Err() != nil {
			return
		}
		status, err := r.Host.ServiceStatus(ctx, s.Name)
		if err != nil {
			if errors.Is(err, ErrServiceNotInstalled) {
				rep.problem("service %s is not installed", s.Name)
			} else {
				rep.problem("service %s: %v", s.Name, err)
			}
			continue
		}
		switch status.State {
		case ServiceRunning:
			running[s.Name] = true
			continue
		case ServicePending:
			rep.problem("service %s is still starting or stopping", s.Name)
			continue
		}
		if blocked := r.startBlocked(st, s, running); blocked != "" {
			rep.problem("service %s not started: %s", s.Name, blocked)
			continue
		}
		if err := r.Host.StartService(ctx, s.Name); err != nil {
			rep.problem("service %s does not start: %v", s.Name, err)
			continue
		}
		running[s.Name] = true
		if s.Name == d.KubeProxy {
			r.proxyStartPass = r.pass
		}
		why := "it was stopped"
		if status.ExitCode != 0 {
			why = fmt.Sprintf("it had stopped with exit code %d", status.ExitCode)
		}
		if s.AfterNetwork {
			why += "; started once the HNS network exists"
		}
		rep.repair("started service "+s.Name, why)
	}
}

// startBlocked says why s must not be started yet ("" when it may start).
func (r *Reconciler) startBlocked(st *passState, s ServiceSpec, running map[string]bool) string {
	for _, dep := range s.DependsOn {
		if !running[dep] {
			return "waiting for service " + dep
		}
	}
	if s.AfterNetwork && !st.networksReady {
		return "waiting for the HNS network"
	}
	if s.Name == r.Desired.KubeProxy {
		ok, err := r.proxyNetworkExists(st.ctx)
		if err != nil {
			return "list HNS networks: " + err.Error()
		}
		if !ok {
			return "waiting for HNS network " + r.Desired.ProxyNetwork
		}
	}
	return ""
}

func (r *Reconciler) proxyNetworkExists(ctx context.Context) (bool, error) {
	networks, err := r.Host.ListNetworks(ctx)
	if err != nil {
		return false, err
	}
	return networkNamed(networks, r.Desired.ProxyNetwork) != nil, nil
}

// ensureKubeProxyPrograms restarts kube-proxy when HNS no longer has what it programmed: after
// an HNS restart (kube-proxy keeps its cache and does not program the load balancers again,
// kubernetes #110674), after its network was re-created under it, or when the load balancers
// collapsed to zero while Services exist. It runs last, so the network is back first.
func (r *Reconciler) ensureKubeProxyPrograms(st *passState) {
	ctx, rep, name := st.ctx, st.rep, r.Desired.KubeProxy
	lbs, err := r.Host.LoadBalancerCount(ctx)
	if err != nil {
		rep.problem("count HNS load balancers: %v", err)
		return
	}
	rep.LoadBalancers = lbs
	status, err := r.Host.ServiceStatus(ctx, name)
	if err != nil || status.State != ServiceRunning {
		return // reported by ensureServices
	}
	switch {
	case st.hnsRestarted && st.proxyWasRunning:
		r.pendingProxyRestart = fmt.Sprintf("HNS restarted (process %d) and dropped its load balancers", st.rep.HNSProcessID)
	case st.proxyWasRunning && st.recreated[r.Desired.ProxyNetwork]:
		r.pendingProxyRestart = "its HNS network " + r.Desired.ProxyNetwork + " was re-created"
	}
	if r.proxyStartPass == r.pass {
		// Started in this pass: a fresh start programs everything.
		r.pendingProxyRestart = ""
		return
	}
	why := r.pendingProxyRestart
	if why == "" {
		why = r.collapsed(st, lbs)
	}
	if why == "" {
		return
	}
	ok, err := r.proxyNetworkExists(ctx)
	if err != nil {
		rep.problem("list HNS networks: %v", err)
		return
	}
	if !ok {
		rep.problem("kube-proxy needs a restart (%s) but HNS network %s does not exist", why, r.Desired.ProxyNetwork)
		return
	}
	if err := r.Host.RestartService(ctx, name); err != nil {
		rep.problem("service %s does not restart (%s): %v", name, why, err)
		return
	}
	r.proxyStartPass, r.pendingProxyRestart = r.pass, ""
	rep.repair("restarted service "+name, why)
	if lbs, err := r.Host.LoadBalancerCount(ctx); err == nil {
		rep.LoadBalancers = lbs
	}
}

// collapsed reports zero load balancers while some are expected, unless kube-proxy was started
// in the previous pass and may not have synced yet.
func (r *Reconciler) collapsed(st *passState, lbs int) string {
	if r.ExpectedLoadBalancers == nil || lbs > 0 || !st.proxyWasRunning || r.proxyStartPass == r.pass-1 {
		return ""
	}
	want, err := r.ExpectedLoadBalancers(st.ctx)
	if err != nil {
		st.rep.problem("expected load balancers: %v", err)
		return ""
	}
	if want <= 0 {
		return ""
	}
	return fmt.Sprintf("HNS has 0 load balancers, %d expected", want)
}

// Loop runs passes until ctx ends: every interval while the node is healthy, and after a
// failed pass again after RetryMin, doubling with every further failure up to MaxBackoff.
func (r *Reconciler) Loop(ctx context.Context, interval time.Duration) error {
	if interval <= 0 {
		return fmt.Errorf("winnode loop on %s: interval %v must be positive", r.Desired.Node, interval)
	}
	sleep := r.sleep
	if sleep == nil {
		sleep = sleepCtx
	}
	failures := 0
	for {
		rep, err := r.Reconcile(ctx)
		if r.OnReport != nil {
			r.OnReport(rep)
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil || !rep.Healthy {
			failures++
		} else {
			failures = 0
		}
		if err := sleep(ctx, r.nextDelay(interval, failures)); err != nil {
			return err
		}
	}
}

// nextDelay is the wait before the next pass after failures failed passes in a row.
func (r *Reconciler) nextDelay(interval time.Duration, failures int) time.Duration {
	if failures == 0 {
		return interval
	}
	lo, hi := r.RetryMin, r.MaxBackoff
	if lo <= 0 {
		lo = DefaultRetryMin
	}
	if hi <= 0 {
		hi = DefaultMaxBackoff
	}
	d := lo
	for i := 1; i < failures && d < hi; i++ {
		d *= 2
	}
	return min(d, hi)
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

func networkNamed(ns []Network, name string) *Network {
	for i := range ns {
		if ns[i].Name == name {
			return &ns[i]
		}
	}
	return nil
}

func removeNetwork(ns []Network, name string) []Network {
	out := ns[:0:0]
	for _, n := range ns {
		if n.Name != name {
			out = append(out, n)
		}
	}
	return out
}

// networkDiff says how an existing network differs from spec ("" when it matches). An adapter
// name the host did not report is not a difference.
func networkDiff(have Network, spec NetworkSpec) string {
	var d []string
	if !strings.EqualFold(have.Type, spec.Type) {
		d = append(d, fmt.Sprintf("type %s, want %s", have.Type, spec.Type))
	}
	if have.Prefix != spec.Prefix {
		d = append(d, fmt.Sprintf("subnet %s, want %s", have.Prefix, spec.Prefix))
	}
	if have.Gateway != spec.Gateway {
		d = append(d, fmt.Sprintf("gateway %s, want %s", have.Gateway, spec.Gateway))
	}
	if have.AdapterName != "" && !strings.EqualFold(have.AdapterName, spec.AdapterName) {
		d = append(d, fmt.Sprintf("bound to adapter %q, but the cluster adapter is now %q", have.AdapterName, spec.AdapterName))
	}
	return strings.Join(d, ", ")
}

// routeMatches says whether have is the route want asks for: the same destination and next hop,
// on the same interface (alias in any case) unless want leaves the interface to Windows.
func routeMatches(have, want HostRoute) bool {
	return sameRoute(have, want) && (want.InterfaceAlias == "" || strings.EqualFold(have.InterfaceAlias, want.InterfaceAlias))
}

// sameRoute compares the destinations and next hops of two routes as addresses, so that
// "10.244.0.0/16" and a host's unmasked or differently written form compare equal.
func sameRoute(a, b HostRoute) bool {
	return samePrefix(a.DestinationPrefix, b.DestinationPrefix) && sameAddr(a.NextHop, b.NextHop)
}

func samePrefix(a, b string) bool {
	pa, err1 := netip.ParsePrefix(a)
	pb, err2 := netip.ParsePrefix(b)
	if err1 != nil || err2 != nil {
		return a == b
	}
	return pa.Masked() == pb.Masked()
}

func sameAddr(a, b string) bool {
	aa, err1 := netip.ParseAddr(a)
	ab, err2 := netip.ParseAddr(b)
	if err1 != nil || err2 != nil {
		return a == b
	}
	return aa.Unmap() == ab.Unmap()
}

// sameMAC compares MACs written with colons or dashes, in any case.
func sameMAC(a, b string) bool {
	ma, err1 := net.ParseMAC(a)
	mb, err2 := net.ParseMAC(b)
	return err1 == nil && err2 == nil && ma.String() == mb.String()
}
