package join

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubewin/kubewin/internal/render"
	"github.com/kubewin/kubewin/pkg/api/v1alpha1"
)

func TestLastCRILogLine(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"full lines", "2026-11-28T20:00:00.000000001Z stderr F first\n2026-11-28T20:00:01Z stderr F E1128 vxlan: VNI 1 is not supported on Windows\n", "E1128 vxlan: VNI 1 is not supported on Windows"},
		{"partial joined", "2026-11-28T20:00:00Z stdout P part one \n2026-11-28T20:00:00Z stdout F and two\n", "part one and two"},
		{"trailing partial ignored", "2026-11-28T20:00:00Z stdout F done\n2026-11-28T20:00:00Z stdout P cut", "done"},
		{"empty entries skipped", "2026-11-28T20:00:00Z stdout F real\n2026-11-28T20:00:00Z stdout F \n", "real"},
		{"not CRI", "plain line\r\n", "plain line"},
		{"empty", "", ""},
	}
	for _, c := range cases {
		if got := lastCRILogLine([]byte(c.in)); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

func FuzzLastCRILogLine(f *testing.F) {
	f.Add([]byte("2026-11-28T20:00:00Z stderr F boom\n"))
	f.Add([]byte("x stdout P a\nx stdout F b"))
	f.Add([]byte(strings.Repeat("y", 1000)))
	f.Fuzz(func(t *testing.T, data []byte) {
		got := lastCRILogLine(data)
		if len(got) > maxLogLine+3 || strings.Contains(got, "\n") {
			t.Fatalf("%q", got)
		}
		if utf8.Valid(data) && got != "" && !strings.Contains(string(data), strings.TrimSuffix(got, "...")[:min(len(got), 8)]) && !strings.Contains(string(data), " P ") {
			t.Fatalf("%q not from the input", got)
		}
	})
}

func TestContainerdLdflagsVersion(t *testing.T) {
	cases := []struct{ in, want string }{
		{`-s -w -X github.com/containerd/containerd/version.Version=v1.5.9 -X github.com/containerd/containerd/version.Revision=abc`, "v1.5.9"},
		{`-X github.com/containerd/containerd/v2/version.Version=v2.1.4`, "v2.1.4"},
		{`-X "github.com/containerd/containerd/version.Version=1.7.20"`, "1.7.20"},
		{`-X main.version=1`, ""},
		{"", ""},
	}
	for _, c := range cases {
		if got := containerdLdflagsVersion(c.in); got != c.want {
			t.Errorf("%q: %q, want %q", c.in, got, c.want)
		}
	}
	for _, v := range []struct {
		s    string
		less bool
	}{{"v1.5.9", true}, {"1.6.0", false}, {"v1.7.20", false}, {"v2.0.0-rc.1", false}, {"v0.9.9", true}} {
		pv, ok := parseVersion(v.s)
		if !ok || lessVersion(pv, minHostProcessContainerd) != v.less {
			t.Errorf("%s: parsed %v %v, less than 1.6: %v", v.s, pv, ok, lessVersion(pv, minHostProcessContainerd))
		}
	}
}

func FuzzContainerdLdflagsVersion(f *testing.F) {
	f.Add(`-X github.com/containerd/containerd/version.Version=v1.6.0`)
	f.Add(`-X=github.com/containerd/containerd/v2/version.Version=v2.0.0 -s`)
	f.Fuzz(func(t *testing.T, s string) {
		v := containerdLdflagsVersion(s)
		if strings.ContainsAny(v, " \t\n'\"") || (v != "" && !strings.Contains(s, v)) {
			t.Fatalf("%q from %q", v, s)
		}
	})
}

// diagnosePod reads the kubelet's waiting reasons and the log file the kubelet wrote.
func TestDiagnosePod(t *testing.T) {
	logs := t.TempDir()
	pod := func(mut func(*corev1.Pod)) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-flannel", Name: "kube-flannel-ds-windows-abcde", UID: "u-1"},
			Status: corev1.PodStatus{Phase: corev1.PodPending}}
		mut(p)
		return p
	}
	dir := filepath.Join(logs, "kube-flannel_kube-flannel-ds-windows-abcde_u-1", "kube-flannel")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	_ = os.WriteFile(filepath.Join(dir, "2.log"), []byte("2026-11-28T20:00:00Z stderr F old run\n"), 0o644)
	_ = os.WriteFile(filepath.Join(dir, "3.log"), []byte("2026-11-28T20:00:00Z stderr F E1128 failed to create the overlay network: VNI 1 below 4096\n"), 0o644)
	cases := []struct {
		name string
		pod  *corev1.Pod
		want []string
	}{
		{"image pull", pod(func(p *corev1.Pod) {
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "kube-flannel", Image: "registry.example/flannel:v9",
				State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff", Message: "Back-off pulling image"}}}}
		}), []string{"image registry.example/flannel:v9 cannot be pulled (ImagePullBackOff)", "Back-off pulling image"}},
		{"crash", pod(func(p *corev1.Pod) {
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "kube-flannel", RestartCount: 4,
				State:                corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}},
				LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Message: "exit status 1"}}}}
		}), []string{"container kube-flannel crashes (CrashLoopBackOff, 4 restarts), last exit code 1: exit status 1", "its log ends: E1128 failed to create the overlay network: VNI 1 below 4096"}},
		{"forbidden", pod(func(p *corev1.Pod) {
			p.Name, p.UID, p.Spec.ServiceAccountName = "rbac", "u-2", "flannel"
			d := filepath.Join(logs, "kube-flannel_rbac_u-2", "kube-flannel")
			_ = os.MkdirAll(d, 0o755)
			_ = os.WriteFile(filepath.Join(d, "0.log"), []byte(`2026-11-28T20:00:00Z stderr F E1128 main.go:332] Failed to create SubnetManager: nodes "win-1" is forbidden: User "system:serviceaccount:kube-flannel:flannel" cannot get resource "nodes" in API group "" at the cluster scope`+"\n"), 0o644)
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "kube-flannel", RestartCount: 1,
				State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error"}}}}
		}), []string{"exited with code 1", "is forbidden", "missing RBAC: the pod's ServiceAccount kube-flannel/flannel"}},
		{"unschedulable", pod(func(p *corev1.Pod) {
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: "Unschedulable", Message: "0/3 nodes are available"}}
		}), []string{"is not scheduled: Unschedulable 0/3 nodes are available"}},
		{"config error", pod(func(p *corev1.Pod) {
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "kube-flannel",
				State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CreateContainerConfigError", Message: `configmap "kube-flannel-windows-cfg" not found`}}}}
		}), []string{"is waiting: CreateContainerConfigError", "not found"}},
		{"running", pod(func(p *corev1.Pod) {
			p.Status.Phase = corev1.PodRunning
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "kube-flannel", Ready: true, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}
		}), nil},
	}
	for _, c := range cases {
		got := diagnosePod(c.pod, logs)
		if c.want == nil && got != "" {
			t.Errorf("%s: %q, want nothing", c.name, got)
		}
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: %q lacks %q", c.name, got, w)
			}
		}
	}
}

// A containerd older than 1.6 is refused with the reason, whether the version comes from the
// official --binaries value or from the installed containerd.exe's build information (a
// Windows program built here with containerd's -X version flag, read by debug/buildinfo).
func TestHostProcessContainerdVersion(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a Windows program")
	}
	runtime := t.TempDir()
	src := filepath.Join(t.TempDir(), "main.go")
	if err := os.WriteFile(src, []byte("package main\n\nfunc main() {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	build := func(version string) {
		cmd := exec.Command("go", "build", "-o", filepath.Join(runtime, "containerd.exe"),
			"-ldflags", "-X github.com/containerd/containerd/version.Version="+version, src)
		cmd.Env = append(os.Environ(), "GOOS=windows", "GOARCH=amd64", "CGO_ENABLED=0", "GOFLAGS=")
		cmd.Dir = filepath.Dir(src)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("build: %v\n%s", err, out)
		}
	}
	spec := &v1alpha1.Cluster{Spec: v1alpha1.ClusterSpec{Design: v1alpha1.DesignFlannelHostProcess}}
	j := func(source string) *joiner {
		return &joiner{o: Options{Binaries: Binaries{Source: source}, Log: io.Discard}, spec: spec, paths: render.NodePaths{RuntimeBinDir: runtime}}
	}
	build("v1.5.9")
	cases := []struct {
		name, source string
		wantErr      string
	}{
		{"official 1.5", "official:kubernetes=v1.37.1,containerd=v1.5.9,cni=v1.6.2", "containerd v1.5.9 (from --binaries)"},
		{"official 1.7", "official:kubernetes=v1.37.1,containerd=v1.7.20,cni=v1.6.2", ""},
		{"installed 1.5", "/mirror", "containerd v1.5.9 (from " + filepath.Join(runtime, "containerd.exe")},
	}
	for _, c := range cases {
		err := j(c.source).checkHostProcessContainerd()
		switch {
		case c.wantErr == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr) || !strings.Contains(err.Error(), "need containerd 1.6 or later") || !errors.Is(err, ErrBadInput)):
			t.Errorf("%s: %v, want %q", c.name, err, c.wantErr)
		}
	}
	build("v2.1.4")
	if err := j("/mirror").checkHostProcessContainerd(); err != nil {
		t.Errorf("containerd v2.1.4: %v", err)
	}
}
