package diagnose

import (
	"context"
	"strings"
	"testing"
)

// Defects found on field logs (issue 16), each pinned by a test.

// A cause built from a value inside a quoted klog field is not cut at the first escaped quote.
func TestCauseKeepsEscapedQuotes(t *testing.T) {
	c := mustCatalogue(t)
	line := `E1124 10:00:00.000000    4120 run.go:72] "command failed" err="failed to run Kubelet: invalid configuration: cgroup-root [\"kubepods\"] doesn't exist"`
	f, ok := findingIDs(scanLine(c, line))["KUBELET-FAILED-TO-RUN"]
	if !ok {
		t.Fatalf("KUBELET-FAILED-TO-RUN did not fire")
	}
	want := `cgroup-root ["kubepods"] doesn't exist`
	if !strings.Contains(f.Cause, want) {
		t.Errorf("cause %q does not contain %q", f.Cause, want)
	}
}

// Optional captures never reach the report as literal placeholders.
func TestRenderMissingCaptures(t *testing.T) {
	got := render("period[[ (now {now}, bound {bound})]]; op {op}.", map[string]string{"now": "x"})
	if got != "period; op (not in the log line)." {
		t.Errorf("render = %q", got)
	}
	got = render("period[[ (now {now}, bound {bound})]].", map[string]string{"now": "a", "bound": "b"})
	if got != "period (now a, bound b)." {
		t.Errorf("render = %q", got)
	}
	c := mustCatalogue(t)
	f := findingIDs(scanLine(c, `E1124 10:00:00.000000 1 reflector.go:1] Get "https://10.0.0.1:6443/api": x509: certificate has expired or is not yet valid`))["CERT-EXPIRED"]
	if strings.ContainsAny(f.Cause, "<>{}") || f.Cause == "" {
		t.Errorf("cause with placeholders: %q", f.Cause)
	}
}

// A kubectl event row "(x645 over 17m)" is 645 occurrences in one line, and the text report
// says so instead of presenting 645 lines.
func TestEventRepeatsAreOccurrencesNotLines(t *testing.T) {
	c := mustCatalogue(t)
	// Row quoted from Azure/AKS-Edge#43 (the thread's "> " quote marker removed).
	row := `  Warning  FailedCreatePodSandBox  2m57s (x645 over 17m)  kubelet            (combined from similar events): Failed to create pod sandbox: rpc error: code = Unknown desc = failed to set up sandbox container "b8bf687e6209c3a84f5ad62387d335c991d2f4bbe717b836e1e0e03ba2b68f96" network for pod "local-path-provisioner-86f4f99d4c-xcxzd": networkPlugin cni failed to set up pod "local-path-provisioner-86f4f99d4c-xcxzd_kube-system" network: global strict affinity should not be false for Windows node`
	r := scanLine(c, row)
	f, ok := findingIDs(r)["CALICO-WINDOWS-STRICT-AFFINITY"]
	if !ok {
		t.Fatalf("no strict-affinity finding: %v", keys(findingIDs(r)))
	}
	if f.Count != 645 || f.Lines != 1 {
		t.Errorf("count %d lines %d, want 645 occurrences in 1 line", f.Count, f.Lines)
	}
	var sb strings.Builder
	if err := WriteText(&sb, r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(sb.String(), "645 occurrences in 1 line") {
		t.Errorf("text report does not separate occurrences from lines:\n%s", sb.String())
	}
}

// "where" is the first occurrence; the sample names its own line, even when a later real log line
// replaced a prose mention as the sample.
func TestSampleNamesItsLine(t *testing.T) {
	c := mustCatalogue(t)
	in := "Our nodes print: Kernel's RPF check is set to 'loose'.  This would allow endpoints to spoof their IP address.\n" +
		"I1124 10:00:00.000000 1 main.go:1] starting\n" +
		"2019-04-19 16:56:55.642 [FATAL][1436] int_dataplane.go 824: Kernel's RPF check is set to 'loose'.  This would allow endpoints to spoof their IP address.  Calico requires net.ipv4.conf.all.rp_filter to be set to 0 or 1.\n"
	r := Scan(context.Background(), c, []string{"-"}, strings.NewReader(in), Options{Workers: 1})
	f, ok := findingIDs(r)["CALICO-FELIX-LOOSE-RPF"]
	if !ok {
		t.Fatalf("no finding: %v", keys(findingIDs(r)))
	}
	if f.Files[0].Line != 1 || f.SampleAt.Line != 3 || !strings.Contains(f.Sample, "[FATAL]") {
		t.Errorf("where %+v, sample at %+v: %q", f.Files, f.SampleAt, f.Sample)
	}
}

// Formats that were invisible (a file of only these printed "No known failure found" and listed
// nothing as unmatched): each line is now either explained or listed as an unmatched error.
func TestInvisibleFormatsAreSeen(t *testing.T) {
	c := mustCatalogue(t)
	in := []string{
		// projectcalico/calicoctl#1082 (Calico's own layout, Python Felix)
		`2016-07-28 18:19:24,684 [ERROR][307/4] calico.felix.felix 259: Exception killing main greenlet`,
		// opencontainers/runc#2707 (logrus text formatter)
		`ERRO[0000] container_linux.go:370: starting container process caused: process_linux.go:346: getting pipe fds for pid 0 caused: readlink /proc/0/fd/0: no such file or directory`,
		// kubernetes/kubernetes#63804 (journald-wrapped klog)
		`May 11 19:25:35 ip-xx-xxx-xx-xxx kubelet[2583]: E0511 19:25:35.523245    2583 summary.go:92] Failed to get system container stats for "/system.slice/kubelet.service": failed to get cgroup stats for "/system.slice/kubelet.service": failed to get container info for "/system.slice/kubelet.service": unknown container "/system.slice/kubelet.service"`,
		// JSON-per-line (rke2/logrus JSON formatter); written for this test
		`{"level":"error","msg":"failed to start agent: example","time":"2024-01-01T00:00:00Z"}`,
		// PowerShell error record with a decimal HRESULT (the example code)
		`    + CategoryInfo          : NotSpecified: (:) [New-HnsNetwork], Exception ErrorCode=2151350278`,
	}
	r := Scan(context.Background(), c, []string{"-"}, strings.NewReader(strings.Join(in, "\n")+"\n"), Options{Workers: 1})
	var n int64
	for _, f := range r.Findings {
		n += f.Lines
	}
	for _, u := range r.Unmatched {
		n += u.Count
	}
	if n != int64(len(in)) {
		t.Errorf("%d of %d lines seen; findings %v, unmatched %+v", n, len(in), keys(findingIDs(r)), r.Unmatched)
	}
}

// kubelet v1.37.1 (kubelet_node_status.go) words a forbidden registration "Unable to register node
// with API server, reason is forbidden"; the anonymous-registration entry must still fire.
func TestRegisterAnonymousV137Wording(t *testing.T) {
	c := mustCatalogue(t)
	line := `E1124 23:10:01.000000    4120 kubelet_node_status.go:104] "Unable to register node with API server, reason is forbidden" err="nodes is forbidden: User \"system:anonymous\" cannot create resource \"nodes\" in API group \"\" at the cluster scope" node="node010"`
	if _, ok := findingIDs(scanLine(c, line))["CERT-REGISTER-ANONYMOUS"]; !ok {
		t.Errorf("CERT-REGISTER-ANONYMOUS did not fire on the v1.37 wording")
	}
}
