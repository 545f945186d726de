package testgen

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/kubewin/kubewin/pkg/api/v1alpha1"
)

func TestClusterIsValidAndDeterministic(t *testing.T) {
	cases := []struct{ linux, windows, groups int }{
		{1, 0, 0}, {5, 7, 0}, {1, 3, 2}, {10, 20, 3}, {4000, 1000, 3}, {2500, 300, 32},
	}
	for _, tc := range cases {
		c := Cluster(tc.linux, tc.windows, tc.groups)
		if len(c.Spec.Nodes) != tc.linux+tc.windows || len(c.Spec.GatewayGroups) != tc.groups {
			t.Errorf("%v: %d nodes, %d groups", tc, len(c.Spec.Nodes), len(c.Spec.GatewayGroups))
		}
		v1alpha1.SetDefaults(c)
		if errs := v1alpha1.Validate(c); len(errs) > 0 {
			t.Errorf("%v: invalid:\n%v", tc, errs)
		}
		again := Cluster(tc.linux, tc.windows, tc.groups)
		v1alpha1.SetDefaults(again)
		if !reflect.DeepEqual(c, again) {
			t.Errorf("%v: two calls differ", tc)
		}
	}
}

// The generated document must also survive the strict decoder users go through.
func TestClusterParses(t *testing.T) {
	data, err := json.Marshal(Cluster(30, 12, 3))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := v1alpha1.Parse("gen.json", data); err != nil {
		t.Fatalf("parse generated cluster: %v", err)
	}
}

func TestClusterLimits(t *testing.T) {
	for _, args := range [][3]int{{-1, 0, 0}, {0, 1, 1}, {10, 10, MaxGatewayGroups + 1}, {MaxNodes, 0, 0}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Cluster%v did not panic", args)
				}
			}()
			Cluster(args[0], args[1], args[2])
		}()
	}
}
