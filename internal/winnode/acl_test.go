package winnode

import (
	"strings"
	"testing"
)

func TestMemHostACL(t *testing.T) {
	h := NewMemHost()
	ctx := testCtx(t)
	if _, ok := h.ACL(`/k/pki/key.pem`); ok {
		t.Fatal("nothing restricted yet: want the volume's (open) ACL")
	}
	if err := h.RestrictACL(ctx, "/k"); err != nil {
		t.Fatal(err)
	}
	if err := h.RestrictACL(ctx, "/k/logs", ACLGrant{Account: `NT AUTHORITY\NetworkService`, Access: "M"}); err != nil {
		t.Fatal(err)
	}
	if g, ok := h.ACL("/k/pki/key.pem"); !ok || len(g) != 0 {
		t.Errorf("below /k: %v %v; want SYSTEM and Administrators only", g, ok)
	}
	if g, ok := h.ACL("/k/logs/kube-proxy.log"); !ok || len(g) != 1 || g[0].Access != "M" {
		t.Errorf("below /k/logs: %v %v; want the nearest restricted directory's grants", g, ok)
	}
	if _, ok := h.ACL("/other"); ok {
		t.Error("/other is not below a restricted directory")
	}
	if err := h.RestrictACL(ctx, "/k", ACLGrant{Account: "Users", Access: "F"}); err == nil || !strings.Contains(err.Error(), "expected R or M") {
		t.Errorf("full control for Users: %v", err)
	}
}
