package winnode

import (
	"reflect"
	"strings"
	"testing"
)

// netshBlock is one rule as `netsh advfirewall firewall show rule name=<n> verbose` prints it
// (the format in netshrule.go), with CRLF line ends as netsh writes them.
func netshBlock(name, protocol, localPort string) string {
	lines := []string{
		"",
		"Rule Name:                            " + name,
		"----------------------------------------------------------------------",
		"Enabled:                              Yes",
		"Direction:                            In",
		"Profiles:                             Domain,Private,Public",
		"Grouping:                             ",
		"LocalIP:                              Any",
		"RemoteIP:                             Any",
		"Protocol:                             " + protocol,
	}
	if localPort != "" {
		lines = append(lines,
			"LocalPort:                            "+localPort,
			"RemotePort:                           Any")
	}
	lines = append(lines,
		"Edge traversal:                       No",
		"Program:                              C:\\k\\bin\\kubelet.exe",
		"Service:                              Any",
		"InterfaceTypes:                       Any",
		"Security:                             NotRequired",
		"Rule source:                          Local Setting",
		"Action:                               Allow")
	return strings.Join(lines, "\r\n")
}

const netshOK = "\r\nOk.\r\n\r\n"

// netshGerman is the same block on a German Windows: keys and values are localized.
const netshGerman = "\r\nRegelname:                            kubelet\r\n" +
	"----------------------------------------------------------------------\r\n" +
	"Aktiviert:                            Ja\r\n" +
	"Richtung:                             Eingang\r\n" +
	"Protokoll:                            TCP\r\n" +
	"Lokaler Port:                         10250\r\n" +
	"Aktion:                               Zulassen\r\n" +
	"OK.\r\n"

func TestParseNetshRules(t *testing.T) {
	icmp := "\r\nRule Name:                            ping\r\n" +
		"----------------------------------------------------------------------\r\n" +
		"Protocol:                             ICMPv4\r\n" +
		"                                      Type    Code\r\n" +
		"                                      8       Any\r\n" +
		"Edge traversal:                       No\r\n" +
		"Action:                               Allow\r\n"
	tests := []struct {
		name string
		out  string
		want []netshRule
	}{
		{"one TCP rule", netshBlock("kubelet", "TCP", "10250") + netshOK,
			[]netshRule{{Name: "kubelet", Protocol: "TCP", LocalPort: "10250"}}},
		{"port range", netshBlock("NodePorts", "UDP", "30000-32767") + netshOK,
			[]netshRule{{Name: "NodePorts", Protocol: "UDP", LocalPort: "30000-32767"}}},
		{"two rules of one name", netshBlock("kube-proxy", "TCP", "10256") + "\r\n" + netshBlock("kube-proxy", "UDP", "10256") + netshOK,
			[]netshRule{{Name: "kube-proxy", Protocol: "TCP", LocalPort: "10256"}, {Name: "kube-proxy", Protocol: "UDP", LocalPort: "10256"}}},
		{"any protocol has no port lines", netshBlock("all", "Any", "") + netshOK,
			[]netshRule{{Name: "all", Protocol: "Any"}}},
		{"ICMP type table", icmp + netshOK, []netshRule{{Name: "ping", Protocol: "ICMPv4"}}},
		{"a colon in the name", netshBlock("kubewin: kubelet", "TCP", "10250"),
			[]netshRule{{Name: "kubewin: kubelet", Protocol: "TCP", LocalPort: "10250"}}},
		{"LF line ends", strings.ReplaceAll(netshBlock("kubelet", "TCP", "10250"), "\r\n", "\n"),
			[]netshRule{{Name: "kubelet", Protocol: "TCP", LocalPort: "10250"}}},
		{"no rule", "\r\nNo rules match the specified criteria.\r\n\r\n", nil},
		{"keys before a rule are ignored", "Protocol: TCP\r\n" + netshBlock("kubelet", "TCP", "10250"),
			[]netshRule{{Name: "kubelet", Protocol: "TCP", LocalPort: "10250"}}},
		{"localized", netshGerman, nil},
		{"empty", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := parseNetshRules(tt.out); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("parseNetshRules = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestCompareFirewallRules(t *testing.T) {
	kubelet := FirewallRule{Name: "kubelet", Protocol: "TCP", LocalPorts: "10250"}
	nodePorts := FirewallRule{Name: "NodePorts", Protocol: "TCP", LocalPorts: "30000-32767"}
	tests := []struct {
		name string
		out  string
		want FirewallRule
		is   firewallRuleState
	}{
		{"same", netshBlock("kubelet", "TCP", "10250"), kubelet, firewallRuleMatches},
		{"protocol in another case", netshBlock("kubelet", "tcp", "10250"), kubelet, firewallRuleMatches},
		{"other port", netshBlock("kubelet", "TCP", "10255"), kubelet, firewallRuleDiffers},
		{"other protocol", netshBlock("kubelet", "UDP", "10250"), kubelet, firewallRuleDiffers},
		{"any port", netshBlock("kubelet", "TCP", "Any"), kubelet, firewallRuleDiffers},
		{"any protocol, no ports", netshBlock("kubelet", "Any", ""), kubelet, firewallRuleDiffers},
		{"range", netshBlock("NodePorts", "TCP", "30000-32767"), nodePorts, firewallRuleMatches},
		{"narrower range", netshBlock("NodePorts", "TCP", "30000-31000"), nodePorts, firewallRuleDiffers},
		{"one of two rules differs", netshBlock("kubelet", "TCP", "10250") + netshBlock("kubelet", "TCP", "1"), kubelet, firewallRuleDiffers},
		{"port list spacing", netshBlock("web", "TCP", "80,443"), FirewallRule{Protocol: "TCP", LocalPorts: "80, 443"}, firewallRuleMatches},
		{"localized output is unknown", netshGerman, kubelet, firewallRuleUnknown},
		{"no rule is unknown", "No rules match the specified criteria.", kubelet, firewallRuleUnknown},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := compareFirewallRules(parseNetshRules(tt.out), tt.want); got != tt.is {
				t.Errorf("compareFirewallRules = %v, want %v", got, tt.is)
			}
		})
	}
}

func FuzzParseNetshRules(f *testing.F) {
	f.Add(netshBlock("kubelet", "TCP", "10250") + netshOK)
	f.Add(netshBlock("a", "Any", "") + "\r\n" + netshBlock("b", "UDP", "30000-32767"))
	f.Add(netshGerman)
	f.Add("Rule Name:\r\nProtocol:\r\nLocalPort:")
	f.Add("")
	f.Fuzz(func(t *testing.T, out string) {
		rules := parseNetshRules(out)
		if n := strings.Count(out, "Rule Name"); len(rules) > n {
			t.Fatalf("%d rules from an output naming %d", len(rules), n)
		}
		for _, r := range rules {
			if strings.ContainsAny(r.Protocol+r.LocalPort, "\r\n") {
				t.Fatalf("a value spans lines: %+v", r)
			}
		}
		_ = compareFirewallRules(rules, FirewallRule{Protocol: "TCP", LocalPorts: "1"})
	})
}
