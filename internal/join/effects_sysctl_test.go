package join

import "testing"

// sysctl(8)'s key syntax: a VLAN interface "eth0.100" is written with a slash.
func TestSysctlPath(t *testing.T) {
	for key, want := range map[string]string{
		"net.ipv4.ip_forward":                "net/ipv4/ip_forward",
		"net.ipv4.conf.eth0/100.rp_filter":   "net/ipv4/conf/eth0.100/rp_filter",
		"net.bridge.bridge-nf-call-iptables": "net/bridge/bridge-nf-call-iptables",
	} {
		if got := SysctlPath(key); got != want {
			t.Errorf("SysctlPath(%q) = %q, want %q", key, got, want)
		}
	}
}
