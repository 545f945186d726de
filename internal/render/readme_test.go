package render

import (
	"strings"
	"testing"
)

// issue 22 item 2: the bundle's README asks for no ServiceAccount token for kube-proxy or
// flanneld. It says which credential they use (the node's client certificate), how long it
// lives, who renews it and what a node whose certificate expired needs.
func TestReadmeCredentialPlan(t *testing.T) {
	for name, p := range designVariants(t) {
		for _, n := range windowsNodes(p) {
			data, err := WindowsReadme(p, n)
			if err != nil {
				t.Fatal(err)
			}
			s := string(data)
			for _, bad := range []string{"ServiceAccount's token", "token of flannel's ServiceAccount", "flanneld.conf", "a kubeconfig for kube-proxy"} {
				if strings.Contains(s, bad) {
					t.Errorf("%s/%s: README still asks for %q", name, n.Name, bad)
				}
			}
			wantContains(t, name+" README", data,
				"That is the only credential to copy.",
				"`C:\\k\\pki\\kubelet-client-current.pem`, identity system:node:"+n.Name,
				"`--cluster-signing-duration`, one year by default",
				"70 to 90 %", "`rotateCertificates: true`",
				"copies\n   `C:\\k\\kubelet.conf` to `C:\\k\\kube-proxy.conf`",
				"client-go reads again when the kubelet replaces it",
				"`kubectl create clusterrolebinding kubewin:node-proxier --clusterrole=system:node-proxier --group=system:nodes`",
				"bootstraps again when its certificate has expired")
			// kubewin check reads the README as kubewin's own file only while it holds no command
			// line: a line ending in a backtick continues a PowerShell command.
			step4 := s[strings.Index(s, "4. **Credentials**"):strings.Index(s, "5. **Cluster objects**")]
			for i, l := range strings.Split(step4, "\n") {
				if strings.HasSuffix(l, "`") {
					t.Errorf("%s/%s: README step 4, line %d ends with a backtick: %q", name, n.Name, i+1, l)
				}
			}
			flannel := usesFlannel(n.Windows)
			if got := strings.Contains(s, "flanneld reads `C:\\k\\kubelet.conf`") && strings.Contains(s, "the Node authorizer allows every node for its own Node"); got != flannel {
				t.Errorf("%s/%s: flanneld's credential explained: %v, flannel design: %v", name, n.Name, got, flannel)
			}
			if flannel {
				wantContains(t, name+" README", data, "flanneld (run by WinSW)", "`C:\\k\\logs\\flanneld.err.log` (rotated at 10 MB, 8 kept)")
			}
			// containerd's log is rotated too, by the log task.
			wantContains(t, name+" README", data, "containerd writes `C:\\k\\logs\\containerd.log`", "the hourly task kubewin-logs rotates the same way")
		}
	}
}
