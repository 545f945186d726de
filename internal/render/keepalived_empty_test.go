package render

import (
	"strings"
	"testing"
)

// TestKeepalivedConfigEmptyGroup: the gateway controller renders a group whose last Windows node
// is gone; keepalived must accept it and it must declare no instance (so no VIP is held).
func TestKeepalivedConfigEmptyGroup(t *testing.T) {
	g := exampleGroup()
	g.Instances = nil
	cfg, err := KeepalivedConfig(g, "master1")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(cfg), "vrrp_instance") {
		t.Fatalf("empty group rendered an instance:\n%s", cfg)
	}
	checkKeepalived(t, keepalivedNetns(t, g.Interface), cfg)
}
