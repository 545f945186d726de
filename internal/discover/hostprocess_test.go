package discover

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubewin/kubewin/pkg/api/v1alpha1"
)

func TestWindowsDaemonSetClassification(t *testing.T) {
	yes, no := true, false
	hpc := func(b *bool) *corev1.SecurityContext {
		return &corev1.SecurityContext{WindowsOptions: &corev1.WindowsSecurityContextOptions{HostProcess: b}}
	}
	cases := []struct {
		name       string
		podHPC     *bool
		containers []*corev1.SecurityContext
		want       v1alpha1.WindowsDaemonSet
	}{
		{"kube-proxy-windows", &yes, []*corev1.SecurityContext{nil}, v1alpha1.WindowsDaemonSet{Name: "kube-proxy-windows", Component: "kube-proxy", HostProcess: true}},
		{"kube-flannel-ds-windows-amd64", nil, []*corev1.SecurityContext{nil}, v1alpha1.WindowsDaemonSet{Name: "kube-flannel-ds-windows-amd64", Component: "flannel"}},
		// Every container HostProcess without the pod-level setting is a HostProcess pod.
		{"calico-node-windows", nil, []*corev1.SecurityContext{hpc(&yes), hpc(&yes)}, v1alpha1.WindowsDaemonSet{Name: "calico-node-windows", Component: "calico-node", HostProcess: true}},
		{"calico-node-windows", nil, []*corev1.SecurityContext{hpc(&yes), nil}, v1alpha1.WindowsDaemonSet{Name: "calico-node-windows", Component: "calico-node"}},
		{"csi-proxy", &no, []*corev1.SecurityContext{nil}, v1alpha1.WindowsDaemonSet{Name: "csi-proxy", Component: "other"}},
	}
	for _, c := range cases {
		ds := &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Name: c.name}}
		if c.podHPC != nil {
			ds.Spec.Template.Spec.SecurityContext = &corev1.PodSecurityContext{WindowsOptions: &corev1.WindowsSecurityContextOptions{HostProcess: c.podHPC}}
		}
		for _, sc := range c.containers {
			ds.Spec.Template.Spec.Containers = append(ds.Spec.Template.Spec.Containers, corev1.Container{Name: "c", SecurityContext: sc})
		}
		if got := windowsDaemonSet(ds); got != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
}

func TestFlannelRelease(t *testing.T) {
	for _, c := range []struct {
		images []string
		want   string
	}{
		{[]string{"ghcr.io/flannel-io/flannel-cni-plugin:v1.7.1-flannel1", "ghcr.io/flannel-io/flannel:v0.27.0"}, "v0.27.0"},
		{[]string{"docker.io/flannel/flannel:v0.26.7@sha256:0123"}, "v0.26.7"},
		{[]string{"registry.local:5000/flannel"}, ""},
		{[]string{"quay.io/coreos/flannel:v0.15.1"}, "v0.15.1"},
	} {
		ds := &appsv1.DaemonSet{}
		for _, img := range c.images {
			ds.Spec.Template.Spec.Containers = append(ds.Spec.Template.Spec.Containers, corev1.Container{Image: img})
		}
		if got := flannelRelease(ds); got != c.want {
			t.Errorf("%v: %q, want %q", c.images, got, c.want)
		}
	}
}
