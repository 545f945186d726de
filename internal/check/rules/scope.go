package rules

import "github.com/kubewin/kubewin/internal/check"

// windowsOnly: the rules whose findings are about a Windows node's kubelet or kube-proxy — a
// Windows default, a Windows-only flag or service behaviour. They need the input's OS proven
// (an .exe, a Windows path, an npipe endpoint, PowerShell/cmd, a service registration, a spec
// node or a sibling input that proves it); on an input whose OS kubewin only assumed they say
// info (issue 24: a Linux kubeadm-flags.env judged as Windows).
var windowsOnly = map[string]bool{
	"KW1101": true, "KW1102": true, "KW1103": true, "KW1111": true, "KW1112": true, "KW1113": true,
	"KW1114": true, "KW1115": true, "KW1117": true, "KW1118": true, "KW1119": true,
	"KW1201": true, "KW1202": true, "KW1204": true, "KW1205": true, "KW1206": true, "KW1207": true,
	"KW1208": true, "KW1210": true, "KW1211": true,
}

// withScopes sets each rule's declared scope.
func withScopes(rs []check.Rule) []check.Rule {
	for i := range rs {
		if windowsOnly[rs[i].ID] {
			rs[i].Scope.OS = check.OSWindows
			rs[i].Scope.RequiresKnownOS = true
		}
	}
	return rs
}
