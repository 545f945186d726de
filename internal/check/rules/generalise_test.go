package rules

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubewin/kubewin/internal/check"
)

// kubeadmJoin is a kubeadm JoinConfiguration (v1beta3) whose discovery.bootstrapToken holds
// discovery and whose kubelet flags are kubeletExtraArgs.
func kubeadmJoin(discovery string) string {
	return "apiVersion: kubeadm.k8s.io/v1beta3\nkind: JoinConfiguration\ndiscovery:\n  bootstrapToken:\n    apiServerEndpoint: 10.0.0.1:6443\n    token: abcdef.0123456789abcdef\n    " +
		discovery + "\nnodeRegistration:\n  name: win1\n  criSocket: npipe:////./pipe/containerd-containerd\n  kubeletExtraArgs:\n    v: \"2\"\n"
}

// severities returns the severities of rule id's findings (info included).
func severities(rep *check.Report, id string) []check.Severity {
	var out []check.Severity
	for _, f := range findingsOf(rep, id) {
		out = append(out, f.Severity)
	}
	return out
}

// worst is the highest severity among rep's findings other than KW0014 (the banner about an
// old target), 0 when there are none.
func worst(rep *check.Report) (check.Severity, string) {
	var w check.Severity
	var what string
	for _, f := range rep.Findings {
		if f.RuleID != "KW0014" && f.Severity > w {
			w, what = f.Severity, f.RuleID+" "+f.Message
		}
	}
	return w, what
}

// kubeadm configuration files are read as what they are (issue 24, second sealed set: a
// JoinConfiguration read as a kubelet command line gave 9 false positives, 7 of them errors):
// their kubeletExtraArgs are kubelet flags, judged as flags; the rest of the YAML is no
// command line.
func TestKubeadmConfigIsNotACommandLine(t *testing.T) {
	tests := []struct {
		name, file, text, version string
		wantRule                  string // a rule that must fire ("" none)
		maxSeverity               check.Severity
	}{
		{"v1beta2 join, Jinja template, branches", "kubeadm-join.j2",
			"---\napiVersion: kubeadm.k8s.io/v1beta2\nkind: JoinConfiguration\ndiscovery:\n  bootstrapToken:\n{% if fqdn is defined %}\n    apiServerEndpoint: {{ fqdn }}:{{ port }}\n{% else %}\n    apiServerEndpoint: {{ addr }}\n{% endif %}\n    token: {{ token }}\n  timeout: {{ t }}\ncaCertPath: {{ dir }}/ca.crt\nnodeRegistration:\n  name: {{ host }}\n  criSocket: {{ cri }}\n",
			"1.21", "", check.Info},
		{"v1beta3 join with kubelet flags", "join.yaml", kubeadmJoin("caCertHashes: [\"sha256:0123\"]"), "1.27", "", check.Info},
		{"v1beta3 extra arg deprecated at the target", "join.yaml",
			strings.Replace(kubeadmJoin("caCertHashes: [\"sha256:0123\"]"), "v: \"2\"", "pod-infra-container-image: registry.k8s.io/pause:3.9", 1),
			"1.29", "KW1106", check.Warning},
		{"v1beta4 list of name/value", "init.yaml",
			"apiVersion: kubeadm.k8s.io/v1beta4\nkind: InitConfiguration\nnodeRegistration:\n  criSocket: unix:///run/containerd/containerd.sock\n  kubeletExtraArgs:\n  - name: no-such-flag\n    value: \"1\"\n---\napiVersion: kubeadm.k8s.io/v1beta4\nkind: ClusterConfiguration\nkubernetesVersion: v1.37.0\n",
			"1.37", "KW0003", check.Error},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep := runCase(t, tc{files: map[string]string{tt.file: tt.text}, version: tt.version})
			if w, what := worst(rep); w > tt.maxSeverity {
				t.Errorf("worst finding %s (%s), want at most %s", w, what, tt.maxSeverity)
			}
			if tt.wantRule != "" && len(findingsOf(rep, tt.wantRule)) == 0 {
				t.Errorf("no %s", tt.wantRule)
			}
			for _, id := range []string{"KW0013", "KW1104", "KW1805", "KW1806"} {
				if got := findingsOf(rep, id); len(got) > 0 {
					t.Errorf("%s on a kubeadm file: %+v", id, got[0])
				}
			}
		})
	}
}

// KW1808 follows the template: a branch that sets it is a warning, a placeholder info.
func TestUnsafeSkipCAVerificationInTemplates(t *testing.T) {
	tests := []struct {
		name, text string
		want       []check.Severity
	}{
		{"in a branch", "apiVersion: kubeadm.k8s.io/v1beta2\nkind: JoinConfiguration\ndiscovery:\n  bootstrapToken:\n{% if h is defined %}\n    caCertHashes:\n    - sha256:{{ h }}\n{% else %}\n    unsafeSkipCAVerification: true\n{% endif %}\n",
			[]check.Severity{check.Warning}},
		{"a placeholder", "apiVersion: kubeadm.k8s.io/v1beta2\nkind: JoinConfiguration\ndiscovery:\n  bootstrapToken:\n    unsafeSkipCAVerification: {{ skip }}\n",
			[]check.Severity{check.Info}},
		{"false", "apiVersion: kubeadm.k8s.io/v1beta2\nkind: JoinConfiguration\ndiscovery:\n  bootstrapToken:\n    unsafeSkipCAVerification: false\n", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep := runCase(t, tc{files: map[string]string{"join.yaml.j2": tt.text}, version: "1.21"})
			if got := severities(rep, "KW1808"); !equalSeverities(got, tt.want) {
				t.Errorf("KW1808 %v, want %v", got, tt.want)
			}
		})
	}
}

func equalSeverities(a, b []check.Severity) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// A template whose rendered form kubewin cannot rebuild is a limit of the reading (info), never
// an error; a data file that is no template and does not parse stays an error. An unrecognised
// file is a notice (info).
func TestReadingLimitsAreInfo(t *testing.T) {
	tests := []struct {
		name, file, text, rule string
		want                   check.Severity
	}{
		{"TOML template with a placeholder table name", "config.toml.j2",
			"version = 2\n[plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes]\n{% for r in runtimes %}\n  [plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.{{ r.name }}]\n    runtime_type = \"{{ r.type }}\"\n{% endfor %}\n", "KW0001", check.Info},
		{"YAML template with a placeholder key", "kubelet-config.yaml.j2",
			"apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n{{ key }}: {{ value }}: x\n", "KW0001", check.Info},
		{"broken JSON, no template", "bad.json", "{\"a\": ", "KW0001", check.Error},
		{"unrecognised file", "notes.txt", "just some words\n", "KW0002", check.Info},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep := runCase(t, tc{files: map[string]string{tt.file: tt.text}, version: "1.30"})
			got := severities(rep, tt.rule)
			if len(got) == 0 {
				t.Fatalf("no %s", tt.rule)
			}
			for _, s := range got {
				if s != tt.want {
					t.Errorf("%s at %s, want %s", tt.rule, s, tt.want)
				}
			}
		})
	}
}

// Release-true advice: rules about settings that did not exist at the target say nothing.
func TestAdviceFollowsTheTargetRelease(t *testing.T) {
	kubelet := `c:\k\kubelet.exe --hostname-override=n1 --kubeconfig=c:\k\config --cluster-dns=10.0.0.10 --resolv-conf=""`
	tests := []struct {
		name, rule, version string
		flags               string
		fires               bool
	}{
		{"cgroups-per-qos before 1.6", "KW1101", "1.5", kubelet, false},
		{"cgroups-per-qos from 1.6", "KW1101", "1.6", kubelet, true},
		{"node allocatable before 1.6", "KW1102", "1.5", kubelet, false},
		{"node allocatable from 1.6", "KW1102", "1.9", kubelet, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep := runCase(t, tc{kubelet: []string{tt.flags}, version: tt.version})
			if got := len(findingsOf(rep, tt.rule)) > 0; got != tt.fires {
				t.Errorf("%s at %s fires %v, want %v", tt.rule, tt.version, got, tt.fires)
			}
		})
	}
}

// An unknown flag is an error only where kubewin knows the flag set exactly (the maintained
// releases); at an older target the flag may have existed then (--cadvisor-port in 1.11).
func TestUnknownFlagSeverityByRelease(t *testing.T) {
	for _, tt := range []struct {
		version string
		want    check.Severity
	}{{"1.11", check.Warning}, {"1.30", check.Warning}, {"1.37", check.Error}} {
		rep := runCase(t, tc{kubelet: []string{goodKubelet + " --cadvisor-port=0"}, version: tt.version})
		if got := severities(rep, "KW0003"); len(got) != 1 || got[0] != tt.want {
			t.Errorf("%s: KW0003 %v, want [%s]", tt.version, got, tt.want)
		}
	}
}

// A kubelet the script starts only until the node registers (Start-Process -PassThru, then
// Stop-Process), beside the service's line, is not how the node runs: settings it lacks are
// not reported; the service line is judged.
func TestTransientRunIsNotTheService(t *testing.T) {
	script := "$p = Start-Process -FilePath c:\\k\\kubelet.exe -PassThru -ArgumentList @('--hostname-override=n1','--kubeconfig=c:\\k\\config')\n" +
		"Start-Sleep 10\n$p | Stop-Process\n" +
		"c:\\k\\kubelet.exe --hostname-override=n1 --kubeconfig=c:\\k\\config --resolv-conf=\"\" --cgroups-per-qos=false --enforce-node-allocatable=\"\"\n"
	rep := runCase(t, tc{files: map[string]string{"start-kubelet.ps1": script}, version: "1.20"})
	for _, id := range []string{"KW1101", "KW1102"} {
		if got := findingsOf(rep, id); len(got) > 0 {
			t.Errorf("%s on the transient run: %+v", id, got[0])
		}
	}
	if got := findingsOf(rep, "KW1104"); len(got) != 1 || got[0].Location.Line != 4 {
		t.Errorf("KW1104 %+v, want one, on the service line 4", got)
	}
	// alone, the run is the file's only kubelet and is judged
	alone := strings.SplitAfterN(script, "\n", 4)
	rep = runCase(t, tc{files: map[string]string{"register.ps1": strings.Join(alone[:3], "")}, version: "1.20"})
	if len(findingsOf(rep, "KW1101")) != 1 {
		t.Errorf("KW1101 on the only kubelet line: %d findings, want 1", len(findingsOf(rep, "KW1101")))
	}
}

// A value of the wrong type that is a fill-in marker (sed's MAX_PODS) is read at render time
// (info); a wrong value that is no marker stays an error.
func TestFillMarkersAreRenderTime(t *testing.T) {
	for _, tt := range []struct {
		value string
		want  check.Severity
	}{{"MAX_PODS", check.Info}, {"__MAX_PODS__", check.Info}, {"@PODS@", check.Info}, {"max_pods", check.Error},
		{"MAXPODS", check.Error}, {"thirty", check.Error}} {
		rep := runCase(t, tc{kubelet: []string{goodKubelet + " --max-pods=" + tt.value}, version: "1.37"})
		if got := severities(rep, "KW0006"); len(got) != 1 || got[0] != tt.want {
			t.Errorf("--max-pods=%s: KW0006 %v, want [%s]", tt.value, got, tt.want)
		}
	}
}

// The Windows memory reservation is advised from 1.14 (Windows GA), not before.
func TestMemoryReservationFromWindowsGA(t *testing.T) {
	kubelet := `c:\k\kubelet.exe --hostname-override=n1 --kubeconfig=c:\k\config --cluster-dns=10.0.0.10 --resolv-conf=""`
	for _, tt := range []struct {
		version string
		fires   bool
	}{{"1.9", false}, {"1.13", false}, {"1.14", true}, {"1.37", true}} {
		rep := runCase(t, tc{kubelet: []string{kubelet}, version: tt.version})
		if got := len(findingsOf(rep, "KW1111")) > 0; got != tt.fires {
			t.Errorf("KW1111 at %s: %v, want %v", tt.version, got, tt.fires)
		}
	}
}

// A template that renders a flag only below a release (kubespray's kubelet.env.j2 around
// --dynamic-config-dir) is judged as it renders: no deprecation finding when the guard stops
// short of the removal, nothing at a target the guard excludes; an unguarded copy is judged.
func TestTemplateVersionGuards(t *testing.T) {
	guarded := "--kubeconfig=/etc/kubernetes/kubelet.conf \\\n{% if kube_version is version('v1.22.0', '<') %}\n--dynamic-config-dir=/var/lib/kubelet/dynamic \\\n{% endif %}\n--node-ip=10.0.0.5\n"
	unguarded := strings.Replace(guarded, "kube_version is version('v1.22.0', '<')", "dynamic_kubelet_configuration", 1)
	for _, tt := range []struct {
		name, text, version, rule string
		fires                     bool
	}{
		{"guarded below the removal, before it", guarded, "1.21", "KW1106", false},
		{"guarded, target excluded by the guard", guarded, "1.24", "KW1105", false},
		{"not version-guarded, deprecated window", unguarded, "1.21", "KW1106", true},
		{"not version-guarded, removed", unguarded, "1.24", "KW1105", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rep := runCase(t, tc{files: map[string]string{"kubelet.env.j2": tt.text}, version: tt.version})
			if got := len(findingsOf(rep, tt.rule)) > 0; got != tt.fires {
				t.Errorf("%s at %s: %v, want %v (%+v)", tt.rule, tt.version, got, tt.fires, rep.Findings)
			}
		})
	}
}

// KW1121: Environment= loses to an EnvironmentFile= known to set the same variable, in the
// same file or in a drop-in of the same unit given beside it; unknown files and other
// variables are not judged.
func TestUnitEnvironmentOverridden(t *testing.T) {
	dropin := "[Service]\nEnvironment=\"KUBELET_KUBECONFIG_ARGS=--kubeconfig=/etc/kubernetes/kubelet.conf\"\nEnvironmentFile=-/var/lib/kubelet/kubeadm-flags.env\nEnvironmentFile=-/etc/default/kubelet\nExecStart=\nExecStart=/usr/bin/kubelet $KUBELET_KUBECONFIG_ARGS $KUBELET_KUBEADM_ARGS $KUBELET_EXTRA_ARGS\n"
	for _, tt := range []struct {
		name  string
		files map[string]string
		want  []string // file:line of findings
	}{
		{"extra args in a second drop-in", map[string]string{"d/10-kubeadm.conf": dropin,
			"d/0-containerd.conf": "[Service]\nEnvironment=\"KUBELET_EXTRA_ARGS=--runtime-request-timeout=15m\"\n"}, []string{"0-containerd.conf:2"}},
		{"kubeadm args in the drop-in itself", map[string]string{"d/10-kubeadm.conf": strings.Replace(dropin, "KUBELET_KUBECONFIG_ARGS=", "KUBELET_KUBEADM_ARGS=", 1)}, []string{"10-kubeadm.conf:2"}},
		{"a variable no file sets", map[string]string{"d/10-kubeadm.conf": dropin}, nil},
		{"an environment file kubewin knows nothing of", map[string]string{"d/kubelet.service": "[Service]\nEnvironment=\"KUBELET_EXTRA_ARGS=--v=2\"\nEnvironmentFile=-/etc/kubelet/extra.env\nExecStart=/usr/bin/kubelet $KUBELET_EXTRA_ARGS\n"}, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rep := runCase(t, tc{files: tt.files, version: "1.30"})
			var got []string
			for _, f := range findingsOf(rep, "KW1121") {
				got = append(got, fmt.Sprintf("%s:%d", filepath.Base(f.Location.File), f.Location.Line))
			}
			if strings.Join(got, " ") != strings.Join(tt.want, " ") {
				t.Errorf("KW1121 at %v, want %v", got, tt.want)
			}
		})
	}
}

// KW1203 is an error only when a kubelet among the inputs registers under a name of its own;
// alone, a kube-proxy without --hostname-override uses the host name, as the kubelet does by
// default (info).
func TestKubeProxyNodeNameNeedsEvidence(t *testing.T) {
	proxy := `c:\k\kube-proxy.exe --proxy-mode=kernelspace --network-name=cbr0 --kubeconfig=c:\k\config`
	for _, tt := range []struct {
		name    string
		kubelet []string
		want    check.Severity
	}{
		{"alone", nil, check.Info},
		{"kubelet named", []string{`c:\k\kubelet.exe --hostname-override=win-node-1 --kubeconfig=c:\k\config`}, check.Error},
		{"kubelet unnamed", []string{`c:\k\kubelet.exe --kubeconfig=c:\k\config`}, check.Info},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rep := runCase(t, tc{proxy: []string{proxy}, kubelet: tt.kubelet, version: "1.37"})
			if got := severities(rep, "KW1203"); len(got) != 1 || got[0] != tt.want {
				t.Errorf("KW1203 %v, want [%s]", got, tt.want)
			}
		})
	}
}

// KW1304 is an L2Bridge rule: an Overlay conf (win-overlay) exempts only the cluster and
// service CIDRs (microsoft/SDN helper.psm1, k3s/rke2, kubewin's own overlay render).
func TestNodeSubnetExceptionOnlyOnL2Bridge(t *testing.T) {
	noNode := strings.Replace(goodCNI, `, "100.100.126.0/23"`, "", 1)
	for _, tt := range []struct {
		name, conf string
		fires      bool
	}{
		{"l2bridge without the node subnet", noNode, true},
		{"overlay without the node subnet", strings.Replace(noNode, `"type": "win-bridge"`, `"type": "win-overlay"`, 1), false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rep := runCase(t, tc{example: true, files: map[string]string{"c.conf": tt.conf}})
			if got := len(findingsOf(rep, "KW1304")) > 0; got != tt.fires {
				t.Errorf("KW1304 %v, want %v", got, tt.fires)
			}
		})
	}
}

// KW1511: priority 255 (the address owner's) is a warning — keepalived runs with it; 0 or
// above 255 stays an error.
func TestPrioritySeverity(t *testing.T) {
	for _, tt := range []struct {
		prio string
		want []check.Severity
	}{{"255", []check.Severity{check.Warning}}, {"256", []check.Severity{check.Error}}, {"0", []check.Severity{check.Error}}, {"150", nil}} {
		rep := runCase(t, tc{files: map[string]string{"k.conf": strings.Replace(goodKeepalived, "priority 150", "priority "+tt.prio, 1)}})
		if got := severities(rep, "KW1511"); !equalSeverities(got, tt.want) {
			t.Errorf("priority %s: KW1511 %v, want %v", tt.prio, got, tt.want)
		}
	}
}
