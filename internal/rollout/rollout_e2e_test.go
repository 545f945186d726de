package rollout

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/kubewin/kubewin/internal/rollout/api"
	"github.com/kubewin/kubewin/internal/testenv"
)

const sha = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

// testTiming is short for simulated nodes but keeps generous bounds (a loaded machine must
// not fail a test by a deadline): the waits end on events, the bounds only catch hangs.
func testTiming() Timing {
	return Timing{
		Tick: 100 * time.Millisecond, DrainTimeout: 2 * time.Minute, EvictRetry: 200 * time.Millisecond,
		ApplyTimeout: 2 * time.Minute, GateTimeout: 2 * time.Minute, Settle: time.Second, RollbackTimeout: 2 * time.Minute,
		LeaseDuration: 6 * time.Second, RenewDeadline: 4 * time.Second, RetryPeriod: 500 * time.Millisecond,
	}
}

func revision(name, kubelet string) api.Revision {
	return api.Revision{Name: name, Kubelet: kubelet, KubeProxy: kubelet,
		Binaries: &api.BinarySource{Source: "https://mirror.invalid/kubewin/" + name, Checksums: map[string]string{"kubelet": sha, "kube-proxy": sha}}}
}

func testLog(t *testing.T) *slog.Logger {
	if testing.Verbose() {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo})).With("test", t.Name())
	}
	return nil
}

// nodeLog records, from a Node informer, when each node of the test was cordoned and
// uncordoned and every orchestrator phase it went through, in the API server's order.
type nodeLog struct {
	mu sync.Mutex
	// cordoned: nodes unschedulable now; maxCordoned: the most at once.
	cordoned    map[string]bool
	maxCordoned map[string]int // per pool
	events      []nodeEvent
}

type nodeEvent struct {
	at          time.Time
	node, pool  string
	cordon      bool
	phase       api.Phase
	cordonedNow []string
}

func watchNodes(t *testing.T, c kubernetes.Interface) *nodeLog {
	l := &nodeLog{cordoned: map[string]bool{}, maxCordoned: map[string]int{}}
	f := informers.NewSharedInformerFactoryWithOptions(c, 0, informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = simLabel }))
	inf := f.Core().V1().Nodes().Informer()
	seen := func(obj any) {
		n, ok := obj.(*corev1.Node)
		if !ok {
			return
		}
		l.mu.Lock()
		defer l.mu.Unlock()
		pool := n.Labels[api.LabelPool]
		was := l.cordoned[n.Name]
		l.cordoned[n.Name] = n.Spec.Unschedulable
		count := 0
		var now []string
		for name, c := range l.cordoned {
			if c && strings.HasPrefix(name, pool+"-") {
				count++
				now = append(now, name)
			}
		}
		sort.Strings(now)
		l.maxCordoned[pool] = max(l.maxCordoned[pool], count)
		ph := api.Phase(n.Annotations[api.AnnotationPhase])
		last := api.Phase("")
		for i := len(l.events) - 1; i >= 0; i-- {
			if l.events[i].node == n.Name {
				last = l.events[i].phase
				break
			}
		}
		if was != n.Spec.Unschedulable || ph != last {
			l.events = append(l.events, nodeEvent{at: time.Now(), node: n.Name, pool: pool, cordon: n.Spec.Unschedulable, phase: ph, cordonedNow: now})
		}
	}
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: seen, UpdateFunc: func(_, n any) { seen(n) }}); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	f.Start(stop)
	t.Cleanup(func() { close(stop); f.Shutdown() })
	if !cache.WaitForCacheSync(stop, inf.HasSynced) {
		t.Fatal("node informer did not sync")
	}
	return l
}

// first returns when node first reached phase p (zero when never).
func (l *nodeLog) first(node string, p api.Phase) time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, e := range l.events {
		if e.node == node && e.phase == p {
			return e.at
		}
	}
	return time.Time{}
}

// readyMin tracks the fewest Ready, not terminating pods of a selector seen at any moment.
type readyMin struct {
	mu  sync.Mutex
	min int
}

func watchReady(t *testing.T, c kubernetes.Interface, ns, selector string) *readyMin {
	r := &readyMin{min: 1 << 30}
	f := informers.NewSharedInformerFactoryWithOptions(c, 0, informers.WithNamespace(ns), informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = selector }))
	inf := f.Core().V1().Pods().Informer()
	count := func(any) {
		n := 0
		for _, o := range inf.GetStore().List() {
			p := o.(*corev1.Pod)
			if p.DeletionTimestamp == nil && podReady(p) {
				n++
			}
		}
		r.mu.Lock()
		r.min = min(r.min, n)
		r.mu.Unlock()
	}
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: count, UpdateFunc: func(_, n any) { count(n) }, DeleteFunc: count}); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	f.Start(stop)
	t.Cleanup(func() { close(stop); f.Shutdown() })
	cache.WaitForCacheSync(stop, inf.HasSynced)
	return r
}

func (r *readyMin) get() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.min
}

// workload creates, in a namespace of its own, a Deployment of replicas spread over the pool
// with a PodDisruptionBudget (minAvailable) and a DaemonSet on the pool, and waits until the
// Deployment's pods are Ready and the budget's status is computed (the disruption controller).
func workload(t *testing.T, ctx context.Context, c kubernetes.Interface, pool string, replicas, minAvailable int32) string {
	t.Helper()
	ns := "rollout-" + pool
	if _, err := c.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = c.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{})
	})
	labels := map[string]string{"app": "web"}
	container := []corev1.Container{{Name: "c", Image: "registry.invalid/web:1"}}
	sel := map[string]string{api.LabelPool: pool}
	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns}, Spec: appsv1.DeploymentSpec{
		Replicas: &replicas, Selector: &metav1.LabelSelector{MatchLabels: labels},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{
			NodeSelector: sel, Containers: container,
			TopologySpreadConstraints: []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: corev1.LabelHostname, WhenUnsatisfiable: corev1.ScheduleAnyway, LabelSelector: &metav1.LabelSelector{MatchLabels: labels}}},
		}},
	}}
	if _, err := c.AppsV1().Deployments(ns).Create(ctx, dep, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	agent := map[string]string{"app": "agent"}
	ds := &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Name: "agent", Namespace: ns}, Spec: appsv1.DaemonSetSpec{
		Selector: &metav1.LabelSelector{MatchLabels: agent},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: agent}, Spec: corev1.PodSpec{NodeSelector: sel, Containers: container}},
	}}
	if _, err := c.AppsV1().DaemonSets(ns).Create(ctx, ds, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	ma := intstr.FromInt32(minAvailable)
	pdb := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns}, Spec: policyv1.PodDisruptionBudgetSpec{
		MinAvailable: &ma, Selector: &metav1.LabelSelector{MatchLabels: labels},
	}}
	if _, err := c.PolicyV1().PodDisruptionBudgets(ns).Create(ctx, pdb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, workloadTimeout, true, func(ctx context.Context) (bool, error) {
		p, err := c.PolicyV1().PodDisruptionBudgets(ns).Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return p.Status.ObservedGeneration == p.Generation && p.Status.CurrentHealthy == replicas && p.Status.DisruptionsAllowed == replicas-minAvailable, nil
	})
	if err != nil {
		pods, _ := c.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		var state []string
		for _, p := range pods.Items {
			state = append(state, fmt.Sprintf("%s on %q %s ready=%t", p.Name, p.Spec.NodeName, p.Status.Phase, podReady(&p)))
		}
		p, _ := c.PolicyV1().PodDisruptionBudgets(ns).Get(ctx, "web", metav1.GetOptions{})
		t.Fatalf("the Deployment's %d pods did not all become Ready under the budget: %v; pods: %v; budget status %+v", replicas, err, state, p.Status)
	}
	return ns
}

// workloadTimeout bounds the wait for a new workload's pods (scheduler, simulated kubelet,
// disruption controller).
const workloadTimeout = 2 * time.Minute

func orchestrator(c kubernetes.Interface, t *testing.T, identity string) *Orchestrator {
	return &Orchestrator{Client: c, Namespace: DefaultNamespace, Identity: identity, Timing: testTiming(), Log: testLog(t)}
}

// seconds is how long node took from its cordon to phase p.
func (l *nodeLog) seconds(node string, p api.Phase) float64 {
	return l.first(node, p).Sub(l.first(node, api.PhaseCordoned)).Seconds()
}

func TestRolloutAgainstAPIServer(t *testing.T) {
	cp := testenv.StartControlPlane(t)
	// The disruption controller computes the budgets' status the Eviction API consults; the
	// deployment, replicaset and daemonset controllers and the scheduler put the workload's
	// pods back; node lifecycle lifts the not-ready taint of Ready nodes (the simulated
	// kubelet renews their Leases).
	cp.StartControllerManager(t, "10.244.0.0/16", 24)
	cp.StartScheduler(t)
	t.Cleanup(func() {
		if t.Failed() {
			for _, name := range []string{"kube-scheduler.log", "kube-controller-manager.log"} {
				b, _ := os.ReadFile(filepath.Join(cp.Dir, name))
				t.Logf("%s (tail):\n%s", name, b[max(0, len(b)-6000):])
			}
		}
	})
	c := cp.Clientset(t)
	ctx := context.Background()
	sim := newSimAgent(t, c)
	log := watchNodes(t, c)

	t.Run("skew refused before anything starts", func(t *testing.T) {
		for _, n := range []string{"skew-a", "skew-b"} {
			sim.addNode(ctx, n, "skew", simBehaviour{})
		}
		for _, tc := range []struct{ kubelet, want string }{
			{"v1.38.0", "kubelet v1.38.0 is newer than kube-apiserver v1.37.1"},
			{"v1.33.2", "kubelet v1.33.2 is 4 minor versions older than kube-apiserver v1.37.1 (at most 3)"},
		} {
			_, err := Start(ctx, c, DefaultNamespace, Spec{Pool: "skew", Revision: revision("r-"+strings.ReplaceAll(tc.kubelet, ".", "-"), tc.kubelet), MaxUnavailable: 1, Canary: 1})
			var se *SkewError
			if !errors.As(err, &se) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "https://kubernetes.io/releases/version-skew-policy/") {
				t.Errorf("kubelet %s: error %v, want a refusal saying %q with the policy's URL", tc.kubelet, err, tc.want)
			}
		}
		if _, err := c.CoreV1().ConfigMaps(DefaultNamespace).Get(ctx, configMapName("skew"), metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("a refused rollout was recorded (err %v)", err)
		}
		for _, n := range []string{"skew-a", "skew-b"} {
			node, err := c.CoreV1().Nodes().Get(ctx, n, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if node.Spec.Unschedulable || node.Annotations[api.AnnotationPhase] != "" || len(sim.requests(n)) > 0 {
				t.Errorf("%s touched by a refused rollout: unschedulable %t, annotations %v", n, node.Spec.Unschedulable, node.Annotations)
			}
		}
	})

	t.Run("canary alone then waves, budget respected, gates pass", func(t *testing.T) {
		nodes := []string{"waves-a", "waves-b", "waves-c", "waves-d", "waves-e"}
		for _, n := range nodes {
			sim.addNode(ctx, n, "waves", simBehaviour{applyDelay: 300 * time.Millisecond})
		}
		const replicas, minAvailable = 6, 5
		ns := workload(t, ctx, c, "waves", replicas, minAvailable)
		ready := watchReady(t, c, ns, "app=web")
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ok") }))
		t.Cleanup(srv.Close)
		spec := Spec{Pool: "waves", Revision: revision("v1-37-1-b", "v1.37.1"), MaxUnavailable: 2, Canary: 1,
			Probes: []string{"ready:daemonset/" + ns + "/agent", "http:" + srv.URL + "/healthz"}}
		rec, err := Start(ctx, c, DefaultNamespace, spec)
		if err != nil {
			t.Fatal(err)
		}
		began := time.Now()
		runCtx, cancel := context.WithTimeout(ctx, 5*time.Minute)
		defer cancel()
		final, err := orchestrator(c, t, "orch-waves").Run(runCtx, "waves")
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
		pool := time.Since(began)
		if final.State != StateSucceeded || final.ID != rec.ID {
			t.Fatalf("rollout %+v", final)
		}
		st, err := ReadStatus(ctx, c, DefaultNamespace, "waves")
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range st.Nodes {
			if n.Phase != api.PhaseSucceeded || n.Current != "v1-37-1-b" || n.Previous != "base" || n.Unschedulable || !n.Ready {
				t.Errorf("node %+v", n)
			}
			if got := sim.requests(n.Node); len(got) != 1 || got[0] != rec.ID+"/apply" {
				t.Errorf("%s acted on %v, want one apply", n.Node, got)
			}
		}
		// The canary alone: nothing else cordoned until it succeeded.
		canaryDone := log.first("waves-a", api.PhaseSucceeded)
		for _, n := range nodes[1:] {
			if c := log.first(n, api.PhaseCordoned); !c.After(canaryDone) {
				t.Errorf("%s cordoned at %s, before the canary succeeded at %s", n, c.Format(time.StampMilli), canaryDone.Format(time.StampMilli))
			}
		}
		// Waves of two: b,c together; d,e only after both succeeded.
		for _, late := range []string{"waves-d", "waves-e"} {
			for _, early := range []string{"waves-b", "waves-c"} {
				if !log.first(late, api.PhaseCordoned).After(log.first(early, api.PhaseSucceeded)) {
					t.Errorf("%s started before %s of the previous wave succeeded", late, early)
				}
			}
		}
		log.mu.Lock()
		maxC := log.maxCordoned["waves"]
		log.mu.Unlock()
		if maxC != 2 {
			t.Errorf("at most %d nodes cordoned at once, want exactly --max-unavailable 2 (the waves ran)", maxC)
		}
		if m := ready.get(); m < minAvailable {
			t.Errorf("the Deployment dropped to %d Ready pods, below its budget's minAvailable %d", m, minAvailable)
		}
		// DaemonSet pods stayed; the Deployment's moved.
		evs, err := c.CoreV1().Events(metav1.NamespaceDefault).List(ctx, metav1.ListOptions{FieldSelector: "reason=" + ReasonDrained})
		if err != nil {
			t.Fatal(err)
		}
		var drains []string
		for _, e := range evs.Items {
			if strings.HasPrefix(e.InvolvedObject.Name, "waves-") {
				drains = append(drains, e.InvolvedObject.Name+": "+e.Message)
				if !strings.Contains(e.Message, ns+"/agent-") || !strings.Contains(e.Message, "(DaemonSet)") {
					t.Errorf("drain of %s did not leave the DaemonSet's pod: %s", e.InvolvedObject.Name, e.Message)
				}
			}
		}
		sort.Strings(drains)
		if len(drains) != len(nodes) {
			t.Errorf("drain Events: %v", drains)
		}
		var per []string
		for _, n := range nodes {
			per = append(per, fmt.Sprintf("%s %.1fs", n, log.seconds(n, api.PhaseSucceeded)))
		}
		t.Logf("pool of %d in %s; per node cordon→uncordon: %s; fewest Ready pods %d (budget %d of %d)", len(nodes), pool.Round(time.Millisecond), strings.Join(per, ", "), ready.get(), minAvailable, replicas)
		for _, d := range drains {
			t.Log(d)
		}
	})

	t.Run("failed gate rolls the canary back and halts; other nodes untouched", func(t *testing.T) {
		nodes := []string{"gate-a", "gate-b", "gate-c"}
		for _, n := range nodes {
			// The revision breaks the pod network on every node; only the canary may find out.
			sim.addNode(ctx, n, "gate", simBehaviour{applyDelay: 200 * time.Millisecond, flowFail: true})
		}
		rec, err := Start(ctx, c, DefaultNamespace, Spec{Pool: "gate", Revision: revision("broken", "v1.37.1"), MaxUnavailable: 3, Canary: 1})
		if err != nil {
			t.Fatal(err)
		}
		runCtx, cancel := context.WithTimeout(ctx, 5*time.Minute)
		defer cancel()
		final, err := orchestrator(c, t, "orch-gate").Run(runCtx, "gate")
		if !errors.Is(err, ErrHalted) || final == nil || final.State != StateHalted {
			t.Fatalf("Run: %v (%+v), want a halt", err, final)
		}
		if !strings.Contains(final.Reason, "gate-a") || !strings.Contains(final.Reason, "gate flow check") || !strings.Contains(final.Reason, "10.96.0.1:443") {
			t.Errorf("halt reason %q does not say which node and gate failed and why", final.Reason)
		}
		a, err := c.CoreV1().Nodes().Get(ctx, "gate-a", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		s := api.ReadNodeState(a.Annotations)
		if s.Phase != api.PhaseRolledBack || s.NodePhase != api.NodeRolledBack || s.Current != "base" || !nodeReady(a) || !a.Spec.Unschedulable {
			t.Errorf("canary after the failed gate: phase %s, node %s, current %s, Ready %t, cordoned %t", s.Phase, s.NodePhase, s.Current, nodeReady(a), a.Spec.Unschedulable)
		}
		if got := sim.requests("gate-a"); len(got) != 2 || got[0] != rec.ID+"/apply" || got[1] != rec.ID+"/rollback" {
			t.Errorf("canary acted on %v, want apply then rollback", got)
		}
		for _, n := range nodes[1:] {
			node, err := c.CoreV1().Nodes().Get(ctx, n, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if node.Spec.Unschedulable || node.Annotations[api.AnnotationRollout] != "" || len(sim.requests(n)) != 0 {
				t.Errorf("%s was touched: cordoned %t, annotations %v, requests %v", n, node.Spec.Unschedulable, node.Annotations, sim.requests(n))
			}
		}
		evs, err := c.CoreV1().Events(metav1.NamespaceDefault).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=gate-a"})
		if err != nil {
			t.Fatal(err)
		}
		reasons := map[string]string{}
		for _, e := range evs.Items {
			reasons[e.Reason] = e.Message
		}
		for _, want := range []string{ReasonGateFailed, ReasonRolledBack} {
			if !strings.Contains(reasons[want], "flow check") {
				t.Errorf("no %s Event on the canary saying why (Events: %v)", want, reasons)
			}
		}
		// The halt is on the Node too, as a condition beside the kubelet's.
		if c := nodeCondition(a, ConditionType); c == nil || c.Status != corev1.ConditionFalse || c.Reason != ReasonRolledBack || !strings.Contains(c.Message, "flow check") {
			t.Errorf("the canary's %s condition: %+v", ConditionType, c)
		}
		st, err := ReadStatus(ctx, c, DefaultNamespace, "gate")
		if err != nil {
			t.Fatal(err)
		}
		if st.OK() || st.State != StateHalted || st.Reason != final.Reason {
			t.Errorf("status %+v", st)
		}
		t.Logf("failed gate → rolled back and Ready: %.1fs (canary cordon→RolledBack %.1fs); halt: %s",
			log.first("gate-a", api.PhaseRolledBack).Sub(log.first("gate-a", api.PhaseRollingBack)).Seconds(), log.seconds("gate-a", api.PhaseRolledBack), final.Reason)
	})

	t.Run("a budget that allows no eviction: the drain gives up, the node is uncordoned and unchanged", func(t *testing.T) {
		for _, n := range []string{"blocked-a", "blocked-b"} {
			sim.addNode(ctx, n, "blocked", simBehaviour{})
		}
		// Every replica is needed: the Eviction API answers 429 for each of them.
		ns := workload(t, ctx, c, "blocked", 2, 2)
		ready := watchReady(t, c, ns, "app=web")
		if _, err := Start(ctx, c, DefaultNamespace, Spec{Pool: "blocked", Revision: revision("v1-37-1-d", "v1.37.1"), MaxUnavailable: 1, Canary: 1}); err != nil {
			t.Fatal(err)
		}
		o := orchestrator(c, t, "orch-blocked")
		o.Timing.DrainTimeout = 3 * time.Second
		runCtx, cancel := context.WithTimeout(ctx, 5*time.Minute)
		defer cancel()
		final, err := o.Run(runCtx, "blocked")
		if !errors.Is(err, ErrHalted) || !strings.Contains(final.Reason, ": drain failed") || !strings.Contains(final.Reason, "disruption budget") {
			t.Fatalf("Run: %v, want a halt naming the drain and the budget", err)
		}
		tried := 0
		for _, n := range []string{"blocked-a", "blocked-b"} {
			node, err := c.CoreV1().Nodes().Get(ctx, n, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if node.Spec.Unschedulable || node.Annotations[api.AnnotationRequest] != "" || len(sim.requests(n)) != 0 {
				t.Errorf("%s: cordoned %t, request %q, acted %v", n, node.Spec.Unschedulable, node.Annotations[api.AnnotationRequest], sim.requests(n))
			}
			if node.Annotations[api.AnnotationPhase] != "" {
				tried++
				if !strings.Contains(final.Reason, n) || node.Annotations[api.AnnotationPhase] != string(api.PhasePending) || !strings.Contains(node.Annotations[api.AnnotationReason], "drain failed") {
					t.Errorf("%s: phase %q reason %q", n, node.Annotations[api.AnnotationPhase], node.Annotations[api.AnnotationReason])
				}
			}
		}
		if tried != 1 {
			t.Errorf("%d nodes drained, want the canary alone", tried)
		}
		if m := ready.get(); m < 2 {
			t.Errorf("Ready pods dropped to %d under a budget of 2", m)
		}
		t.Logf("halt: %s", final.Reason)
	})

	t.Run("the apply fails on the node: rolled back, halted", func(t *testing.T) {
		sim.addNode(ctx, "applyfail-a", "applyfail", simBehaviour{applyFail: "kubelet: sha256 0000… does not match the revision's checksum"})
		sim.addNode(ctx, "applyfail-b", "applyfail", simBehaviour{})
		rec, err := Start(ctx, c, DefaultNamespace, Spec{Pool: "applyfail", Revision: revision("v1-37-1-e", "v1.37.1"), MaxUnavailable: 2, Canary: 1})
		if err != nil {
			t.Fatal(err)
		}
		runCtx, cancel := context.WithTimeout(ctx, 5*time.Minute)
		defer cancel()
		final, err := orchestrator(c, t, "orch-applyfail").Run(runCtx, "applyfail")
		if !errors.Is(err, ErrHalted) || !strings.Contains(final.Reason, "failed to apply") || !strings.Contains(final.Reason, "does not match") {
			t.Fatalf("Run: %v", err)
		}
		if got := sim.requests("applyfail-a"); len(got) != 2 || got[1] != rec.ID+"/rollback" {
			t.Errorf("canary acted on %v", got)
		}
		if got := sim.requests("applyfail-b"); len(got) != 0 {
			t.Errorf("second node acted on %v", got)
		}
	})

	t.Run("pause lets the node in progress finish and starts no other; resume goes on", func(t *testing.T) {
		for _, n := range []string{"pause-a", "pause-b", "pause-c"} {
			sim.addNode(ctx, n, "pause", simBehaviour{applyDelay: time.Second})
		}
		if _, err := Start(ctx, c, DefaultNamespace, Spec{Pool: "pause", Revision: revision("v1-37-1-f", "v1.37.1"), MaxUnavailable: 2, Canary: 1}); err != nil {
			t.Fatal(err)
		}
		runCtx, cancel := context.WithTimeout(ctx, 5*time.Minute)
		defer cancel()
		type result struct {
			rec *Record
			err error
		}
		done := make(chan result, 1)
		go func() { r, err := orchestrator(c, t, "orch-pause").Run(runCtx, "pause"); done <- result{r, err} }()
		awaitPhase := func(node string, p api.Phase) {
			t.Helper()
			if err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
				n, err := c.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
				return err == nil && api.Phase(n.Annotations[api.AnnotationPhase]) == p, nil
			}); err != nil {
				t.Fatalf("%s never reached %s: %v", node, p, err)
			}
		}
		awaitPhase("pause-a", api.PhaseApplying)
		if _, err := SetState(ctx, c, DefaultNamespace, "pause", StatePaused); err != nil {
			t.Fatal(err)
		}
		awaitPhase("pause-a", api.PhaseSucceeded)
		// Several orchestrator passes while paused: nothing else starts.
		time.Sleep(20 * testTiming().Tick)
		for _, n := range []string{"pause-b", "pause-c"} {
			if got := log.first(n, api.PhaseCordoned); !got.IsZero() || len(sim.requests(n)) != 0 {
				t.Errorf("%s started while the rollout was paused (cordoned at %s)", n, got)
			}
		}
		if _, err := SetState(ctx, c, DefaultNamespace, "pause", StateRunning); err != nil {
			t.Fatal(err)
		}
		r := <-done
		if r.err != nil || r.rec.State != StateSucceeded {
			t.Fatalf("after resume: %v %+v", r.err, r.rec)
		}
	})

	t.Run("orchestrator killed mid-rollout, a new one resumes with the manifest's RBAC", func(t *testing.T) {
		nodes := []string{"resume-a", "resume-b", "resume-c"}
		for _, n := range nodes {
			sim.addNode(ctx, n, "resume", simBehaviour{applyDelay: 2 * time.Second})
		}
		// The second orchestrator runs as the in-cluster one would: its ServiceAccount with the
		// rendered RBAC, and nothing more.
		sa := applyManifestRBAC(t, ctx, cp)
		rec, err := Start(ctx, c, DefaultNamespace, Spec{Pool: "resume", Revision: revision("v1-37-1-c", "v1.37.1"), MaxUnavailable: 2, Canary: 1})
		if err != nil {
			t.Fatal(err)
		}
		killed := orchestrator(c, t, "orch-first")
		killed.KeepLease = true // a killed process releases nothing
		kctx, kill := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { _, err := killed.Run(kctx, "resume"); done <- err }()
		err = wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
			n, err := c.CoreV1().Nodes().Get(ctx, "resume-a", metav1.GetOptions{})
			return err == nil && api.ReadNodeState(n.Annotations).NodePhase == api.NodeApplying, nil
		})
		if err != nil {
			t.Fatalf("the canary never started applying: %v", err)
		}
		kill()
		killedAt := time.Now()
		if err := <-done; err == nil {
			t.Error("the killed orchestrator reported success")
		}
		second := orchestrator(sa, t, "orch-second")
		runCtx, cancel := context.WithTimeout(ctx, 5*time.Minute)
		defer cancel()
		final, err := second.Run(runCtx, "resume")
		if err != nil || final.State != StateSucceeded || final.ID != rec.ID {
			t.Fatalf("second orchestrator: %v (%+v)", err, final)
		}
		for _, n := range nodes {
			if got := sim.requests(n); len(got) != 1 || got[0] != rec.ID+"/apply" {
				t.Errorf("%s acted on %v, want exactly one apply (the resumed rollout must not repeat a request)", n, got)
			}
		}
		canaryApplied := log.first("resume-a", api.PhaseVerifying)
		if !canaryApplied.After(killedAt) {
			t.Errorf("the canary was verified at %s, before the kill at %s: the kill came too late to test a resume", canaryApplied, killedAt)
		}
		// The ServiceAccount may record Events on Nodes (a Role in default): the second
		// orchestrator's own Events are there.
		evs, err := c.CoreV1().Events(metav1.NamespaceDefault).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=resume-c,reason=" + ReasonUpgraded})
		if err != nil || len(evs.Items) != 1 {
			t.Errorf("Events of the second orchestrator on resume-c: %v %v", err, evs)
		}
		// ... and its condition on the Node (the manifest's RBAC allows nodes/status patch).
		rc, err := c.CoreV1().Nodes().Get(ctx, "resume-c", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if cond := nodeCondition(rc, ConditionType); cond == nil || cond.Status != corev1.ConditionTrue || cond.Reason != ReasonUpgraded {
			t.Errorf("resume-c's %s condition after the resumed rollout: %+v", ConditionType, cond)
		}
		lease, err := c.CoordinationV1().Leases(DefaultNamespace).Get(ctx, LeaseName("resume"), metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("resumed: canary verified %.1fs after the kill (Lease %s); Lease holder now %q", canaryApplied.Sub(killedAt).Seconds(), testTiming().LeaseDuration, ptrString(lease.Spec.HolderIdentity))
	})
}

func ptrString(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// applyManifestRBAC creates the ServiceAccount and RBAC of the rendered manifest (not its
// Deployment: no node here runs pods) and returns a client acting as that ServiceAccount.
func applyManifestRBAC(t *testing.T, ctx context.Context, cp *testenv.ControlPlane) kubernetes.Interface {
	t.Helper()
	m, err := Manifest(ManifestOptions{Image: "registry.invalid/kubewin:test"})
	if err != nil {
		t.Fatal(err)
	}
	objs, err := testenv.DecodeObjects(m)
	if err != nil {
		t.Fatal(err)
	}
	var keep []*unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() != "Deployment" {
			keep = append(keep, o)
		}
	}
	if err := cp.CreateObjects(ctx, keep...); err != nil {
		t.Fatal(err)
	}
	cfg := rest.CopyConfig(cp.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: "system:serviceaccount:" + DefaultNamespace + ":" + ServiceAccountName}
	c, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func nodeCondition(n *corev1.Node, typ corev1.NodeConditionType) *corev1.NodeCondition {
	for i := range n.Status.Conditions {
		if n.Status.Conditions[i].Type == typ {
			return &n.Status.Conditions[i]
		}
	}
	return nil
}
