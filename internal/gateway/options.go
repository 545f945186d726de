package gateway

import (
	"fmt"
	"log/slog"
	"net/netip"
	"sort"
	"strings"
	"time"

	"github.com/vishvananda/netlink"
	vnetns "github.com/vishvananda/netns"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/kubewin/kubewin/internal/plan"
)

// Options configure a Controller.
type Options struct {
	Config   GroupConfig
	NodeName string
	Client   kubernetes.Interface
	// ConfigPath is keepalived.conf; its directory must be writable (candidate files go there).
	ConfigPath string
	// Validate checks a candidate file; nil means render.ValidateKeepalived (keepalived -t).
	Validate Validator
	// Reloader signals keepalived after a change; nil disables reloading (keepalived reads the
	// file when it starts).
	Reloader Reloader
	// KeepalivedCheck is how often the controller checks that keepalived runs, when Reloader
	// can tell (KeepalivedProbe); addresses a dead keepalived left behind are released after two
	// failed checks (default 500ms; negative disables).
	KeepalivedCheck time.Duration
	// KeepalivedStall is how long keepalived's VRRP child may make no progress (no voluntary
	// context switch) before it counts as frozen: its VIPs are released and it is killed
	// (default max(1s, 4 advert intervals), longer than the peers' down timer).
	KeepalivedStall time.Duration
	// NetNS is the network namespace holding Config.Interface; nil means the process's own.
	// Netlink sockets are opened inside it, so no goroutine ever switches namespaces.
	NetNS *vnetns.NsHandle
	// StatusNamespace is the Kubernetes namespace of the member's status ConfigMap; empty
	// disables status reporting.
	StatusNamespace string
	Metrics         *Metrics
	Log             *slog.Logger
	// Debounce is the quiet time after a Node change before syncing (default 50ms); MaxDelay
	// bounds the wait under continuous churn (default 500ms).
	Debounce time.Duration
	MaxDelay time.Duration
	// Resync re-checks the installed file and the held addresses periodically (default 30s).
	Resync time.Duration
	// Heartbeat is how often the status object is rewritten without changes (default 60s).
	Heartbeat time.Duration
	// StaggerStep delays new VRRP instances per priority rank, and the holder's removal of an
	// instance (default max(1s, 10 adverts)).
	StaggerStep time.Duration
	// MinReloadInterval spaces keepalived reloads during churn (default 500ms).
	MinReloadInterval time.Duration

	// DisableCalicoReservation turns off the CalicoReserver the controller runs beside
	// keepalived (it idles on clusters without Calico's IPAM resources). Dynamic is its client
	// for Calico's resources (nil: derived from Client); CalicoBlockCheck is how often it lists
	// the IPAM blocks for conflicts (default 5m). It re-reads pools and the reservation every
	// Resync.
	DisableCalicoReservation bool
	Dynamic                  dynamic.Interface
	CalicoBlockCheck         time.Duration
}

// DefaultRouteProtocol marks the routes the keeper owns (rtm_protocol), so it removes only its
// own routes and never a CNI's. 0x4b is unassigned in /etc/iproute2/rt_protos.
const DefaultRouteProtocol = 0x4b

// DefaultRouteMetric keeps the keeper's routes behind the connected route the VIP holder gets
// for the pod CIDR (metric 0): on gateway members the keeper's route is then used only while
// another member holds the VIP.
const DefaultRouteMetric = 100

// RouteOptions configure a RouteKeeper.
type RouteOptions struct {
	Config   GroupConfig
	NodeName string
	Client   kubernetes.Interface
	// NetNS is the network namespace whose routes are kept; nil means the process's own.
	NetNS *vnetns.NsHandle
	// Protocol marks the kept routes (default DefaultRouteProtocol); Metric is their metric
	// (default DefaultRouteMetric; 0 is not allowed, it would compete with connected routes).
	Protocol int
	Metric   int
	Metrics  *RouteMetrics
	Log      *slog.Logger
	// Resync re-lists routes periodically in addition to netlink events (default 30s).
	Resync time.Duration
}

// DesiredRoute is one route the keeper maintains.
type DesiredRoute struct {
	Dst netip.Prefix
	Via netip.Addr
}

// DesiredRoutes maps a layout to routes: each instance's Windows pod CIDRs via its router VIP.
// Instances without a router VIP are counted, since no route can be kept for them.
func DesiredRoutes(g plan.GatewayGroupPlan) (routes []DesiredRoute, withoutRouterVIP int) {
	for _, in := range g.Instances {
		if in.RouterVIP == "" {
			if len(in.VIPs) > 0 {
				withoutRouterVIP++
			}
			continue
		}
		via, err := addrOf(in.RouterVIP)
		if err != nil {
			continue // the planner validated it; an unparsable one cannot be routed through
		}
		for _, v := range in.VIPs {
			dst, err := netip.ParsePrefix(v.PodCIDR)
			if err != nil {
				continue
			}
			routes = append(routes, DesiredRoute{Dst: dst.Masked(), Via: via})
		}
	}
	sort.Slice(routes, func(i, j int) bool { return routes[i].Dst.String() < routes[j].Dst.String() })
	return routes, withoutRouterVIP
}

// addrOf strips a prefix length.
func addrOf(s string) (netip.Addr, error) {
	return netip.ParseAddr(strings.SplitN(s, "/", 2)[0])
}

// openNetlink opens a netlink handle in ns (nil: the process's own namespace).
func openNetlink(ns *vnetns.NsHandle) (*netlink.Handle, error) {
	var nl *netlink.Handle
	var err error
	if ns != nil {
		nl, err = netlink.NewHandleAt(*ns)
	} else {
		nl, err = netlink.NewHandle()
	}
	if err != nil {
		return nil, fmt.Errorf("open netlink: %w", err)
	}
	return nl, nil
}
