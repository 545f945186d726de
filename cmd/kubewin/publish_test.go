package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubewin/kubewin/internal/bootstrap"
	"github.com/kubewin/kubewin/internal/cliutil"
	"github.com/kubewin/kubewin/internal/testenv"
)

func TestPublishCommand(t *testing.T) {
	cp := testenv.StartControlPlane(t)
	admin := cp.Clientset(t)
	kc := cp.KubeconfigPath
	cms := admin.CoreV1().ConfigMaps(bootstrap.PublishedNamespace)

	code, out, errOut := runCLI(t, "publish", "--kubeconfig", kc, "--dry-run")
	if _, err := cms.Get(context.Background(), bootstrap.PublishedName, metav1.GetOptions{}); code != cliutil.ExitOK ||
		!strings.Contains(out, "kind: ConfigMap") || !strings.Contains(out, "resourceNames:") || err == nil {
		t.Fatalf("dry run: exit %d, get err %v\n%s%s", code, err, out, errOut)
	}
	code, out, errOut = runCLI(t, "publish", "--kubeconfig", kc)
	if code != cliutil.ExitOK || !strings.Contains(out, "created   ConfigMap kube-system/kubewin-cluster") {
		t.Fatalf("publish: exit %d\n%s%s", code, out, errOut)
	}
	cm, err := cms.Get(context.Background(), bootstrap.PublishedName, metav1.GetOptions{})
	if err != nil || !strings.Contains(cm.Data[bootstrap.PublishedKey], "kind: Cluster") {
		t.Fatalf("published: %v %v", err, cm)
	}
	code, out, _ = runCLI(t, "publish", "--kubeconfig", kc)
	if code != cliutil.ExitOK || !strings.Contains(out, "unchanged ConfigMap kube-system/kubewin-cluster") {
		t.Errorf("second publish: exit %d\n%s", code, out)
	}
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(bad, []byte("apiVersion: kubewin.io/v1alpha1\nkind: Cluster\nspec: {podCIDR: nope}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := runCLI(t, "publish", "--kubeconfig", kc, "-f", bad); code != cliutil.ExitBadInput || !strings.Contains(errOut, "bad.yaml") {
		t.Errorf("bad description: exit %d: %s", code, errOut)
	}
}
