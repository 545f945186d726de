package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func runCheck(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(append([]string{"check"}, args...), strings.NewReader(""), &out, &errOut)
	return code, out.String(), errOut.String()
}

const cleanKubelet = `c:\k\kubelet.exe --config=c:\k\config.yaml --hostname-override=node009 --node-ip=100.100.126.216 --kubeconfig=c:\k\kubelet.conf`

const cleanKubeletConfig = `apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
cgroupsPerQOS: false
enforceNodeAllocatable: []
resolvConf: ""
clusterDNS: [10.176.0.10]
containerRuntimeEndpoint: npipe:////./pipe/containerd-containerd
systemReserved: {memory: 2Gi}
registerWithTaints: [{key: os, value: windows, effect: NoSchedule}]
readOnlyPort: 0
authentication: {anonymous: {enabled: false}, webhook: {enabled: true}}
authorization: {mode: Webhook}
`

func writeTemp(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestCheckExitCodes(t *testing.T) {
	cfg := writeTemp(t, "config.yaml", cleanKubeletConfig)
	broken := writeTemp(t, "l2bridge.conf", `{"name": "l2bridge", `)
	badSpec := writeTemp(t, "cluster.yaml", "apiVersion: kubewin.io/v1alpha1\nkind: Cluster\nspec: {nodes: 3}\n")
	removed := cleanKubelet + " --network-plugin=cni"
	tests := []struct {
		name string
		args []string
		code int
		out  string
	}{
		{"clean", []string{cfg, "--kubelet-flags", cleanKubelet}, 0, "nothing at or above --severity=warning"},
		{"removed flag", []string{cfg, "--kubelet-flags", removed}, 1, "KW1105 removed-flag"},
		{"ignored", []string{cfg, "--kubelet-flags", removed, "--ignore", "KW1105"}, 0, "(downgraded by --ignore)"},
		{"older target", []string{cfg, "--kubelet-flags", removed, "--kubernetes-version", "1.23", "--severity", "error"}, 0, "KW1106"},
		{"warnings below threshold", []string{"--example", "--severity", "error"}, 0, "KW1804"},
		{"warnings at threshold", []string{"--example"}, 1, "KW1804"},
		{"unparsable file is a finding", []string{broken}, 1, "KW0001"},
		{"invalid spec", []string{"-f", badSpec}, 2, "KW0004"},
		{"missing file", []string{"/nonexistent/kubewin-check-file"}, 2, ""},
		{"nothing to check", nil, 2, ""},
		{"bad format", []string{"--example", "-o", "yaml"}, 2, ""},
		{"bad severity", []string{"--example", "--severity", "fatal"}, 2, ""},
		{"unknown ignore", []string{"--example", "--ignore", "KW9999"}, 2, ""},
		{"bad version", []string{"--example", "--kubernetes-version", "one"}, 2, ""},
		{"spec and example", []string{"--example", "-f", badSpec}, 2, ""},
		{"list", []string{"--list"}, 0, "KW1103"},
		{"explain", []string{"--explain", "KW1103"}, 0, "resolv-conf-on-windows"},
		{"explain unknown", []string{"--explain", "KW9999"}, 2, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runCheck(t, tt.args...)
			if code != tt.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tt.code, out, errOut)
			}
			if !strings.Contains(out, tt.out) {
				t.Errorf("stdout lacks %q:\n%s", tt.out, out)
			}
			if tt.code == 2 && tt.out == "" && errOut == "" {
				t.Error("bad input without a message on stderr")
			}
			if strings.Contains(out, "\x1b[") {
				t.Error("colour on a non-terminal")
			}
		})
	}
}

func TestCheckMachineOutputs(t *testing.T) {
	seeds := "../../testdata/check/seeds"
	args := []string{filepath.Join(seeds, "seed000-kubelet-2.7.cmd"), "--manifests", filepath.Join(seeds, "seed002-deployment-v1beta2.yaml"), "--example"}

	code, out, _ := runCheck(t, append(args, "-o", "json")...)
	if code != 1 {
		t.Fatalf("exit %d", code)
	}
	var rep struct {
		Failed   bool `json:"failed"`
		Findings []struct {
			Rule string `json:"rule"`
		} `json:"findings"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || !rep.Failed || len(rep.Findings) == 0 {
		t.Fatalf("json: %v %+v", err, rep)
	}

	code, out, _ = runCheck(t, append(args, "-o", "sarif")...)
	var log struct {
		Version string `json:"version"`
		Runs    []struct {
			Results []json.RawMessage `json:"results"`
		} `json:"runs"`
	}
	if code != 1 || json.Unmarshal([]byte(out), &log) != nil || log.Version != "2.1.0" || len(log.Runs[0].Results) != len(rep.Findings) {
		t.Fatalf("sarif: exit %d, %d results for %d findings", code, len(log.Runs[0].Results), len(rep.Findings))
	}

	// Same input, same bytes.
	_, again, _ := runCheck(t, append(args, "-o", "sarif")...)
	if again != out {
		t.Error("SARIF output differs between two runs")
	}
}
