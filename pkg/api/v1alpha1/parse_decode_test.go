package v1alpha1

import (
	"errors"
	"strings"
	"testing"
)

func TestDecodeIsStrictButDoesNotValidate(t *testing.T) {
	partial := []byte("apiVersion: kubewin.io/v1alpha1\nkind: Cluster\nspec:\n  design: upstream-tor/keepalived\n")
	c, _, err := Decode("user.yaml", partial)
	if err != nil {
		t.Fatalf("a partial but well-formed document must decode: %v", err)
	}
	if c.Spec.Design != DesignUpstreamToRKeepalived || c.Spec.KubernetesVersion != "" {
		t.Fatalf("decoded %+v; want the design and no defaults", c.Spec)
	}
	_, _, err = Decode("user.yaml", []byte("apiVersion: kubewin.io/v1alpha1\nkind: Cluster\nspec:\n  desing: host-gw\n"))
	var list ErrorList
	if !errors.As(err, &list) || len(list) != 1 || list[0].Line != 4 || !strings.Contains(list[0].Error(), "desing") {
		t.Fatalf("unknown field: got %v, want one positioned error naming desing", err)
	}
}
