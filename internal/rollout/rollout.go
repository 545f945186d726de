// Package rollout is the cluster side of `kubewin rollout`: it upgrades a pool of nodes one
// canary, then waves of --max-unavailable, each node cordoned, drained through the Eviction
// API, told its target revision (internal/rollout/api, read by the node service which alone
// changes the node), then gated — Node Ready, the node service's condition, its post-apply flow
// check, the user's probes — and uncordoned, or rolled back with the pool halted.
//
// All state is in the cluster: the rollout's spec and state in a ConfigMap per pool, each
// node's progress in its annotations, and a coordination.k8s.io Lease per pool so that one
// orchestrator acts (client-go leaderelection). An orchestrator that starts (the CLI again, or
// the in-cluster Deployment) resumes every node from the phase it finds.
package rollout

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"

	"github.com/kubewin/kubewin/internal/rollout/api"
)

// Timing bounds every wait of a rollout.
type Timing struct {
	// Tick is how often the orchestrator looks at the pool and a waiting node.
	Tick time.Duration
	// DrainTimeout bounds a node's drain (evictions a budget refuses are retried until then).
	DrainTimeout time.Duration
	// EvictRetry is the wait after a 429 before evicting that pod again (kubectl drain: 5 s).
	EvictRetry time.Duration
	// ApplyTimeout bounds the node service's apply, reboots included.
	ApplyTimeout time.Duration
	// GateTimeout bounds the gates after Applied.
	GateTimeout time.Duration
	// Settle is how long the node must have been Ready before the Ready gate passes (a
	// kubelet that starts and then crashes must not pass).
	Settle time.Duration
	// RollbackTimeout bounds the node's rollback until Ready.
	RollbackTimeout time.Duration
	// Lease timings (client-go leaderelection): a new orchestrator takes over at most
	// LeaseDuration after the old one stopped renewing.
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
}

// DefaultTiming is for real nodes (a Windows cumulative update with its reboot takes tens of
// minutes).
func DefaultTiming() Timing {
	return Timing{
		Tick: 2 * time.Second, DrainTimeout: 15 * time.Minute, EvictRetry: 5 * time.Second,
		ApplyTimeout: 60 * time.Minute, GateTimeout: 15 * time.Minute, Settle: 30 * time.Second,
		RollbackTimeout: 60 * time.Minute,
		LeaseDuration:   15 * time.Second, RenewDeadline: 10 * time.Second, RetryPeriod: 2 * time.Second,
	}
}

// Orchestrator runs rollouts.
type Orchestrator struct {
	Client kubernetes.Interface
	// Namespace holds the rollouts' ConfigMaps and Leases and the http probe pods.
	Namespace string
	// Identity is this orchestrator's name in the Lease (the pod name in-cluster).
	Identity string
	Timing   Timing
	// KeepLease leaves the Lease to expire when Run stops instead of releasing it, as a
	// killed process does (the next orchestrator waits LeaseDuration).
	KeepLease bool
	Log       *slog.Logger
}

// ErrHalted is returned by Run when the rollout halted (a node rolled back or failed).
var ErrHalted = errors.New("rollout halted")

// Start checks a rollout and records it: the pool must have nodes, the revision must pass the
// version-skew policy against the API server, a Linux node takes no Windows update. It does not
// run it (Run does, here or in-cluster).
func Start(ctx context.Context, c kubernetes.Interface, namespace string, spec Spec) (*Record, error) {
	if _, err := spec.Validate(); err != nil {
		return nil, err
	}
	sv, err := c.Discovery().ServerVersion()
	if err != nil {
		return nil, fmt.Errorf("read the API server's version: %w", err)
	}
	if err := CheckSkew(sv.GitVersion, &spec.Revision); err != nil {
		return nil, err
	}
	nodes, err := poolNodes(ctx, c, spec.Pool)
	if err != nil {
		return nil, err
	}
	if len(nodes) == 0 {
		return nil, fmt.Errorf("pool %s has no nodes (label them %s=%s)", spec.Pool, api.LabelPool, spec.Pool)
	}
	if len(spec.Revision.OSUpdates) > 0 {
		for _, n := range nodes {
			if n.Labels[corev1.LabelOSStable] != "windows" {
				return nil, fmt.Errorf("revision %s has Windows updates but node %s of pool %s is not a Windows node", spec.Revision.Name, n.Name, spec.Pool)
			}
		}
	}
	return store{c, namespace}.create(ctx, spec, time.Now())
}

// SetState pauses, resumes or aborts a pool's rollout.
func SetState(ctx context.Context, c kubernetes.Interface, namespace, pool string, to State) (*Record, error) {
	return store{c, namespace}.update(ctx, pool, func(r *Record) (bool, error) {
		switch {
		case r.State == to:
			return false, nil
		case r.State.Final():
			return false, fmt.Errorf("the rollout of pool %s is %s already", pool, r.State)
		case to == StateRunning && r.State != StatePaused, to == StatePaused && r.State != StateRunning:
			return false, fmt.Errorf("the rollout of pool %s is %s; cannot make it %s", pool, r.State, to)
		case to != StateRunning && to != StatePaused && to != StateAborted:
			return false, fmt.Errorf("state %s cannot be set by hand", to)
		}
		r.State, r.Reason = to, ""
		if to == StateAborted {
			r.Reason = "aborted by request; nodes in progress finish their step, no other node starts"
		}
		return true, nil
	})
}

func poolNodes(ctx context.Context, c kubernetes.Interface, pool string) ([]corev1.Node, error) {
	sel := labels.SelectorFromSet(labels.Set{api.LabelPool: pool})
	list, err := c.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: sel.String()})
	if err != nil {
		return nil, fmt.Errorf("list the nodes of pool %s: %w", pool, err)
	}
	sort.Slice(list.Items, func(i, j int) bool { return list.Items[i].Name < list.Items[j].Name })
	return list.Items, nil
}

// Run takes the pool's Lease and drives its rollout until it is final (nil when it Succeeded
// or was aborted, ErrHalted wrapped with the reason when it halted) or ctx ends. Only the
// Lease's holder acts; losing it stops every node worker before Run returns.
func (o *Orchestrator) Run(ctx context.Context, pool string) (*Record, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	lock := &resourcelock.LeaseLock{
		LeaseMeta:  metav1.ObjectMeta{Name: LeaseName(pool), Namespace: o.Namespace},
		Client:     o.Client.CoordinationV1(),
		LockConfig: resourcelock.ResourceLockConfig{Identity: o.Identity},
	}
	var (
		mu       sync.Mutex
		rec      *Record
		driveErr error
		started  bool
	)
	done := make(chan struct{})
	t := o.Timing
	le, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock: lock, LeaseDuration: t.LeaseDuration, RenewDeadline: t.RenewDeadline, RetryPeriod: t.RetryPeriod,
		ReleaseOnCancel: !o.KeepLease, Name: "kubewin-rollout-" + pool,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(lctx context.Context) {
				mu.Lock()
				started = true
				mu.Unlock()
				defer close(done)
				o.log().Info("leading", "pool", pool, "identity", o.Identity)
				r, err := o.drive(lctx, pool)
				mu.Lock()
				rec, driveErr = r, err
				mu.Unlock()
				cancel()
			},
			OnStoppedLeading: func() { o.log().Info("stopped leading", "pool", pool, "identity", o.Identity) },
		},
	})
	if err != nil {
		return nil, fmt.Errorf("leader election for pool %s: %w", pool, err)
	}
	le.Run(ctx)
	mu.Lock()
	s := started
	mu.Unlock()
	if s {
		<-done
	}
	mu.Lock()
	defer mu.Unlock()
	switch {
	case driveErr != nil:
		return rec, driveErr
	case rec == nil && ctx.Err() != nil:
		return nil, fmt.Errorf("rollout of pool %s: stopped before it finished: %w", pool, context.Cause(ctx))
	case rec == nil:
		return nil, fmt.Errorf("rollout of pool %s: lost the Lease", pool)
	case rec.State == StateHalted:
		return rec, fmt.Errorf("%w: %s", ErrHalted, rec.Reason)
	}
	return rec, nil
}

func (o *Orchestrator) log() *slog.Logger {
	if o.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return o.Log
}

// nodeView is one node of the pool as the drive loop sees it.
type nodeView struct {
	node  corev1.Node
	state api.NodeState
	// in: this rollout has started on the node.
	in bool
	// pending: the rollout has still to start on it; skip: it is left alone, and why.
	pending bool
	skip    string
	ready   bool
}

func classify(rec *Record, nodes []corev1.Node) []nodeView {
	out := make([]nodeView, 0, len(nodes))
	for _, n := range nodes {
		v := nodeView{node: n, state: api.ReadNodeState(n.Annotations), ready: nodeReady(&n)}
		v.in = v.state.Rollout == rec.ID && v.state.Phase != "" && v.state.Phase != api.PhasePending
		switch {
		case v.in:
		case n.Spec.Unschedulable:
			v.skip = "cordoned outside the rollout"
		case v.state.Current == rec.Spec.Revision.Name:
			v.skip = "already at " + rec.Spec.Revision.Name
		default:
			v.pending = true
		}
		out = append(out, v)
	}
	return out
}

func terminal(p api.Phase) bool {
	return p == api.PhaseSucceeded || p == api.PhaseRolledBack || p == api.PhaseFailed
}

// drive is the leader's loop.
func (o *Orchestrator) drive(ctx context.Context, pool string) (*Record, error) {
	st := store{o.Client, o.Namespace}
	var wg sync.WaitGroup
	defer wg.Wait()
	var mu sync.Mutex
	running := map[string]bool{}
	finished := make(chan string, 64)
	tick := time.NewTicker(o.Timing.Tick)
	defer tick.Stop()
	var lastWait string
	for {
		rec, err := o.step(ctx, st, pool, &wg, &mu, running, finished, &lastWait)
		if err != nil {
			o.log().Warn("rollout step", "pool", pool, "err", err)
		}
		mu.Lock()
		busy := len(running)
		mu.Unlock()
		if rec != nil && rec.State.Final() && busy == 0 {
			return rec, nil
		}
		select {
		case <-ctx.Done():
			return nil, nil
		case <-tick.C:
		case <-finished:
		}
	}
}

// step looks at the pool once: halts on a rolled-back or failed node, finishes, resumes nodes
// in progress, starts the next canary or wave.
func (o *Orchestrator) step(ctx context.Context, st store, pool string, wg *sync.WaitGroup, mu *sync.Mutex, running map[string]bool, finished chan string, lastWait *string) (*Record, error) {
	rec, err := st.get(ctx, pool)
	if err != nil {
		return nil, err
	}
	probes, err := rec.Spec.Validate()
	if err != nil && !rec.State.Final() {
		return st.update(ctx, pool, func(r *Record) (bool, error) {
			r.State, r.Reason = StateHalted, "the recorded rollout is invalid: "+err.Error()
			return true, nil
		})
	}
	nodes, err := poolNodes(ctx, o.Client, pool)
	if err != nil {
		return rec, err
	}
	views := classify(rec, nodes)
	mu.Lock()
	busy := len(running)
	mu.Unlock()

	start := func(name string) {
		mu.Lock()
		defer mu.Unlock()
		if running[name] {
			return
		}
		running[name] = true
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := &worker{o: o, rec: rec, probes: probes, node: name, st: st}
			if err := w.run(ctx); err != nil && ctx.Err() == nil {
				o.log().Warn("node", "node", name, "err", err)
			}
			mu.Lock()
			delete(running, name)
			mu.Unlock()
			select {
			case finished <- name:
			default:
			}
		}()
	}

	// A node that rolled back or failed halts the pool.
	if !rec.State.Final() {
		for _, v := range views {
			if v.in && (v.state.Phase == api.PhaseRolledBack || v.state.Phase == api.PhaseFailed) {
				reason := fmt.Sprintf("node %s %s: %s", v.node.Name, v.state.Phase, v.state.Reason)
				o.log().Warn("halting", "pool", pool, "reason", reason)
				if rec, err = st.update(ctx, pool, func(r *Record) (bool, error) {
					if r.State.Final() {
						return false, nil
					}
					r.State, r.Reason = StateHalted, reason
					return true, nil
				}); err != nil {
					return nil, err
				}
				break
			}
		}
	}
	// Nodes in progress always continue to a terminal phase, whatever the rollout's state: a
	// node is never left drained or half-applied.
	for _, v := range views {
		if v.in && !terminal(v.state.Phase) {
			start(v.node.Name)
		}
	}
	mu.Lock()
	busy = len(running)
	mu.Unlock()
	if rec.State != StateRunning || busy > 0 {
		return rec, nil
	}
	var pending []nodeView
	succeeded, unavailable := 0, 0
	for _, v := range views {
		switch {
		case v.in && v.state.Phase == api.PhaseSucceeded:
			succeeded++
		case v.pending:
			pending = append(pending, v)
			if !v.ready {
				unavailable++
			}
		case !v.in && !v.ready:
			unavailable++
		}
	}
	if len(pending) == 0 {
		return st.update(ctx, pool, func(r *Record) (bool, error) {
			if r.State != StateRunning {
				return false, nil
			}
			r.State, r.Reason = StateSucceeded, summary(views)
			return true, nil
		})
	}
	var batch []nodeView
	if succeeded < rec.Spec.Canary {
		// The canary goes alone; a node that is not Ready is not a canary worth the name.
		for _, v := range pending {
			if v.ready {
				batch = []nodeView{v}
				break
			}
		}
	} else {
		// A wave: --max-unavailable less the pool's nodes that are unavailable already.
		n := rec.Spec.MaxUnavailable - unavailable
		for _, v := range pending {
			if len(batch) >= n {
				break
			}
			if v.ready {
				batch = append(batch, v)
			}
		}
	}
	if len(batch) == 0 {
		why := fmt.Sprintf("waiting: %d pending nodes, %d of the pool unavailable already, max unavailable %d", len(pending), unavailable, rec.Spec.MaxUnavailable)
		if why != *lastWait {
			o.log().Info(why, "pool", pool)
			*lastWait = why
		}
		return rec, nil
	}
	for _, v := range batch {
		o.log().Info("start node", "pool", pool, "node", v.node.Name, "canary", succeeded < rec.Spec.Canary)
		cordon := true
		if err := o.patchNode(ctx, v.node.Name, &cordon, nodeAnnotations{
			api.AnnotationRollout: rec.ID, api.AnnotationPhase: string(api.PhaseCordoned), api.AnnotationReason: "",
			api.AnnotationStarted: stamp(time.Now()), api.AnnotationPhaseSince: stamp(time.Now()),
		}); err != nil {
			return rec, err
		}
		start(v.node.Name)
	}
	return rec, nil
}

func summary(views []nodeView) string {
	var done, skipped []string
	for _, v := range views {
		switch {
		case v.in && v.state.Phase == api.PhaseSucceeded:
			done = append(done, v.node.Name)
		case v.skip != "":
			skipped = append(skipped, v.node.Name+" ("+v.skip+")")
		}
	}
	s := fmt.Sprintf("%d nodes upgraded", len(done))
	if len(skipped) > 0 {
		s += "; left alone: " + strings.Join(skipped, ", ")
	}
	return s
}

func nodeReady(n *corev1.Node) bool {
	c := condition(n, corev1.NodeReady)
	return c != nil && c.Status == corev1.ConditionTrue
}

func condition(n *corev1.Node, t corev1.NodeConditionType) *corev1.NodeCondition {
	for i := range n.Status.Conditions {
		if n.Status.Conditions[i].Type == t {
			return &n.Status.Conditions[i]
		}
	}
	return nil
}

// stamp is RFC 3339 with milliseconds (time.RFC3339 parses it back): a deadline of seconds
// must not lose most of one to truncation.
func stamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z07:00") }

// RunAll is the in-cluster orchestrator: it runs (Run) every pool's rollout that is not final,
// each under its pool's Lease, until ctx ends. Several replicas may run RunAll: each pool's
// Lease lets one of them act.
func (o *Orchestrator) RunAll(ctx context.Context) error {
	var mu sync.Mutex
	var wg sync.WaitGroup
	defer wg.Wait()
	running := map[string]bool{}
	tick := time.NewTicker(max(o.Timing.Tick, time.Second))
	defer tick.Stop()
	for {
		list, err := o.Client.CoreV1().ConfigMaps(o.Namespace).List(ctx, metav1.ListOptions{LabelSelector: labelRollout})
		if err != nil {
			o.log().Warn("list rollouts", "err", err)
		}
		if list != nil {
			for _, cm := range list.Items {
				rec, err := decodeRecord(&cm)
				if err != nil {
					o.log().Warn("rollout", "configmap", cm.Name, "err", err)
					continue
				}
				pool := rec.Spec.Pool
				mu.Lock()
				busy := running[pool]
				if !busy && !rec.State.Final() {
					running[pool] = true
					wg.Add(1)
					go func() {
						defer wg.Done()
						r, err := o.Run(ctx, pool)
						if err != nil && ctx.Err() == nil {
							o.log().Warn("rollout", "pool", pool, "err", err)
						} else if r != nil {
							o.log().Info("rollout done", "pool", pool, "state", r.State, "reason", r.Reason)
						}
						mu.Lock()
						delete(running, pool)
						mu.Unlock()
					}()
				}
				mu.Unlock()
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}
