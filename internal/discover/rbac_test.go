package discover

import (
	"context"
	"reflect"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"
)

// TestLeastPrivilege runs discovery as a user bound only to the ClusterRole --print-rbac prints:
// it must read everything the admin reads. A user without it gets every refused read named.
func TestLeastPrivilege(t *testing.T) {
	cp := startCluster(t, "kubeadm-calico", "10.96.0.0/12", true)
	ctx := context.Background()
	cs := cp.Clientset(t)

	out, err := ClusterRoleYAML()
	if err != nil {
		t.Fatal(err)
	}
	var role rbacv1.ClusterRole
	if err := yaml.UnmarshalStrict(out, &role); err != nil {
		t.Fatalf("--print-rbac output does not decode: %v\n%s", err, out)
	}
	if _, err := cs.RbacV1().ClusterRoles().Create(ctx, &role, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create ClusterRole: %v", err)
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "kubewin-discover"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: ClusterRoleName},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: "discoverer"}},
	}
	if _, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create ClusterRoleBinding: %v", err)
	}

	as := func(user string) *rest.Config {
		c := rest.CopyConfig(cp.Config)
		c.Impersonate = rest.ImpersonationConfig{UserName: user}
		return c
	}
	admin, err := Discover(ctx, cp.Config, Options{})
	if err != nil {
		t.Fatal(err)
	}
	limited, err := Discover(ctx, as("discoverer"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(limited.Denied) != 0 {
		t.Fatalf("the printed ClusterRole is not enough: %v", limited.Denied)
	}
	if !reflect.DeepEqual(limited, admin) {
		t.Errorf("least-privilege result differs from the admin's:\n%+v\n%+v", limited, admin)
	}

	// Everything but /version (allowed to every authenticated user) is refused, and named.
	nobody, err := Discover(ctx, as("nobody"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	var denied []string
	for _, d := range nobody.Denied {
		denied = append(denied, d.String())
	}
	wantDenied := []string{
		"get configmaps coredns in namespace kube-system",
		"get configmaps kube-proxy in namespace kube-system",
		"get configmaps kubeadm-config in namespace kube-system",
		"get configmaps kubelet-config in namespace kube-system",
		"get services coredns in namespace kube-system",
		"get services kube-dns in namespace kube-system",
		"get services kubernetes in namespace default",
		"list daemonsets.apps (cluster-wide)",
		"list ippools.crd.projectcalico.org (cluster-wide)",
		"list ipreservations.crd.projectcalico.org (cluster-wide)",
		"list nodes (cluster-wide)",
		"list pods in namespace kube-system",
		"list servicecidrs.networking.k8s.io (cluster-wide)",
	}
	if !reflect.DeepEqual(denied, wantDenied) {
		t.Errorf("denied reads:\n%s\nwant:\n%s", strings.Join(denied, "\n"), strings.Join(wantDenied, "\n"))
	}
	if !nobody.HasFindings() {
		t.Error("refused reads must be findings")
	}
	if s := nobody.Summary(); !strings.Contains(s, "forbidden: kubewin needs list nodes (cluster-wide)") {
		t.Errorf("summary does not name the missing permission:\n%s", s)
	}
}
