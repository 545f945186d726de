//go:build linux

package gateway

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"time"

	"github.com/vishvananda/netlink"
)

// KeepalivedProbe tells whether this member's keepalived is running. PIDFileReloader
// implements it; a Reloader that does not disables the orphaned-address watch.
type KeepalivedProbe interface {
	Running() (bool, error)
}

// Running reports whether the keepalived named by PIDFile (or found by ConfigPath) is alive.
func (r PIDFileReloader) Running() (bool, error) {
	if pid, _ := r.fromPIDFile(); pid != 0 {
		return true, nil
	}
	if r.ConfigPath == "" {
		return false, nil
	}
	pid, err := r.find()
	return pid != 0, err
}

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
func (c *Controller) watchKeepalived(ctx context.Context) {
	probe, ok := c.o.Reloader.(KeepalivedProbe)
	if !ok || c.o.KeepalivedCheck < 0 {
		return
	}
	every := c.o.KeepalivedCheck
	if every == 0 {
		every = 500 * time.Millisecond
	}
	tick := time.NewTicker(every)
	defer tick.Stop()
	gone := 0
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		running, err := probe.Running()
		if err != nil {
			c.log.Warn("check whether keepalived runs", "error", err)
			gone = 0
			continue
		}
		if running {
			if gone >= orphanChecks {
				c.log.Info("keepalived is running again")
			}
			gone = 0
			continue
		}
		gone++
		if gone < orphanChecks {
			continue
		}
		if n, err := c.releaseOrphans(); err != nil {
			c.log.Error("release addresses left by a dead keepalived", "error", err)
		} else if n > 0 {
			c.m.OrphansReleased.Add(float64(n))
			c.log.Warn("keepalived is not running; released the VIPs it left on the interface so the new master is the only holder",
				"released", n, "interface", c.o.Config.Interface)
			c.kickAddrs()
		}
	}
}

// releaseOrphans deletes every address of the installed layout (gateway VIPs and router VIPs)
// from the gateway interface and returns how many it removed.
func (c *Controller) releaseOrphans() (int, error) {
	c.mu.Lock()
	g := c.installed
	c.mu.Unlock()
	if g == nil {
		return 0, nil
	}
	layout := map[netip.Addr]bool{}
	for _, in := range g.Instances {
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
