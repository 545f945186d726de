package verify

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/kubewin/kubewin/internal/plan"
	"github.com/kubewin/kubewin/internal/testgen"
	"github.com/kubewin/kubewin/pkg/api/v1alpha1"
)

// genInput builds the benchmark cluster: testgen.Cluster (Calico, upstream-tor/keepalived,
// Linux racks of 1000 on /22 segments, Windows nodes on their gateway group's segment) with
// podsPerNode pods per node and `services` services of three backends each. testgen's NICs have
// no default gateway, so every segment gets one router (the .254 of its last /24) — otherwise
// racks could not reach each other and every cross-rack flow would fail.
func genInput(tb testing.TB, linux, windows, groups, services int) Input {
	tb.Helper()
	c := testgen.Cluster(linux, windows, groups)
	for i := range c.Spec.Nodes {
		for j := range c.Spec.Nodes[i].NICs {
			nic := &c.Spec.Nodes[i].NICs[j]
			p, a, err := parseIfacePrefix(fmt.Sprintf("%s/%d", nic.IP, nic.Prefix))
			if err != nil {
				tb.Fatal(err)
			}
			_ = a
			seg := prefixOf(p.Addr, p.Len)
			if nic.Name == c.Spec.Nodes[i].ClusterNIC {
				nic.Gateway = (seg.Last() - 1).String()
			}
		}
	}
	p, err := plan.New(c)
	if err != nil {
		tb.Fatalf("plan: %v", err)
	}
	var svcs []ServiceSpec
	n := len(p.Nodes)
	for i := 0; i < services; i++ {
		s := ServiceSpec{Name: fmt.Sprintf("svc-%04d", i), ClusterIP: fmt.Sprintf("172.20.%d.%d", 8+i/250, i%250+1),
			Ports: []ServicePort{{Protocol: "TCP", Port: 80, TargetPort: 8080, NodePort: 30000 + i}}}
		if i%10 == 0 {
			s.Ports = append(s.Ports, ServicePort{Protocol: "UDP", Port: 53, TargetPort: 5353})
		}
		for j := 0; j < 3; j++ {
			np := p.Nodes[(i*7919+j*104729)%n]
			pc, err := ParsePrefix(np.PodCIDR)
			if err != nil {
				tb.Fatal(err)
			}
			s.Backends = append(s.Backends, pc.Nth(uint32(10+(i+j)%100)).String())
		}
		svcs = append(svcs, s)
	}
	return Input{Plan: p, Spec: c, Services: svcs}
}

func BenchmarkVerifyFull(b *testing.B) {
	in := genInput(b, 4000, 1000, 4, 2000)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		m, err := Build(in)
		if err != nil {
			b.Fatal(err)
		}
		r := NewVerifier(m, false).Run()
		if i == 0 {
			b.ReportMetric(float64(r.Summary.Flows), "flows")
			b.ReportMetric(float64(r.NodeClasses), "classes")
		}
	}
}

// joinNodes returns a Linux and a Windows node to add to the generated cluster: copies of an
// existing rack-0 worker and of the first Windows node with fresh names, addresses and pod CIDRs,
// the Windows one with a gateway VIP in its group's first instance.
func joinNodes(tb testing.TB, in Input) (lin, win *plan.NodePlan, linSpec, winSpec *v1alpha1.Node, vip *plan.VIPPlan, instance string) {
	tb.Helper()
	p := in.Plan
	for i := range p.Nodes {
		n := p.Nodes[i]
		if lin == nil && n.OS == "linux" && n.Linux != nil && n.Linux.Gateway == nil && n.Name > "linux-00010" {
			c := n
			c.Name, c.NodeIP, c.PodCIDR = "linux-join", "100.64.3.240", "10.250.0.0/24"
			lin = &c
		}
		if win == nil && n.OS == "windows" {
			c := n
			wp := *n.Windows
			c.Name, c.PodCIDR = "win-join", "10.250.1.0/24"
			ip, _ := ParseAddr(n.NodeIP)
			c.NodeIP = (ip + 200).String()
			wp.Gateway, wp.HostEndpointIP, wp.PodIPRangeStart = "10.250.1.1", "10.250.1.2", "10.250.1.3"
			c.Windows = &wp
			win = &c
			for _, g := range p.GatewayGroups {
				for _, inst := range g.Instances {
					for _, v := range inst.VIPs {
						if v.WindowsNode == n.Name {
							instance = inst.Name
						}
					}
				}
			}
		}
	}
	for i := range in.Spec.Spec.Nodes {
		sn := in.Spec.Spec.Nodes[i]
		if sn.Name == "linux-00011" && linSpec == nil {
			c := sn
			c.Name = "linux-join"
			c.NICs = []v1alpha1.NIC{sn.NICs[0]}
			c.NICs[0].IP = lin.NodeIP
			linSpec = &c
		}
		if sn.OS == v1alpha1.OSWindows && winSpec == nil {
			c := sn
			c.Name = "win-join"
			c.NICs = []v1alpha1.NIC{sn.NICs[0]}
			c.NICs[0].IP = win.NodeIP
			winSpec = &c
		}
	}
	vip = &plan.VIPPlan{Address: "10.250.1.1/24", PodCIDR: "10.250.1.0/24", WindowsNode: "win-join"}
	return lin, win, linSpec, winSpec, vip, instance
}

func holderOf(m *Model, group int) string {
	return m.Groups[group].Instances[0].Holder.Name
}

// BenchmarkVerifyIncremental measures re-verification after one change, starting each time
// from a fully verified 5,000-node cluster (set up outside the timer).
func BenchmarkVerifyIncremental(b *testing.B) {
	in := genInput(b, 4000, 1000, 4, 2000)
	lin, win, linSpec, winSpec, vip, inst := joinNodes(b, in)
	for _, tc := range []struct {
		name   string
		change func(v *Verifier) error
	}{
		{"join-linux", func(v *Verifier) error { return v.Join(lin, linSpec, nil, "") }},
		{"join-windows", func(v *Verifier) error { return v.Join(win, winSpec, vip, inst) }},
		{"gateway-down", func(v *Verifier) error {
			return v.Apply(Scenario{Kind: "gateway-down", Targets: []string{holderOf(v.m, 0)}})
		}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			var evaluated int
			var cpu time.Duration
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				m, err := Build(in)
				if err != nil {
					b.Fatal(err)
				}
				v := NewVerifier(m, false)
				v.Run()
				runtime.GC() // the setup's garbage is not the change's cost
				c0 := cpuTime()
				b.StartTimer()
				if err := tc.change(v); err != nil {
					b.Fatal(err)
				}
				v.Run()
				b.StopTimer()
				cpu += cpuTime() - c0
				evaluated = v.Evaluated
			}
			b.ReportMetric(float64(evaluated), "re-evaluated")
			b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms/op")
		})
	}
}

// BenchmarkVerifySideBySide measures, in one run on the 5,000-node cluster: full verification
// over equivalence classes, incremental re-verification after a node joins and after a gateway
// holder dies, and the naive per-node-pair cost (every node its own class), which is sampled —
// 25 million node pairs per flow kind cannot be run on 2 cores in a benchmark — and
// extrapolated to the node pairs the class run stands for. It also runs the naive verifier in
// full on a 120-node cluster of the same shape, measured, next to its class run.
func BenchmarkVerifySideBySide(b *testing.B) {
	in := genInput(b, 4000, 1000, 4, 2000)
	lin, _, linSpec, _, _, _ := joinNodes(b, in)
	for i := 0; i < b.N; i++ {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		start, c0 := time.Now(), cpuTime()
		m, err := Build(in)
		if err != nil {
			b.Fatal(err)
		}
		v := NewVerifier(m, false)
		r := v.Run()
		full, fullCPU := time.Since(start), cpuTime()-c0
		runtime.ReadMemStats(&after)

		runtime.GC() // the full run's garbage is not the change's cost
		start, c0 = time.Now(), cpuTime()
		if err := v.Join(lin, linSpec, nil, ""); err != nil {
			b.Fatal(err)
		}
		v.Run()
		join, joinCPU, joinEval := time.Since(start), cpuTime()-c0, v.Evaluated

		runtime.GC()
		start, c0 = time.Now(), cpuTime()
		if err := v.Apply(Scenario{Kind: "gateway-down", Targets: []string{holderOf(m, 0)}}); err != nil {
			b.Fatal(err)
		}
		v.Run()
		gw, gwCPU, gwEval := time.Since(start), cpuTime()-c0, v.Evaluated

		// Naive: sample node pairs of every flow kind the class run evaluated, each pair
		// evaluated on its own, and extrapolate to all node pairs.
		specs := v.enumerate()
		start = time.Now()
		samples := 0
		for round := 0; time.Since(start) < 2*time.Second; round++ {
			for _, s := range specs {
				spec := s.spec
				m.evaluate(&spec, false, nil)
				samples++
			}
		}
		perPair := time.Since(start) / time.Duration(samples)
		naive := perPair * time.Duration(r.Summary.NodePairs)

		// Measured naive vs classes on 300 nodes.
		small := genInput(b, 96, 24, 4, 48)
		sm, err := Build(small)
		if err != nil {
			b.Fatal(err)
		}
		start = time.Now()
		NewVerifier(sm, false).Run()
		smallClasses := time.Since(start)
		sm2, _ := Build(small)
		start = time.Now()
		nr := NewVerifier(sm2, true).Run()
		smallNaive := time.Since(start)

		b.ReportMetric(full.Seconds(), "full_s")
		b.ReportMetric(fullCPU.Seconds(), "full_cpu_s")
		b.ReportMetric(float64(gwCPU.Microseconds())/1000, "gwdown_cpu_ms")
		b.ReportMetric(float64(joinCPU.Microseconds())/1000, "join_cpu_ms")
		b.ReportMetric(float64(join.Microseconds())/1000, "join_ms")
		b.ReportMetric(float64(gw.Microseconds())/1000, "gwdown_ms")
		b.ReportMetric(naive.Seconds(), "naive_extrapolated_s")
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/(1<<20), "live_MiB")
		b.ReportMetric(float64(after.Sys)/(1<<20), "sys_MiB")
		if i == 0 {
			b.Logf("\n5,000 nodes (4,000 Linux, 1,000 Windows, 4 gateway groups), 2,000 services:\n"+
				"  full, classes:          %8.3f s  (%.3f s CPU; %d node classes, %d representative flows for %d node pairs; heap %d MiB live, %d MiB from the OS)\n"+
				"  incremental, join:      %8.3f ms (%.1f ms CPU; %d flows re-evaluated)\n"+
				"  incremental, gw down:   %8.3f ms (%.1f ms CPU; %d flows re-evaluated)\n"+
				"  naive per node pair:    %8.1f s  (extrapolated: %v per pair from %d sampled evaluations x %d node pairs)\n"+
				"120 nodes (96 Linux, 24 Windows, 4 groups), both measured:\n"+
				"  classes %v, naive %v (%d node pairs, %.0fx)",
				full.Seconds(), fullCPU.Seconds(), r.NodeClasses, r.Summary.Flows, r.Summary.NodePairs, (after.HeapAlloc-before.HeapAlloc)>>20, after.Sys>>20,
				float64(join.Microseconds())/1000, float64(joinCPU.Microseconds())/1000, joinEval,
				float64(gw.Microseconds())/1000, float64(gwCPU.Microseconds())/1000, gwEval,
				naive.Seconds(), perPair, samples, r.Summary.NodePairs,
				smallClasses.Round(time.Millisecond), smallNaive.Round(time.Millisecond), nr.Summary.NodePairs, float64(smallNaive)/float64(smallClasses))
		}
	}
}

// TestGeneratedClusterSmall runs the benchmark cluster's shape at a small size and checks the
// class result against the per-node-pair one.
func TestGeneratedClusterSmall(t *testing.T) {
	in := genInput(t, 40, 12, 3, 30)
	m, err := Build(in)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	v := NewVerifier(m, false)
	r := v.Run()
	t.Logf("classes %d, flows %d, failed %d in %v", r.NodeClasses, r.Summary.Flows, r.Summary.Failed, time.Since(start))
	for i, f := range r.Failures {
		if i < 5 {
			t.Logf("failure %s %s: %s %s", f.Flow, f.Proto, f.Disposition, f.Cause)
		}
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	_ = v1alpha1.GroupVersion
}
