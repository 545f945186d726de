package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubewin/kubewin/internal/cliutil"
	"github.com/kubewin/kubewin/internal/join"
)

// The node-side commands' usage paths; the join itself runs against a real cluster and kubelet
// in internal/join's end-to-end test.
func TestJoinCommandUsage(t *testing.T) {
	code, out, _ := runCLI(t, "join", "--dry-run", "-o", "json")
	var dry struct {
		Steps []struct{ Name, Description string } `json:"steps"`
	}
	if code != cliutil.ExitOK || json.Unmarshal([]byte(out), &dry) != nil || len(dry.Steps) != len(join.Steps()) {
		t.Fatalf("join --dry-run -o json: exit %d\n%s", code, out)
	}
	if dry.Steps[0].Name != "preflight" || dry.Steps[len(dry.Steps)-1].Name != "check-pod" {
		t.Errorf("steps %+v", dry.Steps)
	}
	code, out, _ = runCLI(t, "join", "--dry-run")
	if code != cliutil.ExitOK || !strings.Contains(out, "tls-bootstrap") {
		t.Errorf("join --dry-run: exit %d\n%s", code, out)
	}
	dir := t.TempDir()
	badToken := filepath.Join(dir, "token")
	if err := os.WriteFile(badToken, []byte("not-a-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"join", "--server", "https://10.0.0.1:6443"}, "--binaries"},
		{[]string{"join", "--token", "abcdef.0123456789abcdef", "--token-file", badToken, "--binaries", dir}, "give one"},
		{[]string{"join", "--token-file", filepath.Join(dir, "missing"), "--binaries", dir}, "--token-file"},
		// The file's content is the token (trimmed), checked as --token would be.
		{[]string{"join", "--server", "https://10.0.0.1:6443", "--token-file", badToken, "--ca-cert-hash", "sha256:" + strings.Repeat("a", 64),
			"--binaries", dir, "--root", dir, "--init", "none"}, "--token: expected"},
		{[]string{"join", "--binaries", t.TempDir(), "--init", "upstart"}, "--init"},
		{[]string{"join", "-o", "yaml", "--dry-run"}, "output"},
	} {
		code, _, errOut := runCLI(t, tc.args...)
		if code != cliutil.ExitBadInput || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, want 2 naming %s\n%s", tc.args, code, tc.want, errOut)
		}
	}
	code, out, _ = runCLI(t, "node", "run", "--help")
	if code != cliutil.ExitOK || !strings.Contains(out, "services.json") {
		t.Errorf("node run --help: exit %d\n%s", code, out)
	}
}
