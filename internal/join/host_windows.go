//go:build windows

package join

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/sys/windows"

	"github.com/kubewin/kubewin/internal/render"
	"github.com/kubewin/kubewin/internal/winnode"
)

// NewHost returns the Windows host layer: HNS through hcn and services through the service
// control manager (winnode.WindowsHost). root is the install dir (C:\k by default, the spec's
// windows.installDir); init is ignored (the node service is a Windows service); kubewin is this
// executable, copied to <root>\kubewin.exe for the service.
//
// This file is compiled and vetted for Windows only (GOOS=windows go vet): no Windows host
// runs here. The join steps it serves are tested on Linux against winnode.MemHost.
func NewHost(paths render.NodePaths, root, init, kubewin string) (Host, error) {
	// The SCM, HNS and the install dir's ACL refuse a process that is not elevated; say so
	// before any step half-runs.
	if !windows.GetCurrentProcessToken().IsElevated() {
		return nil, fmt.Errorf("%w: kubewin must run elevated on Windows (an administrator PowerShell, or as SYSTEM)", ErrBadInput)
	}
	return &WindowsHost{
		Node:        &winnode.WindowsHost{},
		FactsFunc:   windowsFacts,
		InstallDir:  root,
		Kubewin:     kubewin,
		KubewinPath: filepath.Join(paths.BinDir, "kubewin.exe"),
	}, nil
}

// DefaultRoot is where join keeps a Windows node's files (the spec's default installDir).
const DefaultRoot = render.WindowsDefaultInstallDir

// NodePathsFor is the layout of a Windows node below root (its install dir).
func NodePathsFor(root string) render.NodePaths {
	return render.WindowsPathsUnder(root, render.WindowsContainerdDir)
}

// windowsFacts: the hostname, the OS build (RtlGetVersion, which unlike GetVersionEx is not
// subject to the application manifest's compatibility shims), and the NIC holding the address
// a UDP socket towards the API server is bound to (a route lookup; nothing is sent).
//
// The NICs are winnode's Adapters listing (GetAdaptersAddresses with
// GAA_FLAG_INCLUDE_ALL_INTERFACES), not net.Interfaces: once a vSwitch is bound to the cluster
// NIC its IP stack is unbound and Go's listing, which does not pass that flag
// ($GOROOT/src/net/interface_windows.go adapterAddresses), shows only "vEthernet (<nic>)" with
// the NIC's MAC (design.md host facts). windowsClusterNIC then picks the adapter itself, listed
// as Bound with the same MAC.
func windowsFacts(ctx context.Context, server string) (Facts, error) {
	name, err := os.Hostname()
	if err != nil {
		return Facts{}, fmt.Errorf("hostname: %w", err)
	}
	u, err := url.Parse(server)
	if err != nil {
		return Facts{}, fmt.Errorf("--server %q: %w", server, err)
	}
	port := u.Port()
	if port == "" {
		port = "443"
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, "udp4", net.JoinHostPort(u.Hostname(), port))
	if err != nil {
		return Facts{}, fmt.Errorf("no route to the API server %s: %w", u.Host, err)
	}
	local := conn.LocalAddr().(*net.UDPAddr).IP.String()
	conn.Close()
	adapters, err := (&winnode.WindowsHost{}).Adapters(ctx)
	if err != nil {
		return Facts{}, err
	}
	prefix, err := localPrefixLength(local)
	if err != nil {
		return Facts{}, err
	}
	nics := make([]NIC, 0, len(adapters))
	for _, a := range adapters {
		n := NIC{Name: a.Name, MAC: a.MAC}
		if slices.Contains(a.IPv4, local) {
			n.IP, n.Prefix = local, prefix
		}
		nics = append(nics, n)
	}
	nic, err := windowsClusterNIC(nics, local)
	if err != nil {
		return Facts{}, err
	}
	v := windows.RtlGetVersion()
	return Facts{Hostname: strings.ToLower(name), NIC: nic,
		WindowsBuild: fmt.Sprintf("%d.%d.%d", v.MajorVersion, v.MinorVersion, v.BuildNumber)}, nil
}

// localPrefixLength is the on-link prefix length of a local IPv4 address. The interface holding
// it has IPv4, so Go's listing has it too, and its mask is the unicast address's
// OnLinkPrefixLength ($GOROOT/src/net/interface_windows.go interfaceAddrTable); winnode's
// Adapter carries no prefix.
func localPrefixLength(local string) (int, error) {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return 0, fmt.Errorf("list local addresses: %w", err)
	}
	for _, a := range addrs {
		if ipn, ok := a.(*net.IPNet); ok && ipn.IP.To4() != nil && ipn.IP.String() == local {
			ones, _ := ipn.Mask.Size()
			return ones, nil
		}
	}
	return 0, fmt.Errorf("no network adapter holds %s, the address this host reaches the API server from", local)
}
