package diagnose

import (
	"strings"
	"testing"
)

// TestParseLineEnvelopes: the layout under each collector envelope is recognised, with its
// severity and component.
func TestParseLineEnvelopes(t *testing.T) {
	for _, tc := range []struct {
		line      string
		format    Format
		sev       byte
		component string
		msg       string // prefix of the message
	}{
		{`  E0310 12:00:00.000000    1234 server.go:1] boom`, FormatKlog, 'E', "", "boom"},
		{`kubelet: E0310 12:00:00.000000    1234 server.go:1] boom`, FormatKlog, 'E', "kubelet", "boom"},
		{`Mar 10 12:00:00 node1 kubelet[1234]: E0310 12:00:00.000000    1234 server.go:1] boom`, FormatKlog, 'E', "kubelet", "boom"},
		{`2024-03-10T12:00:00.123456789Z stderr F E0310 12:00:00.000000       1 proxier.go:1] boom`, FormatKlog, 'E', "", "boom"},
		{`<27>1 2024-03-10T12:00:00Z node1 kube-proxy 99 - - E0310 12:00:00.000000 99 proxier.go:1] boom`, FormatKlog, 'E', "kube-proxy", "boom"},
		{`> Mar 10 12:00:00 lb1 Keepalived_vrrp[77]: (Line 12) Unknown keyword 'vrrp_scirpt'`, FormatSyslog, 'E', "keepalived", "(Line 12)"},
		{`Mar 10 12:00:00 lb1 Keepalived_vrrp[77]: (VI_1) Entering MASTER STATE`, FormatSyslog, 0, "keepalived", "(VI_1)"},
		{`[ERROR Swap]: running with swap on is not supported. Please disable swap`, FormatKubeadm, 'E', "kubeadm", "[ERROR Swap]"},
		{`	[WARNING IsDockerSystemdCheck]: detected "cgroupfs" as the Docker cgroup driver`, FormatKubeadm, 'W', "kubeadm", "[WARNING"},
		{`[preflight] Running pre-flight checks`, FormatKubeadm, 0, "kubeadm", "[preflight]"},
		{`Start-Service : Service 'kubelet (kubelet)' cannot be started due to the following error`, FormatPowerShell, 'E', "powershell", "Service 'kubelet"},
		{`stop-process : Cannot find a process with the process identifier 11111.`, FormatPowerShell, 'E', "powershell", "Cannot find"},
		{`Name : kubelet`, FormatPlain, 0, "", "Name : kubelet"},
		{`    + CategoryInfo          : OpenError: (System.ServiceProcess.ServiceController:ServiceController) [Start-Service], ServiceCommandException`, FormatPowerShell, 'E', "powershell", "OpenError"},
		// The position row of an error record raised in a script (the console's error view).
		{`At C:\k\start.ps1:12 char:1`, FormatPowerShell, 'I', "powershell", "At C:"},
		{`At line:12 char:1`, FormatPowerShell, 'I', "powershell", "At line"},
		{`WARNING: The names of some imported commands include unapproved verbs`, FormatPowerShell, 'W', "powershell", "The names"},
		{`panic: runtime error: invalid memory address or nil pointer dereference`, FormatPanic, 'F', "", "panic:"},
		{`{"ts":1624215312.27,"caller":"app/server.go:1","msg":"Failed to run kubelet","err":"boom"}`, FormatLogrus, 'E', "", ""},
		{`{"ts":1624215312.27,"caller":"app/server.go:1","msg":"Starting","v":0}`, FormatLogrus, 'I', "", ""},
		{`failed to load Kubelet config file /var/lib/kubelet/config.yaml`, FormatPlain, 'E', "", "failed to load"},
		{`Successfully registered node node1`, FormatPlain, 0, "", "Successfully"},
		{"`hcsshim::OpenComputeSystem abc: A virtual machine or container with the specified identifier does not exist.`", FormatPlain, 'E', "", "hcsshim::"},
	} {
		l := ParseLine([]byte(tc.line))
		if l.Format != tc.format || l.Severity != tc.sev || l.Component != tc.component || !strings.HasPrefix(string(l.Msg), tc.msg) {
			t.Errorf("%s\n got format %v severity %q component %q msg %q\nwant format %v severity %q component %q msg %q…",
				tc.line, l.Format, l.Severity, l.Component, l.Msg, tc.format, tc.sev, tc.component, tc.msg)
		}
	}
}

// TestSurfacedWithCause: lines nothing explains are still shown, with the innermost reason and
// what the message names.
func TestSurfacedWithCause(t *testing.T) {
	c := mustCatalogue(t)
	r := scanLine(c, `Mar 10 12:00:00 node1 kubelet[1234]: E0310 12:00:00.000000    1234 run.go:74] "command failed" err="failed to frobnicate: open /etc/frob/frob.conf: no such file or directory"`)
	if len(r.Unmatched) != 1 {
		t.Fatalf("unmatched %+v", r.Unmatched)
	}
	u := r.Unmatched[0]
	if u.Severity != SevError || u.Component != "kubelet" || u.Innermost != "no such file or directory" {
		t.Errorf("group %+v", u)
	}
	if len(u.Objects) == 0 || u.Objects[0].Value != "/etc/frob/frob.conf" {
		t.Errorf("objects %+v", u.Objects)
	}
	if len(u.Codes) == 0 || u.Codes[0].Value != "ENOENT" || u.Codes[0].Meaning == "" {
		t.Errorf("codes %+v", u.Codes)
	}
	w := scanLine(c, `W0310 12:00:00.000000    1234 run.go:74] something odd happened`)
	if len(w.Unmatched) != 0 || len(w.Warnings) != 1 || w.Warnings[0].Severity != SevWarning {
		t.Errorf("warning line: unmatched %+v warnings %+v", w.Unmatched, w.Warnings)
	}
}

// TestPowerShellMessageLineWithoutErrorWords: the message line of a PowerShell error record is
// shown even when the exception's message has no error word in it (CommandNotFoundException's
// "is not recognized", a CIM query that found nothing): its "Verb-Noun : " header makes it one.
func TestPowerShellMessageLineWithoutErrorWords(t *testing.T) {
	c := mustCatalogue(t)
	for _, line := range []string{
		`Install-Thing : The term 'Install-Thing' is not recognized as the name of a cmdlet, function, script file, or operable program.`,
		`Get-NetAdapter : No MSFT_NetAdapter objects found with property 'Name' equal to 'Ethernet 9'.`,
	} {
		// Shown: as an unmatched error, or explained by an error entry (WIN-PS-COMMAND-NOT-FOUND).
		r := scanLine(c, line)
		explained := len(r.Findings) == 1 && r.Findings[0].Severity == SevError && r.Findings[0].Component == "powershell"
		if !explained && (len(r.Unmatched) != 1 || r.Unmatched[0].Severity != SevError || r.Unmatched[0].Component != "powershell") {
			t.Errorf("%s: unmatched %+v findings %+v", line, r.Unmatched, r.Findings)
		}
	}
	if r := scanLine(c, `Name                           : kubelet`); len(r.Unmatched)+len(r.Findings)+len(r.Warnings) != 0 {
		t.Errorf("Format-List output shown: %+v %+v", r.Unmatched, r.Findings)
	}
}

// TestKubeadmErrorIsError: kubeadm aborts on an [ERROR …] preflight line, so an entry that
// matches it is reported as an error even when the entry is a warning elsewhere.
func TestKubeadmErrorIsError(t *testing.T) {
	sigs := []Signature{{ID: "T-SWAP", Component: "kubelet", Severity: SevWarning, Title: "swap", Literal: "swap on is not supported",
		Pattern: `swap on is not supported`, Cause: "c", Fix: "f"}}
	c, err := Compile(sigs)
	if err != nil {
		t.Fatal(err)
	}
	for line, want := range map[string]Severity{
		`[ERROR Swap]: running with swap on is not supported. Please disable swap`:                              SevError,
		`E0310 12:00:00.000000    1234 server.go:1] running with swap on is not supported, please disable swap`: SevWarning,
	} {
		r := scanLine(c, line)
		if len(r.Findings) != 1 || r.Findings[0].Severity != want {
			t.Errorf("%s: findings %+v, want severity %s", line, r.Findings, want)
		}
	}
}

// TestFixForLinux: an entry with a Linux fix gives it for lines a Linux node wrote, and the
// Windows fix for Windows lines.
func TestFixForLinux(t *testing.T) {
	c := mustCatalogue(t)
	lin := scanLine(c, `Mar 10 12:00:00 node1 kubelet[1234]: E0310 12:00:00.000000 1234 kubelet.go:2855] "Container runtime network not ready" networkReady="NetworkReady=false reason:NetworkPluginNotReady message:Network plugin returns error: cni plugin not initialized" unix:///run/containerd/containerd.sock`)
	win := scanLine(c, `E0310 12:00:00.000000 1234 kubelet.go:2855] "Container runtime network not ready" networkReady="NetworkReady=false reason:NetworkPluginNotReady message:Network plugin returns error: cni plugin not initialized" npipe:////./pipe/containerd-containerd`)
	fix := func(r *Report) (string, string) {
		for _, f := range r.Findings {
			if f.ID == "KUBELET-CNI-NOT-INITIALIZED" {
				return f.Fix, f.OS
			}
		}
		t.Fatalf("no KUBELET-CNI-NOT-INITIALIZED in %+v", r.Findings)
		return "", ""
	}
	if f, os := fix(lin); !strings.Contains(f, "/etc/cni/net.d") || strings.Contains(f, `C:\`) || os != "linux" {
		t.Errorf("linux fix %q (os %q)", f, os)
	}
	if f, os := fix(win); !strings.Contains(f, `C:\etc\cni\net.d`) || os != "windows" {
		t.Errorf("windows fix %q (os %q)", f, os)
	}
}

func FuzzParseEnvelopes(f *testing.F) {
	for _, s := range []string{`<1>1 a b c d e f`, `2024-01-01T00:00:00Z stdout F x`, `> > | kubelet: W0101 00:00:00.0 1 a.go:1] x`,
		`Keepalived[1]: x`, `[ERROR x]: y`, "`x`", `Get-X : y`, `+ CategoryInfo : z`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		l := ParseLine(b)
		if l.Repeat < 1 {
			t.Fatalf("repeat %d", l.Repeat)
		}
		_ = lineOS(b)
	})
}
