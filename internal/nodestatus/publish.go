package nodestatus

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/kubewin/kubewin/internal/noderun"
	"github.com/kubewin/kubewin/internal/rollout/api"
)

// maxMessage bounds the condition message (the API accepts more; a Node is read often).
const maxMessage = 2048

// Publisher puts Health on the Node: the condition, and an Event when it changes.
type Publisher struct {
	Client kubernetes.Interface
	Node   string
	// Component names the Events' source.
	Component string

	last *Health
}

// Publish patches the condition when the assessment changed (and refreshes its heartbeat
// otherwise), and records an Event for every transition.
func (p *Publisher) Publish(ctx context.Context, h Health) error {
	msg := h.Message
	if len(msg) > maxMessage {
		msg = msg[:maxMessage-3] + "..."
	}
	status := corev1.ConditionFalse
	if h.Healthy {
		status = corev1.ConditionTrue
	}
	t := metav1.NewTime(now())
	cond := corev1.NodeCondition{Type: ConditionType, Status: status, Reason: h.Reason, Message: msg, LastHeartbeatTime: t, LastTransitionTime: t}
	if p.last == nil {
		// After a restart of the node service the condition on the Node is the last one
		// published: an unchanged assessment keeps its transition time and records no Event.
		if n, err := p.Client.CoreV1().Nodes().Get(ctx, p.Node, metav1.GetOptions{}); err == nil {
			for _, c := range n.Status.Conditions {
				if c.Type == ConditionType {
					p.last = &Health{Healthy: c.Status == corev1.ConditionTrue, Reason: c.Reason, Message: c.Message}
				}
			}
		}
	}
	changed := p.last == nil || !p.last.Equal(Health{Healthy: h.Healthy, Reason: h.Reason, Message: msg})
	if !changed {
		// Keep the transition time the API has.
		n, err := p.Client.CoreV1().Nodes().Get(ctx, p.Node, metav1.GetOptions{})
		if err != nil {
			return fmt.Errorf("read Node %s: %w", p.Node, err)
		}
		for _, c := range n.Status.Conditions {
			if c.Type == ConditionType {
				cond.LastTransitionTime = c.LastTransitionTime
			}
		}
	}
	// A strategic merge patch merges conditions by type, leaving the kubelet's own alone.
	patch, err := json.Marshal(map[string]any{"status": map[string]any{"conditions": []corev1.NodeCondition{cond}}})
	if err != nil {
		return err
	}
	if _, err := p.Client.CoreV1().Nodes().Patch(ctx, p.Node, types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "status"); err != nil {
		return fmt.Errorf("publish the %s condition of Node %s: %w", ConditionType, p.Node, err)
	}
	if changed {
		if err := p.event(ctx, h, msg); err != nil {
			return err
		}
		p.last = &Health{Healthy: h.Healthy, Reason: h.Reason, Message: msg}
	}
	return nil
}

func (p *Publisher) event(ctx context.Context, h Health, msg string) error {
	typ := corev1.EventTypeNormal
	if !h.Healthy {
		typ = corev1.EventTypeWarning
	}
	t := metav1.NewTime(now())
	ev := &corev1.Event{
		ObjectMeta: metav1.ObjectMeta{GenerateName: p.Node + ".kubewin-", Namespace: metav1.NamespaceDefault},
		// Events about a Node name it with an empty namespace and its name as UID, as the
		// kubelet's own do.
		InvolvedObject: corev1.ObjectReference{Kind: "Node", Name: p.Node, UID: types.UID(p.Node), APIVersion: "v1"},
		Reason:         h.Reason,
		Message:        msg,
		Type:           typ,
		Source:         corev1.EventSource{Component: p.Component, Host: p.Node},
		FirstTimestamp: t, LastTimestamp: t, Count: 1,
	}
	if _, err := p.Client.CoreV1().Events(metav1.NamespaceDefault).Create(ctx, ev, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("record an Event for Node %s: %w", p.Node, err)
	}
	return nil
}

// NodeHealth is one node as `kubewin status` shows it.
type NodeHealth struct {
	Node  string `json:"node"`
	Ready bool   `json:"ready"`
	// Managed is false for nodes without the kubewin condition (not joined by kubewin).
	Managed bool   `json:"managed"`
	Healthy bool   `json:"healthy"`
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
	// Since is the condition's last transition.
	Since metav1.Time `json:"since,omitempty"`
	// ReadyMessage is the kubelet's Ready condition message when not Ready.
	ReadyMessage string `json:"readyMessage,omitempty"`
	// LastRepair is the newest Repaired Event of the node service (what it put back, when).
	LastRepair   string       `json:"lastRepair,omitempty"`
	LastRepairAt *metav1.Time `json:"lastRepairAt,omitempty"`
	// Rollout is the node's `kubewin rollout` state; nil when no rollout touched it.
	Rollout *RolloutState `json:"rollout,omitempty"`
}

// RolloutState is where `kubewin rollout` left a node, from its rollout.kubewin.io/
// annotations (internal/rollout/api: the orchestrator's phase and reason, the node service's
// answer and the revisions it runs and keeps).
type RolloutState struct {
	Rollout    string `json:"rollout,omitempty"`
	Phase      string `json:"phase,omitempty"`
	Reason     string `json:"reason,omitempty"`
	NodePhase  string `json:"nodePhase,omitempty"`
	NodeReason string `json:"nodeReason,omitempty"`
	Current    string `json:"current,omitempty"`
	Previous   string `json:"previous,omitempty"`
}

// Halted says the rollout stopped at this node: a failed gate rolled it back (it runs the
// previous revision, the other nodes were not touched), or neither the revision nor the
// rollback came up. Either way a person must read Reason before the pool moves on.
func (r *RolloutState) Halted() bool {
	return r != nil && (r.Phase == string(api.PhaseRolledBack) || r.Phase == string(api.PhaseFailed))
}

func rolloutState(a map[string]string) *RolloutState {
	r := &RolloutState{
		Rollout: a[api.AnnotationRollout], Phase: a[api.AnnotationPhase], Reason: a[api.AnnotationReason],
		NodePhase: a[api.AnnotationNodePhase], NodeReason: a[api.AnnotationNodeReason],
		Current: a[api.AnnotationCurrent], Previous: a[api.AnnotationPrevious],
	}
	if *r == (RolloutState{}) {
		return nil
	}
	return r
}

// OK is what `kubewin status` exits 0 for: managed nodes healthy and Ready, and no rollout
// halted on one.
func (n NodeHealth) OK() bool { return (!n.Managed || (n.Healthy && n.Ready)) && !n.Rollout.Halted() }

// List reads every Node's kubewin condition, sorted by node name.
func List(ctx context.Context, c kubernetes.Interface) ([]NodeHealth, error) {
	nodes, err := c.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list Nodes: %w", err)
	}
	out := make([]NodeHealth, 0, len(nodes.Items))
	for _, n := range nodes.Items {
		h := NodeHealth{Node: n.Name, Rollout: rolloutState(n.Annotations)}
		for _, cond := range n.Status.Conditions {
			switch cond.Type {
			case corev1.NodeReady:
				h.Ready = cond.Status == corev1.ConditionTrue
				if !h.Ready {
					h.ReadyMessage = cond.Message
				}
			case ConditionType:
				h.Managed = true
				h.Healthy = cond.Status == corev1.ConditionTrue
				h.Reason, h.Message, h.Since = cond.Reason, cond.Message, cond.LastTransitionTime
			}
		}
		out = append(out, h)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Node < out[j].Node })
	// Events about Nodes live in "default" (as the kubelet's do); one list for all nodes.
	evs, err := c.CoreV1().Events(metav1.NamespaceDefault).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.kind=Node,reason=" + ReasonRepaired})
	if err != nil {
		// The nodes' health stands without their last repair (a role that may not read Events).
		return out, nil
	}
	for i := range out {
		for _, e := range evs.Items {
			if e.InvolvedObject.Name != out[i].Node {
				continue
			}
			if out[i].LastRepairAt == nil || e.LastTimestamp.After(out[i].LastRepairAt.Time) {
				t := e.LastTimestamp
				out[i].LastRepair, out[i].LastRepairAt = e.Message, &t
			}
		}
	}
	return out, nil
}

// Loop assesses and publishes every Interval until its context ends.
type Loop struct {
	Assessor *Assessor
	// Status is the supervisor's current status.
	Status func() noderun.Status
	// Join is the join's progress (nil when unknown).
	Join func() *JoinProgress
	// Publisher returns the publisher once the node has its credential and name; until then
	// it returns an error and the loop only logs the assessment.
	Publisher func() (*Publisher, error)
	// Repair, when set, runs before every assessment and returns what it put back (the node's
	// pod network after a reboot, say); each repair is logged and recorded as an Event.
	Repair func(ctx context.Context) ([]string, error)
	// Check, when set, runs the node's live flow checks every CheckInterval (the first one
	// CheckInterval after the start, once the node had time to come up) and returns the failed
	// flows, "" when all passed; a failure makes a node whose services run unhealthy with
	// ReasonFlowCheckFailing until a later check passes.
	Check         func(ctx context.Context) (string, error)
	CheckInterval time.Duration
	Interval      time.Duration
	Log           *slog.Logger
}

// Run blocks until ctx ends. Failures to publish are logged and retried on the next tick: the
// node service must keep supervising while the API server is away.
func (l *Loop) Run(ctx context.Context) {
	if l.Interval <= 0 {
		l.Interval = 10 * time.Second
	}
	var pub *Publisher
	var last, flowFailure string
	tick := time.NewTicker(l.Interval)
	defer tick.Stop()
	nextCheck := time.Now().Add(l.CheckInterval)
	for {
		var repaired []string
		var repairErr error
		if l.Repair != nil {
			if repaired, repairErr = l.Repair(ctx); repairErr != nil {
				l.Log.Warn("repair", "err", repairErr)
			}
			for _, r := range repaired {
				l.Log.Info("repaired", "what", r)
			}
		}
		// After the repair, and at once when it put something back: a flow it fixed is not
		// reported failing until the next interval.
		if len(repaired) > 0 && l.Check != nil && flowFailure != "" {
			nextCheck = time.Now()
		}
		if l.Check != nil && l.CheckInterval > 0 && !time.Now().Before(nextCheck) {
			failed, err := l.Check(ctx)
			switch {
			case err != nil:
				// The check itself could not run (no plan yet, no probe): that says nothing
				// about the flows, and an earlier failure is not known to hold any more.
				l.Log.Warn("flow check", "err", err)
				flowFailure = ""
			case failed != flowFailure:
				l.Log.Info("flow check", "failed", failed)
				flowFailure = failed
			}
			nextCheck = time.Now().Add(l.CheckInterval)
		}
		var jp *JoinProgress
		if l.Join != nil {
			jp = l.Join()
		}
		h := l.Assessor.Assess(ctx, l.Status(), jp)
		var problem *Problem
		switch {
		case errors.As(repairErr, &problem):
			h = Health{Reason: problem.Reason, Message: problem.Error()}
		case h.Healthy && repairErr != nil && !errors.Is(repairErr, context.Canceled):
			// The services run, but what they need is not all there (a route that cannot be
			// added, an adapter that is gone): the node is not healthy, and this says why —
			// before a flow check that fails because of it.
			h = Health{Reason: ReasonRepairFailing, Message: repairErr.Error()}
		case h.Healthy && flowFailure != "":
			h = Health{Reason: ReasonFlowCheckFailing, Message: "live flow check failed: " + flowFailure}
		}
		if key := h.Reason + h.Message; key != last {
			last = key
			l.Log.Info("node health", "healthy", h.Healthy, "reason", h.Reason, "message", h.Message)
		}
		if pub == nil {
			if p, err := l.Publisher(); err == nil {
				pub = p
			}
		}
		if pub != nil {
			if err := pub.Publish(ctx, h); err != nil {
				l.Log.Warn("publish node health", "err", err)
			}
			if len(repaired) > 0 {
				if err := pub.event(ctx, Health{Healthy: true, Reason: ReasonRepaired}, "repaired: "+strings.Join(repaired, "; ")); err != nil {
					l.Log.Warn("publish repair", "err", err)
				}
			}
		}
		// A select with both ready picks either: a stopped loop must not make another pass
		// because a tick was already waiting (a test failed so under CPU load).
		if ctx.Err() != nil {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}
