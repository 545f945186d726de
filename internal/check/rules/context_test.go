package rules

import (
	"strings"
	"testing"

	"github.com/kubewin/kubewin/internal/check"
)

// Rules that judge Windows defaults report errors only when the input's OS is proven (issue
// 24): the same kubelet flags are an error in a PowerShell script, info in a kubeadm-flags.env
// with no evidence, and nothing Windows-specific when a sibling proves Linux.
func TestWindowsRulesNeedProvenOS(t *testing.T) {
	// pause 3.2 has no Windows image (KW1119, a Windows rule that judges a value, so it also
	// fires on kubeadm-flags.env's partial line)
	const flags = `--network-plugin=cni --pod-infra-container-image=k8s.gcr.io/pause:3.2`
	for _, tt := range []struct {
		name  string
		files map[string]string
		want  check.Severity // of KW1119; 0: no finding
	}{
		{"PowerShell script: proven Windows", map[string]string{"start.ps1": "& C:\\k\\kubelet.exe " + flags + "\n"}, check.Error},
		{"kubeadm-flags.env without evidence: assumed, info",
			map[string]string{"kubeadm-flags.env": "KUBELET_KUBEADM_ARGS=\"" + flags + "\"\n"}, check.Info},
		{"kubeadm-flags.env with a Linux sibling unit: Linux, no Windows finding",
			map[string]string{"kubeadm-flags.env": "KUBELET_KUBEADM_ARGS=\"" + flags + "\"\n",
				"10-kubeadm.service": "[Service]\nExecStart=/usr/bin/kubelet $KUBELET_KUBEADM_ARGS --container-runtime-endpoint=unix:///run/containerd/containerd.sock\n"}, 0},
		{"kubeadm-flags.env with an npipe endpoint: proven Windows",
			map[string]string{"kubeadm-flags.env": "KUBELET_KUBEADM_ARGS=\"--container-runtime-endpoint=npipe:////./pipe/containerd-containerd " + flags + "\"\n"}, check.Error},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rep := runCase(t, tc{files: tt.files, version: "1.30"})
			got := findingsOf(rep, "KW1119")
			switch {
			case tt.want == 0 && len(got) > 0:
				t.Errorf("KW1119 fired: %+v", got)
			case tt.want != 0 && len(got) != 1:
				t.Fatalf("KW1119 findings %+v, want one", got)
			case tt.want != 0 && got[0].Severity != tt.want:
				t.Errorf("KW1119 severity %s, want %s (%s)", got[0].Severity, tt.want, got[0].Message)
			}
			for _, f := range findingsOf(rep, "KW0013") {
				t.Errorf("a run-time variable read as an argument: %s", f.Message)
			}
		})
	}
}

// KW1107 advises moving a flag into the KubeletConfiguration only from the release whose
// config has the field: containerRuntimeEndpoint exists from v1.27 (kubernetes/kubernetes
// #112136), so at 1.26 the advice would drop the endpoint (kubernetes/kubernetes#118787).
// Tested at the table's first and last release and around each boundary it claims.
func TestConfigFieldAdviceFollowsRelease(t *testing.T) {
	for _, tt := range []struct {
		flag, version string
		advised       bool
	}{
		{"container-runtime-endpoint=npipe:////./pipe/containerd-containerd", "1.26", false},
		{"container-runtime-endpoint=npipe:////./pipe/containerd-containerd", "1.27", true},
		{"container-runtime-endpoint=npipe:////./pipe/containerd-containerd", "1.37", true},
		{"register-with-taints=os=windows:NoSchedule", "1.24", false},
		{"register-with-taints=os=windows:NoSchedule", "1.25", true},
		{"cluster-dns=10.0.0.10", "1.13", true},
		{"cluster-dns=10.0.0.10", "1.37", true},
	} {
		rep := runCase(t, tc{kubelet: []string{`c:\k\kubelet.exe --` + tt.flag}, version: tt.version})
		name := "--" + strings.SplitN(tt.flag, "=", 2)[0]
		advised := false
		for _, f := range findingsOf(rep, "KW1107") {
			if strings.Contains(f.Message, name) {
				advised = true
			}
		}
		if advised != tt.advised {
			t.Errorf("%s at %s: advised into the config file %v, want %v", name, tt.version, advised, tt.advised)
		}
	}
}

// Userspace mode on Windows, by the release it targets: nothing before 1.9 (the only Windows
// mode; kernelspace came in 1.9, kubernetes/kubernetes#51064), info until its deprecation
// (1.23, kubernetes/kubernetes#104631), a warning while deprecated, an error from 1.26
// (removed, kubernetes/kubernetes#112133).
func TestUserspaceModeByRelease(t *testing.T) {
	for _, tt := range []struct {
		version string
		want    check.Severity // 0: no finding
	}{{"1.5", 0}, {"1.8", 0}, {"1.9", check.Info}, {"1.13", check.Info}, {"1.22", check.Info}, {"1.23", check.Warning},
		{"1.25", check.Warning}, {"1.26", check.Error}, {"1.37", check.Error}} {
		rep := runCase(t, tc{proxy: []string{`c:\k\kube-proxy.exe --proxy-mode=userspace --hostname-override=n1 --network-name=cbr0`}, version: tt.version})
		got := findingsOf(rep, "KW1205")
		switch {
		case tt.want == 0 && len(got) != 0:
			t.Errorf("%s: KW1205 %+v, want none", tt.version, got)
		case tt.want != 0 && (len(got) != 1 || got[0].Severity != tt.want):
			t.Errorf("%s: KW1205 %+v, want one %s", tt.version, got, tt.want)
		}
	}
}

// A network name is needed only by the kernelspace proxier: not before 1.9, not in userspace
// mode (explicit — KW1205 reports that mode — or the Windows default until 1.25,
// kubernetes/kubernetes#110762); with no mode given, always from 1.26.
func TestNetworkNameByMode(t *testing.T) {
	for _, tt := range []struct {
		mode, version string
		want          bool
	}{
		{"", "1.5", false}, {"--proxy-mode=kernelspace", "1.8", false},
		{"", "1.13", false}, {"--proxy-mode=userspace", "1.20", false}, {"--proxy-mode=kernelspace", "1.13", true},
		{"", "1.26", true}, {"--proxy-mode=userspace", "1.26", false}, {"--proxy-mode=kernelspace", "1.37", true},
	} {
		rep := runCase(t, tc{proxy: []string{`c:\k\kube-proxy.exe ` + tt.mode + ` --hostname-override=n1`}, version: tt.version})
		if got := len(findingsOf(rep, "KW1201")) > 0; got != tt.want {
			t.Errorf("%q at %s: KW1201 %v, want %v", tt.mode, tt.version, got, tt.want)
		}
	}
}

// Vendor labels that select Windows nodes count as choosing Windows: AKS's
// kubernetes.azure.com/os-sku (Windows2019/Windows2022) and node.kubernetes.io/windows-build.
func TestVendorLabelsSelectWindows(t *testing.T) {
	pod := func(sel string) string {
		return "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  selector:\n    matchLabels: {app: web}\n  template:\n    metadata:\n      labels: {app: web}\n    spec:\n" +
			sel + "      containers:\n      - name: web\n        image: mcr.microsoft.com/windows/servercore/iis:windowsservercore-ltsc2022\n"
	}
	unpinned := runCase(t, tc{manifests: map[string]string{"d.yaml": pod("")}, version: "1.30"})
	aks := runCase(t, tc{manifests: map[string]string{"d.yaml": pod("      nodeSelector:\n        kubernetes.azure.com/os-sku: Windows2022\n")}, version: "1.30"})
	build := runCase(t, tc{manifests: map[string]string{"d.yaml": pod("      nodeSelector:\n        node.kubernetes.io/windows-build: 10.0.20348\n")}, version: "1.30"})
	if len(findingsOf(unpinned, "KW1701")) == 0 {
		t.Fatalf("an unpinned Windows pod is not reported: %s", dump(unpinned))
	}
	if f := findingsOf(aks, "KW1701"); len(f) > 0 {
		t.Errorf("os-sku Windows2022 not seen as selecting Windows: %+v", f)
	}
	if f := findingsOf(build, "KW1701"); len(f) > 0 {
		t.Errorf("windows-build not seen as selecting Windows: %+v", f)
	}
}

// keepalived's own upper-case words are not template placeholders (KW1516): checker blocks
// such as SSL_GET { … } and lb_kind DR; a K8SHA_-style token where a state belongs still is.
func TestKeepalivedKeywordsAreNotPlaceholders(t *testing.T) {
	const lvs = "virtual_server 10.160.11.1 6443 {\n  lb_kind DR\n  protocol TCP\n  real_server 10.0.0.5 6443 {\n    SSL_GET {\n      url {\n        path /healthz\n      }\n    }\n  }\n  real_server 10.0.0.6 6443 {\n    TCP_CHECK {\n      connect_timeout 3\n    }\n  }\n}\n"
	rep := runCase(t, tc{files: map[string]string{"k.conf": goodKeepalived + lvs}})
	if f := findingsOf(rep, "KW1516"); len(f) > 0 {
		t.Errorf("keywords taken for placeholders: %+v", f)
	}
	if f := findingsOf(rep, "KW1518"); len(f) > 0 {
		t.Errorf("real_server checkers not seen as health checks: %+v", f)
	}
	rep = runCase(t, tc{files: map[string]string{"k.conf": strings.Replace(goodKeepalived, "state BACKUP", "state K8SHA_KA_STATE", 1)}})
	if len(findingsOf(rep, "KW1516")) != 1 {
		t.Errorf("a template token as the state is not reported: %s", dump(rep))
	}
}

// % in eviction thresholds of a batch file is text, not a %VAR% reference (KW0009, KW0010).
func TestPercentInEvictionThresholds(t *testing.T) {
	rep := runCase(t, tc{files: map[string]string{"start.cmd": "@echo off\r\nC:\\k\\kubelet.exe --eviction-hard=memory.available^<5%,nodefs.available^<10% --v=2\r\n"}, version: "1.31"})
	for _, id := range []string{"KW0009", "KW0010"} {
		if f := findingsOf(rep, id); len(f) > 0 {
			t.Errorf("%s on eviction thresholds: %+v", id, f)
		}
	}
}
