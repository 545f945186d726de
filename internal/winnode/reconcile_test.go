package winnode

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/kubewin/kubewin/pkg/api/v1alpha1"
)

// testDesigns: the example (upstream-tor/keepalived, host routes on the host endpoint's vNIC),
// host-gw (host routes by next hop) and the flannel designs (no host routes, flanneld creates
// the pod network).
var testDesigns = []v1alpha1.NetworkDesign{"", v1alpha1.DesignHostGW, v1alpha1.DesignFlannelHostGW, v1alpha1.DesignFlannelVXLAN}

func designName(d v1alpha1.NetworkDesign) string {
	if d == "" {
		return "example"
	}
	return strings.ReplaceAll(string(d), "/", "-")
}

func TestFirstBootFromNothing(t *testing.T) {
	for _, design := range testDesigns {
		t.Run(designName(design), func(t *testing.T) {
			nd := newNode(t, design)
			rep := nd.healthyPass(t)
			nd.assertNetwork(t, nd.n.Windows.AdapterName)
			nd.assertRoutes(t)
			nd.assertRunning(t)
			if got := nd.host.LoadBalancers(); got != testLoadBalancers {
				t.Errorf("load balancers = %d, want %d", got, testLoadBalancers)
			}
			// Every service in order, kube-proxy only once its network exists.
			prev := -1
			for _, s := range nd.desired.Services {
				i := nd.host.Index(0, "start", s.Name)
				if i < prev {
					t.Errorf("service %s started at event %d, before the previous service (%d)", s.Name, i, prev)
				}
				prev = i
			}
			if net, proxy := nd.host.Index(0, "network-create", nd.desired.ProxyNetwork), nd.host.Index(0, "start", nd.desired.KubeProxy); net < 0 || proxy < net {
				t.Errorf("kube-proxy started at event %d, its network created at %d: %v", proxy, net, nd.host.Events())
			}
			if len(rep.Repairs) == 0 {
				t.Error("first pass reports no repairs")
			}
			for _, r := range rep.Repairs {
				if r.What == "" || r.Why == "" {
					t.Errorf("repair without what or why: %+v", r)
				}
			}
			// A second pass finds nothing to do.
			again := nd.healthyPass(t)
			if len(again.Repairs) != 0 {
				t.Errorf("second pass repaired %+v", again.Repairs)
			}
		})
	}
}

func TestRebootRepairs(t *testing.T) {
	for _, design := range testDesigns {
		t.Run(designName(design), func(t *testing.T) {
			nd := newNode(t, design)
			nd.healthyPass(t)
			nd.host.Reboot()
			mark := len(nd.host.Events())
			if len(nd.host.Networks()) != 0 || nd.host.LoadBalancers() != 0 {
				t.Fatal("the model kept HNS state over a reboot")
			}
			if nd.host.State("containerd") != ServiceRunning || nd.host.State("kubelet") != ServiceStopped {
				t.Fatalf("after reboot containerd is %s and kubelet %s; want the automatic service only", nd.host.State("containerd"), nd.host.State("kubelet"))
			}
			if len(nd.host.HostRoutes()) != 0 {
				t.Fatal("the model kept host routes over a reboot")
			}
			rep := nd.healthyPass(t)
			nd.assertNetwork(t, nd.n.Windows.AdapterName)
			nd.assertRoutes(t)
			nd.assertRunning(t)
			net := nd.host.Index(mark, "network-create", nd.desired.ProxyNetwork)
			proxy := nd.host.Index(mark, "start", nd.desired.KubeProxy)
			if net < 0 || proxy < net {
				t.Errorf("after reboot kube-proxy started at event %d, its network created at %d: %v", proxy, net, nd.host.Events()[mark:])
			}
			for _, s := range nd.desired.Services {
				if s.AfterNetwork {
					if i := nd.host.Index(mark, "start", s.Name); i < nd.host.Index(mark, "network-create", nd.desired.Networks[len(nd.desired.Networks)-1].Name) {
						t.Errorf("%s started at event %d before the network", s.Name, i)
					}
				}
			}
			if nd.host.Index(mark, "stop", nd.desired.KubeProxy) >= 0 {
				t.Error("kube-proxy was restarted although it had just been started")
			}
			if nd.host.LoadBalancers() != testLoadBalancers {
				t.Errorf("load balancers = %d after the repair", nd.host.LoadBalancers())
			}
			if !strings.Contains(rep.Repairs[0].Why, "reboot") {
				t.Errorf("first repair after reboot says %q", rep.Repairs[0].Why)
			}
		})
	}
}

func TestHNSRestartRestartsKubeProxyOnce(t *testing.T) {
	for _, design := range testDesigns {
		t.Run(designName(design), func(t *testing.T) {
			nd := newNode(t, design)
			nd.healthyPass(t)
			before := nd.host.Networks()
			nd.host.RestartHNS()
			mark := len(nd.host.Events())
			if nd.host.LoadBalancers() != 0 {
				t.Fatal("the model kept load balancers over an HNS restart")
			}
			rep := nd.healthyPass(t)
			if got := countFrom(nd.host, mark, "stop", nd.desired.KubeProxy); got != 1 {
				t.Errorf("kube-proxy stopped %d times, want 1", got)
			}
			if got := countFrom(nd.host, mark, "start", nd.desired.KubeProxy); got != 1 {
				t.Errorf("kube-proxy started %d times, want 1", got)
			}
			for _, kind := range []string{"network-create", "network-delete", "endpoint-create", "endpoint-delete"} {
				for _, e := range nd.host.Events()[mark:] {
					if e.Kind == kind {
						t.Errorf("the network was touched: %v", e)
					}
				}
			}
			if after := nd.host.Networks(); len(after) != len(before) || after[0].ID != before[0].ID {
				t.Errorf("networks changed: %+v -> %+v", before, after)
			}
			for _, s := range []string{"containerd", "kubelet"} {
				if countFrom(nd.host, mark, "stop", s) != 0 {
					t.Errorf("%s was stopped", s)
				}
			}
			if nd.host.LoadBalancers() != testLoadBalancers || rep.LoadBalancers != testLoadBalancers {
				t.Errorf("load balancers = %d (report %d) after the restart", nd.host.LoadBalancers(), rep.LoadBalancers)
			}
			if len(rep.Repairs) != 1 || !strings.Contains(rep.Repairs[0].Why, "HNS restarted") {
				t.Errorf("repairs = %+v", rep.Repairs)
			}
			mark = len(nd.host.Events())
			if again := nd.healthyPass(t); len(again.Repairs) != 0 || countFrom(nd.host, mark, "stop", nd.desired.KubeProxy) != 0 {
				t.Errorf("the next pass restarted kube-proxy again: %+v", again.Repairs)
			}
		})
	}
}

func TestAdapterRenamedRebindsNetwork(t *testing.T) {
	const renamed = "Ethernet 3"
	tests := []struct {
		name   string
		reboot bool
	}{
		{"while running", false},
		{"then reboot", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			nd := newNode(t, "")
			ctx := testCtx(t)
			nd.healthyPass(t)
			if err := nd.host.RenameAdapter(ctx, nd.n.Windows.AdapterName, renamed); err != nil {
				t.Fatal(err)
			}
			if tc.reboot {
				nd.host.Reboot()
			}
			mark := len(nd.host.Events())
			rep := nd.healthyPass(t)
			nd.assertNetwork(t, renamed)
			nd.assertRoutes(t)
			nd.assertRunning(t)
			if !tc.reboot {
				if !strings.Contains(rep.Repairs[0].Why, `now "Ethernet 3"`) {
					t.Errorf("repair says %+v", rep.Repairs[0])
				}
				// kube-proxy's load balancers referred to the old network: restarted after it.
				create := nd.host.Index(mark, "network-create", nd.desired.ProxyNetwork)
				start := nd.host.Index(mark, "start", nd.desired.KubeProxy)
				if create < 0 || start < create || countFrom(nd.host, mark, "start", nd.desired.KubeProxy) != 1 {
					t.Errorf("kube-proxy restart at %d, network at %d: %v", start, create, nd.host.Events()[mark:])
				}
			}
			if again := nd.healthyPass(t); len(again.Repairs) != 0 {
				t.Errorf("second pass repaired %+v", again.Repairs)
			}
		})
	}
}

func TestServiceThatWillNotStart(t *testing.T) {
	const reason = `open C:\k\kubelet.conf: The system cannot find the file specified.`
	nd := newNode(t, "")
	nd.host.FailStart("kubelet", reason)
	rep := nd.pass(t)
	if rep.Healthy {
		t.Fatal("healthy although kubelet does not start")
	}
	if want := "service kubelet does not start: " + reason; rep.Reason() != want {
		t.Errorf("reason = %q, want %q", rep.Reason(), want)
	}
	// containerd and kube-proxy (which does not depend on the kubelet) run; the network is there.
	for _, s := range []string{"containerd", "kube-proxy"} {
		if nd.host.State(s) != ServiceRunning {
			t.Errorf("%s is %s", s, nd.host.State(s))
		}
	}
	nd.assertNetwork(t, nd.n.Windows.AdapterName)

	mark := len(nd.host.Events())
	rep = nd.pass(t)
	if rep.Healthy || countFrom(nd.host, mark, "start-failed", "kubelet") != 1 {
		t.Errorf("next pass did not retry the kubelet: %v", nd.host.Events()[mark:])
	}
	for _, e := range nd.host.Events()[mark:] {
		if e.Name != "kubelet" {
			t.Errorf("another service or network was touched: %v", e)
		}
	}
	nd.host.FailStart("kubelet", "")
	rep = nd.healthyPass(t)
	if len(rep.Repairs) != 1 || rep.Repairs[0].What != "started service kubelet" {
		t.Errorf("repairs = %+v", rep.Repairs)
	}
}

func TestFlanneldWaitsForKubelet(t *testing.T) {
	nd := newNode(t, v1alpha1.DesignFlannelHostGW)
	nd.host.FailStart("kubelet", "kubelet crashed")
	rep := nd.pass(t)
	want := []string{
		"service kubelet does not start: kubelet crashed",
		"service flanneld not started: waiting for service kubelet",
		"service kube-proxy not started: waiting for service flanneld",
	}
	if strings.Join(rep.Problems, "\n") != strings.Join(want, "\n") {
		t.Errorf("problems = %q, want %q", rep.Problems, want)
	}
	if nd.host.Count("start", "kube-proxy") != 0 {
		t.Error("kube-proxy started without its network")
	}
}

func TestKubeProxyNeverBeforeNetwork(t *testing.T) {
	// The cluster adapter is missing (driver not loaded yet): no network can be built.
	nd := newNode(t, "")
	ctx := testCtx(t)
	if err := nd.host.RenameAdapter(ctx, nd.n.Windows.AdapterName, "tmp"); err != nil {
		t.Fatal(err)
	}
	nd.r.Desired.AdapterMAC = "02:00:00:00:00:99"
	rep := nd.pass(t)
	if rep.Healthy || !strings.HasPrefix(rep.Problems[0], "no network adapter with MAC 02:00:00:00:00:99") {
		t.Fatalf("problems = %q", rep.Problems)
	}
	for _, s := range []string{"kubelet", "kube-proxy"} {
		if nd.host.State(s) == ServiceRunning {
			t.Errorf("%s started without the HNS network", s)
		}
	}
	if nd.host.State("containerd") != ServiceRunning {
		t.Error("containerd, which needs no network, was not started")
	}
	if !strings.Contains(rep.Reason(), "service kube-proxy not started: waiting for the HNS network") {
		t.Errorf("reason = %q", rep.Reason())
	}
}

func TestLoadBalancerCollapse(t *testing.T) {
	nd := newNode(t, "")
	nd.r.ExpectedLoadBalancers = func(context.Context) (int, error) { return testLoadBalancers, nil }
	nd.healthyPass(t)
	nd.healthyPass(t)
	nd.host.DropLoadBalancers()
	mark := len(nd.host.Events())
	rep := nd.healthyPass(t)
	if countFrom(nd.host, mark, "start", "kube-proxy") != 1 || nd.host.LoadBalancers() != testLoadBalancers {
		t.Fatalf("kube-proxy not restarted after its load balancers collapsed: %v", nd.host.Events()[mark:])
	}
	if !strings.Contains(rep.Repairs[0].Why, "0 load balancers, 12 expected") {
		t.Errorf("repair = %+v", rep.Repairs)
	}
}

func TestLoadBalancerCollapseGraceAfterStart(t *testing.T) {
	// A kube-proxy that has not synced yet has no load balancers; it gets one pass to sync.
	nd := newNode(t, "")
	nd.host.SetBehavior("kube-proxy", ServiceBehavior{ProgramsNetwork: nd.desired.ProxyNetwork, LoadBalancers: 0})
	nd.r.ExpectedLoadBalancers = func(context.Context) (int, error) { return 3, nil }
	nd.healthyPass(t) // starts kube-proxy
	nd.healthyPass(t) // grace
	if nd.host.Count("stop", "kube-proxy") != 0 {
		t.Fatal("kube-proxy restarted during its first sync")
	}
	rep := nd.healthyPass(t)
	if nd.host.Count("stop", "kube-proxy") != 1 || len(rep.Repairs) != 1 {
		t.Errorf("kube-proxy not restarted after the grace pass: %+v", rep.Repairs)
	}
}

func TestPassBoundedWhenHNSHangs(t *testing.T) {
	nd := newNode(t, "")
	nd.healthyPass(t)
	nd.host.HangHNS(true)
	nd.r.PassTimeout = 50 * time.Millisecond
	start := time.Now()
	rep, err := nd.r.Reconcile(testCtx(t))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want the pass deadline", err)
	}
	if elapsed := time.Since(start); elapsed > 5*time.Second {
		t.Errorf("pass took %v with a 50ms deadline", elapsed)
	}
	if rep.Healthy || !strings.Contains(rep.Reason(), "HNS did not answer") {
		t.Errorf("report = %+v", rep)
	}
	nd.host.HangHNS(false)
	nd.healthyPass(t)
}

func TestLoopBacksOffAndRecovers(t *testing.T) {
	nd := newNode(t, "")
	nd.host.FailStart("kubelet", "bad config")
	nd.r.RetryMin, nd.r.MaxBackoff = time.Second, 5*time.Second
	ctx, cancel := context.WithCancel(testCtx(t))
	defer cancel()
	var delays []time.Duration
	var reports []Report
	nd.r.OnReport = func(r Report) { reports = append(reports, r) }
	nd.r.sleep = func(ctx context.Context, d time.Duration) error {
		delays = append(delays, d)
		switch len(delays) {
		case 5:
			nd.host.FailStart("kubelet", "")
		case 7:
			cancel()
			return ctx.Err()
		}
		return nil
	}
	if err := nd.r.Loop(ctx, time.Minute); !errors.Is(err, context.Canceled) {
		t.Fatalf("loop returned %v", err)
	}
	want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 5 * time.Second, 5 * time.Second, time.Minute, time.Minute}
	if len(delays) != len(want) {
		t.Fatalf("delays = %v, want %v", delays, want)
	}
	for i := range want {
		if delays[i] != want[i] {
			t.Fatalf("delays = %v, want %v", delays, want)
		}
	}
	if len(reports) != 7 || reports[4].Healthy || !reports[5].Healthy {
		t.Errorf("reports: %d, pass 5 healthy %v, pass 6 healthy %v", len(reports), reports[4].Healthy, reports[5].Healthy)
	}
}

func TestLoopStopsWithContext(t *testing.T) {
	nd := newNode(t, "")
	ctx, cancel := context.WithTimeout(testCtx(t), 100*time.Millisecond)
	defer cancel()
	if err := nd.r.Loop(ctx, 10*time.Millisecond); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("loop returned %v", err)
	}
	nd.assertRunning(t)
}

func countFrom(h *MemHost, from int, kind, name string) int {
	n := 0
	for _, e := range h.Events()[from:] {
		if e.Kind == kind && e.Name == name {
			n++
		}
	}
	return n
}
