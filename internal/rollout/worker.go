package rollout

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubewin/kubewin/internal/nodestatus"
	"github.com/kubewin/kubewin/internal/rollout/api"
)

// nodeAnnotations are orchestrator-owned annotations to set ("" removes nothing: it sets the
// empty string, which reads as absent).
type nodeAnnotations map[string]string

// patchNode sets orchestrator-owned annotations (and spec.unschedulable when given) in one JSON
// merge patch: the node service's keys are left as they are.
func (o *Orchestrator) patchNode(ctx context.Context, node string, unschedulable *bool, ann nodeAnnotations) error {
	body := map[string]any{"metadata": map[string]any{"annotations": map[string]string(ann)}}
	if unschedulable != nil {
		body["spec"] = map[string]any{"unschedulable": *unschedulable}
	}
	b, err := json.Marshal(body)
	if err != nil {
		return err
	}
	if _, err := o.Client.CoreV1().Nodes().Patch(ctx, node, types.MergePatchType, b, metav1.PatchOptions{}); err != nil {
		return fmt.Errorf("patch Node %s: %w", node, err)
	}
	return nil
}

// EventSource is the component name on the rollout's Events.
const EventSource = "kubewin-rollout"

// Event reasons on Nodes.
const (
	ReasonGateFailed  = "RolloutGateFailed"
	ReasonApplyFailed = "RolloutApplyFailed"
	ReasonRolledBack  = "RolloutRolledBack"
	ReasonRollbackBad = "RolloutRollbackFailed"
	ReasonUpgraded    = "RolloutSucceeded"
	ReasonDrainFailed = "RolloutDrainFailed"
	ReasonDrained     = "RolloutDrained"
)

// event records an Event about a Node where `kubectl describe node` shows it: in "default",
// naming the node with its name as UID, as the kubelet's and the node service's do
// (internal/nodestatus).
func (o *Orchestrator) event(ctx context.Context, node, typ, reason, msg string) {
	t := metav1.NewTime(time.Now())
	ev := &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{GenerateName: node + ".kubewin-rollout-", Namespace: metav1.NamespaceDefault},
		InvolvedObject: corev1.ObjectReference{Kind: "Node", Name: node, UID: types.UID(node), APIVersion: "v1"},
		Reason:         reason, Message: msg, Type: typ,
		Source:         corev1.EventSource{Component: EventSource},
		FirstTimestamp: t, LastTimestamp: t, Count: 1,
	}
	if _, err := o.Client.CoreV1().Events(metav1.NamespaceDefault).Create(ctx, ev, metav1.CreateOptions{}); err != nil {
		// The rollout's state and the node's annotations say the same; an Event is a copy.
		o.log().Warn("record event", "node", node, "reason", reason, "err", err)
	}
}

// ConditionType is the Node condition the orchestrator sets when a node's rollout ends: True
// (reason RolloutSucceeded) on the new revision, False (RolloutRolledBack, RolloutRollbackFailed)
// with why when the rollout halted there — where `kubectl describe node` and `kubewin status`
// show it beside the kubelet's and the node service's conditions. The kubelet keeps conditions
// it does not own (k8s.io/kubernetes v1.37.1 pkg/kubelet/kubelet_node_status.go updates its own
// types in place; node-problem-detector's conditions live the same way).
const ConditionType = "KubewinRollout"

// condition sets ConditionType on the node (a strategic merge patch of status.conditions,
// merged by type). Like an Event it is a copy of what the annotations say: a failure is logged.
func (o *Orchestrator) condition(ctx context.Context, node string, ok bool, reason, msg string) {
	status := corev1.ConditionFalse
	if ok {
		status = corev1.ConditionTrue
	}
	now := metav1.NewTime(time.Now().UTC().Truncate(time.Second))
	patch, err := json.Marshal(map[string]any{"status": map[string]any{"conditions": []corev1.NodeCondition{{
		Type: ConditionType, Status: status, Reason: reason, Message: msg, LastHeartbeatTime: now, LastTransitionTime: now,
	}}}})
	if err == nil {
		_, err = o.Client.CoreV1().Nodes().PatchStatus(ctx, node, patch)
	}
	if err != nil {
		o.log().Warn("set node condition", "node", node, "reason", reason, "err", err)
	}
}

// worker drives one node from the phase it is in to a terminal one.
type worker struct {
	o      *Orchestrator
	rec    *Record
	probes []Probe
	node   string
	st     store
}

func (w *worker) requestID(a api.Action) string {
	// One apply and at most one rollback per node and rollout: the IDs are fixed, so an
	// orchestrator that writes a request again after a restart does not make a new one.
	return w.rec.ID + "/" + strings.ToLower(string(a))
}

func (w *worker) get(ctx context.Context) (*corev1.Node, api.NodeState, error) {
	n, err := w.o.Client.CoreV1().Nodes().Get(ctx, w.node, metav1.GetOptions{})
	if err != nil {
		return nil, api.NodeState{}, fmt.Errorf("read Node %s: %w", w.node, err)
	}
	return n, api.ReadNodeState(n.Annotations), nil
}

func (w *worker) phase(ctx context.Context, p api.Phase, reason string, extra nodeAnnotations, unschedulable *bool) error {
	ann := nodeAnnotations{api.AnnotationPhase: string(p), api.AnnotationReason: reason, api.AnnotationPhaseSince: stamp(time.Now())}
	for k, v := range extra {
		ann[k] = v
	}
	w.o.log().Info("node phase", "node", w.node, "phase", p, "reason", reason)
	return w.o.patchNode(ctx, w.node, unschedulable, ann)
}

// deadline of the current phase: from its phase-since, so a resumed orchestrator keeps it.
func deadline(s api.NodeState, d time.Duration) time.Time {
	since, err := time.Parse(time.RFC3339, s.PhaseSince)
	if err != nil {
		since = time.Now()
	}
	return since.Add(d)
}

// run advances the node until a terminal phase; an API error returns (the drive loop starts
// the worker again from the phase on the Node).
func (w *worker) run(ctx context.Context) error {
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		n, s, err := w.get(ctx)
		if err != nil {
			return err
		}
		if s.Rollout != w.rec.ID {
			return fmt.Errorf("node %s belongs to rollout %q now, not %q", w.node, s.Rollout, w.rec.ID)
		}
		switch s.Phase {
		case api.PhaseCordoned:
			if !n.Spec.Unschedulable {
				cordon := true
				if err := w.o.patchNode(ctx, w.node, &cordon, nil); err != nil {
					return err
				}
			}
			if err := w.phase(ctx, api.PhaseDraining, "", nil, nil); err != nil {
				return err
			}
		case api.PhaseDraining:
			if err := w.drain(ctx, s); err != nil {
				return err
			}
		case api.PhaseApplying:
			if err := w.waitApplied(ctx, s); err != nil {
				return err
			}
		case api.PhaseVerifying:
			if err := w.verify(ctx, s); err != nil {
				return err
			}
		case api.PhaseRollingBack:
			if err := w.waitRolledBack(ctx, s); err != nil {
				return err
			}
		case api.PhaseSucceeded, api.PhaseRolledBack, api.PhaseFailed:
			return nil
		default:
			return fmt.Errorf("node %s: unknown phase %q", w.node, s.Phase)
		}
	}
}

func (w *worker) drain(ctx context.Context, s api.NodeState) error {
	dctx, cancel := context.WithDeadline(ctx, deadline(s, w.o.Timing.DrainTimeout))
	defer cancel()
	began := time.Now()
	res, err := drainer{client: w.o.Client, retry: w.o.Timing.EvictRetry, poll: w.o.Timing.Tick}.drain(dctx, w.node)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		// The node was not changed: it goes back into service and the pool halts with why.
		reason := fmt.Sprintf("drain failed after %s: %v", time.Since(began).Round(time.Second), err)
		w.o.event(ctx, w.node, corev1.EventTypeWarning, ReasonDrainFailed, reason)
		uncordon := false
		if err := w.phase(ctx, api.PhasePending, reason, nil, &uncordon); err != nil {
			return err
		}
		_, err := w.st.update(ctx, w.rec.Spec.Pool, func(r *Record) (bool, error) {
			if r.State.Final() {
				return false, nil
			}
			r.State, r.Reason = StateHalted, "node "+w.node+": "+reason+" (the node is uncordoned and unchanged)"
			return true, nil
		})
		return err
	}
	took := time.Since(began).Round(time.Millisecond)
	w.o.log().Info("drained", "node", w.node, "evicted", len(res.Evicted), "refused429", res.Refused, "left", len(res.Left), "took", took)
	w.o.event(ctx, w.node, corev1.EventTypeNormal, ReasonDrained, fmt.Sprintf("drained in %s: %d pods evicted, %d evictions refused by a PodDisruptionBudget and retried, %d left (%s)",
		took, len(res.Evicted), res.Refused, len(res.Left), strings.Join(res.Left, ", ")))
	target, err := api.EncodeRevision(&w.rec.Spec.Revision)
	if err != nil {
		return err
	}
	return w.phase(ctx, api.PhaseApplying, fmt.Sprintf("drained (%d evicted, %d refused by a budget and retried)", len(res.Evicted), res.Refused), nodeAnnotations{
		api.AnnotationTarget: target, api.AnnotationAction: string(api.ActionApply), api.AnnotationRequest: w.requestID(api.ActionApply),
	}, nil)
}

// poll calls f every Tick until it says done or the deadline passes (then timedOut is true).
func (w *worker) poll(ctx context.Context, until time.Time, f func() (bool, error)) (timedOut bool, err error) {
	for {
		done, err := f()
		if err != nil || done {
			return false, err
		}
		if time.Now().After(until) {
			return true, nil
		}
		select {
		case <-ctx.Done():
			return false, ctx.Err()
		case <-time.After(w.o.Timing.Tick):
		}
	}
}

func (w *worker) waitApplied(ctx context.Context, s0 api.NodeState) error {
	var s api.NodeState
	timedOut, err := w.poll(ctx, deadline(s0, w.o.Timing.ApplyTimeout), func() (bool, error) {
		var err error
		_, s, err = w.get(ctx)
		return s.Answered() && (s.NodePhase == api.NodeApplied || s.NodePhase == api.NodeFailed), err
	})
	switch {
	case err != nil:
		return err
	case timedOut:
		last := string(s.NodePhase)
		if !s.Answered() {
			last = "no answer to the request"
		}
		return w.rollback(ctx, ReasonApplyFailed, fmt.Sprintf("the node service did not report Applied within %s (last: %s %s)", w.o.Timing.ApplyTimeout, last, s.NodeReason))
	case s.NodePhase == api.NodeFailed:
		return w.rollback(ctx, ReasonApplyFailed, "the node service failed to apply "+w.rec.Spec.Revision.Name+": "+s.NodeReason)
	}
	return w.phase(ctx, api.PhaseVerifying, "", nil, nil)
}

// rollback asks the node service to go back to its previous revision.
func (w *worker) rollback(ctx context.Context, eventReason, why string) error {
	w.o.event(ctx, w.node, corev1.EventTypeWarning, eventReason, why+"; rolling back")
	return w.phase(ctx, api.PhaseRollingBack, why, nodeAnnotations{
		api.AnnotationAction: string(api.ActionRollback), api.AnnotationRequest: w.requestID(api.ActionRollback),
	}, nil)
}

func (w *worker) waitRolledBack(ctx context.Context, s0 api.NodeState) error {
	var s api.NodeState
	var n *corev1.Node
	timedOut, err := w.poll(ctx, deadline(s0, w.o.Timing.RollbackTimeout), func() (bool, error) {
		var err error
		n, s, err = w.get(ctx)
		if err != nil {
			return false, err
		}
		return s.Answered() && (s.NodePhase == api.NodeFailed || (s.NodePhase == api.NodeRolledBack && nodeReady(n))), nil
	})
	why := s0.Reason
	switch {
	case err != nil:
		return err
	case timedOut, s.NodePhase == api.NodeFailed:
		what := fmt.Sprintf("the rollback did not finish within %s (node %s, Ready %t)", w.o.Timing.RollbackTimeout, s.NodePhase, nodeReady(n))
		if s.Answered() && s.NodePhase == api.NodeFailed {
			what = "the rollback failed: " + s.NodeReason
		}
		reason := why + "; " + what + "; the node needs a person"
		w.o.event(ctx, w.node, corev1.EventTypeWarning, ReasonRollbackBad, reason)
		w.o.condition(ctx, w.node, false, ReasonRollbackBad, reason)
		return w.phase(ctx, api.PhaseFailed, reason, nil, nil)
	}
	reason := fmt.Sprintf("%s; rolled back to %s and Ready; left cordoned, the rollout halted", why, orNone(s.Current))
	w.o.event(ctx, w.node, corev1.EventTypeWarning, ReasonRolledBack, reason)
	w.o.condition(ctx, w.node, false, ReasonRolledBack, reason)
	return w.phase(ctx, api.PhaseRolledBack, reason, nil, nil)
}

func orNone(s string) string {
	if s == "" {
		return "its previous revision"
	}
	return s
}

// verify runs the gates until they all pass (then uncordons) or one fails for good or the gate
// timeout passes (then rolls back).
func (w *worker) verify(ctx context.Context, s0 api.NodeState) error {
	runner := probeRunner{client: w.o.Client, namespace: w.o.Namespace, rolloutID: w.rec.ID}
	var probePods []string
	for i, p := range w.probes {
		if p.Kind == "http" {
			probePods = append(probePods, probePodName(w.node, w.requestID(api.ActionApply), i))
		}
	}
	defer func() {
		if err := runner.cleanup(context.WithoutCancel(ctx), probePods); err != nil {
			w.o.log().Warn("probe cleanup", "node", w.node, "err", err)
		}
	}()
	var why string
	var final bool
	timedOut, err := w.poll(ctx, deadline(s0, w.o.Timing.GateTimeout), func() (bool, error) {
		n, s, err := w.get(ctx)
		if err != nil {
			return false, err
		}
		pass, reason, definitive, err := w.gates(ctx, runner, n, s)
		why, final = reason, definitive
		return pass || definitive, err
	})
	switch {
	case err != nil:
		return err
	case timedOut || final:
		if timedOut {
			why = fmt.Sprintf("gates not passed within %s: %s", w.o.Timing.GateTimeout, why)
		}
		return w.rollback(ctx, ReasonGateFailed, why)
	}
	w.o.event(ctx, w.node, corev1.EventTypeNormal, ReasonUpgraded, "runs "+w.rec.Spec.Revision.Name+"; gates passed; uncordoned")
	w.o.condition(ctx, w.node, true, ReasonUpgraded, "runs "+w.rec.Spec.Revision.Name+" (rollout "+w.rec.ID+"); gates passed")
	uncordon := false
	return w.phase(ctx, api.PhaseSucceeded, "", nil, &uncordon)
}

func probePodName(node, request string, i int) string {
	h := fnv.New64a()
	fmt.Fprintf(h, "%s\x00%s\x00%d", node, request, i)
	return fmt.Sprintf("kubewin-probe-%016x", h.Sum64())
}

// gates checks every gate once, in order: Node Ready (for Settle), the node service's
// condition, its flow check for this request, the user's probes. definitive marks a failure
// that waiting cannot fix (a flow check or an http probe that ran and failed).
func (w *worker) gates(ctx context.Context, runner probeRunner, n *corev1.Node, s api.NodeState) (pass bool, why string, definitive bool, err error) {
	ready := condition(n, corev1.NodeReady)
	switch {
	case ready == nil:
		return false, "gate Ready: the Node has no Ready condition", false, nil
	case ready.Status != corev1.ConditionTrue:
		return false, fmt.Sprintf("gate Ready: Ready is %s (%s: %s)", ready.Status, ready.Reason, ready.Message), false, nil
	case time.Since(ready.LastTransitionTime.Time) < w.o.Timing.Settle:
		return false, fmt.Sprintf("gate Ready: Ready only since %s (settle %s)", ready.LastTransitionTime.UTC().Format(time.RFC3339), w.o.Timing.Settle), false, nil
	}
	// The node service's own health, as `kubewin status` reads it (internal/nodestatus).
	svc := condition(n, nodestatus.ConditionType)
	switch {
	case svc == nil:
		return false, "gate node service: the Node has no " + nodestatus.ConditionType + " condition (is the kubewin node service running?)", false, nil
	case svc.Status != corev1.ConditionTrue || svc.Reason == nodestatus.ReasonFlowCheckFailing:
		return false, fmt.Sprintf("gate node service: %s is %s (%s: %s)", nodestatus.ConditionType, svc.Status, svc.Reason, svc.Message), false, nil
	}
	if s.FlowCheck == "" {
		return false, "gate flow check: the node service has not reported its flow check yet", false, nil
	}
	fc, err := api.DecodeFlowCheck(s.FlowCheck)
	switch {
	case err != nil:
		return false, "gate flow check: " + err.Error(), false, nil
	case fc.Request != s.Request:
		return false, "gate flow check: the node service has not reported its flow check for this request yet", false, nil
	case !fc.Passed:
		return false, "gate flow check: " + fc.Failed, true, nil
	}
	for i, p := range w.probes {
		var ok, final bool
		var reason string
		switch p.Kind {
		case "ready":
			ok, reason, err = runner.ready(ctx, p, w.node)
		case "http":
			ok, reason, final, err = runner.http(ctx, p, n, probePodName(w.node, w.requestID(api.ActionApply), i))
		}
		if err != nil {
			return false, "", false, err
		}
		if !ok {
			return false, "gate probe " + reason, final, nil
		}
	}
	return true, "", false, nil
}
