//go:build linux

package gateway_test

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubewin/kubewin/internal/gateway"
	"github.com/kubewin/kubewin/internal/plan"
	"github.com/kubewin/kubewin/pkg/api/v1alpha1"
)

// TestGroupConfigFromPlan: the controller's configuration comes from the planner's output for
// the example cluster, and the controller's layout for the plan's Windows nodes equals the
// planner's own — one layout for `kubewin plan` and for the controller.
func TestGroupConfigFromPlan(t *testing.T) {
	c, _, err := v1alpha1.ParseExample()
	if err != nil {
		t.Fatal(err)
	}
	if errs := v1alpha1.Validate(c); len(errs) > 0 {
		t.Fatal(errs)
	}
	p, err := plan.New(c)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.GatewayGroups) == 0 {
		t.Fatal("example plan has no gateway group")
	}
	want := p.GatewayGroups[0]
	cfg, err := gateway.GroupConfigFromPlan(*p, want.Name)
	if err != nil {
		t.Fatal(err)
	}
	var nodes []*corev1.Node
	for _, w := range want.WindowsNodes() {
		nodes = append(nodes, windowsNode(w.Name, w.PodCIDR))
	}
	got, skipped, err := gateway.Layout(cfg, nodes)
	if err != nil || len(skipped) > 0 {
		t.Fatalf("layout: %v, skipped %v", err, skipped)
	}
	if strings.Join(got.VIPs, ",") != strings.Join(want.VIPs, ",") || len(got.Instances) != len(want.Instances) {
		t.Errorf("controller layout %v / %d instances, planner %v / %d", got.VIPs, len(got.Instances), want.VIPs, len(want.Instances))
	}
	for i := range got.Instances {
		if got.Instances[i].VRID != want.Instances[i].VRID || got.Instances[i].RouterVIP != want.Instances[i].RouterVIP {
			t.Errorf("instance %d: controller %+v, planner %+v", i, got.Instances[i], want.Instances[i])
		}
	}
	if _, err := gateway.ManifestsFromPlan(*p, want.Name, manifestOptions()); err != nil {
		t.Errorf("ManifestsFromPlan: %v", err)
	}
	if _, err := gateway.GroupConfigFromPlan(*p, "no-such-group"); err == nil {
		t.Error("unknown group accepted")
	}
}
