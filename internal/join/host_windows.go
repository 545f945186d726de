//go:build windows

package join

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
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
	ifs, err := net.Interfaces()
	if err != nil {
		return Facts{}, fmt.Errorf("list network adapters: %w", err)
	}
	var nics []NIC
	for _, i := range ifs {
		n := NIC{Name: i.Name, MAC: i.HardwareAddr.String()}
		addrs, _ := i.Addrs()
		for _, a := range addrs {
			if ipn, ok := a.(*net.IPNet); ok && ipn.IP.To4() != nil && ipn.IP.String() == local {
				n.IP = local
				n.Prefix, _ = ipn.Mask.Size()
			}
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
