package bootstrap

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
)

// The published cluster description: a joining node computes its own plan from it (with its
// own facts and the pod CIDR it is given), so autoscaled nodes need no per-node file.
const (
	// PublishedNamespace and PublishedName locate the ConfigMap.
	PublishedNamespace = metav1.NamespaceSystem
	PublishedName      = "kubewin-cluster"
	// PublishedKey holds the effective description (kubewin.io/v1alpha1 Cluster, YAML).
	PublishedKey = "cluster.yaml"
	// PublishedHashAnnotation is the sha256 of PublishedKey's value, so a node (and a second
	// publish) tells a changed description from an unchanged one without comparing it.
	PublishedHashAnnotation = "kubewin.io/cluster-sha256"
	publishedReaderRole     = "kubewin:cluster-description-reader"
)

// PublishGroups may read the published description and nothing else it grants: bootstrap tokens
// (before the node has its credential) and nodes (the node service re-plans after a change).
var PublishGroups = []string{"system:bootstrappers", "system:nodes"}

// PublishObjects are the ConfigMap holding specYAML and the Role and RoleBinding that let
// PublishGroups get exactly that ConfigMap (resourceNames), in the order they are applied.
func PublishObjects(specYAML []byte) []runtime.Object {
	sum := sha256.Sum256(specYAML)
	var subjects []rbacv1.Subject
	for _, g := range PublishGroups {
		subjects = append(subjects, rbacv1.Subject{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: g})
	}
	return []runtime.Object{
		&rbacv1.Role{
			TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "Role"},
			ObjectMeta: metav1.ObjectMeta{Name: publishedReaderRole, Namespace: PublishedNamespace},
			Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"},
				ResourceNames: []string{PublishedName}, Verbs: []string{"get"}}},
		},
		&rbacv1.RoleBinding{
			TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "RoleBinding"},
			ObjectMeta: metav1.ObjectMeta{Name: publishedReaderRole, Namespace: PublishedNamespace},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: publishedReaderRole},
			Subjects:   subjects,
		},
		&corev1.ConfigMap{
			TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
			ObjectMeta: metav1.ObjectMeta{Name: PublishedName, Namespace: PublishedNamespace,
				Labels:      map[string]string{"app.kubernetes.io/managed-by": "kubewin"},
				Annotations: map[string]string{PublishedHashAnnotation: hex.EncodeToString(sum[:])}},
			Data: map[string]string{PublishedKey: string(specYAML)},
		},
	}
}

// Publish creates the objects that are missing and updates the ConfigMap when the description
// changed; it is idempotent (a second call with the same description changes nothing).
func Publish(ctx context.Context, c kubernetes.Interface, specYAML []byte) ([]Change, error) {
	return applyObjects(ctx, c, PublishObjects(specYAML), func(cm *corev1.ConfigMap) (string, error) {
		return updatePublished(ctx, c, cm)
	})
}

func updatePublished(ctx context.Context, c kubernetes.Interface, want *corev1.ConfigMap) (string, error) {
	cms := c.CoreV1().ConfigMaps(want.Namespace)
	cur, err := cms.Get(ctx, want.Name, metav1.GetOptions{})
	if err != nil {
		return "", fmt.Errorf("read %s/%s: %w", want.Namespace, want.Name, err)
	}
	if cur.Annotations[PublishedHashAnnotation] == want.Annotations[PublishedHashAnnotation] && cur.Data[PublishedKey] == want.Data[PublishedKey] {
		return "unchanged", nil
	}
	cur.Data = want.Data
	if cur.Annotations == nil {
		cur.Annotations = map[string]string{}
	}
	cur.Annotations[PublishedHashAnnotation] = want.Annotations[PublishedHashAnnotation]
	if _, err := cms.Update(ctx, cur, metav1.UpdateOptions{}); err != nil {
		return "", fmt.Errorf("update %s/%s: %w", want.Namespace, want.Name, err)
	}
	return "updated", nil
}

// ReadPublished returns the published description (what a joining node does with its token).
func ReadPublished(ctx context.Context, c kubernetes.Interface) ([]byte, string, error) {
	cm, err := c.CoreV1().ConfigMaps(PublishedNamespace).Get(ctx, PublishedName, metav1.GetOptions{})
	if err != nil {
		return nil, "", fmt.Errorf("read the published cluster description %s/%s: %w", PublishedNamespace, PublishedName, err)
	}
	data := cm.Data[PublishedKey]
	if data == "" {
		return nil, "", fmt.Errorf("%s/%s has no %q", PublishedNamespace, PublishedName, PublishedKey)
	}
	sum := sha256.Sum256([]byte(data))
	if h := cm.Annotations[PublishedHashAnnotation]; h != "" && h != hex.EncodeToString(sum[:]) {
		return nil, "", fmt.Errorf("%s/%s: %q does not match its %s annotation (edited by hand?)", PublishedNamespace, PublishedName, PublishedKey, PublishedHashAnnotation)
	}
	return []byte(data), hex.EncodeToString(sum[:]), nil
}
