package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/kubewin/kubewin/internal/cliutil"
	"github.com/kubewin/kubewin/internal/verify"
)

func runVerify(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(append([]string{"verify"}, args...), strings.NewReader(""), &out, &errOut)
	return out.String(), errOut.String(), code
}

const verifyTestdata = "../../testdata/verify/"

func TestVerifyJSONReportAndExitCode(t *testing.T) {
	out, errOut, code := runVerify(t, "-o", "json")
	var rep struct {
		Summary struct {
			Flows, Failed, ExpectedUnsupported int
		}
		Matrix   []struct{ Flow, Proto string }
		Failures []struct {
			Flow, Disposition, Cause string
			Forward                  *struct{ Hops []any }
		}
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("exit %d, stderr %q, output not JSON: %v", code, errOut, err)
	}
	want := cliutil.ExitOK
	if rep.Summary.Failed > 0 {
		want = cliutil.ExitFindings
	}
	if code != want || rep.Summary.Flows == 0 || len(rep.Matrix) == 0 || rep.Summary.ExpectedUnsupported == 0 {
		t.Fatalf("exit %d (want %d), summary %+v", code, want, rep.Summary)
	}
	for i, f := range rep.Failures {
		if i < verify.MaxTraces && (f.Forward == nil || len(f.Forward.Hops) == 0) {
			t.Errorf("failure without a trace: %+v", f)
		}
		if !knownExampleFailure(f.Cause) {
			t.Errorf("unexplained failure of the example: %+v", f)
		}
	}
}

// knownExampleFailure tells the example's expected failures: in seed 000's topology the
// network beyond the default gateways does not route the cluster subnet back (issue 11 item 17:
// Windows pod OutBoundNAT replies, NodePorts on the cluster NIC); and while the plan sets a loose
// net.ipv4.conf.all.rp_filter on the gateway members, Felix does not run there (item 1; the
// render moves loose mode to the interface).
func knownExampleFailure(cause string) bool {
	return strings.Contains(cause, "the network beyond the default gateways has no route") ||
		strings.Contains(cause, "calico-node is not running")
}

// felixTransitional reports whether out explains a failure by Felix not running (see
// knownExampleFailure).
func felixTransitional(out string) bool { return strings.Contains(out, "calico-node is not running") }

func TestVerifyFlow(t *testing.T) {
	out, _, code := runVerify(t, "--flow", "node001/pod", "node009/pod", "--proto", "icmp")
	if (code != cliutil.ExitOK || !strings.Contains(out, "verdict: ok") || !strings.Contains(out, "arp: 10.160.11.1") && !strings.Contains(out, "vSwitch port of endpoint")) && !felixTransitional(out) {
		t.Fatalf("exit %d\n%s", code, out)
	}
	out, _, code = runVerify(t, "--flow", "node009/pod,external", "--proto", "icmp")
	if code != cliutil.ExitOK || !strings.Contains(out, "unsupported-on-Windows") || !strings.Contains(out, "expected-unsupported") {
		t.Fatalf("Windows pod ping to the outside: exit %d\n%s", code, out)
	}
	out, _, code = runVerify(t, "--flow", "node009/pod", "node001/pod", "--scenario", "gateway-down=master1,master2,master3", "-o", "json")
	if code != cliutil.ExitFindings || !strings.Contains(out, "held by nobody") {
		t.Fatalf("no holder: exit %d\n%s", code, out)
	}
	for _, bad := range [][]string{{"--flow", "node001/pod"}, {"--flow", "nobody", "node009"}, {"--flow", "node001", "node009", "--proto", "sctp"}, {"--proto", "udp"}, {"stray"}} {
		if _, errOut, code := runVerify(t, bad...); code != cliutil.ExitBadInput || errOut == "" {
			t.Errorf("%q: exit %d, stderr %q", bad, code, errOut)
		}
	}
}

func TestVerifyDumps(t *testing.T) {
	out, _, code := runVerify(t, "--dump", "node009="+verifyTestdata+"seed/node009.endpoints-with-cbr0.json")
	if code != cliutil.ExitFindings || !strings.Contains(out, "IsRemoteEndpoint=true") {
		t.Fatalf("seed endpoint dump: exit %d\n%s", code, out)
	}
	dir := t.TempDir()
	for node, file := range map[string]string{"node009": "seed/node009.endpoints-with-cbr0.utf16.json", "master3": "real/master3.keepalived.data"} {
		data, err := os.ReadFile(verifyTestdata + file)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(dir, node), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, node, "dump"), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out, _, code = runVerify(t, "--dump-dir", dir)
	if code != cliutil.ExitFindings || !strings.Contains(out, "held by master3 (keepalived dump") || !strings.Contains(out, "IsRemoteEndpoint=true") {
		t.Fatalf("dump dir: exit %d\n%s", code, out)
	}
	if err := os.WriteFile(filepath.Join(dir, "stray.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--dump", "node999=" + verifyTestdata + "seed/master3.route-n.txt"}, "master3.route-n.txt: dump for node \"node999\", which is not in the plan"},
		{[]string{"--dump", "master1=" + verifyTestdata + "broken/bad-genmask.route-n.txt"}, "bad-genmask.route-n.txt:4: Genmask 255.0.255.0 is not a contiguous netmask"},
		{[]string{"--dump", "node009=" + verifyTestdata + "broken/node009.endpoints-depth2.json"}, "node009.endpoints-depth2.json:38: Policies[0] is the string"},
		{[]string{"--dump", "master1=" + verifyTestdata + "broken/master1.keepalived-also-master.data", "--dump", "master3=" + verifyTestdata + "real/master3.keepalived.data"}, "contradictory keepalived state"},
		{[]string{"--dump", "master1"}, "expected NODE=FILE"},
		{[]string{"--dump", "master1=/nonexistent"}, "read dump"},
		{[]string{"--dump-dir", dir}, "stray.txt: a dump directory holds one sub-directory per node"},
		{[]string{"--scenario", "bogus"}, "expected KIND=TARGET"},
		{[]string{"-o", "yaml"}, "unknown output format"},
		{[]string{"--rp-filter", "sometimes"}, "expected loose, strict or off"},
	} {
		_, errOut, code := runVerify(t, tc.args...)
		if code != cliutil.ExitBadInput || !strings.Contains(errOut, tc.want) {
			t.Errorf("%q: exit %d, stderr %q, want %q", tc.args, code, errOut, tc.want)
		}
	}
}

// TestVerifyHelpExamples runs every example of "kubewin verify --help" exactly as shown,
// against the embedded example: in a directory holding the files the examples name
// (cluster.yaml: the example spec; endpoints.json: node009's seed endpoint with the planned
// policies; route-n.txt: master1's table while it holds the gateway VIP).
func TestVerifyHelpExamples(t *testing.T) {
	help, _, code := runVerify(t, "--help")
	if code != cliutil.ExitOK {
		t.Fatalf("--help: exit %d", code)
	}
	_, rest, ok := strings.Cut(help, "\nExamples:\n")
	if !ok {
		t.Fatalf("help has no examples:\n%s", help)
	}
	rest, _, _ = strings.Cut(rest, "\n\n")
	var examples []string
	for _, l := range strings.Split(rest, "\n") {
		examples = append(examples, strings.TrimSpace(l))
	}
	checks := map[string]func(t *testing.T, out string){
		"kubewin verify": summaryClean,
		"kubewin verify -f cluster.yaml --dump node009=endpoints.json --dump master1=route-n.txt": summaryClean,
		"kubewin verify --scenario gateway-down=master1,master2":                                  summaryClean,
		"kubewin verify --flow node001/pod node009/pod --proto icmp": func(t *testing.T, out string) {
			if !strings.Contains(out, "pod→pod linux→windows icmp: node001/pod") || !strings.Contains(out, "verdict: ok") && !felixTransitional(out) {
				t.Errorf("output:\n%s", out)
			}
		},
		"kubewin verify --flow node009/pod 10.176.0.10 --proto udp --port 53 -o json": func(t *testing.T, out string) {
			var res struct {
				Flows []struct{ Flow, Proto, Src, Dst, Via, Verdict, Disposition string }
			}
			if err := json.Unmarshal([]byte(out), &res); err != nil {
				t.Fatalf("not JSON: %v\n%s", err, out)
			}
			// The cluster DNS service, one flow per CoreDNS endpoint (on Linux nodes).
			if len(res.Flows) != 2 {
				t.Fatalf("flows: %+v", res.Flows)
			}
			for _, f := range res.Flows {
				if f.Flow != "pod→service windows→linux" || f.Proto != "udp" || !strings.HasPrefix(f.Src, "node009/pod ") ||
					f.Via != "kube-dns 10.176.0.10:53" || (f.Verdict != "ok" || f.Disposition != "delivered") && !felixTransitional(out) {
					t.Errorf("flow %+v", f)
				}
			}
		},
	}
	dir := t.TempDir()
	spec, _, code := func() (string, string, int) {
		var out, errOut bytes.Buffer
		code := run([]string{"example"}, strings.NewReader(""), &out, &errOut)
		return out.String(), errOut.String(), code
	}()
	if code != cliutil.ExitOK {
		t.Fatalf("example: exit %d", code)
	}
	endpoints, err := os.ReadFile(verifyTestdata + "seed/node009.endpoints-policies.json")
	if err != nil {
		t.Fatal(err)
	}
	routes := "Kernel IP routing table\n" +
		"Destination     Gateway         Genmask         Flags Metric Ref    Use Iface\n" +
		"0.0.0.0         172.16.126.1    0.0.0.0         UG    100    0        0 eth0\n" +
		"10.160.11.0     0.0.0.0         255.255.255.0   U     0      0        0 eth1\n" +
		"...\n"
	for name, data := range map[string][]byte{"cluster.yaml": []byte(spec), "endpoints.json": endpoints, "route-n.txt": []byte(routes)} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(dir)
	for _, ex := range examples {
		t.Run(ex, func(t *testing.T) {
			check := checks[ex]
			if check == nil {
				t.Fatalf("help example %q has no check here", ex)
			}
			args := strings.Fields(ex)
			if len(args) < 2 || args[0] != "kubewin" || args[1] != "verify" {
				t.Fatalf("not a verify command: %q", ex)
			}
			out, errOut, code := runVerify(t, args[2:]...)
			// Exit 1 is the example's known failures (knownExampleFailure), which check judges.
			if code != cliutil.ExitOK && code != cliutil.ExitFindings {
				t.Fatalf("exit %d, stderr %q\n%s", code, errOut, out)
			}
			check(t, out)
		})
	}
	if len(examples) != len(checks) {
		t.Errorf("help shows %d examples, %d are checked: %q", len(examples), len(checks), examples)
	}
}

// summaryClean checks a text report that verified with nothing failing.
func summaryClean(t *testing.T, out string) {
	t.Helper()
	if strings.Contains(out, " ok, 0 failed, ") && !strings.Contains(out, "FAILING FLOWS") {
		return
	}
	_, failing, ok := strings.Cut(out, "FAILING FLOWS")
	if !ok {
		t.Fatalf("report with failures but no FAILING FLOWS section:\n%s", out)
	}
	failing, _, _ = strings.Cut(failing, "EXPECTED UNSUPPORTED")
	causes := 0
	for _, l := range strings.Split(failing, "\n") {
		m := causeLine.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		causes++
		if !knownExampleFailure(m[2]) {
			t.Errorf("unexplained failure: %s", strings.TrimSpace(l))
		}
	}
	if causes == 0 {
		t.Errorf("failures without causes:\n%s", out)
	}
}

// causeLine is a failing flow's "disposition: cause" line in the text report.
var causeLine = regexp.MustCompile(`^\s+(no-route|no-ARP|dropped|loop|address-conflict|delivered|delivered-with-SNAT|unsupported-on-Windows): (.*)$`)

// TestVerifyPacketSize: a DF packet larger than the IP-in-IP path's MTU fails (issue 11 item 18).
func TestVerifyPacketSize(t *testing.T) {
	out, _, code := runVerify(t, "--flow", "node001/pod", "node002/pod", "--proto", "udp", "--packet-size", "1481")
	if code != cliutil.ExitFindings || !strings.Contains(out, "needs 1501 bytes once encapsulated by IP-in-IP") {
		t.Fatalf("exit %d\n%s", code, out)
	}
	out, _, code = runVerify(t, "--flow", "node001/pod", "node002/pod", "--proto", "udp", "--packet-size", "1481", "--df=false")
	if code != cliutil.ExitOK {
		t.Fatalf("without DF: exit %d\n%s", code, out)
	}
	for _, bad := range [][]string{{"--packet-size", "-1"}, {"--link-mtu", "10"}} {
		if _, errOut, code := runVerify(t, bad...); code != cliutil.ExitBadInput || errOut == "" {
			t.Errorf("%q: exit %d, stderr %q", bad, code, errOut)
		}
	}
}
