//go:build linux

package gateway_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kubewin/kubewin/internal/plan"
	"github.com/kubewin/kubewin/internal/render"
	"github.com/kubewin/kubewin/internal/testenv/netns"
)

// TestStaggeredReloadWithoutRouterVIP covers the default layout (no router VIPs, Calico routes to
// the members): each member's controller reacts to a Node event on its own, so keepalived on the
// members reloads hundreds of milliseconds apart. keepalived 2.2.7 drops adverts whose address
// list differs from its own; when the advertised address depended on the instance's lowest
// gateway VIP, removing (or adding below) that VIP made a backup that reloaded before the
// holder stop hearing it and become MASTER about 180 ms later, and both held the gateway VIPs
// until the last member had reloaded (0.4-1.2 s of dual master in this test). With the
// renderer's stable advert anchor the holder must stay the only holder at every sample.
//
// Three members in their own namespaces on one bridge run the real keepalived (VRRPv3, 50 ms
// adverts) on configurations from render.KeepalivedConfig; the test rewrites the
// configurations and sends SIGHUP member by member, sampling every member's addresses every
// 10 ms.
func TestStaggeredReloadWithoutRouterVIP(t *testing.T) {
	const kept = "10.130.6.1" // held before and after every change
	low := plan.VIPPlan{Address: "10.130.5.1/24", PodCIDR: "10.130.5.0/24", WindowsNode: "win-a"}
	high := plan.VIPPlan{Address: "10.130.6.1/24", PodCIDR: "10.130.6.0/24", WindowsNode: "win-b"}
	cases := []struct {
		name        string
		before      []plan.VIPPlan
		after       []plan.VIPPlan
		holderFirst bool
		gap         time.Duration
	}{
		{name: "lowest VIP removed, backups reload first, 300ms apart", before: []plan.VIPPlan{low, high}, after: []plan.VIPPlan{high}, gap: 300 * time.Millisecond},
		{name: "lowest VIP removed, holder reloads first, 700ms apart", before: []plan.VIPPlan{low, high}, after: []plan.VIPPlan{high}, holderFirst: true, gap: 700 * time.Millisecond},
		{name: "lower VIP added, backups reload first, 500ms apart", before: []plan.VIPPlan{high}, after: []plan.VIPPlan{low, high}, gap: 500 * time.Millisecond},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			st := newStaggerTopology(t)
			st.write(tc.before)
			st.start()
			holder := st.waitSingleHolder(10 * time.Second)

			order := []*staggerMember{}
			for _, m := range st.ms {
				if m != holder {
					order = append(order, m)
				}
			}
			if tc.holderFirst {
				order = append([]*staggerMember{holder}, order...)
			} else {
				order = append(order, holder)
			}
			logOffsets := map[*staggerMember]int{}
			for _, m := range st.ms {
				b, _ := os.ReadFile(m.k.LogPath)
				logOffsets[m] = len(b)
			}

			stop := st.sample(kept)
			st.write(tc.after)
			for i, m := range order {
				if i > 0 {
					time.Sleep(tc.gap)
				}
				if err := m.k.Reload(); err != nil {
					t.Fatalf("SIGHUP %s: %v", m.name, err)
				}
			}
			// Well beyond a takeover (3 adverts + skew = 170 ms) after the last reload.
			time.Sleep(time.Second)
			s := stop()

			if s.samples < 50 {
				t.Fatalf("only %d samples taken", s.samples)
			}
			if s.multi > 0 || s.none > 0 {
				t.Errorf("%s: of %d samples, %d had more than one holder (%s with two or more) and %d none; holder changes: %s",
					kept, s.samples, s.multi, s.multiSpan, s.none, strings.Join(s.changes, ", "))
			}
			// nopreempt and no failover: the holder keeps every VIP of the new layout alone.
			for _, v := range tc.after {
				ip := strings.TrimSuffix(v.Address, "/24")
				if h := st.holders(ip); len(h) != 1 || h[0] != holder {
					t.Errorf("after the reloads %s is held by %v; want only %s", ip, names(h), holder.name)
				}
			}
			if removed := strings.TrimSuffix(low.Address, "/24"); len(tc.after) == 1 {
				if h := st.holders(removed); len(h) != 0 {
					t.Errorf("after the reloads the removed VIP %s is still held by %v", removed, names(h))
				}
			}
			for _, m := range st.ms {
				if m == holder {
					continue
				}
				b, _ := os.ReadFile(m.k.LogPath)
				if tail := string(b[logOffsets[m]:]); strings.Contains(tail, "Entering MASTER STATE") {
					t.Errorf("backup %s entered MASTER during the staggered reload:\n%s", m.name, tail)
				}
			}
			t.Logf("%s held %s alone in all %d samples", holder.name, kept, s.samples)
		})
	}
}

type staggerMember struct {
	name string
	ns   *netns.NS
	dir  string
	conf string
	k    *netns.Keepalived
}

type staggerTopology struct {
	t  *testing.T
	ms []*staggerMember
}

func newStaggerTopology(t *testing.T) *staggerTopology {
	st := &staggerTopology{t: t}
	sw := netns.New(t, "sw")
	sw.Bridge(t, "br0")
	for _, m := range members() {
		ns := netns.New(t, m.Node)
		port := "p-" + m.Node
		netns.Veth(t, ns, gwInterface, sw, port)
		sw.Attach(t, port, "br0")
		ns.AddAddr(t, gwInterface, m.IP+"/24")
		dir := filepath.Join(t.TempDir(), m.Node)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		st.ms = append(st.ms, &staggerMember{name: m.Node, ns: ns, dir: dir, conf: filepath.Join(dir, "keepalived.conf")})
	}
	return st
}

// write renders every member's configuration for one instance without router VIP holding vips,
// and has keepalived -t accept it in the member's namespace.
func (st *staggerTopology) write(vips []plan.VIPPlan) {
	st.t.Helper()
	g := plan.GatewayGroupPlan{Name: groupName, Interface: gwInterface, Members: members(),
		VRRPVersion: 3, AdvertIntervalSeconds: 0.05, VRIDRange: [2]int{100, 120}, VIPsPerInstance: 254,
		Instances: []plan.VRRPInstancePlan{{Name: "kubewin_" + groupName + "_100", VRID: 100, VIPs: vips}}}
	for _, m := range st.ms {
		c, err := render.KeepalivedConfig(g, m.name)
		if err != nil {
			st.t.Fatal(err)
		}
		// Written whole and then renamed, as the controller installs it: a reload never reads
		// half a file.
		tmp := m.conf + ".tmp"
		if err := os.WriteFile(tmp, c, 0o644); err != nil {
			st.t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		err = render.ValidateKeepalivedInNetns(ctx, m.ns.Name, tmp)
		cancel()
		if err != nil {
			st.t.Fatal(err)
		}
		if err := os.Rename(tmp, m.conf); err != nil {
			st.t.Fatal(err)
		}
	}
}

func (st *staggerTopology) start() {
	for _, m := range st.ms {
		m.k = netns.StartKeepalived(st.t, m.ns, m.conf, m.dir)
		k, name := m.k, m.name
		st.t.Cleanup(func() {
			if st.t.Failed() {
				var keep []string
				for _, l := range strings.Split(k.Log(), "\n") {
					if !strings.Contains(l, "gratuitous ARP") {
						keep = append(keep, l)
					}
				}
				st.t.Logf("keepalived log of %s, without GARP lines:\n%s", name, strings.Join(keep, "\n"))
			}
		})
	}
}

func (st *staggerTopology) holders(ip string) []*staggerMember {
	var out []*staggerMember
	for _, m := range st.ms {
		ok, err := m.ns.HasAddr(ip)
		if err != nil {
			st.t.Error(err)
		}
		if ok {
			out = append(out, m)
		}
	}
	return out
}

func names(ms []*staggerMember) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.name)
	}
	return out
}

// waitSingleHolder waits until one member has held the instance's first VIP alone for 500 ms
// (the election is over) and returns it.
func (st *staggerTopology) waitSingleHolder(timeout time.Duration) *staggerMember {
	st.t.Helper()
	const ip = "10.130.6.1"
	deadline := time.Now().Add(timeout)
	var since time.Time
	var last []*staggerMember
	for {
		h := st.holders(ip)
		switch {
		case len(h) != 1 || len(last) != 1 || h[0] != last[0]:
			since = time.Now()
		case time.Since(since) >= 500*time.Millisecond:
			return h[0]
		}
		last = h
		if time.Now().After(deadline) {
			st.t.Fatalf("%s not held by a single member for 500 ms within %s (holders %v)", ip, timeout, names(h))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

type holderSamples struct {
	samples, multi, none int
	multiSpan            time.Duration // first to last sample with two or more holders
	changes              []string      // "+0.181s [gw1 gw2]"
}

// sample polls the holders of ip every 10 ms until the returned function is called.
func (st *staggerTopology) sample(ip string) func() holderSamples {
	var mu sync.Mutex
	var s holderSamples
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		start := time.Now()
		var firstMulti, lastMulti time.Time
		prev := ""
		for {
			select {
			case <-stop:
				mu.Lock()
				if !firstMulti.IsZero() {
					s.multiSpan = lastMulti.Sub(firstMulti)
				}
				mu.Unlock()
				return
			case <-time.After(10 * time.Millisecond):
			}
			h := names(st.holders(ip))
			now := time.Now()
			mu.Lock()
			s.samples++
			switch {
			case len(h) > 1:
				s.multi++
				if firstMulti.IsZero() {
					firstMulti = now
				}
				lastMulti = now
			case len(h) == 0:
				s.none++
			}
			if cur := fmt.Sprint(h); cur != prev {
				s.changes = append(s.changes, fmt.Sprintf("+%.3fs %s", now.Sub(start).Seconds(), cur))
				prev = cur
			}
			mu.Unlock()
		}
	}()
	return func() holderSamples {
		close(stop)
		<-done
		mu.Lock()
		defer mu.Unlock()
		return s
	}
}
