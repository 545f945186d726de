package bootstrap

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kubewin/kubewin/internal/testenv"
	"github.com/kubewin/kubewin/pkg/api/v1alpha1"
)

// TestPublishAgainstRealAPIServer: the published description is readable with a bootstrap token
// and nothing else in kube-system is (another ConfigMap, the list, Secrets); publishing again is
// a no-op, a changed description updates it, and a hand-edited one is refused by the reader.
func TestPublishAgainstRealAPIServer(t *testing.T) {
	cp := testenv.StartControlPlane(t)
	admin := cp.Clientset(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	spec := v1alpha1.ExampleYAML()

	changes, err := Publish(ctx, admin, spec)
	if err != nil {
		t.Fatal(err)
	}
	if len(changes) != 3 || changes[2].Action != "created" {
		t.Fatalf("first publish: %+v", changes)
	}
	if _, err := admin.CoreV1().ConfigMaps("kube-system").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "other"},
		Data: map[string]string{"x": "y"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	tok, err := NewToken(cp.Host, cp.Config.TLSClientConfig.CAData, TokenOptions{Pool: "windows"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Apply(ctx, admin, tok); err != nil {
		t.Fatal(err)
	}
	cfg := rest.AnonymousClientConfig(cp.Config)
	cfg.BearerToken = tok.Token
	as, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	got, sum, err := ReadPublished(ctx, as)
	if err != nil {
		t.Fatalf("the token cannot read the published description: %v", err)
	}
	if string(got) != string(spec) || len(sum) != 64 {
		t.Errorf("read back %d bytes (sum %q), published %d", len(got), sum, len(spec))
	}
	if _, err := as.CoreV1().ConfigMaps("kube-system").Get(ctx, "other", metav1.GetOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("token read another kube-system ConfigMap: err = %v, want Forbidden", err)
	}
	if _, err := as.CoreV1().ConfigMaps("kube-system").List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("token listed kube-system ConfigMaps: err = %v, want Forbidden", err)
	}
	if _, err := as.CoreV1().Secrets("kube-system").Get(ctx, "bootstrap-token-"+tok.ID, metav1.GetOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("token read its own Secret: err = %v, want Forbidden", err)
	}
	if _, err := as.CoreV1().ConfigMaps("kube-system").Update(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: PublishedName},
		Data: map[string]string{PublishedKey: "x"}}, metav1.UpdateOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("token updated the description: err = %v, want Forbidden", err)
	}

	again, err := Publish(ctx, admin, spec)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range again {
		if c.Action != "exists" && c.Action != "unchanged" {
			t.Errorf("second publish of the same description: %s %s", c.Object, c.Action)
		}
	}
	changed := append([]byte("# edited\n"), spec...)
	upd, err := Publish(ctx, admin, changed)
	if err != nil || upd[2].Action != "updated" {
		t.Fatalf("publish of a changed description: %+v %v", upd, err)
	}
	if got, _, err := ReadPublished(ctx, as); err != nil || string(got) != string(changed) {
		t.Errorf("after update: %v", err)
	}

	cm, _ := admin.CoreV1().ConfigMaps("kube-system").Get(ctx, PublishedName, metav1.GetOptions{})
	cm.Data[PublishedKey] += "\n# by hand\n"
	if _, err := admin.CoreV1().ConfigMaps("kube-system").Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := ReadPublished(ctx, as); err == nil {
		t.Error("a hand-edited description (hash mismatch) was accepted")
	}
}
