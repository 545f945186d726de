package render

import (
	"bytes"
	"context"
	"fmt"
	"hash/fnv"
	"math"
	"net/netip"
	"os/exec"
	"sort"
	"strconv"
	"strings"

	"github.com/kubewin/kubewin/internal/plan"
)

// maxVIPsPerInstance is the gateway VIP count of one instance: a VRRP advertisement's address
// count is an 8-bit field, and the plan keeps every instance within what one advert could name.
// The renderer advertises only one address (the router VIP, else the instance's loopback advert
// anchor) and lists the gateway VIPs as excluded (keepalived 2.2.7 drops adverts whose address
// list differs from its own during staggered reloads), so no gateway VIP reaches an advert.
const maxVIPsPerInstance = 255

// KeepalivedConfig renders /etc/keepalived/keepalived.conf for one member of a gateway group.
// Every member gets the same instances (state BACKUP + nopreempt, so a recovered node never
// steals the VIPs back and causes a second outage); only router_id, priority and the unicast
// source/peers differ. The configuration runs no scripts and uses no authentication: PASS
// authentication is plaintext and does not exist in VRRPv3.
func KeepalivedConfig(g plan.GatewayGroupPlan, member string) ([]byte, error) {
	return KeepalivedConfigForNode([]plan.GatewayGroupPlan{g}, member)
}

// KeepalivedConfigForNode renders the keepalived.conf of a node that is a member of one or more
// of groups: one global_defs (router_id of its first group by name) and the instances of every
// group it belongs to. The groups must share the VRRP version and must not reuse a VRID on the
// same interface.
func KeepalivedConfigForNode(groups []plan.GatewayGroupPlan, member string) ([]byte, error) {
	var mine []plan.GatewayGroupPlan
	for _, g := range groups {
		for _, m := range g.Members {
			if m.Node == member {
				mine = append(mine, g)
				break
			}
		}
	}
	if len(mine) == 0 {
		if len(groups) == 1 {
			return nil, fmt.Errorf("render keepalived config of group %s: %s is not a member", groups[0].Name, member)
		}
		return nil, fmt.Errorf("render keepalived config for %s: not a member of any gateway group", member)
	}
	if err := checkAdvertAnchors(groups); err != nil {
		return nil, fmt.Errorf("render keepalived config for %s: %w", member, err)
	}
	sort.SliceStable(mine, func(i, j int) bool { return mine[i].Name < mine[j].Name })
	type ifVRID struct {
		iface string
		vrid  int
	}
	used := map[ifVRID]string{}
	var b bytes.Buffer
	for i, g := range mine {
		if err := checkGatewayGroup(g); err != nil {
			return nil, fmt.Errorf("render keepalived config of group %s: %w", g.Name, err)
		}
		self, peers, err := splitMembers(g, member)
		if err != nil {
			return nil, fmt.Errorf("render keepalived config of group %s: %w", g.Name, err)
		}
		advert, err := advertInt(g.VRRPVersion, g.AdvertIntervalSeconds)
		if err != nil {
			return nil, fmt.Errorf("render keepalived config of group %s: %w", g.Name, err)
		}
		if i == 0 {
			names := make([]string, len(mine))
			for j := range mine {
				names[j] = mine[j].Name
			}
			fmt.Fprintf(&b, "! keepalived.conf for %s, gateway group %s. %s\n", self.Node, strings.Join(names, ", "), generatedBy)
			b.WriteString("! Holds the pod-CIDR gateways (.1) of Windows nodes; reload with SIGHUP (systemctl reload keepalived).\n\n")
			b.WriteString("global_defs {\n")
			fmt.Fprintf(&b, "    router_id %s\n", self.RouterID)
			fmt.Fprintf(&b, "    vrrp_version %d\n", g.VRRPVersion)
			// When two backups become MASTER at once (their down timers differ by
			// (p2 - p3)/256 of an advert interval: 0.4 ms at 10 ms adverts and priorities
			// 140/130), the one yielding may have sent the last gratuitous ARPs, and hosts
			// keep its MAC until the winner's second GARP round 5 s later (seen in 1 of 20
			// failovers, bench/README.md gateway). With this the yielding master first sends
			// an advert, and the winner, receiving a lower-priority advert, re-sends its GARPs
			// (garp_lower_prio_repeat, default garp_master_repeat): keepalived.conf(5) and
			// vrrp_state_master_rx in keepalived/vrrp/vrrp.c, v2.2.7.
			b.WriteString("    vrrp_higher_prio_send_advert\n")
			b.WriteString("}\n")
		} else if g.VRRPVersion != mine[0].VRRPVersion {
			return nil, fmt.Errorf("render keepalived config for %s: groups %s and %s use VRRP versions %d and %d", member, mine[0].Name, g.Name, mine[0].VRRPVersion, g.VRRPVersion)
		}
		for _, in := range g.Instances {
			k := ifVRID{g.Interface, in.VRID}
			if prev, ok := used[k]; ok {
				return nil, fmt.Errorf("render keepalived config for %s: virtual_router_id %d on %s used by groups %s and %s", member, in.VRID, g.Interface, prev, g.Name)
			}
			used[k] = g.Name
			writeInstance(&b, g, in, self, peers, advert)
		}
	}
	return b.Bytes(), nil
}

func writeInstance(b *bytes.Buffer, g plan.GatewayGroupPlan, in plan.VRRPInstancePlan, self plan.GatewayMemberPlan, peers []string, advert string) {
	b.WriteString("\n")
	fmt.Fprintf(b, "vrrp_instance %s {\n", in.Name)
	b.WriteString("    state BACKUP\n")
	b.WriteString("    nopreempt\n")
	fmt.Fprintf(b, "    interface %s\n", g.Interface)
	fmt.Fprintf(b, "    virtual_router_id %d\n", in.VRID)
	fmt.Fprintf(b, "    priority %d\n", self.Priority)
	fmt.Fprintf(b, "    advert_int %s\n", advert)
	fmt.Fprintf(b, "    unicast_src_ip %s\n", self.IP)
	b.WriteString("    unicast_peer {\n")
	for _, p := range peers {
		fmt.Fprintf(b, "        %s\n", p)
	}
	b.WriteString("    }\n")
	// Adverts carry one address that never changes while Windows nodes come and go: the router
	// VIP, else a loopback anchor derived from the group name and VRID (advertAnchor). Every
	// gateway VIP is virtual_ipaddress_excluded: held and moved exactly like a VIP, but not
	// listed in adverts. keepalived 2.2.7 drops adverts whose address list differs from its own
	// ("ip address associated with VRID ... not present in MASTER advert"), also in MASTER state,
	// and a reload forgets the master it heard, so per-instance skip_check_adv_addr does not help.
	// Advertising the lowest gateway VIP instead made every join or leave of the lowest Windows
	// node change the advert: with members reloaded 300-700 ms apart, a second member became
	// MASTER 180 ms after the first reload and both held the gateway VIPs until the last member
	// reloaded (0.4-1.2 s, whichever member reloaded first; TestStaggeredReloadWithoutRouterVIP).
	addrs := instanceAddrs(g, in)
	if in.RouterVIP == "" {
		b.WriteString("    ! advert anchor: a loopback address only adverts use; the gateway VIPs are excluded below\n")
	}
	b.WriteString("    virtual_ipaddress {\n")
	fmt.Fprintf(b, "        %s dev %s%s\n", addrs[0].addr, addrs[0].dev, addrs[0].scope)
	b.WriteString("    }\n")
	if len(addrs) > 1 {
		b.WriteString("    virtual_ipaddress_excluded {\n")
		for _, a := range addrs[1:] {
			fmt.Fprintf(b, "        %s dev %s\n", a.addr, a.dev)
		}
		b.WriteString("    }\n")
	}
	b.WriteString("}\n")
}

// vipLine is one address keepalived adds while MASTER of an instance.
type vipLine struct{ addr, dev, scope string }

// instanceAddrs lists what keepalived adds for an instance: first the advertised address (the
// router VIP, else the loopback advert anchor), then the gateway VIPs (excluded from adverts).
// keepalived.conf and the unit drop-in that removes the addresses both come from it.
func instanceAddrs(g plan.GatewayGroupPlan, in plan.VRRPInstancePlan) []vipLine {
	out := []vipLine{{addr: in.RouterVIP, dev: g.Interface}}
	if in.RouterVIP == "" {
		out[0] = vipLine{addr: advertAnchor(g.Name, in.VRID).String() + "/32", dev: "lo", scope: " scope host"}
	}
	for _, v := range in.VIPs {
		out = append(out, vipLine{addr: v.Address, dev: g.Interface})
	}
	return out
}

// KeepalivedDropInPath is where a member installs KeepalivedUnitDropIn's file.
const KeepalivedDropInPath = "/etc/systemd/system/keepalived.service.d/kubewin-vips.conf"

// ipCommand is iproute2's ip: /sbin/ip exists on Debian (a symlink to /bin/ip in the iproute2
// package, also before merged /usr), Ubuntu and RHEL-likes (/sbin -> /usr/sbin).
const ipCommand = "/sbin/ip"

// KeepalivedUnitDropIn renders a systemd drop-in for keepalived.service on a member that runs the
// static keepalived.conf of KeepalivedConfigForNode (no `kubewin gateway` controller): it removes
// exactly the addresses that keepalived.conf lets keepalived add, whenever the service stops.
//
// Why: keepalived removes its addresses only on an orderly exit, or when a newly started VRRP
// child clears what the previous one left (vrrp_restore_interfaces_startup in
// keepalived/vrrp/vrrp.c, v2.2.7). After a SIGKILL of keepalived (OOM killer, kill -9 of the
// service) nothing restarts it — the Debian and upstream units have no Restart= — and its VIPs
// stay on a live host while a peer takes over: two holders for good. systemd runs ExecStopPost
// also when the main process was killed (systemd.service(5), "ExecStopPost="), so the addresses
// go with the process; ExecStartPre clears them before a start as well (keepalived started by
// hand and killed). "-": an address that is not there (the orderly case) is not a failure.
// Tested with real keepalived in namespaces (internal/gateway TestStaticDropInReleasesVIPs).
func KeepalivedUnitDropIn(groups []plan.GatewayGroupPlan, member string) ([]byte, error) {
	// The same checks as the keepalived.conf it belongs to.
	if _, err := KeepalivedConfigForNode(groups, member); err != nil {
		return nil, err
	}
	var mine []plan.GatewayGroupPlan
	for _, g := range groups {
		for _, m := range g.Members {
			if m.Node == member {
				mine = append(mine, g)
				break
			}
		}
	}
	sort.SliceStable(mine, func(i, j int) bool { return mine[i].Name < mine[j].Name })
	names := make([]string, len(mine))
	var dels []string
	for i, g := range mine {
		names[i] = g.Name
		for _, in := range g.Instances {
			for _, a := range instanceAddrs(g, in) {
				dels = append(dels, fmt.Sprintf("-%s addr del %s dev %s", ipCommand, a.addr, a.dev))
			}
		}
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "# keepalived.service drop-in for %s, gateway group %s. %s\n", member, strings.Join(names, ", "), generatedBy)
	fmt.Fprintf(&b, "# Install as %s next to keepalived/keepalived.conf, then systemctl daemon-reload.\n", KeepalivedDropInPath)
	b.WriteString("# keepalived removes its VIPs only when it stops in order; after a SIGKILL (OOM killer, kill -9) they would\n")
	b.WriteString("# stay here while another member holds them too. ExecStopPost runs also after the main process was killed.\n")
	b.WriteString("[Service]\n")
	for _, key := range []string{"ExecStartPre", "ExecStopPost"} {
		for _, d := range dels {
			fmt.Fprintf(&b, "%s=%s\n", key, d)
		}
	}
	return b.Bytes(), nil
}

// advertAnchor is the address an instance without a router VIP advertises: a function of the
// group name and VRID only, so it is the same on every member and survives any change of the
// instance's gateway VIPs. It lies in 127.128.0.0/9 and is added to lo with scope host, where
// it changes nothing: 127.0.0.0/8 is already local through lo's 127.0.0.1/8, the kernel neither
// answers ARP for nor forwards loopback addresses, and keepalived sends no gratuitous ARP for
// it on the gateway segment. It cannot collide with a pod CIDR, a node or a Service address.
// Measured with keepalived 2.2.7 and three members reloaded 300, 500 and 700 ms apart after
// the lowest gateway VIP was removed: no sample (every 10 ms) with two holders, in either
// reload order (TestStaggeredReloadWithoutRouterVIP).
func advertAnchor(group string, vrid int) netip.Addr {
	h := fnv.New32a()
	fmt.Fprintf(h, "%s/%d", group, vrid)
	v := 0x7f800000 | h.Sum32()&0x007fffff
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)})
}

// checkAdvertAnchors rejects the (unlikely) case of two instances without router VIP whose
// advert anchors coincide: members group VRRP routers by advertised address (kubewin check), and
// the anchor must not silently depend on which other groups exist.
func checkAdvertAnchors(groups []plan.GatewayGroupPlan) error {
	seen := map[netip.Addr]string{}
	for _, g := range groups {
		for _, in := range g.Instances {
			if in.RouterVIP != "" {
				continue
			}
			a := advertAnchor(g.Name, in.VRID)
			who := fmt.Sprintf("group %s VRID %d", g.Name, in.VRID)
			// The same group and VRID twice is the duplicate VRID checkGatewayGroup reports.
			if prev, ok := seen[a]; ok && prev != who {
				return fmt.Errorf("%s and %s would both advertise %s; rename one of the groups", prev, who, a)
			}
			seen[a] = who
		}
	}
	return nil
}

// checkGatewayGroup rejects layouts keepalived would refuse or silently change.
func checkGatewayGroup(g plan.GatewayGroupPlan) error {
	if !isKeepalivedWord(g.Interface) {
		return fmt.Errorf("interface %q is not a valid interface name", g.Interface)
	}
	// No instances is valid: a group whose last Windows node was deleted renders global_defs
	// only, and keepalived (which `keepalived -t` accepts) then holds no VIP anywhere.
	names := map[string]bool{}
	vrids := map[int]bool{}
	addrs := map[string]string{}
	for _, in := range g.Instances {
		if !isKeepalivedWord(in.Name) {
			return fmt.Errorf("instance name %q must be one word without spaces, braces or quotes", in.Name)
		}
		if names[in.Name] {
			return fmt.Errorf("instance name %s used twice", in.Name)
		}
		names[in.Name] = true
		if in.VRID < 1 || in.VRID > 255 {
			return fmt.Errorf("instance %s: virtual_router_id %d outside 1-255", in.Name, in.VRID)
		}
		if vrids[in.VRID] {
			return fmt.Errorf("instance %s: virtual_router_id %d used twice on %s", in.Name, in.VRID, g.Interface)
		}
		vrids[in.VRID] = true
		n := len(in.VIPs)
		if in.RouterVIP != "" {
			n++
		}
		if n == 0 {
			return fmt.Errorf("instance %s has no addresses", in.Name)
		}
		if len(in.VIPs) > maxVIPsPerInstance {
			return fmt.Errorf("instance %s carries %d gateway VIPs; at most %d fit one instance", in.Name, len(in.VIPs), maxVIPsPerInstance)
		}
		all := make([]string, 0, n)
		for _, v := range in.VIPs {
			all = append(all, v.Address)
		}
		if in.RouterVIP != "" {
			all = append(all, in.RouterVIP)
		}
		for _, a := range all {
			ip, err := parseAddr(a)
			if err != nil {
				return fmt.Errorf("instance %s: %w", in.Name, err)
			}
			if prev, ok := addrs[ip.String()]; ok {
				return fmt.Errorf("instance %s: address %s already held by instance %s", in.Name, ip, prev)
			}
			addrs[ip.String()] = in.Name
		}
	}
	return nil
}

// splitMembers returns the member named node and the sorted addresses of the others.
func splitMembers(g plan.GatewayGroupPlan, node string) (plan.GatewayMemberPlan, []string, error) {
	var self *plan.GatewayMemberPlan
	var peers []string
	routerIDs := map[string]bool{}
	for i := range g.Members {
		m := g.Members[i]
		if _, err := netip.ParseAddr(m.IP); err != nil {
			return plan.GatewayMemberPlan{}, nil, fmt.Errorf("member %s: IP %q: %w", m.Node, m.IP, err)
		}
		if !isKeepalivedWord(m.RouterID) {
			return plan.GatewayMemberPlan{}, nil, fmt.Errorf("member %s: router_id %q must be one word", m.Node, m.RouterID)
		}
		if routerIDs[m.RouterID] {
			return plan.GatewayMemberPlan{}, nil, fmt.Errorf("member %s: router_id %s is not unique", m.Node, m.RouterID)
		}
		routerIDs[m.RouterID] = true
		if m.Node == node {
			self = &g.Members[i]
			continue
		}
		peers = append(peers, m.IP)
	}
	if self == nil {
		return plan.GatewayMemberPlan{}, nil, fmt.Errorf("%s is not a member", node)
	}
	if self.Priority < 1 || self.Priority > 254 {
		return plan.GatewayMemberPlan{}, nil, fmt.Errorf("member %s: priority %d outside 1-254", node, self.Priority)
	}
	if len(peers) == 0 {
		return plan.GatewayMemberPlan{}, nil, fmt.Errorf("member %s has no peers; a gateway group needs at least two members", node)
	}
	sortAddrs(peers)
	return *self, peers, nil
}

// advertInt formats advert_int: VRRPv2 carries whole seconds (1-255), VRRPv3 centiseconds
// (0.01-40.95 s).
func advertInt(version int, seconds float64) (string, error) {
	switch version {
	case 2:
		if seconds != math.Trunc(seconds) || seconds < 1 || seconds > 255 {
			return "", fmt.Errorf("advert_int %gs: VRRPv2 needs whole seconds 1-255", seconds)
		}
		return strconv.Itoa(int(seconds)), nil
	case 3:
		cs := math.Round(seconds * 100)
		if math.Abs(cs-seconds*100) > 1e-6 || cs < 1 || cs > 4095 {
			return "", fmt.Errorf("advert_int %gs: VRRPv3 needs a multiple of 0.01 s between 0.01 and 40.95", seconds)
		}
		return strconv.FormatFloat(cs/100, 'f', -1, 64), nil
	default:
		return "", fmt.Errorf("vrrp_version %d: expected 2 or 3", version)
	}
}

func parseAddr(s string) (netip.Addr, error) {
	if strings.Contains(s, "/") {
		p, err := netip.ParsePrefix(s)
		if err != nil {
			return netip.Addr{}, fmt.Errorf("address %q: %w", s, err)
		}
		return p.Addr(), nil
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Addr{}, fmt.Errorf("address %q: %w", s, err)
	}
	return a, nil
}

func sortAddrs(ips []string) {
	sort.Slice(ips, func(i, j int) bool {
		a, _ := netip.ParseAddr(ips[i])
		b, _ := netip.ParseAddr(ips[j])
		return a.Less(b)
	})
}

// isKeepalivedWord reports whether s is one token of keepalived's configuration grammar.
func isKeepalivedWord(s string) bool {
	return s != "" && !strings.ContainsAny(s, " \t\r\n{}\"'!#")
}

// ValidateKeepalived runs the real `keepalived -t -f path` and returns its diagnostics as the
// error when it rejects the file. keepalived also rejects interfaces that do not exist, so this
// must run where the configured interface exists (the gateway node, or a test's namespace).
func ValidateKeepalived(ctx context.Context, path string) error {
	return runKeepalivedCheck(ctx, exec.CommandContext(ctx, "keepalived", "-t", "-f", path), path)
}

// ValidateKeepalivedInNetns is ValidateKeepalived inside network namespace netns (ip netns exec).
func ValidateKeepalivedInNetns(ctx context.Context, netns, path string) error {
	return runKeepalivedCheck(ctx, exec.CommandContext(ctx, "ip", "netns", "exec", netns, "keepalived", "-t", "-f", path), path)
}

func runKeepalivedCheck(ctx context.Context, cmd *exec.Cmd, path string) error {
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	err := cmd.Run()
	diag := strings.TrimSpace(out.String())
	if ctxErr := ctx.Err(); ctxErr != nil {
		return fmt.Errorf("keepalived -t %s: %w", path, ctxErr)
	}
	if err != nil {
		if diag == "" {
			return fmt.Errorf("keepalived -t %s: %w", path, err)
		}
		return fmt.Errorf("keepalived -t %s: %w:\n%s", path, err, diag)
	}
	// keepalived exits 0 with warnings it considers harmless; a generated file should have none.
	if diag != "" {
		return fmt.Errorf("keepalived -t %s accepted the file with diagnostics:\n%s", path, diag)
	}
	return nil
}
