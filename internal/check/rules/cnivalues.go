package rules

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/kubewin/kubewin/internal/check"
)

// reAddrPlaceholder matches an address written with letters for its digits (10.244.x.x,
// 192.168.X.0/24) or a template token (<subnet>, {{ .Subnet }}, __SUBNET__, ${SUBNET}).
var reAddrPlaceholder = regexp.MustCompile(`(?i)(^|[^a-z])\d{1,3}\.(\d{1,3}|x)\.(x|\d{1,3})\.(x)(/\d+)?$|(^|[.])x\.x|<[^>]+>|\{\{|\$\{|__[A-Z0-9_]+__`)

// isTemplateFile: a file named as a template is meant to be rendered before use, so its
// placeholders are expected (the context is known: it is not a live configuration).
func isTemplateFile(file string) bool {
	switch strings.ToLower(filepath.Ext(file)) {
	case ".template", ".tpl", ".tmpl", ".j2", ".in":
		return true
	}
	return false
}

var cniValueRules = []check.Rule{
	{
		ID: "KW1318", Name: "cni-version-missing", Family: check.FamilyCNI, Severity: check.Warning,
		Summary:   "A CNI conf without cniVersion",
		Why:       "cniVersion is required by the CNI specification; without it libcni reads the conf as version 0.1.0, which current runtimes and plugins no longer accept, so pod networking fails on the node.",
		Fix:       "Add \"cniVersion\": \"0.3.1\" (or the version the plugin documents, e.g. 1.0.0).",
		Reference: "containernetworking/cni SPEC.md (Configuration format: cniVersion, required)",
		Check: func(ctx *check.Context, emit check.Emitter) {
			for _, c := range ctx.CNIConfs {
				if strings.TrimSpace(c.CNIVersion) == "" {
					emit(check.Finding{Location: check.Location{File: c.File, Line: max(c.Pos.Line("name"), 1), Field: "cniVersion"},
						Message: fmt.Sprintf("CNI conf %q has no cniVersion", c.Name)})
				}
			}
		},
	},
	{
		ID: "KW1319", Name: "cni-placeholder-value", Family: check.FamilyCNI, Severity: check.Error,
		Summary:   "A CNI conf value is still a placeholder (10.244.x.x, <subnet>, __X__, {{ }})",
		Why:       "The plugin reads the placeholder as the address: the policy (OutBoundNAT exception, ROUTE destination) or the IPAM range is invalid, so the endpoint is not created or traffic is NATed or routed wrongly.",
		Fix:       "Write the real value (render the template) before the conf is installed.",
		Reference: "microsoft/windows-container-networking (win-bridge policies); containernetworking/plugins host-local (ranges)",
		Check: func(ctx *check.Context, emit check.Emitter) {
			for _, c := range ctx.CNIConfs {
				var vals []struct{ field, v string }
				add := func(f, v string) {
					if v != "" {
						vals = append(vals, struct{ field, v string }{f, v})
					}
				}
				for i, p := range c.Policies {
					for _, e := range p.Exceptions {
						add(fmt.Sprintf("policies[%d].Exceptions", i), e)
					}
					add(fmt.Sprintf("policies[%d].DestinationPrefix", i), p.DestinationPrefix)
				}
				add("ipam.subnet", c.IPAMSubnet)
				add("ipam.gateway", c.IPAMGateway)
				for _, n := range c.Nameservers {
					add("dns.Nameservers", n)
				}
				for _, v := range vals {
					if !reAddrPlaceholder.MatchString(strings.TrimSpace(v.v)) {
						continue
					}
					f := check.Finding{Location: check.Location{File: c.File, Line: placeholderLine(c, v.field), Field: v.field},
						Message: fmt.Sprintf("%s is %q", v.field, v.v)}
					if isTemplateFile(c.File) {
						f.Severity = check.Info
						f.Message += " (a template: render it before installing)"
					}
					emit(f)
				}
			}
		},
	},
}

// placeholderLine is the line of the section that holds the value: the policies, the ipam or
// the dns block (the conf's first line when none is located).
func placeholderLine(c *check.CNIConf, field string) int {
	for _, sec := range []string{"AdditionalArgs", "policies", "ipam", "dns"} {
		if strings.HasPrefix(field, "policies") != (sec == "AdditionalArgs" || sec == "policies") {
			continue
		}
		if l := c.Pos.Line(sec); l > 0 {
			return l
		}
	}
	return 1
}
