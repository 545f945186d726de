package testenv

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

const crdAndInstance = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.kubewin.io
spec:
  group: example.kubewin.io
  scope: Cluster
  names: {plural: widgets, singular: widget, kind: Widget, listKind: WidgetList}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size: {type: integer}
---
apiVersion: example.kubewin.io/v1
kind: Widget
metadata: {name: w1}
spec: {size: 3}
---
apiVersion: v1
kind: Namespace
metadata: {name: fixtures}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: cm, namespace: fixtures}
data: {k: v}
---
apiVersion: v1
kind: Node
metadata: {name: n1}
status:
  addresses: [{type: InternalIP, address: 192.0.2.10}]
`

func TestControlPlane(t *testing.T) {
	ctx := context.Background()
	var procs []*process
	t.Run("lifecycle", func(t *testing.T) {
		cp := StartControlPlane(t, WithServiceCIDR("10.176.0.0/12"))
		procs = []*process{cp.etcd} // the API server process is replaced by the restart below
		t.Logf("start took %s", cp.StartDuration)
		cs := cp.Clientset(t)

		svc, err := cs.CoreV1().Services("default").Get(ctx, "kubernetes", metav1.GetOptions{})
		if err != nil {
			t.Fatalf("get kubernetes service: %v", err)
		}
		if svc.Spec.ClusterIP != "10.176.0.1" {
			t.Errorf("kubernetes service IP = %s, want 10.176.0.1 (first address of the service CIDR)", svc.Spec.ClusterIP)
		}

		// The kubeconfig file authenticates as the same admin.
		kcfg, err := clientcmd.BuildConfigFromFlags("", cp.KubeconfigPath)
		if err != nil {
			t.Fatalf("load kubeconfig: %v", err)
		}
		kcs, err := kubernetes.NewForConfig(kcfg)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := kcs.CoreV1().Namespaces().Get(ctx, "kube-system", metav1.GetOptions{}); err != nil {
			t.Fatalf("kubeconfig client: %v", err)
		}

		objs, err := DecodeObjects([]byte(crdAndInstance))
		if err != nil {
			t.Fatal(err)
		}
		if err := cp.CreateObjects(ctx, objs...); err != nil {
			t.Fatalf("create fixtures: %v", err)
		}
		node, err := cs.CoreV1().Nodes().Get(ctx, "n1", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(node.Status.Addresses) != 1 || node.Status.Addresses[0].Address != "192.0.2.10" {
			t.Errorf("node status not kept on create: %+v", node.Status.Addresses)
		}

		// Stop only the API server: etcd keeps the data, the API server comes back on the
		// same address and serves it again.
		if err := cp.StopAPIServer(); err != nil {
			t.Fatalf("stop apiserver: %v", err)
		}
		short, cancel := context.WithTimeout(ctx, 2*time.Second)
		_, err = cs.CoreV1().ConfigMaps("fixtures").Get(short, "cm", metav1.GetOptions{})
		cancel()
		if err == nil {
			t.Fatal("API server still answers after StopAPIServer")
		}
		if err := cp.StartAPIServer(); err != nil {
			t.Fatalf("restart apiserver: %v", err)
		}
		cm, err := cs.CoreV1().ConfigMaps("fixtures").Get(ctx, "cm", metav1.GetOptions{})
		if err != nil || cm.Data["k"] != "v" {
			t.Fatalf("configmap after restart: %v %v", cm, err)
		}
		procs = append(procs, cp.api)
		if err := cp.StartAPIServer(); err == nil {
			t.Error("StartAPIServer on a running API server: want an error")
		}
	})
	// The subtest's cleanup has run: both processes must be gone and the directory removed.
	for _, p := range procs {
		if done, _ := p.exited(); !done {
			t.Errorf("%s still running after cleanup", p.name)
		}
	}
}

func TestAssetsFromEnvironment(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("KUBEWIN_TEST_ASSETS", dir)
	got, err := Assets()
	if err != nil || got != dir {
		t.Fatalf("Assets() = %q, %v; want %q", got, err, dir)
	}
	if _, err := binary(dir, "kube-apiserver"); err == nil {
		t.Error("binary() of a missing file: want an error")
	}
	if err := os.WriteFile(dir+"/etcd", []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := binary(dir, "etcd"); err == nil {
		t.Error("binary() of a non-executable file: want an error")
	}
}

// Control planes started at the same time (as by concurrent test packages) get their own ports,
// directories and data.
func TestConcurrentControlPlanes(t *testing.T) {
	hosts := make(chan string, 2)
	for _, name := range []string{"a", "b"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			cp := StartControlPlane(t)
			hosts <- cp.Host
			ctx := context.Background()
			cs := cp.Clientset(t)
			if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "only-in-" + name}}, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			// Give the other control plane time to create its namespace too.
			time.Sleep(2 * time.Second)
			list, err := cs.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			for _, ns := range list.Items {
				if strings.HasPrefix(ns.Name, "only-in-") && ns.Name != "only-in-"+name {
					t.Errorf("control plane %s sees %s of the other one", name, ns.Name)
				}
			}
		})
	}
	t.Cleanup(func() {
		close(hosts)
		a, b := <-hosts, <-hosts
		if a == b || a == "" {
			t.Errorf("control planes share an address: %q %q", a, b)
		}
	})
}
