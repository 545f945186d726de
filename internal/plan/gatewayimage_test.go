package plan

import (
	"strings"
	"testing"

	"github.com/kubewin/kubewin/pkg/api/v1alpha1"
)

// TestGatewayImageByDigest: a release publishes the gateway image's digest (hack/release.sh
// prints name:tag@sha256:…); images.gateway given so is planned verbatim, the digest kept and
// no registry rewrite applied, so every gateway DaemonSet runs exactly the released image. Without
// it the default tag stays (the golden bundles do not change).
func TestGatewayImageByDigest(t *testing.T) {
	pinned := "ghcr.io/kubewin/kubewin-gateway:v0.1.0@sha256:" + strings.Repeat("0a", 32)
	c := exampleCluster(t)
	c.Spec.Images.Registry = "repo.mylan.k8s:9999"
	c.Spec.Images.Gateway = pinned
	if p := mustPlan(t, c); p.Images.Gateway != pinned {
		t.Errorf("images.gateway %s planned as %s", pinned, p.Images.Gateway)
	}
	c.Spec.Images.Gateway = ""
	if p := mustPlan(t, c); p.Images.Gateway != "repo.mylan.k8s:9999/"+DefaultGatewayImage {
		t.Errorf("default gateway image under the registry: %s", p.Images.Gateway)
	}
	// The spec's validation (which kubewin plan runs first) takes the digest and refuses a
	// truncated one.
	c.Spec.Images.Gateway = pinned
	if errs := v1alpha1.Validate(c); len(errs) != 0 {
		t.Errorf("a digest reference is refused: %v", errs)
	}
	c.Spec.Images.Gateway = "ghcr.io/kubewin/kubewin-gateway@sha256:abc"
	if errs := v1alpha1.Validate(c); len(errs) == 0 || !strings.Contains(errs[0].Field, "images.gateway") {
		t.Errorf("a truncated digest was accepted: %v", errs)
	}
}
