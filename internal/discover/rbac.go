package discover

import (
	"fmt"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// ClusterRoleName is the name --print-rbac gives the ClusterRole.
const ClusterRoleName = "kubewin-discover"

// RBACRules are every permission Discover uses: reads only, named objects where the API allows
// naming them. Each source in sources.go, cni.go and nodes.go reads through one of these.
func RBACRules() []rbacv1.PolicyRule {
	return []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: []string{"list"}},
		{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"list"}},
		{APIGroups: []string{""}, Resources: []string{"services"}, Verbs: []string{"get"},
			ResourceNames: []string{"kubernetes", "kube-dns", "coredns"}},
		{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get"},
			ResourceNames: []string{"kubeadm-config", "kubelet-config", "kube-proxy", "coredns", "kube-flannel-cfg", "canal-config"}},
		{APIGroups: []string{"apps"}, Resources: []string{"daemonsets"}, Verbs: []string{"list"}},
		{APIGroups: []string{"networking.k8s.io"}, Resources: []string{"servicecidrs"}, Verbs: []string{"list"}},
		{APIGroups: []string{"crd.projectcalico.org"}, Resources: []string{"ippools", "ipreservations"}, Verbs: []string{"list"}},
		{NonResourceURLs: []string{"/version"}, Verbs: []string{"get"}},
	}
}

// ClusterRole is the least-privilege role for kubewin discover.
func ClusterRole() *rbacv1.ClusterRole {
	return &rbacv1.ClusterRole{
		TypeMeta: metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "ClusterRole"},
		ObjectMeta: metav1.ObjectMeta{Name: ClusterRoleName, Labels: map[string]string{
			"app.kubernetes.io/name": "kubewin",
		}},
		Rules: RBACRules(),
	}
}

// ClusterRoleYAML is what `kubewin discover --print-rbac` prints.
func ClusterRoleYAML() ([]byte, error) {
	b, err := yaml.Marshal(ClusterRole())
	if err != nil {
		return nil, fmt.Errorf("encode ClusterRole: %w", err)
	}
	head := "# Read-only permissions of `kubewin discover`. Bind with, e.g.:\n" +
		"#   kubectl create clusterrolebinding kubewin-discover --clusterrole=" + ClusterRoleName + " --user=NAME\n"
	return append([]byte(head), b...), nil
}
