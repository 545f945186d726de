package join

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/vishvananda/netlink"

	"github.com/kubewin/kubewin/internal/plan"
	"github.com/kubewin/kubewin/internal/render"
)

// LinuxHost is the Linux host layer: files below Paths, the node service as a systemd unit.
type LinuxHost struct {
	Paths render.NodePaths
	// Root prefixes the unit's location ("/" on a real node).
	Root string
	// Init is "systemd" (install and start the unit) or "none" (write nothing, the operator's
	// supervisor runs `kubewin node run`; containers and machines without systemd).
	Init string
	// Kubewin is the path of the kubewin binary the unit runs.
	Kubewin string
	// System is where sysctls and modules are read and set (DefaultLinuxSystem when zero).
	System LinuxSystem
}

// Kernel implements LinuxNodeHost.
func (h *LinuxHost) Kernel() LinuxSystem {
	if h.System.ProcSys == "" {
		return DefaultLinuxSystem()
	}
	return h.System
}

// OS implements Host.
func (h *LinuxHost) OS() string { return "linux" }

// Facts implements Host: the hostname and the interface and address the kernel uses to reach
// the API server (the route lookup the kubelet's own node-IP detection would also end at).
func (h *LinuxHost) Facts(ctx context.Context, server string) (Facts, error) {
	name, err := os.Hostname()
	if err != nil {
		return Facts{}, fmt.Errorf("hostname: %w", err)
	}
	u, err := url.Parse(server)
	if err != nil {
		return Facts{}, fmt.Errorf("--server %q: %w", server, err)
	}
	ips, err := net.DefaultResolver.LookupIP(ctx, "ip4", u.Hostname())
	if err != nil || len(ips) == 0 {
		return Facts{}, fmt.Errorf("resolve the API server %s: %v", u.Hostname(), err)
	}
	routes, err := netlink.RouteGet(ips[0])
	if err != nil || len(routes) == 0 {
		return Facts{}, fmt.Errorf("no route to the API server %s: %v", ips[0], err)
	}
	link, err := netlink.LinkByIndex(routes[0].LinkIndex)
	if err != nil {
		return Facts{}, fmt.Errorf("the interface towards %s: %w", ips[0], err)
	}
	f := Facts{Hostname: strings.ToLower(name), NIC: NIC{Name: link.Attrs().Name, MAC: link.Attrs().HardwareAddr.String()}}
	addrs, err := netlink.AddrList(link, netlink.FAMILY_V4)
	if err != nil {
		return Facts{}, fmt.Errorf("addresses of %s: %w", f.NIC.Name, err)
	}
	for _, a := range addrs {
		if routes[0].Src == nil || a.IP.Equal(routes[0].Src) {
			ones, _ := a.Mask.Size()
			f.NIC.IP, f.NIC.Prefix = a.IP.String(), ones
			break
		}
	}
	if f.NIC.IP == "" {
		return Facts{}, fmt.Errorf("%s has no IPv4 address towards %s", f.NIC.Name, ips[0])
	}
	if ips[0].IsLoopback() {
		return Facts{}, fmt.Errorf("the API server %s is a loopback address: a node must reach it over its cluster NIC", server)
	}
	return f, nil
}

const unitName = "kubewin-node.service"

// InstallService implements Host.
func (h *LinuxHost) InstallService(ctx context.Context) (Change, error) {
	if h.Init == "none" {
		return Change{What: "kubewin node service (--init none: run `" + h.runCommand() + "` under your supervisor)", Action: ActionSkipped}, nil
	}
	unit := h.Unit()
	path := filepath.Join(h.Root, "/etc/systemd/system", unitName)
	ch, err := writeFiles([]File{{Path: path, Data: unit, Mode: 0o644}})
	if err != nil {
		return Change{}, err
	}
	for _, args := range [][]string{{"daemon-reload"}, {"enable", "--now", unitName}} {
		if out, err := exec.CommandContext(ctx, "systemctl", args...).CombinedOutput(); err != nil {
			return Change{}, fmt.Errorf("systemctl %s: %v: %s", strings.Join(args, " "), err, out)
		}
	}
	return Change{What: unitName + " (enabled, started)", Action: ch[0].Action}, nil
}

// Unit is the systemd unit of the node service.
func (h *LinuxHost) Unit() []byte {
	return []byte(fmt.Sprintf(`# kubewin node service: supervises containerd, the kubelet and kube-proxy from
# %s, and keeps the node healthy. Written by kubewin join.
[Unit]
Description=kubewin node service
Documentation=https://github.com/kubewin/kubewin
Wants=network-online.target
After=network-online.target

[Service]
ExecStart=%s
Restart=always
RestartSec=5
# The service stops its children itself; containers (their shims) outlive a restart of it.
KillMode=process
Delegate=yes
LimitNOFILE=1048576

[Install]
WantedBy=multi-user.target
`, filepath.Join(h.Paths.DataDir, "services.json"), h.runCommand()))
}

func (h *LinuxHost) runCommand() string {
	return h.Kubewin + " node run --root " + h.Root
}

// NewHost returns the Linux host layer.
func NewHost(paths render.NodePaths, root, init, kubewin string) (Host, error) {
	if init != "systemd" && init != "none" {
		return nil, fmt.Errorf("%w: --init %q: expected systemd or none", ErrBadInput, init)
	}
	if init == "systemd" && filepath.Clean(root) != "/" {
		// systemctl acts on this machine's systemd, not on one below root.
		return nil, fmt.Errorf("%w: --init systemd with --root %s: the unit would start a service on this machine for files below %s; use --init none", ErrBadInput, root, root)
	}
	return &LinuxHost{Paths: paths, Root: root, Init: init, Kubewin: kubewin}, nil
}

// EnsureRoutes implements Host with netlink: a route whose destination exists with another
// gateway is replaced, a missing one added (ip route replace semantics), the rest untouched.
func (h *LinuxHost) EnsureRoutes(ctx context.Context, routes []plan.Route) ([]Change, error) {
	var out []Change
	for _, r := range routes {
		_, dst, err := net.ParseCIDR(r.Destination)
		if err != nil {
			return out, fmt.Errorf("route %q: %w", r.Destination, err)
		}
		via := net.ParseIP(r.Via)
		if via == nil {
			return out, fmt.Errorf("route %s via %q: not an IP", r.Destination, r.Via)
		}
		want := &netlink.Route{Dst: dst, Gw: via}
		if r.Dev != "" {
			link, err := netlink.LinkByName(r.Dev)
			if err != nil {
				return out, fmt.Errorf("route %s dev %s: %w", r.Destination, r.Dev, err)
			}
			want.LinkIndex = link.Attrs().Index
		}
		what := fmt.Sprintf("route %s via %s", dst, via)
		existing, err := netlink.RouteListFiltered(netlink.FAMILY_V4, &netlink.Route{Dst: dst}, netlink.RT_FILTER_DST)
		if err != nil {
			return out, fmt.Errorf("list routes to %s: %w", dst, err)
		}
		action := ActionCreated
		for _, e := range existing {
			if e.Gw.Equal(via) && (want.LinkIndex == 0 || e.LinkIndex == want.LinkIndex) {
				action = ActionUnchanged
				break
			}
			action = ActionUpdated
		}
		if action != ActionUnchanged {
			if err := netlink.RouteReplace(want); err != nil {
				return out, fmt.Errorf("%s: %w", what, err)
			}
		}
		out = append(out, Change{What: what, Action: action})
	}
	return out, nil
}

// DefaultRoot is the prefix of every path join writes on a real Linux node.
const DefaultRoot = "/"

// NodePathsFor is the layout of a Linux node below root.
func NodePathsFor(root string) render.NodePaths { return render.LinuxPathsUnder(root) }
