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

// --dumps: a keepalived state dump of master3 (testdata/verify/real) saying it is MASTER makes
// the page show master3 as the current holder instead of the planned master1.
func TestReportDumps(t *testing.T) {
	dir := t.TempDir()
	dumps := filepath.Join(dir, "dumps", "master3")
	if err := os.MkdirAll(dumps, 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "verify", "real", "master3.keepalived.data"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dumps, "keepalived.data"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "now.html")
	code, _, stderr := runCLI(t, "report", "-o", out, "--dumps", filepath.Join(dir, "dumps"), "--scenario", "gateway-down=master2")
	if code != cliutil.ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	page, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(page), `"holders":{"VI_`) || !strings.Contains(string(page), `":"master3"}`) {
		t.Errorf("page does not show master3 holding the gateway from its dump")
	}
}
