package upgrade

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kubewin/kubewin/internal/render"
	"github.com/kubewin/kubewin/internal/rollout/api"
	"github.com/kubewin/kubewin/internal/winnode"
)

// The Windows half runs against winnode.MemHost, the in-memory model of a Windows host (its
// table cites where each behaviour comes from): the node's programs are real files in a test
// directory, which MemHost guards with Windows' rules for files in use.

func sum(data string) string {
	s := sha256.Sum256([]byte(data))
	return hex.EncodeToString(s[:])
}

// winNode is a joined Windows node of the model: v1 programs installed as join installs them,
// containerd, the kubelet and kube-proxy running, a pod's runhcs shim holding its file.
type winNode struct {
	t       *testing.T
	dir     string
	paths   render.NodePaths
	host    *winnode.MemHost
	reports *reports
}

// reports records the phases the engine published, in order.
type reports struct {
	mu     sync.Mutex
	phases []string
}

func (r *reports) add(_ context.Context, s State) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.phases = append(r.phases, string(s.Phase))
	return nil
}

func (r *reports) list() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.phases)
}

// windowsFiles are the programs of a revision, by their names in SHA256SUMS.
var windowsFiles = []string{"containerd.exe", "containerd-shim-runhcs-v1.exe", "kubelet.exe", "kube-proxy.exe", "kube-log-runner.exe", "cni/win-bridge.exe"}

func content(name, version string) string { return name + " " + version }

func newWinNode(t *testing.T) *winNode {
	t.Helper()
	dir := t.TempDir()
	paths := render.WindowsPathsUnder(filepath.Join(dir, "k"), filepath.Join(dir, "containerd"))
	n := &winNode{t: t, dir: dir, paths: paths, host: winnode.NewMemHost(), reports: &reports{}}
	layout := WindowsLayout(paths)
	for _, name := range windowsFiles {
		c, _ := layout(name)
		if err := os.MkdirAll(filepath.Dir(c.Path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(c.Path, []byte(content(name, "v1")), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	for _, c := range []winnode.ServiceConfig{
		{Name: "containerd", StartType: winnode.StartAutomatic},
		{Name: "kubelet", StartType: winnode.StartManual, DependsOn: []string{"containerd"}},
		{Name: "kube-proxy", StartType: winnode.StartManual},
	} {
		if err := n.host.InstallService(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	n.host.SetImages("containerd", n.path("containerd.exe"))
	n.host.SetImages("kubelet", n.path("kube-log-runner.exe"), n.path("kubelet.exe"))
	n.host.SetImages("kube-proxy", n.path("kube-log-runner.exe"), n.path("kube-proxy.exe"))
	for _, s := range []string{"containerd", "kubelet", "kube-proxy"} {
		if err := n.host.StartService(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	n.host.HoldFile(n.path("containerd-shim-runhcs-v1.exe"), "shim of pod default/web-0")
	return n
}

func (n *winNode) path(name string) string {
	c, ok := WindowsLayout(n.paths)(name)
	if !ok {
		n.t.Fatalf("no layout for %s", name)
	}
	return c.Path
}

// engine is a node service's engine: a new one per "process" (after a restart, say).
func (n *winNode) engine() *Engine {
	return &Engine{
		Host:       &WindowsHost{Node: n.host, Machine: n.host},
		Layout:     WindowsLayout(n.paths),
		Fetch:      JoinFetch,
		StatePath:  StateFile(n.paths.DataDir),
		UpdatesDir: filepath.Join(n.paths.DataDir, "updates"),
		Report:     n.reports.add,
	}
}

// revision publishes version's programs (and OS updates) in a source directory and returns the
// revision pinning them; corrupt names a file whose published content differs from its pin.
func (n *winNode) revision(name, version string, updates []api.OSUpdate, corrupt string) *api.Revision {
	n.t.Helper()
	src := filepath.Join(n.dir, "src-"+name)
	r := &api.Revision{Name: name, Kubelet: "v1.37.1", Binaries: &api.BinarySource{Source: src, Checksums: map[string]string{}}, OSUpdates: updates}
	for _, f := range windowsFiles {
		data := content(f, version)
		p := filepath.Join(src, filepath.FromSlash(f))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			n.t.Fatal(err)
		}
		r.Binaries.Checksums[f] = sum(data)
		if f == corrupt {
			data += " (tampered on the mirror)"
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			n.t.Fatal(err)
		}
	}
	if err := r.Validate(); err != nil {
		n.t.Fatal(err)
	}
	return r
}

// update publishes an .msu for kb and tells MemHost what it is.
func (n *winNode) update(kb string, p winnode.UpdatePackage) api.OSUpdate {
	n.t.Helper()
	dir := filepath.Join(n.dir, "updates-src")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		n.t.Fatal(err)
	}
	file := filepath.Join(dir, "windows10.0-"+strings.ToLower(kb)+"-x64.msu")
	data := "msu " + kb
	if err := os.WriteFile(file, []byte(data), 0o644); err != nil {
		n.t.Fatal(err)
	}
	p.KB = kb
	n.host.AddUpdatePackage(sum(data), p)
	return api.OSUpdate{KB: kb, URL: file, SHA256: sum(data)}
}

// programs are the installed programs' versions by name.
func (n *winNode) programs() map[string]string {
	out := map[string]string{}
	for _, f := range windowsFiles {
		b, err := os.ReadFile(n.path(f))
		if err != nil {
			out[f] = "missing"
			continue
		}
		out[f] = strings.TrimPrefix(string(b), f+" ")
	}
	return out
}

func (n *winNode) assertPrograms(version string) {
	n.t.Helper()
	for f, v := range n.programs() {
		if v != version {
			n.t.Errorf("%s is %q, want %s", f, v, version)
		}
	}
}

func (n *winNode) assertRunning() {
	n.t.Helper()
	for _, s := range []string{"containerd", "kubelet", "kube-proxy"} {
		if st := n.host.State(s); st != winnode.ServiceRunning {
			n.t.Errorf("service %s is %s; events %v", s, st, n.host.Events())
		}
	}
	// The running kubelet runs from kubelet.exe, not from a file renamed aside.
	if !strings.Contains(n.host.Held(n.path("kubelet.exe")), "service kubelet") {
		n.t.Errorf("kubelet.exe is held by %q", n.host.Held(n.path("kubelet.exe")))
	}
}

// reconcilerStarts stands for the node service's Reconciler after a restart: it starts
// kube-proxy once the pod network exists (winnode's Reconciler, tested in winnode).
func (n *winNode) reconcilerStarts(svc string) {
	n.t.Helper()
	if err := n.host.StartService(context.Background(), svc); err != nil {
		n.t.Fatal(err)
	}
}

// events of kinds start/stop/start-failed in order, as "stop kubelet".
func (n *winNode) serviceEvents(from int) []string {
	var out []string
	for _, e := range n.host.Events()[from:] {
		if e.Kind == "start" || e.Kind == "stop" || e.Kind == "start-failed" {
			out = append(out, e.Kind+" "+e.Name)
		}
	}
	return out
}

// leftovers are files beside the programs that are neither programs nor kept for a rollback.
func (n *winNode) files() []string {
	var out []string
	_ = filepath.WalkDir(n.dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && !strings.Contains(p, "src-") && !strings.Contains(p, "updates-src") {
			rel, _ := filepath.Rel(n.dir, p)
			out = append(out, rel)
		}
		return nil
	})
	slices.Sort(out)
	return out
}

func handle(t *testing.T, e *Engine, id string, a api.Action, r *api.Revision) State {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := e.Handle(ctx, Request{ID: id, Action: a, Target: r})
	if err != nil {
		t.Fatalf("handle %s %s: %v", a, id, err)
	}
	return s
}

func TestWindowsApplyAndRollback(t *testing.T) {
	stopStart := []string{"stop kube-proxy", "stop kubelet", "stop containerd", "start containerd", "start kubelet", "start kube-proxy"}
	for _, tc := range []struct {
		name string
		// setup returns the revision to apply (v2 programs unless it says otherwise).
		setup func(n *winNode) *api.Revision
		// want after the apply
		phase    api.NodePhase
		reason   string
		programs string
		events   []string // service events of the apply
		kept     []string // files beside the programs afterwards
		phases   []string
		// rollback: after a successful apply, a Rollback request brings v1 back
		rollback bool
	}{
		{
			name:     "apply, then roll back",
			setup:    func(n *winNode) *api.Revision { return n.revision("r2", "v2", nil, "") },
			phase:    api.NodeApplied,
			programs: "v2",
			events:   stopStart,
			kept: []string{"containerd/containerd-shim-runhcs-v1.exe", "containerd/containerd-shim-runhcs-v1.exe.prev-join", "containerd/containerd.exe", "containerd/containerd.exe.prev-join",
				"k/cni/bin/win-bridge.exe", "k/cni/bin/win-bridge.exe.prev-join", "k/kube-log-runner.exe", "k/kube-log-runner.exe.prev-join", "k/kube-proxy.exe", "k/kube-proxy.exe.prev-join",
				"k/kubelet.exe", "k/kubelet.exe.prev-join", "k/upgrade-state.json"},
			phases:   []string{"Applying", "Applied"},
			rollback: true,
		},
		{
			name: "a kubelet that does not start is undone",
			setup: func(n *winNode) *api.Revision {
				n.host.FailImage(sum(content("kubelet.exe", "v2")), 1, "command failed: unknown flag --cgroups-per-qos")
				return n.revision("r2", "v2", nil, "")
			},
			phase:    api.NodeFailed,
			reason:   "kubelet did not start under revision r2",
			programs: "v1",
			// containerd came up on v2, the kubelet did not: everything stopped again, the
			// previous programs back, started in order.
			events: []string{"stop kube-proxy", "stop kubelet", "stop containerd", "start containerd", "start-failed kubelet",
				"stop containerd", "start containerd", "start kubelet", "start kube-proxy"},
			// The pod's shim ran from the v1 file renamed aside; renamed back, it runs from its
			// name again, and the v2 file nothing ran is gone.
			kept: []string{"containerd/containerd-shim-runhcs-v1.exe", "containerd/containerd.exe", "k/cni/bin/win-bridge.exe",
				"k/kube-log-runner.exe", "k/kube-proxy.exe", "k/kubelet.exe", "k/upgrade-state.json"},
			phases: []string{"Applying", "Failed"},
		},
		{
			name:     "a checksum mismatch changes nothing",
			setup:    func(n *winNode) *api.Revision { return n.revision("r2", "v2", nil, "kube-proxy.exe") },
			phase:    api.NodeFailed,
			reason:   "nothing changed",
			programs: "v1",
			kept: []string{"containerd/containerd-shim-runhcs-v1.exe", "containerd/containerd.exe", "k/cni/bin/win-bridge.exe",
				"k/kube-log-runner.exe", "k/kube-proxy.exe", "k/kubelet.exe", "k/upgrade-state.json"},
			phases: []string{"Applying", "Failed"},
		},
		{
			name: "an update that does not apply is undone",
			setup: func(n *winNode) *api.Revision {
				return n.revision("r2", "v2", []api.OSUpdate{n.update("KB5040437", winnode.UpdatePackage{NotApplicable: true})}, "")
			},
			phase:    api.NodeFailed,
			reason:   "WU_E_NOT_APPLICABLE",
			programs: "v1",
			events:   append(slices.Clone(stopStart), stopStart...),
			phases:   []string{"Applying", "Failed"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := newWinNode(t)
			rev := tc.setup(n)
			from := len(n.host.Events())
			s := handle(t, n.engine(), "req-1", api.ActionApply, rev)
			if s.Phase != tc.phase || !strings.Contains(s.Reason, tc.reason) {
				t.Fatalf("phase %s (%s), want %s (%s)", s.Phase, s.Reason, tc.phase, tc.reason)
			}
			n.assertPrograms(tc.programs)
			n.assertRunning()
			shim := n.path("containerd-shim-runhcs-v1.exe")
			if held := n.host.Held(shim + ".prev-join"); tc.programs == "v2" && held != "shim of pod default/web-0" {
				t.Errorf("the pod's shim runs from %q, want the v1 file renamed aside", held)
			}
			if held := n.host.Held(shim); tc.programs == "v1" && held != "shim of pod default/web-0" {
				t.Errorf("the pod's shim runs from %q after the undo, want its name", held)
			}
			if got := n.serviceEvents(from); !slices.Equal(got, tc.events) {
				t.Errorf("service events\n got %v\nwant %v", got, tc.events)
			}
			if tc.kept != nil {
				if got := n.files(); !slices.Equal(got, tc.kept) {
					t.Errorf("files\n got %v\nwant %v", got, tc.kept)
				}
			}
			if got := n.reports.list(); !slices.Equal(got, tc.phases) {
				t.Errorf("reported phases %v, want %v", got, tc.phases)
			}
			// The same request again (a restarted node service reading the same annotations):
			// answered again, nothing done.
			from = len(n.host.Events())
			if again := handle(t, n.engine(), "req-1", api.ActionApply, rev); again.Phase != tc.phase {
				t.Errorf("the same request again: %s", again.Phase)
			}
			if got := n.serviceEvents(from); len(got) != 0 {
				t.Errorf("the same request again did %v", got)
			}
			// The orchestrator's Rollback after a failed apply: nothing was kept, the node
			// runs what it ran.
			if tc.phase == api.NodeFailed {
				rb := handle(t, n.engine(), "req-2", api.ActionRollback, rev)
				if rb.Phase != api.NodeRolledBack || len(n.serviceEvents(from)) != 0 {
					t.Errorf("rollback after a failed apply: %s, events %v", rb.Phase, n.serviceEvents(from))
				}
				n.assertPrograms("v1")
			}
			if !tc.rollback {
				return
			}
			if s.Current != "r2" || s.Previous != "join" {
				t.Errorf("current %q previous %q", s.Current, s.Previous)
			}
			// A second Apply request of the revision that runs: Applied, nothing touched.
			from = len(n.host.Events())
			if again := handle(t, n.engine(), "req-2", api.ActionApply, rev); again.Phase != api.NodeApplied || again.Previous != "join" {
				t.Errorf("second apply: %s, previous %q", again.Phase, again.Previous)
			}
			if got := n.serviceEvents(from); len(got) != 0 {
				t.Errorf("second apply did %v", got)
			}
			rb := handle(t, n.engine(), "req-3", api.ActionRollback, rev)
			if rb.Phase != api.NodeRolledBack || rb.Current != "" || rb.Previous != "" {
				t.Fatalf("rollback: %s (%s), current %q previous %q", rb.Phase, rb.Reason, rb.Current, rb.Previous)
			}
			n.assertPrograms("v1")
			n.assertRunning()
		})
	}
}

// An OS update that asks for a restart (wusa 3010): the phase Rebooting is persisted and
// reported, the machine restarts, and the node service started after it finishes the apply. A
// rollback removes the update (another restart) and puts the programs back.
func TestWindowsApplyRestartsAndResumes(t *testing.T) {
	n := newWinNode(t)
	rev := n.revision("r2", "v2", []api.OSUpdate{
		n.update("KB5040437", winnode.UpdatePackage{NeedsReboot: true}),
		n.update("KB5040438", winnode.UpdatePackage{}),
	}, "")
	n.host.SetImages("kubelet", n.path("kube-log-runner.exe"), n.path("kubelet.exe"))
	s := handle(t, n.engine(), "req-1", api.ActionApply, rev)
	if s.Phase != api.NodeRebooting || s.Step != StepRestart {
		t.Fatalf("after the installer's 3010: phase %s step %s (%s)", s.Phase, s.Step, s.Reason)
	}
	if n.host.Count("reboot", "") != 1 {
		t.Fatalf("reboots %d, want 1", n.host.Count("reboot", ""))
	}
	if got := n.host.InstalledUpdates(); !slices.Equal(got, []string{"KB5040437", "KB5040438"}) {
		t.Errorf("installed after the restart %v", got)
	}
	// The restart ended the node service; a new one resumes from the state file. Only
	// containerd is automatic: the resume starts the kubelet, and leaves kube-proxy to the
	// Reconciler, which starts it once the HNS network is back (winnode reconcile.go).
	resumed, err := n.engine().Resume(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if resumed.Phase != api.NodeApplied || resumed.Current != "r2" {
		t.Fatalf("resumed: %s (%s) current %q", resumed.Phase, resumed.Reason, resumed.Current)
	}
	if n.host.State("kubelet") != winnode.ServiceRunning || n.host.State("kube-proxy") != winnode.ServiceStopped {
		t.Fatalf("after the resume: kubelet %s, kube-proxy %s", n.host.State("kubelet"), n.host.State("kube-proxy"))
	}
	n.reconcilerStarts("kube-proxy")
	n.assertPrograms("v2")
	n.assertRunning()
	if got := n.reports.list(); !slices.Equal(got, []string{"Applying", "Rebooting", "Rebooting", "Applying", "Applied"}) {
		t.Errorf("reported phases %v", got)
	}
	rb := handle(t, n.engine(), "req-2", api.ActionRollback, rev)
	if rb.Phase != api.NodeRebooting {
		t.Fatalf("rollback: %s (%s)", rb.Phase, rb.Reason)
	}
	rb, err = n.engine().Resume(context.Background())
	if err != nil || rb.Phase != api.NodeRolledBack {
		t.Fatalf("rollback resumed: %s (%s) %v", rb.Phase, rb.Reason, err)
	}
	n.reconcilerStarts("kube-proxy")
	if got := n.host.InstalledUpdates(); len(got) != 0 {
		t.Errorf("installed after the rollback %v", got)
	}
	n.assertPrograms("v1")
	n.assertRunning()
}

// An update installed before the apply (0x240006) is not the apply's: a rollback leaves it.
func TestWindowsRollbackLeavesUpdatesItDidNotInstall(t *testing.T) {
	n := newWinNode(t)
	u := n.update("KB5040438", winnode.UpdatePackage{})
	argv, _ := winnode.InstallCommand(u.URL)
	if code, err := n.host.RunInstaller(context.Background(), argv); err != nil || code != 0 {
		t.Fatal(code, err)
	}
	rev := n.revision("r2", "v2", []api.OSUpdate{u}, "")
	if s := handle(t, n.engine(), "req-1", api.ActionApply, rev); s.Phase != api.NodeApplied {
		t.Fatalf("apply: %s (%s)", s.Phase, s.Reason)
	}
	if s := handle(t, n.engine(), "req-2", api.ActionRollback, rev); s.Phase != api.NodeRolledBack {
		t.Fatalf("rollback: %s (%s)", s.Phase, s.Reason)
	}
	if got := n.host.InstalledUpdates(); !slices.Equal(got, []string{"KB5040438"}) {
		t.Errorf("installed after the rollback %v, want the update installed before", got)
	}
}

// cancelAfter is a Host that ends the node service's context after n renames: the service
// stopped (or the process died) in the middle of a swap.
type cancelAfter struct {
	Host
	n      int
	cancel context.CancelFunc
}

func (c *cancelAfter) Rename(ctx context.Context, from, to string) error {
	if c.n == 0 {
		c.cancel()
	}
	c.n--
	return c.Host.Rename(ctx, from, to)
}

// A node service stopped in the middle of the swap: the next one resumes from the state file
// and finishes the apply (no undo, nothing renamed twice).
func TestWindowsResumeAfterStopMidSwap(t *testing.T) {
	for _, renames := range []int{0, 1, 3, 7} {
		t.Run(fmt.Sprintf("after %d renames", renames), func(t *testing.T) {
			n := newWinNode(t)
			rev := n.revision("r2", "v2", nil, "")
			e := n.engine()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			e.Host = &cancelAfter{Host: e.Host, n: renames, cancel: cancel}
			if _, err := e.Handle(ctx, Request{ID: "req-1", Action: api.ActionApply, Target: rev}); err == nil {
				t.Fatal("a cancelled swap returned no error")
			}
			st, err := n.engine().Load()
			if err != nil || st.Step != StepSwap || st.Phase != api.NodeApplying {
				t.Fatalf("state after the stop: step %s phase %s (%v)", st.Step, st.Phase, err)
			}
			s, err := n.engine().Resume(context.Background())
			if err != nil || s.Phase != api.NodeApplied {
				t.Fatalf("resumed: %s (%s) %v", s.Phase, s.Reason, err)
			}
			n.assertPrograms("v2")
			n.assertRunning()
			for _, f := range windowsFiles {
				b, err := os.ReadFile(n.path(f) + ".prev-join")
				if err != nil || string(b) != content(f, "v1") {
					t.Errorf("%s kept aside: %q %v", f, b, err)
				}
			}
		})
	}
}

// After r2 applied, an apply of r3 that fails before changing anything and the orchestrator's
// Rollback after it leave r2 running: the rollback does not reach back to what r2 replaced.
func TestWindowsRollbackAfterAFailedApplyKeepsTheRunningRevision(t *testing.T) {
	n := newWinNode(t)
	if s := handle(t, n.engine(), "req-1", api.ActionApply, n.revision("r2", "v2", nil, "")); s.Phase != api.NodeApplied {
		t.Fatalf("apply r2: %s (%s)", s.Phase, s.Reason)
	}
	r3 := n.revision("r3", "v3", nil, "kubelet.exe")
	if s := handle(t, n.engine(), "req-2", api.ActionApply, r3); s.Phase != api.NodeFailed {
		t.Fatalf("apply r3: %s (%s)", s.Phase, s.Reason)
	}
	s := handle(t, n.engine(), "req-3", api.ActionRollback, r3)
	if s.Phase != api.NodeRolledBack || s.Current != "r2" {
		t.Fatalf("rollback: %s (%s), current %q", s.Phase, s.Reason, s.Current)
	}
	n.assertPrograms("v2")
	n.assertRunning()
}
