package diagnose

// keepalived's run-time messages: track and check scripts, script security, the IPVS
// healthcheckers and the VRRP sockets. The formats are read from acassen/keepalived at the tags
// named in each comment (1.2.24, 1.3.9, 2.0.20, 2.4.3); a message's wording changed between the
// 1.x and 2.x series, so the patterns take both. keepalived prints most of them at LOG_INFO, so
// the level of the syslog line says nothing: the entry's severity is what the message means for
// the VIP or the virtual server.
const (
	refKeepalivedScheduler = "https://github.com/acassen/keepalived/blob/master/keepalived/vrrp/vrrp_scheduler.c"
	refKeepalivedNotify    = "https://github.com/acassen/keepalived/blob/master/lib/notify.c"
	refKeepalivedIPWrapper = "https://github.com/acassen/keepalived/blob/master/keepalived/check/ipwrapper.c"
	refKeepalivedConfig    = "https://keepalived.readthedocs.io/en/latest/configuration_synopsis.html"
)

// Shared texts of the healthchecker entries: one real server failing its check, whatever the
// checker (TCP_CHECK, HTTP_GET, SSL_GET, MISC_CHECK) and whatever the release's wording.
const (
	kaCheckCause = "keepalived's healthchecker could not reach real server {rs}[[ ({what})]]: the service on it is down or " +
		"not listening on that address and port, a firewall between the load balancer and the server drops the " +
		"probe, or connect_timeout is shorter than the server's answer. After the retries run out the server is " +
		"removed from its virtual server (IPVS stops sending it traffic)."
	kaCheckFix = "From the load balancer, try the check by hand (nc -vz <ip> <port>, curl -v http://<ip>:<port><url>); " +
		"check the service on the real server (ss -ltnp) and the firewall in between; raise connect_timeout / retry " +
		"in the real_server's checker block if the server is only slow. ipvsadm -Ln shows which servers are in."
)

// Shared texts of the script entries: a script keepalived will not run.
const (
	kaScriptDisabledCause = "keepalived will not run script[[ {script}]][[ (no usable script user {user})]]: it is missing or " +
		"not executable by the script user, it or a directory above it is writable by a non-root user while " +
		"enable_script_security is set, or the user to run it as does not exist. A disabled track script no longer " +
		"influences the instance, a removed check no longer tests its server, so failover does not follow the " +
		"checked service."
	kaScriptDisabledFix = "Check the path and permissions: ls -l the script and every directory above it (owned by root, not " +
		"group/world writable, chmod 755), make it executable with a valid #! line, and create the script user " +
		"(useradd -r -s /sbin/nologin keepalived_script) or set script_user in global_defs; then reload keepalived."
)

// keepalivedRuntimeSignatures: messages keepalived prints while running (its config parser's
// messages are KEEPALIVED-CONFIG-INVALID and the source entry KEEPALIVED-SRC-CONFIG).
func keepalivedRuntimeSignatures() []Signature {
	return []Signature{
		{
			// 2.x vrrp.c open_sockpool_socket: "(%s): entering FAULT state (src address not
			// configured)" — the instance's source address (unicast_src_ip, or the interface's
			// primary address) is not on the interface when its socket is opened. Must precede
			// KEEPALIVED-FAULT, which names the generic reasons.
			ID: "KEEPALIVED-SRC-ADDR-MISSING", Component: "keepalived", Severity: SevError,
			Title:   "keepalived instance in FAULT: its source address is not configured",
			Literal: "src address not configured",
			Pattern: `(?:\((?P<instance>[^)]+)\):? )?entering FAULT state \(src address not configured\)`,
			Cause: "[[Instance {instance}: ]]keepalived could not bind the VRRP socket because the source address it must send " +
				"from is not on the interface: unicast_src_ip names an address this host does not have (a config copied from " +
				"the peer), or keepalived started before the network had put the address on the interface. The instance " +
				"stays in FAULT and holds no VIP.",
			Fix: "Set unicast_src_ip to an address shown by ip -br addr on the instance's interface (each peer its own), or " +
				"order keepalived after the network (systemd After=network-online.target, Wants=network-online.target), then " +
				"restart keepalived.",
			FixLinux: "Set unicast_src_ip to an address shown by ip -br addr on the instance's interface (each peer its own), " +
				"or order keepalived after the network (systemctl edit keepalived: After=network-online.target), then " +
				"systemctl restart keepalived.",
			Refs: []string{refKeepalivedVRRP},
		},
		{
			// 2.x vrrp.c open_vrrp_read_socket: "bind unicast_src %s failed %d - %m".
			ID: "KEEPALIVED-UNICAST-SRC-BIND", Component: "keepalived", Severity: SevError,
			Title:   "keepalived cannot bind its unicast source address",
			Literal: "bind unicast_src",
			Pattern: `bind unicast_src (?P<ip>\S+) failed (?P<errno>\d+) - (?P<reason>[^\n]+)`,
			Cause: "keepalived could not bind its VRRP socket to unicast_src_ip {ip} (errno {errno}: {reason}). \"Cannot " +
				"assign requested address\" (99) means the address is not on any interface of this host: the peer's " +
				"address was copied into this node's config, or the address is added later (DHCP, a bond or VLAN " +
				"coming up after keepalived). The instance cannot send or receive adverts and goes to FAULT.",
			Fix: "Set unicast_src_ip to this node's own address (ip -br addr) and list the other node in unicast_peer; start " +
				"keepalived after the interface has its address, then restart it.",
			Refs: []string{refKeepalivedVRRP},
		},
		{
			// vrrp.c open_vrrp_send_socket/open_vrrp_read_socket (1.2.24 ... 2.4.3): "cant open raw
			// socket. errno=%d" (and "unknown family=%d").
			ID: "KEEPALIVED-RAW-SOCKET", Component: "keepalived", Severity: SevError,
			Title:   "keepalived cannot open its raw VRRP socket",
			Literal: "open raw socket",
			Pattern: `cant open raw socket\. (?:errno=(?P<errno>\d+)|unknown family=(?P<family>\d+))`,
			Cause: "keepalived could not open the raw IP socket VRRP uses[[ (errno {errno})]][[ (address family {family})]]: " +
				"errno 1 (EPERM) means it lacks CAP_NET_RAW — it runs as a non-root user, or in a container without " +
				"NET_RAW/NET_ADMIN; 97 (EAFNOSUPPORT) means IPv6 is disabled for an IPv6 instance. No adverts are sent or " +
				"received, so the instance cannot hold the VIP.",
			Fix: "Run keepalived as root, or in its container with host networking and the NET_ADMIN, NET_BROADCAST and " +
				"NET_RAW capabilities; for IPv6 instances enable IPv6 on the interface (sysctl net.ipv6.conf.<if>.disable_ipv6=0).",
			Refs: []string{refKeepalivedVRRP},
		},
		{
			// vrrp_scheduler.c vrrp_script_child_thread: 1.x "VRRP_Script(%s) failed" / "timed out";
			// 2.x "VRRP_Script(%s) %s (%s %d)" with "failed"/"timed out" and "exited with status" /
			// "exited due to signal". A timed-out script is sent SIGTERM by keepalived.
			ID: "KEEPALIVED-TRACK-SCRIPT-FAILED", Component: "keepalived", Severity: SevError,
			Title:   "keepalived track script failed",
			Literal: "VRRP_Script(",
			Pattern: `VRRP_Script\((?P<script>[^)]+)\) (?P<result>failed|timed out)(?: \((?P<reason>exited with status|exited due to signal|[a-z ]+?) (?P<code>\d+)\))?`,
			Cause: "Track script {script} {result}[[ ({reason} {code})]]: keepalived lowers the instance's priority by the " +
				"script's weight, or puts the instance into FAULT when the script has no weight, so the VIP moves to the " +
				"other node. The script reports what it checks as unhealthy (on control-plane nodes usually the local API " +
				"server or HAProxy, not started yet or not answering on the checked port), it ran longer than its timeout " +
				"(keepalived then kills it), or it cannot run as the script user (permissions, missing interpreter).",
			Fix: "Run the script as keepalived does (sudo -u keepalived_script <script>; echo $?, or as root without " +
				"script_user) and fix what it reports; raise timeout/interval in the vrrp_script block if it is only slow, and " +
				"give it fall/rise so one failed probe does not move the VIP.",
			Refs: []string{refKeepalivedScheduler, refKeepalivedConfig},
		},
		{
			// 2.x vrrp_scheduler.c vrrp_script_child_thread: "Script `%s` now returning %d" (a status
			// change of a script with a weight; 0 is success).
			ID: "KEEPALIVED-TRACK-SCRIPT-NONZERO", Component: "keepalived", Severity: SevError,
			Title:   "keepalived track script now returns a failure status",
			Literal: "now returning",
			Pattern: "Script `(?P<script>[^`]+)` now returning (?P<code>[1-9]\\d*)",
			Cause: "Track script {script} now exits with status {code} (non-zero is failure): keepalived applies its weight to " +
				"the instance's priority (or FAULT), so the VIP may move to the other node. The script reports the checked " +
				"service (the local API server, HAProxy) as down, or fails on its own (path, permissions, timeout).",
			Fix: "Run the script by hand as the script user and read what fails (sudo -u keepalived_script <script>; echo $?); " +
				"fix the checked service or the script, and give the vrrp_script fall/rise so one failed probe does not move " +
				"the VIP.",
			Refs: []string{refKeepalivedScheduler},
		},
		{
			// lib/scheduler.c report_child_status (1.2.24 ... 2.4.3): "%s exited due to signal %d"
			// (2.x adds the signal's name). A script keepalived timed out gets SIGTERM (vrrp_scheduler.c
			// vrrp_script_timeout_thread: kill(-pid, SIGTERM)), SIGKILL if it ignores that; a child
			// process of keepalived killed by SIGSEGV crashed.
			ID: "KEEPALIVED-CHILD-SIGNALLED", Component: "keepalived", Severity: SevError,
			Title:   "a keepalived script or child process was killed by a signal",
			Literal: "exited due to ",
			Pattern: `(?:^|[\s:])(?P<prog>/\S+|pid \d+|Keepalived_\w+|[\w.-]+\.sh) exited due to (?:signal (?P<sig>\d+)|segmentation fault)`,
			Cause: "{prog} was killed[[ by signal {sig}]]. For a track or notify script, signal 15 (SIGTERM) means keepalived " +
				"stopped it because it ran longer than the vrrp_script's timeout (9, SIGKILL: it ignored SIGTERM): the script " +
				"hangs, usually on a network call without its own timeout (curl or nc to an API server that does not answer). " +
				"The script counts as failed, so the instance's priority drops or it goes to FAULT. For a keepalived process " +
				"(Keepalived_vrrp, Keepalived_healthcheckers) signal 11 is a crash.",
			Fix: "Give the script's network calls their own short timeouts (curl --max-time 2, nc -w 2) below the vrrp_script " +
				"timeout, or raise timeout; for a crashed keepalived process upgrade keepalived and report the core dump " +
				"(coredumpctl info keepalived).",
			Refs: []string{"https://github.com/acassen/keepalived/blob/master/lib/scheduler.c", refKeepalivedScheduler},
		},
		{
			// vrrp.c check_vrrp_script_security, check_data.c, main.c (1.3.9 ... 2.4.3): "SECURITY
			// VIOLATION - [check |start/shutdown ]scripts are being executed but script_security not
			// enabled.%s".
			ID: "KEEPALIVED-SCRIPT-SECURITY", Component: "keepalived", Severity: SevWarning,
			Title:   "keepalived runs scripts without script security",
			Literal: "SECURITY VIOLATION",
			Pattern: `SECURITY VIOLATION - (?P<kind>(?:check |start/shutdown )?scripts) are being executed but script_security not enabled`,
			Cause: "The configuration runs {kind} (vrrp_script, notify or MISC_CHECK) but global_defs has no " +
				"enable_script_security, so keepalived runs them as root without checking that they, and the directories " +
				"above them, are writable only by root. The scripts still run; this is a hardening warning, not the " +
				"cause of a failover.",
			Fix: "Add enable_script_security (and script_user <user>, or create the keepalived_script user) to global_defs, " +
				"make each script and its directories owned by root and not writable by others (chmod 755), then reload " +
				"keepalived.",
			Refs: []string{refKeepalivedNotify, refKeepalivedConfig},
		},
		{
			// lib/notify.c set_uid_gid (1.3.9 ... 2.1.5): "WARNING - default user '%s' for script
			// execution does not exist - please create.", and the other wording "Default script user
			// '%s' does not exist" / "Script user '%s' does not exist".
			ID: "KEEPALIVED-SCRIPT-USER-MISSING", Component: "keepalived", Severity: SevWarning,
			Title:   "keepalived's script user does not exist",
			Literal: "does not exist",
			Pattern: `(?:default user '(?P<user>[^']+)' for script execution does not exist|(?:Default s|S)cript user '(?P<user>[^']+)' does not exist)`,
			Cause: "No script_user is set and the user {user} that keepalived runs scripts as by default does not exist, so it " +
				"falls back to running them as root (and with enable_script_security it may refuse or remove scripts). " +
				"Usually harmless on its own; a track script that needs another user's rights may fail.",
			Fix: "Create the user (useradd -r -s /sbin/nologin keepalived_script) or set script_user root (or another user) in " +
				"global_defs, then reload keepalived.",
			Refs: []string{refKeepalivedNotify, refKeepalivedConfig},
		},
		{
			// lib/notify.c check_security (1.3.9 ... 2.4.3): "Unsafe permissions found for script
			// '%s'[ - disabling].", "check_script_secure could not find script '%s'[ - disabling]",
			// "WARNING - script '%s' is not executable for uid:gid %d:%d - disabling."
			ID: "KEEPALIVED-SCRIPT-DISABLED", Component: "keepalived", Severity: SevError,
			Title:   "keepalived disabled a script it cannot run safely",
			Literal: "script '",
			Pattern: `(?:Unsafe permissions found for script '(?P<script>[^']+)'|` +
				`check_script_secure could not find script '(?P<script>[^']+)'|` +
				`script '(?P<script>[^']+)' is not executable for uid:gid \S+ - disabling)`,
			Cause: kaScriptDisabledCause,
			Fix:   kaScriptDisabledFix,
			Refs:  []string{refKeepalivedNotify, refKeepalivedConfig},
		},
		{
			// vrrp.c, check_misc.c, lib/notify.c (1.3.9 ... 2.4.3): "Disabling track script %s due to
			// insecure", "Disabling misc script %s due to insecure", "Disabling notify script %s due
			// to insecure".
			ID: "KEEPALIVED-SCRIPT-INSECURE", Component: "keepalived", Severity: SevError,
			Title:   "keepalived disabled an insecure script",
			Literal: "due to insecure",
			Pattern: `Disabling (?:track |misc |notify )?script (?P<script>\S+) due to insecure`,
			Cause:   kaScriptDisabledCause,
			Fix:     kaScriptDisabledFix,
			Refs:    []string{refKeepalivedNotify, refKeepalivedConfig},
		},
		{
			// vrrp_parser.c vrrp_vscript_end_handler, check_misc.c misc_end_handler (1.3.9 ... 2.4.3):
			// "Unable to set default user for vrrp script %s - removing", "... misc script %s -
			// removing"; lib/notify.c get_default_script_user "Unable to set default user %s for script".
			ID: "KEEPALIVED-SCRIPT-REMOVED", Component: "keepalived", Severity: SevError,
			Title:   "keepalived removed a script: no user to run it as",
			Literal: "Unable to set default user",
			Pattern: `Unable to set default user (?:for (?:vrrp|misc) script (?P<script>\S+) - removing|(?P<user>\S+) for script)`,
			Cause:   kaScriptDisabledCause,
			Fix:     kaScriptDisabledFix,
			Refs:    []string{refKeepalivedNotify, refKeepalivedConfig},
		},
		{
			// check_http.c timeout_epilog (1.2.24 ... 2.4.3): "%s server %s." with "Timeout
			// connecting" (logged when the check fails; older releases "Timeout connect, timeout").
			ID: "KEEPALIVED-CHECK-TIMEOUT", Component: "keepalived", Severity: SevError,
			Title:   "keepalived healthcheck to a real server timed out",
			Literal: "Timeout connect",
			Pattern: `(?P<what>Timeout connect(?:ing)?)[^\[\n]*?server (?P<rs>\[[^\]]+\]:\d+)`,
			Cause:   kaCheckCause,
			Fix:     kaCheckFix,
			Refs:    []string{"https://github.com/acassen/keepalived/blob/master/keepalived/check/check_http.c"},
		},
		{
			// check_http.c (1.2.24 ... 2.4.3): timeout_epilog(thread, "Error connecting") prints
			// "Error connecting server %s."; check_smtp.c "Error connecting to server %s".
			ID: "KEEPALIVED-CHECK-CONNECT-ERROR", Component: "keepalived", Severity: SevError,
			Title:   "keepalived healthcheck cannot connect to a real server",
			Literal: "Error connecting",
			Pattern: `(?P<what>Error connecting) (?:to )?server (?P<rs>\[[^\]]+\]:\d+|\S+)`,
			Cause:   kaCheckCause,
			Fix:     kaCheckFix,
			Refs:    []string{"https://github.com/acassen/keepalived/blob/master/keepalived/check/check_http.c"},
		},
		{
			// check_tcp.c (1.2.24 ... 2.4.3): "TCP connection to %s failed." / "timeout." / "timedout."
			ID: "KEEPALIVED-CHECK-TCP", Component: "keepalived", Severity: SevError,
			Title:   "keepalived TCP_CHECK to a real server failed",
			Literal: "TCP connection to",
			Pattern: `TCP connection to (?P<rs>\S+) (?P<what>failed|timeout|timedout)`,
			Cause:   kaCheckCause,
			Fix:     kaCheckFix,
			Refs:    []string{"https://github.com/acassen/keepalived/blob/master/keepalived/check/check_tcp.c"},
		},
		{
			// check_tcp.c/check_http.c 1.x: "Check on service %s failed after %d retry."; 2.x:
			// "TCP_CHECK on service %s failed after %u retries.", "%s_CHECK on service …" (HTTP,
			// SSL), check_udp.c "UDP_CHECK …", check_ping.c "ICMP CHECK on service %s of %s …".
			ID: "KEEPALIVED-CHECK-RETRIES", Component: "keepalived", Severity: SevError,
			Title:   "keepalived gave up on a real server after its retries",
			Literal: "on service",
			Pattern: `(?:Check|\w+[_ ]CHECK) on service (?P<rs>\S+?)(?: of \S+)? failed after (?P<n>\d+) retr(?:y|ies)`,
			Cause: "Real server {rs} failed its healthcheck {n} times in a row, so keepalived removes it from the virtual " +
				"server (IPVS sends it no more traffic). The service on it is down or not listening there, a firewall drops " +
				"the probe, or the check's timeout/URL does not fit the service.",
			Fix: kaCheckFix,
			Refs: []string{"https://github.com/acassen/keepalived/blob/master/keepalived/check/check_tcp.c",
				"https://github.com/acassen/keepalived/blob/master/keepalived/check/check_http.c"},
		},
		{
			// ipwrapper.c 1.x: "Removing service %s from VS %s"; 2.x "%s %sservice %s from VS %s"
			// ("Removing service", "Removing sorry server").
			ID: "KEEPALIVED-REAL-SERVER-REMOVED", Component: "keepalived", Severity: SevWarning,
			Title:   "keepalived removed a real server from its virtual server",
			Literal: "from VS ",
			Pattern: `Removing (?:(?:alive |dead )?service|(?P<sorry>sorry server)) (?P<rs>\S+) from VS (?P<vs>\S+)`,
			Cause: "Real server {rs} failed its healthcheck, so keepalived took it out of virtual server {vs}: IPVS no longer " +
				"sends it traffic until the check passes again. The lines before it say which check failed and why.",
			Fix: "Find the failing check just before (timeouts, connect errors, script status) and fix the service on " +
				"{rs}; ipvsadm -Ln shows the servers in {vs} now.",
			Refs: []string{refKeepalivedIPWrapper},
		},
		{
			// ipwrapper.c 1.x: "Lost quorum %lu-%lu=%li > %li for VS %s"; 2.x "%s %u-%u=%d > %d for VS
			// %s" with "Lost quorum" or "Starting with quorum down".
			ID: "KEEPALIVED-QUORUM-LOST", Component: "keepalived", Severity: SevError,
			Title:   "keepalived virtual server lost its quorum of real servers",
			Literal: "quorum",
			Pattern: `(?:Lost quorum|Starting with quorum down) (?P<calc>\S+) > (?P<quorum>\d+) for VS (?P<vs>\S+)`,
			Cause: "Too few real servers of virtual server {vs} pass their healthchecks ({calc} > {quorum}): keepalived runs " +
				"its quorum_down action and, with a sorry_server, sends the traffic there; a VRRP instance tracking this " +
				"may give up the VIP. All or most backends failing at once points at the checks (network path, firewall, " +
				"a wrong port or URL) rather than at every server.",
			Fix: "Look at the checks that failed just before (connect timeouts, script status) and test one by hand from the " +
				"load balancer; fix the servers or the check definitions; lower quorum if fewer servers are enough.",
			Refs: []string{refKeepalivedIPWrapper},
		},
		{
			// check_misc.c 1.x: "Misc check to [%s] for [%s] failed." / "timed out."; 2.x "Misc check
			// for [%s VS %s] by [%s] %s%s." with "failed" / "timed out".
			ID: "KEEPALIVED-MISC-CHECK-FAILED", Component: "keepalived", Severity: SevError,
			Title:   "keepalived MISC_CHECK script failed for a real server",
			Literal: "Misc check",
			Pattern: `Misc check (?:to \[(?P<rs>[^\]]+)\] for \[(?P<script>[^\]]+)\]|for \[(?P<rs>.+?) VS .+?\] by \[(?P<script>[^\]]+)\]) (?P<result>failed|timed out)`,
			Cause: "The MISC_CHECK script {script} for real server {rs} {result}, so the server counts as down and is removed " +
				"from its virtual server: the checked service failed, or the script itself fails (path, permissions, script " +
				"user, a timeout shorter than the script needs).",
			Fix: "Run the script by hand with the same arguments as the script user and check its exit code (0 is up); " +
				"fix the service or the script, or raise misc_timeout.",
			Refs: []string{"https://github.com/acassen/keepalived/blob/master/keepalived/check/check_misc.c"},
		},
		{
			// ipvswrapper.c (1.2.24 ... 2.4.3): "IPVS: Can't initialize ipvs: %s" (ipvs_strerror).
			ID: "KEEPALIVED-IPVS-INIT", Component: "keepalived", Severity: SevError,
			Title:   "keepalived cannot use IPVS",
			Literal: "initialize ipvs",
			Pattern: `IPVS: Can't initialize ipvs: (?P<reason>[^\n]+)`,
			Cause: "keepalived's healthchecker could not talk to the kernel's IPVS ({reason}): the ip_vs module is not loaded " +
				"or not built for this kernel, or keepalived runs in a container without NET_ADMIN or without the module " +
				"loaded on the host. No virtual servers are programmed.",
			Fix: "Load the module on the host (modprobe ip_vs; add it to /etc/modules-load.d/), check lsmod | grep ip_vs, and " +
				"run keepalived with NET_ADMIN and host networking when containerised.",
			Refs: []string{"https://github.com/acassen/keepalived/blob/master/keepalived/check/ipvswrapper.c"},
		},
	}
}
