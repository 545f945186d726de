package rules

import (
	"fmt"
	"math"
	"net/netip"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/kubewin/kubewin/internal/check"
)

// kInst is a vrrp_instance with its file.
type kInst struct {
	kc *check.KeepalivedConf
	in *check.VRRPInstance
}

func allInstances(ctx *check.Context) []kInst {
	var out []kInst
	for _, kc := range ctx.Keepalived {
		for _, in := range kc.Instances {
			out = append(out, kInst{kc, in})
		}
	}
	return out
}

func (k kInst) loc(line int) check.Location {
	if line == 0 {
		line = k.in.Line
	}
	return check.Location{File: k.kc.File, Line: line, Field: "vrrp_instance " + k.in.Name}
}

// vipKey identifies the VRRP router an instance belongs to by its advertised VIPs: members of
// one router share them. virtual_ipaddress_excluded stays out on purpose: those addresses are
// not in adverts, so members whose excluded sets differ (one reloaded before another after a
// Windows node was added) still hear each other and are one router; keying on them would split
// such members and hide VRID and unicast-peer mismatches between them.
func vipKey(in *check.VRRPInstance) string {
	var vs []string
	for _, v := range in.VIPs {
		vs = append(vs, v.Raw)
	}
	sort.Strings(vs)
	return strings.Join(vs, " ")
}

var keepalivedRules = []check.Rule{
	{
		ID: "KW1501", Name: "vrid-collision", Family: check.FamilyKeepalived, Severity: check.Error,
		Summary:   "Two different VRRP routers use the same virtual_router_id on one interface",
		Why:       "VRRP routers are told apart by VRID per L2 segment: instances with different VIPs and the same VRID fight over one virtual MAC and flap (keepalived logs \"ip address associated with VRID not present\").",
		Fix:       "Give every VRRP router on the segment its own virtual_router_id (1-255).",
		Reference: "RFC 5798 §5.2.3; " + refSeed000 + " §2.6 (no two instances may share an ID in a broadcast domain)",
		Check: func(ctx *check.Context, emit check.Emitter) {
			type key struct {
				iface string
				vrid  int
			}
			first := map[key]kInst{}
			var order []kInst
			for _, k := range allInstances(ctx) {
				if k.in.VRID == 0 {
					continue
				}
				order = append(order, k)
			}
			for _, k := range order {
				kk := key{k.in.Interface, k.in.VRID}
				f, seen := first[kk]
				if !seen {
					first[kk] = k
					continue
				}
				sameFile := f.kc == k.kc
				if sameFile || vipKey(f.in) != vipKey(k.in) {
					emit(check.Finding{Location: k.loc(k.in.VRIDLine),
						Message: fmt.Sprintf("virtual_router_id %d on %s is also used by vrrp_instance %s (%s:%d) with different VIPs", k.in.VRID, k.in.Interface, f.in.Name, f.kc.File, f.in.VRIDLine)})
				}
			}
			if ctx.Plan == nil {
				return
			}
			seen := map[key]string{}
			for _, g := range ctx.Plan.GatewayGroups {
				for _, in := range g.Instances {
					kk := key{g.Interface, in.VRID}
					if other, ok := seen[kk]; ok {
						emit(check.Finding{Location: ctx.PlanLoc("gatewayGroups."+g.Name+".instances."+in.Name, ""),
							Message: fmt.Sprintf("VRID %d on %s is used by %s and %s", in.VRID, g.Interface, other, g.Name+"/"+in.Name)})
					}
					seen[kk] = g.Name + "/" + in.Name
				}
			}
		},
	},
	{
		ID: "KW1502", Name: "vrid-out-of-range", Family: check.FamilyKeepalived, Severity: check.Error,
		Summary:   "virtual_router_id missing or outside 1-255 (or outside the group's VRID range)",
		Why:       "keepalived rejects the instance; a VRID outside the range agreed for the segment collides with other VRRP users.",
		Fix:       "virtual_router_id <1-255> within spec.gatewayGroups[].vridRange.",
		Reference: "keepalived.conf(5) virtual_router_id; RFC 5798",
		Check: func(ctx *check.Context, emit check.Emitter) {
			for _, k := range allInstances(ctx) {
				if check.RenderTime(k.in.VRIDRaw) {
					continue // a template's placeholder: known when it is rendered
				}
				if k.in.VRID < 1 || k.in.VRID > 255 {
					what := fmt.Sprintf("virtual_router_id %q", k.in.VRIDRaw)
					if k.in.VRIDRaw == "" {
						what = "no virtual_router_id"
					}
					emit(check.Finding{Location: k.loc(k.in.VRIDLine), Message: what})
				}
			}
			if ctx.Plan == nil {
				return
			}
			for _, g := range ctx.Plan.GatewayGroups {
				for _, in := range g.Instances {
					if in.VRID < g.VRIDRange[0] || in.VRID > g.VRIDRange[1] || in.VRID < 1 || in.VRID > 255 {
						emit(check.Finding{Location: ctx.PlanLoc("gatewayGroups."+g.Name+".instances."+in.Name, ""),
							Message: fmt.Sprintf("VRID %d outside %d-%d", in.VRID, g.VRIDRange[0], g.VRIDRange[1])})
					}
				}
			}
		},
	},
	{
		ID: "KW1503", Name: "vrid-mismatch-between-members", Family: check.FamilyKeepalived, Severity: check.Error,
		Summary:   "Members of one VRRP router (same VIPs) disagree on virtual_router_id",
		Why:       "Members with different VRIDs never hear each other's adverts: every one becomes MASTER and the VIP exists on all of them (split brain).",
		Fix:       "Use the same virtual_router_id in every member's instance.",
		Reference: refSeed000 + " §2.6 (all keepalived instances share virtual_router_id)",
		Check: func(ctx *check.Context, emit check.Emitter) {
			first := map[string]kInst{}
			for _, k := range allInstances(ctx) {
				key := vipKey(k.in)
				if key == "" || k.in.VRID == 0 {
					continue
				}
				f, ok := first[key]
				if !ok {
					first[key] = k
					continue
				}
				if f.kc != k.kc && f.in.VRID != k.in.VRID {
					emit(check.Finding{Location: k.loc(k.in.VRIDLine),
						Message: fmt.Sprintf("VIPs %s use VRID %d here but %d in %s", key, k.in.VRID, f.in.VRID, f.kc.File)})
				}
			}
		},
	},
	{
		ID: "KW1504", Name: "nopreempt-with-state-master", Family: check.FamilyKeepalived, Severity: check.Warning,
		Summary:   "nopreempt with state MASTER",
		Why:       "keepalived only honours nopreempt when the initial state is BACKUP; with MASTER the node still takes the VIP back when it returns, causing a second failover.",
		Fix:       "state BACKUP on every member when using nopreempt.",
		Reference: "keepalived.conf(5) nopreempt (\"the initial state of this entry must be BACKUP\")",
		Check: func(ctx *check.Context, emit check.Emitter) {
			for _, k := range allInstances(ctx) {
				if k.in.Nopreempt && k.in.State == "MASTER" {
					emit(check.Finding{Location: k.loc(k.in.StateLine), Message: fmt.Sprintf("vrrp_instance %s has nopreempt and state MASTER", k.in.Name)})
				}
			}
		},
	},
	{
		ID: "KW1505", Name: "vrrp2-fractional-advert", Family: check.FamilyKeepalived, Severity: check.Error,
		Summary:   "VRRPv2 with a fractional advert_int",
		Why:       "VRRPv2 carries the advertisement interval in whole seconds; keepalived rounds or rejects fractions, so failover timing is not what was configured.",
		Fix:       "Use whole seconds with VRRPv2, or vrrp_version 3 for sub-second adverts.",
		Reference: "RFC 3768 (VRRPv2 Adver Int in seconds) vs RFC 5798 (centiseconds)",
		Check: func(ctx *check.Context, emit check.Emitter) {
			for _, k := range allInstances(ctx) {
				if k.in.Version == 2 && k.in.AdvertRaw != "" && k.in.AdvertInt != math.Trunc(k.in.AdvertInt) {
					emit(check.Finding{Location: k.loc(k.in.AdvertLine), Message: fmt.Sprintf("advert_int %s with VRRP version 2", k.in.AdvertRaw)})
				}
			}
			if ctx.Plan == nil {
				return
			}
			for _, g := range ctx.Plan.GatewayGroups {
				if g.VRRPVersion == 2 && g.AdvertIntervalSeconds != math.Trunc(g.AdvertIntervalSeconds) {
					emit(check.Finding{Location: ctx.PlanLoc("gatewayGroups."+g.Name+".advertIntervalSeconds", ""),
						Message: fmt.Sprintf("group %s: advert interval %gs with VRRPv2", g.Name, g.AdvertIntervalSeconds)})
				}
			}
		},
	},
	{
		ID: "KW1506", Name: "too-many-vips", Family: check.FamilyKeepalived, Severity: check.Error,
		Summary:   "More than 255 VIPs in one VRRP instance",
		Why:       "A VRRP advertisement carries at most 255 addresses; keepalived refuses or truncates the rest, so some Windows nodes lose their gateway on failover.",
		Fix:       "Split the VIPs over several instances (VRIDs) or move extras to virtual_ipaddress_excluded.",
		Reference: "RFC 5798 (Count IPvX Addrs is 8 bits); keepalived.conf(5) virtual_ipaddress_excluded",
		Check: func(ctx *check.Context, emit check.Emitter) {
			// Only virtual_ipaddress counts: excluded addresses never go into an advert.
			for _, k := range allInstances(ctx) {
				if len(k.in.VIPs) > 255 {
					emit(check.Finding{Location: k.loc(0), Message: fmt.Sprintf("vrrp_instance %s has %d VIPs", k.in.Name, len(k.in.VIPs))})
				}
			}
			if ctx.Plan == nil {
				return
			}
			for _, g := range ctx.Plan.GatewayGroups {
				for _, in := range g.Instances {
					if len(in.VIPs) > 255 {
						emit(check.Finding{Location: ctx.PlanLoc("gatewayGroups."+g.Name+".instances."+in.Name, ""),
							Message: fmt.Sprintf("instance %s has %d VIPs", in.Name, len(in.VIPs))})
					}
				}
			}
		},
	},
	{
		ID: "KW1507", Name: "duplicate-router-id", Family: check.FamilyKeepalived, Severity: check.Info,
		Summary:   "Two keepalived configs share a router_id",
		Why:       "router_id only names the host in keepalived's logs, SNMP and notification mails; it is not sent in VRRP adverts and does not affect elections, so a shared one (common in copied configs) costs only clarity.",
		Fix:       "Give every member a distinct router_id (e.g. LVS_WIN_GW_1, _2, _3).",
		Reference: refSeed000 + " §2.6 (router_id differs per keepalived instance)",
		Check: func(ctx *check.Context, emit check.Emitter) {
			seen := map[string]string{}
			for _, kc := range ctx.Keepalived {
				if kc.RouterID == "" {
					continue
				}
				if f, ok := seen[kc.RouterID]; ok {
					emit(check.Finding{Location: check.Location{File: kc.File, Line: kc.RouterIDLine}, Message: fmt.Sprintf("router_id %s is also used by %s", kc.RouterID, f)})
					continue
				}
				seen[kc.RouterID] = kc.File
			}
		},
	},
	{
		ID: "KW1508", Name: "auth-pass-truncated", Family: check.FamilyKeepalived, Severity: check.Warning,
		Summary:   "auth_pass longer than 8 characters",
		Why:       "VRRP PASS authentication carries 8 bytes; keepalived silently uses only the first 8 characters, so the configured secret is not the one in use.",
		Fix:       "Use at most 8 characters (or drop authentication, which VRRPv3 does not support anyway).",
		Reference: "keepalived.conf(5) auth_pass (\"only the first eight (8) characters are used\")",
		Check: func(ctx *check.Context, emit check.Emitter) {
			for _, k := range allInstances(ctx) {
				if len(k.in.AuthPass) > 8 && !isKeepalivedPlaceholder(k.in.AuthPass, "auth_pass", nil) {
					emit(check.Finding{Location: k.loc(k.in.AuthLine),
						Message: fmt.Sprintf("auth_pass has %d characters; only %q is used", len(k.in.AuthPass), k.in.AuthPass[:8])})
				}
			}
		},
	},
	{
		ID: "KW1509", Name: "auth-with-vrrp3", Family: check.FamilyKeepalived, Severity: check.Warning,
		Summary:   "authentication block with VRRP version 3",
		Why:       "VRRPv3 has no authentication: keepalived ignores the block, so the instance is as open as without it.",
		Fix:       "Remove the authentication block, or protect the segment otherwise (dedicated VLAN, unicast peers, firewall).",
		Reference: "RFC 5798 §9 (authentication removed in VRRPv3)",
		Check: func(ctx *check.Context, emit check.Emitter) {
			for _, k := range allInstances(ctx) {
				if k.in.Version == 3 && k.in.AuthLine > 0 {
					emit(check.Finding{Location: k.loc(k.in.AuthLine), Message: fmt.Sprintf("vrrp_instance %s uses VRRPv3 and has an authentication block", k.in.Name)})
				}
			}
		},
	},
	{
		ID: "KW1510", Name: "unicast-peers-asymmetric", Family: check.FamilyKeepalived, Severity: check.Warning,
		Summary:   "Unicast VRRP members do not list each other",
		Why:       "With unicast_peer, a member that is not in another's peer list never receives its adverts; both can become MASTER.",
		Fix:       "List every other member's unicast_src_ip in each unicast_peer block.",
		Reference: refSeed000 + " §2.6 (unicast_src_ip / unicast_peer)",
		Check: func(ctx *check.Context, emit check.Emitter) {
			groups := map[string][]kInst{}
			var keys []string
			for _, k := range allInstances(ctx) {
				if k.in.UnicastSrc == "" {
					continue
				}
				key := vipKey(k.in)
				if _, ok := groups[key]; !ok {
					keys = append(keys, key)
				}
				groups[key] = append(groups[key], k)
			}
			for _, key := range keys {
				ms := groups[key]
				for _, a := range ms {
					peers := map[string]bool{}
					for _, p := range a.in.UnicastPeers {
						peers[p] = true
					}
					for _, b := range ms {
						if a.kc == b.kc || b.in.UnicastSrc == "" {
							continue
						}
						if !peers[b.in.UnicastSrc] {
							emit(check.Finding{Location: a.loc(0),
								Message: fmt.Sprintf("%s does not list %s (unicast_src_ip of %s) in unicast_peer", a.kc.File, b.in.UnicastSrc, b.kc.File)})
						}
					}
				}
			}
		},
	},
	{
		ID: "KW1511", Name: "priority-out-of-range", Family: check.FamilyKeepalived, Severity: check.Error,
		Summary:   "VRRP priority outside 1-254",
		Why:       "255 is reserved for the address owner and 0 signals release; keepalived rejects or rewrites other values and elections misbehave.",
		Fix:       "priority between 1 and 254, distinct per member.",
		Reference: "RFC 5798 §5.2.4",
		Check: func(ctx *check.Context, emit check.Emitter) {
			for _, k := range allInstances(ctx) {
				if k.in.PriorityLine > 0 && (k.in.Priority < 1 || k.in.Priority > 254) && !isKeepalivedPlaceholder(k.in.PriorityRaw, "priority", nil) {
					if k.in.Priority == 255 {
						// the address-owner priority: keepalived takes it, and when another
						// member also claims ownership it reports the conflict and lowers its own
						// (keepalived/vrrp/vrrp.c, "clear conflict ... drop our priority as a
						// workaround") — a misconfiguration, not a refusal to run
						emit(check.Finding{Location: k.loc(k.in.PriorityLine), Severity: check.Warning,
							Message: "priority 255 is the VRRP address-owner priority (RFC 5798 §5.2.4): a member that does not own the VIP should use 1-254, and two owners conflict"})
						continue
					}
					emit(check.Finding{Location: k.loc(k.in.PriorityLine), Message: fmt.Sprintf("priority %s", k.in.PriorityRaw)})
				}
			}
		},
	},
	{
		ID: "KW1512", Name: "slow-failover", Family: check.FamilyKeepalived, Severity: check.Info,
		Summary:   "VRRP adverts so slow that a failover takes more than 3 seconds",
		Why:       "A backup takes over after 3 x advert_int plus skew; Windows pods lose their gateway for that long (3.65 s measured with VRRPv2 and 1 s adverts).",
		Fix:       "vrrp_version 3 with advert_int 0.1 (about 0.4 s measured).",
		Reference: "RFC 5798 §6.1 (Master_Down_Interval); design notes (measured failover gaps)",
		Check: func(ctx *check.Context, emit check.Emitter) {
			for _, k := range allInstances(ctx) {
				prio := k.in.Priority
				if prio < 1 || prio > 255 {
					prio = 100
				}
				down := 3*k.in.AdvertInt + (256-float64(prio))/256*k.in.AdvertInt
				if down > 3 {
					emit(check.Finding{Location: k.loc(k.in.AdvertLine),
						Message: fmt.Sprintf("advert_int %gs (VRRPv%d): a backup takes over after about %.2fs", k.in.AdvertInt, k.in.Version, down)})
				}
			}
		},
	},
	{
		ID: "KW1513", Name: "comment-char-in-value", Family: check.FamilyKeepalived, Severity: check.Warning,
		Summary:   "A '#' or '!' inside a keepalived value starts a comment and cuts the value short",
		Why:       "keepalived treats '#' and '!' as comment starts even inside a word: seed 000's \"auth_pass lvs#Win.Gate@Q1\" sets the password \"lvs\" (keepalived -t confirms no truncation warning), and other values lose their tail silently.",
		Fix:       "Put the value in double quotes (auth_pass \"lvs#Win\"), which keepalived reads whole, or avoid '#' and '!'.",
		Reference: refSeed000 + " §2.6; keepalived 2.2.7 `keepalived -t` behaviour",
		Check: func(ctx *check.Context, emit check.Emitter) {
			for _, kc := range ctx.Keepalived {
				for _, c := range kc.CutWords {
					emit(check.Finding{Location: check.Location{File: kc.File, Line: c.Line},
						Message: fmt.Sprintf("keepalived reads %q; %q is a comment", c.Kept, c.Dropped)})
				}
			}
		},
	},
	{
		ID: "KW1514", Name: "zero-garp-interval", Family: check.FamilyKeepalived, Severity: check.Warning,
		Summary:   "vrrp_garp_interval or vrrp_gna_interval set to 0",
		Why:       "keepalived 2.x rejects 0 (\"number '0' outside range [0.000001, 4294.967295]\") and ignores the line, so the intended setting never applies.",
		Fix:       "Delete the line (no delay is the default) or give a positive number of seconds.",
		Reference: refSeed000 + " §2.6 global_defs; keepalived 2.2.7 `keepalived -t` output",
		Check: func(ctx *check.Context, emit check.Emitter) {
			for _, kc := range ctx.Keepalived {
				for _, g := range kc.Globals {
					if (g.Key == "vrrp_garp_interval" || g.Key == "vrrp_gna_interval") && len(g.Args) > 0 {
						if v, err := strconv.ParseFloat(g.Args[0], 64); err == nil && v <= 0 {
							emit(check.Finding{Location: check.Location{File: kc.File, Line: g.Line, Field: "global_defs " + g.Key},
								Message: fmt.Sprintf("%s %s", g.Key, g.Args[0])})
						}
					}
				}
			}
		},
	},
	{
		ID: "KW1515", Name: "vip-sets-differ-between-members", Family: check.FamilyKeepalived, Severity: check.Error,
		Summary:   "Members of one VRRP router (same advertised VIPs) hold different VIPs",
		Why:       "Whichever member is MASTER adds its own VIPs and excluded VIPs; adverts carry only virtual_ipaddress, so members whose excluded gateway VIPs differ still form one router and nothing complains. Once a member that lacks a Windows node's gateway VIP (the .1 of its pod CIDR) becomes MASTER, that node's pods lose their gateway: a silent outage that shows only on failover.",
		Fix:       "Render every member from the same plan and reload them together, or add the missing VIP (same address and prefix) to every member's virtual_ipaddress_excluded.",
		Reference: "keepalived.conf(5) virtual_ipaddress_excluded; " + refSeed000 + " §2.6 (the gateway VIPs live on the masters' keepalived)",
		Check: func(ctx *check.Context, emit check.Emitter) {
			planned := plannedVIPs(ctx)
			for _, ms := range vipSetMembers(ctx) {
				var files []string
				for _, m := range ms {
					files = append(files, m.inst.kc.File)
				}
				held := map[netip.Prefix][]string{}
				var all []netip.Prefix
				usePlan := false
				for _, m := range ms {
					for p := range m.vips {
						if held[p] == nil {
							all = append(all, p)
						}
						held[p] = append(held[p], m.inst.kc.File)
						usePlan = usePlan || planned[p]
					}
				}
				slices.SortFunc(all, netip.Prefix.Compare)
				// The finding goes to the odd member out. When the plan knows the router, a VIP
				// it plans is missing where absent and any other VIP is an extra where present;
				// so a member rendered first after a Windows node joined is not blamed for the
				// new gateway. Without the plan, a VIP held by fewer than half the members is an
				// extra on them, else (a tie included) it is missing on the others.
				isExtra := func(p netip.Prefix) bool {
					if usePlan {
						return !planned[p]
					}
					return 2*len(held[p]) < len(ms)
				}
				for _, m := range ms {
					var parts []string
					var missing, extra []netip.Prefix
					for _, p := range all {
						switch {
						case len(held[p]) == len(ms):
						case m.vips[p] && isExtra(p):
							extra = append(extra, p)
						case !m.vips[p] && !isExtra(p):
							missing = append(missing, p)
						}
					}
					for _, p := range missing {
						parts = append(parts, fmt.Sprintf("lacks %s (held by %s)", p, strings.Join(held[p], ", ")))
					}
					for _, p := range extra {
						parts = append(parts, fmt.Sprintf("holds %s (not held by %s)", p, strings.Join(without(files, held[p]), ", ")))
					}
					if len(parts) > 0 {
						emit(check.Finding{Location: m.inst.loc(0),
							Message: fmt.Sprintf("vrrp_instance %s in %s %s; members of the VRRP router advertising %s: %s",
								m.inst.in.Name, m.inst.kc.File, strings.Join(parts, "; "), vipKey(m.inst.in), strings.Join(files, ", "))})
					}
				}
			}
		},
	},
	{
		ID: "KW1516", Name: "placeholder-value", Family: check.FamilyKeepalived, Severity: check.Error,
		Summary:   "A keepalived value is still a template placeholder (${VAR}, <name>, {{ .x }}, K8SHA_KA_STATE)",
		Why:       "keepalived does not expand variables outside its own $NAME defines: the literal text becomes the interface, address, state or priority, and the instance is skipped or never becomes MASTER.",
		Fix:       "Render the template (envsubst, sed, the tool that owns it) before installing it, or write the value.",
		Reference: "keepalived.conf(5) (\"$\" defines are the only substitution); cookeem/kubeadm-ha keepalived.conf.tpl",
		Check: func(ctx *check.Context, emit check.Emitter) {
			for _, kc := range ctx.Keepalived {
				_, isTemplate := ctx.Template(kc.File)
				defined := map[string]bool{}
				walkKeepalived(kc.Stmts, func(st *check.KStmt) {
					if strings.HasPrefix(st.Key, "$") {
						defined[strings.TrimPrefix(st.Key, "$")] = true
					}
				})
				walkKeepalived(kc.Stmts, func(st *check.KStmt) {
					if strings.HasPrefix(st.Key, "$") {
						return
					}
					words := st.Args
					if len(st.Args) == 0 && !st.HasBlock {
						// a virtual_ipaddress / unicast_peer entry: the key itself is the value
						// (a key that opens a block, SSL_GET { … }, is a keyword)
						words = []string{st.Key}
					}
					for _, w := range words {
						if isTemplate && check.RenderTime(w) {
							// a template engine's placeholder in its template: the engine fills
							// it when it renders the file (a placeholder in a file installed
							// as it is, or another style's, is still reported)
							continue
						}
						if isKeepalivedPlaceholder(w, st.Key, defined) {
							emit(check.Finding{Location: check.Location{File: kc.File, Line: st.Line}, Message: fmt.Sprintf("%s %s", st.Key, w)})
							return
						}
					}
				})
			}
		},
	},
	{
		ID: "KW1517", Name: "invalid-lb-algo", Family: check.FamilyKeepalived, Severity: check.Error,
		Summary:   "virtual_server lb_algo / lvs_sched names no IPVS scheduler",
		Why:       "keepalived rejects the virtual_server (\"unknown scheduler\") and the load-balanced service is never set up.",
		Fix:       "One of rr, wrr, lc, wlc, lblc, lblcr, sh, mh, dh, fo, ovf, sed, nq, twos.",
		Reference: "keepalived.conf(5) virtual_server lvs_sched (lb_algo)",
		Check: func(ctx *check.Context, emit check.Emitter) {
			for _, kc := range ctx.Keepalived {
				walkKeepalived(kc.Stmts, func(st *check.KStmt) {
					if (st.Key == "lb_algo" || st.Key == "lvs_sched") && len(st.Args) > 0 && !ipvsSchedulers[st.Args[0]] {
						emit(check.Finding{Location: check.Location{File: kc.File, Line: st.Line}, Message: fmt.Sprintf("%s %s", st.Key, st.Args[0])})
					}
				})
			}
		},
	},
}

var ipvsSchedulers = map[string]bool{"rr": true, "wrr": true, "lc": true, "wlc": true, "lblc": true, "lblcr": true, "sh": true,
	"mh": true, "dh": true, "fo": true, "ovf": true, "sed": true, "nq": true, "twos": true}

func walkKeepalived(sts []*check.KStmt, fn func(*check.KStmt)) {
	for _, st := range sts {
		fn(st)
		walkKeepalived(st.Block, fn)
	}
}

// keepalivedKeywords are keepalived's own upper-case words (keepalived.conf(5)): checker
// blocks of a real_server, states, LVS forwarding methods, protocols and authentication types.
// They look like template tokens (upper case with "_") but are configuration.
var keepalivedKeywords = map[string]bool{
	"HTTP_GET": true, "SSL_GET": true, "TCP_CHECK": true, "MISC_CHECK": true, "SMTP_CHECK": true, "DNS_CHECK": true,
	"UDP_CHECK": true, "PING_CHECK": true, "FILE_CHECK": true, "BFD_CHECK": true,
	"MASTER": true, "BACKUP": true, "FAULT": true, "NAT": true, "DR": true, "TUN": true,
	"TCP": true, "UDP": true, "SCTP": true, "PASS": true, "AH": true,
}

// isKeepalivedPlaceholder: ${X}, <x>, {{ x }}, and template tokens such as K8SHA_KA_STATE or
// KEEPALIVED_PRIORITY where keepalived expects a state, interface, address or number.
func isKeepalivedPlaceholder(w, key string, defined map[string]bool) bool {
	if keepalivedKeywords[w] {
		return false
	}
	switch {
	case strings.Contains(w, "${") || strings.Contains(w, "{{") || strings.HasPrefix(w, "<") && strings.HasSuffix(w, ">"):
		return true
	case strings.HasPrefix(w, "$"):
		return !defined[strings.TrimPrefix(w, "$")]
	}
	switch key {
	case "state", "interface", "mcast_src_ip", "unicast_src_ip", "priority", "auth_pass", "virtual_router_id", "advert_int":
	default:
		if !strings.Contains(w, "_") || strings.ContainsAny(w, "./:") {
			return false
		}
		// a virtual_ipaddress / unicast_peer entry is an address, never an identifier
		if key != "" && !strings.ContainsAny(key[:1], "0123456789") && !(strings.ToUpper(key) == key && strings.Contains(key, "_")) {
			return false
		}
	}
	if !strings.Contains(w, "_") || strings.ToUpper(w) != w {
		return false
	}
	for _, r := range w {
		if !(r == '_' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// vipMember is one file's part in a VRRP router: its first instance of the router and every
// valid VIP (advertised or excluded) its instances of the router hold.
type vipMember struct {
	inst kInst
	vips map[netip.Prefix]bool
}

// vipSetMembers returns the VRRP routers given in more than one file, grouped like KW1503 and
// KW1510 group them (by advertised VIPs), each as its member files in input order. Invalid
// addresses stay out: keepalived skips them, and the rules of the addressing family report them.
func vipSetMembers(ctx *check.Context) [][]vipMember {
	byKey := map[string][]vipMember{}
	var keys []string
	for _, k := range allInstances(ctx) {
		key := vipKey(k.in)
		if key == "" {
			continue
		}
		ms := byKey[key]
		if len(ms) == 0 {
			keys = append(keys, key)
		}
		i := slices.IndexFunc(ms, func(m vipMember) bool { return m.inst.kc == k.kc })
		if i < 0 {
			ms = append(ms, vipMember{inst: k, vips: map[netip.Prefix]bool{}})
			i = len(ms) - 1
		}
		for _, v := range k.in.AllVIPs() {
			if v.Valid {
				ms[i].vips[v.Prefix] = true
			}
		}
		byKey[key] = ms
	}
	var out [][]vipMember
	for _, key := range keys {
		if len(byKey[key]) > 1 {
			out = append(out, byKey[key])
		}
	}
	return out
}

// plannedVIPs returns every VIP the plan gives a gateway group: router VIPs and gateway VIPs.
func plannedVIPs(ctx *check.Context) map[netip.Prefix]bool {
	out := map[netip.Prefix]bool{}
	if ctx.Plan == nil {
		return out
	}
	for _, g := range ctx.Plan.GatewayGroups {
		for _, in := range g.Instances {
			addrs := []string{in.RouterVIP}
			for _, v := range in.VIPs {
				addrs = append(addrs, v.Address)
			}
			for _, a := range addrs {
				if p, ok := check.ParseVIP(a); ok {
					out[p] = true
				}
			}
		}
	}
	return out
}

// without returns the entries of list that are not in drop.
func without(list, drop []string) []string {
	var out []string
	for _, s := range list {
		if !slices.Contains(drop, s) {
			out = append(out, s)
		}
	}
	return out
}
