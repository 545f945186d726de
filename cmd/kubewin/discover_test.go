package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/kubewin/kubewin/internal/testenv"
	"github.com/kubewin/kubewin/pkg/api/v1alpha1"
)

func runCLI(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(args, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

func TestDiscoverCLI(t *testing.T) {
	cp := testenv.StartControlPlane(t)
	ctx := context.Background()
	if err := cp.CreateFiles(ctx, filepath.Join("..", "..", "testdata", "clusters", "canal", "objects.yaml")); err != nil {
		t.Fatal(err)
	}

	code, out, errOut := runCLI(t, "discover", "--kubeconfig", cp.KubeconfigPath)
	if code != 0 {
		t.Fatalf("exit %d, stderr:\n%s\nstdout:\n%s", code, errOut, out)
	}
	var c v1alpha1.Cluster
	if err := yaml.UnmarshalStrict([]byte(out), &c); err != nil {
		t.Fatalf("YAML output is not a strict Cluster: %v\n%s", err, out)
	}
	if c.Metadata.Name != "canal-lab" || c.Spec.Design != v1alpha1.DesignFlannelHostGW || len(c.Spec.Nodes) != 1 ||
		!reflect.DeepEqual(c.Spec.Nodes[0].NICs, []v1alpha1.NIC{{Name: "enp1s0", IP: "10.3.0.5", Prefix: 22}}) {
		t.Errorf("unexpected spec: %+v", c)
	}
	if !strings.Contains(out, "type: flannel # DaemonSet kube-system/canal (Canal: flannel networking, Calico policy)") {
		t.Errorf("YAML lacks provenance comments:\n%s", out)
	}

	code, out, _ = runCLI(t, "discover", "--kubeconfig", cp.KubeconfigPath, "-o", "json")
	if code != 0 {
		t.Fatalf("-o json: exit %d", code)
	}
	var res struct {
		Cluster    v1alpha1.Cluster                   `json:"cluster"`
		Provenance map[string]struct{ Source string } `json:"provenance"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("JSON output: %v", err)
	}
	if res.Provenance["spec.networking.serviceCIDR"].Source != "ServiceCIDR kubernetes (networking.k8s.io/v1)" {
		t.Errorf("provenance: %v", res.Provenance["spec.networking.serviceCIDR"])
	}

	// A conflicting source makes it exit 1, with the partial spec still printed.
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "kube-proxy", Namespace: "kube-system"},
		Data: map[string]string{"config.conf": "apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\nclusterCIDR: 10.32.0.0/12\n"}}
	if _, err := cp.Clientset(t).CoreV1().ConfigMaps("kube-system").Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = runCLI(t, "discover", "--kubeconfig", cp.KubeconfigPath)
	if code != 1 || !strings.Contains(out, "kind: Cluster") {
		t.Errorf("conflict: exit %d, stdout:\n%s", code, out)
	}
	for _, part := range []string{"conflict: spec.networking.podCIDRs: 10.244.0.0/16 (ConfigMap kube-system/kubeadm-config (ClusterConfiguration networking.podSubnet));",
		"10.32.0.0/12 (ConfigMap kube-system/kube-proxy (KubeProxyConfiguration clusterCIDR));", "using 10.244.0.0/16"} {
		if !strings.Contains(errOut, part) {
			t.Errorf("stderr lacks %q:\n%s", part, errOut)
		}
	}

	// --context selects a context of the kubeconfig; an unknown one is bad input.
	if code, _, errOut := runCLI(t, "discover", "--kubeconfig", cp.KubeconfigPath, "--context", "nope"); code != 2 || !strings.Contains(errOut, `context "nope" does not exist`) {
		t.Errorf("unknown context: exit %d, %s", code, errOut)
	}
}

func TestDiscoverCLIUsage(t *testing.T) {
	code, out, _ := runCLI(t, "discover", "--print-rbac")
	if code != 0 || !strings.Contains(out, "kind: ClusterRole") || !strings.Contains(out, "name: kubewin-discover") {
		t.Errorf("--print-rbac: exit %d\n%s", code, out)
	}
	if code, _, errOut := runCLI(t, "discover", "-o", "xml", "--kubeconfig", "x"); code != 2 || !strings.Contains(errOut, `unknown output format "xml"`) {
		t.Errorf("-o xml: exit %d %s", code, errOut)
	}
	if code, _, errOut := runCLI(t, "discover", "--kubeconfig", filepath.Join(t.TempDir(), "none")); code != 2 || !strings.Contains(errOut, "load kubeconfig") {
		t.Errorf("missing kubeconfig: exit %d %s", code, errOut)
	}
}

// writeKubeconfig points a kubeconfig at a loopback address (no credentials are needed to fail).
func writeKubeconfig(t *testing.T, server string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "kubeconfig")
	cfg := fmt.Sprintf("apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: %q, insecure-skip-tls-verify: true}\ncontexts:\n- name: c\n  context: {cluster: c, user: u}\ncurrent-context: c\nusers:\n- name: u\n  user: {token: t}\n", server)
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestDiscoverCLIUnreachable(t *testing.T) {
	// Nothing listens: refused at once.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	l.Close()
	code, _, errOut := runCLI(t, "discover", "--kubeconfig", writeKubeconfig(t, "https://"+closed))
	if code != 2 || !strings.Contains(errOut, "cannot reach the API server at https://"+closed) {
		t.Errorf("refused: exit %d, %s", code, errOut)
	}

	// A server that accepts and never answers: the error comes within --timeout.
	hang, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer hang.Close()
	go func() {
		var conns []net.Conn
		defer func() {
			for _, c := range conns {
				c.Close()
			}
		}()
		for {
			c, err := hang.Accept()
			if err != nil {
				return
			}
			conns = append(conns, c)
		}
	}()
	start := time.Now()
	code, _, errOut = runCLI(t, "discover", "--timeout", "1s", "--kubeconfig", writeKubeconfig(t, "https://"+hang.Addr().String()))
	elapsed := time.Since(start)
	if code != 2 || !strings.Contains(errOut, "cannot reach the API server") || !strings.Contains(errOut, "timeout 1s") {
		t.Errorf("hanging server: exit %d, %s", code, errOut)
	}
	// Not a timing assertion on speed: the bound is the flag's contract (1 s) plus slack.
	if elapsed > 5*time.Second {
		t.Errorf("hanging server: gave up after %s with --timeout 1s", elapsed)
	}
}
