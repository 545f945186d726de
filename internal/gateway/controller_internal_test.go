//go:build linux

package gateway

import (
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/kubewin/kubewin/internal/plan"
)

func instance(vrid int, vips ...string) plan.VRRPInstancePlan {
	in := plan.VRRPInstancePlan{Name: "VI_" + strconv.Itoa(vrid), VRID: vrid}
	for _, v := range vips {
		in.VIPs = append(in.VIPs, plan.VIPPlan{Address: v})
	}
	return in
}

func layout(ins ...plan.VRRPInstancePlan) plan.GatewayGroupPlan {
	g := plan.GatewayGroupPlan{Instances: ins}
	for _, in := range ins {
		g.VRIDs = append(g.VRIDs, in.VRID)
		for _, v := range in.VIPs {
			g.VIPs = append(g.VIPs, v.Address)
		}
	}
	return g
}

// bareController is a Controller without informers or netlink, for the install-ordering rules
// (the in-memory state they read is all they need).
func bareController(rank int, step time.Duration) *Controller {
	return &Controller{
		o:        Options{StaggerStep: step, MinReloadInterval: time.Hour},
		log:      slog.New(slog.NewTextHandler(io.Discard, nil)),
		m:        NewMetrics(nil, "g", "m"),
		trigger:  make(chan struct{}, 1),
		rank:     rank,
		removeAt: map[int]time.Time{},
	}
}

func vrids(g plan.GatewayGroupPlan) []int {
	var out []int
	for _, in := range g.Instances {
		out = append(out, in.VRID)
	}
	return out
}

func TestStaggerNewInstances(t *testing.T) {
	old := layout(instance(100, "10.0.0.1/24"))
	next := layout(instance(100, "10.0.0.1/24", "10.0.1.1/24"), instance(101, "10.1.0.1/24"))

	top := bareController(0, 50*time.Millisecond)
	top.installed = &old
	if got := vrids(top.staggerNewInstances(next)); len(got) != 2 {
		t.Fatalf("highest-priority member withheld instances: %v", got)
	}

	c := bareController(2, 50*time.Millisecond)
	c.installed = &old
	got := c.staggerNewInstances(next)
	if v := vrids(got); len(v) != 1 || v[0] != 100 || len(got.Instances[0].VIPs) != 2 {
		t.Fatalf("rank 2 right away: %+v; want instance 100 updated, 101 withheld", got.Instances)
	}
	if len(got.VIPs) != 2 {
		t.Errorf("summary VIPs %v not recomputed", got.VIPs)
	}
	select {
	case <-c.trigger:
		t.Fatal("kicked before the stagger delay")
	case <-time.After(60 * time.Millisecond):
	}
	select {
	case <-c.trigger: // AfterFunc(2 × 50ms) fired
	case <-time.After(time.Second):
		t.Fatal("no re-sync after the stagger delay")
	}
	if v := vrids(c.staggerNewInstances(next)); len(v) != 2 {
		t.Fatalf("after the delay: %v, want both instances", v)
	}

	first := bareController(1, time.Hour)
	if v := vrids(first.staggerNewInstances(next)); len(v) != 2 {
		t.Fatalf("first sync after start (nothing installed) withheld instances: %v", v)
	}
}

func TestRemoveHeldInstancesLast(t *testing.T) {
	old := layout(instance(100, "10.0.0.1/24"), instance(101, "10.1.0.1/24"))
	next := layout(instance(100, "10.0.0.1/24"))

	backup := bareController(1, 50*time.Millisecond)
	backup.installed = &old
	if v := vrids(backup.removeHeldInstancesLast(next)); len(v) != 1 {
		t.Fatalf("member not holding 101 kept it: %v", v)
	}

	holder := bareController(1, 50*time.Millisecond)
	holder.installed = &old
	holder.hold = Holding{Instances: []string{"VI_101"}}
	if v := vrids(holder.removeHeldInstancesLast(next)); len(v) != 2 || v[1] != 101 {
		t.Fatalf("holder dropped 101 at once: %v", v)
	}
	select {
	case <-holder.trigger:
	case <-time.After(time.Second):
		t.Fatal("no re-sync after the removal delay")
	}
	kept := layout(instance(100, "10.0.0.1/24"), instance(101, "10.1.0.1/24"))
	holder.installed = &kept
	if v := vrids(holder.removeHeldInstancesLast(next)); len(v) != 1 {
		t.Fatalf("holder still keeps 101 after the delay: %v", v)
	}
	if len(holder.removeAt) != 0 {
		t.Errorf("removal state left behind: %v", holder.removeAt)
	}
}

func TestReloadBackoff(t *testing.T) {
	c := bareController(0, time.Second)
	c.o.ConfigPath = filepath.Join(t.TempDir(), "k.conf")
	if err := os.WriteFile(c.o.ConfigPath, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if w := c.reloadBackoff([]byte("new")); w != 0 {
		t.Fatalf("first install waits %s", w)
	}
	c.lastInstall = time.Now()
	if w := c.reloadBackoff([]byte("new")); w <= 0 {
		t.Fatal("a second change right after a reload was not spaced")
	}
	if w := c.reloadBackoff([]byte("old")); w != 0 {
		t.Fatal("an unchanged file waited")
	}
}

// TestPIDFileReloaderRefusesOtherProcesses: a stale pid file naming a live process that is not
// keepalived (here: this test binary) must not be signalled.
func TestPIDFileReloaderRefusesOtherProcesses(t *testing.T) {
	dir := t.TempDir()
	r := PIDFileReloader{PIDFile: filepath.Join(dir, "missing.pid")}
	if err := r.Reload(); !errors.Is(err, ErrNotRunning) {
		t.Fatalf("missing pid file: %v, want ErrNotRunning", err)
	}
	self := filepath.Join(dir, "self.pid")
	if err := os.WriteFile(self, []byte(strconv.Itoa(os.Getpid())+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r = PIDFileReloader{PIDFile: self, ConfigPath: filepath.Join(dir, "no-such-keepalived.conf")}
	if err := r.Reload(); !errors.Is(err, ErrNotRunning) {
		t.Fatalf("pid of a non-keepalived process: %v, want ErrNotRunning (and no signal)", err)
	}
}
