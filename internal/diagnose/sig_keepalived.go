package diagnose

// keepalived messages are quoted from acassen/keepalived (keepalived/vrrp/vrrp.c, vrrp_scheduler.c,
// vrrp_sync.c, core/keepalived_netlink.c, lib/scheduler.c); older releases (1.x) word some of them
// differently ("VRRP_Instance(VI_1) ..." instead of "(VI_1) ...", "bogus VRRP packet received"), and
// the field corpus has both.
const refKeepalivedVRRP = "https://github.com/acassen/keepalived/blob/master/keepalived/vrrp/vrrp.c"

// keepalivedSignatures: keepalived's VRRP daemon on the gateways (and on control-plane HA
// pairs, where the field corpus comes from).
func keepalivedSignatures() []Signature {
	return append(keepalivedRuntimeSignatures(), []Signature{
		{
			// vrrp.c vrrp_check_packet: adverts whose VIP list, auth or interval differ from ours are
			// reported and dropped (1.x: "bogus VRRP packet received on %s !!!" followed by
			// "VRRP_Instance(%s) ignoring received advertisment..."). acassen/keepalived#255,
			// easzlab/kubeasz#126, rcbops/chef-cookbooks#379.
			ID: "KEEPALIVED-VRID-CONFLICT", Component: "keepalived", Severity: SevError,
			Title:   "keepalived drops VRRP adverts for its VRID that do not match its own instance",
			Literal: "Keepalived_vrrp",
			Pattern: `Keepalived_vrrp(?:\[\d+\])?: (?:bogus VRRP packet received on (?P<iface>\S+)|` +
				`(?:VRRP_Instance)?\((?P<instance>[^)]+)\):? ignoring received advert|` +
				`(?:\((?P<instance>[^)]+)\) )?ip address associated with VRID(?: \d+)? not present in (?:received packet|advert from \S+|MASTER advert) ?: (?P<ip>\S+)|` +
				`(?:\((?P<instance>[^)]+)\) )?one or more VIP associated with VRID mismatch actual MASTER advert)`,
			Cause: "Another VRRP speaker sends adverts on the same virtual_router_id[[ (seen on {iface})]][[ for instance {instance}]] with a different " +
				"virtual_ipaddress list, auth or advert interval[[ (VIP {ip} is missing from them)]]: two keepalived pairs (or a " +
				"router/another cluster's load balancer) in one broadcast domain reuse the VRID, or the peers' configs differ. " +
				"keepalived drops those adverts, so elections go wrong: unwanted failovers and a VIP held by two nodes.",
			Fix: "Give every keepalived cluster on the segment its own virtual_router_id (1-255), and keep virtual_ipaddress, " +
				"advert_int and authentication identical on the peers of one instance; tcpdump -ni <iface> vrrp shows which " +
				"source addresses advertise the VRID.",
			Refs: []string{"https://github.com/acassen/keepalived/issues/255", "https://github.com/easzlab/kubeasz/issues/126", refKeepalivedVRRP},
		},
		{
			// vrrp.c vrrp_state_master_rx: "(%s) Received advert from %s with lower priority %d, ours %d,
			// forcing new election" (1.x: "VRRP_Instance(%s) Received advert with lower priority ...").
			ID: "KEEPALIVED-SPLIT-BRAIN", Component: "keepalived", Severity: SevWarning,
			Title:   "keepalived MASTER heard another MASTER: both nodes held the VIP",
			Literal: "forcing new election",
			// 1.2.x: "VRRP_Instance(%s) Received lower prio advert %d, forcing new election" and
			// (some 1.x builds) without the priority; the instance prefix is missing where the line was
			// quoted without it.
			Pattern: `(?:(?:VRRP_Instance)?\((?P<instance>[^)]+)\):? )?Received (?:advert (?:from (?P<peer>\S+) )?with lower priority (?P<theirs>\d+), ours (?P<ours>\d+)|lower prio advert(?: (?P<theirs>\d+))?),? forcing new election`,
			Cause: "[[Instance {instance} ]]is MASTER[[ (priority {ours})]] and received a MASTER advert[[ from {peer}]][[ with priority {theirs}]]: the " +
				"other node did not hear this node's adverts and took the VIP too (split brain). The adverts are lost on the way: a " +
				"firewall or security group drops IP protocol 112 / multicast 224.0.0.18, the hypervisor or cloud network filters " +
				"multicast, or the backup's host discards them.",
			Fix: "Allow VRRP between the peers (iptables -I INPUT -p vrrp -j ACCEPT; firewall-cmd --add-rich-rule='rule protocol " +
				"value=\"vrrp\" accept'), or use unicast_src_ip/unicast_peer where multicast does not pass; tcpdump -ni <iface> vrrp on " +
				"both nodes must show the other's adverts.",
			Refs: []string{"https://github.com/acassen/keepalived/issues/632", refKeepalivedVRRP},
		},
		{
			// vrrp_parser.c (1.x/2.0): "Cant find interface %s for vrrp_instance %s !!!"; current
			// releases: "WARNING - interface %s for vrrp_instance %s doesn't exist".
			ID: "KEEPALIVED-NO-INTERFACE", Component: "keepalived", Severity: SevError,
			Title:   "keepalived: the instance's interface does not exist",
			Literal: "for vrrp_instance",
			Pattern: `(?:Cant find interface (?P<iface>\S+) for vrrp_instance (?P<instance>[^\s!,]+)|interface (?P<iface>\S+) for vrrp_instance (?P<instance>[^\s!,]+) doesn't exist)`,
			Cause: "vrrp_instance {instance} names interface {iface}, which does not exist on this host (another machine's NIC name, " +
				"or keepalived runs in a container whose interface is eth0), so the instance is dropped and no VIP is managed.",
			Fix: "Set interface in the vrrp_instance to a name from ip -br link on this host (in a container the container's " +
				"interface, or run it with host networking), then restart keepalived.",
			Refs: []string{"https://github.com/penglongli/haproxy-keepalived/issues/2",
				"https://github.com/acassen/keepalived/blob/master/keepalived/vrrp/vrrp_parser.c"},
		},
		{
			// core/global_parser.c etc.: report_config_error() prefixes "(Line N) "; lib/scheduler.c:
			// "%s exited with permanent error %s. Terminating" when a child fails on its configuration.
			ID: "KEEPALIVED-CONFIG-INVALID", Component: "keepalived", Severity: SevError,
			Title:   "keepalived rejected its configuration",
			Literal: "Keepalived",
			Pattern: `Keepalived(?:_\w+)?(?:\[\d+\])?: \(Line (?P<line>\d+)\) (?P<msg>.*?(?:is invalid|invalid value|[Uu]nknown keyword|doesn't exist|out of range).*)|` +
				`(?P<child>Keepalived_\w+) exited with permanent error CONFIG`,
			Cause: "keepalived.conf is not what keepalived accepts[[: line {line}: {msg}]][[; {child} stopped because of a configuration " +
				"error (for example an interface that does not exist)]]. A rejected value is ignored or the instance is dropped, so the " +
				"VIP is not managed as written.",
			Fix: "Check the file with keepalived -t -f /etc/keepalived/keepalived.conf (keepalived >= 2.0.11), fix the reported lines " +
				"(use values in the documented range, interfaces that exist on this host: ip -br link), then restart keepalived.",
			Refs: []string{"https://github.com/acassen/keepalived/issues/2319", "https://github.com/penglongli/haproxy-keepalived/issues/2",
				"https://github.com/acassen/keepalived/blob/master/lib/scheduler.c"},
		},
		{
			// vrrp.c: "(%s) Entering FAULT STATE", "(%s) entering FAULT state"; vrrp_sync.c:
			// "VRRP_Group(%s) Syncing instances to FAULT state".
			ID: "KEEPALIVED-FAULT", Component: "keepalived", Severity: SevError,
			Title:   "keepalived instance in FAULT state (gave up the VIP)",
			Literal: " FAULT ",
			Pattern: `(?:VRRP_Group\((?P<group>[^)]+)\):? Syncing instances to FAULT state|(?:VRRP_Instance)?\((?P<instance>[^)]+)\):? [Ee]ntering FAULT (?:state|STATE))`,
			Cause: "[[Instance {instance}]][[Sync group {group}]] went to FAULT: its interface or a tracked interface is down or lost " +
				"its address, or a track_script/track_file reports failure, so this node holds no VIP and takes no part in elections. " +
				"If the link is up again and the instance stays in FAULT, keepalived missed the netlink link-up event (a known bug in " +
				"some releases).",
			Fix: "Check the VRRP and tracked interfaces (ip -br addr), the track scripts' exit codes and the preceding keepalived lines; " +
				"once they are healthy the instance leaves FAULT by itself, otherwise restart keepalived and upgrade to a current " +
				"release.",
			Refs: []string{"https://github.com/acassen/keepalived/issues/1532", "https://github.com/acassen/keepalived/issues/2519", refKeepalivedVRRP},
		},
		{
			// vrrp.c vrrp_check_packet: "(%s) received an invalid passwd from %s!" (older: no "from").
			ID: "KEEPALIVED-AUTH-MISMATCH", Component: "keepalived", Severity: SevError,
			Title:   "keepalived drops VRRP adverts with a different auth_pass",
			Literal: "received an invalid passwd",
			Pattern: `(?:VRRP_Instance)?\((?P<instance>[^)]+)\):? received an invalid passwd(?: from (?P<peer>[^\s!]+))?`,
			Cause: "Adverts for instance {instance}[[ from {peer}]] carry another authentication password: the peers' auth_pass differ " +
				"(only the first 8 characters count), or another VRRP speaker uses the same VRID. They are dropped, so the backup " +
				"hears no valid master and takes over.",
			Fix: "Use the same authentication block (auth_type PASS, same auth_pass of at most 8 characters) on all peers of the " +
				"instance, and a virtual_router_id no other VRRP speaker on the segment uses.",
			Refs: []string{"https://github.com/acassen/keepalived/issues/2433", refKeepalivedVRRP},
		},
		{
			// vrrp_scheduler.c: "(%s) Receive advertisement timeout" (the backup becomes MASTER next).
			ID: "KEEPALIVED-ADVERT-TIMEOUT", Component: "keepalived", Severity: SevWarning,
			Title:   "keepalived backup heard no valid advert in time and takes over",
			Literal: "Receive advertisement timeout",
			Pattern: `(?:VRRP_Instance)?\((?P<instance>[^)]+)\):? Receive advertisement timeout`,
			Cause: "Instance {instance} got no valid advert within the master-down interval (3 x advert_int + skew), so it becomes " +
				"MASTER: the master stopped or lost its interface, its adverts are dropped on the way (firewall, multicast " +
				"filtering) or rejected here (auth or VRID mismatch), or the system clock jumped.",
			Fix: "Check that the master is up (systemctl status keepalived) and that its adverts arrive (tcpdump -ni <iface> vrrp); " +
				"allow IP protocol 112 between the peers, fix auth/VRID mismatches reported just before, and keep clocks in step " +
				"(chrony/NTP slewing rather than stepping).",
			Refs: []string{"https://github.com/acassen/keepalived/issues/2433", "https://github.com/acassen/keepalived/issues/1529",
				"https://github.com/acassen/keepalived/blob/master/keepalived/vrrp/vrrp_scheduler.c"},
		},
		{
			// vrrp.c vrrp_send_adv: "(%s): send advert error %d (%m)", "(%s) Cant send advert to %s (%m)".
			ID: "KEEPALIVED-SEND-ADVERT-EPERM", Component: "keepalived", Severity: SevWarning,
			Title:   "keepalived cannot send VRRP adverts: Operation not permitted",
			Literal: "send advert",
			Pattern: `\((?P<instance>[^)]+)\):? (?:send advert error \d+|Cant send advert to (?P<peer>\S+)) \(Operation not permitted\)`,
			Cause: "The kernel refused to send the adverts of {instance}[[ to {peer}]] (EPERM): a local firewall rule rejects outgoing " +
				"VRRP, or the rules were being reloaded (a notify script running iptables/firewalld reload) at that moment. While " +
				"adverts are not sent the backup times out and takes the VIP.",
			Fix: "Allow outgoing VRRP before any reject rule (iptables -I OUTPUT -p vrrp -j ACCEPT, or to the unicast peers), and do not " +
				"reload the whole firewall from notify scripts (apply changes atomically with iptables-restore --noflush / nft -f).",
			Refs: []string{"https://github.com/acassen/keepalived/issues/1934", refKeepalivedVRRP},
		},
		{
			// core/keepalived_netlink.c: "Netlink: error: %s(%d), type=%s(%u), seq=%u, pid=%u".
			ID: "KEEPALIVED-NETLINK-ERROR", Component: "keepalived", Severity: SevError,
			Title:   "kernel refused a keepalived netlink request (address/route change)",
			Literal: "Netlink: error: ",
			Pattern: `Netlink: error: (?P<reason>[^,(]+?)(?:\(\d+\))?, type=(?P<type>[A-Z_]*)\(\d+\)`,
			Cause: "The kernel rejected a netlink request from keepalived ({reason}[[, message type {type}]]): \"Operation not permitted\" " +
				"means keepalived lacks CAP_NET_ADMIN (a container without NET_ADMIN/host network), so it cannot add the VIPs; " +
				"\"No such process\" on a delete means the address or route is already gone (its interface went down).",
			Fix: "Run keepalived with NET_ADMIN (and NET_BROADCAST, NET_RAW) and host networking when containerised; for delete " +
				"errors check why the interface went down (ip monitor link) and that the virtual routes/addresses are still wanted.",
			Refs: []string{"https://github.com/acassen/keepalived/issues/427", "https://github.com/acassen/keepalived/issues/2519",
				"https://github.com/acassen/keepalived/blob/master/keepalived/core/keepalived_netlink.c"},
		},
		{
			// core/keepalived_netlink.c: "Netlink: Cannot open netlink socket : (%s)".
			ID: "KEEPALIVED-NETLINK-SOCKET", Component: "keepalived", Severity: SevError,
			Title:   "keepalived cannot open its netlink socket",
			Literal: "Cannot open netlink socket",
			Pattern: `Netlink: Cannot open netlink socket : \((?P<reason>[^)]*)\)`,
			Cause: "keepalived could not open the netlink socket it uses to learn interfaces and addresses ({reason}), so it does " +
				"not see the interfaces and the instances cannot work: it was reloaded (SIGHUP) while still starting up, or the " +
				"socket is not allowed (container/seccomp restrictions, resource limits).",
			Fix: "Restart keepalived (not reload) and avoid reloading it during start-up (order config-management reloads after " +
				"start completes); in containers grant NET_ADMIN and host networking; upgrade to a current release.",
			Refs: []string{"https://github.com/acassen/keepalived/issues/638",
				"https://github.com/acassen/keepalived/blob/master/keepalived/core/keepalived_netlink.c"},
		},
		{
			// keepalived_netlink.c before the MSG_TRUNC handling (acassen/keepalived#1036): many
			// interfaces (containers, veths) overflow the netlink receive buffer.
			ID: "KEEPALIVED-NETLINK-TRUNCATED", Component: "keepalived", Severity: SevError,
			Title:   "keepalived's netlink messages are truncated",
			Literal: "message truncated",
			Pattern: `Netlink(?:: error:)? message truncated`,
			Cause: "keepalived's netlink receive buffer is smaller than the kernel's reply (hosts with many interfaces: containers, veth " +
				"pairs), so it misses address and link events and may not add or remove the VIPs.",
			Fix: "Upgrade keepalived (2.0.9+ handles MSG_TRUNC), or raise vrrp_netlink_cmd_rcv_bufs / vrrp_netlink_monitor_rcv_bufs " +
				"(with _force) in global_defs.",
			Refs: []string{"https://github.com/acassen/keepalived/issues/1036", refKeepalivedVRRP},
		},
		{
			// vrrp.c vrrp_send_pkt: acassen/keepalived#905 (a network restart took the VLAN down).
			ID: "KEEPALIVED-ADVERT-UNREACHABLE", Component: "keepalived", Severity: SevError,
			Title:   "keepalived cannot send its adverts: no route to the peer",
			Literal: "Cant sent advert",
			Pattern: `Cant sent advert to (?P<peer>\S+) \((?P<reason>[^)]+)\)`,
			Cause: "The VRRP advert to {peer} could not be sent ({reason}): the instance's interface or its address or route is gone " +
				"(a network restart, a bond or VLAN going down), so the peer hears nothing and takes over.",
			Fix: "Check ip -br addr and ip route on the interface; after restarting networking, restart keepalived so it re-binds and " +
				"re-adds its VIPs.",
			Refs: []string{"https://github.com/acassen/keepalived/issues/905", refKeepalivedVRRP},
		},
		{
			// keepalived_netlink.c: the link of an instance's interface went down (acassen/keepalived#905).
			ID: "KEEPALIVED-INTERFACE-DOWN", Component: "keepalived", Severity: SevWarning,
			Title:   "keepalived: an interface it uses went down",
			Literal: "Kernel is reporting: interface",
			Pattern: `Kernel is reporting: interface (?P<iface>\S+) DOWN`,
			Cause: "Interface {iface} went down, so the instances on it go to FAULT and release their VIPs; after a network restart " +
				"older keepalived releases do not always re-add them when the link comes back.",
			Fix: "Find why {iface} went down (ip -s link show {iface}, journalctl -k); once it is up, check the VIPs are back (ip addr) " +
				"and restart keepalived if not.",
			Refs: []string{"https://github.com/acassen/keepalived/issues/905"},
		},
	}...)
}
