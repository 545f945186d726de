package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
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
	objs, err := testenv.DecodeObjects([]byte(out))
	if code != 0 || err != nil {
		t.Fatalf("--print-rbac: exit %d, %v\n%s", code, err, out)
	}
	var kinds []string
	for _, o := range objs {
		kinds = append(kinds, o.GetKind()+" "+o.GetNamespace()+"/"+o.GetName())
	}
	wantKinds := []string{
		"ClusterRole /kubewin-discover", "ClusterRoleBinding /kubewin-discover",
		"Role default/kubewin-discover", "RoleBinding default/kubewin-discover",
		"Role kube-system/kubewin-discover", "RoleBinding kube-system/kubewin-discover",
	}
	if !reflect.DeepEqual(kinds, wantKinds) {
		t.Errorf("--print-rbac objects:\n%s\nwant:\n%s", strings.Join(kinds, "\n"), strings.Join(wantKinds, "\n"))
	}
	// -o json is one v1 List of the same objects (TestDiscoverLeastPrivilege compares them).
	code, out, _ = runCLI(t, "discover", "--print-rbac", "-o", "json")
	var list struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Items      []struct {
			Kind string `json:"kind"`
		} `json:"items"`
	}
	if err := json.Unmarshal([]byte(out), &list); code != 0 || err != nil || list.APIVersion != "v1" || list.Kind != "List" || len(list.Items) != len(wantKinds) {
		t.Errorf("--print-rbac -o json: exit %d, %v, %+v\n%s", code, err, list, out)
	}
	if code, _, errOut := runCLI(t, "discover", "--print-rbac", "-o", "xml"); code != 2 || !strings.Contains(errOut, `unknown output format "xml"`) {
		t.Errorf("--print-rbac -o xml: exit %d %s", code, errOut)
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

// TestDiscoverCLINotKubernetes: a URL that answers HTTP but not as a Kubernetes API server is
// bad input (exit 2) named as such, not a cluster where every object is absent.
func TestDiscoverCLINotKubernetes(t *testing.T) {
	for _, tc := range []struct {
		name    string
		handler http.HandlerFunc
		want    string
	}{
		{"404 to everything", http.NotFound, `not a Kubernetes API server: GET /version returned 404 Not Found: "404 page not found"`},
		{"HTML to everything", func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, "<html><title>Welcome</title>\n</html>\n")
		}, `not a Kubernetes API server: GET /version returned 200 but no JSON: "<html><title>Welcome</title> ..."`},
		{"JSON without a version", func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"status":"ok"}`)
		}, `not a Kubernetes API server: GET /version returned 200 but no gitVersion in its JSON: "{\"status\":\"ok\"}"`},
		{"403 without a Status", func(w http.ResponseWriter, _ *http.Request) {
			http.Error(w, "Forbidden by proxy", http.StatusForbidden)
		}, `not a Kubernetes API server: GET /version returned 403 Forbidden: "Forbidden by proxy"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewTLSServer(tc.handler) // listens on 127.0.0.1
			defer srv.Close()
			code, out, errOut := runCLI(t, "discover", "--kubeconfig", writeKubeconfig(t, srv.URL))
			if code != 2 || !strings.Contains(errOut, srv.URL+": "+tc.want) || out != "" {
				t.Errorf("exit %d, stderr:\n%s\nwant it to contain %q; stdout:\n%s", code, errOut, srv.URL+": "+tc.want, out)
			}
		})
	}

	// A server that answers 401 is still told apart: the credentials are named, not the server.
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "Unauthorized", http.StatusUnauthorized)
	}))
	defer srv.Close()
	if code, _, errOut := runCLI(t, "discover", "--kubeconfig", writeKubeconfig(t, srv.URL)); code != 2 || !strings.Contains(errOut, "rejected the credentials (401)") {
		t.Errorf("401: exit %d, %s", code, errOut)
	}
}
