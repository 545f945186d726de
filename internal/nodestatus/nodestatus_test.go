package nodestatus

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubewin/kubewin/internal/noderun"
	"github.com/kubewin/kubewin/internal/rollout/api"
	"github.com/kubewin/kubewin/internal/testenv"
)

func TestAssess(t *testing.T) {
	dir := t.TempDir()
	kubeletLog := filepath.Join(dir, "kubelet.log")
	// A real kubelet v1.37.1 line (kubelet --bogus-flag) after an older, fixed error.
	if err := os.WriteFile(kubeletLog, []byte(
		`E1127 03:00:00.000000    1 run.go:72] "command failed" err="failed to parse kubelet flag: unknown flag: --old-flag"`+"\n"+
			`E1127 03:32:23.500678   18764 run.go:72] "command failed" err="failed to parse kubelet flag: unknown flag: --bogus-flag"`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	manifest := &noderun.Manifest{Services: []noderun.Service{{Name: "kubelet", LogFile: kubeletLog}, {Name: "containerd", LogFile: filepath.Join(dir, "none.log")}}}
	a, err := NewAssessor(func() (*noderun.Manifest, error) { return manifest, nil })
	if err != nil {
		t.Fatal(err)
	}
	running := func(name string) noderun.ServiceStatus {
		return noderun.ServiceStatus{Name: name, State: noderun.StateRunning}
	}
	lastRun := &noderun.ExitStatus{Code: 1, LogTail: []string{
		`E1127 03:32:23.500678   18764 run.go:72] "command failed" err="failed to parse kubelet flag: unknown flag: --bogus-flag"`}}
	for _, tc := range []struct {
		name       string
		st         []noderun.ServiceStatus
		join       *JoinProgress
		healthy    bool
		reason     string
		msg, diagn string
	}{
		{"all running", []noderun.ServiceStatus{running("kubelet"), running("containerd")}, &JoinProgress{Joined: true}, true, ReasonHealthy, "running: containerd, kubelet", ""},
		{"joining", []noderun.ServiceStatus{running("kubelet")}, &JoinProgress{Step: "tls-bootstrap"}, true, ReasonJoining, "tls-bootstrap", ""},
		{"join failed", nil, &JoinProgress{Step: "pod-network", Error: "no pod CIDR"}, false, ReasonJoinFailed, "join step pod-network failed: no pod CIDR", ""},
		{"waiting at boot", []noderun.ServiceStatus{running("containerd"), {Name: "kubelet", State: noderun.StateWaiting, WaitingFor: "service containerd"}}, nil,
			false, ReasonServiceWaiting, "kubelet (waiting for service containerd)", ""},
		{"crash loop, diagnosed from the last run", []noderun.ServiceStatus{running("containerd"), {Name: "kubelet", State: noderun.StateBackoff, Restarts: 4, LastExit: lastRun}}, nil,
			false, ReasonServiceFailing, "service kubelet is backoff after 4 restarts: exit code 1", "--bogus-flag"},
		// Without the last run's lines the log file's tail is read; its first matching line names
		// the flag (an older run's here: the file fallback is the weaker source).
		{"crash loop, diagnosed from the log file", []noderun.ServiceStatus{{Name: "kubelet", State: noderun.StateBackoff, Restarts: 2, LastExit: &noderun.ExitStatus{Code: 1}}}, nil,
			false, ReasonServiceFailing, "exit code 1", "does not exist in this version"},
		{"crash loop, nothing known", []noderun.ServiceStatus{{Name: "containerd", State: noderun.StateBackoff, Restarts: 1, LastExit: &noderun.ExitStatus{Signal: "killed"}}}, nil,
			false, ReasonServiceFailing, "killed by killed", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := a.Assess(context.Background(), noderun.Status{Services: tc.st}, tc.join)
			if h.Healthy != tc.healthy || h.Reason != tc.reason || !strings.Contains(h.Message, tc.msg) {
				t.Errorf("Assess = %+v, want healthy=%v reason %s message containing %q", h, tc.healthy, tc.reason, tc.msg)
			}
			switch {
			case tc.diagn == "" && h.Diagnosis != nil:
				t.Errorf("unexpected diagnosis %+v", h.Diagnosis)
			case tc.diagn != "" && (h.Diagnosis == nil || h.Diagnosis.ID != "KUBELET-UNKNOWN-FLAG" || !strings.Contains(h.Diagnosis.Cause, tc.diagn)):
				t.Errorf("diagnosis %+v, want KUBELET-UNKNOWN-FLAG about %s", h.Diagnosis, tc.diagn)
			}
		})
	}
}

// Publish against a real API server: the condition merges with the kubelet's own, transitions
// keep their time until the assessment changes, each change records an Event, and List reads
// it back.
func TestPublishAndList(t *testing.T) {
	cp := testenv.StartControlPlane(t)
	c := cp.Clientset(t)
	ctx := context.Background()
	// Where kubewin rollout left two more nodes (internal/rollout/api's annotations): one
	// upgraded, one rolled back by a failed gate (the rollout halted there).
	rollouts := map[string]map[string]string{
		"r-done": {api.AnnotationRollout: "win/v1.37.1", api.AnnotationPhase: string(api.PhaseSucceeded), api.AnnotationNodePhase: string(api.NodeApplied), api.AnnotationCurrent: "v1.37.1", api.AnnotationPrevious: "v1.37.0"},
		"r-halted": {api.AnnotationRollout: "win/v1.37.1", api.AnnotationPhase: string(api.PhaseRolledBack), api.AnnotationReason: "gate flow-check: pod→service failed",
			api.AnnotationNodePhase: string(api.NodeRolledBack), api.AnnotationCurrent: "v1.37.0"},
	}
	for _, name := range []string{"n1", "other", "r-done", "r-halted"} {
		n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: rollouts[name]}}
		n, err := c.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady"}}
		if _, err := c.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	p := &Publisher{Client: c, Node: "n1", Component: "kubewin-node"}
	healthy := Health{Healthy: true, Reason: ReasonHealthy, Message: "running: containerd, kubelet"}
	failing := Health{Reason: ReasonServiceFailing, Message: "service kubelet is backoff after 3 restarts" + strings.Repeat("x", 3000)}
	for _, h := range []Health{healthy, healthy, failing} {
		if err := p.Publish(ctx, h); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.event(ctx, Health{Healthy: true, Reason: ReasonRepaired}, "repaired: route 10.244.1.0/24 via 10.0.0.1 (created)"); err != nil {
		t.Fatal(err)
	}
	list, err := List(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 4 || list[0].Node != "n1" || list[1].Node != "other" || list[2].Node != "r-done" || list[3].Node != "r-halted" {
		t.Fatalf("List = %+v", list)
	}
	n1, other := list[0], list[1]
	if n1.Rollout != nil || other.Rollout != nil {
		t.Errorf("rollout state on nodes no rollout touched: %+v %+v", n1.Rollout, other.Rollout)
	}
	if r := list[2].Rollout; r == nil || r.Phase != "Succeeded" || r.Current != "v1.37.1" || r.Previous != "v1.37.0" || r.Halted() || !list[2].OK() {
		t.Errorf("upgraded node: %+v ok=%t", r, list[2].OK())
	}
	if r := list[3].Rollout; r == nil || !r.Halted() || r.Reason != "gate flow-check: pod→service failed" || r.Current != "v1.37.0" || list[3].OK() {
		t.Errorf("rolled-back node: %+v ok=%t (a halted rollout is what status exits 1 for)", r, list[3].OK())
	}
	if !n1.Managed || n1.Healthy || n1.Reason != ReasonServiceFailing || !n1.Ready || len(n1.Message) > maxMessage || n1.OK() {
		t.Errorf("n1 = %+v", n1)
	}
	if n1.LastRepair != "repaired: route 10.244.1.0/24 via 10.0.0.1 (created)" || n1.LastRepairAt == nil {
		t.Errorf("last repair of n1: %q %v", n1.LastRepair, n1.LastRepairAt)
	}
	if other.Managed || !other.OK() {
		t.Errorf("an unmanaged node: %+v", other)
	}
	node, _ := c.CoreV1().Nodes().Get(ctx, "n1", metav1.GetOptions{})
	if len(node.Status.Conditions) != 2 {
		t.Errorf("conditions %+v: the kubelet's Ready must stay beside kubewin's", node.Status.Conditions)
	}
	evs, err := c.CoreV1().Events("default").List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=n1"})
	if err != nil || len(evs.Items) != 3 {
		t.Errorf("events: %d (%v), want one per change (2) and the repair", len(evs.Items), err)
	}
}

// A repair that fails while the services run makes the node unhealthy with the repair's
// reason; a failing service keeps its own (more specific) diagnosis.
func TestLoopReportsAFailingRepair(t *testing.T) {
	a, err := NewAssessor(nil)
	if err != nil {
		t.Fatal(err)
	}
	running := noderun.Status{Services: []noderun.ServiceStatus{{Name: "kubelet", State: noderun.StateRunning}}}
	failing := noderun.Status{Services: []noderun.ServiceStatus{{Name: "kubelet", State: noderun.StateBackoff, Restarts: 2,
		LastExit: &noderun.ExitStatus{Code: 1}}}}
	for _, tc := range []struct {
		name   string
		status noderun.Status
		repair error
		want   string
	}{
		{"repair fails, services run", running, errors.New("add route 10.244.0.0/16 via 10.244.3.1 on vEthernet (cbr0): element not found"), "reason=" + ReasonRepairFailing},
		{"repair fine", running, nil, "reason=" + ReasonHealthy},
		{"service failing and repair failing", failing, errors.New("route"), "reason=" + ReasonServiceFailing},
		{"a problem with its own reason decides", failing, &Problem{Reason: ReasonCredentialExpired, Err: errors.New("expired")}, "reason=" + ReasonCredentialExpired},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logs bytes.Buffer
			ctx, cancel := context.WithCancel(context.Background())
			l := &Loop{Assessor: a, Status: func() noderun.Status { return tc.status },
				Publisher: func() (*Publisher, error) { return nil, errors.New("no credential yet") },
				Repair: func(context.Context) ([]string, error) {
					defer cancel() // one pass
					return nil, tc.repair
				},
				Interval: time.Hour, Log: slog.New(slog.NewTextHandler(&logs, nil))}
			l.Run(ctx)
			if !strings.Contains(logs.String(), tc.want) {
				t.Fatalf("log %q; want %s", logs.String(), tc.want)
			}
		})
	}
}

// The live flow checks, pass by pass: the first only once its interval has passed (the node
// comes up first); a failed flow makes a node whose services run unhealthy; a repair failure in
// the same pass, more likely the cause, is reported instead; a check that cannot run, or a
// repair that put something back (checked again at once), does not leave an old failure behind.
func TestLoopFlowCheck(t *testing.T) {
	a, err := NewAssessor(nil)
	if err != nil {
		t.Fatal(err)
	}
	running := noderun.Status{Services: []noderun.ServiceStatus{{Name: "kubelet", State: noderun.StateRunning}}}
	type pass struct {
		repaired []string
		repair   error
		failed   string
		checkErr error
	}
	dns := "pod→service cluster DNS 10.96.0.10:53: connection refused"
	for _, tc := range []struct {
		name     string
		interval time.Duration
		passes   []pass
		checks   int
		want     string // the reason of the last pass
	}{
		{"not before the interval", time.Hour, []pass{{failed: dns}, {failed: dns}}, 0, ReasonHealthy},
		{"flows pass", time.Nanosecond, []pass{{}, {}}, 2, ReasonHealthy},
		{"a flow fails", time.Nanosecond, []pass{{}, {failed: dns}}, 2, ReasonFlowCheckFailing},
		{"a repair fails in the same pass", time.Nanosecond, []pass{{}, {failed: dns, repair: errors.New("add route: element not found")}}, 2, ReasonRepairFailing},
		{"the check cannot run any more", time.Nanosecond, []pass{{failed: dns}, {checkErr: errors.New("no plan")}}, 2, ReasonHealthy},
		{"a repair fixed it: checked again at once", time.Minute, []pass{{failed: dns}, {repaired: []string{"route 10.244.1.0/24"}}}, 1, ReasonHealthy},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logs bytes.Buffer
			ctx, cancel := context.WithCancel(context.Background())
			i, checks := -1, 0
			l := &Loop{Assessor: a, Status: func() noderun.Status { return running },
				Publisher: func() (*Publisher, error) { return nil, errors.New("no credential yet") },
				Repair: func(context.Context) ([]string, error) {
					i++
					if i == len(tc.passes)-1 {
						defer cancel()
					}
					return tc.passes[i].repaired, tc.passes[i].repair
				},
				Check: func(context.Context) (string, error) {
					checks++
					return tc.passes[i].failed, tc.passes[i].checkErr
				},
				CheckInterval: tc.interval, Interval: 5 * time.Millisecond,
				Log: slog.New(slog.NewTextHandler(&logs, nil))}
			if tc.name == "a repair fixed it: checked again at once" {
				// The first pass's check is due (interval passed), the second only because the
				// repair put something back.
				l.CheckInterval = time.Nanosecond
				first := true
				l.Check = func(context.Context) (string, error) {
					checks++
					if first {
						first = false
						l.CheckInterval = time.Hour
					}
					return tc.passes[i].failed, nil
				}
				tc.checks = 2
			}
			l.Run(ctx)
			if checks != tc.checks {
				t.Errorf("%d checks; want %d", checks, tc.checks)
			}
			var lastReason string
			for _, line := range strings.Split(logs.String(), "\n") {
				if strings.Contains(line, `msg="node health"`) {
					_, r, _ := strings.Cut(line, "reason=")
					lastReason, _, _ = strings.Cut(r, " ")
				}
			}
			if lastReason != tc.want {
				t.Fatalf("last health %q; want %s\n%s", lastReason, tc.want, logs.String())
			}
		})
	}
}
