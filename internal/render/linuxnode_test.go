package render

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/containernetworking/cni/libcni"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	kubeletvalidation "k8s.io/kubernetes/pkg/kubelet/apis/config/validation"

	"github.com/kubewin/kubewin/internal/plan"
)

func linuxNode(t *testing.T, p *plan.Plan) plan.NodePlan {
	t.Helper()
	for _, n := range p.Nodes {
		if n.Linux != nil {
			return n
		}
	}
	t.Fatal("the example plan has no Linux node")
	return plan.NodePlan{}
}

// The kubelet of a joined Linux node accepts its configuration: the kubelet's own scheme in
// strict mode, then its own validation, and the paths are the layout's.
func TestLinuxKubeletConfigAcceptedByKubelet(t *testing.T) {
	p := examplePlan(t)
	n := linuxNode(t, p)
	paths := LinuxPathsUnder("/srv/node")
	data, err := LinuxKubeletConfig(p, n, paths)
	if err != nil {
		t.Fatal(err)
	}
	kc := decodeKubeletConfig(t, data)
	// The validation also looks at this test machine, whose cgroups are v1; a user's node on v1
	// gets the same refusal from the kubelet (join --kubelet-config-dropin can lift it there).
	kc.FailCgroupV1 = false
	if err := kubeletvalidation.ValidateKubeletConfiguration(kc, utilfeature.DefaultFeatureGate); err != nil {
		t.Fatalf("kubelet validation: %v\n%s", err, data)
	}
	for what, got := range map[string]string{
		"clientCAFile":             kc.Authentication.X509.ClientCAFile,
		"containerRuntimeEndpoint": kc.ContainerRuntimeEndpoint,
		"staticPodPath":            kc.StaticPodPath,
		"podLogsDir":               kc.PodLogsDir,
	} {
		if !strings.Contains(got, "/srv/node/") {
			t.Errorf("%s = %q, want a path below the layout root", what, got)
		}
	}
	if kc.CgroupDriver != n.Linux.CgroupDriver || !kc.RotateCertificates || kc.Authentication.Anonymous.Enabled {
		t.Errorf("cgroupDriver %q rotateCertificates %v anonymous %v", kc.CgroupDriver, kc.RotateCertificates, kc.Authentication.Anonymous.Enabled)
	}
	if _, err := LinuxKubeletConfig(p, windowsNodes(p)[0], paths); err == nil {
		t.Error("a Windows node got a Linux kubelet config")
	}
}

// Every flag join gives the Linux kubelet exists in the real kubelet's flag set.
func TestLinuxKubeletFlagsParseWithRealFlagSet(t *testing.T) {
	p := examplePlan(t)
	n := linuxNode(t, p)
	n.Labels = map[string]string{"kubernetes.io/os": "linux", "pool": "blue"}
	flags, err := LinuxKubeletFlags(n, LinuxPathsUnder("/"))
	if err != nil {
		t.Fatal(err)
	}
	fs, _ := realKubeletFlagSet(t)
	if err := fs.Parse(flags); err != nil {
		t.Fatalf("kubelet flag set rejects %v: %v", flags, err)
	}
	joined := strings.Join(flags, " ")
	if !strings.Contains(joined, "--node-labels=pool=blue") || strings.Contains(joined, "kubernetes.io/os") {
		t.Errorf("labels: %s (the kubelet sets kubernetes.io/os itself)", joined)
	}
	n.Labels = map[string]string{"bad": "a,b"}
	if _, err := LinuxKubeletFlags(n, LinuxPathsUnder("/")); err == nil {
		t.Error("a label with a comma was accepted into --node-labels")
	}
}

func TestLinuxBridgeCNIConfigLoadsWithLibcni(t *testing.T) {
	p := examplePlan(t)
	n := linuxNode(t, p)
	n.PodCIDR = "10.244.3.0/24"
	data, err := LinuxBridgeCNIConfig(n, LinuxPathsUnder("/srv/node"))
	if err != nil {
		t.Fatal(err)
	}
	list, err := libcni.ConfListFromBytes(data)
	if err != nil {
		t.Fatalf("libcni: %v\n%s", err, data)
	}
	if len(list.Plugins) != 2 || list.Plugins[0].Network.Type != "bridge" || list.Plugins[1].Network.Type != "portmap" {
		t.Fatalf("plugins: %+v", list.Plugins)
	}
	if !strings.Contains(string(list.Plugins[0].Bytes), `"subnet":"10.244.3.0/24"`) ||
		!strings.Contains(string(list.Plugins[0].Bytes), `"ipMasq":false`) ||
		!strings.Contains(string(list.Plugins[0].Bytes), `"dataDir":"/srv/node/var/lib/cni/networks"`) {
		t.Errorf("bridge conf: %s", list.Plugins[0].Bytes)
	}
	n.PodCIDR = "not-a-cidr"
	if _, err := LinuxBridgeCNIConfig(n, LinuxPathsUnder("/srv/node")); err == nil {
		t.Error("a bad pod CIDR was accepted")
	}
}

func TestLinuxContainerdConfigAtLayout(t *testing.T) {
	p := examplePlan(t)
	n := linuxNode(t, p)
	paths := LinuxPathsUnder("/srv/node")
	data, err := LinuxContainerdConfigAt(p, n, paths)
	if err != nil {
		t.Fatal(err)
	}
	c := decodeContainerd(t, data)
	if c.Root != paths.ContainerdRoot || c.State != paths.ContainerdState || c.GRPC.Address != paths.ContainerdSocket {
		t.Errorf("root %q state %q address %q", c.Root, c.State, c.GRPC.Address)
	}
	if got := c.Plugins.Runtime.CNI.ConfDir; got != filepath.Join("/srv/node", "/etc/cni/net.d") {
		t.Errorf("CNI conf dir %q", got)
	}
	// The bundle's file (no layout) is unchanged by the layout variant.
	plain, err := LinuxContainerdConfig(p, n)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(plain), "root =") || !strings.Contains(string(plain), "/etc/cni/net.d") {
		t.Errorf("bundle containerd config:\n%s", plain)
	}
}

func TestValidateKubeletDropIn(t *testing.T) {
	for _, tc := range []struct {
		name, data string
		ok         bool
	}{
		{"fragment", "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nfailCgroupV1: false\n", true},
		{"unknown field", "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nfailCgroupv1: false\n", false},
		{"wrong kind", "apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\n", false},
		{"not yaml", "{{{", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := ValidateKubeletDropIn([]byte(tc.data))
			if (err == nil) != tc.ok {
				t.Errorf("ValidateKubeletDropIn = %v, want ok=%v", err, tc.ok)
			}
		})
	}
}
