//go:build linux

package gateway

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/netip"
	"os"
	"strings"
	"time"

	"github.com/vishvananda/netlink"

	"github.com/kubewin/kubewin/internal/plan"
)

// orphanChecks is how many consecutive probes must find keepalived gone before its addresses
// are released: one probe can fall between a pid file's removal and its rewrite.
const orphanChecks = 2

// watchKeepalived releases gateway and router VIPs that are left on the interface while no
// keepalived runs on this member.
//
// Why: keepalived removes its virtual addresses only on an orderly exit (SIGTERM) or when it
// leaves MASTER; a SIGKILLed or OOM-killed keepalived leaves them configured on a live host
// whose port is still up. The other members stop hearing adverts, elect a new master after the
// down timer, and from then on two hosts answer ARP for the pod gateway. Reproduced with real
// keepalived in namespaces (TestKilledKeepalivedReleasesVIPs). Nothing maintains an address
// without keepalived, so an address of the layout on the interface with no keepalived running
// is always stale; releasing it leaves the new master the only holder, and a keepalived that
// comes back starts as BACKUP (nopreempt) without them.
//
// Liveness comes from what keepalived does, not from its process existing: a VRRP child that
// makes no progress (KeepalivedSample.Switches) for stallAfter — SIGSTOPped, frozen, stuck in the
// kernel — sends no adverts either; the peers have taken over after their down timer and its
// addresses are a second holder. The watch releases them and SIGKILLs the child (killFrozen).
// A zombie parent or child is not running either (TestZombieKeepalivedIsNotRunning).
//
// Everything here is local (proc, netlink, the installed file): it works from the moment the
// controller starts, with or without the API server (TestRestartWithoutAPIReleasesVIPs).
func (c *Controller) watchKeepalived(ctx context.Context) {
	probe, ok := c.o.Reloader.(KeepalivedProbe)
	if !ok || c.o.KeepalivedCheck < 0 {
		return
	}
	every := c.o.KeepalivedCheck
	if every == 0 {
		every = 500 * time.Millisecond
	}
	live := &liveness{stallAfter: c.o.KeepalivedStall}
	if live.stallAfter <= 0 {
		live.stallAfter = stallAfterFor(c.o.Config.AdvertIntervalSeconds)
	}
	tick := time.NewTicker(every)
	defer tick.Stop()
	missing, wasFrozen := 0, false
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		s, err := probe.Sample()
		if err != nil {
			c.log.Warn("check whether keepalived runs", "error", err)
			missing = 0
			continue
		}
		v, pid, why := live.judge(s, time.Now())
		switch v {
		case alive:
			if missing >= orphanChecks || wasFrozen {
				c.log.Info("keepalived is running again", "pid", s.Parent)
			}
			missing, wasFrozen = 0, false
			continue
		case gone:
			missing++
			if missing < orphanChecks {
				continue
			}
		case frozen:
			// A child without instances may idle without timers: with nothing to hold there is
			// nothing a freeze could duplicate, and nothing to kill it for.
			if layout, err := c.layoutAddrs(); err == nil && len(layout) == 0 {
				continue
			}
			// No second look: the verdict already spans stallAfter of samples.
			if !wasFrozen {
				c.log.Warn("keepalived is frozen; releasing its VIPs and killing it so that it cannot resume as a second holder", "reason", why)
			}
			wasFrozen = true
		}
		if n, err := c.releaseOrphans(); err != nil {
			c.log.Error("release addresses left by a dead or frozen keepalived", "error", err)
		} else if n > 0 {
			c.m.OrphansReleased.Add(float64(n))
			c.log.Warn("keepalived is not working; released the VIPs it left on the interface so the new master is the only holder",
				"released", n, "interface", c.o.Config.Interface, "reason", why)
			c.kickAddrs()
		}
		if v == frozen {
			if err := killFrozen(pid); err != nil {
				c.log.Error("stop frozen keepalived", "error", err)
			} else {
				c.m.FrozenKilled.Inc()
			}
		}
	}
}

// releaseOrphans deletes every address of the installed layout (gateway VIPs and router VIPs)
// from the gateway interface and returns how many it removed.
func (c *Controller) releaseOrphans() (int, error) {
	layout, err := c.layoutAddrs()
	if err != nil {
		return 0, err
	}
	if len(layout) == 0 {
		return 0, nil
	}
	link, err := c.nl.LinkByName(c.o.Config.Interface)
	if err != nil {
		return 0, fmt.Errorf("find interface %s: %w", c.o.Config.Interface, err)
	}
	addrs, err := retryDump(func() ([]netlink.Addr, error) { return c.nl.AddrList(link, netlink.FAMILY_V4) })
	if err != nil {
		return 0, fmt.Errorf("list addresses of %s: %w", c.o.Config.Interface, err)
	}
	removed := 0
	var errs []string
	for _, a := range addrs {
		ip, ok := netip.AddrFromSlice(a.IP.To4())
		if !ok || !layout[ip] {
			continue
		}
		del := a
		del.IPNet = &net.IPNet{IP: a.IP, Mask: a.Mask}
		if err := c.nl.AddrDel(link, &del); err != nil {
			errs = append(errs, fmt.Sprintf("%s: %v", a.IPNet, err))
			continue
		}
		removed++
	}
	if len(errs) > 0 {
		return removed, fmt.Errorf("delete addresses from %s: %s", c.o.Config.Interface, strings.Join(errs, "; "))
	}
	return removed, nil
}

// layoutAddrs is the set of gateway and router VIPs of the installed layout (before the first
// sync: of the installed file).
func (c *Controller) layoutAddrs() (map[netip.Addr]bool, error) {
	c.mu.Lock()
	g := c.installed
	c.mu.Unlock()
	layout := map[netip.Addr]bool{}
	if g == nil {
		// Before the first sync (the API server may be down for long): the installed file is
		// what keepalived ran with, so its addresses are the ones a dead keepalived left.
		var err error
		if layout, err = c.fileVIPs(); err != nil {
			return nil, err
		}
	}
	for _, in := range instancesOf(g) {
		for _, v := range in.VIPs {
			if p, err := parseAddrOrPrefix(v.Address); err == nil {
				layout[p] = true
			}
		}
		if in.RouterVIP != "" {
			if p, err := parseAddrOrPrefix(in.RouterVIP); err == nil {
				layout[p] = true
			}
		}
	}
	return layout, nil
}

func instancesOf(g *plan.GatewayGroupPlan) []plan.VRRPInstancePlan {
	if g == nil {
		return nil
	}
	return g.Instances
}

// fileVIPs reads the addresses the installed keepalived.conf puts on the group's interface.
// No file: nothing was ever installed here, so nothing can be left.
func (c *Controller) fileVIPs() (map[netip.Addr]bool, error) {
	b, err := os.ReadFile(c.o.ConfigPath)
	if errors.Is(err, fs.ErrNotExist) {
		return map[netip.Addr]bool{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read installed keepalived configuration: %w", err)
	}
	out := map[netip.Addr]bool{}
	for _, a := range KeepalivedAddresses(b) {
		if a.Dev == c.o.Config.Interface {
			out[a.Prefix.Addr()] = true
		}
	}
	return out, nil
}

// parseAddrOrPrefix reads "a.b.c.d" or "a.b.c.d/n" as an address.
func parseAddrOrPrefix(s string) (netip.Addr, error) {
	return netip.ParseAddr(strings.SplitN(s, "/", 2)[0])
}

func (c *Controller) kickAddrs() {
	select {
	case c.addrKick <- struct{}{}:
	default:
	}
}
