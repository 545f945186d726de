package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubewin/kubewin/internal/cliutil"
	"github.com/kubewin/kubewin/internal/rollout"
	"github.com/kubewin/kubewin/internal/rollout/api"
	"github.com/kubewin/kubewin/internal/testenv"
)

// TestRolloutCLI drives the commands against a real API server: the refusals and exit codes,
// a detached start, pause/resume/abort, status in both formats, a run of an aborted rollout
// (it ends at once), and the manifest. The rollout of nodes itself is tested in
// internal/rollout against a simulated node agent.
func TestRolloutCLI(t *testing.T) {
	cp := testenv.StartControlPlane(t)
	c := cp.Clientset(t)
	ctx := context.Background()
	for _, n := range []string{"cli-a", "cli-b"} {
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n, Labels: map[string]string{api.LabelPool: "cli", corev1.LabelOSStable: "linux"}}}
		if _, err := c.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	kc := cp.KubeconfigPath
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	sum := strings.Repeat("ab", 32)
	rev := func(kubelet string) string {
		return "name: r-" + strings.ReplaceAll(kubelet, ".", "-") + "\nkubelet: " + kubelet + "\nbinaries:\n  source: https://mirror.invalid/k\n  checksums: {kubelet: " + sum + "}\n"
	}
	newer := write("newer.yaml", rev("v1.38.0"))
	good := write("good.yaml", rev("v1.37.1"))
	winOnLinux := write("win.yaml", "name: kb\nosUpdates: [{kb: KB5040000, url: 'https://x/kb.msu', sha256: "+sum+"}]\n")
	unknown := write("unknown.yaml", rev("v1.37.1")+"flags: x\n")

	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"skew", []string{"--pool", "cli", "--to", newer}, "newer than kube-apiserver v1.37.1"},
		{"windows update on linux", []string{"--pool", "cli", "--to", winOnLinux}, "not a Windows node"},
		{"unknown field", []string{"--pool", "cli", "--to", unknown}, "unknown field"},
		{"empty pool", []string{"--pool", "nothing", "--to", good}, "has no nodes"},
		{"bad probe", []string{"--pool", "cli", "--to", good, "--probe", "tcp:x"}, "unknown kind"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, errOut := runCLI(t, append([]string{"rollout", "start", "--kubeconfig", kc, "--detach"}, tc.args...)...)
			if code != cliutil.ExitBadInput || !strings.Contains(errOut, tc.want) {
				t.Errorf("exit %d, stderr %q; want 2 and %q", code, errOut, tc.want)
			}
		})
	}
	if cms, err := c.CoreV1().ConfigMaps(rollout.DefaultNamespace).List(ctx, metav1.ListOptions{LabelSelector: "kubewin.io/rollout"}); err != nil || len(cms.Items) != 0 {
		t.Fatalf("refused rollouts were recorded: %v %v", err, cms)
	}

	code, out, errOut := runCLI(t, "rollout", "start", "--kubeconfig", kc, "--detach", "--pool", "cli", "--to", good, "--max-unavailable", "2", "--probe", "ready:daemonset/kube-system/kube-proxy")
	if code != cliutil.ExitOK || !strings.Contains(out, "pool cli → r-v1-37-1: Running") || !strings.Contains(out, "cli-a") {
		t.Fatalf("start --detach: exit %d\n%s%s", code, out, errOut)
	}
	code, _, errOut = runCLI(t, "rollout", "start", "--kubeconfig", kc, "--detach", "--pool", "cli", "--to", good)
	if code != cliutil.ExitBadInput || !strings.Contains(errOut, "already has a rollout") {
		t.Errorf("second start: exit %d %s", code, errOut)
	}
	for _, step := range []struct {
		verb  string
		state rollout.State
		code  int
	}{
		{"pause", rollout.StatePaused, cliutil.ExitOK},
		{"resume", rollout.StateRunning, cliutil.ExitOK},
		{"abort", rollout.StateAborted, cliutil.ExitFindings},
	} {
		code, out, errOut := runCLI(t, "rollout", step.verb, "--kubeconfig", kc, "--pool", "cli", "-o", "json")
		var st rollout.Status
		if err := json.Unmarshal([]byte(out), &st); err != nil || code != step.code || st.State != step.state || len(st.Nodes) != 2 {
			t.Errorf("%s: exit %d, %+v (%v)\n%s", step.verb, code, st, err, errOut)
		}
	}
	if code, _, errOut := runCLI(t, "rollout", "resume", "--kubeconfig", kc, "--pool", "cli"); code != cliutil.ExitBadInput || !strings.Contains(errOut, "Aborted already") {
		t.Errorf("resume after abort: exit %d %s", code, errOut)
	}
	// An aborted rollout that never started a node: run ends at once, nothing touched.
	code, out, _ = runCLI(t, "rollout", "run", "--kubeconfig", kc, "--pool", "cli")
	if code != cliutil.ExitFindings || !strings.Contains(out, "Aborted") {
		t.Errorf("run of an aborted rollout: exit %d\n%s", code, out)
	}
	for _, n := range []string{"cli-a", "cli-b"} {
		node, err := c.CoreV1().Nodes().Get(ctx, n, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if node.Spec.Unschedulable || node.Annotations[api.AnnotationPhase] != "" {
			t.Errorf("%s touched: %v", n, node.Annotations)
		}
	}
	code, out, _ = runCLI(t, "rollout", "manifest", "--image", "registry.example/kubewin:v1")
	if code != cliutil.ExitOK || !strings.Contains(out, "kind: Deployment") || !strings.Contains(out, "pods/eviction") {
		t.Errorf("manifest: exit %d\n%s", code, out)
	}
	if code, _, _ := runCLI(t, "rollout", "manifest"); code != cliutil.ExitBadInput {
		t.Errorf("manifest without --image: exit %d", code)
	}
}
