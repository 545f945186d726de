package rules

import (
	"strings"
	"testing"
)

// KW1307: a Windows conf of the nat plugin attaches to an HNS NAT network, where WinNAT
// translates outbound traffic (https://learn.microsoft.com/virtualization/windowscontainers/container-networking/network-drivers-topologies);
// OutBoundNAT is demanded of l2bridge/overlay confs only.
func TestOutboundNATNotDemandedOfNat(t *testing.T) {
	const natConf = `{
  "cniVersion": "0.2.0",
  "name": "nat",
  "type": "%s",
  "master": "Ethernet",
  "ipam": { "subnet": "172.27.96.0/20", "routes": [ { "gateway": "172.27.96.1" } ] },
  "capabilities": { "portMappings": true, "dns": true }
}`
	for _, tt := range []struct {
		typ   string
		fires bool
	}{
		{"nat", false},
		{"win-bridge", true},
	} {
		t.Run(tt.typ, func(t *testing.T) {
			rep := runCase(t, tc{files: map[string]string{"cni.conf": strings.Replace(natConf, "%s", tt.typ, 1)}, version: "1.27"})
			if got := len(findingsOf(rep, "KW1307")) > 0; got != tt.fires {
				t.Errorf("KW1307 fired %v, want %v: %s", got, tt.fires, summary(rep))
			}
		})
	}
}
