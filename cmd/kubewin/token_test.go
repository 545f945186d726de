package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubewin/kubewin/internal/cliutil"
	"github.com/kubewin/kubewin/internal/testenv"
)

func TestTokenCommands(t *testing.T) {
	cp := testenv.StartControlPlane(t)
	admin := cp.Clientset(t)
	kc := cp.KubeconfigPath
	secrets := func() int {
		l, err := admin.CoreV1().Secrets("kube-system").List(context.Background(), metav1.ListOptions{FieldSelector: "type=bootstrap.kubernetes.io/token"})
		if err != nil {
			t.Fatal(err)
		}
		return len(l.Items)
	}

	code, out, errOut := runCLI(t, "token", "create", "--kubeconfig", kc, "--dry-run")
	if code != cliutil.ExitOK || !strings.Contains(out, "kind: Secret") || !strings.Contains(out, "kind: ClusterRoleBinding") ||
		!strings.Contains(out, "nothing was created") || secrets() != 0 {
		t.Fatalf("dry run: exit %d, %d secrets\n%s%s", code, secrets(), out, errOut)
	}

	code, out, errOut = runCLI(t, "token", "create", "--kubeconfig", kc, "--pool", "windows", "--ttl", "2h", "-o", "json")
	if code != cliutil.ExitOK {
		t.Fatalf("create: exit %d: %s", code, errOut)
	}
	var created struct {
		ID, Token, CACertHash, JoinCommand string
	}
	if err := json.Unmarshal([]byte(out), &created); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !strings.HasPrefix(created.JoinCommand, "kubewin join --server "+cp.Host+" --token "+created.Token+" --ca-cert-hash sha256:") || secrets() != 1 {
		t.Errorf("join command %q, %d secrets", created.JoinCommand, secrets())
	}

	code, out, _ = runCLI(t, "token", "list", "--kubeconfig", kc)
	if code != cliutil.ExitOK || !strings.Contains(out, created.ID) || !strings.Contains(out, "windows") || strings.Contains(out, created.Token) {
		t.Errorf("list: exit %d\n%s", code, out)
	}
	code, out, _ = runCLI(t, "token", "delete", "--kubeconfig", kc, created.Token)
	if code != cliutil.ExitOK || !strings.Contains(out, "deleted token "+created.ID) || secrets() != 0 {
		t.Errorf("delete: exit %d, %d secrets\n%s", code, secrets(), out)
	}
	for _, args := range [][]string{
		{"token", "create", "--kubeconfig", kc, "--pool", "Bad_Pool"},
		{"token", "delete", "--kubeconfig", kc, "nosuch"},
		{"token", "create", "--kubeconfig", kc, "-o", "xml"},
	} {
		if code, _, _ := runCLI(t, args...); code != cliutil.ExitBadInput {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
	}
}
