package diagnose

import (
	"strings"
	"testing"
)

// TestKeepalivedWordingsAcrossReleases: one entry covers a message in every wording keepalived
// printed it (acassen/keepalived at the tags named; the lines are built from those formats, with
// invented hosts and addresses), and lines that only look alike are not claimed.
func TestKeepalivedWordingsAcrossReleases(t *testing.T) {
	cat := mustCatalogue(t)
	for _, tc := range []struct{ name, line, want string }{
		// vrrp.c vrrp_state_master_rx: 1.2.24 "VRRP_Instance(%s) Received lower prio advert %d, forcing new election".
		{"advert 1.2", "May  2 10:00:01 lb1 Keepalived_vrrp[900]: VRRP_Instance(VI_1) Received lower prio advert 100, forcing new election", "KEEPALIVED-SPLIT-BRAIN"},
		{"advert 1.x no prio", "May  2 10:00:01 lb1 Keepalived_vrrp[900]: VRRP_Instance(VI_1) Received lower prio advert, forcing new election", "KEEPALIVED-SPLIT-BRAIN"},
		// 2.x "(%s) Received advert from %s with lower priority %d, ours %d%s", quoted without the instance.
		{"advert 2.x bare", "Received advert from 192.0.2.7 with lower priority 50, ours 150, forcing new election", "KEEPALIVED-SPLIT-BRAIN"},
		// vrrp_scheduler.c: 1.3.9 "VRRP_Script(%s) timed out"; 2.x "VRRP_Script(%s) %s (%s %d)".
		{"script 1.3 timed out", "Keepalived_vrrp[9]: VRRP_Script(chk_api) timed out", "KEEPALIVED-TRACK-SCRIPT-FAILED"},
		{"script 2.x signal", "Keepalived_vrrp[9]: VRRP_Script(chk_api) failed (exited due to signal 15)", "KEEPALIVED-TRACK-SCRIPT-FAILED"},
		// lib/scheduler.c report_child_status: 2.4.3 "pid %d exited due to signal %d (%s)".
		{"pid signalled", "Keepalived_vrrp[9]: pid 4242 exited due to signal 15 (Terminated)", "KEEPALIVED-CHILD-SIGNALLED"},
		{"keepalived child crash", "Keepalived[8]: Keepalived_vrrp exited due to segmentation fault (SIGSEGV).", "KEEPALIVED-CHILD-SIGNALLED"},
		// check_tcp.c/check_http.c 1.x "Check on service %s failed after %d retry."; 2.x "%s_CHECK ... retries.".
		{"retries 1.x", "Keepalived_healthcheckers[7]: Check on service [192.0.2.30]:8080 failed after 3 retry.", "KEEPALIVED-CHECK-RETRIES"},
		{"retries 2.x http", "Keepalived_healthcheckers[7]: HTTP_CHECK on service [192.0.2.30]:tcp:8080 failed after 1 retries.", "KEEPALIVED-CHECK-RETRIES"},
		{"retries 2.x icmp", "Keepalived_healthcheckers[7]: ICMP CHECK on service [192.0.2.30]:icmp:0 of [203.0.113.9]:tcp:80 failed after 2 retries.", "KEEPALIVED-CHECK-RETRIES"},
		// check_misc.c 1.x "Misc check to [%s] for [%s] timed out".
		{"misc 1.x", "Keepalived_healthcheckers[7]: Misc check to [192.0.2.31] for [/usr/local/bin/db_ok 192.0.2.31] timed out", "KEEPALIVED-MISC-CHECK-FAILED"},
		// ipwrapper.c 2.x "%s %u-%u=%d > %d for VS %s" ("Starting with quorum down").
		{"quorum 2.x", "Keepalived_healthcheckers[7]: Starting with quorum down 2-1=1 > 1 for VS [203.0.113.9]:tcp:80", "KEEPALIVED-QUORUM-LOST"},
		// check_http.c timeout_epilog, older wording.
		{"timeout old", "Timeout connect, timeout server [192.0.2.32]:443.", "KEEPALIVED-CHECK-TIMEOUT"},
		// lib/notify.c 2.0.20 "WARNING - default user '%s' for script execution does not exist - please create.".
		{"default user", "Keepalived_vrrp[9]: WARNING - default user 'keepalived_script' for script execution does not exist - please create.", "KEEPALIVED-SCRIPT-USER-MISSING"},
		{"security vrrp", "Keepalived_vrrp[9]: SECURITY VIOLATION - scripts are being executed but script_security not enabled.", "KEEPALIVED-SCRIPT-SECURITY"},
		{"misc insecure", "Keepalived_healthcheckers[7]: Disabling misc script /opt/x.sh due to insecure", "KEEPALIVED-SCRIPT-INSECURE"},
		{"not executable", "Keepalived_vrrp[9]: WARNING - script '/opt/x.sh' is not executable for uid:gid 0:0 - disabling.", "KEEPALIVED-SCRIPT-DISABLED"},
		// Near misses: success messages and other programs' wording.
		{"script succeeded", "Keepalived_vrrp[9]: VRRP_Script(chk_api) succeeded", ""},
		{"tcp success", "Keepalived_healthcheckers[7]: TCP connection to [192.0.2.30]:80 success.", ""},
		{"gained quorum", "Keepalived_healthcheckers[7]: Gained quorum 1+0=1 <= 1 for VS [203.0.113.9]:tcp:80", ""},
		{"etcd quorum", "etcdserver: lost quorum, the cluster has 1 of 3 members", ""},
		{"adding service", "Keepalived_healthcheckers[7]: Adding service [192.0.2.30]:tcp:80 to VS [203.0.113.9]:tcp:80", ""},
		{"returning zero", "Keepalived_vrrp[9]: Script `chk_api` now returning 0", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ids := findingIDs(scanText(t, cat, tc.line+"\n"))
			if tc.want == "" {
				for id, f := range ids {
					if strings.HasPrefix(id, "KEEPALIVED-") && f.Severity != SevInfo {
						t.Errorf("%q gave %s", tc.line, id)
					}
				}
				return
			}
			if _, ok := ids[tc.want]; !ok {
				t.Errorf("%q: want %s, got %v", tc.line, tc.want, keys(ids))
			}
		})
	}
}

// TestPowerShellRecordOneFinding: the rows of one error record (message, its wrapped second half,
// position, the "+ ~~~" marker, CategoryInfo, FullyQualifiedErrorId) give one finding, while a row
// seen without its message line still says what failed.
func TestPowerShellRecordOneFinding(t *testing.T) {
	cat := mustCatalogue(t)
	record := strings.Join([]string{
		"Add-KubeNode : The term 'Add-KubeNode' is not recognized as the name of a cmdlet, function, script",
		"file, or operable program. Check the spelling of the name, or if a path was included, verify that the path is correct and try again.",
		"At C:\\k\\Join.ps1:57 char:1",
		"+ Add-KubeNode -Name win-1",
		"+ ~~~~~~~~~~~~",
		"    + CategoryInfo          : ObjectNotFound: (Add-KubeNode:String) [], CommandNotFoundException",
		"    + FullyQualifiedErrorId : CommandNotFoundException",
		"",
	}, "\n")
	r := scanText(t, cat, record)
	if len(r.Findings) != 1 || r.Findings[0].ID != "WIN-PS-COMMAND-NOT-FOUND" || len(r.Unmatched) != 0 {
		t.Fatalf("record: findings %v, unmatched %d; want one WIN-PS-COMMAND-NOT-FOUND", keys(findingIDs(r)), len(r.Unmatched))
	}
	if f := r.Findings[0]; !strings.Contains(f.Cause, "Add-KubeNode") {
		t.Errorf("cause does not name the command: %s", f.Cause)
	}
	for _, tc := range []struct{ row, want string }{
		{"At C:\\k\\Join.ps1:57 char:1", "WIN-PS-ERROR-POSITION"},
		{"    + FullyQualifiedErrorId : CmdletizationQuery_NotFound,Get-NetIPAddress", "WIN-PS-CIM-NOT-FOUND-RECORD"},
		{"    + CategoryInfo          : NotSpecified: (:) [Write-Error], WriteErrorException", "WIN-PS-WRITE-ERROR"},
	} {
		if ids := findingIDs(scanText(t, cat, tc.row+"\n")); len(ids) != 1 || ids[tc.want].ID == "" {
			t.Errorf("lone row %q: got %v, want %s", tc.row, keys(ids), tc.want)
		}
	}
}

// TestWILFailureRecord: a vmcompute/HNS failure record in WIL's format (microsoft/wil
// result_macros.h GetFailureLogString) is decoded: module, source location, HRESULT and message.
func TestWILFailureRecord(t *testing.T) {
	cat := mustCatalogue(t)
	line := `onecore\vm\compute\service\network\compartment.cpp(88)\vmcompute.exe!00007FF612345678: (caller: 00007FF612340000) ReturnHr(1) tid(2c4) 800705AA Insufficient system resources exist to complete the requested service.    Msg:[CreateCompartment failed (1450)] `
	f, ok := findingIDs(scanText(t, cat, line+"\n"))["WIN-WIL-FAILURE"]
	if !ok {
		t.Fatal("WIL failure record not recognised")
	}
	for _, want := range []string{"vmcompute.exe", "compartment.cpp:88", "0x800705aa", "CreateCompartment failed (1450)"} {
		if !strings.Contains(f.Cause, want) {
			t.Errorf("cause lacks %q: %s", want, f.Cause)
		}
	}
}

// TestEventLogRowDayFirst: Get-EventLog table rows in a day-first locale keep their level.
func TestEventLogRowDayFirst(t *testing.T) {
	for _, tc := range []struct {
		row  string
		sev  byte
		want string
	}{
		{"28/05/2018 13:54:07          12003 Warning          Cannot create a template.", 'W', "2018-05-28"},
		{"28.05.2018 13:54:07          7031 Error          The kubelet service terminated unexpectedly.", 'E', "2018-05-28"},
		{"5/8/2020 8:36:43 AM   7031 Error   The kubelet service terminated unexpectedly.", 'E', "2020-05-08"},
	} {
		l, ok := parseWinEventRow([]byte(tc.row))
		if !ok || l.Severity != tc.sev || l.Time.T.Format("2006-01-02") != tc.want {
			t.Errorf("%q: ok=%v severity %q time %v; want %q %s", tc.row, ok, l.Severity, l.Time.T, tc.sev, tc.want)
		}
	}
}

// TestNodePrerequisiteWordings: kernel, CRI and kube-proxy entries on the wordings the tools
// print in other releases and wrappers (lines built from the formats named in the entries), and
// near misses that must stay unclaimed.
func TestNodePrerequisiteWordings(t *testing.T) {
	cat := mustCatalogue(t)
	for _, tc := range []struct{ name, line, want, not string }{
		// module-init-tools (before kmod) had no directory; Ansible wraps the output in JSON.
		{"modprobe old", "FATAL: Module nf_conntrack_ipv4 not found.", "KERNEL-MODULE-MISSING", ""},
		{"modprobe ansible", `fatal: [node1]: FAILED! => {"changed": false, "msg": "modprobe: FATAL: Module ip_vs not found in directory /lib/modules/5.4.0-1-arm\n", "name": "ip_vs"}`, "KERNEL-MODULE-MISSING", ""},
		// procps-ng's newer wording.
		{"sysctl new", `sysctl: setting key "net.bridge.bridge-nf-call-ip6tables": No such file or directory`, "KERNEL-SYSCTL-MISSING", ""},
		{"sysctl denied", "sysctl: permission denied on key 'net.core.somaxconn'", "KERNEL-SYSCTL-DENIED", ""},
		{"overlay tmpfile", "[    3.100000] overlayfs: upper fs does not support tmpfile.", "KERNEL-OVERLAY-UPPERDIR", ""},
		{"cgroup v1 kubelet", `Failed to start ContainerManager system validation failed - Following Cgroup subsystem not mounted: [memory cpuset]`, "KERNEL-CGROUP-NOT-MOUNTED", ""},
		// CRI: v1alpha2 asked of containerd 2.x or of a disabled CRI plugin.
		{"cri v1alpha2", `rpc error: code = Unimplemented desc = unknown service runtime.v1alpha2.ImageService`, "CRI-API-UNKNOWN-SERVICE", ""},
		// kube-proxy: the older sysctl wording without "to N", and the IPVS keys.
		{"kube-proxy sysctl old", `F0101 00:00:00.000000       1 server.go:396] unable to create proxier: can't set sysctl net/ipv4/vs/conntrack: open /proc/sys/net/ipv4/vs/conntrack: permission denied`, "KUBEPROXY-SYSCTL-NOT-WRITABLE", "KUBEPROXY-SRC-IPTABLES"},
		{"hashsize unsupported", `F0101 00:00:00.000000       1 server.go:495] write /sys/module/nf_conntrack/parameters/hashsize: operation not supported`, "KUBEPROXY-CONNTRACK-HASHSIZE", ""},
		{"ipvs unbind v6", `E0101 00:00:00.000000       1 proxier.go:1622] Failed to unbind service addr fe80::1 from dummy interface kube-ipvs0: error unbind address: fe80::1 from interface: kube-ipvs0, err: cannot assign requested address`, "KUBEPROXY-IPVS-UNBIND", "KUBEPROXY-SRC-IPVS"},
		// winkernel's message wrapped by a console after "Network": both halves.
		{"hns network cut", "F0609 01:20:44.451041    1496 proxier.go:474] Unable to find Hns Network", "KUBEPROXY-HNS-NETWORK-NOT-FOUND", ""},
		{"hns network tail", "specified by cbr0. Please check environment variable KUBE_NETWORK", "KUBEPROXY-HNS-NETWORK-NOT-FOUND-TAIL", ""},
		// Near misses.
		{"modprobe warning", "modprobe: WARNING: Module br_netfilter not found in directory /lib/modules/6.1.0", "", "KERNEL-MODULE-MISSING"},
		{"sysctl ok", "sysctl: net.ipv4.ip_forward = 1", "", "KERNEL-SYSCTL-MISSING"},
		{"sysctl doesn't exist on windows", `can't set sysctl net/bridge/bridge-nf-call-iptables: open /proc/sys/net/bridge/bridge-nf-call-iptables: The system cannot find the path specified.`, "", "KUBEPROXY-SYSCTL-NOT-WRITABLE"},
		{"grpc health", "rpc error: code = Unimplemented desc = unknown service grpc.health.v1.Health", "", "CRI-API-UNKNOWN-SERVICE"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ids := findingIDs(scanText(t, cat, tc.line+"\n"))
			if _, ok := ids[tc.want]; tc.want != "" && !ok {
				t.Errorf("%q: want %s, got %v", tc.line, tc.want, keys(ids))
			}
			if _, ok := ids[tc.not]; tc.not != "" && ok {
				t.Errorf("%q: got %s", tc.line, tc.not)
			}
		})
	}
}

// TestFindingNamesInnermostReason: an entry's cause explains a family of messages; the finding
// also says what this line's innermost reason was, unless the cause already quotes it.
func TestFindingNamesInnermostReason(t *testing.T) {
	cat, err := DefaultCatalogue()
	if err != nil {
		t.Fatal(err)
	}
	line := `E0101 00:00:00.000000       1 proxier.go:1900] Failed to add IPVS service "default/kubernetes:https": no such file or directory`
	r := scanText(t, cat, line+"\n")
	f, ok := findingIDs(r)["KUBEPROXY-IPVS-SCHEDULER-MISSING"]
	if !ok {
		t.Fatalf("no finding: %v", keys(findingIDs(r)))
	}
	// The cause says ENOENT in its own words; the line's reason is named beside it.
	if !strings.Contains(strings.ToLower(f.Innermost), "no such file or directory") {
		t.Errorf("innermost %q does not name the line's reason", f.Innermost)
	}
	// The cause quotes the reason itself: no repeat.
	r = scanText(t, cat, "bind unicast_src 192.0.2.1 failed 99 - Cannot assign requested address\n")
	if f := findingIDs(r)["KEEPALIVED-UNICAST-SRC-BIND"]; f.ID == "" || f.Innermost != "" {
		t.Errorf("unicast_src finding %+v: want the reason in the cause only", f)
	}
}

// TestKubeadmPreflightLevels: a check's [ERROR …] line is an error (kubeadm aborts), its
// [WARNING …] line a warning, and the check's message quoted without kubeadm's prefix is still
// recognised; the check's own words lead the cause.
func TestKubeadmPreflightLevels(t *testing.T) {
	cat := mustCatalogue(t)
	for _, tc := range []struct {
		line, id string
		sev      Severity
	}{
		{"\t[ERROR NumCPU]: the number of available CPUs 1 is less than the required 2", "KUBEADM-PREFLIGHT-NUMCPU", SevError},
		{"\t[WARNING NumCPU]: the number of available CPUs 1 is less than the required 2", "KUBEADM-PREFLIGHT-NUMCPU", SevWarning},
		{"\t[ERROR FileExisting-conntrack]: conntrack not found in system path", "KUBEADM-PREFLIGHT-EXECUTABLE", SevError},
		{"hostname \"node-a\" could not be reached", "KUBEADM-PREFLIGHT-HOSTNAME", SevWarning},
		{"\t[ERROR Port-6443]: Port 6443 is in use", "JOIN-PREFLIGHT-PORT-IN-USE", SevError},
		{"        Port 2379 is in use", "KUBEADM-PREFLIGHT-PORT-IN-USE", SevError},
	} {
		f, ok := findingIDs(scanText(t, cat, tc.line+"\n"))[tc.id]
		if !ok || f.Severity != tc.sev {
			t.Errorf("%q: finding %+v, want %s at %s", tc.line, f, tc.id, tc.sev)
			continue
		}
		if strings.HasPrefix(tc.id, "KUBEADM-PREFLIGHT-") && !strings.HasPrefix(f.Cause, "kubeadm: \"") {
			t.Errorf("%s cause does not quote the check: %s", tc.id, f.Cause)
		}
	}
}
