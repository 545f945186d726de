package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubewin/kubewin/internal/cliutil"
)

func TestReportCommand(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "report.html")
	logs := filepath.Join(dir, "kube-proxy.log")
	// A real kube-proxy line (see testdata/logs/signatures/KUBEPROXY-KUBE-NETWORK-UNSET.log).
	if err := os.WriteFile(logs, []byte("F0421 01:08:30.053087    2668 server.go:485] unable to create proxier: Environment variable KUBE_NETWORK and network-flag not initialized\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runCLI(t, "report", "-o", out, "--logs", logs, "--scenario", "gateway-down=master1,master2,master3")
	if code != cliutil.ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "wrote "+out) || !strings.Contains(stdout, "2 scenarios") {
		t.Errorf("summary = %q", stdout)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	for _, want := range []string{"<!DOCTYPE html>", `"name":"mylan"`, "node009", "KUBEPROXY-KUBE-NETWORK-UNSET", "gateway-down=master1,master2,master3"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"report", "-o", filepath.Join(dir, "x.html"), "-f", filepath.Join(dir, "missing.yaml")}, "missing.yaml"},
		{[]string{"report", "-o", filepath.Join(dir, "y.html"), "--scenario", "gateway-down=nosuchnode"}, "nosuchnode"},
		{[]string{"report", "-o", ""}, "-o"},
	} {
		code, _, stderr := runCLI(t, tc.args...)
		if code != cliutil.ExitBadInput || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 naming %q", tc.args, code, stderr, tc.want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "y.html")); !os.IsNotExist(err) {
		t.Errorf("a failed report left a file behind: %v", err)
	}
}
