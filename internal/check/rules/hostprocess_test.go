package rules

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// goodSpec reads a spec of testdata/specs/good with edits applied (each old string must occur).
func goodSpec(name string, edits ...string) string {
	data, err := os.ReadFile(filepath.Join("..", "..", "..", "testdata", "specs", "good", name))
	if err != nil {
		panic(err)
	}
	s := string(data)
	for i := 0; i+1 < len(edits); i += 2 {
		if !strings.Contains(s, edits[i]) {
			panic("goodSpec " + name + ": no " + edits[i])
		}
		s = strings.Replace(s, edits[i], edits[i+1], 1)
	}
	return s
}

// The HostProcess rules' cases join the catalogue's table, which TestEveryRuleFiresAndPasses
// walks (each rule fires on one input and not on the other).
func init() {
	calico := "calico-hostprocess.yaml"
	flannel := "flannel-hostprocess.yaml"
	const hpcKubeProxy = "    - {namespace: kube-system, name: kube-proxy-windows, component: kube-proxy, hostProcess: true}\n"
	const dsLine = "    - {namespace: calico-system, name: calico-node-windows, component: calico-node, hostProcess: true}\n"
	cases := map[string]struct{ fire, pass tc }{
		"KW1320": {tc{specYAML: goodSpec(calico)}, tc{specYAML: goodSpec(calico, "strictAffinity: false", "strictAffinity: true")}},
		"KW1321": {tc{specYAML: goodSpec(calico)}, tc{specYAML: goodSpec(calico, "windowsDataplane: Disabled", "windowsDataplane: HNS")}},
		"KW1322": {tc{specYAML: goodSpec(calico, "vxlanMode: Always", "vxlanMode: CrossSubnet")}, tc{specYAML: goodSpec(calico)}},
		"KW1323": {tc{specYAML: goodSpec(calico)}, tc{specYAML: goodSpec(calico, dsLine, dsLine+hpcKubeProxy)}},
		"KW1324": {tc{specYAML: goodSpec(flannel)}, tc{specYAML: goodSpec(flannel, "  nodes:\n",
			"  windows:\n    daemonSets:\n    - {namespace: kube-flannel, name: kube-flannel-ds-windows, component: flannel, hostProcess: true}\n  nodes:\n")}},
		"KW1325": {tc{specYAML: goodSpec(calico, dsLine, dsLine+"    - {namespace: kube-system, name: kube-proxy-windows, component: kube-proxy}\n")},
			tc{specYAML: goodSpec(calico, dsLine, dsLine+hpcKubeProxy)}},
		"KW1326": {tc{specYAML: goodSpec(flannel, "apiServerEndpoint: 172.20.0.10:6443", "apiServerEndpoint: 127.0.0.1:34567")}, tc{specYAML: goodSpec(flannel)}},
	}
	for id, c := range cases {
		ruleCases[id] = c
	}
}

// Design flannel/hostprocess keeps the existing flannel rules: a discovered net-conf.json with
// flannel's Linux defaults is flagged through the plan (KW1312, KW1313).
func TestHostProcessFlannelVXLANDefaults(t *testing.T) {
	rep := runCase(t, tc{specYAML: goodSpec("flannel-hostprocess.yaml", "flannel: {backend: vxlan, vni: 4096, port: 4789}", "flannel: {backend: vxlan, vni: 1, port: 8472}",
		"  - name: win-1\n    os: windows\n    windowsBuild: Windows Server 2022\n    nics: [{name: Ethernet, ip: 172.20.1.10, prefix: 16}]\n", "")})
	for _, id := range []string{"KW1312", "KW1313"} {
		if len(findingsOf(rep, id)) == 0 {
			t.Errorf("%s does not fire on VNI 1, port 8472:\n%s", id, dump(rep))
		}
	}
}
