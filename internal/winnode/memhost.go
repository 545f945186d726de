package winnode

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"sort"
	"strings"
	"sync"
)

// MemHost is an in-memory model of a Windows host for tests, not Windows. It models what the
// field reports document about Windows nodes, and nothing it cannot name a source for:
//
//   - Reboot: HNS networks, endpoints and load balancers are gone (HNS networks created
//     through HCN without persistence do not survive a reboot: kubernetes-sigs/sig-windows-tools
//     issue 52, projectcalico/calico issue 8397, rancher/rke2 issue 5335); every service stops, the HNS process gets a new ID, and the services
//     with automatic start type start again, dependencies first, as the SCM does.
//   - RestartHNS: the HNS process gets a new ID and every load balancer is dropped, while the
//     networks stay (kubernetes/kubernetes issues 110674 and 135802,
//     microsoft/Windows-Containers issue 278).
//   - RenameAdapter: the adapter keeps its MAC; networks keep the adapter name they were
//     created with, which no longer names any adapter.
//   - FailStart: a service that does not start, with the reason the SCM would report.
//   - The SCM's dependency rules: starting a service starts its dependencies first; stopping
//     one whose dependents run fails (ERROR_DEPENDENT_SERVICES_RUNNING).
//   - Host routes (AddRoute): a route names an interface that exists, a network adapter or the
//     "vEthernet (<name>)" vNIC of a host endpoint attached to the host; an empty alias is kept
//     as given (Windows would pick the interface by next hop, and the model knows no subnets).
//     The routes are in the active store (kubewin does not persist them: render's hns/setup.ps1
//     adds them with New-NetRoute -PolicyStore ActiveStore, which a restart clears), so Reboot
//     drops them all; and a route belongs to its interface (MIB_IPFORWARD_ROW2 names it by
//     LUID and index), so the routes on a host endpoint's vNIC go when that endpoint is
//     deleted, also with its network. A renamed adapter keeps its routes under the new name.
//   - Service behaviour (SetBehavior): a service that creates a network when it starts
//     (flanneld), and a kube-proxy that programs its load balancers when it starts, or once its
//     network appears, and does not notice that HNS dropped them later.
//
// Everything is deterministic: IDs and process IDs come from counters, listings are sorted.
type MemHost struct {
	mu        sync.Mutex
	seq       int
	nextPID   uint32
	hnsPID    uint32
	networks  []Network
	endpoints []Endpoint
	lbs       int
	services  map[string]*memService
	adapters  []Adapter
	routes    []HostRoute
	firewall  map[string]FirewallRule
	acls      map[string][]ACLGrant
	// noContainers models a host without the Containers feature: no HNS service.
	noContainers bool
	events       []Event
	hangHNS      bool
}

type memService struct {
	cfg        ServiceConfig
	state      ServiceState
	pid        uint32
	exitCode   uint32
	failReason string
	behavior   ServiceBehavior
	// waiting: running, and will program its load balancers once its network exists.
	waiting bool
}

// ServiceBehavior is what a modelled service does to HNS.
type ServiceBehavior struct {
	// CreatesNetwork is created (unless it exists) when the service starts: flanneld creates
	// the pod network once it holds a lease.
	CreatesNetwork *NetworkSpec
	// ProgramsNetwork and LoadBalancers model kube-proxy (winkernel): when it starts it waits
	// for the network and then programs LoadBalancers load balancers; it programs them again
	// only when it starts again.
	ProgramsNetwork string
	LoadBalancers   int
}

// Event is one change on a MemHost, in order.
type Event struct {
	Kind string // reboot, hns-restart, network-create, network-delete, endpoint-create,
	// endpoint-delete, endpoint-attach, start, start-failed, stop, lb-program, adapter-rename,
	// route-add, route-lost
	Name   string
	Detail string
}

func (e Event) String() string {
	if e.Detail == "" {
		return e.Kind + " " + e.Name
	}
	return e.Kind + " " + e.Name + " (" + e.Detail + ")"
}

// NewMemHost returns a host with these adapters, no HNS networks and no services.
func NewMemHost(adapters ...Adapter) *MemHost {
	h := &MemHost{nextPID: 1000, services: map[string]*memService{}, firewall: map[string]FirewallRule{}}
	for _, a := range adapters {
		a.MAC = normMAC(a.MAC)
		a.IPv4 = slices.Clone(a.IPv4)
		h.adapters = append(h.adapters, a)
	}
	h.hnsPID = h.newPID()
	return h
}

func (h *MemHost) newPID() uint32 {
	h.nextPID += 4 // Windows process IDs are multiples of 4
	return h.nextPID
}

func (h *MemHost) newID(kind string) string {
	h.seq++
	return fmt.Sprintf("%s-%04d", kind, h.seq)
}

func (h *MemHost) event(kind, name, detail string) {
	h.events = append(h.events, Event{Kind: kind, Name: name, Detail: detail})
}

// enter checks ctx, and for HNS calls models an HNS that does not answer while hangHNS is set.
func (h *MemHost) enter(ctx context.Context, hns bool) error {
	h.mu.Lock()
	hang := hns && h.hangHNS
	h.mu.Unlock()
	if hang {
		<-ctx.Done()
		return fmt.Errorf("HNS did not answer: %w", ctx.Err())
	}
	return ctx.Err()
}

// --- Host ---

func (h *MemHost) ListNetworks(ctx context.Context) ([]Network, error) {
	if err := h.enter(ctx, true); err != nil {
		return nil, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return cloneNetworks(h.networks), nil
}

func (h *MemHost) CreateNetwork(ctx context.Context, spec NetworkSpec) (Network, error) {
	if err := h.enter(ctx, true); err != nil {
		return Network{}, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.createNetwork(spec)
}

func (h *MemHost) createNetwork(spec NetworkSpec) (Network, error) {
	if h.networkByName(spec.Name) != nil {
		return Network{}, fmt.Errorf("HNS network %s already exists", spec.Name)
	}
	if h.adapterByName(spec.AdapterName) == nil {
		return Network{}, fmt.Errorf("create HNS network %s: network adapter %q not found", spec.Name, spec.AdapterName)
	}
	n := Network{ID: h.newID("network"), NetworkSpec: spec}
	n.Routes = slices.Clone(spec.Routes)
	h.networks = append(h.networks, n)
	h.event("network-create", spec.Name, spec.Prefix+" on "+spec.AdapterName)
	h.bindVSwitch(spec.AdapterName)
	for _, name := range h.serviceNames() {
		s := h.services[name]
		if s.waiting && s.behavior.ProgramsNetwork == spec.Name {
			h.program(name, s)
		}
	}
	return cloneNetworks([]Network{n})[0], nil
}

func (h *MemHost) DeleteNetwork(ctx context.Context, id string) error {
	if err := h.enter(ctx, true); err != nil {
		return err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for i, n := range h.networks {
		if n.ID == id {
			// Model choice: the network's endpoints go with it (the Reconciler deletes them
			// first anyway).
			var gone []Endpoint
			h.endpoints = slices.DeleteFunc(h.endpoints, func(e Endpoint) bool {
				if e.NetworkID == id {
					gone = append(gone, e)
				}
				return e.NetworkID == id
			})
			h.networks = slices.Delete(h.networks, i, i+1)
			h.event("network-delete", n.Name, "")
			if !slices.ContainsFunc(h.networks, func(o Network) bool { return o.AdapterName == n.AdapterName }) {
				h.unbindVSwitch(n.AdapterName)
			}
			for _, e := range gone {
				h.dropVNICRoutes(e)
			}
			return nil
		}
	}
	return fmt.Errorf("HNS network %s not found", id)
}

func (h *MemHost) ListEndpoints(ctx context.Context) ([]Endpoint, error) {
	if err := h.enter(ctx, true); err != nil {
		return nil, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.endpoints), nil
}

func (h *MemHost) CreateEndpoint(ctx context.Context, networkID string, spec EndpointSpec) (Endpoint, error) {
	if err := h.enter(ctx, true); err != nil {
		return Endpoint{}, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	var network *Network
	for i := range h.networks {
		if h.networks[i].ID == networkID {
			network = &h.networks[i]
		}
	}
	if network == nil {
		return Endpoint{}, fmt.Errorf("create endpoint %s: HNS network %s not found", spec.Name, networkID)
	}
	e := Endpoint{ID: h.newID("endpoint"), NetworkID: networkID, EndpointSpec: spec}
	e.Network = network.Name
	if e.MAC == "" {
		e.MAC = fmt.Sprintf("00-15-5d-00-00-%02x", h.seq%256)
	}
	h.endpoints = append(h.endpoints, e)
	h.event("endpoint-create", spec.Name, spec.IP+" on "+network.Name)
	return e, nil
}

func (h *MemHost) DeleteEndpoint(ctx context.Context, id string) error {
	if err := h.enter(ctx, true); err != nil {
		return err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for i, e := range h.endpoints {
		if e.ID == id {
			h.endpoints = slices.Delete(h.endpoints, i, i+1)
			h.event("endpoint-delete", e.Name, "")
			h.dropVNICRoutes(e)
			return nil
		}
	}
	return fmt.Errorf("HNS endpoint %s not found", id)
}

func (h *MemHost) AttachHostEndpoint(ctx context.Context, id string) error {
	if err := h.enter(ctx, true); err != nil {
		return err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for i := range h.endpoints {
		if h.endpoints[i].ID == id {
			h.endpoints[i].HostAttached = true
			h.event("endpoint-attach", h.endpoints[i].Name, "compartment 1")
			return nil
		}
	}
	return fmt.Errorf("HNS endpoint %s not found", id)
}

func (h *MemHost) LoadBalancerCount(ctx context.Context) (int, error) {
	if err := h.enter(ctx, true); err != nil {
		return 0, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.lbs, nil
}

func (h *MemHost) HNSProcessID(ctx context.Context) (uint32, error) {
	if err := h.enter(ctx, false); err != nil {
		return 0, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.noContainers {
		return 0, fmt.Errorf("service hns: %w", ErrServiceNotInstalled)
	}
	return h.hnsPID, nil
}

func (h *MemHost) ServiceStatus(ctx context.Context, name string) (ServiceStatus, error) {
	if err := h.enter(ctx, false); err != nil {
		return ServiceStatus{}, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	s := h.services[name]
	if s == nil {
		return ServiceStatus{State: ServiceNotFound}, fmt.Errorf("service %s: %w", name, ErrServiceNotInstalled)
	}
	return ServiceStatus{State: s.state, ProcessID: s.pid, ExitCode: s.exitCode}, nil
}

func (h *MemHost) StartService(ctx context.Context, name string) error {
	if err := h.enter(ctx, false); err != nil {
		return err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.start(name, nil)
}

// start starts name after its dependencies, as the SCM does.
func (h *MemHost) start(name string, chain []string) error {
	s := h.services[name]
	if s == nil {
		return fmt.Errorf("service %s: %w", name, ErrServiceNotInstalled)
	}
	if slices.Contains(chain, name) {
		return fmt.Errorf("service %s: circular dependency %s", name, strings.Join(append(chain, name), " -> "))
	}
	if s.state == ServiceRunning {
		return nil
	}
	for _, dep := range s.cfg.DependsOn {
		if err := h.start(dep, append(chain, name)); err != nil {
			// ERROR_SERVICE_DEPENDENCY_FAIL (1068)
			return fmt.Errorf("the dependency service or group failed to start: %w", err)
		}
	}
	if s.failReason != "" {
		s.state, s.pid, s.exitCode = ServiceStopped, 0, 1
		h.event("start-failed", name, s.failReason)
		return fmt.Errorf("%s", s.failReason)
	}
	s.state, s.pid, s.exitCode = ServiceRunning, h.newPID(), 0
	h.event("start", name, "")
	if b := s.behavior.CreatesNetwork; b != nil && h.networkByName(b.Name) == nil {
		if _, err := h.createNetwork(*b); err != nil {
			h.event("network-create-failed", b.Name, err.Error())
		}
	}
	if s.behavior.ProgramsNetwork != "" {
		s.waiting = true
		if h.networkByName(s.behavior.ProgramsNetwork) != nil {
			h.program(name, s)
		}
	}
	return nil
}

// program models kube-proxy's first sync: it replaces every load balancer with its own.
func (h *MemHost) program(name string, s *memService) {
	s.waiting = false
	h.lbs = s.behavior.LoadBalancers
	h.event("lb-program", name, fmt.Sprintf("%d on %s", h.lbs, s.behavior.ProgramsNetwork))
}

func (h *MemHost) StopService(ctx context.Context, name string) error {
	if err := h.enter(ctx, false); err != nil {
		return err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.stop(name)
}

func (h *MemHost) stop(name string) error {
	s := h.services[name]
	if s == nil {
		return fmt.Errorf("service %s: %w", name, ErrServiceNotInstalled)
	}
	for _, other := range h.serviceNames() {
		o := h.services[other]
		if o.state == ServiceRunning && slices.Contains(o.cfg.DependsOn, name) {
			// ERROR_DEPENDENT_SERVICES_RUNNING (1051)
			return fmt.Errorf("stop service %s: service %s depends on it and is running", name, other)
		}
	}
	if s.state != ServiceRunning {
		return nil
	}
	s.state, s.pid, s.waiting = ServiceStopped, 0, false
	h.event("stop", name, "")
	return nil
}

func (h *MemHost) RestartService(ctx context.Context, name string) error {
	if err := h.enter(ctx, false); err != nil {
		return err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.stop(name); err != nil {
		return err
	}
	return h.start(name, nil)
}

func (h *MemHost) InstallService(ctx context.Context, cfg ServiceConfig) error {
	if err := h.enter(ctx, false); err != nil {
		return err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.services[cfg.Name]; ok {
		// ERROR_SERVICE_EXISTS (1073)
		return fmt.Errorf("install service %s: the specified service already exists", cfg.Name)
	}
	cfg.Args, cfg.DependsOn, cfg.Recovery = slices.Clone(cfg.Args), slices.Clone(cfg.DependsOn), slices.Clone(cfg.Recovery)
	h.services[cfg.Name] = &memService{cfg: cfg, state: ServiceStopped}
	return nil
}

func (h *MemHost) Adapters(ctx context.Context) ([]Adapter, error) {
	if err := h.enter(ctx, false); err != nil {
		return nil, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]Adapter, len(h.adapters))
	for i, a := range h.adapters {
		a.IPv4 = slices.Clone(a.IPv4)
		out[i] = a
	}
	return out, nil
}

func (h *MemHost) RenameAdapter(ctx context.Context, oldName, newName string) error {
	if err := h.enter(ctx, false); err != nil {
		return err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	a := h.adapterByName(oldName)
	if a == nil {
		return fmt.Errorf("rename adapter %q: no such adapter", oldName)
	}
	if h.adapterByName(newName) != nil {
		return fmt.Errorf("rename adapter %q: an adapter named %q exists", oldName, newName)
	}
	a.Name = newName
	h.event("adapter-rename", oldName, "to "+newName)
	for i := range h.routes {
		if strings.EqualFold(h.routes[i].InterfaceAlias, oldName) {
			h.routes[i].InterfaceAlias = newName
		}
	}
	return nil
}

func (h *MemHost) EnsureFirewallRule(ctx context.Context, rule FirewallRule) (bool, error) {
	if err := h.enter(ctx, false); err != nil {
		return false, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.firewall[rule.Name]; ok {
		return false, nil
	}
	h.firewall[rule.Name] = rule
	h.event("firewall-rule", rule.Name, rule.Protocol+" "+rule.LocalPorts)
	return true, nil
}

// Routes is not an HNS call: HangHNS does not block it.
func (h *MemHost) Routes(ctx context.Context) ([]HostRoute, error) {
	if err := h.enter(ctx, false); err != nil {
		return nil, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.routes), nil
}

// AddRoute is not an HNS call: HangHNS does not block it.
func (h *MemHost) AddRoute(ctx context.Context, rt HostRoute) error {
	if err := h.enter(ctx, false); err != nil {
		return err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	dst, err := netip.ParsePrefix(rt.DestinationPrefix)
	if err != nil || !dst.Addr().Is4() {
		// ERROR_INVALID_PARAMETER (87)
		return fmt.Errorf("destination %q is not an IPv4 prefix", rt.DestinationPrefix)
	}
	if via, err := netip.ParseAddr(rt.NextHop); err != nil || !via.Is4() {
		return fmt.Errorf("next hop %q is not an IPv4 address", rt.NextHop)
	}
	rt.DestinationPrefix = dst.Masked().String()
	if rt.InterfaceAlias != "" {
		name, ok := h.interfaceNamed(rt.InterfaceAlias)
		if !ok {
			// ERROR_NOT_FOUND (1168) from CreateIpForwardEntry2; the real host fails earlier,
			// looking the alias up.
			return fmt.Errorf("interface %q not found: no network adapter has that name and no host endpoint with that vNIC is attached", rt.InterfaceAlias)
		}
		rt.InterfaceAlias = name
	}
	for _, have := range h.routes {
		if sameRoute(have, rt) && strings.EqualFold(have.InterfaceAlias, rt.InterfaceAlias) {
			return nil // ERROR_OBJECT_ALREADY_EXISTS, which the Host contract makes no error
		}
	}
	h.routes = append(h.routes, rt)
	detail := "via " + rt.NextHop
	if rt.InterfaceAlias != "" {
		detail += " on " + rt.InterfaceAlias
	}
	h.event("route-add", rt.DestinationPrefix, detail)
	return nil
}

// interfaceNamed finds an interface by alias, as Windows spells it: an adapter, or the vNIC of
// an endpoint attached to the host.
func (h *MemHost) interfaceNamed(alias string) (string, bool) {
	if a := h.adapterByName(alias); a != nil {
		return a.Name, true
	}
	for _, e := range h.endpoints {
		if e.HostAttached && strings.EqualFold(vnicName(e.Name), alias) {
			return vnicName(e.Name), true
		}
	}
	return "", false
}

// dropVNICRoutes removes the routes on the vNIC of a host endpoint that has just gone, unless
// another attached endpoint of that name still holds the vNIC.
func (h *MemHost) dropVNICRoutes(gone Endpoint) {
	if !gone.HostAttached {
		return
	}
	vnic := vnicName(gone.Name)
	if _, still := h.interfaceNamed(vnic); still {
		return
	}
	h.routes = slices.DeleteFunc(h.routes, func(rt HostRoute) bool {
		if !strings.EqualFold(rt.InterfaceAlias, vnic) {
			return false
		}
		h.event("route-lost", rt.DestinationPrefix, rt.NextHop+" on "+vnic+", removed with host endpoint "+gone.Name)
		return true
	})
}

// --- what happens to a Windows node ---

// Reboot models a restart of the machine.
func (h *MemHost) Reboot() {
	h.mu.Lock()
	defer h.mu.Unlock()
	// Routes are in the active store: a restart clears them.
	for _, n := range h.networks {
		h.unbindVSwitch(n.AdapterName)
	}
	h.networks, h.endpoints, h.lbs, h.routes = nil, nil, 0, nil
	for _, s := range h.services {
		s.state, s.pid, s.waiting = ServiceStopped, 0, false
	}
	h.hnsPID = h.newPID()
	h.event("reboot", "", "")
	// The SCM starts automatic services, dependencies first (h.start), in name order here.
	for _, name := range h.serviceNames() {
		if h.services[name].cfg.StartType == StartAutomatic {
			_ = h.start(name, nil) // a failure is recorded as a start-failed event
		}
	}
}

// RestartHNS models the HNS service restarting: new process, load balancers gone, networks kept.
func (h *MemHost) RestartHNS() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.hnsPID = h.newPID()
	h.lbs = 0
	h.event("hns-restart", "", fmt.Sprintf("process %d", h.hnsPID))
}

// DropLoadBalancers removes every load balancer without an HNS restart (what an operator or a
// CNI cleanup can do; kube-proxy does not notice either).
func (h *MemHost) DropLoadBalancers() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.lbs = 0
	h.event("lb-drop", "", "")
}

// FailStart makes every start of the service fail with reason; an empty reason lets it start.
func (h *MemHost) FailStart(name, reason string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if s := h.services[name]; s != nil {
		s.failReason = reason
	}
}

// HangHNS makes every HNS call block until its context ends (true) or answer again (false).
func (h *MemHost) HangHNS(hang bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.hangHNS = hang
}

// SetBehavior sets what an installed service does to HNS when it starts.
func (h *MemHost) SetBehavior(name string, b ServiceBehavior) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if s := h.services[name]; s != nil {
		if b.CreatesNetwork != nil {
			c := *b.CreatesNetwork
			b.CreatesNetwork = &c
		}
		s.behavior = b
	}
}

// --- inspection ---

// Networks returns the HNS networks in creation order.
func (h *MemHost) Networks() []Network {
	h.mu.Lock()
	defer h.mu.Unlock()
	return cloneNetworks(h.networks)
}

// Endpoints returns the HNS endpoints in creation order.
func (h *MemHost) Endpoints() []Endpoint {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.endpoints)
}

// HostRoutes returns the host's routes in the order they were added.
func (h *MemHost) HostRoutes() []HostRoute {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.routes)
}

// LoadBalancers is the number of HNS load balancers.
func (h *MemHost) LoadBalancers() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.lbs
}

// State is the state of a service (ServiceNotFound when not installed).
func (h *MemHost) State(name string) ServiceState {
	h.mu.Lock()
	defer h.mu.Unlock()
	if s := h.services[name]; s != nil {
		return s.state
	}
	return ServiceNotFound
}

// Events returns every change so far, in order.
func (h *MemHost) Events() []Event {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.events)
}

// Count counts the events of a kind about name.
func (h *MemHost) Count(kind, name string) int {
	n := 0
	for _, e := range h.Events() {
		if e.Kind == kind && e.Name == name {
			n++
		}
	}
	return n
}

// Index is the position of the first event of a kind about name at or after from, or -1.
func (h *MemHost) Index(from int, kind, name string) int {
	ev := h.Events()
	for i := max(from, 0); i < len(ev); i++ {
		if ev[i].Kind == kind && ev[i].Name == name {
			return i
		}
	}
	return -1
}

func (h *MemHost) networkByName(name string) *Network {
	for i := range h.networks {
		if h.networks[i].Name == name {
			return &h.networks[i]
		}
	}
	return nil
}

func (h *MemHost) adapterByName(name string) *Adapter {
	for i := range h.adapters {
		if strings.EqualFold(h.adapters[i].Name, name) {
			return &h.adapters[i]
		}
	}
	return nil
}

func (h *MemHost) serviceNames() []string {
	names := make([]string, 0, len(h.services))
	for n := range h.services {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func cloneNetworks(ns []Network) []Network {
	out := make([]Network, len(ns))
	for i, n := range ns {
		n.Routes = slices.Clone(n.Routes)
		out[i] = n
	}
	return out
}

func normMAC(s string) string {
	return strings.ToLower(strings.ReplaceAll(s, "-", ":"))
}

// bindVSwitch models the vSwitch an HNS network binds to its adapter: the host keeps its
// connection through a new host vNIC "vEthernet (<adapter>)" with the adapter's MAC, which takes
// over the adapter's addresses (Kubernetes' Windows troubleshooting guide checks for it:
// Get-NetAdapter | ? Name -Like "vEthernet (Ethernet*", seed 001). A second network on the same
// adapter shares the vSwitch.
func (h *MemHost) bindVSwitch(adapter string) {
	vnic := vnicName(adapter)
	if h.adapterByName(vnic) != nil {
		return
	}
	a := h.adapterByName(adapter)
	if a == nil {
		return
	}
	v := Adapter{Name: vnic, MAC: a.MAC, IPv4: a.IPv4}
	a.IPv4 = nil
	h.adapters = append(h.adapters, v)
	h.event("vnic-create", vnic, "addresses "+strings.Join(v.IPv4, ","))
}

// unbindVSwitch removes the host vNIC of the vSwitch on adapter (its last network is gone) and
// gives its addresses back to the adapter with its MAC (found by MAC: the adapter may have been
// renamed since, and the vNIC kept its name).
func (h *MemHost) unbindVSwitch(adapter string) {
	vnic := vnicName(adapter)
	i := slices.IndexFunc(h.adapters, func(a Adapter) bool { return a.Name == vnic })
	if i < 0 {
		return
	}
	v := h.adapters[i]
	h.adapters = slices.Delete(h.adapters, i, i+1)
	for j := range h.adapters {
		if h.adapters[j].MAC == v.MAC && !strings.HasPrefix(h.adapters[j].Name, "vEthernet (") {
			h.adapters[j].IPv4 = append(h.adapters[j].IPv4, v.IPv4...)
			break
		}
	}
	h.event("vnic-delete", vnic, "")
}

// RemoveContainersFeature models a host without the Containers feature (Install-WindowsFeature
// Containers installs HNS): the hns service does not exist.
func (h *MemHost) RemoveContainersFeature() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.noContainers = true
}
