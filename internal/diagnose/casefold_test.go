package diagnose

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// scanText scans one log file holding text and returns the report.
func scanText(t *testing.T, cat *Catalogue, text string) *Report {
	t.Helper()
	p := filepath.Join(t.TempDir(), "node.log")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return Scan(context.Background(), cat, []string{p}, nil, Options{})
}

// TestCaseInsensitiveRecognition: the two core Windows lines of issue 23 that a case-sensitive
// prefilter lost, and catalogue lines written in another case than the entry's literal
// (components change the case of a message between releases).
func TestCaseInsensitiveRecognition(t *testing.T) {
	cat := mustCatalogue(t)
	for _, tc := range []struct {
		name, line, want string
	}{
		{
			// kube-proxy winkernel, lower-case "unable" (the entry's literal is "Unable to find H").
			name: "kube-proxy lower case",
			line: `E0101 00:00:00.000000 1 proxier.go:1] unable to find HNS Network specified by cbr0. Please check network name and CNI deployment`,
			want: "KUBEPROXY-HNS-NETWORK-NOT-FOUND",
		},
		{
			// win-bridge's lookup inside a CreatePodSandbox error (upstream's "GETHNSNewtorkByName").
			name: "win-bridge network lookup in a sandbox error",
			line: `E0101 00:00:00.000000 4120 kuberuntime_sandbox.go:72] "CreatePodSandbox for pod failed" err="rpc error: code = Unknown desc = failed to setup network for sandbox \"abc\": plugin type=\"win-bridge\" name=\"l2bridge\" failed (add): error while GETHNSNewtorkByName(l2bridge): Network l2bridge not found"`,
			want: "CNI-WIN-HNS-NETWORK-MISSING",
		},
		{
			name: "kube-proxy upper case",
			line: `E0101 00:00:00.000000 1 proxier.go:1] UNABLE TO FIND HNS NETWORK SPECIFIED BY cbr0`,
			want: "KUBEPROXY-HNS-NETWORK-NOT-FOUND",
		},
		{
			name: "kubelet needs uid, mixed case",
			line: "E0912 08:00:00.000000    4120 server.go:749] Kubelet Needs To Run As UID `0`. It is being run as -1",
			want: "KUBELET-RUN-AS-UID-WINDOWS",
		},
		{
			name: "HNS code in upper case hex",
			line: `E0425 01:27:31.053862    8064 proxier.go:1231] Policy creation failed: hcnCreateLoadBalancer failed in Win32: The specified port already exists. (0X803B0013)`,
			want: "KUBEPROXY-LB-PORT-EXISTS",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep := scanText(t, cat, tc.line+"\n")
			if _, ok := findingIDs(rep)[tc.want]; !ok {
				t.Errorf("%s not found; findings %v, unmatched %d", tc.want, ids(rep), len(rep.Unmatched))
			}
		})
	}
}

func ids(rep *Report) []string {
	var out []string
	for _, f := range rep.Findings {
		out = append(out, f.ID)
	}
	return out
}
