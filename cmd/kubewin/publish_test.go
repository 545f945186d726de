package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

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

// TestPublishWindowsPrerequisites: for a HostProcess design publish applies what the cluster
// lacks for Windows nodes (kubewin plan's cluster/hostprocess/) by server-side apply with
// strict validation, once; a kind the cluster does not serve (no Tigera operator) fails before
// anything of that design is applied; --windows-prerequisites skip applies nothing.
func TestPublishWindowsPrerequisites(t *testing.T) {
	cp := testenv.StartControlPlane(t)
	admin := cp.Clientset(t)
	kc := cp.KubeconfigPath
	ctx := context.Background()
	// The flannel cluster's own namespace exists (flannel's kube-flannel.yml creates it).
	if _, err := admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "kube-flannel"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	flannel := filepath.Join("..", "..", "testdata", "specs", "good", "flannel-hostprocess.yaml")

	code, out, errOut := runCLI(t, "publish", "--kubeconfig", kc, "-f", flannel, "--windows-prerequisites", "skip")
	if code != cliutil.ExitOK || strings.Contains(out, "DaemonSet") {
		t.Fatalf("skip: exit %d\n%s%s", code, out, errOut)
	}
	if dss, _ := admin.AppsV1().DaemonSets("").List(ctx, metav1.ListOptions{}); len(dss.Items) != 0 {
		t.Fatalf("--windows-prerequisites skip applied %d DaemonSets", len(dss.Items))
	}
	code, out, errOut = runCLI(t, "publish", "--kubeconfig", kc, "-f", flannel)
	for _, want := range []string{"created   DaemonSet kube-system/kube-proxy-windows", "created   DaemonSet kube-flannel/", "created   ConfigMap kube-flannel/"} {
		if code != cliutil.ExitOK || !strings.Contains(out, want) {
			t.Fatalf("publish flannel/hostprocess: exit %d, want %q\n%s%s", code, want, out, errOut)
		}
	}
	ds, err := admin.AppsV1().DaemonSets("kube-system").Get(ctx, "kube-proxy-windows", metav1.GetOptions{})
	if err != nil || ds.Spec.Template.Spec.NodeSelector[corev1.LabelOSStable] != "windows" {
		t.Fatalf("kube-proxy-windows: %v %+v", err, ds)
	}
	managed := false
	for _, f := range ds.ManagedFields {
		managed = managed || (f.Manager == "kubewin" && f.Operation == metav1.ManagedFieldsOperationApply)
	}
	if !managed {
		t.Errorf("kube-proxy-windows is not server-side applied by kubewin: %+v", ds.ManagedFields)
	}
	code, out, _ = runCLI(t, "publish", "--kubeconfig", kc, "-f", flannel)
	if code != cliutil.ExitOK || !strings.Contains(out, "unchanged DaemonSet kube-system/kube-proxy-windows") || strings.Contains(out, "configured") {
		t.Errorf("second publish: exit %d\n%s", code, out)
	}

	// calico/hostprocess on a cluster without the operator's CRDs: refused, nothing of it applied.
	calico := filepath.Join("..", "..", "testdata", "specs", "good", "calico-hostprocess.yaml")
	code, _, errOut = runCLI(t, "publish", "--kubeconfig", kc, "-f", calico)
	if code == cliutil.ExitOK || !strings.Contains(errOut, "does not serve") || !strings.Contains(errOut, "nothing was applied") {
		t.Fatalf("calico without the operator: exit %d\n%s", code, errOut)
	}
	if _, err := admin.CoreV1().ConfigMaps("tigera-operator").Get(ctx, "kubernetes-services-endpoint", metav1.GetOptions{}); err == nil {
		t.Errorf("the Calico services-endpoint ConfigMap was applied although the Installation could not be")
	}

	// With the operator's and Calico's CRDs and an operator install (strictAffinity false,
	// windowsDataplane Disabled, set by the operator's manager): publish takes those fields over.
	clusters := filepath.Join("..", "..", "testdata", "clusters")
	if err := cp.CreateFiles(ctx, filepath.Join(clusters, "crds", "calico.yaml"), filepath.Join(clusters, "crds", "calico-ipamconfig.yaml"),
		filepath.Join(clusters, "crds", "tigera-operator.yaml"), filepath.Join(clusters, "calico-operator", "objects.yaml")); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = runCLI(t, "publish", "--kubeconfig", kc, "-f", calico)
	for _, want := range []string{"IPAMConfig default", "Installation default", "ConfigMap tigera-operator/kubernetes-services-endpoint"} {
		if code != cliutil.ExitOK || !strings.Contains(out, want) {
			t.Fatalf("publish calico/hostprocess: exit %d, want %q\n%s%s", code, want, out, errOut)
		}
	}
	dyn, err := dynamic.NewForConfig(cp.Config)
	if err != nil {
		t.Fatal(err)
	}
	ipam, err := dyn.Resource(schema.GroupVersionResource{Group: "crd.projectcalico.org", Version: "v1", Resource: "ipamconfigs"}).Get(ctx, "default", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if v, _, _ := unstructured.NestedBool(ipam.Object, "spec", "strictAffinity"); !v {
		t.Errorf("IPAMConfig default strictAffinity %v after publish", ipam.Object["spec"])
	}
	inst, err := dyn.Resource(schema.GroupVersionResource{Group: "operator.tigera.io", Version: "v1", Resource: "installations"}).Get(ctx, "default", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if v, _, _ := unstructured.NestedString(inst.Object, "spec", "calicoNetwork", "windowsDataplane"); v != "HNS" {
		t.Errorf("Installation windowsDataplane %q after publish, want HNS", v)
	}
}
