package rollout

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/version"

	"github.com/kubewin/kubewin/internal/rollout/api"
)

// The version-skew policy, https://kubernetes.io/releases/version-skew-policy/ (release 1.37):
//   - kubelet must not be newer than kube-apiserver; it may be up to three minor versions older
//     (kubelet < 1.25 only two);
//   - kube-proxy must not be newer than kube-apiserver; it may be up to three minor versions
//     older (kube-proxy < 1.25 only two); and it may be up to three minor versions older or
//     newer than the kubelet it runs alongside.
//
// In an HA control plane the kubelet must not be newer than the OLDEST kube-apiserver: the
// orchestrator sees the version of the instance that answered, so an admin mid-way through a
// control-plane upgrade is the one who knows better (the reason says which version was used).
const (
	maxOlderMinors       = 3
	maxOlderMinorsBefore = 2  // for components older than 1.25
	policyFrom125Minor   = 25 // the minor from which three minors of skew are allowed
	skewURL              = "https://kubernetes.io/releases/version-skew-policy/"
)

// SkewError is a refusal under the version-skew policy.
type SkewError struct{ Reasons []string }

func (e *SkewError) Error() string {
	return "refused by the version-skew policy (" + skewURL + "): " + strings.Join(e.Reasons, "; ")
}

// CheckSkew checks a revision's kubelet and kube-proxy against the API server's version
// (discovery /version's gitVersion). A component the revision leaves alone is not checked.
func CheckSkew(apiServer string, rev *api.Revision) error {
	api, err := version.ParseGeneric(apiServer)
	if err != nil {
		return fmt.Errorf("the API server's version %q: %w", apiServer, err)
	}
	var reasons []string
	parsed := map[string]*version.Version{}
	for _, c := range []struct{ name, v string }{{"kubelet", rev.Kubelet}, {"kube-proxy", rev.KubeProxy}} {
		if c.v == "" {
			continue
		}
		v, err := version.ParseGeneric(c.v)
		if err != nil {
			reasons = append(reasons, fmt.Sprintf("%s version %q does not parse: %v", c.name, c.v, err))
			continue
		}
		parsed[c.name] = v
		if r := skewAgainstAPIServer(c.name, v, api); r != "" {
			reasons = append(reasons, r)
		}
	}
	if k, p := parsed["kubelet"], parsed["kube-proxy"]; k != nil && p != nil && k.Major() == p.Major() {
		if d := int(k.Minor()) - int(p.Minor()); d > maxOlderMinors || d < -maxOlderMinors {
			reasons = append(reasons, fmt.Sprintf("kube-proxy v%s and kubelet v%s are %d minor versions apart; at most %d either way", p, k, abs(d), maxOlderMinors))
		}
	}
	if len(reasons) > 0 {
		return &SkewError{Reasons: reasons}
	}
	return nil
}

func skewAgainstAPIServer(name string, v, apiV *version.Version) string {
	if v.Major() != apiV.Major() {
		return fmt.Sprintf("%s v%s and kube-apiserver v%s differ in major version", name, v, apiV)
	}
	if v.Minor() > apiV.Minor() {
		return fmt.Sprintf("%s v%s is newer than kube-apiserver v%s (it must not be newer)", name, v, apiV)
	}
	allowed := maxOlderMinors
	if v.Minor() < policyFrom125Minor {
		allowed = maxOlderMinorsBefore
	}
	if d := int(apiV.Minor() - v.Minor()); d > allowed {
		return fmt.Sprintf("%s v%s is %d minor versions older than kube-apiserver v%s (at most %d)", name, v, d, apiV, allowed)
	}
	return ""
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
