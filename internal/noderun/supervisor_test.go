//go:build unix

// These tests run real processes (/bin/sh scripts and sleep) and signal their process groups,
// so they need a Unix host; the Windows side of the package is only compiled
// (GOOS=windows go vet), as there is no Windows host here.

package noderun

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// waitTimeout is generous on purpose: the tests wait for conditions, they do not time them.
const waitTimeout = 20 * time.Second

type harness struct {
	t        *testing.T
	dir      string
	manifest string
	status   string
	s        *Supervisor
	cancel   context.CancelFunc
	done     chan error
}

// tLogWriter sends the supervisor's log to the test log, so a failure shows what it did.
type tLogWriter struct{ t *testing.T }

func (w tLogWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	dir := t.TempDir()
	h := &harness{t: t, dir: dir, manifest: filepath.Join(dir, "services.json"), status: filepath.Join(dir, "run", "status.json")}
	h.s = &Supervisor{
		ManifestPath: h.manifest,
		StatusPath:   h.status,
		Logger:       slog.New(slog.NewTextHandler(tLogWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug})),
		StartGrace:   100 * time.Millisecond,
		BackoffMin:   50 * time.Millisecond,
		BackoffMax:   400 * time.Millisecond,
		StopGrace:    5 * time.Second,
		Poll:         20 * time.Millisecond,
	}
	return h
}

// run starts the supervisor; cleanup cancels it and waits for Run to return.
func (h *harness) run() {
	h.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	h.cancel, h.done = cancel, make(chan error, 1)
	go func() { h.done <- h.s.Run(ctx) }()
	h.t.Cleanup(func() {
		cancel()
		select {
		case <-h.done:
		case <-time.After(2 * waitTimeout):
			h.t.Error("Run did not return after cancel")
		}
	})
}

// stop cancels Run and waits for it, returning Run's result.
func (h *harness) stop() error {
	h.t.Helper()
	h.cancel()
	select {
	case err := <-h.done:
		h.done <- err // for the cleanup
		return err
	case <-time.After(2 * waitTimeout):
		h.t.Fatal("Run did not return after cancel")
		return nil
	}
}

// sh is a service running script with /bin/sh in the test directory; extra args become $0, $1...
func (h *harness) sh(name, script string, args ...string) Service {
	return Service{
		Name:    name,
		Path:    "/bin/sh",
		Args:    append([]string{"-c", "cd " + h.dir + " || exit 99\n" + script}, args...),
		LogFile: filepath.Join(h.dir, "log", name+".log"),
	}
}

func (h *harness) write(svcs ...Service) {
	h.t.Helper()
	if err := WriteManifest(h.manifest, &Manifest{APIVersion: ManifestAPIVersion, Kind: ManifestKind, Services: svcs}); err != nil {
		h.t.Fatal(err)
	}
}

func (h *harness) svc(name string) (ServiceStatus, bool) {
	for _, s := range h.s.Status().Services {
		if s.Name == name {
			return s, true
		}
	}
	return ServiceStatus{}, false
}

// waitFor polls cond until it holds, failing the test with desc and the status after
// waitTimeout.
func (h *harness) waitFor(desc string, cond func() bool) {
	h.t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			h.t.Fatalf("timed out waiting for %s; status: %+v", desc, h.s.Status())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (h *harness) waitState(name string, st State) ServiceStatus {
	h.t.Helper()
	var got ServiceStatus
	h.waitFor(fmt.Sprintf("%s to be %s", name, st), func() bool {
		s, ok := h.svc(name)
		got = s
		return ok && s.State == st
	})
	return got
}

func (h *harness) read(name string) string {
	data, _ := os.ReadFile(filepath.Join(h.dir, name))
	return string(data)
}

// gone reports whether pid no longer runs. A zombie counts as gone: it is dead, and whether
// something reaps it (PID 1 here) is not the supervisor's business.
func gone(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return true
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	// The state follows the parenthesised command name, which may itself contain spaces.
	rest := stat[bytes.LastIndexByte(stat, ')')+1:]
	return bytes.HasPrefix(bytes.TrimSpace(rest), []byte("Z"))
}

func TestStartOrderFollowsAfter(t *testing.T) {
	h := newHarness(t)
	// Each service notes its name and start time, then stays up.
	script := `echo "$0 $(date +%s%N)" >> order; exec sleep 1000`
	// Listed in reverse and named against the alphabet, so neither manifest order nor name
	// order can produce the right start order by accident.
	h.write(
		withAfter(h.sh("a-kubeproxy", script, "a-kubeproxy"), "b-kubelet"),
		withAfter(h.sh("b-kubelet", script, "b-kubelet"), "c-containerd"),
		h.sh("c-containerd", script, "c-containerd"),
	)
	h.run()
	for _, n := range []string{"a-kubeproxy", "b-kubelet", "c-containerd"} {
		h.waitState(n, StateRunning)
	}
	lines := strings.Fields(h.read("order"))
	if len(lines) != 6 {
		t.Fatalf("order file %q, want 3 starts", h.read("order"))
	}
	if got := []string{lines[0], lines[2], lines[4]}; !slices.Equal(got, []string{"c-containerd", "b-kubelet", "a-kubeproxy"}) {
		t.Fatalf("start order %v, want c-containerd, b-kubelet, a-kubeproxy", got)
	}
	// Every service started only after its dependency had been up for StartGrace, on the
	// supervisor's clock (the children's own timestamps come after their exec and shell start-up,
	// by a varying delay, so they cannot bound the gap).
	started := map[string]time.Time{}
	for _, ss := range h.s.Status().Services {
		if ss.Started == nil {
			t.Fatalf("%s runs but its status has no start time", ss.Name)
		}
		started[ss.Name] = *ss.Started
	}
	for _, pair := range [][2]string{{"c-containerd", "b-kubelet"}, {"b-kubelet", "a-kubeproxy"}} {
		if gap := started[pair[1]].Sub(started[pair[0]]); gap < h.s.StartGrace {
			t.Errorf("%s started %v after %s, want at least StartGrace %v", pair[1], gap, pair[0], h.s.StartGrace)
		}
	}
}

func withAfter(s Service, after ...string) Service {
	s.After = after
	return s
}

func TestWaitsForDependencyThatDoesNotRun(t *testing.T) {
	h := newHarness(t)
	h.write(
		h.sh("containerd", `echo cannot start; exit 1`),
		withAfter(h.sh("kubelet", `touch kubelet-started; exec sleep 1000`), "containerd"),
	)
	h.run()
	h.waitFor("containerd to be restarted twice", func() bool { s, _ := h.svc("containerd"); return s.Restarts >= 2 })
	s, _ := h.svc("kubelet")
	if s.State != StateWaiting || s.WaitingFor != "service containerd" || s.PID != 0 {
		t.Fatalf("kubelet status %+v, want waiting for service containerd", s)
	}
	if _, err := os.Stat(filepath.Join(h.dir, "kubelet-started")); err == nil {
		t.Fatal("kubelet started although containerd never ran")
	}
}

func TestWaitFiles(t *testing.T) {
	h := newHarness(t)
	ready := filepath.Join(h.dir, "kubelet.conf")
	svc := h.sh("kubelet", `touch started; exec sleep 1000`)
	svc.WaitFiles = []string{ready}
	h.write(svc)
	h.run()
	h.waitFor("kubelet to wait for its file", func() bool {
		s, _ := h.svc("kubelet")
		return s.State == StateWaiting && s.WaitingFor == "file "+ready
	})
	// Several polls pass without the file; the service must still not have started.
	time.Sleep(10 * h.s.Poll)
	if s, _ := h.svc("kubelet"); s.State != StateWaiting || h.read("started") != "" {
		t.Fatalf("kubelet left waiting without its file: %+v", s)
	}
	if _, err := os.Stat(filepath.Join(h.dir, "started")); err == nil {
		t.Fatal("kubelet ran without its file")
	}
	if err := os.WriteFile(ready, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	s := h.waitState("kubelet", StateRunning)
	if s.WaitingFor != "" || s.PID == 0 {
		t.Fatalf("running kubelet status %+v", s)
	}
	h.waitFor("the started marker", func() bool { _, err := os.Stat(filepath.Join(h.dir, "started")); return err == nil })
}

func TestCrashIsRestartedWithBackoff(t *testing.T) {
	tests := []struct {
		name       string
		script     string
		wantCode   int
		wantSignal string
		wantTail   []string
	}{
		{
			name:     "exit code",
			script:   `date +%s%N >> starts; for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22; do echo "line $i"; done; echo "fatal: boom" >&2; exit 3`,
			wantCode: 3,
			wantTail: func() []string {
				var l []string
				for i := 4; i <= 22; i++ {
					l = append(l, fmt.Sprintf("line %d", i))
				}
				return append(l, "fatal: boom")
			}(),
		},
		{
			name:       "signal",
			script:     `date +%s%N >> starts; printf 'about to die'; kill -KILL $$`,
			wantCode:   -1,
			wantSignal: "killed",
			wantTail:   []string{"about to die"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			h.write(h.sh("crasher", tc.script))
			h.run()
			h.waitFor("5 restarts", func() bool { s, _ := h.svc("crasher"); return s.Restarts >= 5 })
			s, _ := h.svc("crasher")
			if s.LastExit == nil {
				t.Fatalf("no last exit recorded: %+v", s)
			}
			if s.LastExit.Code != tc.wantCode || s.LastExit.Signal != tc.wantSignal || s.LastExit.At.IsZero() {
				t.Errorf("last exit %+v, want code %d signal %q", s.LastExit, tc.wantCode, tc.wantSignal)
			}
			if !reflect.DeepEqual(s.LastExit.LogTail, tc.wantTail) {
				t.Errorf("log tail %q, want %q", s.LastExit.LogTail, tc.wantTail)
			}
			// The gap between starts is at least the backoff delay, which doubles from
			// BackoffMin up to BackoffMax.
			var starts []int64
			for _, f := range strings.Fields(h.read("starts")) {
				n, _ := strconv.ParseInt(f, 10, 64)
				starts = append(starts, n)
			}
			delay := h.s.BackoffMin
			for i := 1; i < len(starts) && i <= 5; i++ {
				if gap := time.Duration(starts[i] - starts[i-1]); gap < delay {
					t.Errorf("start %d came %v after the previous one, want at least %v", i, gap, delay)
				}
				delay = min(2*delay, h.s.BackoffMax)
			}
		})
	}
}

func TestDefinitionChangeRestartsWithNewArgs(t *testing.T) {
	h := newHarness(t)
	script := `echo "$0" >> versions; exec sleep 1000`
	h.write(h.sh("kubelet", script, "v1"))
	h.run()
	old := h.waitState("kubelet", StateRunning)
	h.write(h.sh("kubelet", script, "v2"))
	h.waitFor("kubelet to run v2", func() bool {
		s, _ := h.svc("kubelet")
		return s.State == StateRunning && s.PID != old.PID
	})
	if got := strings.Fields(h.read("versions")); !slices.Equal(got, []string{"v1", "v2"}) {
		t.Fatalf("started versions %v, want [v1 v2]", got)
	}
	h.waitFor("the v1 process to be gone", func() bool { return gone(old.PID) })
	s, _ := h.svc("kubelet")
	if s.Restarts != 1 || s.LastExit == nil || s.LastExit.Signal != "terminated" {
		t.Fatalf("status %+v lastExit %+v, want 1 restart after SIGTERM", s, s.LastExit)
	}
}

func TestRemovedServiceIsStopped(t *testing.T) {
	h := newHarness(t)
	keep, drop := h.sh("containerd", `exec sleep 1000`), h.sh("extra", `exec sleep 1000`)
	h.write(keep, drop)
	h.run()
	k := h.waitState("containerd", StateRunning)
	d := h.waitState("extra", StateRunning)
	h.write(keep)
	h.waitFor("extra to leave the status", func() bool { _, ok := h.svc("extra"); return !ok })
	if !gone(d.PID) {
		t.Fatalf("removed service's process %d still runs", d.PID)
	}
	if s, _ := h.svc("containerd"); s.PID != k.PID || s.State != StateRunning {
		t.Fatalf("containerd was disturbed: %+v (was pid %d)", s, k.PID)
	}
}

func TestRestart(t *testing.T) {
	h := newHarness(t)
	if err := h.s.Restart("containerd"); err == nil {
		t.Fatal("Restart before Run succeeded")
	}
	h.write(
		h.sh("containerd", `exec sleep 1000`),
		withAfter(h.sh("kubelet", `exec sleep 1000`), "containerd"),
	)
	h.run()
	c := h.waitState("containerd", StateRunning)
	k := h.waitState("kubelet", StateRunning)
	if err := h.s.Restart("nope"); err == nil || !strings.Contains(err.Error(), "nope") {
		t.Fatalf("Restart of an unknown service: %v, want an error naming it", err)
	}
	// Concurrent callers are serialised by the supervisor; each must get an answer.
	errs := make(chan error, 3)
	for range 3 {
		go func() { errs <- h.s.Restart("containerd") }()
	}
	for range 3 {
		if err := <-errs; err != nil {
			t.Fatalf("Restart: %v", err)
		}
	}
	h.waitFor("containerd to run again", func() bool {
		s, _ := h.svc("containerd")
		return s.State == StateRunning && s.PID != c.PID
	})
	if !gone(c.PID) {
		t.Fatalf("old containerd %d still runs", c.PID)
	}
	// kubelet survives a containerd restart.
	if s, _ := h.svc("kubelet"); s.PID != k.PID || s.State != StateRunning || s.Restarts != 0 {
		t.Fatalf("kubelet was restarted with containerd: %+v (was pid %d)", s, k.PID)
	}
	if s, _ := h.svc("containerd"); s.Restarts < 1 {
		t.Fatalf("containerd restarts %d, want at least 1", s.Restarts)
	}
}

func TestCancelStopsEverythingInReverseOrder(t *testing.T) {
	h := newHarness(t)
	h.s.StopGrace = 500 * time.Millisecond
	// Each service notes when SIGTERM reaches it; "stubborn" ignores it and needs SIGKILL;
	// "forker" leaves a grandchild in its process group.
	graceful := `trap 'echo "$0" >> stops; exit 0' TERM; echo $$ > "$0.pid"; while :; do sleep 0.05; done`
	h.write(
		h.sh("containerd", graceful, "containerd"),
		withAfter(h.sh("kubelet", graceful, "kubelet"), "containerd"),
		withAfter(h.sh("kubeproxy", graceful, "kubeproxy"), "kubelet"),
		h.sh("stubborn", `trap '' TERM; while :; do sleep 0.05; done`),
		h.sh("forker", `sleep 1000 & echo $! > grandchild.pid; wait`),
	)
	h.run()
	var pids []int
	for _, n := range []string{"containerd", "kubelet", "kubeproxy", "stubborn", "forker"} {
		pids = append(pids, h.waitState(n, StateRunning).PID)
	}
	h.waitFor("the grandchild pid", func() bool { return strings.TrimSpace(h.read("grandchild.pid")) != "" })
	grandchild, err := strconv.Atoi(strings.TrimSpace(h.read("grandchild.pid")))
	if err != nil {
		t.Fatal(err)
	}
	pids = append(pids, grandchild)

	if err := h.stop(); err != nil {
		t.Fatalf("Run returned %v after cancel, want nil", err)
	}
	for _, pid := range pids {
		if !gone(pid) {
			t.Errorf("process %d survived the shutdown", pid)
		}
	}
	if got := strings.Fields(h.read("stops")); !slices.Equal(got, []string{"kubeproxy", "kubelet", "containerd"}) {
		t.Errorf("stop order %v, want kubeproxy, kubelet, containerd", got)
	}
	for _, s := range h.s.Status().Services {
		if s.State != StateStopped || s.PID != 0 || s.LastExit == nil {
			t.Errorf("after shutdown %s: %+v", s.Name, s)
		}
		if s.Name == "stubborn" && s.LastExit.Signal != "killed" {
			t.Errorf("stubborn ended by %+v, want SIGKILL", s.LastExit)
		}
	}
	if err := h.s.Restart("kubelet"); err == nil {
		t.Error("Restart after Run returned succeeded")
	}
}

func TestServiceLogIsRotated(t *testing.T) {
	h := newHarness(t)
	h.s.MaxLogBytes = 100
	h.s.MaxLogFiles = 2
	// 60 lines of 10 bytes: 600 bytes through 100-byte files, keeping the current file and
	// two backups, all full.
	h.write(h.sh("chatty", `i=100; while [ $i -lt 160 ]; do echo "line-$i"; i=$((i+1)); done; touch done; exec sleep 1000`))
	h.run()
	h.waitFor("the output to be written", func() bool { _, err := os.Stat(filepath.Join(h.dir, "done")); return err == nil })
	logDir := filepath.Join(h.dir, "log")
	h.waitFor("the last line to reach the log", func() bool {
		data, _ := os.ReadFile(filepath.Join(logDir, "chatty.log"))
		return strings.HasSuffix(string(data), "line-159\n")
	})
	// How lines group into files depends on how the pipe reads batch them, so check the
	// invariants: exact names, the size bound, whole lines, and that the kept files are the
	// newest contiguous part of the output.
	checkNames(t, logDir, "chatty.log", "chatty.log.1", "chatty.log.2")
	var kept string
	for _, n := range []string{"chatty.log.2", "chatty.log.1", "chatty.log"} {
		data, err := os.ReadFile(filepath.Join(logDir, n))
		if err != nil {
			t.Fatal(err)
		}
		if len(data) == 0 || len(data) > 100 || !strings.HasSuffix(string(data), "\n") || !strings.HasPrefix(string(data), "line-") {
			t.Errorf("%s is not 1..100 bytes of whole lines: %q", n, data)
		}
		kept += string(data)
	}
	var all strings.Builder
	for i := 100; i < 160; i++ {
		fmt.Fprintf(&all, "line-%d\n", i)
	}
	if !strings.HasSuffix(all.String(), kept) || len(kept) < 200 {
		t.Errorf("kept logs are not the newest part of the output:\n%s", kept)
	}
}

func TestStatusFile(t *testing.T) {
	h := newHarness(t)
	ready := filepath.Join(h.dir, "never")
	waiter := h.sh("b-waiter", `exec sleep 1000`)
	waiter.WaitFiles = []string{ready}
	h.write(
		h.sh("c-runner", `exec sleep 1000`),
		waiter,
		h.sh("a-crasher", `echo oops; exit 7`),
	)
	h.run()
	h.waitState("c-runner", StateRunning)
	h.waitFor("a-crasher to have exited", func() bool { s, _ := h.svc("a-crasher"); return s.LastExit != nil })
	h.waitState("b-waiter", StateWaiting)

	// The file is written after the in-memory status changes; wait until they agree.
	var st *Status
	h.waitFor("the status file to match Status()", func() bool {
		var err error
		st, err = ReadStatus(h.status)
		if err != nil {
			return false
		}
		return reflect.DeepEqual(*st, h.s.Status())
	})
	var names []string
	for _, s := range st.Services {
		names = append(names, s.Name)
	}
	if !slices.Equal(names, []string{"a-crasher", "b-waiter", "c-runner"}) {
		t.Fatalf("services in status %v, want sorted by name", names)
	}
	a, b, c := st.Services[0], st.Services[1], st.Services[2]
	if a.LastExit == nil || a.LastExit.Code != 7 || !slices.Equal(a.LastExit.LogTail, []string{"oops"}) || a.LastExit.At.IsZero() {
		t.Errorf("crasher status %+v lastExit %+v", a, a.LastExit)
	}
	if b.State != StateWaiting || b.WaitingFor != "file "+ready || b.PID != 0 || b.Since.IsZero() {
		t.Errorf("waiter status %+v", b)
	}
	if c.State != StateRunning || c.PID == 0 || c.Restarts != 0 || c.LastExit != nil || c.Since.IsZero() {
		t.Errorf("runner status %+v", c)
	}
	// The raw file uses the documented field names.
	raw, _ := os.ReadFile(h.status)
	for _, key := range []string{`"name"`, `"state"`, `"pid"`, `"since"`, `"restarts"`, `"waitingFor"`, `"lastExit"`, `"code"`, `"at"`, `"logTail"`} {
		if !bytes.Contains(raw, []byte(key)) {
			t.Errorf("status file lacks %s:\n%s", key, raw)
		}
	}
	// Same status, same bytes.
	again, err := marshalStatus(*st)
	if err != nil || !bytes.Equal(again, raw) {
		t.Errorf("re-encoding the status file changed it (err %v)", err)
	}
}

func TestManifestMissingThenInvalid(t *testing.T) {
	h := newHarness(t)
	h.run() // no manifest yet: nothing to run, keep polling
	h.waitFor("an empty status file", func() bool {
		st, err := ReadStatus(h.status)
		return err == nil && len(st.Services) == 0 && st.ManifestError == ""
	})
	h.write(h.sh("containerd", `exec sleep 1000`))
	c := h.waitState("containerd", StateRunning)

	bad := []byte(`{"apiVersion": "kubewin.io/v1alpha1", "kind": "NodeServices", "services": [{"name": "x"}]}`)
	if err := os.WriteFile(h.manifest, bad, 0o600); err != nil {
		t.Fatal(err)
	}
	h.waitFor("the manifest error in the status", func() bool {
		return strings.Contains(h.s.Status().ManifestError, "services[0].path")
	})
	if s, _ := h.svc("containerd"); s.PID != c.PID || s.State != StateRunning {
		t.Fatalf("an invalid manifest disturbed containerd: %+v", s)
	}
	if _, ok := h.svc("x"); ok {
		t.Fatal("a service of the invalid manifest appeared")
	}
	// Fixed again: the error clears and containerd keeps running untouched.
	h.write(h.sh("containerd", `exec sleep 1000`))
	h.waitFor("the manifest error to clear", func() bool { return h.s.Status().ManifestError == "" })
	if s, _ := h.svc("containerd"); s.PID != c.PID {
		t.Fatalf("rewriting an identical definition restarted containerd: %+v", s)
	}
}

func TestServiceThatCannotStart(t *testing.T) {
	h := newHarness(t)
	h.write(Service{Name: "ghost", Path: filepath.Join(h.dir, "no-such-binary"), LogFile: filepath.Join(h.dir, "ghost.log")})
	h.run()
	h.waitFor("2 failed starts", func() bool { s, _ := h.svc("ghost"); return s.Restarts >= 2 })
	s, _ := h.svc("ghost")
	if s.LastExit == nil || s.LastExit.Code != -1 || !strings.Contains(s.LastExit.Error, "no-such-binary") {
		t.Fatalf("last exit %+v, want the start error", s.LastExit)
	}
}

func TestRunRejectsSecondRun(t *testing.T) {
	h := newHarness(t)
	h.run()
	h.waitFor("the first Run to be up", func() bool { _, err := os.Stat(h.status); return err == nil })
	if err := h.s.Run(context.Background()); err == nil {
		t.Fatal("a second concurrent Run was accepted")
	}
}

func TestCancelledRunStartsNothing(t *testing.T) {
	h := newHarness(t)
	h.write(h.sh("containerd", `touch started; exec sleep 1000`))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := h.s.Run(ctx); err != nil {
		t.Fatalf("Run: %v", err)
	}
	if _, err := os.Stat(filepath.Join(h.dir, "started")); err == nil {
		t.Fatal("a service was started by a Run whose context was already cancelled")
	}
	if s, ok := h.svc("containerd"); !ok || s.State != StateStopped {
		t.Fatalf("status %+v, want containerd stopped", s)
	}
}

func TestEnvIsAddedToTheSupervisorsEnvironment(t *testing.T) {
	t.Setenv("NODERUN_INHERITED", "from-supervisor")
	t.Setenv("NODERUN_OVERRIDDEN", "old")
	h := newHarness(t)
	svc := h.sh("envy", `echo "$NODERUN_INHERITED $NODERUN_OVERRIDDEN $NODERUN_ADDED" > env.out; exec sleep 1000`)
	svc.Env = []string{"NODERUN_OVERRIDDEN=new", "NODERUN_ADDED=added"}
	h.write(svc)
	h.run()
	h.waitFor("env.out", func() bool { return strings.HasSuffix(h.read("env.out"), "\n") })
	if got := strings.TrimSpace(h.read("env.out")); got != "from-supervisor new added" {
		t.Fatalf("service saw %q, want %q", got, "from-supervisor new added")
	}
}
