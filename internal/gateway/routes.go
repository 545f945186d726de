//go:build linux

package gateway

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"sync"
	"syscall"
	"time"

	"github.com/vishvananda/netlink"
	"k8s.io/apimachinery/pkg/labels"
	listersv1 "k8s.io/client-go/listers/core/v1"
)

// RouteKeeper keeps `ip route replace <windows pod CIDR> via <router VIP>` in place for every
// Windows node the group serves, repairs drift, and removes routes of deleted nodes.
type RouteKeeper struct {
	o      RouteOptions
	nl     *netlink.Handle
	log    *slog.Logger
	m      *RouteMetrics
	lister listersv1.NodeLister

	trigger chan struct{}

	mu      sync.Mutex
	desired []DesiredRoute
	synced  chan struct{}
	once    sync.Once
}

// NewRouteKeeper checks the options; Run starts the work.
func NewRouteKeeper(o RouteOptions) (*RouteKeeper, error) {
	if err := o.Config.Validate(); err != nil {
		return nil, fmt.Errorf("gateway group config: %w", err)
	}
	if o.Client == nil {
		return nil, errors.New("no Kubernetes client")
	}
	if o.Protocol == 0 {
		o.Protocol = DefaultRouteProtocol
	}
	if o.Protocol < 5 || o.Protocol > 255 {
		return nil, fmt.Errorf("route protocol %d: expected 5-255 (0-4 are the kernel's own)", o.Protocol)
	}
	if o.Metric < 0 {
		return nil, fmt.Errorf("route metric %d: must not be negative", o.Metric)
	}
	if o.Metric == 0 {
		// Metric 0 would replace the connected route a gateway member gets with the VIP.
		o.Metric = DefaultRouteMetric
	}
	if o.Log == nil {
		o.Log = slog.Default()
	}
	if o.Metrics == nil {
		o.Metrics = NewRouteMetrics(nil, o.Config.Name, o.NodeName)
	}
	if o.Resync <= 0 {
		o.Resync = 30 * time.Second
	}
	nl, err := openNetlink(o.NetNS)
	if err != nil {
		return nil, err
	}
	return &RouteKeeper{o: o, nl: nl, m: o.Metrics, log: o.Log.With("group", o.Config.Name, "node", o.NodeName),
		trigger: make(chan struct{}, 1), synced: make(chan struct{})}, nil
}

// Synced is closed after the first route sync from a complete Node list.
func (k *RouteKeeper) Synced() <-chan struct{} { return k.synced }

// Desired returns the routes the keeper currently wants.
func (k *RouteKeeper) Desired() []DesiredRoute {
	k.mu.Lock()
	defer k.mu.Unlock()
	return append([]DesiredRoute(nil), k.desired...)
}

// Run keeps the routes until ctx ends.
func (k *RouteKeeper) Run(ctx context.Context) error {
	defer k.nl.Close()
	nodes, err := newNodeWatch(k.o.Client, k.o.Config.WindowsNodeSelector, func(err error) {
		k.log.Warn("Node watch failed; keeping the last known routes (fail-static)", "error", err)
	}, k.kick)
	if err != nil {
		return err
	}
	k.lister = nodes.lister
	nodes.start(ctx)
	defer nodes.stop()

	// Route and address events in the namespace (someone deleting or changing our route, the
	// router VIP arriving or leaving) trigger a repair. A failed subscription closes its
	// channel; it is renewed on the next resync.
	var routeUpdates chan netlink.RouteUpdate
	var addrUpdates chan netlink.AddrUpdate
	var done chan struct{}
	subscribe := func() {
		if done != nil {
			close(done)
		}
		done = make(chan struct{})
		onErr := func(err error) {
			if ctx.Err() == nil {
				k.log.Warn("netlink subscription error; resubscribing at the next resync", "error", err)
			}
		}
		routeUpdates = make(chan netlink.RouteUpdate, 256)
		if err := netlink.RouteSubscribeWithOptions(routeUpdates, done, netlink.RouteSubscribeOptions{Namespace: k.o.NetNS, ErrorCallback: onErr}); err != nil {
			k.log.Warn("subscribe to route changes; relying on periodic resync", "error", err)
			routeUpdates = nil
		}
		addrUpdates = make(chan netlink.AddrUpdate, 256)
		if err := netlink.AddrSubscribeWithOptions(addrUpdates, done, netlink.AddrSubscribeOptions{Namespace: k.o.NetNS, ErrorCallback: onErr}); err != nil {
			k.log.Warn("subscribe to address changes; relying on periodic resync", "error", err)
			addrUpdates = nil
		}
	}
	subscribe()
	defer func() { close(done) }()

	if !nodes.synced(ctx) {
		return nil
	}
	k.kick()
	resync := time.NewTicker(k.o.Resync)
	defer resync.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-k.trigger:
			k.layout()
		case <-resync.C:
			if routeUpdates == nil || addrUpdates == nil {
				subscribe()
			}
			k.layout()
		case _, ok := <-routeUpdates:
			if !ok {
				routeUpdates = nil
				continue
			}
			if !drainRoutes(routeUpdates) {
				routeUpdates = nil
			}
		case _, ok := <-addrUpdates:
			if !ok {
				addrUpdates = nil
				continue
			}
			if !drainAddrs(addrUpdates) {
				addrUpdates = nil
			}
		}
		if err := k.apply(); err != nil {
			k.m.Errors.Inc()
			k.log.Error("route sync incomplete; retrying on the next event or resync", "error", err)
		}
	}
}

// drainRoutes empties ch without blocking; false when ch is closed.
func drainRoutes(ch chan netlink.RouteUpdate) bool {
	for {
		select {
		case _, ok := <-ch:
			if !ok {
				return false
			}
		default:
			return true
		}
	}
}

// drainAddrs empties ch without blocking; false when ch is closed.
func drainAddrs(ch chan netlink.AddrUpdate) bool {
	for {
		select {
		case _, ok := <-ch:
			if !ok {
				return false
			}
		default:
			return true
		}
	}
}

func (k *RouteKeeper) kick() {
	select {
	case k.trigger <- struct{}{}:
	default:
	}
}

// layout recomputes the desired routes from the informer cache; on a layout error the previous
// routes stay desired.
func (k *RouteKeeper) layout() {
	nodes, err := k.lister.List(labels.Everything())
	if err != nil {
		k.log.Error("list cached nodes", "error", err)
		return
	}
	g, skipped, err := Layout(k.o.Config, nodes)
	for _, s := range skipped {
		k.log.Debug("Windows node gets no route", "node", s.Node, "reason", s.Reason)
	}
	if err != nil {
		k.m.Errors.Inc()
		k.log.Error("layout failed; keeping the previous routes", "error", err)
		return
	}
	routes, without := DesiredRoutes(g)
	k.m.UnknownVIPs.Set(float64(without))
	k.mu.Lock()
	k.desired = routes
	k.mu.Unlock()
	k.once.Do(func() { close(k.synced) })
}

// apply makes the kernel's routes of our protocol equal the desired set.
func (k *RouteKeeper) apply() error {
	k.mu.Lock()
	desired := k.desired
	ready := k.lister != nil
	k.mu.Unlock()
	select {
	case <-k.synced:
	default:
		return nil // never act before the first complete list
	}
	if !ready {
		return nil
	}
	local, err := k.localAddrs()
	if err != nil {
		return err
	}
	existing, err := retryDump(func() ([]netlink.Route, error) {
		return k.nl.RouteListFiltered(netlink.FAMILY_V4, &netlink.Route{Protocol: netlink.RouteProtocol(k.o.Protocol), Table: syscall.RT_TABLE_MAIN},
			netlink.RT_FILTER_PROTOCOL|netlink.RT_FILTER_TABLE)
	})
	if err != nil {
		return fmt.Errorf("list routes: %w", err)
	}
	have := map[netip.Prefix]netlink.Route{}
	for _, r := range existing {
		if r.Dst == nil {
			continue
		}
		p, ok := prefixOf(r.Dst)
		if !ok {
			continue
		}
		have[p] = r
	}
	var errs []error
	want := map[netip.Prefix]bool{}
	skippedLocal := 0
	for _, d := range desired {
		want[d.Dst] = true
		if local[d.Via] {
			// We hold the router VIP: the connected route of the pod-CIDR VIP serves, and the
			// kernel refuses a gateway that is a local address. A route installed before we
			// became holder stays (metric keeps it behind the connected route).
			skippedLocal++
			continue
		}
		if r, ok := have[d.Dst]; ok && routeMatches(r, d, k.o.Metric) {
			continue
		}
		route := &netlink.Route{
			Dst:      prefixToIPNet(d.Dst),
			Gw:       net.IP(d.Via.AsSlice()),
			Protocol: netlink.RouteProtocol(k.o.Protocol),
			Priority: k.o.Metric,
			Table:    syscall.RT_TABLE_MAIN,
		}
		if err := k.nl.RouteReplace(route); err != nil {
			errs = append(errs, fmt.Errorf("ip route replace %s via %s: %w", d.Dst, d.Via, err))
			continue
		}
		k.m.Repairs.Inc()
		if _, existed := have[d.Dst]; existed {
			k.log.Info("repaired route", "dst", d.Dst, "via", d.Via)
		} else {
			k.log.Info("added route", "dst", d.Dst, "via", d.Via)
		}
	}
	for p, r := range have {
		if want[p] {
			continue
		}
		if err := k.nl.RouteDel(&r); err != nil && !errors.Is(err, syscall.ESRCH) {
			errs = append(errs, fmt.Errorf("ip route del %s: %w", p, err))
			continue
		}
		k.m.Removals.Inc()
		k.log.Info("removed route of a Windows node that is gone", "dst", p)
	}
	k.m.Routes.Set(float64(len(desired)))
	k.m.LocalSkips.Set(float64(skippedLocal))
	if len(errs) == 0 {
		k.m.LastSync.SetToCurrentTime()
	}
	return errors.Join(errs...)
}

func routeMatches(r netlink.Route, d DesiredRoute, metric int) bool {
	gw, ok := netip.AddrFromSlice(r.Gw.To4())
	return ok && gw == d.Via && r.Priority == metric && len(r.MultiPath) == 0
}

func (k *RouteKeeper) localAddrs() (map[netip.Addr]bool, error) {
	addrs, err := retryDump(func() ([]netlink.Addr, error) { return k.nl.AddrList(nil, netlink.FAMILY_V4) })
	if err != nil {
		return nil, fmt.Errorf("list local addresses: %w", err)
	}
	out := map[netip.Addr]bool{}
	for _, a := range addrs {
		if ip, ok := netip.AddrFromSlice(a.IP.To4()); ok {
			out[ip] = true
		}
	}
	return out, nil
}

func prefixOf(n *net.IPNet) (netip.Prefix, bool) {
	ip, ok := netip.AddrFromSlice(n.IP.To4())
	if !ok {
		return netip.Prefix{}, false
	}
	ones, _ := n.Mask.Size()
	return netip.PrefixFrom(ip, ones).Masked(), true
}

func prefixToIPNet(p netip.Prefix) *net.IPNet {
	return &net.IPNet{IP: net.IP(p.Addr().AsSlice()), Mask: net.CIDRMask(p.Bits(), p.Addr().BitLen())}
}
