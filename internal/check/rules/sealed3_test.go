package rules

import (
	"strings"
	"testing"

	"github.com/kubewin/kubewin/internal/check"
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

// A kubelet started with --config <a file not among the inputs> may hold clusterDNS, the
// authentication and readOnlyPort settings there: nothing is reported as unset. A systemd
// directive that names a path ending in the program's name (WorkingDirectory=…/kubelet) is
// not a second command line without --config. Without --config the settings are unset.
func TestConfigFileNotGivenSettingsUnknown(t *testing.T) {
	const unit = `[Unit]
Description=Kubernetes Kubelet

[Service]
WorkingDirectory={{ DATA_DIR }}/kubelet
ExecStart={{ BASE_DIR }}/bin/kubelet \
  --kubeconfig={{ BASE_DIR }}/conf/kubelet.kubeconfig \
  %s--hostname-override={{ NODE_NAME }} \
  --v=2
Restart=always
`
	for _, tt := range []struct {
		name, config string
		fires        bool
	}{
		{"--config with a placeholder path", "--config={{ BASE_DIR }}/conf/kubelet-config.yaml \\\n  ", false},
		{"--config with a literal path not among the inputs", "--config=/etc/kubernetes/kubelet-config.yaml \\\n  ", false},
		{"no --config", "", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rep := runCase(t, tc{files: map[string]string{"kubelet.service.tpl": strings.Replace(unit, "%s", tt.config, 1)}, version: "1.26"})
			for _, id := range []string{"KW1805", "KW1806"} {
				if got := len(findingsOf(rep, id)) > 0; got != tt.fires {
					t.Errorf("%s fired %v, want %v: %s", id, got, tt.fires, summary(rep))
				}
			}
		})
	}
}

// A PowerShell command line whose flags are built from a hashtable in a loop
// ("--$($v.Name)=$($v.Value)") has flag names chosen at run time: it is a command line read at
// run time, not one with every setting missing (KW1805, KW1806, KW1104) and an unknown flag
// "--$v.name" (KW0003). Flags written literally are still judged.
func TestComputedFlagNamesReadAtRunTime(t *testing.T) {
	const script = `function ConvertTo-AppParameters {
  param([parameter(Mandatory=$true)] $AppParameters)
  $parameters = @()
  foreach($v in $AppParameters.GetEnumerator()) {
    $parameters += "--$($v.Name)=$($v.Value)"
  }
  return ($parameters -Join " ")
}
$KubeletArguments = Get-Content C:\k\kubelet-args.json | ConvertFrom-Json
nssm install kubelet C:\k\kubelet.exe
nssm set kubelet AppParameters (ConvertTo-AppParameters -AppParameters $KubeletArguments)%s
`
	for _, tt := range []struct {
		name, extra string
		fires       bool
	}{
		{"hashtable arguments", "", false},
		{"a literal kubelet line beside it", "\n& C:\\k\\kubelet.exe --kubeconfig=C:\\k\\config --anonymous-auth=true", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rep := runCase(t, tc{files: map[string]string{"nodeup.ps1": strings.Replace(script, "%s", tt.extra, 1)}, version: "1.26"})
			if got := len(findingsOf(rep, "KW1805")) > 0; got != tt.fires {
				t.Errorf("KW1805 fired %v, want %v: %s", got, tt.fires, summary(rep))
			}
			if n := len(findingsOf(rep, "KW0003")); n > 0 {
				t.Errorf("KW0003 fired on a computed flag name: %s", summary(rep))
			}
			if !slicesAny(findingsOf(rep, "KW0009"), func(f check.Finding) bool { return strings.Contains(f.Message, "computes at run time") }) {
				t.Errorf("the kubelet command line is not reported as computed at run time: %s", summary(rep))
			}
		})
	}
}
