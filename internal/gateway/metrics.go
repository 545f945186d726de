package gateway

import (
	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the controller's Prometheus metrics. Each Controller owns its set and registers it
// on the registry it is given (no global registry: several controllers run in one test process).
type Metrics struct {
	VIPsConfigured  prometheus.Gauge
	VIPsHeld        prometheus.Gauge
	InstancesHeld   prometheus.Gauge
	Reloads         prometheus.Counter
	ReloadErrors    *prometheus.CounterVec
	Failovers       prometheus.Counter
	Releases        prometheus.Counter
	LastSync        prometheus.Gauge
	LastReload      prometheus.Gauge
	SyncDuration    prometheus.Histogram
	SkippedNodes    prometheus.Gauge
	APIReachable    prometheus.Gauge
	StatusWriteErrs prometheus.Counter
	OrphansReleased prometheus.Counter
	FrozenKilled    prometheus.Counter

	// The Calico IPReservation of the Windows pod CIDRs (CalicoReserver).
	CalicoReserved   prometheus.Gauge
	CalicoUnreserved prometheus.Gauge
	CalicoConflicts  prometheus.Gauge
}

// NewMetrics creates the metrics, labelled with the group and member, and registers them on reg
// (nil: not registered).
func NewMetrics(reg prometheus.Registerer, group, member string) *Metrics {
	labels := prometheus.Labels{"group": group, "member": member}
	g := func(name, help string) prometheus.Gauge {
		return prometheus.NewGauge(prometheus.GaugeOpts{Namespace: "kubewin", Subsystem: "gateway", Name: name, Help: help, ConstLabels: labels})
	}
	c := func(name, help string) prometheus.Counter {
		return prometheus.NewCounter(prometheus.CounterOpts{Namespace: "kubewin", Subsystem: "gateway", Name: name, Help: help, ConstLabels: labels})
	}
	m := &Metrics{
		VIPsConfigured: g("vips_configured", "Gateway VIPs (Windows pod-CIDR .1 addresses) in the installed keepalived configuration."),
		VIPsHeld:       g("vips_held", "Configured gateway VIPs this member currently holds on its interface (read with netlink)."),
		InstancesHeld:  g("instances_held", "VRRP instances whose addresses this member currently holds."),
		Reloads:        c("reloads_total", "keepalived reloads (SIGHUP) after a changed, validated configuration."),
		ReloadErrors: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "kubewin", Subsystem: "gateway", Name: "sync_errors_total",
			Help: "Failed syncs by stage (layout, render, validate, install, reload; calico-reservation for the Calico IPReservation); what was installed stays.", ConstLabels: labels}, []string{"stage"}),
		Failovers:       c("failovers_total", "VRRP instances this member took over (became holder of) since start."),
		Releases:        c("releases_total", "VRRP instances this member stopped holding since start."),
		LastSync:        g("last_sync_timestamp_seconds", "Unix time of the last successful sync from the informer cache."),
		LastReload:      g("last_reload_timestamp_seconds", "Unix time of the last keepalived reload."),
		SyncDuration:    prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: "kubewin", Subsystem: "gateway", Name: "sync_duration_seconds", Help: "Time from a Node change to the reloaded configuration.", ConstLabels: labels, Buckets: prometheus.ExponentialBuckets(0.005, 2, 12)}),
		SkippedNodes:    g("skipped_windows_nodes", "Windows nodes that get no gateway (conflicting or invalid pod CIDR)."),
		APIReachable:    g("api_reachable", "1 while the Node watch is connected, 0 while serving the last known set (fail-static)."),
		StatusWriteErrs: c("status_write_errors_total", "Failed writes of this member's status object."),
		OrphansReleased: c("orphaned_vips_released_total", "Gateway/router VIPs removed from the interface because no keepalived was running to hold them (a killed keepalived leaves them behind)."),
		FrozenKilled:    c("frozen_keepalived_killed_total", "keepalived VRRP children SIGKILLed after making no progress (stopped, frozen or stuck) for longer than the peers' down timer; the parent respawns them as BACKUP."),

		CalicoReserved:   g("calico_reserved_cidrs", "Windows pod CIDRs in kubewin's Calico IPReservation."),
		CalicoUnreserved: g("calico_unreserved_cidrs", "Windows pod CIDRs inside an enabled Calico IP pool that are not in kubewin's IPReservation (write failed or the name is taken): Calico IPAM may hand them out."),
		CalicoConflicts:  g("calico_ipam_conflicts", "Calico IPAM blocks overlapping a Windows pod CIDR, plus Windows pod CIDRs smaller than their pool's block size."),
	}
	if reg != nil {
		reg.MustRegister(m.VIPsConfigured, m.VIPsHeld, m.InstancesHeld, m.Reloads, m.ReloadErrors, m.Failovers, m.Releases,
			m.LastSync, m.LastReload, m.SyncDuration, m.SkippedNodes, m.APIReachable, m.StatusWriteErrs, m.OrphansReleased, m.FrozenKilled,
			m.CalicoReserved, m.CalicoUnreserved, m.CalicoConflicts)
	}
	return m
}

// RouteMetrics are the route keeper's metrics.
type RouteMetrics struct {
	Routes      prometheus.Gauge
	Repairs     prometheus.Counter
	Removals    prometheus.Counter
	Errors      prometheus.Counter
	LastSync    prometheus.Gauge
	LocalSkips  prometheus.Gauge
	UnknownVIPs prometheus.Gauge
}

// NewRouteMetrics creates and registers (reg may be nil) the route keeper's metrics.
func NewRouteMetrics(reg prometheus.Registerer, group, node string) *RouteMetrics {
	labels := prometheus.Labels{"group": group, "node": node}
	g := func(name, help string) prometheus.Gauge {
		return prometheus.NewGauge(prometheus.GaugeOpts{Namespace: "kubewin", Subsystem: "gateway_routes", Name: name, Help: help, ConstLabels: labels})
	}
	c := func(name, help string) prometheus.Counter {
		return prometheus.NewCounter(prometheus.CounterOpts{Namespace: "kubewin", Subsystem: "gateway_routes", Name: name, Help: help, ConstLabels: labels})
	}
	m := &RouteMetrics{
		Routes:      g("routes", "Windows pod-CIDR routes via router VIPs this node should have."),
		Repairs:     c("repairs_total", "Routes added or replaced because they were missing or different (drift)."),
		Removals:    c("removals_total", "Routes removed because their Windows node is gone."),
		Errors:      c("errors_total", "Failed route operations (retried)."),
		LastSync:    g("last_sync_timestamp_seconds", "Unix time of the last completed route sync."),
		LocalSkips:  g("local_router_vips", "Routes not installed because this node holds the router VIP (the connected route serves)."),
		UnknownVIPs: g("instances_without_router_vip", "VRRP instances with Windows VIPs but no router VIP (no route can be kept for them)."),
	}
	if reg != nil {
		reg.MustRegister(m.Routes, m.Repairs, m.Removals, m.Errors, m.LastSync, m.LocalSkips, m.UnknownVIPs)
	}
	return m
}
