package join

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubewin/kubewin/internal/plan"
	"github.com/kubewin/kubewin/internal/render"
	"github.com/kubewin/kubewin/internal/winnode"
	"github.com/kubewin/kubewin/pkg/api/v1alpha1"
)

func TestWindowsClusterNIC(t *testing.T) {
	adapter := NIC{Name: "Ethernet0", MAC: "00:15:5d:00:07:31"}
	vnic := NIC{Name: "vEthernet (Ethernet0)", MAC: "00:15:5D:00:07:31", IP: "192.168.7.31", Prefix: 24}
	office := NIC{Name: "Ethernet1", MAC: "00:15:5d:00:07:99", IP: "172.16.0.5", Prefix: 16}
	tests := []struct {
		name  string
		nics  []NIC
		local string
		want  NIC
		err   string
	}{
		{"before the vSwitch: the adapter holds the address", []NIC{office, {Name: "Ethernet0", MAC: adapter.MAC, IP: "192.168.7.31", Prefix: 24}}, "192.168.7.31",
			NIC{Name: "Ethernet0", MAC: adapter.MAC, IP: "192.168.7.31", Prefix: 24}, ""},
		{"after the vSwitch: the vNIC holds it, the adapter is the cluster NIC", []NIC{vnic, office, adapter}, "192.168.7.31",
			NIC{Name: "Ethernet0", MAC: adapter.MAC, IP: "192.168.7.31", Prefix: 24}, ""},
		{"a vNIC of another switch stays itself", []NIC{{Name: "vEthernet (nat)", MAC: "00:15:5d:aa:aa:aa", IP: "172.30.0.1", Prefix: 20}}, "172.30.0.1",
			NIC{Name: "vEthernet (nat)", MAC: "00:15:5d:aa:aa:aa", IP: "172.30.0.1", Prefix: 20}, ""},
		{"no adapter holds the address", []NIC{office}, "192.168.7.31", NIC{}, "no network adapter holds 192.168.7.31"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := windowsClusterNIC(tc.nics, tc.local)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %+v %v, want %+v", got, err, tc.want)
			}
		})
	}
}

// The kube-proxy kubeconfig join writes on Windows names the kubelet's rotated certificate and
// the pinned CA at the paths the Windows layout puts them.
func TestNodeCredentialKubeconfigPaths(t *testing.T) {
	p := planExample(t)
	var n = p.Nodes[0]
	for _, x := range p.Nodes {
		if x.Windows != nil {
			n = x
		}
	}
	if n.Windows == nil {
		t.Fatal("the example has no Windows node")
	}
	data, err := nodeCredentialKubeconfig("https://10.0.0.10:6443", n.Windows)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.Load(data)
	if err != nil {
		t.Fatalf("kube-proxy kubeconfig does not load: %v", err)
	}
	ctx := cfg.Contexts[cfg.CurrentContext]
	cluster, auth := cfg.Clusters[ctx.Cluster], cfg.AuthInfos[ctx.AuthInfo]
	pki := n.Windows.InstallDir + `\pki\`
	if cluster.Server != "https://10.0.0.10:6443" || cluster.CertificateAuthority != pki+"ca.crt" ||
		auth.ClientCertificate != pki+"kubelet-client-current.pem" || auth.ClientKey != pki+"kubelet-client-current.pem" || auth.Token != "" {
		t.Fatalf("kube-proxy kubeconfig: cluster %+v, user %+v; want the pinned CA and the kubelet's rotated certificate under %s", cluster, auth, pki)
	}
}

func planExample(t *testing.T) *plan.Plan {
	t.Helper()
	c, _, err := v1alpha1.ParseExample()
	if err != nil {
		t.Fatal(err)
	}
	p, err := plan.New(c)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// kube-proxy under an account of its own (windows.kubeProxyServiceAccount) reads its files and
// the node credential, and nothing else is opened to it; under LocalSystem nothing is granted.
func TestWindowsProxyAccess(t *testing.T) {
	for _, account := range []string{"LocalSystem", `NT AUTHORITY\NetworkService`} {
		t.Run(account, func(t *testing.T) {
			mem := winnode.NewMemHost()
			paths := render.WindowsPathsUnder(t.TempDir(), t.TempDir())
			j := &joiner{host: &WindowsHost{Node: mem}, paths: paths}
			if _, err := j.windowsRestrict(context.Background()); err != nil {
				t.Fatal(err)
			}
			p := planExample(t)
			var n plan.NodePlan
			for _, nn := range p.Nodes {
				if nn.Windows != nil {
					n = nn
				}
			}
			n.Windows.KubeProxyServiceAccount = account
			effects, err := render.NodeEffects(p, n)
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range []string{paths.KubeProxyKubeconfig(), filepath.Join(paths.BinDir, "kube-proxy.exe")} {
				if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(f, nil, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := applyACLs(context.Background(), mem, effects, paths); err != nil {
				t.Fatal(err)
			}
			for _, p := range []string{paths.KubeProxyConfig(), paths.KubeProxyKubeconfig(), KubeletClientCert(paths), filepath.Join(paths.LogDir, "kube-proxy.log")} {
				grants, ok := mem.ACL(p)
				want := account != "LocalSystem"
				if !ok || (len(grants) == 1) != want || (want && grants[0].Account != account) {
					t.Errorf("%s: grants %v (restricted %v); want %s granted: %v", p, grants, ok, account, want)
				}
			}
			if grants, _ := mem.ACL(paths.BootstrapKubeconfig()); len(grants) != 0 {
				t.Errorf("the bootstrap kubeconfig is open to %v", grants)
			}
		})
	}
}

// A program is replaced by renaming the old file aside (what Windows allows for a running
// program) and the old file goes when nothing holds it; one that could not be removed then is
// removed by a later join.
func TestReplaceAside(t *testing.T) {
	dir := t.TempDir()
	dst := filepath.Join(dir, "kubelet.exe")
	for i, content := range []string{"release 1", "release 2"} {
		tmp := filepath.Join(dir, ".kubelet.exe.tmp")
		if err := os.WriteFile(tmp, []byte(content), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := replaceAside(tmp, dst); err != nil {
			t.Fatalf("replace %d: %v", i, err)
		}
		if got, _ := os.ReadFile(dst); string(got) != content {
			t.Fatalf("replace %d: %s holds %q", i, dst, got)
		}
	}
	left := dst + asideSuffix + "123"
	if err := os.WriteFile(left, []byte("held by a process at the time"), 0o755); err != nil {
		t.Fatal(err)
	}
	removeAside(dst)
	if files, _ := filepath.Glob(filepath.Join(dir, "*")); len(files) != 1 || files[0] != dst {
		t.Fatalf("files after the replacements: %v; want only %s", files, dst)
	}
}
