package rollout

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/kubewin/kubewin/internal/nodestatus"
	"github.com/kubewin/kubewin/internal/rollout/api"
)

// simLabel marks the Nodes the simulated node agent plays.
const simLabel = "rollout-test.kubewin.io/simulated"

// simBehaviour is how one simulated node answers.
type simBehaviour struct {
	// applyDelay is how long an apply takes before the kubelet restart.
	applyDelay time.Duration
	// flowFail: under any applied revision, the node's post-apply flow check fails (the
	// revision broke the pod network); after a rollback it passes again.
	flowFail bool
	// applyFail: the apply itself fails (a checksum mismatch, say) and is reported Failed.
	applyFail string
}

// simAgent is a SIMULATED NODE AGENT: it plays, for the test's Nodes (which have no machine
// behind them), the two parts a real node has:
//   - the kubewin node service's side of the rollout contract (internal/rollout/api): it reads
//     its Node's request, reports Applying, "restarts the kubelet" (Ready False, then True),
//     reports Applied with current/previous, publishes its flow check; on Rollback it reports
//     RollingBack, restarts, RolledBack;
//   - the kubelet's heartbeat: it renews each node's Lease in kube-node-lease, so the node
//     lifecycle controller of the real kube-controller-manager keeps the nodes healthy and
//     lifts the not-ready taint the API server puts on new Nodes;
//   - the kubelet's side of pods: pods bound to its nodes become Running and Ready, evicted
//     (terminating) pods are removed once deleted, and a rollout http probe pod's GET is sent
//     from the test process (loopback) with the pod's command's URL, its outcome written as
//     the pod's phase and exit code.
//
// It records every request it acted on, so tests can assert that no request ran twice.
type simAgent struct {
	c    kubernetes.Interface
	t    testing.TB
	http *http.Client

	mu        sync.Mutex
	behaviour map[string]simBehaviour
	inFlight  map[string]bool
	acted     map[string][]string // node → requests acted on, in order
	probed    map[string]bool     // probe pods already run
}

func newSimAgent(t testing.TB, c kubernetes.Interface) *simAgent {
	s := &simAgent{c: c, t: t, http: &http.Client{Timeout: 5 * time.Second},
		behaviour: map[string]simBehaviour{}, inFlight: map[string]bool{}, acted: map[string][]string{}, probed: map[string]bool{}}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for ctx.Err() == nil {
			s.pass(ctx)
			select {
			case <-ctx.Done():
			case <-time.After(50 * time.Millisecond):
			}
		}
	}()
	t.Cleanup(func() { cancel(); wg.Wait() })
	return s
}

func (s *simAgent) set(node string, b simBehaviour) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.behaviour[node] = b
}

func (s *simAgent) requests(node string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.acted[node]...)
}

// addNode creates a Node as a joined kubewin node looks: Ready for an hour, the node service
// healthy, running revision "base".
func (s *simAgent) addNode(ctx context.Context, name, pool string, b simBehaviour) {
	s.t.Helper()
	s.set(name, b)
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{
		Name:        name,
		Labels:      map[string]string{api.LabelPool: pool, simLabel: "true", corev1.LabelOSStable: "linux", corev1.LabelHostname: name},
		Annotations: map[string]string{api.AnnotationCurrent: "base"},
	}}
	if _, err := s.c.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{}); err != nil {
		s.t.Fatal(err)
	}
	hourAgo := metav1.NewTime(time.Now().Add(-time.Hour))
	res := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("8"), corev1.ResourceMemory: resource.MustParse("16Gi"), corev1.ResourcePods: resource.MustParse("110")}
	status := corev1.NodeStatus{
		Capacity: res, Allocatable: res,
		Conditions: []corev1.NodeCondition{
			{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady", LastHeartbeatTime: hourAgo, LastTransitionTime: hourAgo},
			{Type: nodestatus.ConditionType, Status: corev1.ConditionTrue, Reason: nodestatus.ReasonHealthy, Message: "running: containerd, kubelet", LastHeartbeatTime: hourAgo, LastTransitionTime: hourAgo},
		},
		NodeInfo: corev1.NodeSystemInfo{KubeletVersion: "v1.37.1", OperatingSystem: "linux", Architecture: "amd64"},
	}
	// A patch: the controller manager may have changed the Node since (its pod CIDR).
	body, err := json.Marshal(map[string]any{"status": status})
	if err != nil {
		s.t.Fatal(err)
	}
	if _, err := s.c.CoreV1().Nodes().Patch(ctx, name, types.StrategicMergePatchType, body, metav1.PatchOptions{}, "status"); err != nil {
		s.t.Fatal(err)
	}
	// Joined: Ready, and the node lifecycle controller has lifted the not-ready taint the API
	// server put on the new Node (pods can land on it).
	var last *corev1.Node
	err = wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		n, err := s.c.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		last = n
		return nodeReady(n) && len(n.Spec.Taints) == 0, nil
	})
	if err != nil {
		s.t.Fatalf("node %s never became Ready without taints: %v (conditions %+v, taints %+v)", name, err, last.Status.Conditions, last.Spec.Taints)
	}
}

func (s *simAgent) pass(ctx context.Context) {
	nodes, err := s.c.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: simLabel})
	if err != nil {
		return
	}
	mine := map[string]bool{}
	for _, n := range nodes.Items {
		mine[n.Name] = true
		s.heartbeat(ctx, n.Name)
		st := api.ReadNodeState(n.Annotations)
		if st.Request == "" || st.Request == st.Observed {
			continue
		}
		s.mu.Lock()
		busy := s.inFlight[n.Name]
		if !busy {
			s.inFlight[n.Name] = true
			s.acted[n.Name] = append(s.acted[n.Name], st.Request)
		}
		b := s.behaviour[n.Name]
		s.mu.Unlock()
		if !busy {
			go func(name string, st api.NodeState) {
				defer func() { s.mu.Lock(); delete(s.inFlight, name); s.mu.Unlock() }()
				if err := s.act(ctx, name, st, b); err != nil && ctx.Err() == nil {
					s.t.Errorf("simulated node agent on %s: %v", name, err)
				}
			}(n.Name, st)
		}
	}
	pods, err := s.c.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
	if err != nil {
		return
	}
	for i := range pods.Items {
		p := &pods.Items[i]
		if !mine[p.Spec.NodeName] {
			continue
		}
		switch {
		case p.DeletionTimestamp != nil:
			// The kubelet confirms a termination by deleting with grace 0.
			err = s.c.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: new(int64), Preconditions: &metav1.Preconditions{UID: &p.UID}})
		case p.Labels[probeLabel] != "":
			err = s.runProbe(ctx, p)
		case !podReady(p):
			err = s.podStatus(ctx, p, corev1.PodRunning, true, nil)
		}
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) && ctx.Err() == nil {
			s.t.Logf("simulated kubelet: pod %s/%s: %v", p.Namespace, p.Name, err)
		}
	}
}

// heartbeat renews the node's Lease as the kubelet does (k8s.io/component-helpers
// apimachinery/lease; 40 s duration).
func (s *simAgent) heartbeat(ctx context.Context, node string) {
	leases := s.c.CoordinationV1().Leases(corev1.NamespaceNodeLease)
	now := metav1.NewMicroTime(time.Now())
	l, err := leases.Get(ctx, node, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		secs := int32(40)
		_, err = leases.Create(ctx, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: node, Namespace: corev1.NamespaceNodeLease},
			Spec: coordinationv1.LeaseSpec{HolderIdentity: &node, LeaseDurationSeconds: &secs, RenewTime: &now}}, metav1.CreateOptions{})
	case err == nil:
		if l.Spec.RenewTime != nil && time.Since(l.Spec.RenewTime.Time) < time.Second {
			return
		}
		l.Spec.RenewTime = &now
		_, err = leases.Update(ctx, l, metav1.UpdateOptions{})
	}
	if err != nil && !apierrors.IsConflict(err) && !apierrors.IsAlreadyExists(err) && ctx.Err() == nil {
		s.t.Logf("simulated kubelet: renew the Lease of %s: %v", node, err)
	}
}

func (s *simAgent) runProbe(ctx context.Context, p *corev1.Pod) error {
	s.mu.Lock()
	done := s.probed[string(p.UID)]
	s.probed[string(p.UID)] = true
	s.mu.Unlock()
	if done {
		return nil
	}
	cmd := p.Spec.Containers[0].Command
	url := cmd[len(cmd)-1]
	exit, msg := int32(0), ""
	resp, err := s.http.Get(url)
	switch {
	case err != nil:
		exit, msg = 1, err.Error()
	case resp.StatusCode >= 400:
		exit, msg = 1, "server returned error: HTTP/1.1 "+resp.Status
	}
	if resp != nil {
		resp.Body.Close()
	}
	phase := corev1.PodSucceeded
	if exit != 0 {
		phase = corev1.PodFailed
	}
	return s.podStatus(ctx, p, phase, false, &corev1.ContainerStateTerminated{ExitCode: exit, Message: msg})
}

func (s *simAgent) podStatus(ctx context.Context, p *corev1.Pod, phase corev1.PodPhase, ready bool, term *corev1.ContainerStateTerminated) error {
	now := metav1.Now()
	st := corev1.ConditionFalse
	if ready {
		st = corev1.ConditionTrue
	}
	p.Status.Phase = phase
	p.Status.Conditions = []corev1.PodCondition{
		{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: now},
		{Type: corev1.PodInitialized, Status: corev1.ConditionTrue, LastTransitionTime: now},
		{Type: corev1.ContainersReady, Status: st, LastTransitionTime: now},
		{Type: corev1.PodReady, Status: st, LastTransitionTime: now},
	}
	cs := corev1.ContainerStatus{Name: p.Spec.Containers[0].Name, Image: p.Spec.Containers[0].Image, Ready: ready}
	if term != nil {
		cs.State.Terminated = term
	} else {
		cs.State.Running = &corev1.ContainerStateRunning{StartedAt: now}
	}
	p.Status.ContainerStatuses = []corev1.ContainerStatus{cs}
	_, err := s.c.CoreV1().Pods(p.Namespace).UpdateStatus(ctx, p, metav1.UpdateOptions{})
	return err
}

// act carries out one request as the node service would.
func (s *simAgent) act(ctx context.Context, node string, st api.NodeState, b simBehaviour) error {
	report := func(phase api.NodePhase, reason, current, previous string) error {
		body, err := api.NodeReport(st.Request, phase, reason, current, previous)
		if err != nil {
			return err
		}
		_, err = s.c.CoreV1().Nodes().Patch(ctx, node, types.MergePatchType, body, metav1.PatchOptions{})
		return err
	}
	switch st.Action {
	case api.ActionApply:
		rev, err := api.DecodeRevision(st.Target)
		if err != nil {
			return report(api.NodeFailed, err.Error(), st.Current, st.Previous)
		}
		if err := report(api.NodeApplying, "", st.Current, st.Previous); err != nil {
			return err
		}
		time.Sleep(b.applyDelay)
		if b.applyFail != "" {
			// The node service put its previous binaries back itself; what runs is unchanged.
			return report(api.NodeFailed, b.applyFail, st.Current, st.Current)
		}
		if err := s.restartKubelet(ctx, node); err != nil {
			return err
		}
		if err := report(api.NodeApplied, "", rev.Name, st.Current); err != nil {
			return err
		}
		fc := api.FlowCheck{Request: st.Request, Passed: !b.flowFail}
		if b.flowFail {
			fc.Failed = "pod→service Service default/kubernetes 10.96.0.1:443 (TLS): dial tcp 10.96.0.1:443: i/o timeout"
		}
		body, err := api.FlowCheckReport(fc)
		if err != nil {
			return err
		}
		_, err = s.c.CoreV1().Nodes().Patch(ctx, node, types.MergePatchType, body, metav1.PatchOptions{})
		return err
	case api.ActionRollback:
		if err := report(api.NodeRollingBack, "", st.Current, st.Previous); err != nil {
			return err
		}
		if err := s.restartKubelet(ctx, node); err != nil {
			return err
		}
		return report(api.NodeRolledBack, "", st.Previous, "")
	}
	return report(api.NodeFailed, fmt.Sprintf("unknown action %q", st.Action), st.Current, st.Previous)
}

// restartKubelet flips Ready to False and back, as a kubelet restart does.
func (s *simAgent) restartKubelet(ctx context.Context, node string) error {
	for _, ready := range []corev1.ConditionStatus{corev1.ConditionFalse, corev1.ConditionTrue} {
		now := metav1.Now()
		reason := "KubeletReady"
		if ready == corev1.ConditionFalse {
			reason = "KubeletNotReady"
		}
		body, err := json.Marshal(map[string]any{"status": map[string]any{"conditions": []corev1.NodeCondition{
			{Type: corev1.NodeReady, Status: ready, Reason: reason, LastHeartbeatTime: now, LastTransitionTime: now},
		}}})
		if err != nil {
			return err
		}
		if _, err := s.c.CoreV1().Nodes().Patch(ctx, node, types.StrategicMergePatchType, body, metav1.PatchOptions{}, "status"); err != nil {
			return err
		}
		time.Sleep(200 * time.Millisecond)
	}
	return nil
}
