package winnode

import (
	"strings"
)

// The real host manages its firewall rules with netsh advfirewall (host_windows.go,
// EnsureFirewallRule). This file reads `netsh advfirewall firewall show rule name=<n> dir=in
// verbose`, OS-neutral so that it is tested here.
//
// The output is one block per rule with that name, each a "Rule Name:" line, a line of dashes
// and "Key:<spaces>Value" lines, then "Ok.":
//
//	Rule Name:                            kubelet
//	----------------------------------------------------------------------
//	Enabled:                              Yes
//	Direction:                            In
//	Profiles:                             Domain,Private,Public
//	Grouping:
//	LocalIP:                              Any
//	RemoteIP:                             Any
//	Protocol:                             TCP
//	LocalPort:                            10250
//	RemotePort:                           Any
//	Edge traversal:                       No
//	Program:                              Any
//	Service:                              Any
//	InterfaceTypes:                       Any
//	Security:                             NotRequired
//	Rule source:                          Local Setting
//	Action:                               Allow
//	Ok.
//
// (the block format and key names as trailofbits/osquery-extensions
// libraries/firewall/windows/src/firewall.cpp parses them, "Key: value" split at the first
// colon; verbose adds the Program/Service/InterfaceTypes/Security/Rule source lines). An
// ICMP rule follows "Protocol:" with an indented "Type Code" table, and a rule without ports
// has no LocalPort line.
//
// netsh localizes both the keys and values ("Regelname:", "Protokoll:" on a German Windows):
// webmd-health-services/Carbon Carbon/Functions/Get-FirewallRule.ps1 gave up parsing it
// because it "only works on english-speaking computers". A block whose keys are not the
// English ones yields no protocol and no ports, and the rule is then unknown, not different:
// EnsureFirewallRule leaves an unknown rule as it is rather than rewrite it on every pass.

// netshRule is what EnsureFirewallRule compares of a rule netsh shows.
type netshRule struct {
	Name      string
	Protocol  string // "TCP", "UDP", "Any", "ICMPv4", a number
	LocalPort string // "10250", "30000-32767", "Any"; "" when the block has no LocalPort line
}

// parseNetshRules reads the rules of a `netsh advfirewall firewall show rule` output. Lines
// before the first "Rule Name:" and lines that are not "Key: value" are skipped.
func parseNetshRules(out string) []netshRule {
	var rules []netshRule
	var cur *netshRule
	for _, line := range strings.Split(out, "\n") {
		line = strings.TrimRight(line, "\r")
		key, value, ok := strings.Cut(line, ":")
		if !ok || strings.HasPrefix(line, " ") || strings.HasPrefix(line, "\t") {
			continue // the dashes, "Ok.", the ICMP type table, blank lines
		}
		key, value = strings.TrimSpace(key), strings.TrimSpace(value)
		switch {
		case key == "Rule Name":
			rules = append(rules, netshRule{Name: value})
			cur = &rules[len(rules)-1]
		case cur == nil:
		case key == "Protocol":
			cur.Protocol = value
		case key == "LocalPort":
			cur.LocalPort = value
		}
	}
	return rules
}

// firewallRuleState is how the rules netsh shows compare with the one wanted.
type firewallRuleState int

const (
	// firewallRuleMatches: every rule of that name has the wanted protocol and ports.
	firewallRuleMatches firewallRuleState = iota
	// firewallRuleDiffers: a rule of that name has another protocol or other ports.
	firewallRuleDiffers
	// firewallRuleUnknown: the output names no rule or none with a protocol (localized output,
	// or a format this parser does not know).
	firewallRuleUnknown
)

// compareFirewallRules says whether the rules shown need `set rule ... new protocol= localport=`.
func compareFirewallRules(have []netshRule, want FirewallRule) firewallRuleState {
	known := 0
	differs := false
	for _, r := range have {
		if r.Protocol == "" {
			continue
		}
		known++
		if !strings.EqualFold(r.Protocol, want.Protocol) || normPorts(r.LocalPort) != normPorts(want.LocalPorts) {
			differs = true
		}
	}
	switch {
	case known == 0:
		return firewallRuleUnknown
	case differs:
		return firewallRuleDiffers
	default:
		return firewallRuleMatches
	}
}

// normPorts makes port lists comparable: netsh shows "80,443" for what was given as
// "80, 443", and keywords in any case.
func normPorts(s string) string {
	return strings.ToLower(strings.ReplaceAll(strings.TrimSpace(s), " ", ""))
}
