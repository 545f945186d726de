package rollout

import (
	"errors"
	"strings"
	"testing"

	"github.com/kubewin/kubewin/internal/rollout/api"
)

// Cases follow the examples of https://kubernetes.io/releases/version-skew-policy/.
func TestCheckSkew(t *testing.T) {
	for _, tc := range []struct {
		name, apiServer, kubelet, proxy string
		want                            string // substring of the refusal; "" = allowed
	}{
		{"same version", "v1.37.1", "v1.37.1", "v1.37.1", ""},
		{"patch newer than the API server's is the same minor", "v1.37.1", "v1.37.4", "", ""},
		{"three minors older", "v1.37.1", "v1.34.0", "v1.34.0", ""},
		{"four minors older", "v1.37.1", "v1.33.9", "", "kubelet v1.33.9 is 4 minor versions older than kube-apiserver v1.37.1 (at most 3)"},
		{"kubelet newer", "v1.37.1", "v1.38.0", "", "kubelet v1.38.0 is newer than kube-apiserver v1.37.1"},
		{"kube-proxy newer", "v1.37.1", "", "v1.38.0", "kube-proxy v1.38.0 is newer than kube-apiserver"},
		{"before 1.25 only two", "v1.26.0", "v1.23.0", "", "(at most 2)"},
		{"1.24 two older is fine", "v1.26.3", "v1.24.0", "", ""},
		{"kube-proxy far from kubelet", "v1.37.1", "v1.37.0", "v1.33.0", "4 minor versions apart"},
		{"major differs", "v1.37.1", "v2.0.0", "", "differ in major version"},
		{"API server with a suffix", "v1.37.1-gke.100", "v1.37.0", "", ""},
		{"only OS updates", "v1.37.1", "", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckSkew(tc.apiServer, &api.Revision{Name: "r", Kubelet: tc.kubelet, KubeProxy: tc.proxy})
			var se *SkewError
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.want != "" && err == nil:
				t.Fatalf("allowed, want a refusal with %q", tc.want)
			case tc.want != "" && (!errors.As(err, &se) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), skewURL)):
				t.Fatalf("error %v, want a SkewError with %q citing the policy", err, tc.want)
			}
		})
	}
}
