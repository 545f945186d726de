package upgrade

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kubewin/kubewin/internal/rollout/api"
	"github.com/kubewin/kubewin/internal/testenv"
)

// The contract on a real kube-apiserver with the Node authorizer and NodeRestriction, the
// node service acting with a node's identity (system:node:<name> in system:nodes) on the
// modelled Windows node.
func TestWatcherAnswersOnItsNode(t *testing.T) {
	cp := testenv.StartControlPlane(t, testenv.WithAPIServerArgs("--authorization-mode=Node", "--enable-admission-plugins=NodeRestriction"))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	admin := cp.Clientset(t)
	for _, name := range []string{"win-1", "win-2"} {
		if _, err := admin.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	nodeCfg := rest.CopyConfig(cp.Config)
	nodeCfg.Impersonate = rest.ImpersonationConfig{UserName: "system:node:win-1", Groups: []string{"system:nodes", "system:authenticated"}}
	nodeClient := kubernetes.NewForConfigOrDie(nodeCfg)

	n := newWinNode(t)
	w := NewWatcher(nodeClient, "win-1", n.engine())
	var checks int
	w.FlowCheck = func(context.Context) (string, error) { checks++; return "", nil }

	// Nothing asked: nothing done.
	if err := w.Step(ctx); err != nil {
		t.Fatal(err)
	}
	rev := n.revision("r2", "v2", nil, "")
	orchestrate := func(id string, a api.Action) {
		t.Helper()
		target, err := api.EncodeRevision(rev)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{
			api.AnnotationTarget: target, api.AnnotationAction: string(a), api.AnnotationRequest: id}}})
		if _, err := admin.CoreV1().Nodes().Patch(ctx, "win-1", types.MergePatchType, body, metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	state := func() api.NodeState {
		t.Helper()
		node, err := admin.CoreV1().Nodes().Get(ctx, "win-1", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return api.ReadNodeState(node.Annotations)
	}

	orchestrate("req-1", api.ActionApply)
	if err := w.Step(ctx); err != nil {
		t.Fatal(err)
	}
	st := state()
	if !st.Answered() || st.NodePhase != api.NodeApplied || st.Current != "r2" || st.Previous != "join" {
		t.Fatalf("after the apply: %+v", st)
	}
	fc, err := api.DecodeFlowCheck(st.FlowCheck)
	if err != nil || fc.Request != "req-1" || !fc.Passed {
		t.Fatalf("flow check %+v, %v", fc, err)
	}
	n.assertPrograms("v2")
	// Another pass: the request is answered, the flow check not run again.
	if err := w.Step(ctx); err != nil || checks != 1 {
		t.Fatalf("second pass: %v, %d flow checks", err, checks)
	}

	orchestrate("req-2", api.ActionRollback)
	if err := w.Step(ctx); err != nil {
		t.Fatal(err)
	}
	if st := state(); !st.Answered() || st.NodePhase != api.NodeRolledBack || st.Current != "" || st.Previous != "" {
		t.Fatalf("after the rollback: %+v", st)
	}
	n.assertPrograms("v1")

	// A target the node cannot decode is refused, nothing touched.
	body, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{
		api.AnnotationTarget: `{"name":"r3","future":1}`, api.AnnotationAction: "Apply", api.AnnotationRequest: "req-3"}}})
	if _, err := admin.CoreV1().Nodes().Patch(ctx, "win-1", types.MergePatchType, body, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := w.Step(ctx); err != nil {
		t.Fatal(err)
	}
	if st := state(); !st.Answered() || st.NodePhase != api.NodeFailed || !strings.Contains(st.NodeReason, "unknown field") {
		t.Fatalf("undecodable target: %+v", st)
	}
	n.assertPrograms("v1")

	// What the node's identity may not do (the contract's reasons): another Node's annotations
	// (Node authorizer), its own taints (NodeRestriction) — cordoning is the orchestrator's.
	other, _ := api.NodeReport("x", api.NodeApplied, "", "", "")
	if _, err := nodeClient.CoreV1().Nodes().Patch(ctx, "win-2", types.MergePatchType, other, metav1.PatchOptions{}); err == nil {
		t.Error("node win-1 patched Node win-2")
	}
	taint := []byte(`{"spec":{"taints":[{"key":"x","effect":"NoSchedule"}]}}`)
	if _, err := nodeClient.CoreV1().Nodes().Patch(ctx, "win-1", types.MergePatchType, taint, metav1.PatchOptions{}); err == nil || !strings.Contains(err.Error(), "taints") {
		t.Errorf("node tainted itself: %v", err)
	}
}
