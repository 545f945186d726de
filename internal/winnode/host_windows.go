//go:build windows

package winnode

// The real Windows host. It cannot run where kubewin is built and tested: it is compiled and
// vetted for Windows (GOOS=windows go vet, GOOS=windows go test -c), and the Reconciler's logic
// is tested against MemHost. What it reads from Windows is decided by OS-neutral code tested
// on Linux (gaa.go: which interfaces are adapters, bound, virtual; netshrule.go: netsh's rule
// listing; wellknownsid.go: accounts written by SID).
//
// What only a Windows machine can show, each with the command that answers it:
//   - HCN echoes the NetAdapterName policy and the subnet's default route on listed networks
//     (networkDiff treats an unreported adapter as matching):
//     Get-HnsNetwork | ConvertTo-Json -Depth 10
//   - a NIC bound to an external vSwitch is listed by GetAdaptersAddresses with
//     GAA_FLAG_INCLUDE_ALL_INTERFACES, without IP_ADAPTER_IPV4_ENABLED, as a hardware interface,
//     and its filter interfaces carry FilterInterface (adapterFromGAA):
//     Get-NetAdapter -IncludeHidden | ft Name,InterfaceDescription,MacAddress,HardwareInterface,
//     FilterInterface,Status ; Get-NetAdapterBinding -Name * -ComponentID ms_tcpip
//   - the host endpoint's vNIC holds the endpoint's IP after HostAttach (HostAttached):
//     Get-NetIPAddress -AddressFamily IPv4 | ft InterfaceAlias,IPAddress
//   - an endpoint created without routes gives the host vNIC no default gateway (CreateEndpoint):
//     Get-NetRoute -DestinationPrefix 0.0.0.0/0 | ft InterfaceAlias,NextHop,RouteMetric
//   - SetIpInterfaceEntry's forwarding survives a reboot on a vNIC that survives it:
//     Get-NetIPInterface -AddressFamily IPv4 | ft ifAlias,Forwarding
//   - netsh's exit codes (1 for "No rules match the specified criteria.") and English keys
//     (EnsureFirewallRule): netsh advfirewall firewall show rule name=kubelet dir=in verbose;
//     echo $LASTEXITCODE
//   - how netsh quotes names with blanks (EnsureFirewallRule).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"os/exec"
	"strings"
	"syscall"
	"time"
	"unsafe"

	"github.com/Microsoft/hcsshim"
	"github.com/Microsoft/hcsshim/hcn"
	"golang.org/x/sys/windows"
	"golang.org/x/sys/windows/svc"
	"golang.org/x/sys/windows/svc/mgr"
)

// WindowsHost is the Host of the machine the node service runs on. It needs an elevated
// process (the SCM and HNS refuse other callers).
type WindowsHost struct {
	// PollInterval is how often a starting or stopping service is queried (250 ms when zero).
	PollInterval time.Duration
}

var _ Host = (*WindowsHost)(nil)

// call runs f and returns when it returns or ctx ends, whichever is first. HCN and SCM calls
// take no context and HNS calls are known to hang while HNS restarts; a call abandoned here
// finishes in its goroutine and its result is dropped.
func call[T any](ctx context.Context, f func() (T, error)) (T, error) {
	type result struct {
		v   T
		err error
	}
	ch := make(chan result, 1)
	go func() {
		v, err := f()
		ch <- result{v, err}
	}()
	select {
	case r := <-ch:
		return r.v, r.err
	case <-ctx.Done():
		var zero T
		return zero, ctx.Err()
	}
}

func call0(ctx context.Context, f func() error) error {
	_, err := call(ctx, func() (struct{}, error) { return struct{}{}, f() })
	return err
}

func (h *WindowsHost) ListNetworks(ctx context.Context) ([]Network, error) {
	ns, err := call(ctx, hcn.ListNetworks)
	if err != nil {
		return nil, fmt.Errorf("list HNS networks: %w", err)
	}
	out := make([]Network, 0, len(ns))
	for _, n := range ns {
		out = append(out, fromHCNNetwork(n))
	}
	return out, nil
}

func fromHCNNetwork(n hcn.HostComputeNetwork) Network {
	out := Network{ID: n.Id, NetworkSpec: NetworkSpec{Name: n.Name, Type: string(n.Type)}}
	for _, p := range n.Policies {
		if p.Type != hcn.NetAdapterName {
			continue
		}
		var s hcn.NetAdapterNameNetworkPolicySetting
		if json.Unmarshal(p.Settings, &s) == nil {
			out.AdapterName = s.NetworkAdapterName
		}
	}
	if len(n.Ipams) > 0 && len(n.Ipams[0].Subnets) > 0 {
		sub := n.Ipams[0].Subnets[0]
		out.Prefix = sub.IpAddressPrefix
		for _, r := range sub.Routes {
			out.Routes = append(out.Routes, Route{DestinationPrefix: r.DestinationPrefix, NextHop: r.NextHop})
			if r.DestinationPrefix == "0.0.0.0/0" {
				out.Gateway = r.NextHop
			}
		}
		for _, raw := range sub.Policies {
			var p hcn.SubnetPolicy
			if json.Unmarshal(raw, &p) != nil || p.Type != hcn.VSID {
				continue
			}
			var v hcn.VsidPolicySetting
			if json.Unmarshal(p.Settings, &v) == nil {
				out.VSID = int(v.IsolationId)
			}
		}
	}
	return out
}

func (h *WindowsHost) CreateNetwork(ctx context.Context, spec NetworkSpec) (Network, error) {
	adapter, err := json.Marshal(hcn.NetAdapterNameNetworkPolicySetting{NetworkAdapterName: spec.AdapterName})
	if err != nil {
		return Network{}, err
	}
	routes := spec.Routes
	if len(routes) == 0 {
		routes = []Route{{DestinationPrefix: "0.0.0.0/0", NextHop: spec.Gateway}}
	}
	sub := hcn.Subnet{IpAddressPrefix: spec.Prefix}
	for _, r := range routes {
		sub.Routes = append(sub.Routes, hcn.Route{DestinationPrefix: r.DestinationPrefix, NextHop: r.NextHop})
	}
	if spec.VSID != 0 {
		settings, err := json.Marshal(hcn.VsidPolicySetting{IsolationId: uint32(spec.VSID)})
		if err != nil {
			return Network{}, err
		}
		p, err := json.Marshal(hcn.SubnetPolicy{Type: hcn.VSID, Settings: settings})
		if err != nil {
			return Network{}, err
		}
		sub.Policies = append(sub.Policies, p)
	}
	n := &hcn.HostComputeNetwork{
		Name:          spec.Name,
		Type:          hcn.NetworkType(spec.Type),
		Policies:      []hcn.NetworkPolicy{{Type: hcn.NetAdapterName, Settings: adapter}},
		Ipams:         []hcn.Ipam{{Type: "Static", Subnets: []hcn.Subnet{sub}}},
		SchemaVersion: hcn.V2SchemaVersion(),
	}
	created, err := call(ctx, n.Create)
	if err != nil {
		return Network{}, fmt.Errorf("create HNS network %s: %w", spec.Name, err)
	}
	return fromHCNNetwork(*created), nil
}

func (h *WindowsHost) DeleteNetwork(ctx context.Context, id string) error {
	return call0(ctx, func() error {
		n, err := hcn.GetNetworkByID(id)
		if err != nil {
			return fmt.Errorf("HNS network %s: %w", id, err)
		}
		return n.Delete()
	})
}

// ListEndpoints lists the HNS endpoints and judges each one's host attachment by address: an
// endpoint is attached when a host interface holds its IP (host.go, Endpoint.HostAttached), the
// vNIC's name being "vEthernet (<name>)" possibly with a suffix. One interface listing serves
// every endpoint.
func (h *WindowsHost) ListEndpoints(ctx context.Context) ([]Endpoint, error) {
	eps, err := call(ctx, hcn.ListEndpoints)
	if err != nil {
		return nil, fmt.Errorf("list HNS endpoints: %w", err)
	}
	ifs, err := call(ctx, listIPInterfaces)
	if err != nil {
		return nil, fmt.Errorf("list HNS endpoints: list host interfaces: %w", err)
	}
	var adapters []Adapter
	for _, i := range ifs {
		adapters = append(adapters, Adapter{Name: i.FriendlyName, IPv4: i.IPv4})
	}
	held := hostIPv4Set(adapters)
	out := make([]Endpoint, 0, len(eps))
	for _, e := range eps {
		out = append(out, fromHCNEndpoint(e, held))
	}
	return out, nil
}

// fromHCNEndpoint converts an HCN endpoint; held is the set of addresses host interfaces hold
// (nil for an endpoint that cannot be attached yet).
func fromHCNEndpoint(e hcn.HostComputeEndpoint, held map[netip.Addr]bool) Endpoint {
	out := Endpoint{ID: e.Id, NetworkID: e.HostComputeNetwork, EndpointSpec: EndpointSpec{Name: e.Name, MAC: e.MacAddress}}
	if len(e.IpConfigurations) > 0 {
		out.IP, out.PrefixLength = e.IpConfigurations[0].IpAddress, int(e.IpConfigurations[0].PrefixLength)
	}
	// HCN does not report the attachment on the endpoint; the vNIC is found by address, as
	// flannel finds it (flannel-io/flannel pkg/backend/hostgw/hostgw_windows.go:
	// ip.GetInterfaceByIP on the endpoint's address after HostAttach).
	out.HostAttached = heldByHost(held, out.IP)
	return out
}

func (h *WindowsHost) CreateEndpoint(ctx context.Context, networkID string, spec EndpointSpec) (Endpoint, error) {
	created, err := call(ctx, func() (*hcn.HostComputeEndpoint, error) {
		n, err := hcn.GetNetworkByID(networkID)
		if err != nil {
			return nil, fmt.Errorf("HNS network %s: %w", networkID, err)
		}
		return n.CreateEndpoint(&hcn.HostComputeEndpoint{
			Name:               spec.Name,
			HostComputeNetwork: networkID,
			IpConfigurations:   []hcn.IpConfig{{IpAddress: spec.IP, PrefixLength: uint8(spec.PrefixLength)}},
			// No routes: the host endpoint gets no gateway. The host vNIC must not get a
			// default route through the pod network; upstream creates the same endpoint with
			// HNS v1's New-HnsEndpoint -Gateway "0.0.0.0" (kubernetes
			// cluster/gce/windows/k8s-node-setup.psm1). In the v2 schema an endpoint's gateway
			// is its 0.0.0.0/0 route: microsoft/SDN Kubernetes/windows/hns.v2.psm1
			// New-HnsEndpoint adds {DestinationPrefix 0.0.0.0/0, NextHop <gateway>} to Routes
			// only when -GatewayAddress is given, containernetworking/plugins
			// pkg/hns/endpoint_windows.go GenerateHcnEndpoint passes the gateway the same way,
			// and without one "no ... routes will be added to the endpoint, which is already
			// supported by existing HNS behavior" (microsoft/windows-container-networking#116,
			// which also shows that HNS now rejects a default route with an empty NextHop).
			// hcn.HostComputeEndpoint.Routes is omitempty: nil sends no Routes at all.
			Routes:        nil,
			MacAddress:    spec.MAC,
			SchemaVersion: hcn.V2SchemaVersion(),
		})
	})
	if err != nil {
		return Endpoint{}, fmt.Errorf("create HNS endpoint %s: %w", spec.Name, err)
	}
	// A new endpoint is attached to nothing yet.
	return fromHCNEndpoint(*created, nil), nil
}

func (h *WindowsHost) DeleteEndpoint(ctx context.Context, id string) error {
	return call0(ctx, func() error {
		e, err := hcn.GetEndpointByID(id)
		if err != nil {
			return fmt.Errorf("HNS endpoint %s: %w", id, err)
		}
		return e.Delete()
	})
}

func (h *WindowsHost) AttachHostEndpoint(ctx context.Context, id string) error {
	return call0(ctx, func() error {
		e, err := hcsshim.GetHNSEndpointByID(id)
		if err != nil {
			return fmt.Errorf("HNS endpoint %s: %w", id, err)
		}
		// Compartment 1 is the host's default compartment (github.com/Microsoft/hcsshim v0.15.0
		// internal/hns/hnsendpoint.go HostAttach).
		if err := e.HostAttach(1); err != nil {
			if alreadyAttached(err) {
				return nil
			}
			return fmt.Errorf("attach HNS endpoint %s to the host: %w", e.Name, err)
		}
		return nil
	})
}

// alreadyAttached says whether HostAttach failed because the endpoint is attached already.
// hcsshim v0.15.0 internal/hns/hnsfuncs.go hnsCall returns fmt.Errorf("hns failed with error :
// %s", hnsresponse.Error) when HNS answers with a failure, and an internal/hcserror.HcsError
// (no Unwrap; its message ends in "(0x<code>)") when the HNSCall itself fails with an HRESULT;
// neither lets errors.Is see a code. flannel matches the message ("hcsshim lacks some
// validations to detect the error, so we judge it by error message", flannel-io/flannel
// pkg/backend/hostgw/hostgw_windows.go, flannel-io/flannel#1391); the HRESULT is
// HCN_E_ENDPOINT_ALREADY_ATTACHED (x/sys/windows zerrors_windows.go: 0x803B0014), whose text is
// that sentence. Either form is recognised.
func alreadyAttached(err error) bool {
	msg := err.Error()
	code := fmt.Sprintf("(0x%x)", uint32(windows.HCN_E_ENDPOINT_ALREADY_ATTACHED))
	return strings.Contains(msg, "This endpoint is already attached to the switch.") ||
		strings.Contains(strings.ToLower(msg), code)
}

func (h *WindowsHost) LoadBalancerCount(ctx context.Context) (int, error) {
	lbs, err := call(ctx, hcn.ListLoadBalancers)
	if err != nil {
		return 0, fmt.Errorf("list HNS load balancers: %w", err)
	}
	return len(lbs), nil
}

func (h *WindowsHost) HNSProcessID(ctx context.Context) (uint32, error) {
	st, err := h.ServiceStatus(ctx, HNSServiceName)
	if err != nil {
		return 0, err
	}
	if st.State != ServiceRunning {
		return 0, fmt.Errorf("service %s is %s", HNSServiceName, st.State)
	}
	return st.ProcessID, nil
}

// withService opens a service of the local SCM for f.
func withService(name string, f func(*mgr.Service) error) error {
	m, err := mgr.Connect()
	if err != nil {
		return fmt.Errorf("connect to the service control manager: %w", err)
	}
	defer m.Disconnect()
	s, err := m.OpenService(name)
	if err != nil {
		if errors.Is(err, windows.ERROR_SERVICE_DOES_NOT_EXIST) {
			return fmt.Errorf("service %s: %w", name, ErrServiceNotInstalled)
		}
		return fmt.Errorf("open service %s: %w", name, err)
	}
	defer s.Close()
	return f(s)
}

func toStatus(st svc.Status) ServiceStatus {
	out := ServiceStatus{ProcessID: st.ProcessId, ExitCode: st.Win32ExitCode}
	switch st.State {
	case svc.Stopped:
		out.State = ServiceStopped
	case svc.Running:
		out.State = ServiceRunning
	default:
		out.State = ServicePending
	}
	if out.ExitCode == uint32(windows.ERROR_SERVICE_SPECIFIC_ERROR) {
		out.ExitCode = st.ServiceSpecificExitCode
	}
	return out
}

func (h *WindowsHost) ServiceStatus(ctx context.Context, name string) (ServiceStatus, error) {
	return call(ctx, func() (ServiceStatus, error) {
		var out ServiceStatus
		err := withService(name, func(s *mgr.Service) error {
			st, err := s.Query()
			if err != nil {
				return fmt.Errorf("query service %s: %w", name, err)
			}
			out = toStatus(st)
			return nil
		})
		if errors.Is(err, ErrServiceNotInstalled) {
			out.State = ServiceNotFound
		}
		return out, err
	})
}

// wait queries s until it leaves the pending states or ctx ends.
func (h *WindowsHost) wait(ctx context.Context, s *mgr.Service) (svc.Status, error) {
	every := h.PollInterval
	if every <= 0 {
		every = 250 * time.Millisecond
	}
	for {
		st, err := s.Query()
		if err != nil {
			return st, err
		}
		if st.State == svc.Running || st.State == svc.Stopped {
			return st, nil
		}
		if err := sleepCtx(ctx, every); err != nil {
			return st, err
		}
	}
}

func (h *WindowsHost) StartService(ctx context.Context, name string) error {
	return call0(ctx, func() error {
		return withService(name, func(s *mgr.Service) error {
			if err := s.Start(); err != nil && !errors.Is(err, windows.ERROR_SERVICE_ALREADY_RUNNING) {
				return fmt.Errorf("start service %s: %w", name, err)
			}
			st, err := h.wait(ctx, s)
			if err != nil {
				return fmt.Errorf("start service %s: %w", name, err)
			}
			if st.State != svc.Running {
				return fmt.Errorf("service %s stopped right after starting (exit code %d)", name, toStatus(st).ExitCode)
			}
			return nil
		})
	})
}

func (h *WindowsHost) StopService(ctx context.Context, name string) error {
	return call0(ctx, func() error {
		return withService(name, func(s *mgr.Service) error {
			if _, err := s.Control(svc.Stop); err != nil && !errors.Is(err, windows.ERROR_SERVICE_NOT_ACTIVE) {
				return fmt.Errorf("stop service %s: %w", name, err)
			}
			st, err := h.wait(ctx, s)
			if err != nil {
				return fmt.Errorf("stop service %s: %w", name, err)
			}
			if st.State != svc.Stopped {
				return fmt.Errorf("stop service %s: it is %s", name, toStatus(st).State)
			}
			return nil
		})
	})
}

func (h *WindowsHost) RestartService(ctx context.Context, name string) error {
	if err := h.StopService(ctx, name); err != nil {
		return err
	}
	return h.StartService(ctx, name)
}

func (h *WindowsHost) InstallService(ctx context.Context, cfg ServiceConfig) error {
	return call0(ctx, func() error {
		m, err := mgr.Connect()
		if err != nil {
			return fmt.Errorf("connect to the service control manager: %w", err)
		}
		defer m.Disconnect()
		c := mgr.Config{
			DisplayName: cfg.DisplayName, Description: cfg.Description,
			StartType: mgr.StartManual, ErrorControl: mgr.ErrorNormal,
			Dependencies: cfg.DependsOn, ServiceStartName: cfg.Account,
		}
		if cfg.StartType == StartAutomatic {
			c.StartType = mgr.StartAutomatic
		}
		s, err := m.CreateService(cfg.Name, cfg.Binary, c, cfg.Args...)
		if err != nil {
			return fmt.Errorf("install service %s: %w", cfg.Name, err)
		}
		defer s.Close()
		if len(cfg.Recovery) > 0 {
			actions := make([]mgr.RecoveryAction, len(cfg.Recovery))
			for i, d := range cfg.Recovery {
				actions[i] = mgr.RecoveryAction{Type: mgr.ServiceRestart, Delay: d}
			}
			if err := s.SetRecoveryActions(actions, uint32(cfg.RecoveryReset/time.Second)); err != nil {
				return fmt.Errorf("recovery actions of service %s: %w", cfg.Name, err)
			}
			// Apply them also when the process exits with an error, not only on a crash
			// (sc.exe failureflag 1 in services/install.ps1).
			if err := s.SetRecoveryActionsOnNonCrashFailures(true); err != nil {
				return fmt.Errorf("recovery actions of service %s: %w", cfg.Name, err)
			}
		}
		return nil
	})
}

// netsh runs netsh with a command line written out in full: netsh parses name="a b" itself,
// which Go's argument quoting ("name=a b") would not produce.
func netsh(ctx context.Context, args string) (string, error) {
	cmd := exec.CommandContext(ctx, "netsh.exe")
	cmd.SysProcAttr = &syscall.SysProcAttr{CmdLine: "netsh.exe " + args}
	out, err := cmd.CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

func netshQuote(field, s string) (string, error) {
	if strings.ContainsAny(s, "\"\r\n") {
		return "", fmt.Errorf("%s %q contains a quote or line break", field, s)
	}
	return `"` + s + `"`, nil
}

// EnsureFirewallRule uses netsh advfirewall, which names rules by their display name: the rule
// is looked up, created and changed by DisplayName (Name when DisplayName is empty), so a rule
// that render's firewall.ps1 created with New-NetFirewallRule is found too. Only inbound rules
// (dir=in) are looked at and changed. INetFwPolicy2 through COM would address rules the same way
// without a child process and without netsh's localized output.
//
// `show rule` exits non-zero with "No rules match the specified criteria." when there is no
// such rule; the rule is then added. Otherwise its protocol and local ports are read
// (netshrule.go) and, when a rule of that name has others, `set rule ... new protocol=
// localport=` changes them (`set rule` updates every rule that matches, and fails when none
// does: netsh advfirewall firewall set rule's help, learn.microsoft.com/previous-versions/
// windows/it-pro/windows-server-2008-r2-and-2008/dd734783(v=ws.10)). netsh's output is
// localized: when the listing cannot be read (no English "Rule Name:"/"Protocol:" keys) the rule
// is left unchanged, never rewritten on every pass.
func (h *WindowsHost) EnsureFirewallRule(ctx context.Context, rule FirewallRule) (FirewallChange, error) {
	display := rule.DisplayName
	if display == "" {
		display = rule.Name
	}
	name, err := netshQuote("firewall rule name", display)
	if err != nil {
		return FirewallUnchanged, err
	}
	if rule.Protocol == "" || rule.LocalPorts == "" || strings.ContainsAny(rule.Protocol+rule.LocalPorts, " \"\r\n") {
		return FirewallUnchanged, fmt.Errorf("firewall rule %s: protocol %q or ports %q are empty or contain blanks or quotes", display, rule.Protocol, rule.LocalPorts)
	}
	out, err := netsh(ctx, "advfirewall firewall show rule name="+name+" dir=in verbose")
	if ctx.Err() != nil {
		return FirewallUnchanged, ctx.Err()
	}
	if err != nil {
		args := "advfirewall firewall add rule name=" + name + " dir=in action=allow protocol=" + rule.Protocol +
			" localport=" + rule.LocalPorts + " profile=any"
		if out, err := netsh(ctx, args); err != nil {
			return FirewallUnchanged, fmt.Errorf("add firewall rule %s: netsh: %w: %s", display, err, out)
		}
		return FirewallCreated, nil
	}
	if compareFirewallRules(parseNetshRules(out), rule) != firewallRuleDiffers {
		return FirewallUnchanged, nil
	}
	args := "advfirewall firewall set rule name=" + name + " dir=in new protocol=" + rule.Protocol +
		" localport=" + rule.LocalPorts
	if out, err := netsh(ctx, args); err != nil {
		return FirewallUnchanged, fmt.Errorf("change firewall rule %s to %s %s: netsh: %w: %s", display, rule.Protocol, rule.LocalPorts, err, out)
	}
	return FirewallUpdated, nil
}

// Routes reads the IPv4 route table with GetIpForwardTable2 (AF_INET) and frees it with
// FreeMibTable, as the documentation asks
// (learn.microsoft.com/windows/win32/api/netioapi/nf-netioapi-getipforwardtable2). A row names
// its interface by LUID; the alias is that interface's friendly name from one
// GetAdaptersAddresses listing (every interface, the loopback included). A row whose interface
// is not in the listing (gone in between) is left out: its routes go with it.
func (h *WindowsHost) Routes(ctx context.Context) ([]HostRoute, error) {
	return call(ctx, func() ([]HostRoute, error) {
		ifs, err := listIPInterfaces()
		if err != nil {
			return nil, fmt.Errorf("list host routes: list interfaces: %w", err)
		}
		aliases := make(map[uint64]string, len(ifs))
		for _, i := range ifs {
			aliases[i.luid] = i.FriendlyName
		}
		var table *windows.MibIpForwardTable2
		if err := windows.GetIpForwardTable2(windows.AF_INET, &table); err != nil {
			return nil, fmt.Errorf("list host routes: GetIpForwardTable2: %w", err)
		}
		defer windows.FreeMibTable(unsafe.Pointer(table))
		rows := table.Rows()
		out := make([]HostRoute, 0, len(rows))
		for i := range rows {
			row := &rows[i]
			dst, ok1 := ipv4Of(&row.DestinationPrefix.Prefix)
			via, ok2 := ipv4Of(&row.NextHop)
			alias := aliases[row.InterfaceLuid]
			if !ok1 || !ok2 || alias == "" {
				continue
			}
			out = append(out, HostRoute{
				DestinationPrefix: netip.PrefixFrom(dst, int(row.DestinationPrefix.PrefixLength)).String(),
				NextHop:           via.String(),
				InterfaceAlias:    alias,
			})
		}
		return out, nil
	})
}

// AddRoute creates the route with CreateIpForwardEntry2 on a row that InitializeIpForwardEntry
// has set to its defaults (learn.microsoft.com/windows/win32/api/netioapi/nf-netioapi-createipforwardentry2,
// .../nf-netioapi-initializeipforwardentry). x/sys/windows wraps neither, so both are called
// from iphlpapi.dll here. The interface is InterfaceAlias looked up by name, or, when it is
// empty, the one GetBestInterfaceEx reports for the next hop (what Windows would use to reach
// it).
//
// The route goes to the active store only, on purpose: it is not persistent (CreateIpForwardEntry2
// has no store to choose, unlike New-NetRoute -PolicyStore), and a persistent route would not
// help, since it names an interface (by LUID and index) that a reboot or a re-created network
// replaces with a new vNIC. The Reconciler adds the routes again after every boot, once the
// vNIC exists again.
func (h *WindowsHost) AddRoute(ctx context.Context, rt HostRoute) error {
	dst, via, err := parseHostRoute(rt)
	if err != nil {
		return err
	}
	return call0(ctx, func() error {
		luid, index, err := routeInterface(rt.InterfaceAlias, via)
		if err != nil {
			return err
		}
		initialize, err := iphlpapiProc("InitializeIpForwardEntry")
		if err != nil {
			return err
		}
		create, err := iphlpapiProc("CreateIpForwardEntry2")
		if err != nil {
			return err
		}
		var row windows.MibIpForwardRow2
		// VOID InitializeIpForwardEntry(PMIB_IPFORWARD_ROW2): infinite lifetimes, Loopback,
		// AutoconfigureAddress, Publish and Immortal TRUE, and SitePrefixLength, Metric and
		// Protocol set to illegal values, which must therefore be set below.
		initialize.Call(uintptr(unsafe.Pointer(&row)))
		// The LUID is used when set, else the index (CreateIpForwardEntry2, Remarks).
		row.InterfaceLuid, row.InterfaceIndex = luid, index
		setIPv4(&row.DestinationPrefix.Prefix, dst.Masked().Addr())
		row.DestinationPrefix.PrefixLength = uint8(dst.Bits())
		setIPv4(&row.NextHop, via)
		row.SitePrefixLength = 0
		// Metric is an offset added to the interface metric; 0 lets the interface metric rank
		// the route.
		row.Metric = 0
		// A static route set by management, as route.exe and New-NetRoute add them.
		row.Protocol = windows.MIB_IPPROTO_NETMGMT
		r1, _, _ := create.Call(uintptr(unsafe.Pointer(&row)))
		switch errno := syscall.Errno(r1); errno {
		case 0:
			return nil
		case windows.ERROR_OBJECT_ALREADY_EXISTS:
			return nil // the same route on the same interface: already there
		default:
			return fmt.Errorf("CreateIpForwardEntry2 on interface %d: %w", index, errno)
		}
	})
}

// DeleteRoute removes the rows of the IPv4 route table with the route's destination prefix and
// next hop on the interface named InterfaceAlias (on any interface when it is empty), with
// DeleteIpForwardEntry2 on the row GetIpForwardTable2 listed: the function needs
// DestinationPrefix, NextHop and the interface's LUID or index, and fails when they match no
// route (learn.microsoft.com/windows/win32/api/netioapi/nf-netioapi-deleteipforwardentry2,
// Remarks). x/sys/windows does not wrap it. A route that is not there, or whose interface is
// gone (its routes went with it), is not an error.
func (h *WindowsHost) DeleteRoute(ctx context.Context, rt HostRoute) error {
	dst, via, err := parseHostRoute(rt)
	if err != nil {
		return err
	}
	dst = dst.Masked()
	return call0(ctx, func() error {
		var luid uint64
		if rt.InterfaceAlias != "" {
			ifs, err := listIPInterfaces()
			if err != nil {
				return fmt.Errorf("remove route %s: list interfaces: %w", rt, err)
			}
			i := interfaceNamed(ifs, rt.InterfaceAlias)
			if i == nil {
				return nil
			}
			luid = i.luid
		}
		del, err := iphlpapiProc("DeleteIpForwardEntry2")
		if err != nil {
			return err
		}
		var table *windows.MibIpForwardTable2
		if err := windows.GetIpForwardTable2(windows.AF_INET, &table); err != nil {
			return fmt.Errorf("remove route %s: GetIpForwardTable2: %w", rt, err)
		}
		defer windows.FreeMibTable(unsafe.Pointer(table))
		rows := table.Rows()
		for i := range rows {
			row := rows[i] // a copy in Go memory, passed to DeleteIpForwardEntry2 below
			have, ok1 := ipv4Of(&row.DestinationPrefix.Prefix)
			next, ok2 := ipv4Of(&row.NextHop)
			if !ok1 || !ok2 || netip.PrefixFrom(have, int(row.DestinationPrefix.PrefixLength)) != dst || next != via {
				continue
			}
			if luid != 0 && row.InterfaceLuid != luid {
				continue
			}
			r1, _, _ := del.Call(uintptr(unsafe.Pointer(&row)))
			if errno := syscall.Errno(r1); errno != 0 && errno != windows.ERROR_NOT_FOUND {
				return fmt.Errorf("remove route %s: DeleteIpForwardEntry2: %w", rt, errno)
			}
		}
		return nil
	})
}

// parseHostRoute reads a route's IPv4 destination prefix and next hop.
func parseHostRoute(rt HostRoute) (netip.Prefix, netip.Addr, error) {
	dst, err := netip.ParsePrefix(rt.DestinationPrefix)
	if err != nil || !dst.Addr().Is4() {
		return netip.Prefix{}, netip.Addr{}, fmt.Errorf("destination %q is not an IPv4 prefix", rt.DestinationPrefix)
	}
	via, err := netip.ParseAddr(rt.NextHop)
	if err != nil || !via.Is4() {
		return netip.Prefix{}, netip.Addr{}, fmt.Errorf("next hop %q is not an IPv4 address", rt.NextHop)
	}
	return dst, via, nil
}

// routeInterface is the LUID and IPv4 index of the interface named alias, or the index of the
// interface Windows uses to reach via when alias is empty (GetBestInterfaceEx; LUID 0).
func routeInterface(alias string, via netip.Addr) (luid uint64, index uint32, err error) {
	if alias != "" {
		ifs, err := listIPInterfaces()
		if err != nil {
			return 0, 0, fmt.Errorf("interface %q: list interfaces: %w", alias, err)
		}
		i := interfaceNamed(ifs, alias)
		if i == nil {
			return 0, 0, fmt.Errorf("interface %q not found", alias)
		}
		if !i.ipv4Enabled() {
			// ERROR_NOT_FOUND from CreateIpForwardEntry2 otherwise: a NIC bound to a vSwitch
			// has no IPv4 interface.
			return 0, 0, fmt.Errorf("interface %q has no IPv4 (bound to a vSwitch?)", alias)
		}
		return i.luid, i.index, nil
	}
	if err := windows.GetBestInterfaceEx(&windows.SockaddrInet4{Addr: via.As4()}, &index); err != nil {
		return 0, 0, fmt.Errorf("no interface reaches next hop %s: GetBestInterfaceEx: %w", via, err)
	}
	return 0, index, nil
}

// ipv4Of reads an IPv4 SOCKADDR_INET (a RawSockaddrInet whose family is AF_INET is a
// RawSockaddrInet4, as x/sys/windows documents).
func ipv4Of(sa *windows.RawSockaddrInet) (netip.Addr, bool) {
	if sa.Family != windows.AF_INET {
		return netip.Addr{}, false
	}
	return netip.AddrFrom4((*windows.RawSockaddrInet4)(unsafe.Pointer(sa)).Addr), true
}

// setIPv4 writes an IPv4 address into a SOCKADDR_INET.
func setIPv4(sa *windows.RawSockaddrInet, a netip.Addr) {
	*sa = windows.RawSockaddrInet{}
	v4 := (*windows.RawSockaddrInet4)(unsafe.Pointer(sa))
	v4.Family = windows.AF_INET
	v4.Addr = a.As4()
}
