package verify

import (
	"strings"
	"testing"
)

// TestDumpedRouteFollowsTheVIP (issue 25, item 3): master1's table was dumped while master3 held
// the gateway VIP (seed §2.6: 10.160.11.0/24 via master3 over tunl0, Calico's BGP export of
// master3's connected route). When master3 stops, the kernel loses that route with the VIP —
// BIRD withdraws master3's export and the new holder's connected route (or its export) takes
// its place — so the dumped route must follow the VIP, not keep pointing at master3 (which now
// routes the subnet back: a loop verify used to predict where the kernel delivers).
func TestDumpedRouteFollowsTheVIP(t *testing.T) {
	const route = "master1-after-keepalived.route-n.txt:5"
	dumps := []string{"master1=seed/master1-after-keepalived.route-n.txt", "master3=real/master3.keepalived.data", "master1=real/master1.keepalived.data"}
	for _, tc := range []struct {
		name      string
		scenarios []string
		holder    string
		// want is what master1's trace to node009's pod shows for the VIP subnet.
		want []string
	}{
		{name: "as dumped", holder: "master3", want: []string{"10.160.11.0/24 via 100.100.126.204 dev tunl0", route}},
		{name: "master3's keepalived stops", scenarios: []string{"gateway-down=master3"}, holder: "master1",
			want: []string{"10.160.11.0/24 dev eth1", route + ": the dumped route 10.160.11.0/24 via 100.100.126.204 dev tunl0 followed VIP subnet 10.160.11.0/24 from master3 to master1"}},
		{name: "master3 dies", scenarios: []string{"node-down=master3"}, holder: "master1",
			want: []string{"10.160.11.0/24 dev eth1", "followed VIP subnet 10.160.11.0/24 from master3 to master1"}},
		{name: "master3 and master1 stop", scenarios: []string{"gateway-down=master3", "gateway-down=master1"}, holder: "master2",
			want: []string{"10.160.11.0/24 via 100.100.126.203 dev tunl0", "from master3 to master2 — calico BGP: connected route of VIP 10.160.11.1 exported by its holder master2"}},
		{name: "back to master3", scenarios: []string{"gateway-down=master3", "gateway-up=master3", "gateway-down=master1", "gateway-down=master2"}, holder: "master3",
			want: []string{"10.160.11.0/24 via 100.100.126.204 dev tunl0", route}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, p := example(t)
			withWindowsHostRoute(p)
			// v runs before and after every scenario (incremental re-evaluation); fresh only at
			// the end: both must agree.
			v := NewVerifier(build(t, c, p, dumpSet(t, dumps...)), false)
			fresh := NewVerifier(build(t, c, p, dumpSet(t, dumps...)), true)
			v.Run()
			for _, s := range tc.scenarios {
				sc, err := ParseScenario(s)
				if err != nil {
					t.Fatal(err)
				}
				for _, x := range []*Verifier{v, fresh} {
					if err := x.Apply(sc); err != nil {
						t.Fatal(err)
					}
				}
				v.Run()
			}
			r := v.Run()
			want := map[string]Disposition{}
			fresh.Run()
			for _, f := range fresh.Results() {
				want[f.Flow+" "+f.Proto+" "+f.Src+" "+f.Dst+" "+f.Via] = f.Disposition
			}
			for _, f := range v.Results() {
				if d, ok := want[f.Flow+" "+f.Proto+" "+f.Src+" "+f.Dst+" "+f.Via]; ok && d != f.Disposition {
					t.Errorf("incremental %s, per node pair %s: %s %s %s -> %s", f.Disposition, d, f.Flow, f.Proto, f.Src, f.Dst)
				}
			}
			if h := r.Gateways[0].Holder; h != tc.holder {
				t.Fatalf("holder %s, want %s", h, tc.holder)
			}
			for _, f := range v.Results() {
				if f.Disposition == Loop {
					t.Errorf("loop: %s %s %s -> %s: %s", f.Flow, f.Proto, f.Src, f.Dst, f.Cause)
				}
			}
			for _, class := range []string{"pod→pod linux→windows", "pod→pod windows→linux"} {
				for _, f := range mustFlows(t, v, class, "tcp", "", "") {
					if f.Verdict != VerdictOK && (strings.HasPrefix(f.Src, "master1") || strings.HasPrefix(f.Dst, "master1")) {
						t.Errorf("%s %s -> %s: %s (%s)", class, f.Src, f.Dst, f.Disposition, f.Cause)
					}
				}
			}
			fr := traceFlow(t, v, "master1/pod", "node009/pod", TCP, 0)
			text := fr.Forward.Text("")
			if fr.Verdict != VerdictOK {
				t.Errorf("master1's pod to node009's pod: %s (%s)\n%s", fr.Disposition, fr.Cause, text)
			}
			for _, w := range tc.want {
				if !strings.Contains(text, w) {
					t.Errorf("the trace lacks %q:\n%s", w, text)
				}
			}
			if tc.holder == "master3" && strings.Contains(text, "followed") {
				t.Errorf("the VIPs are where they were dumped, but the trace shows a followed route:\n%s", text)
			}
		})
	}
}

// TestStaticRouteDoesNotFollowTheVIP: a route to the VIP's subnet via its holder that the dump
// says was added by hand (ip route "proto static") is the operator's, not the CNI's: the kernel
// keeps it when the VIP moves, and so does verify.
func TestStaticRouteDoesNotFollowTheVIP(t *testing.T) {
	for _, tc := range []struct {
		proto   string
		follows bool
	}{{"static", false}, {"bird", true}} {
		t.Run(tc.proto, func(t *testing.T) {
			c, p := example(t)
			withWindowsHostRoute(p)
			dump, err := ParseDump("node001", "node001.ip-route.txt", []byte("10.160.11.0/24 via 100.100.126.204 dev eth1 proto "+tc.proto+"\n...\n"))
			if err != nil {
				t.Fatal(err)
			}
			ds := dumpSet(t, "master3=real/master3.keepalived.data")
			ds.Files = append(ds.Files, dump)
			v := NewVerifier(build(t, c, p, ds), false)
			if err := v.Apply(Scenario{Kind: "gateway-down", Targets: []string{"master3"}}); err != nil {
				t.Fatal(err)
			}
			v.Run()
			text := traceFlow(t, v, "node001/pod", "node009/pod", TCP, 0).Forward.Text("")
			kept := strings.Contains(text, "10.160.11.0/24 via 100.100.126.204 dev eth1") && !strings.Contains(text, "followed")
			if kept == tc.follows {
				t.Errorf("proto %s: follows %t, but the trace says otherwise:\n%s", tc.proto, tc.follows, text)
			}
		})
	}
}

// TestDuringFailoverView (issue 25, item 5): next to the steady state after a scenario that
// moves the gateway VIP, the report shows the window in which hosts still send to the former
// holder's MAC — bounded by keepalived's gratuitous ARP when a member takes over, by the
// kernel's neighbour timers when none does — and the flow classes whose verdict differs
// meanwhile.
func TestDuringFailoverView(t *testing.T) {
	if w := DefaultNeighTimers(); w.StaleWindow().Seconds() != 8 || w.MaxWindow().Seconds() != 53 {
		t.Fatalf("windows from Linux's default timers: %v, %v; want 8 s (5 s + 3 × 1 s) and 53 s (1.5 × 30 s + 8 s)", w.StaleWindow(), w.MaxWindow())
	}
	for _, tc := range []struct {
		scenario string
		from, to string
		min, max float64
		// changed: flow classes through the VIP have another verdict in the window: with the
		// former holder down they fail until the entries change; with it up but nobody holding
		// the VIP, flows whose replies do not need the VIP still work through it meanwhile
		// (external to a Windows NodePort whose endpoint is a Linux pod: SNAT to the node, so
		// the reply goes back to the node directly).
		changed bool
	}{
		{scenario: "node-down=master1", from: "master1", to: "master2", max: 5, changed: true},
		{scenario: "gateway-down=master1", from: "master1", to: "master2", max: 5},
		{scenario: "gateway-down=master1,master2,master3", from: "master1", to: "none", min: 8, max: 53, changed: true},
	} {
		t.Run(tc.scenario, func(t *testing.T) {
			c, p := example(t)
			withWindowsHostRoute(p)
			v := NewVerifier(build(t, c, p, nil), false)
			if d := v.Run().DuringFailover; d != nil {
				t.Fatalf("a during-failover view without a scenario: %+v", d)
			}
			sc, err := ParseScenario(tc.scenario)
			if err != nil {
				t.Fatal(err)
			}
			if err := v.Apply(sc); err != nil {
				t.Fatal(err)
			}
			steadyBefore := v.Run()
			r := v.Run()
			d := r.DuringFailover
			if d == nil || len(d.Gateways) != 1 {
				t.Fatalf("during-failover view: %+v", d)
			}
			g := d.Gateways[0]
			if g.From != tc.from || g.To != tc.to || g.MinSeconds != tc.min || g.MaxSeconds != tc.max || g.FromDown != strings.HasPrefix(tc.scenario, "node-down") {
				t.Errorf("transient %+v, want %s -> %s in [%g s, %g s]", g, tc.from, tc.to, tc.min, tc.max)
			}
			if (len(d.Flows) > 0) != tc.changed {
				t.Errorf("%d flow classes change verdict in the window, want changes: %t: %+v", len(d.Flows), tc.changed, d.Flows)
			}
			delivered := func(d Disposition) bool { return d == Delivered || d == DeliveredSNAT }
			for _, f := range d.Flows {
				switch {
				case g.FromDown:
					if !delivered(f.Steady) || f.During != Dropped || !strings.Contains(f.Cause, "still holds the MAC of master1, its former holder, which is down") {
						t.Errorf("flow in the window: %+v", f)
					}
				default:
					if delivered(f.Steady) || !delivered(f.During) {
						t.Errorf("flow in the window: %+v", f)
					}
				}
			}
			// The view leaves the steady state alone: the same results, classes and
			// verdicts on the next run.
			if r.Summary != steadyBefore.Summary || len(r.Matrix) != len(steadyBefore.Matrix) {
				t.Errorf("steady state changed by the view: %+v vs %+v", r.Summary, steadyBefore.Summary)
			}
			var b strings.Builder
			if err := r.WriteText(&b); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(b.String(), "DURING FAILOVER") || !strings.Contains(b.String(), g.Window) {
				t.Errorf("text report lacks the view:\n%s", b.String())
			}
		})
	}
}
