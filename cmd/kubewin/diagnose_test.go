package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

const diagLogs = "../../testdata/logs/"

func TestDiagnoseCommand(t *testing.T) {
	tests := []struct {
		name       string
		args       []string
		stdin      string
		code       int
		wantOut    []string
		wantErr    string
		jsonReport bool
	}{
		{name: "error findings exit 1", args: []string{"diagnose", diagLogs + "seed000-faq.log"}, code: 1,
			wantOut: []string{"ERROR   KUBEPROXY-LB-PORT-EXISTS", "hnsdiag list loadbalancers", "WINDOWS-CAPABILITY-UNREACHABLE"}},
		{name: "decoded FlexVolume sample", args: []string{"diagnose", diagLogs + "signatures/KUBELET-FLEXVOLUME-INIT-OUTPUT.log"}, code: 1,
			wantOut: []string{"无法将“RunFlexVolume”项识别为 cmdlet"}},
		{name: "noise only exit 0", args: []string{"diagnose", diagLogs + "signatures/KUBELET-RUN-AS-UID-WINDOWS.log"}, code: 0,
			wantOut: []string{"Known noise", "KUBELET-RUN-AS-UID-WINDOWS"}},
		{name: "json", args: []string{"diagnose", "-o", "json", diagLogs + "seed002-hyperv.log"}, code: 1, jsonReport: true,
			wantOut: []string{`"id": "CONTAINERD-OS-MISMATCH"`}},
		{name: "stdin", args: []string{"diagnose", "-"}, code: 1,
			stdin:   "F0421 01:08:30.053087    2668 server.go:485] unable to create proxier: Environment variable KUBE_NETWORK and network-flag not initialized\n",
			wantOut: []string{"KUBEPROXY-KUBE-NETWORK-UNSET", "<stdin>:1"}},
		{name: "unreadable input exit 2, rest analysed", args: []string{"diagnose", diagLogs + "nope.log", diagLogs + "seed002-hyperv.log"}, code: 2,
			wantOut: []string{"CONTAINERD-OS-MISMATCH", "Inputs that could not be read", "nope.log"}, wantErr: "1 input could not be read"},
		{name: "bad format", args: []string{"diagnose", "-o", "yaml", diagLogs + "seed002-hyperv.log"}, code: 2, wantErr: `unknown output format "yaml"`},
		{name: "no input", args: []string{"diagnose"}, code: 2, wantErr: "requires at least 1 arg"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := run(tt.args, strings.NewReader(tt.stdin), &out, &errb)
			if code != tt.code {
				t.Fatalf("exit %d, want %d; stderr: %s", code, tt.code, errb.String())
			}
			for _, w := range tt.wantOut {
				if !strings.Contains(out.String(), w) {
					t.Errorf("stdout lacks %q:\n%s", w, out.String())
				}
			}
			if tt.wantErr != "" && !strings.Contains(errb.String(), tt.wantErr) {
				t.Errorf("stderr %q lacks %q", errb.String(), tt.wantErr)
			}
			if tt.jsonReport {
				var v map[string]any
				if err := json.Unmarshal(out.Bytes(), &v); err != nil {
					t.Fatalf("json: %v", err)
				}
			}
		})
	}
}

func TestDiagnoseListSignatures(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"diagnose", "--list-signatures"}, strings.NewReader(""), &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if !strings.Contains(out.String(), "KUBEPROXY-LB-PORT-EXISTS") || !strings.Contains(out.String(), "(fallback)") {
		t.Errorf("list: %s", out.String())
	}
	out.Reset()
	if code := run([]string{"diagnose", "--list-signatures", "-o", "json"}, strings.NewReader(""), &out, &errb); code != 0 {
		t.Fatalf("json exit %d", code)
	}
	var sigs []map[string]any
	if err := json.Unmarshal(out.Bytes(), &sigs); err != nil || len(sigs) < 50 {
		t.Fatalf("json catalogue: %v, %d entries", err, len(sigs))
	}
	if code := run([]string{"diagnose", "--list-signatures", "x.log"}, strings.NewReader(""), &out, &errb); code != 2 {
		t.Errorf("--list-signatures with inputs: exit %d, want 2", code)
	}
}
