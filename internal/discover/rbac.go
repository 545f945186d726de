package discover

import (
	"bytes"
	"encoding/json"
	"fmt"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"
)

// RBACName names every object --print-rbac prints (ClusterRole, Roles and their bindings) and
// the user they are bound to.
const RBACName = "kubewin-discover"

// RBACNamespacedRules are the reads Discover makes inside fixed namespaces, by namespace; they are
// granted by a Role and RoleBinding in each, not cluster-wide.
func RBACNamespacedRules() map[string][]rbacv1.PolicyRule {
	return map[string][]rbacv1.PolicyRule{
		metav1.NamespaceDefault: {
			{APIGroups: []string{""}, Resources: []string{"services"}, Verbs: []string{"get"}, ResourceNames: []string{"kubernetes"}},
		},
		kubeSystem: {
			// Control-plane and kube-proxy pods by label selector; a list cannot be limited by name.
			{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"list"}},
			{APIGroups: []string{""}, Resources: []string{"services"}, Verbs: []string{"get"}, ResourceNames: []string{"kube-dns", "coredns"}},
			// canal-config: Canal installs into kube-system only.
			{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get"},
				ResourceNames: []string{"kubeadm-config", "kubelet-config", "kube-proxy", "coredns", "canal-config"}},
		},
	}
}

// RBACClusterRules are the reads that are not confined to one namespace known in advance:
// cluster-scoped objects, DaemonSets in every namespace (CNIs install into their own), and
// flannel's ConfigMap, which lives in its DaemonSet's namespace (kube-flannel since flannel
// 0.20, kube-system before and in many distributions). A Role in kube-flannel would make
// kubectl apply fail where that namespace does not exist.
func RBACClusterRules() []rbacv1.PolicyRule {
	return []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: []string{"list"}},
		{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get"},
			ResourceNames: []string{"kube-flannel-cfg"}},
		// In namespace tigera-operator, which exists only where the Tigera operator runs: a Role
		// there could not be applied to other clusters.
		{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get"},
			ResourceNames: []string{servicesEndpointMap}},
		{APIGroups: []string{"apps"}, Resources: []string{"daemonsets"}, Verbs: []string{"list"}},
		{APIGroups: []string{"networking.k8s.io"}, Resources: []string{"servicecidrs"}, Verbs: []string{"list"}},
		{APIGroups: []string{"crd.projectcalico.org"}, Resources: []string{"ippools", "ipreservations"}, Verbs: []string{"list"}},
		// How Calico programs cluster routes and whether Felix tolerates loose rp_filter.
		{APIGroups: []string{"crd.projectcalico.org"}, Resources: []string{"felixconfigurations", "ipamconfigs"}, Verbs: []string{"get"}, ResourceNames: []string{"default"}},
		{APIGroups: []string{"projectcalico.org"}, Resources: []string{"ipamconfigurations"}, Verbs: []string{"get"}, ResourceNames: []string{"default"}},
		{APIGroups: []string{"operator.tigera.io"}, Resources: []string{"installations"}, Verbs: []string{"get"}, ResourceNames: []string{"default"}},
		{NonResourceURLs: []string{"/version"}, Verbs: []string{"get"}},
	}
}

// RBACObjects are the least-privilege objects for kubewin discover: a ClusterRole for the
// cluster-wide reads, a Role per namespace for the rest, each bound to the user RBACName.
// Order is fixed: ClusterRole, ClusterRoleBinding, then Role and RoleBinding by namespace.
func RBACObjects() []runtime.Object {
	meta := func(namespace string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Name: RBACName, Namespace: namespace, Labels: map[string]string{"app.kubernetes.io/name": "kubewin"}}
	}
	typ := func(kind string) metav1.TypeMeta {
		return metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: kind}
	}
	subjects := []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: RBACName}}
	out := []runtime.Object{
		&rbacv1.ClusterRole{TypeMeta: typ("ClusterRole"), ObjectMeta: meta(""), Rules: RBACClusterRules()},
		&rbacv1.ClusterRoleBinding{TypeMeta: typ("ClusterRoleBinding"), ObjectMeta: meta(""), Subjects: subjects,
			RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: RBACName}},
	}
	ns := RBACNamespacedRules()
	for _, n := range []string{metav1.NamespaceDefault, kubeSystem} {
		out = append(out,
			&rbacv1.Role{TypeMeta: typ("Role"), ObjectMeta: meta(n), Rules: ns[n]},
			&rbacv1.RoleBinding{TypeMeta: typ("RoleBinding"), ObjectMeta: meta(n), Subjects: subjects,
				RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: RBACName}})
	}
	return out
}

// RBACYAML is what `kubewin discover --print-rbac` prints: the objects as YAML documents.
func RBACYAML() ([]byte, error) {
	var b bytes.Buffer
	b.WriteString("# Read-only permissions of `kubewin discover`, bound to the user " + RBACName + ".\n" +
		"# Change the subjects of the bindings to your user, group or ServiceAccount, then kubectl apply -f.\n")
	for _, o := range RBACObjects() {
		y, err := yaml.Marshal(o)
		if err != nil {
			return nil, fmt.Errorf("encode %s: %w", o.GetObjectKind().GroupVersionKind().Kind, err)
		}
		b.WriteString("---\n")
		b.Write(y)
	}
	return b.Bytes(), nil
}

// RBACJSON is `kubewin discover --print-rbac -o json`: the objects as one v1 List.
func RBACJSON() ([]byte, error) {
	list := metav1.List{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "List"}}
	for _, o := range RBACObjects() {
		list.Items = append(list.Items, runtime.RawExtension{Object: o})
	}
	b, err := json.MarshalIndent(list, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode RBAC List: %w", err)
	}
	return append(b, '\n'), nil
}
