package check

import "testing"

// kube-log-runner wraps the kubelet on GCE Windows nodes (kubernetes/kubernetes
// cluster/gce/windows/k8s-node-setup.psm1: sc.exe create kubelet binPath= "…\kube-log-runner.exe
// -log-file=…\kubelet.log …\kubelet.exe …"), in OpenShift WMCO and in kubewin's own bundle.
func TestLauncherSkip(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`C:\k\kube-log-runner.exe -log-file=C:\k\logs\kubelet.log -log-file-size=100M C:\k\kubelet.exe --v=2`, `C:\k\kubelet.exe --v=2`},
		{`kube-log-runner -log-file=/var/log/kube-proxy.log -- /usr/bin/kube-proxy --v=2`, `/usr/bin/kube-proxy --v=2`},
		{`C:\k\kubelet.exe --v=2`, `C:\k\kubelet.exe --v=2`},
		{`C:\k\kube-log-runner.exe -log-file=x`, `C:\k\kube-log-runner.exe -log-file=x`},
	} {
		if got := tc.in[launcherSkip(tc.in):]; got != tc.want {
			t.Errorf("launcherSkip(%q) leaves %q, want %q", tc.in, got, tc.want)
		}
	}
	ctx := newTestContext(t)
	_, cls := scanScript(ctx, "k8s-node-setup.ps1",
		"& sc.exe create kubelet binPath= \"C:\\etc\\kubernetes\\node\\bin\\kube-log-runner.exe -log-file=C:\\etc\\kubernetes\\logs\\kubelet.log C:\\etc\\kubernetes\\node\\bin\\kubelet.exe --windows-service --v=4\" start= demand\n", "")
	if len(cls) != 1 || cls[0].Program != `C:\etc\kubernetes\node\bin\kubelet.exe` {
		t.Fatalf("command lines = %+v", cls)
	}
	if f, ok := cls[0].Last("v"); !ok || f.Value != "4" {
		t.Errorf("flags of the wrapped kubelet not read: %+v", cls[0].Flags)
	}
}
