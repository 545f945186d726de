package rollout

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kubewin/kubewin/internal/rollout/api"
)

// Status is a pool's rollout as `kubewin rollout status` shows it.
type Status struct {
	Pool           string `json:"pool"`
	Revision       string `json:"revision"`
	ID             string `json:"id"`
	State          State  `json:"state"`
	Reason         string `json:"reason,omitempty"`
	MaxUnavailable int    `json:"maxUnavailable"`
	Canary         int    `json:"canary"`
	Started        string `json:"started"`
	// Holder is the orchestrator holding the pool's Lease ("" when none is running: the
	// rollout then waits for one — `rollout start` without --detach, or the in-cluster one).
	Holder string       `json:"holder,omitempty"`
	Nodes  []NodeStatus `json:"nodes"`
}

// NodeStatus is one node of the pool.
type NodeStatus struct {
	Node          string    `json:"node"`
	Phase         api.Phase `json:"phase"`
	Reason        string    `json:"reason,omitempty"`
	NodePhase     string    `json:"nodePhase,omitempty"`
	NodeReason    string    `json:"nodeReason,omitempty"`
	Current       string    `json:"current,omitempty"`
	Previous      string    `json:"previous,omitempty"`
	Ready         bool      `json:"ready"`
	Unschedulable bool      `json:"unschedulable"`
	// Seconds is how long the node has taken so far (from its cordon to its last phase
	// change when it is done).
	Seconds float64 `json:"seconds,omitempty"`
}

// OK is what `rollout status` exits 0 for: the rollout Succeeded, or runs (or is paused)
// without a node that rolled back or failed.
func (s *Status) OK() bool {
	return s.State == StateSucceeded || s.State == StateRunning || s.State == StatePaused
}

// ReadStatus reads a pool's rollout from the cluster.
func ReadStatus(ctx context.Context, c kubernetes.Interface, namespace, pool string) (*Status, error) {
	rec, err := store{c, namespace}.get(ctx, pool)
	if err != nil {
		return nil, err
	}
	nodes, err := poolNodes(ctx, c, pool)
	if err != nil {
		return nil, err
	}
	st := &Status{
		Pool: pool, Revision: rec.Spec.Revision.Name, ID: rec.ID, State: rec.State, Reason: rec.Reason,
		MaxUnavailable: rec.Spec.MaxUnavailable, Canary: rec.Spec.Canary, Started: stamp(rec.Started),
		Nodes: []NodeStatus{},
	}
	lease, err := c.CoordinationV1().Leases(namespace).Get(ctx, LeaseName(pool), metav1.GetOptions{})
	switch {
	case err == nil && lease.Spec.HolderIdentity != nil && lease.Spec.RenewTime != nil && lease.Spec.LeaseDurationSeconds != nil:
		if time.Since(lease.Spec.RenewTime.Time) < time.Duration(*lease.Spec.LeaseDurationSeconds)*time.Second {
			st.Holder = *lease.Spec.HolderIdentity
		}
	case err != nil && !apierrors.IsNotFound(err):
		return nil, fmt.Errorf("read the Lease of pool %s: %w", pool, err)
	}
	for _, v := range classify(rec, nodes) {
		ns := NodeStatus{
			Node: v.node.Name, Ready: v.ready, Unschedulable: v.node.Spec.Unschedulable,
			Current: v.state.Current, Previous: v.state.Previous,
		}
		switch {
		case v.in:
			ns.Phase, ns.Reason = v.state.Phase, v.state.Reason
			if v.state.Observed == v.state.Request {
				ns.NodePhase, ns.NodeReason = string(v.state.NodePhase), v.state.NodeReason
			}
			if from, err := time.Parse(time.RFC3339, v.state.Started); err == nil {
				to := time.Now()
				if terminal(v.state.Phase) {
					if t, err := time.Parse(time.RFC3339, v.state.PhaseSince); err == nil {
						to = t
					}
				}
				ns.Seconds = to.Sub(from).Seconds()
			}
		case v.skip != "":
			ns.Phase, ns.Reason = "Skipped", v.skip
		default:
			ns.Phase = api.PhasePending
			if v.state.Rollout == rec.ID {
				ns.Reason = v.state.Reason // a drain that failed
			}
		}
		st.Nodes = append(st.Nodes, ns)
	}
	return st, nil
}
