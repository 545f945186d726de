//go:build linux

package upgrade

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kubewin/kubewin/internal/noderun"
	"github.com/kubewin/kubewin/internal/render"
	"github.com/kubewin/kubewin/internal/rollout/api"
)

// The Linux half runs the node service's real supervisor (noderun.Supervisor) with real
// processes: containerd and the kubelet are shell scripts at join's paths that exec sleep with
// their version in the argument, so /proc/<pid>/cmdline shows which version runs.

// linuxScript is a program of version v: "v1" sleeps as 4001, "v2" as 4002; "broken" exits 1
// at once with a kubelet-like error (a kubelet that cannot start with the node's flags).
func linuxScript(v string) string {
	if v == "broken" {
		return "#!/bin/sh\necho 'E1128 run.go:72] \"command failed\" err=\"unknown flag: --cgroups-per-qos\"' >&2\nexit 1\n"
	}
	return fmt.Sprintf("#!/bin/sh\nexec sleep 400%s\n", strings.TrimPrefix(v, "v"))
}

type linuxNode struct {
	t     *testing.T
	dir   string
	paths render.NodePaths
	sup   *noderun.Supervisor
}

func newLinuxNode(t *testing.T) *linuxNode {
	t.Helper()
	dir := t.TempDir()
	n := &linuxNode{t: t, dir: dir, paths: render.LinuxPathsUnder(dir)}
	for _, name := range []string{"containerd", "kubelet"} {
		p := filepath.Join(n.paths.BinDir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(linuxScript("v1")), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// join's manifest, reduced to what the supervisor needs (join's serviceManifest).
	m := &noderun.Manifest{APIVersion: noderun.ManifestAPIVersion, Kind: noderun.ManifestKind, Services: []noderun.Service{
		{Name: "containerd", Path: filepath.Join(n.paths.BinDir, "containerd"), LogFile: filepath.Join(dir, "log", "containerd.log")},
		{Name: "kubelet", Path: filepath.Join(n.paths.BinDir, "kubelet"), After: []string{"containerd"}, LogFile: filepath.Join(dir, "log", "kubelet.log")},
	}}
	manifest := filepath.Join(n.paths.DataDir, "services.json")
	if err := os.MkdirAll(n.paths.DataDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := noderun.WriteManifest(manifest, m); err != nil {
		t.Fatal(err)
	}
	n.sup = &noderun.Supervisor{ManifestPath: manifest, Logger: slog.New(slog.DiscardHandler), StartGrace: 300 * time.Millisecond, BackoffMin: 200 * time.Millisecond,
		BackoffMax: time.Second, StopGrace: 5 * time.Second, Poll: 100 * time.Millisecond}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- n.sup.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("supervisor: %v", err)
		}
	})
	n.awaitVersions("v1")
	return n
}

// versions are the versions the running services' processes run (from their command lines).
func (n *linuxNode) versions() map[string]string {
	out := map[string]string{}
	for _, s := range n.sup.Status().Services {
		if s.State != noderun.StateRunning || s.PID == 0 {
			out[s.Name] = string(s.State)
			continue
		}
		cmd, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", s.PID))
		if err != nil {
			out[s.Name] = "gone"
			continue
		}
		out[s.Name] = "v" + strings.TrimPrefix(strings.TrimRight(strings.ReplaceAll(string(cmd), "\x00", " "), " "), "sleep 400")
	}
	return out
}

// awaitVersions waits (generously: the machine may be loaded) until both services run v.
func (n *linuxNode) awaitVersions(v string) {
	n.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		got := n.versions()
		if got["containerd"] == v && got["kubelet"] == v {
			return
		}
		if time.Now().After(deadline) {
			n.t.Fatalf("services run %v, want %s", got, v)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (n *linuxNode) pids() map[string]int {
	out := map[string]int{}
	for _, s := range n.sup.Status().Services {
		out[s.Name] = s.PID
	}
	return out
}

func (n *linuxNode) engine() *Engine {
	return &Engine{
		Host:       &LinuxHost{Supervisor: n.sup, Poll: 20 * time.Millisecond},
		Layout:     LinuxLayout(n.paths),
		Fetch:      JoinFetch,
		StatePath:  StateFile(n.paths.DataDir),
		UpdatesDir: filepath.Join(n.paths.DataDir, "updates"),
	}
}

// revision publishes containerd and the kubelet of the given versions; a pin of "wrong" makes
// the kubelet's published file differ from its checksum.
func (n *linuxNode) revision(name, containerd, kubelet string, wrong bool) *api.Revision {
	n.t.Helper()
	src := filepath.Join(n.dir, "src-"+name)
	if err := os.MkdirAll(src, 0o755); err != nil {
		n.t.Fatal(err)
	}
	r := &api.Revision{Name: name, Kubelet: "v1.37.2", Binaries: &api.BinarySource{Source: src, Checksums: map[string]string{}}}
	for file, v := range map[string]string{"containerd": containerd, "kubelet": kubelet} {
		data := linuxScript(v)
		r.Binaries.Checksums[file] = sum(data)
		if wrong && file == "kubelet" {
			data += "# changed on the mirror\n"
		}
		if err := os.WriteFile(filepath.Join(src, file), []byte(data), 0o644); err != nil {
			n.t.Fatal(err)
		}
	}
	return r
}

func (n *linuxNode) file(name string) string {
	b, err := os.ReadFile(filepath.Join(n.paths.BinDir, name))
	if err != nil {
		return "missing"
	}
	for _, v := range []string{"v1", "v2", "broken"} {
		if string(b) == linuxScript(v) {
			return v
		}
	}
	return "other"
}

func TestLinuxApplyAndRollback(t *testing.T) {
	for _, tc := range []struct {
		name                string
		containerd, kubelet string
		wrong               bool
		phase               api.NodePhase
		reason              string
		// what runs and is installed afterwards
		runs string
		// restarted: whether the services' processes changed
		restarted bool
		rollback  bool
	}{
		{name: "apply, then roll back", containerd: "v2", kubelet: "v2", phase: api.NodeApplied, runs: "v2", restarted: true, rollback: true},
		{name: "a kubelet that exits at once is undone", containerd: "v2", kubelet: "broken", phase: api.NodeFailed,
			reason: "kubelet did not start under revision r2: kubelet exited (code 1): E1128", runs: "v1", restarted: true},
		{name: "a checksum mismatch changes nothing", containerd: "v2", kubelet: "v2", wrong: true, phase: api.NodeFailed,
			reason: "nothing changed", runs: "v1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := newLinuxNode(t)
			before := n.pids()
			rev := n.revision("r2", tc.containerd, tc.kubelet, tc.wrong)
			began := time.Now()
			s := handle(t, n.engine(), "req-1", api.ActionApply, rev)
			// Measured, not asserted (bench/README's figures come from the real kubelet test):
			// the supervisor's StartGrace is 300 ms here.
			t.Logf("%s: request answered %s in %s", tc.name, s.Phase, time.Since(began).Round(time.Millisecond))
			if s.Phase != tc.phase || !strings.Contains(s.Reason, tc.reason) {
				t.Fatalf("phase %s (%s), want %s (%s)", s.Phase, s.Reason, tc.phase, tc.reason)
			}
			n.awaitVersions(tc.runs)
			for _, f := range []string{"containerd", "kubelet"} {
				if got := n.file(f); got != tc.runs {
					t.Errorf("%s is %s, want %s", f, got, tc.runs)
				}
			}
			if after := n.pids(); (after["kubelet"] != before["kubelet"]) != tc.restarted {
				t.Errorf("kubelet pid %d → %d, restarted want %v", before["kubelet"], after["kubelet"], tc.restarted)
			}
			entries, _ := os.ReadDir(n.paths.BinDir)
			var names []string
			for _, e := range entries {
				names = append(names, e.Name())
			}
			want := []string{"containerd", "kubelet"}
			if tc.rollback {
				want = []string{"containerd", "containerd.prev-join", "kubelet", "kubelet.prev-join"}
			}
			if !slices.Equal(names, want) {
				t.Errorf("%s holds %v, want %v", n.paths.BinDir, names, want)
			}
			if !tc.rollback {
				return
			}
			// A second apply of the revision that runs: nothing restarts.
			pids := n.pids()
			if again := handle(t, n.engine(), "req-2", api.ActionApply, rev); again.Phase != api.NodeApplied {
				t.Errorf("second apply: %s", again.Phase)
			}
			if got := n.pids(); got["kubelet"] != pids["kubelet"] || got["containerd"] != pids["containerd"] {
				t.Errorf("second apply restarted: %v → %v", pids, got)
			}
			began = time.Now()
			rb := handle(t, n.engine(), "req-3", api.ActionRollback, rev)
			t.Logf("rollback answered %s in %s", rb.Phase, time.Since(began).Round(time.Millisecond))
			if rb.Phase != api.NodeRolledBack {
				t.Fatalf("rollback: %s (%s)", rb.Phase, rb.Reason)
			}
			n.awaitVersions("v1")
			if n.file("kubelet") != "v1" || n.file("containerd") != "v1" {
				t.Errorf("after the rollback: kubelet %s containerd %s", n.file("kubelet"), n.file("containerd"))
			}
		})
	}
}

// OS updates are Windows': a Linux node refuses the revision before anything changes.
func TestLinuxRefusesOSUpdates(t *testing.T) {
	n := newLinuxNode(t)
	rev := n.revision("r2", "v2", "v2", false)
	rev.OSUpdates = []api.OSUpdate{{KB: "KB5040437", URL: "/tmp/x.msu", SHA256: sum("x")}}
	s := handle(t, n.engine(), "req-1", api.ActionApply, rev)
	if s.Phase != api.NodeFailed || !strings.Contains(s.Reason, "only Windows nodes") {
		t.Fatalf("phase %s (%s)", s.Phase, s.Reason)
	}
	n.awaitVersions("v1")
}

// After r2 applied (r2 kept "join" for a rollback), an apply of r3 whose kubelet exits at once
// is undone and fails; the node then keeps nothing for a rollback — r3's fetch dropped the
// programs r2 had set aside — so it reports no previous revision (the real two-node rollout
// test's status showed "join" there, a rollback target whose files were gone).
func TestLinuxFailedApplyKeepsNoPrevious(t *testing.T) {
	n := newLinuxNode(t)
	if s := handle(t, n.engine(), "req-1", api.ActionApply, n.revision("r2", "v2", "v2", false)); s.Phase != api.NodeApplied || s.Previous != "join" {
		t.Fatalf("apply r2: %s (%s), previous %q", s.Phase, s.Reason, s.Previous)
	}
	for _, tc := range []struct {
		name string
		rev  *api.Revision
	}{
		{"a kubelet that exits at once", n.revision("r3", "v2", "broken", false)},
		{"a checksum mismatch", n.revision("r4", "v1", "v1", true)},
	} {
		s := handle(t, n.engine(), "req-"+tc.rev.Name, api.ActionApply, tc.rev)
		if s.Phase != api.NodeFailed || s.Current != "r2" || s.Previous != "" || s.Kept {
			t.Errorf("%s: %s (%s), current %q previous %q kept %t; want Failed, current r2, no previous", tc.name, s.Phase, s.Reason, s.Current, s.Previous, s.Kept)
		}
		n.awaitVersions("v2")
	}
	// The orchestrator's Rollback after the failure leaves r2.
	if s := handle(t, n.engine(), "req-rb", api.ActionRollback, nil); s.Phase != api.NodeRolledBack || s.Current != "r2" {
		t.Errorf("rollback: %s (%s), current %q", s.Phase, s.Reason, s.Current)
	}
	n.awaitVersions("v2")
}
