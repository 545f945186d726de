package rollout

import (
	"bytes"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"
)

// ManifestOptions tune the in-cluster orchestrator.
type ManifestOptions struct {
	// Namespace of the orchestrator, the rollouts and their Leases (default kube-system).
	Namespace string
	// Image holds kubewin on $PATH.
	Image string
	// Replicas (default 2): one leads each pool's rollout, the other takes over within a
	// Lease duration.
	Replicas int32
}

// ServiceAccountName is the orchestrator's identity.
const ServiceAccountName = "kubewin-rollout"

// ClusterRules are what the orchestrator needs across the cluster, and no more:
//   - nodes get/list/watch/patch: read the pool, cordon, uncordon, write its annotations;
//   - nodes/status patch: the KubewinRollout condition when a node's rollout ends;
//   - pods list/get: the drain finds the node's pods and waits for evicted ones to go; the
//     ready: probes read a workload's pods on the node;
//   - pods/eviction create: the Eviction API (policy/v1), which enforces the budgets;
//   - poddisruptionbudgets get/list: `rollout status` and drain messages name the budget;
//   - daemonsets get: the drain leaves a DaemonSet's pods only while it exists (kubectl's
//     filter); deployments/statefulsets/replicasets get: the ready: probes read their selector.
func ClusterRules() []rbacv1.PolicyRule {
	return []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: []string{"get", "list", "watch", "patch"}},
		{APIGroups: []string{""}, Resources: []string{"nodes/status"}, Verbs: []string{"patch"}},
		{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "list"}},
		{APIGroups: []string{""}, Resources: []string{"pods/eviction"}, Verbs: []string{"create"}},
		{APIGroups: []string{"policy"}, Resources: []string{"poddisruptionbudgets"}, Verbs: []string{"get", "list"}},
		{APIGroups: []string{"apps"}, Resources: []string{"daemonsets", "deployments", "statefulsets", "replicasets"}, Verbs: []string{"get"}},
	}
}

// NamespaceRules are what it needs in its own namespace: the pools' Leases, the rollouts'
// ConfigMaps, and the http probe pods it runs and removes.
func NamespaceRules() []rbacv1.PolicyRule {
	return []rbacv1.PolicyRule{
		{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: []string{"get", "create", "update"}},
		{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "list", "create", "update", "delete"}},
		{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"create", "delete"}},
	}
}

// EventRules are for "default", where Events about Nodes live.
func EventRules() []rbacv1.PolicyRule {
	return []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"events"}, Verbs: []string{"create"}}}
}

// Manifest renders the in-cluster orchestrator: ServiceAccount, RBAC (ClusterRole for the
// cluster-wide reads and evictions, a Role in its namespace, a Role in default for Events) and
// a Deployment running `kubewin rollout run` with leader election per pool.
func Manifest(o ManifestOptions) ([]byte, error) {
	if o.Namespace == "" {
		o.Namespace = DefaultNamespace
	}
	if o.Replicas == 0 {
		o.Replicas = 2
	}
	if o.Image == "" {
		return nil, fmt.Errorf("the orchestrator's image is not set")
	}
	name := ServiceAccountName
	labels := map[string]string{"app.kubernetes.io/name": name, "app.kubernetes.io/managed-by": "kubewin"}
	meta := func(ns string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels}
	}
	subject := []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: name, Namespace: o.Namespace}}
	no, yes := false, true
	uid := int64(65532)
	objs := []runtime.Object{
		&corev1.ServiceAccount{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ServiceAccount"}, ObjectMeta: meta(o.Namespace)},
		&rbacv1.ClusterRole{TypeMeta: metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole"}, ObjectMeta: meta(""), Rules: ClusterRules()},
		&rbacv1.ClusterRoleBinding{TypeMeta: metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRoleBinding"}, ObjectMeta: meta(""),
			RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name}, Subjects: subject},
		&rbacv1.Role{TypeMeta: metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "Role"}, ObjectMeta: meta(o.Namespace), Rules: NamespaceRules()},
		&rbacv1.RoleBinding{TypeMeta: metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "RoleBinding"}, ObjectMeta: meta(o.Namespace),
			RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name}, Subjects: subject},
	}
	if o.Namespace != metav1.NamespaceDefault {
		objs = append(objs,
			&rbacv1.Role{TypeMeta: metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "Role"}, ObjectMeta: meta(metav1.NamespaceDefault), Rules: EventRules()},
			&rbacv1.RoleBinding{TypeMeta: metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "RoleBinding"}, ObjectMeta: meta(metav1.NamespaceDefault),
				RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name}, Subjects: subject})
	} else {
		r := objs[3].(*rbacv1.Role)
		r.Rules = append(r.Rules, EventRules()...)
	}
	objs = append(objs, &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: meta(o.Namespace),
		Spec: appsv1.DeploymentSpec{
			Replicas: &o.Replicas,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app.kubernetes.io/name": name}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					ServiceAccountName: name,
					// Linux control-plane nodes: never on a node it may drain (a pool is
					// Windows or worker nodes), and it tolerates their taint.
					NodeSelector: map[string]string{corev1.LabelOSStable: "linux"},
					Tolerations:  []corev1.Toleration{{Key: "node-role.kubernetes.io/control-plane", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}},
					Affinity: &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{
						Weight: 100, PodAffinityTerm: corev1.PodAffinityTerm{TopologyKey: corev1.LabelHostname, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app.kubernetes.io/name": name}}},
					}}}},
					SecurityContext: &corev1.PodSecurityContext{RunAsNonRoot: &yes, RunAsUser: &uid, SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}},
					Containers: []corev1.Container{{
						Name:  "orchestrator",
						Image: o.Image,
						Args:  []string{"rollout", "run", "--all", "--namespace=" + o.Namespace},
						Env:   []corev1.EnvVar{{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}}},
						SecurityContext: &corev1.SecurityContext{
							AllowPrivilegeEscalation: &no, ReadOnlyRootFilesystem: &yes,
							Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
						},
					}},
				},
			},
		},
	})
	var out bytes.Buffer
	for i, obj := range objs {
		u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
		if err != nil {
			return nil, fmt.Errorf("render %T: %w", obj, err)
		}
		// Fields the API server sets, not the manifest's.
		delete(u, "status")
		if m, ok := u["metadata"].(map[string]any); ok {
			delete(m, "creationTimestamp")
		}
		if spec, ok := u["spec"].(map[string]any); ok {
			if t, ok := spec["template"].(map[string]any); ok {
				if m, ok := t["metadata"].(map[string]any); ok {
					delete(m, "creationTimestamp")
				}
			}
		}
		b, err := yaml.Marshal(u)
		if err != nil {
			return nil, fmt.Errorf("render %T: %w", obj, err)
		}
		if i > 0 {
			out.WriteString("---\n")
		}
		out.Write(b)
	}
	return out.Bytes(), nil
}
