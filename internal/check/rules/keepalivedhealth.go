package rules

import (
	"fmt"
	"strings"

	"github.com/kubewin/kubewin/internal/check"
)

// keepalivedHealthRules: a VRRP instance fails over only when its node dies unless something
// tells it the service behind the VIP is down (keepalived.conf(5): track_script, track_process,
// track_file, track_interface, track_bfd lower the priority or put the instance in FAULT; an LVS
// virtual_server's real_server checkers take a dead backend out).
var keepalivedHealthRules = []check.Rule{
	{
		ID: "KW1518", Name: "keepalived-no-health-check", Family: check.FamilyKeepalived, Severity: check.Warning,
		Summary:   "A VRRP instance holds a VIP but tracks nothing (no track_script, track_process, track_interface, track_file, track_bfd, or real_server checker)",
		Why:       "Without a tracked check the VIP stays on a node whose API server, HAProxy or gateway has died, as long as keepalived itself runs: clients of the VIP fail until someone stops keepalived there.",
		Fix:       "Add a vrrp_script that checks the local service (e.g. curl -sfk https://127.0.0.1:6443/healthz, or killall -0 haproxy) and list it in the instance's track_script.",
		Reference: "keepalived.conf(5) (vrrp_script, track_script, track_process); kubeadm docs ha-considerations (keepalived with check_apiserver.sh)",
		Check: func(ctx *check.Context, emit check.Emitter) {
			for _, kc := range ctx.Keepalived {
				lvsChecks := false
				walkKeepalived(kc.Stmts, func(st *check.KStmt) {
					if keepalivedKeywords[st.Key] && strings.HasSuffix(st.Key, "_CHECK") || st.Key == "HTTP_GET" || st.Key == "SSL_GET" {
						lvsChecks = true
					}
				})
				if lvsChecks {
					continue
				}
				// The rule knows a service sits behind the VIP when the file defines a
				// vrrp_script (its author meant to track one) or an LVS virtual_server; a plain
				// VRRP gateway (a router VIP, as kubewin's own gateways) fails over with its
				// node, and nothing says more is needed: info only.
				fronts := false
				for _, st := range kc.Stmts {
					if st.Key == "vrrp_script" || st.Key == "virtual_server" || st.Key == "virtual_server_group" {
						fronts = true
					}
				}
				for _, st := range kc.Stmts {
					if st.Key != "vrrp_instance" || !st.HasBlock {
						continue
					}
					tracked, vips := false, false
					for _, s := range st.Block {
						switch s.Key {
						case "track_script", "track_process", "track_interface", "track_file", "track_bfd":
							tracked = true
						case "virtual_ipaddress", "virtual_ipaddress_excluded":
							vips = len(s.Block) > 0 || len(s.Args) > 0
						}
					}
					if vips && !tracked {
						name := ""
						if len(st.Args) > 0 {
							name = st.Args[0]
						}
						if fronts {
							emit(check.Finding{Location: check.Location{File: kc.File, Line: st.Line},
								Message: fmt.Sprintf("vrrp_instance %s holds a VIP but tracks no check, though the file defines one (a vrrp_script or virtual_server)", name)})
							continue
						}
						if ctx.Plan != nil && len(ctx.Plan.GatewayGroups) > 0 {
							continue // kubewin's own gateway groups: router VIPs by design
						}
						emit(check.Finding{Location: check.Location{File: kc.File, Line: st.Line}, Severity: check.Info,
							Message: fmt.Sprintf("vrrp_instance %s holds a VIP but tracks no check: if the VIP fronts a service (an API server, HAProxy), track a check of it; a plain gateway VIP fails over with its node", name)})
					}
				}
			}
		},
	},
	{
		ID: "KW1519", Name: "keepalived-check-probes-vip", Family: check.FamilyKeepalived, Severity: check.Warning,
		Summary:   "A tracked vrrp_script probes the VIP itself instead of the local service",
		Why:       "Whoever holds the VIP answers the probe: on a BACKUP the check passes while its own service is down (it would take the VIP broken), and on the MASTER a dead local service is hidden as long as the probe reaches itself through the VIP.",
		Fix:       "Probe the local service (127.0.0.1 or the node's own address), not the VIP.",
		Reference: "keepalived.conf(5) (vrrp_script: the script runs on every node); kubeadm docs ha-considerations check_apiserver.sh (probes localhost, and the VIP only while this node holds it)",
		Check: func(ctx *check.Context, emit check.Emitter) {
			for _, kc := range ctx.Keepalived {
				var vips []string
				for _, in := range kc.Instances {
					for _, v := range in.AllVIPs() {
						if v.Valid {
							vips = append(vips, v.Prefix.Addr().String())
						}
					}
				}
				for _, st := range kc.Stmts {
					if st.Key != "vrrp_script" || !st.HasBlock {
						continue
					}
					for _, s := range st.Block {
						if s.Key != "script" {
							continue
						}
						script := strings.Join(s.Args, " ")
						for _, vip := range vips {
							if containsAddress(script, vip) {
								emit(check.Finding{Location: check.Location{File: kc.File, Line: s.Line},
									Message: fmt.Sprintf("vrrp_script %s probes the VIP %s: %s", strings.Join(st.Args, " "), vip, script)})
								break
							}
						}
					}
				}
			}
		},
	},
}

// containsAddress reports whether s holds addr as a whole address (10.0.0.1 is not in
// 10.0.0.10).
func containsAddress(s, addr string) bool {
	for i := 0; ; {
		j := strings.Index(s[i:], addr)
		if j < 0 {
			return false
		}
		start, end := i+j, i+j+len(addr)
		before := start == 0 || !isAddrByte(s[start-1])
		after := end == len(s) || !isAddrByte(s[end])
		if before && after {
			return true
		}
		i = end
	}
}

func isAddrByte(c byte) bool { return c >= '0' && c <= '9' || c == '.' }
