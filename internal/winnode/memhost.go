package winnode

import (
	"context"
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"sort"
	"strings"
	"sync"
)

// MemHost is an in-memory model of a Windows host for tests, not Windows. Every behaviour a
// Reconciler decision depends on is listed here with its source; where the sources disagree or
// are silent, Model selects the behaviour and the tests run the Reconciler under each choice.
//
//	behaviour                                   | MemHost                                   | source
//	--------------------------------------------+-------------------------------------------+------------------------------------------------
//	HNS networks across a reboot                | Model.NetworksPersist (both are tested)   | persist: kubernetes cluster/gce/windows/k8s-node-setup.psm1 ("the HNS network does seem to persist across reboots, the HNS endpoints do not"); lost: kubernetes-sigs/sig-windows-tools#52, projectcalico/calico#8397, rancher/rke2#5335
//	HNS endpoints across a reboot               | gone, with their host vNICs               | k8s-node-setup.psm1 (same comment)
//	a NIC bound to an external vSwitch          | IP unbound: Bound, no addresses; listed   | design.md host facts; GetAdaptersAddresses lists it only with GAA_FLAG_INCLUDE_ALL_INTERFACES (learn.microsoft.com iphlpapi GetAdaptersAddresses);
//	                                            | unless Model.HideBoundAdapters            | Azure/azure-container-networking network/network_windows.go (HNS rejects a vEthernet adapter name)
//	the vSwitch's host vNIC                     | "vEthernet (<adapter>)", the adapter's    | k8s-node-setup.psm1 Add_GceMetadataServerRoute ("a vEthernet (Ethernet) interface is added, and it seems to subsume the routes of the Ethernet interface");
//	                                            | MAC and addresses, takes its routes       | Kubernetes Windows troubleshooting (seed 001: Get-NetAdapter | ? Name -Like "vEthernet (Ethernet*")
//	the metadata route at vSwitch creation      | 169.254.169.254/32 is dropped             | k8s-node-setup.psm1 Configure-HostNetworkingService; microsoft/hcsshim#299
//	a host endpoint attached to compartment 1   | vNIC "vEthernet (<endpoint>)" holding the | hcsshim internal/hns/hnsendpoint.go HostAttach; flannel pkg/backend/hostgw/hostgw_windows.go finds it by IP (GetInterfaceIndexByIP)
//	                                            | endpoint's IP; Model.VNICSuffix appends a | Windows names a second connection of the same name "<name> 2" (Network Connections' naming; sources silent on vNICs: both tested)
//	                                            | suffix to its name                        |
//	attaching an attached endpoint              | no error (the Host contract)              | flannel hostgw_windows.go and Calico treat "This endpoint is already attached to the switch." as success
//	IP forwarding on a new vNIC                 | disabled                                  | k8s-node-setup.psm1 and flannel hostgw_windows.go enable it after every attach
//	forwarding across a reboot on a kept vNIC   | Model.ForwardingPersists (both tested)    | silent
//	the hns service after boot                  | Model.HNSManualStart: stopped until       | Siemens-Healthineers/K2s#593 (hns Manual and stopped after boot); the SCM starts a service's dependencies first (learn.microsoft.com "Service Startup")
//	                                            | started, directly or as a dependency      |
//	HNS restart                                 | new process ID, load balancers gone,      | kubernetes/kubernetes#110674, #135802; microsoft/Windows-Containers#278
//	                                            | networks kept                             |
//	HCN's listed networks                       | echo NetAdapterName unless                | silent (hcsshim hcn/hcnnetwork.go only defines the policy): both tested
//	                                            | Model.HCNOmitsAdapterName                 |
//	host routes                                 | active store: gone at reboot and with     | MIB_IPFORWARD_ROW2 names its interface by LUID and index (learn.microsoft.com netioapi); render's setup.ps1 uses -PolicyStore ActiveStore
//	                                            | their interface                           |
//	a renamed adapter                           | keeps its MAC; networks keep the old name | netsh interface set interface / Rename-NetAdapter change only the alias
//	the SCM                                     | dependencies started first; stopping a    | learn.microsoft.com ControlService (ERROR_DEPENDENT_SERVICES_RUNNING 1051), StartService (ERROR_SERVICE_DEPENDENCY_FAIL 1068)
//	                                            | service whose dependents run fails        |
//	a running program's file (SetImages,        | renamed: allowed, the process keeps       | learn.microsoft.com windows-hardware/drivers/ifs/executable-images (an image-mapped file cannot be opened for write or deleted: STATUS_SHARING_VIOLATION,
//	HoldFile)                                   | running from it under the new name;       | STATUS_CANNOT_DELETE); a rename changes the directory entry, not the mapped file: restic/restic internal/selfupdate/download_windows.go renames the
//	                                            | replaced (MoveFileEx REPLACE_EXISTING onto| running restic.exe aside for this reason, as join does (internal/join/windows.go replaceAside); os.Rename is MoveFileEx(MOVEFILE_REPLACE_EXISTING)
//	                                            | it) or deleted: ERROR_ACCESS_DENIED (5)   | ($GOROOT/src/internal/syscall/windows/syscall_windows.go Rename)
//	a service started without its program       | ERROR_PATH_NOT_FOUND (3), start-failed    | learn.microsoft.com winsvc StartServiceA: ERROR_PATH_NOT_FOUND "The service binary file could not be found."
//	a program that exits at once (FailImage)    | start-failed with the program's exit code | what a kubelet that cannot start with the node's configuration does; the SCM reports the exit (ServiceStatus.ExitCode)
//	wusa.exe <msu> /quiet /norestart            | 0 installed; 3010 installed once the      | support.microsoft.com 799ba3df-ec7e-b05e-ee13-1cdae8f23b19 (wusa switches; /quiet without /norestart restarts by itself);
//	                                            | machine restarts (pending until Reboot);  | ERROR_SUCCESS_REBOOT_REQUIRED 3010, ERROR_SUCCESS_REBOOT_INITIATED 1641: learn.microsoft.com system-error-codes;
//	                                            | 1641 and a restart without /norestart;    | WU_S_ALREADY_INSTALLED 0x00240006, WU_S_ALREADY_UNINSTALLED 0x00240007, WU_E_NOT_APPLICABLE 0x80240017:
//	                                            | 0x00240006 installed or pending already;  | learn.microsoft.com windows/win32/wua_sdk/wua-success-and-error-codes-
//	                                            | 0x80240017 a package for another build    | (which code wusa gives for a package pending a restart is not documented: the model says already installed)
//	wusa.exe /uninstall /kb:N /quiet /norestart | 0 removed; 3010 removed at the restart;   | same sources
//	                                            | 0x00240007 not installed                  |
//	DISM /Online /Add-Package|/Remove-Package   | as wusa, but 0 for a package installed    | learn.microsoft.com dism-operating-system-package-servicing-command-line-options (/PackagePath, /NoRestart);
//	/PackagePath:<cab> /Quiet /NoRestart        | already (DISM reports no WUA results)     | DISM's exit 3010 for a pending restart is observed practice, not documented: the node service treats 3010 alike from both
//	a reboot (Reboot)                           | files stay; processes end (holds go);     | pending file operations of servicing complete at restart (support.microsoft.com kb/140570, MOVEFILE_DELAY_UNTIL_REBOOT);
//	                                            | pending updates complete; automatic       | the SCM starts automatic services at boot ("Service Startup")
//	                                            | services start and hold their programs    |
//
// What a test sets up besides: FailStart (a service that does not start), HangHNS (HNS calls
// that block), SetBehavior (flanneld creating its network, kube-proxy programming load
// balancers), RemoveContainersFeature (no HNS service).
//
// Everything is deterministic: IDs and process IDs come from counters, listings are sorted.
type MemHost struct {
	mu        sync.Mutex
	model     Model
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
	// machine: program files in use, OS update packages (memhost_updates.go).
	machine memMachine
}

// Model selects MemHost's behaviour where the sources disagree or say nothing (see MemHost).
type Model struct {
	// NetworksPersist keeps HNS networks and their vSwitch across a reboot (endpoints go).
	NetworksPersist bool
	// HideBoundAdapters leaves NICs bound to a vSwitch out of Adapters, as a listing without
	// GAA_FLAG_INCLUDE_ALL_INTERFACES (net.Interfaces) does.
	HideBoundAdapters bool
	// HNSManualStart leaves the hns service stopped after a reboot until it is started.
	HNSManualStart bool
	// VNICSuffix is appended to the names of the vNICs attached host endpoints get (" 2").
	VNICSuffix string
	// ForwardingPersists keeps forwarding enabled across a reboot on a vNIC that survives it.
	ForwardingPersists bool
	// HCNOmitsAdapterName: listed networks do not report their NetAdapterName policy.
	HCNOmitsAdapterName bool
}

// Models are the combinations the scenario tests run the Reconciler under: the default, and
// each choice where the sources disagree or are silent.
func Models() map[string]Model {
	return map[string]Model{
		"default":                 {},
		"networks persist":        {NetworksPersist: true},
		"bound NIC hidden":        {HideBoundAdapters: true},
		"hns manual":              {HNSManualStart: true},
		"vNIC suffix":             {VNICSuffix: " 2"},
		"forwarding persists":     {NetworksPersist: true, ForwardingPersists: true},
		"adapter name not echoed": {HCNOmitsAdapterName: true},
		"all of them":             {NetworksPersist: true, HideBoundAdapters: true, HNSManualStart: true, VNICSuffix: " 2", HCNOmitsAdapterName: true},
	}
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

// NewMemHost returns a host with these adapters, no HNS networks and no services, under the
// default Model.
func NewMemHost(adapters ...Adapter) *MemHost {
	return NewMemHostModel(Model{}, adapters...)
}

// NewMemHostModel returns a host with these adapters under model m.
func NewMemHostModel(m Model, adapters ...Adapter) *MemHost {
	h := &MemHost{model: m, nextPID: 1000, services: map[string]*memService{}, firewall: map[string]FirewallRule{}}
	h.machine = newMemMachine()
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
	stopped := hns && (h.hnsPID == 0 || h.noContainers)
	h.mu.Unlock()
	if hang {
		<-ctx.Done()
		return fmt.Errorf("HNS did not answer: %w", ctx.Err())
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if stopped {
		// HcnEnumerateNetworks and the other HCN calls fail while the Host Network Service is
		// not running (whether Windows starts it on demand for an HCN call is not documented:
		// the model does not, so the Reconciler must start it).
		return fmt.Errorf("the Host Network Service (hns) is not running")
	}
	return nil
}

// --- Host ---

func (h *MemHost) ListNetworks(ctx context.Context) ([]Network, error) {
	if err := h.enter(ctx, true); err != nil {
		return nil, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	out := cloneNetworks(h.networks)
	if h.model.HCNOmitsAdapterName {
		for i := range out {
			out[i].AdapterName = ""
		}
	}
	return out, nil
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
	a := h.adapterByName(spec.AdapterName)
	if a == nil {
		return Network{}, fmt.Errorf("create HNS network %s: network adapter %q not found", spec.Name, spec.AdapterName)
	}
	if a.Virtual {
		// HNS refuses a host vNIC as the adapter of an external network (Azure
		// azure-container-networking network/network_windows.go strips "vEthernet" names).
		return Network{}, fmt.Errorf("create HNS network %s: %q is a Hyper-V virtual adapter, not a network adapter an external vSwitch can bind", spec.Name, spec.AdapterName)
	}
	spec.AdapterName = a.Name
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
				h.removeEndpointVNIC(e)
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
	out := slices.Clone(h.endpoints)
	for i := range out {
		// HCN does not report an attachment: a host interface holds the endpoint's address.
		out[i].HostAttached = h.endpointVNIC(out[i]) != nil
	}
	return out, nil
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
			h.removeEndpointVNIC(e)
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
		e := &h.endpoints[i]
		if e.ID != id {
			continue
		}
		if h.endpointVNIC(*e) != nil {
			// HNS: "This endpoint is already attached to the switch." — no error by contract.
			return nil
		}
		e.HostAttached = true
		h.adapters = append(h.adapters, Adapter{Name: vnicName(e.Name) + h.model.VNICSuffix, MAC: normMAC(e.MAC), IPv4: []string{e.IP}, Virtual: true})
		h.event("endpoint-attach", e.Name, "compartment 1, vNIC "+vnicName(e.Name)+h.model.VNICSuffix)
		return nil
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
	if h.hnsPID == 0 {
		return 0, fmt.Errorf("service hns is %s", ServiceStopped)
	}
	return h.hnsPID, nil
}

func (h *MemHost) ServiceStatus(ctx context.Context, name string) (ServiceStatus, error) {
	if err := h.enter(ctx, false); err != nil {
		return ServiceStatus{}, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if name == HNSServiceName && !h.noContainers {
		if h.hnsPID == 0 {
			return ServiceStatus{State: ServiceStopped}, nil
		}
		return ServiceStatus{State: ServiceRunning, ProcessID: h.hnsPID}, nil
	}
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
	if name == HNSServiceName && !h.noContainers {
		if h.hnsPID == 0 {
			h.hnsPID = h.newPID()
			h.event("start", HNSServiceName, fmt.Sprintf("process %d", h.hnsPID))
		}
		return nil
	}
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
	if code, reason := h.loadImages(name); reason != "" {
		s.state, s.pid, s.exitCode = ServiceStopped, 0, code
		h.event("start-failed", name, reason)
		return fmt.Errorf("start service %s: %s", name, reason)
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
	h.releaseImages(name)
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
	out := make([]Adapter, 0, len(h.adapters))
	for _, a := range h.adapters {
		if a.Bound && h.model.HideBoundAdapters {
			continue
		}
		a.IPv4 = slices.Clone(a.IPv4)
		out = append(out, a)
	}
	return out, nil
}

// RenameAdapter models an adapter renamed by an image or driver update (the Reconciler never
// renames one: it follows the adapter by MAC and re-binds the networks to its new name).
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

func (h *MemHost) EnsureFirewallRule(ctx context.Context, rule FirewallRule) (FirewallChange, error) {
	if err := h.enter(ctx, false); err != nil {
		return FirewallUnchanged, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	have, ok := h.firewall[rule.Name]
	switch {
	case !ok:
		h.firewall[rule.Name] = rule
		h.event("firewall-rule", rule.Name, rule.Protocol+" "+rule.LocalPorts)
		return FirewallCreated, nil
	case strings.EqualFold(have.Protocol, rule.Protocol) && have.LocalPorts == rule.LocalPorts:
		return FirewallUnchanged, nil
	}
	h.firewall[rule.Name] = rule
	h.event("firewall-rule-update", rule.Name, have.Protocol+" "+have.LocalPorts+" -> "+rule.Protocol+" "+rule.LocalPorts)
	return FirewallUpdated, nil
}

// SetFirewallRule puts a rule in place as an operator or another tool would (tests).
func (h *MemHost) SetFirewallRule(rule FirewallRule) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.firewall[rule.Name] = rule
}

// FirewallRules returns the inbound rules by name.
func (h *MemHost) FirewallRules() map[string]FirewallRule {
	h.mu.Lock()
	defer h.mu.Unlock()
	return maps.Clone(h.firewall)
}

func (h *MemHost) SetForwarding(ctx context.Context, alias string) error {
	if err := h.enter(ctx, false); err != nil {
		return err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	a := h.adapterByName(alias)
	if a == nil || a.Bound {
		// GetIpInterfaceEntry finds no IPv4 interface: ERROR_NOT_FOUND (1168).
		return fmt.Errorf("set forwarding on %q: no IPv4 interface of that name", alias)
	}
	if !a.Forwarding {
		a.Forwarding = true
		h.event("forwarding", a.Name, "enabled")
	}
	return nil
}

// DeleteRoute is not an HNS call: HangHNS does not block it.
func (h *MemHost) DeleteRoute(ctx context.Context, rt HostRoute) error {
	if err := h.enter(ctx, false); err != nil {
		return err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.routes = slices.DeleteFunc(h.routes, func(have HostRoute) bool {
		if !sameRoute(have, rt) || !strings.EqualFold(have.InterfaceAlias, rt.InterfaceAlias) {
			return false
		}
		h.event("route-delete", have.DestinationPrefix, "via "+have.NextHop+" on "+have.InterfaceAlias)
		return true
	})
	return nil
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
		a := h.adapterByName(rt.InterfaceAlias)
		if a == nil || a.Bound {
			// ERROR_NOT_FOUND (1168) from CreateIpForwardEntry2 ("Element not found" from
			// New-NetRoute on a NIC bound to a vSwitch: k8s-node-setup.psm1
			// Add_GceMetadataServerRoute); the real host fails earlier, looking the alias up.
			return fmt.Errorf("interface %q not found: no network interface with IPv4 has that name", rt.InterfaceAlias)
		}
		rt.InterfaceAlias = a.Name
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

// endpointVNIC is the host vNIC of an attached endpoint: the virtual interface holding its
// address (nil when it is not attached).
func (h *MemHost) endpointVNIC(e Endpoint) *Adapter {
	for i := range h.adapters {
		a := &h.adapters[i]
		if a.Virtual && slices.Contains(a.IPv4, e.IP) && strings.HasPrefix(a.Name, vnicName(e.Name)) {
			return a
		}
	}
	return nil
}

// removeEndpointVNIC removes the vNIC of an endpoint that has just gone, with the routes on it.
func (h *MemHost) removeEndpointVNIC(gone Endpoint) {
	v := h.endpointVNIC(gone)
	if v == nil {
		return
	}
	h.removeInterface(v.Name, "removed with host endpoint "+gone.Name)
}

// removeInterface drops an interface and the routes that leave through it.
func (h *MemHost) removeInterface(name, why string) {
	h.adapters = slices.DeleteFunc(h.adapters, func(a Adapter) bool { return a.Name == name })
	h.routes = slices.DeleteFunc(h.routes, func(rt HostRoute) bool {
		if !strings.EqualFold(rt.InterfaceAlias, name) {
			return false
		}
		h.event("route-lost", rt.DestinationPrefix, rt.NextHop+" on "+name+", "+why)
		return true
	})
}

// --- what happens to a Windows node ---

// Reboot models a restart of the machine.
func (h *MemHost) Reboot() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, e := range h.endpoints {
		h.removeEndpointVNIC(e)
	}
	h.endpoints, h.lbs = nil, 0
	if h.model.NetworksPersist {
		if !h.model.ForwardingPersists {
			for i := range h.adapters {
				h.adapters[i].Forwarding = false
			}
		}
	} else {
		for _, n := range h.networks {
			h.unbindVSwitch(n.AdapterName)
		}
		h.networks = nil
	}
	// Routes are in the active store: a restart clears them.
	h.routes = nil
	for _, s := range h.services {
		s.state, s.pid, s.waiting = ServiceStopped, 0, false
	}
	h.hnsPID = 0
	h.event("reboot", "", "")
	h.rebootMachine()
	if !h.model.HNSManualStart {
		h.hnsPID = h.newPID()
	}
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

// bindVSwitch models the external vSwitch an HNS network binds to its adapter: the adapter's
// IP stack is unbound (Bound, no addresses) and the host keeps its connection through a new
// host vNIC "vEthernet (<adapter>)" with the adapter's MAC, which takes over its addresses and
// routes — except the cloud metadata route, which HNS drops (see MemHost). A second network on
// the same adapter shares the vSwitch.
func (h *MemHost) bindVSwitch(adapter string) {
	a := h.adapterByName(adapter)
	if a == nil || a.Bound {
		return
	}
	vnic := vnicName(a.Name)
	v := Adapter{Name: vnic, MAC: a.MAC, IPv4: a.IPv4, Virtual: true}
	a.IPv4, a.Bound, a.Forwarding = nil, true, false
	h.adapters = append(h.adapters, v)
	h.event("vnic-create", vnic, "addresses "+strings.Join(v.IPv4, ","))
	for i := 0; i < len(h.routes); i++ {
		rt := &h.routes[i]
		if !strings.EqualFold(rt.InterfaceAlias, adapter) {
			continue
		}
		if rt.DestinationPrefix == metadataRoute {
			h.event("route-lost", rt.DestinationPrefix, rt.NextHop+" on "+adapter+", dropped when the vSwitch was created")
			h.routes = slices.Delete(h.routes, i, i+1)
			i--
			continue
		}
		rt.InterfaceAlias = vnic
	}
}

// metadataRoute is the cloud metadata server's route (AWS, Azure, GCE: 169.254.169.254).
const metadataRoute = "169.254.169.254/32"

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
	h.removeInterface(vnic, "the vSwitch is gone")
	for j := range h.adapters {
		if h.adapters[j].MAC == v.MAC && h.adapters[j].Bound {
			h.adapters[j].IPv4 = append(h.adapters[j].IPv4, v.IPv4...)
			h.adapters[j].Bound = false
			break
		}
	}
	h.event("vnic-delete", vnic, "")
}

// SetRoute puts a route in place as Windows or an operator would before kubewin runs (a DHCP
// route to the metadata server, a stale route): on an existing interface, no checks.
func (h *MemHost) SetRoute(rt HostRoute) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.routes = append(h.routes, rt)
}

// Model is the behaviour this host was made with.
func (h *MemHost) Model() Model { return h.model }

// RemoveContainersFeature models a host without the Containers feature (Install-WindowsFeature
// Containers installs HNS): the hns service does not exist.
func (h *MemHost) RemoveContainersFeature() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.noContainers = true
}
