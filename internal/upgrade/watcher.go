package upgrade

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/kubewin/kubewin/internal/rollout/api"
)

// Watcher is the node service's side of the rollout contract: it reads the request from its
// own Node's annotations and answers in the node-owned ones (internal/rollout/api), with the
// node's own credential. A kubelet credential may get and patch its own Node (the Node
// authorizer: k8s.io/kubernetes v1.37.1 plugin/pkg/auth/authorizer/node/node_authorizer.go) and,
// under NodeRestriction, change its annotations but not its taints, owner references, config
// source or labels under kubernetes.io/k8s.io outside the kubelet's set
// (plugin/pkg/admission/noderestriction/admission.go admitNode): annotations are the one place
// both sides may write, each only its own keys (a JSON merge patch of those keys).
type Watcher struct {
	Client kubernetes.Interface
	Node   string
	Engine *Engine
	// FlowCheck runs the node's live flow checks once after an Applied (the failed flows, ""
	// when all passed); nil publishes no flow check.
	FlowCheck func(ctx context.Context) (string, error)
	Log       *slog.Logger
}

// NewWatcher wires e's reports to node's annotations.
func NewWatcher(c kubernetes.Interface, node string, e *Engine) *Watcher {
	w := &Watcher{Client: c, Node: node, Engine: e, Log: e.Log}
	e.Report = w.report
	return w
}

// Step reads the Node and carries out (or goes on with) its request; an unfinished request is
// resumed even when the API server cannot be reached (a restart's last steps need no cluster).
func (w *Watcher) Step(ctx context.Context) error {
	node, err := w.Client.CoreV1().Nodes().Get(ctx, w.Node, metav1.GetOptions{})
	if err != nil {
		if _, rerr := w.Engine.Resume(ctx); rerr != nil {
			return errors.Join(fmt.Errorf("read Node %s: %w", w.Node, err), rerr)
		}
		return fmt.Errorf("read Node %s: %w", w.Node, err)
	}
	st := api.ReadNodeState(node.Annotations)
	if st.Request == "" {
		_, err := w.Engine.Resume(ctx)
		return err
	}
	req := Request{ID: st.Request, Action: st.Action}
	if st.Action != api.ActionApply && st.Action != api.ActionRollback {
		return w.refuse(ctx, st, fmt.Sprintf("unknown action %q (want %s or %s)", st.Action, api.ActionApply, api.ActionRollback))
	}
	if st.Target != "" {
		rev, err := api.DecodeRevision(st.Target)
		if err != nil {
			if st.Action == api.ActionApply {
				return w.refuse(ctx, st, err.Error())
			}
		} else {
			req.Target = rev
		}
	}
	s, err := w.Engine.Handle(ctx, req)
	if err == nil && s.Request == st.Request && s.Step == StepDone &&
		(st.Observed != s.Request || st.NodePhase != s.Phase || st.Current != s.Current || st.Previous != s.Previous) {
		// Answered before, but the Node does not show it (a report that failed, an object
		// restored from a backup): say it again.
		err = w.report(ctx, s)
	}
	if errors.Is(err, ErrBusy) {
		return nil // the earlier request is finished; this one next time
	}
	if err != nil {
		return err
	}
	if s.Request == st.Request && s.Phase == api.NodeApplied && w.FlowCheck != nil {
		return w.flowCheck(ctx, st)
	}
	return nil
}

// refuse answers a request the node cannot carry out, without touching anything.
func (w *Watcher) refuse(ctx context.Context, st api.NodeState, why string) error {
	if st.Observed == st.Request && st.NodePhase == api.NodeFailed {
		return nil
	}
	s, err := w.Engine.Load()
	if err != nil {
		return err
	}
	return w.patch(ctx, st.Request, api.NodeFailed, why, s.Current, s.Previous)
}

// flowCheck runs the flow checks once per Applied request and publishes the result.
func (w *Watcher) flowCheck(ctx context.Context, st api.NodeState) error {
	if st.FlowCheck != "" {
		if fc, err := api.DecodeFlowCheck(st.FlowCheck); err == nil && fc.Request == st.Request {
			return nil
		}
	}
	failed, err := w.FlowCheck(ctx)
	if err != nil {
		failed = "the flow check could not run: " + err.Error()
	}
	body, err := api.FlowCheckReport(api.FlowCheck{Request: st.Request, Passed: failed == "", Failed: failed})
	if err != nil {
		return err
	}
	if _, err := w.Client.CoreV1().Nodes().Patch(ctx, w.Node, types.MergePatchType, body, metav1.PatchOptions{}); err != nil {
		return fmt.Errorf("publish the flow check on Node %s: %w", w.Node, err)
	}
	return nil
}

// report is the Engine's Report: the state's phase on the Node.
func (w *Watcher) report(ctx context.Context, s State) error {
	if s.Request == "" {
		return nil
	}
	return w.patch(ctx, s.Request, s.Phase, s.Reason, s.Current, s.Previous)
}

func (w *Watcher) patch(ctx context.Context, request string, phase api.NodePhase, reason, current, previous string) error {
	body, err := api.NodeReport(request, phase, reason, current, previous)
	if err != nil {
		return err
	}
	if _, err := w.Client.CoreV1().Nodes().Patch(ctx, w.Node, types.MergePatchType, body, metav1.PatchOptions{}); err != nil {
		return fmt.Errorf("report %s on Node %s: %w", phase, w.Node, err)
	}
	return nil
}
