//go:build linux

package gateway_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubewin/kubewin/internal/gateway"
	"github.com/kubewin/kubewin/internal/render"
	"github.com/kubewin/kubewin/internal/testenv/netns"
)

// launchShipped starts m's keepalived the way the gateway DaemonSet runs it: SCHED_RR 10 for
// the whole process (keepalived's own vrrp_rt_priority cannot be used with keepalived 2.2.7: a
// reload sets RLIMIT_RTTIME to 0 and the kernel SIGKILLs the VRRP child — measured, and fixed
// upstream only in v2.3.4, acassen/keepalived 970890c6), and where the kernel refuses SCHED_RR,
// nice -20 instead. With cgroup set, keepalived starts inside that cgroup-v1 cpu cgroup (see
// noRTBudgetCgroup), where SCHED_RR is refused. It waits for the VRRP child's pid file.
func launchShipped(t testing.TB, m *member, cgroup string) {
	t.Helper()
	// The log goes to memory (/dev/shm), as the DaemonSet's keepalived logs to a pipe: a log file
	// on the disk that stress-ng's hdd workers load blocks keepalived's writes, a stall the
	// DaemonSet does not have.
	logDir, err := os.MkdirTemp("/dev/shm", "kubewin-bench-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(logDir) })
	k := &netns.Keepalived{NS: m.ns, ConfigPath: m.conf,
		PIDFile:     filepath.Join(m.dir, "keepalived.pid"),
		VRRPPIDFile: filepath.Join(m.dir, "vrrp.pid"),
		LogPath:     filepath.Join(logDir, "keepalived.log")}
	_ = os.Remove(k.PIDFile)
	_ = os.Remove(k.VRRPPIDFile)
	// The DaemonSet's arguments; -n = --dont-fork, -l = --log-console, -G = --no-syslog.
	args := []string{"--vrrp", "-n", "-l", "-G", "-f", m.conf, "-p", k.PIDFile, "-r", k.VRRPPIDFile}
	// Join the cgroup first (children inherit it), then try SCHED_RR and fall back to nice -20.
	script := `[ -z "$0" ] || echo $$ > "$0/cgroup.procs" || exit 1
if chrt --rr 10 true 2>/dev/null; then exec chrt --rr 10 keepalived "$@"; fi
echo "SCHED_RR refused: keepalived runs SCHED_OTHER nice -20"
exec nice -n -20 keepalived "$@"`
	k.Proc = m.ns.Start(t, k.LogPath, "sh", append([]string{"-c", script, cgroup}, args...)...)
	deadline := time.Now().Add(10 * time.Second)
	for {
		if pid, err := netns.ReadPID(k.VRRPPIDFile); err == nil && pid > 0 && netns.Alive(pid) {
			break
		}
		select {
		case <-k.Proc.Done():
			log, _ := os.ReadFile(k.LogPath)
			t.Fatalf("keepalived in %s exited at start:\n%s", m.ns.Name, log)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("keepalived in %s wrote no VRRP pid file within 10s", m.ns.Name)
		}
		time.Sleep(20 * time.Millisecond)
	}
	m.k = k
}

// noRTBudgetCgroup creates a cgroup-v1 cpu cgroup without a real-time budget — what a pod's
// cgroup is on a cgroup-v1 kernel with RT group scheduling (CONFIG_RT_GROUP_SCHED): a new cpu
// cgroup starts with cpu.rt_runtime_us 0, so sched_setscheduler(SCHED_RR) fails with EPERM for
// every task in it, root or not (Documentation/scheduler/sched-rt-group.rst). It skips when the
// host has no such hierarchy. Removed at cleanup.
func noRTBudgetCgroup(b *testing.B) string {
	root := "/sys/fs/cgroup/cpu"
	if _, err := os.Stat(filepath.Join(root, "cpu.rt_runtime_us")); err != nil {
		b.Skipf("no cgroup-v1 cpu hierarchy with RT group scheduling here (%v)", err)
	}
	dir := filepath.Join(root, fmt.Sprintf("kubewin-bench-%d", os.Getpid()))
	if err := os.Mkdir(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		// The members' processes are killed by their own cleanups, registered later, so they
		// run first; wait for the cgroup to empty.
		for i := 0; i < 500; i++ {
			if os.Remove(dir) == nil {
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
		b.Errorf("cgroup %s not removed", dir)
	})
	if v, _ := os.ReadFile(filepath.Join(dir, "cpu.rt_runtime_us")); strings.TrimSpace(string(v)) != "0" {
		b.Fatalf("new cgroup %s has RT budget %s, not 0", dir, v)
	}
	return dir
}

// schedOf reads the scheduling policy and real-time priority of pid (proc(5), /proc/pid/stat
// fields 40 rt_priority and 41 policy) and its run-queue wait and run count
// (/proc/pid/schedstat: time on CPU, time waiting on a run queue, timeslices run).
func schedOf(pid int) (policy string, rtprio int, wait time.Duration, slices int64, err error) {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return "", 0, 0, 0, err
	}
	// Fields after the command (which may hold spaces) start at field 3.
	f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
	if len(f) < 39 {
		return "", 0, 0, 0, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f)+2)
	}
	rtprio, _ = strconv.Atoi(f[37])
	pol, _ := strconv.Atoi(f[38])
	policy = map[int]string{0: "SCHED_OTHER", 1: "SCHED_FIFO", 2: "SCHED_RR", 3: "SCHED_BATCH", 5: "SCHED_IDLE"}[pol]
	ss, err := os.ReadFile(fmt.Sprintf("/proc/%d/schedstat", pid))
	if err != nil {
		return policy, rtprio, 0, 0, err
	}
	s := strings.Fields(string(ss))
	if len(s) == 3 {
		w, _ := strconv.ParseInt(s[1], 10, 64)
		slices, _ = strconv.ParseInt(s[2], 10, 64)
		wait = time.Duration(w)
	}
	return policy, rtprio, wait, slices, nil
}

// transitionRE matches keepalived's state-change lines ("(VI_1) Entering MASTER STATE",
// keepalived/vrrp/vrrp.c v2.2.7) and a respawned VRRP child ("%s child process(%d) died:
// Respawning", lib/scheduler.c log_child_died).
var transitionRE = regexp.MustCompile(`\(([^)]+)\) Entering (MASTER|BACKUP|FAULT) STATE|VRRP child process\(\d+\) died`)

// transitions returns keepalived's state changes logged in logPath from byte offset on.
func transitions(logPath string, offset int64) ([]string, error) {
	f, err := os.Open(logPath)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return nil, err
	}
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if transitionRE.MatchString(sc.Text()) {
			out = append(out, strings.TrimSpace(sc.Text()))
		}
	}
	return out, sc.Err()
}

// defaultStress is the load on every member: one CPU hog (all methods), one memory worker
// touching 1 GiB, one disk writer of 256 MiB files and one sync(2) loop, for each of the three
// members at once on the same machine.
const defaultStress = "--cpu 1 --vm 1 --vm-bytes 1g --hdd 1 --hdd-bytes 256m --io 1"

// BenchmarkGatewayStability runs three members with the shipped timing (the API's defaults)
// and 1,000 Windows nodes (four VRRP instances) for KUBEWIN_BENCH_STABILITY (default 10m) while
// stress-ng (KUBEWIN_BENCH_STRESS, default defaultStress) loads CPU, memory and disk in every
// member's namespace, and counts VRRP transitions after the initial election: every one is
// spurious, since no member fails. It also samples every 10 ms that each instance's router VIP
// has exactly one holder, and with KUBEWIN_BENCH_RELOAD_EVERY (a duration, default 0 = none)
// reloads one member after another (SIGHUP), as a Node churn does.
//
// KUBEWIN_BENCH_SCHED=rt (default): keepalived as shipped, where the kernel grants SCHED_RR.
// KUBEWIN_BENCH_SCHED=no-rt-budget: the members' keepalived in a cpu cgroup without real-time
// budget (noRTBudgetCgroup), the fallback on cgroup-v1 kernels with RT group scheduling.
func BenchmarkGatewayStability(b *testing.B) {
	if _, err := exec.LookPath("stress-ng"); err != nil {
		b.Skip("stress-ng not installed (Debian package stress-ng; bench/gateway/failover.sh installs it)")
	}
	dur := envDuration(b, "KUBEWIN_BENCH_STABILITY", 10*time.Minute)
	reloadEvery := envDuration(b, "KUBEWIN_BENCH_RELOAD_EVERY", 0)
	stress := os.Getenv("KUBEWIN_BENCH_STRESS")
	if stress == "" {
		stress = defaultStress
	}
	if stress == "none" {
		stress = ""
	}
	sched := os.Getenv("KUBEWIN_BENCH_SCHED")
	cgroup := ""
	switch sched {
	case "", "rt":
		sched = "rt"
	case "no-rt-budget":
		cgroup = noRTBudgetCgroup(b)
	default:
		b.Fatalf("KUBEWIN_BENCH_SCHED=%q: want rt or no-rt-budget", sched)
	}
	nodeCount := 1000
	if n, err := strconv.Atoi(os.Getenv("KUBEWIN_BENCH_NODES")); err == nil && n > 0 {
		nodeCount = n
	}

	version, advert := shippedTiming(b)
	if v := os.Getenv("KUBEWIN_BENCH_ADVERT"); v != "" {
		// A candidate interval instead of the shipped one (VRRPv3).
		d, err := time.ParseDuration(v)
		if err != nil {
			b.Fatalf("KUBEWIN_BENCH_ADVERT=%q: %v", v, err)
		}
		version, advert = 3, d.Seconds()
	}
	cfg := groupConfig(advert)
	cfg.VRRPVersion = version
	tp := newTopology(b, cfg, nil, io.Discard)
	var nodes []*corev1.Node
	for i := 0; i < nodeCount; i++ {
		nodes = append(nodes, windowsNode(fmt.Sprintf("win%04d", i), nthCIDR(i)))
	}
	g, _, err := gateway.Layout(cfg, nodes)
	if err != nil {
		b.Fatal(err)
	}
	for _, m := range tp.gws {
		data, err := render.KeepalivedConfig(g, m.name)
		if err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(m.conf, data, 0o644); err != nil {
			b.Fatal(err)
		}
		launchShipped(b, m, cgroup)
	}
	var routerVIPs []string
	for _, in := range g.Instances {
		routerVIPs = append(routerVIPs, in.RouterVIP)
	}
	// The initial election: one holder of every instance, then quiet for 3 s.
	eventually(b, 30*time.Second, "one holder of every instance", func() (bool, string) {
		for _, vip := range routerVIPs {
			if h := tp.holders(vip); len(h) != 1 {
				return false, vip + ": " + strings.Join(h, ",")
			}
		}
		return true, ""
	})
	time.Sleep(3 * time.Second)

	policies := map[string]string{}
	type schedSample struct {
		wait   time.Duration
		slices int64
	}
	before := map[string]schedSample{}
	offsets := map[string]int64{}
	for _, m := range tp.gws {
		pid, err := netns.ReadPID(m.k.VRRPPIDFile)
		if err != nil {
			b.Fatal(err)
		}
		pol, prio, wait, slices, err := schedOf(pid)
		if err != nil {
			b.Fatal(err)
		}
		policies[m.name] = fmt.Sprintf("%s %d", pol, prio)
		before[m.name] = schedSample{wait, slices}
		st, err := os.Stat(m.k.LogPath)
		if err != nil {
			b.Fatal(err)
		}
		offsets[m.name] = st.Size()
	}
	log0, _ := os.ReadFile(tp.gws[0].k.LogPath)
	rtRefused := strings.Contains(string(log0), "cannot raise priority")
	b.Logf("sched=%s: VRRP children run %v; keepalived logged \"cannot raise priority\": %v", sched, policies, rtRefused)

	// stress-ng in every member's namespace, writing in a directory of its own.
	var stressOut []*bytes.Buffer
	for _, m := range tp.gws {
		if stress == "" {
			break
		}
		dir := filepath.Join(b.TempDir(), "stress-"+m.name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		args := append([]string{"netns", "exec", m.ns.Name, "stress-ng"}, strings.Fields(stress)...)
		args = append(args, "--temp-path", dir, "--timeout", fmt.Sprintf("%ds", int((dur+30*time.Second).Seconds())), "--metrics-brief")
		cmd := exec.Command("ip", args...)
		out := &bytes.Buffer{}
		cmd.Stdout, cmd.Stderr = out, out
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		stop := func() {
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGINT)
			select {
			case <-done:
			case <-time.After(20 * time.Second):
				_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
				<-done
			}
		}
		b.Cleanup(stop)
		defer stop()
		stressOut = append(stressOut, out)
	}

	// Sample the holders of every instance every 10 ms, and reload members in turn.
	ctx, cancel := context.WithTimeout(context.Background(), dur)
	defer cancel()
	var mu sync.Mutex
	samples, bad := 0, 0
	var badWhat []string
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			held := map[string]int{}
			for _, m := range tp.gws {
				addrs, err := m.ns.Addrs()
				if err != nil {
					continue
				}
				for _, a := range addrs {
					held[a.IP.String()]++
				}
			}
			mu.Lock()
			samples++
			for _, vip := range routerVIPs {
				if held[vip] != 1 {
					bad++
					if len(badWhat) < 10 {
						badWhat = append(badWhat, fmt.Sprintf("%s %s held by %d", time.Now().Format("15:04:05.000"), vip, held[vip]))
					}
					break
				}
			}
			mu.Unlock()
		}
	}()
	reloads := 0
	if reloadEvery > 0 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tick := time.NewTicker(reloadEvery)
			defer tick.Stop()
			for i := 0; ; i++ {
				select {
				case <-ctx.Done():
					return
				case <-tick.C:
				}
				if err := tp.gws[i%len(tp.gws)].k.Reload(); err != nil {
					b.Error(err)
					return
				}
				mu.Lock()
				reloads++
				mu.Unlock()
			}
		}()
	}
	load := func() string {
		l, _ := os.ReadFile("/proc/loadavg")
		return strings.Join(strings.Fields(string(l))[:3], " ")
	}
	began := time.Now()
	loads := []string{load()}
	for minute := time.NewTicker(time.Minute); ctx.Err() == nil; {
		select {
		case <-ctx.Done():
		case <-minute.C:
			loads = append(loads, load())
			var n int
			for _, m := range tp.gws {
				tr, _ := transitions(m.k.LogPath, offsets[m.name])
				n += len(tr)
			}
			b.Logf("%s: %d transitions so far, load %s", time.Since(began).Round(time.Second), n, loads[len(loads)-1])
		}
	}
	wg.Wait()

	total := 0
	for _, m := range tp.gws {
		if dir := os.Getenv("KUBEWIN_BENCH_LOGS"); dir != "" {
			// The whole keepalived logs, where the caller asked for them.
			if data, err := os.ReadFile(m.k.LogPath); err == nil {
				_ = os.MkdirAll(dir, 0o755)
				_ = os.WriteFile(filepath.Join(dir, "keepalived-"+m.name+".log"), data, 0o644)
			}
		}
		tr, err := transitions(m.k.LogPath, offsets[m.name])
		if err != nil {
			b.Fatal(err)
		}
		total += len(tr)
		pid, _ := netns.ReadPID(m.k.VRRPPIDFile)
		pol, prio, wait, slices, _ := schedOf(pid)
		d := before[m.name]
		avg := time.Duration(0)
		if n := slices - d.slices; n > 0 {
			avg = (wait - d.wait) / time.Duration(n)
		}
		b.Logf("%s: %d transitions; VRRP child %s %d, mean run-queue wait per timeslice %s", m.name, len(tr), pol, prio, avg)
		for i, l := range tr {
			if i == 20 {
				b.Logf("  … %d more", len(tr)-20)
				break
			}
			b.Logf("  %s", l)
		}
	}
	for i, out := range stressOut {
		b.Logf("stress-ng in %s:\n%s", tp.gws[i].name, strings.TrimSpace(out.String()))
	}
	mu.Lock()
	defer mu.Unlock()
	b.Logf("shipped timing VRRPv%d advert_int %g, %d Windows nodes in %d instances, sched=%s (%v), stress-ng %q per member, %s: %d spurious transitions, %d reloads, %d of %d samples without exactly one holder %v, load %v",
		version, advert, nodeCount, len(g.Instances), sched, policies, stress, dur, total, reloads, bad, samples, badWhat, loads)
	b.ReportMetric(float64(total), "spurious-transitions")
	b.ReportMetric(float64(bad), "samples-not-one-holder")
	b.ReportMetric(float64(samples), "samples")
}

func envDuration(b *testing.B, name string, def time.Duration) time.Duration {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		b.Fatalf("%s=%q: %v", name, v, err)
	}
	return d
}
