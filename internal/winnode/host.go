// Package winnode keeps a Windows node working after its files are written: it re-creates the
// HNS network and host endpoint that a reboot removes, starts the node services in order and
// never kube-proxy before its network, restarts kube-proxy after an HNS restart has dropped its
// load balancers, and re-binds the network to the cluster adapter when that adapter is renamed.
//
// The Reconciler is OS-neutral and is tested on Linux against MemHost, an in-memory model of
// a Windows host. The real Host (host_windows.go) talks to HNS through hcsshim's hcn package
// and to the service control manager through x/sys/windows/svc/mgr; it is compiled and vetted
// for Windows here but only a Windows machine can show that it behaves like the model.
package winnode

import (
	"context"
	"errors"
	"strings"
	"time"
)

// NetworkSpec is an HNS network as kubewin wants it: one subnet with its gateway, bound to one
// network adapter by name (HCN's NetAdapterName network policy).
type NetworkSpec struct {
	Name string
	// Type is the HCN network type: "L2Bridge" or "Overlay".
	Type string
	// Prefix is the subnet (the pod CIDR, masked); Gateway its first address.
	Prefix  string
	Gateway string
	// Routes of the subnet; the default route via Gateway when empty.
	Routes []Route
	// AdapterName is the network adapter the vSwitch binds to.
	AdapterName string
	// VSID is the overlay isolation ID (0 for L2Bridge).
	VSID int
}

// Route is a route of an HNS subnet.
type Route struct {
	DestinationPrefix string
	NextHop           string
}

// Network is an HNS network that exists on the host.
type Network struct {
	ID string
	NetworkSpec
}

// EndpointSpec is an HNS endpoint: the host endpoint (.2 of the pod CIDR) in kubewin's designs.
type EndpointSpec struct {
	Name string
	// Network is the name of the network the endpoint belongs to.
	Network      string
	IP           string
	PrefixLength int
	// MAC is left empty to let HNS choose one from the network's MAC pool.
	MAC string
}

// Endpoint is an HNS endpoint that exists on the host.
type Endpoint struct {
	ID        string
	NetworkID string
	EndpointSpec
	// HostAttached is set once the endpoint is attached to the host's default compartment (1):
	// a host interface holds the endpoint's IP. HCN does not report the attachment; the vNIC is
	// found by address, as flannel finds it (flannel-io/flannel pkg/backend/hostgw/
	// hostgw_windows.go: GetInterfaceIndexByIP), since its name may carry a suffix.
	HostAttached bool
}

// ServiceState is the SCM state of a service, reduced to what the node service acts on.
type ServiceState string

const (
	ServiceStopped  ServiceState = "Stopped"
	ServicePending  ServiceState = "Pending" // start, stop, continue or pause pending
	ServiceRunning  ServiceState = "Running"
	ServiceNotFound ServiceState = "NotInstalled"
)

// StartType is the SCM start type of a service.
type StartType string

const (
	// StartAutomatic services are started by the SCM at boot.
	StartAutomatic StartType = "Automatic"
	// StartManual services are started by the node service once the HNS network exists.
	StartManual StartType = "Manual"
)

// ServiceStatus is what the SCM reports about a service.
type ServiceStatus struct {
	State     ServiceState
	ProcessID uint32
	// ExitCode is the Win32 exit code of the last run (0 when unknown).
	ExitCode uint32
}

// ServiceConfig installs a service.
type ServiceConfig struct {
	Name, DisplayName, Description string
	// Binary and Args form the command line the SCM starts.
	Binary string
	Args   []string
	// DependsOn are started by the SCM before this service, and a stop of one of them stops
	// this service first.
	DependsOn []string
	StartType StartType
	// Account is the service account; empty for LocalSystem.
	Account string
	// Recovery are the actions after the first, second and later failures (restart delays);
	// RecoveryReset is the time without failure after which the count starts again.
	Recovery      []time.Duration
	RecoveryReset time.Duration
}

// Adapter is a network interface of the host: a physical (or cloud) NIC, or a Hyper-V host
// vNIC ("vEthernet (<name>)") of a vSwitch or of an HNS endpoint attached to the host.
type Adapter struct {
	Name string
	// MAC is lower case with colons (net.HardwareAddr.String()).
	MAC  string
	IPv4 []string
	// Bound is set for a NIC bound to an external vSwitch: its IP stack is unbound, it has no
	// addresses, and GetAdaptersAddresses lists it only with GAA_FLAG_INCLUDE_ALL_INTERFACES
	// (Go's net.Interfaces does not pass that flag and never sees it).
	Bound bool
	// Virtual is set for a Hyper-V host vNIC (driver "Hyper-V Virtual Ethernet Adapter").
	Virtual bool
	// Forwarding says whether IPv4 forwarding is enabled on the interface
	// (MIB_IPINTERFACE_ROW.ForwardingEnabled; Get-NetIPInterface's Forwarding).
	Forwarding bool
}

// FirewallChange is what EnsureFirewallRule did.
type FirewallChange string

const (
	FirewallUnchanged FirewallChange = ""
	FirewallCreated   FirewallChange = "created"
	// FirewallUpdated: a rule of that name existed with another protocol or other ports.
	FirewallUpdated FirewallChange = "updated"
)

// FirewallRule is an inbound allow rule.
type FirewallRule struct {
	Name, DisplayName string
	Protocol          string // "TCP" or "UDP"
	LocalPorts        string // "10250" or "30000-32767"
}

// HostRoute is an IPv4 route of the Windows host itself (not of an HNS subnet): the routes the
// plan asks for (plan.WindowsNodePlan.Routes), such as the cluster CIDRs via the pod CIDR's
// gateway on the host endpoint's vNIC in the upstream-ToR designs.
type HostRoute struct {
	// DestinationPrefix is an IPv4 prefix ("10.244.0.0/16"); NextHop an IPv4 address
	// ("0.0.0.0" for an on-link route).
	DestinationPrefix string
	NextHop           string
	// InterfaceAlias names the interface the route leaves through, as Windows names adapters
	// and vNICs ("vEthernet (cbr0)"). Empty lets Windows choose: the interface it would use to
	// reach NextHop.
	InterfaceAlias string
}

// String is "10.244.0.0/16 via 10.244.3.1 on vEthernet (cbr0)".
func (r HostRoute) String() string {
	s := r.DestinationPrefix + " via " + r.NextHop
	if r.InterfaceAlias != "" {
		s += " on " + r.InterfaceAlias
	}
	return s
}

// HNSServiceName is the SCM name of the Host Network Service.
const HNSServiceName = "hns"

// vnicName is the name of the host vNIC that attaching an HNS endpoint to the host creates, and
// of the vSwitch's vNIC on an adapter. Windows may append a suffix (" 2") when a connection of
// that name exists already, so vNICs are found by address or MAC, not by this name alone.
func vnicName(name string) string { return "vEthernet (" + name + ")" }

// isVNICName says whether an interface name is a Hyper-V host vNIC's.
func isVNICName(name string) bool { return strings.HasPrefix(name, "vEthernet (") }

// vnicInner is the name inside "vEthernet (<name>)[ suffix]" ("" for another name).
func vnicInner(name string) string {
	rest, ok := strings.CutPrefix(name, "vEthernet (")
	if !ok {
		return ""
	}
	i := strings.LastIndex(rest, ")")
	if i <= 0 {
		return ""
	}
	return rest[:i]
}

// ACLGrant is an access a restricted path gives an account besides SYSTEM and Administrators.
type ACLGrant struct {
	// Account is a name LookupAccountName resolves ("NT AUTHORITY\NetworkService").
	Account string
	// Access is "R" (read and execute) or "M" (modify).
	Access string
}

// ErrServiceNotInstalled is returned (wrapped) for a service the SCM does not know.
var ErrServiceNotInstalled = errors.New("service is not installed")

// Host is what the node service needs from a Windows host. Every method honours ctx: a call
// that the host does not answer in time returns ctx's error, so one pass of the Reconciler
// never blocks forever (HNS calls are known to hang while HNS restarts).
type Host interface {
	// ListNetworks returns the HNS networks (hcn.ListNetworks; HcnEnumerateNetworks).
	ListNetworks(ctx context.Context) ([]Network, error)
	// CreateNetwork creates an HNS network (hcn.HostComputeNetwork.Create; HcnCreateNetwork,
	// schema v2, NetAdapterName policy). The host's adapter is bound to a new vSwitch and its
	// connection drops for a few seconds.
	CreateNetwork(ctx context.Context, spec NetworkSpec) (Network, error)
	// DeleteNetwork deletes an HNS network by ID (hcn.HostComputeNetwork.Delete; HcnDeleteNetwork).
	DeleteNetwork(ctx context.Context, id string) error
	// ListEndpoints returns the HNS endpoints (hcn.ListEndpoints; HcnEnumerateEndpoints).
	ListEndpoints(ctx context.Context) ([]Endpoint, error)
	// CreateEndpoint creates an endpoint on a network (hcn.HostComputeNetwork.CreateEndpoint;
	// HcnCreateEndpoint).
	CreateEndpoint(ctx context.Context, networkID string, spec EndpointSpec) (Endpoint, error)
	// DeleteEndpoint deletes an endpoint (hcn.HostComputeEndpoint.Delete; HcnDeleteEndpoint).
	DeleteEndpoint(ctx context.Context, id string) error
	// AttachHostEndpoint attaches an endpoint to the host's default compartment (1), which
	// creates the "vEthernet (<name>)" vNIC (HNS v1 POST endpoints/<id>/attach through
	// hcsshim.HNSEndpoint.HostAttach, as hns.psm1's Attach-HnsHostEndpoint and flannel do).
	// An endpoint that is attached already is not an error: HNS answers "This endpoint is
	// already attached to the switch." (HCN_E_ENDPOINT_ALREADY_ATTACHED, 0x803b0014), which
	// flannel's hostgw_windows.go and Calico's Windows data plane treat as success.
	AttachHostEndpoint(ctx context.Context, id string) error
	// LoadBalancerCount counts HNS load balancers, which only kube-proxy creates on a node
	// (hcn.ListLoadBalancers; HcnEnumerateLoadBalancers).
	LoadBalancerCount(ctx context.Context) (int, error)
	// HNSProcessID is the process ID of the "hns" service (mgr.Service.Query().ProcessId); a
	// change means HNS restarted and dropped every load balancer.
	HNSProcessID(ctx context.Context) (uint32, error)

	// ServiceStatus queries a service (mgr.Mgr.OpenService, mgr.Service.Query).
	ServiceStatus(ctx context.Context, name string) (ServiceStatus, error)
	// StartService starts a service and waits until it runs or stops again
	// (mgr.Service.Start, then mgr.Service.Query until not pending).
	StartService(ctx context.Context, name string) error
	// StopService stops a service and waits until it has stopped (mgr.Service.Control(svc.Stop)).
	StopService(ctx context.Context, name string) error
	// RestartService stops then starts a service.
	RestartService(ctx context.Context, name string) error
	// InstallService creates a service with its dependencies and restart-on-failure recovery
	// actions (mgr.Mgr.CreateService, mgr.Service.SetRecoveryActions,
	// SetRecoveryActionsOnNonCrashFailures).
	InstallService(ctx context.Context, cfg ServiceConfig) error
	// UpdateService replaces an installed service's definition (mgr.Service.UpdateConfig;
	// ChangeServiceConfig); a running service uses it from its next start.
	UpdateService(ctx context.Context, cfg ServiceConfig) error

	// Adapters lists the network interfaces with their MAC, IPv4 addresses and forwarding
	// state, including NICs bound to a vSwitch (GetAdaptersAddresses with
	// GAA_FLAG_INCLUDE_ALL_INTERFACES, and GetIpInterfaceEntry per interface). One call per
	// pass: the Reconciler reads everything it needs about interfaces from one listing.
	Adapters(ctx context.Context) ([]Adapter, error)
	// SetForwarding enables IPv4 forwarding on the interface named alias (SetIpInterfaceEntry
	// with ForwardingEnabled; what `netsh interface ipv4 set interface <alias>
	// forwarding=enabled` in kubernetes cluster/gce/windows/k8s-node-setup.psm1 and
	// Set-NetIPInterface -Forwarding Enabled do).
	SetForwarding(ctx context.Context, alias string) error
	// EnsureFirewallRule makes the inbound allow rule exist as given: created when no rule of
	// that name exists, changed when one exists with another protocol or other ports
	// (INetFwPolicy2 through COM is the API; the real host uses netsh advfirewall).
	EnsureFirewallRule(ctx context.Context, rule FirewallRule) (FirewallChange, error)
	// RestrictACL gives path a protected DACL — full control for SYSTEM and Administrators,
	// plus grants, nothing inherited from above — inherited by everything below a directory
	// (SetNamedSecurityInfo with PROTECTED_DACL_SECURITY_INFORMATION).
	RestrictACL(ctx context.Context, path string, grants ...ACLGrant) error

	// Routes lists the host's IPv4 routes with the alias of the interface each leaves through
	// (GetIpForwardTable2 with AF_INET, the interface alias from the row's InterfaceIndex).
	Routes(ctx context.Context) ([]HostRoute, error)
	// AddRoute adds an IPv4 route to the active store: it is not persistent, and is gone after a
	// reboot or with the interface it names (CreateIpForwardEntry2 after
	// InitializeIpForwardEntry; an empty InterfaceAlias takes the interface GetBestInterfaceEx
	// reports for the next hop). Adding a route that exists is not an error.
	AddRoute(ctx context.Context, route HostRoute) error
	// DeleteRoute removes an IPv4 route (DeleteIpForwardEntry2 on the row Routes listed). A
	// route that does not exist is not an error.
	DeleteRoute(ctx context.Context, route HostRoute) error
}
