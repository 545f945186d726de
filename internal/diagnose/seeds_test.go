package diagnose

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// TestSeedLogs runs the real logs quoted in the seed documents (copied verbatim into testdata)
// and checks every known failure and every piece of known noise in them is recognised.
func TestSeedLogs(t *testing.T) {
	c := mustCatalogue(t)
	tests := []struct {
		file string
		want map[string]int64 // signature -> minimum count
		// maxUnmatched: error lines nothing explains (the seeds' logs are fully understood)
		maxUnmatched int
	}{
		{
			file: "seed000-kubelet-startup.log",
			want: map[string]int64{
				"KUBELET-FLAG-DEPRECATED": 2, "KUBELET-RUN-AS-UID-WINDOWS": 1, "KUBELET-IPTABLES-VERSION": 1,
				"KUBELET-HAIRPIN-FALLBACK": 1, "KUBELET-NO-CNI-NETWORKS": 1, "KUBELET-BRIDGE-NF-SYSCTL": 1,
				"KUBELET-CREDENTIALSPECS-ACCESS": 1, "KUBELET-AWS-CREDENTIALS": 1, "KUBELET-PROC-START-TIME": 2,
				"KUBELET-IMAGE-FS-HIGH-THRESHOLD": 1, "KUBELET-RUNTIME-STATUS-STARTUP": 1, "KUBELET-API-VERSION-SKEW": 2,
				"KUBELET-NODE-NOT-FOUND": 1, "KUBELET-IMAGE-GC-FAILED": 1, "KUBELET-EVICTION-NO-NODE": 1,
				"KUBELET-LEASE-NODE-MISSING": 1,
			},
		},
		{
			file: "seed000-faq.log",
			want: map[string]int64{
				"WINDOWS-CAPABILITY-UNREACHABLE": 1, "KUBELET-RESOLV-CONF": 12, "KUBELET-MISSING-CLUSTER-DNS": 1,
				"KUBEPROXY-KUBE-NETWORK-UNSET": 1, "KUBEPROXY-LB-PORT-EXISTS": 1, "KUBEPROXY-ENDPOINT-INFO-MISSING": 1,
				"CNI-REMOTE-ENDPOINT-1909": 1, "CNI-NO-PLUGIN-NAME": 2,
			},
			// A prose heading quotes kubelet's ClusterDNS error cut short ("… using…"): the
			// entry's pattern cannot confirm a cut line, and a line that says "cannot" is shown
			// rather than dropped (the full message elsewhere in the FAQ is recognised).
			maxUnmatched: 1,
		},
		{
			file: "seed002-hyperv.log",
			want: map[string]int64{"SERVICE-DEPENDENTS-RUNNING": 1, "CONTAINERD-OS-MISMATCH": 1},
		},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			r := Scan(context.Background(), c, []string{filepath.Join(logsDir, tt.file)}, nil, Options{})
			got := findingIDs(r)
			for id, n := range tt.want {
				if got[id].Count < n {
					t.Errorf("%s: count %d, want >= %d", id, got[id].Count, n)
				}
			}
			for id := range got {
				if _, ok := tt.want[id]; !ok {
					t.Errorf("unexpected finding %s: %s", id, got[id].Sample)
				}
			}
			if tt.file == "seed000-faq.log" {
				// The FAQ's prose heading mentions the error first; the sample is the real event line.
				if f := got["KUBELET-RESOLV-CONF"]; !strings.Contains(f.Sample, "FailedCreatePodSandBox") || f.Files[0].Line != 14 {
					t.Errorf("sample %q at %+v", f.Sample, f.Files)
				}
			}
			if tt.file == "seed000-kubelet-startup.log" {
				// The log names its node at the end; every finding of it is attributed to node009.
				if n := r.Inputs[0].Nodes; len(n) != 1 || n[0] != "node009" {
					t.Errorf("input nodes %v", n)
				}
				if f := got["KUBELET-IMAGE-GC-FAILED"]; len(f.Nodes) != 1 || f.Nodes[0] != "node009" {
					t.Errorf("finding nodes %v", f.Nodes)
				}
			}
			if len(r.Unmatched) > tt.maxUnmatched {
				t.Errorf("unmatched: %+v", r.Unmatched)
			}
		})
	}
}
