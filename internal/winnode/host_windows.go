//go:build windows

package winnode

// The real Windows host. It cannot run where kubewin is built and tested: it is compiled and
// vetted for Windows (GOOS=windows go vet, GOOS=windows go test -c), and the Reconciler's logic
// is tested against MemHost. What only a Windows machine can show: that HCN reports the
// NetAdapterName policy and the subnet's default route back on listed networks (networkDiff
// treats an unreported adapter as matching), that HostAttach makes "vEthernet (<name>)" appear
// (used to detect an attached host endpoint, as hns/setup.ps1 does), and how netsh quotes.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
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

// hnsServiceName is the Host Network Service.
const hnsServiceName = "hns"

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

func (h *WindowsHost) ListEndpoints(ctx context.Context) ([]Endpoint, error) {
	eps, err := call(ctx, hcn.ListEndpoints)
	if err != nil {
		return nil, fmt.Errorf("list HNS endpoints: %w", err)
	}
	out := make([]Endpoint, 0, len(eps))
	for _, e := range eps {
		out = append(out, fromHCNEndpoint(e))
	}
	return out, nil
}

func fromHCNEndpoint(e hcn.HostComputeEndpoint) Endpoint {
	out := Endpoint{ID: e.Id, NetworkID: e.HostComputeNetwork, EndpointSpec: EndpointSpec{Name: e.Name, MAC: e.MacAddress}}
	if len(e.IpConfigurations) > 0 {
		out.IP, out.PrefixLength = e.IpConfigurations[0].IpAddress, int(e.IpConfigurations[0].PrefixLength)
	}
	// Attaching to the host compartment creates the vNIC "vEthernet (<endpoint name>)"; HCN
	// does not report the attachment on the endpoint, and hns/setup.ps1 checks the same vNIC.
	if _, err := net.InterfaceByName(vnicName(e.Name)); err == nil {
		out.HostAttached = true
	}
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
			MacAddress:         spec.MAC,
			SchemaVersion:      hcn.V2SchemaVersion(),
		})
	})
	if err != nil {
		return Endpoint{}, fmt.Errorf("create HNS endpoint %s: %w", spec.Name, err)
	}
	return fromHCNEndpoint(*created), nil
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
			return fmt.Errorf("attach HNS endpoint %s to the host: %w", e.Name, err)
		}
		return nil
	})
}

func (h *WindowsHost) LoadBalancerCount(ctx context.Context) (int, error) {
	lbs, err := call(ctx, hcn.ListLoadBalancers)
	if err != nil {
		return 0, fmt.Errorf("list HNS load balancers: %w", err)
	}
	return len(lbs), nil
}

func (h *WindowsHost) HNSProcessID(ctx context.Context) (uint32, error) {
	st, err := h.ServiceStatus(ctx, hnsServiceName)
	if err != nil {
		return 0, err
	}
	if st.State != ServiceRunning {
		return 0, fmt.Errorf("service %s is %s", hnsServiceName, st.State)
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

func (h *WindowsHost) Adapters(ctx context.Context) ([]Adapter, error) {
	return call(ctx, func() ([]Adapter, error) {
		ifs, err := net.Interfaces()
		if err != nil {
			return nil, fmt.Errorf("list network adapters: %w", err)
		}
		var out []Adapter
		for _, i := range ifs {
			if len(i.HardwareAddr) == 0 {
				continue
			}
			a := Adapter{Name: i.Name, MAC: i.HardwareAddr.String()}
			addrs, err := i.Addrs()
			if err != nil {
				return nil, fmt.Errorf("addresses of adapter %s: %w", i.Name, err)
			}
			for _, addr := range addrs {
				if ipn, ok := addr.(*net.IPNet); ok && ipn.IP.To4() != nil {
					a.IPv4 = append(a.IPv4, ipn.IP.String())
				}
			}
			out = append(out, a)
		}
		return out, nil
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

func (h *WindowsHost) RenameAdapter(ctx context.Context, oldName, newName string) error {
	o, err := netshQuote("adapter name", oldName)
	if err != nil {
		return err
	}
	n, err := netshQuote("adapter name", newName)
	if err != nil {
		return err
	}
	if out, err := netsh(ctx, "interface set interface name="+o+" newname="+n); err != nil {
		return fmt.Errorf("rename adapter %q to %q: netsh: %w: %s", oldName, newName, err, out)
	}
	return nil
}

// EnsureFirewallRule uses netsh advfirewall, which names rules by their display name: the rule
// is looked up and created by DisplayName (Name when DisplayName is empty), so a rule that
// render's firewall.ps1 created with New-NetFirewallRule is found too. INetFwPolicy2 through
// COM would address rules the same way without a child process.
func (h *WindowsHost) EnsureFirewallRule(ctx context.Context, rule FirewallRule) (bool, error) {
	display := rule.DisplayName
	if display == "" {
		display = rule.Name
	}
	name, err := netshQuote("firewall rule name", display)
	if err != nil {
		return false, err
	}
	if strings.ContainsAny(rule.Protocol+rule.LocalPorts, " \"") {
		return false, fmt.Errorf("firewall rule %s: protocol %q or ports %q contain blanks or quotes", display, rule.Protocol, rule.LocalPorts)
	}
	if _, err := netsh(ctx, "advfirewall firewall show rule name="+name); err == nil {
		return false, nil // netsh exits 1 with "No rules match the specified criteria." otherwise
	}
	args := "advfirewall firewall add rule name=" + name + " dir=in action=allow protocol=" + rule.Protocol +
		" localport=" + rule.LocalPorts + " profile=any"
	if out, err := netsh(ctx, args); err != nil {
		return false, fmt.Errorf("add firewall rule %s: netsh: %w: %s", display, err, out)
	}
	return true, nil
}

// Routes reads the IPv4 route table with GetIpForwardTable2 (AF_INET) and frees it with
// FreeMibTable, as the documentation asks
// (learn.microsoft.com/windows/win32/api/netioapi/nf-netioapi-getipforwardtable2). A row names
// its interface by index; the alias is that interface's name (net.InterfaceByIndex, the
// adapter's friendly name on Windows). A row whose interface is gone by the time it is looked
// up is left out: its routes go with it.
func (h *WindowsHost) Routes(ctx context.Context) ([]HostRoute, error) {
	return call(ctx, func() ([]HostRoute, error) {
		var table *windows.MibIpForwardTable2
		if err := windows.GetIpForwardTable2(windows.AF_INET, &table); err != nil {
			return nil, fmt.Errorf("list host routes: GetIpForwardTable2: %w", err)
		}
		defer windows.FreeMibTable(unsafe.Pointer(table))
		rows := table.Rows()
		aliases := map[uint32]string{}
		out := make([]HostRoute, 0, len(rows))
		for i := range rows {
			row := &rows[i]
			dst, ok1 := ipv4Of(&row.DestinationPrefix.Prefix)
			via, ok2 := ipv4Of(&row.NextHop)
			if !ok1 || !ok2 {
				continue
			}
			alias, seen := aliases[row.InterfaceIndex]
			if !seen {
				if ifi, err := net.InterfaceByIndex(int(row.InterfaceIndex)); err == nil {
					alias = ifi.Name
				}
				aliases[row.InterfaceIndex] = alias
			}
			if alias == "" {
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
	dst, err := netip.ParsePrefix(rt.DestinationPrefix)
	if err != nil || !dst.Addr().Is4() {
		return fmt.Errorf("destination %q is not an IPv4 prefix", rt.DestinationPrefix)
	}
	via, err := netip.ParseAddr(rt.NextHop)
	if err != nil || !via.Is4() {
		return fmt.Errorf("next hop %q is not an IPv4 address", rt.NextHop)
	}
	return call0(ctx, func() error {
		index, err := routeInterface(rt.InterfaceAlias, via)
		if err != nil {
			return err
		}
		// Function-local handles: the package keeps no mutable state. iphlpapi.dll is already
		// loaded (x/sys/windows uses it), so loading it again only counts a reference, and
		// routes are added a few times per boot.
		iphlpapi := windows.NewLazySystemDLL("iphlpapi.dll")
		initialize := iphlpapi.NewProc("InitializeIpForwardEntry")
		create := iphlpapi.NewProc("CreateIpForwardEntry2")
		for _, p := range []*windows.LazyProc{initialize, create} {
			if err := p.Find(); err != nil {
				return fmt.Errorf("iphlpapi.dll: %w", err)
			}
		}
		var row windows.MibIpForwardRow2
		// VOID InitializeIpForwardEntry(PMIB_IPFORWARD_ROW2): infinite lifetimes, Loopback,
		// AutoconfigureAddress, Publish and Immortal TRUE, and SitePrefixLength, Metric and
		// Protocol set to illegal values, which must therefore be set below.
		initialize.Call(uintptr(unsafe.Pointer(&row)))
		row.InterfaceIndex = index
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

// routeInterface is the index of the interface named alias, or of the interface Windows uses to
// reach via when alias is empty (GetBestInterfaceEx).
func routeInterface(alias string, via netip.Addr) (uint32, error) {
	if alias != "" {
		ifi, err := net.InterfaceByName(alias)
		if err != nil {
			return 0, fmt.Errorf("interface %q: %w", alias, err)
		}
		return uint32(ifi.Index), nil
	}
	var index uint32
	if err := windows.GetBestInterfaceEx(&windows.SockaddrInet4{Addr: via.As4()}, &index); err != nil {
		return 0, fmt.Errorf("no interface reaches next hop %s: GetBestInterfaceEx: %w", via, err)
	}
	return index, nil
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
