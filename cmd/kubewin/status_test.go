package main

import (
	"testing"

	"github.com/kubewin/kubewin/internal/nodestatus"
)

func TestStatusRolloutColumns(t *testing.T) {
	for _, tc := range []struct {
		name          string
		r             nodestatus.RolloutState
		column, why   string
		wantHaltedMsg bool
	}{
		{"upgraded", nodestatus.RolloutState{Phase: "Succeeded", Current: "v1.37.1"}, "Succeeded v1.37.1", "no reason recorded", false},
		{"rolled back by a gate", nodestatus.RolloutState{Phase: "RolledBack", Reason: "gate flow-check: pod→service failed", Current: "v1.37.0"},
			"RolledBack v1.37.0", "gate flow-check: pod→service failed", true},
		{"the node's own reason added", nodestatus.RolloutState{Phase: "RolledBack", Reason: "node-phase Failed", NodeReason: "kubelet did not start under revision broken: exit 2"},
			"RolledBack", "node-phase Failed; node: kubelet did not start under revision broken: exit 2", true},
		{"not repeated", nodestatus.RolloutState{Phase: "Failed", Reason: "rollback: kubelet exit 2", NodeReason: "kubelet exit 2"}, "Failed", "rollback: kubelet exit 2", true},
		{"only the node service has answered", nodestatus.RolloutState{NodePhase: "Applying"}, "node:Applying", "no reason recorded", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := rolloutColumn(&tc.r); got != tc.column {
				t.Errorf("column %q, want %q", got, tc.column)
			}
			if got := rolloutWhy(&tc.r); got != tc.why {
				t.Errorf("why %q, want %q", got, tc.why)
			}
			if tc.r.Halted() != tc.wantHaltedMsg {
				t.Errorf("halted %t", tc.r.Halted())
			}
		})
	}
}
