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

// --list and --explain honour -o: JSON is an array of rule objects (one object for --explain),
// SARIF a run whose tool lists the rules and that performed no analysis (no results property).
func TestCheckListAndExplainFormats(t *testing.T) {
	type rule struct {
		ID, Name, Family, Severity, Summary, Why, Fix, Reference string
	}
	code, out, errOut := runCheck(t, "--list", "-o", "json")
	if code != 0 {
		t.Fatalf("--list -o json: exit %d: %s", code, errOut)
	}
	var list []rule
	dec := json.NewDecoder(strings.NewReader(out))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&list); err != nil {
		t.Fatalf("--list -o json is not an array of rules: %v\n%s", err, out)
	}
	if len(list) < 60 {
		t.Fatalf("%d rules listed", len(list))
	}
	ids := map[string]bool{}
	for i, r := range list {
		if r.ID == "" || r.Name == "" || r.Family == "" || r.Summary == "" || r.Why == "" || r.Fix == "" || r.Reference == "" {
			t.Errorf("incomplete rule %+v", r)
		}
		if r.Severity != "info" && r.Severity != "warning" && r.Severity != "error" {
			t.Errorf("%s: severity %q", r.ID, r.Severity)
		}
		if i > 0 && list[i-1].ID >= r.ID {
			t.Errorf("rules not in ID order at %s", r.ID)
		}
		ids[r.ID] = true
	}
	if _, again, _ := runCheck(t, "--list", "-o", "json"); again != out {
		t.Error("--list -o json differs between two runs")
	}

	code, out, _ = runCheck(t, "--explain", "KW1103", "-o", "json")
	var one rule
	dec = json.NewDecoder(strings.NewReader(out))
	dec.DisallowUnknownFields()
	if code != 0 || dec.Decode(&one) != nil || one.ID != "KW1103" || one.Name != "resolv-conf-on-windows" || one.Why == "" {
		t.Fatalf("--explain -o json: exit %d, %+v\n%s", code, one, out)
	}

	type sarif struct {
		Version string `json:"version"`
		Runs    []struct {
			Tool struct {
				Driver struct {
					Name  string `json:"name"`
					Rules []struct {
						ID                   string `json:"id"`
						DefaultConfiguration struct {
							Level string `json:"level"`
						} `json:"defaultConfiguration"`
					} `json:"rules"`
				} `json:"driver"`
			} `json:"tool"`
			Results *[]json.RawMessage `json:"results"`
		} `json:"runs"`
	}
	for _, tc := range []struct {
		args  []string
		rules int
	}{{[]string{"--list", "-o", "sarif"}, len(list)}, {[]string{"--explain", "KW1804", "-o", "sarif"}, 1}} {
		code, out, _ := runCheck(t, tc.args...)
		var log sarif
		if code != 0 || json.Unmarshal([]byte(out), &log) != nil || log.Version != "2.1.0" || len(log.Runs) != 1 {
			t.Fatalf("%v: exit %d\n%s", tc.args, code, out)
		}
		run := log.Runs[0]
		if run.Tool.Driver.Name != "kubewin" || len(run.Tool.Driver.Rules) != tc.rules {
			t.Errorf("%v: driver %q with %d rules, want %d", tc.args, run.Tool.Driver.Name, len(run.Tool.Driver.Rules), tc.rules)
		}
		if run.Results != nil {
			t.Errorf("%v: a rules listing must not claim an analysis (results present)", tc.args)
		}
		for _, r := range run.Tool.Driver.Rules {
			if !ids[r.ID] || r.DefaultConfiguration.Level == "" {
				t.Errorf("%v: rule %+v", tc.args, r)
			}
		}
	}
	if code, _, _ := runCheck(t, "--list", "-o", "yaml"); code != 2 {
		t.Errorf("--list -o yaml: exit %d, want 2", code)
	}
	if code, _, _ := runCheck(t, "--explain", "KW1103", "-o", "yaml"); code != 2 {
		t.Errorf("--explain -o yaml: exit %d, want 2", code)
	}
}

// The README tour: plan the example into a directory, then check that directory. Nothing
// kubewin wrote is unrecognised or wrong; the two insecure registries of the example's spec
// are the only findings (true of the spec, so the exit code stays 1), and -o json says how
// many of kubewin's own files held nothing to check.
func TestCheckPlannedBundle(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	if code, _, errOut := runPlan(t, "", "-d", dir); code != 0 {
		t.Fatalf("plan: exit %d: %s", code, errOut)
	}
	code, out, errOut := runCheck(t, "--example", dir, "-o", "json")
	if code != 1 {
		t.Fatalf("exit %d, want 1 (KW1804 of the spec)\n%s\n%s", code, out, errOut)
	}
	var rep struct {
		Findings []struct {
			Rule     string `json:"rule"`
			Severity string `json:"severity"`
			Location struct {
				File string `json:"file"`
			} `json:"location"`
		} `json:"findings"`
		Inputs struct {
			KubewinFiles int `json:"kubewinFiles"`
		} `json:"inputs"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	for _, f := range rep.Findings {
		if f.Rule != "KW1804" || strings.HasPrefix(f.Location.File, dir) {
			t.Errorf("finding %+v on kubewin's own output", f)
		}
	}
	if len(rep.Findings) != 2 || rep.Inputs.KubewinFiles == 0 {
		t.Errorf("%d findings (want the 2 KW1804), %d kubewin files skipped", len(rep.Findings), rep.Inputs.KubewinFiles)
	}
	_, text, _ := runCheck(t, "--example", dir)
	if !strings.Contains(text, "kubewin wrote that hold nothing to check") || strings.Contains(text, "KW0002") {
		t.Errorf("text output:\n%s", text)
	}
}

// An empty report is an empty findings array, never null.
func TestCheckJSONEmptyFindings(t *testing.T) {
	cfg := writeTemp(t, "config.yaml", cleanKubeletConfig)
	code, out, _ := runCheck(t, cfg, "--kubelet-flags", cleanKubelet, "-o", "json")
	var rep map[string]json.RawMessage
	if code != 0 || json.Unmarshal([]byte(out), &rep) != nil {
		t.Fatalf("exit %d\n%s", code, out)
	}
	if string(rep["findings"]) != "[]" || string(rep["counts"]) != "{}" {
		t.Errorf("findings %s, counts %s; want [] and {}", rep["findings"], rep["counts"])
	}
}

// --explain context shows what kubewin inferred about each input and from what: an OS proven by
// an npipe endpoint, and one only assumed.
func TestCheckExplainContext(t *testing.T) {
	win := writeTemp(t, "kubeadm-flags.env", "KUBELET_KUBEADM_ARGS=\"--container-runtime-endpoint=npipe:////./pipe/containerd-containerd\"\n")
	bare := writeTemp(t, "kubeadm-flags.env", "KUBELET_KUBEADM_ARGS=\"--v=2\"\n")
	code, out, errOut := runCheck(t, "--explain", "context", "--kubernetes-version", "1.30", win, bare)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"target Kubernetes v1.30 (from --kubernetes-version)", "evidence: --container-runtime-endpoint=npipe:", "evidence: none: assumed windows"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	code, out, _ = runCheck(t, "--explain", "context", "-o", "json", win)
	if code != 0 || !strings.Contains(out, `"os": "windows"`) {
		t.Errorf("json: exit %d\n%s", code, out)
	}
}
