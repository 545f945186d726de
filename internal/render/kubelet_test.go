package render

import (
	"runtime"
	"strings"
	"testing"

	"github.com/spf13/pflag"
	apiruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/kubernetes/cmd/kubelet/app/options"
	kubeletconfig "k8s.io/kubernetes/pkg/kubelet/apis/config"
	kubeletscheme "k8s.io/kubernetes/pkg/kubelet/apis/config/scheme"
	kubeletvalidation "k8s.io/kubernetes/pkg/kubelet/apis/config/validation"
	proxyscheme "k8s.io/kubernetes/pkg/proxy/apis/config/scheme"

	"github.com/kubewin/kubewin/internal/plan"
)

// decodeKubeletConfig decodes data with the kubelet's own scheme in strict mode (unknown and
// duplicate fields are errors) into the internal type, defaults applied, as the kubelet does.
func decodeKubeletConfig(t *testing.T, data []byte) *kubeletconfig.KubeletConfiguration {
	t.Helper()
	_, codecs, err := kubeletscheme.NewSchemeAndCodecs(serializer.EnableStrict)
	if err != nil {
		t.Fatal(err)
	}
	obj, err := apiruntime.Decode(codecs.UniversalDecoder(), data)
	if err != nil {
		t.Fatalf("kubelet scheme rejects the config: %v\n%s", err, data)
	}
	kc, ok := obj.(*kubeletconfig.KubeletConfiguration)
	if !ok {
		t.Fatalf("decoded %T, want KubeletConfiguration", obj)
	}
	return kc
}

func TestKubeletConfigAcceptedByKubeletScheme(t *testing.T) {
	for name, p := range designVariants(t) {
		for _, n := range windowsNodes(p) {
			t.Run(name+"/"+n.Name, func(t *testing.T) {
				data, err := KubeletConfig(p, n)
				if err != nil {
					t.Fatal(err)
				}
				kc := decodeKubeletConfig(t, data)
				w := n.Windows
				if kc.CgroupsPerQOS || len(kc.EnforceNodeAllocatable) != 1 || kc.EnforceNodeAllocatable[0] != "none" {
					t.Errorf("cgroupsPerQOS=%v enforceNodeAllocatable=%v, want false and [none]", kc.CgroupsPerQOS, kc.EnforceNodeAllocatable)
				}
				// issue 11 item 13: "Host" keeps the host's DNS suffixes (dns_windows.go).
				if kc.ResolverConfig != "Host" {
					t.Errorf("resolvConf = %q, want Host", kc.ResolverConfig)
				}
				if len(kc.ClusterDNS) != 1 || kc.ClusterDNS[0] != p.Networking.ClusterDNS || kc.ClusterDomain != p.Networking.ClusterDomain {
					t.Errorf("clusterDNS %v / domain %q", kc.ClusterDNS, kc.ClusterDomain)
				}
				if kc.ContainerRuntimeEndpoint != w.ContainerdPipe {
					t.Errorf("containerRuntimeEndpoint = %q", kc.ContainerRuntimeEndpoint)
				}
				if kc.SystemReserved["memory"] != w.SystemReservedMemory {
					t.Errorf("systemReserved = %v", kc.SystemReserved)
				}
				if len(kc.RegisterWithTaints) != len(n.Taints) {
					t.Errorf("registerWithTaints = %v, want %v", kc.RegisterWithTaints, n.Taints)
				}
				// Defaults the kubelet fills must survive (a zero written by the renderer
				// would replace them).
				if kc.SyncFrequency.Duration == 0 || kc.NodeStatusUpdateFrequency.Duration == 0 || kc.ImageMinimumGCAge.Duration == 0 {
					t.Errorf("kubelet defaults were overridden by zeros:\n%s", data)
				}

				// The kubelet's validation as built for the OS the test runs on. One part
				// depends on that OS (validateKubeletOSConfiguration in validation_linux.go
				// vs validation_windows.go): the Linux one refuses cgroup v1 hosts when
				// failCgroupV1 is set (a property of the test machine; the field means
				// nothing on Windows, so it is cleared here), the Windows one only warns
				// about cgroupsPerQOS/enforceNodeAllocatable and rejects Linux-only fields
				// (singleProcessOOMKill, userNamespaces, defaultPodSysctls), none of which
				// kubewin sets. The Windows variant runs only when this test runs on
				// Windows; everything else is checked here.
				if runtime.GOOS == "linux" {
					kc.FailCgroupV1 = false
				}
				if err := kubeletvalidation.ValidateKubeletConfiguration(kc, utilfeature.DefaultFeatureGate); err != nil {
					t.Errorf("kubelet validation: %v\n%s", err, data)
				}
			})
		}
	}
}

// realKubeletFlagSet is the kubelet's command-line flag set, built the way
// cmd/kubelet/app.NewKubeletCommand builds it, for the OS the test runs on.
func realKubeletFlagSet(t *testing.T) (*pflag.FlagSet, *options.KubeletFlags) {
	t.Helper()
	fs := pflag.NewFlagSet("kubelet", pflag.ContinueOnError)
	kf := options.NewKubeletFlags()
	kc, err := options.NewKubeletConfiguration()
	if err != nil {
		t.Fatal(err)
	}
	kf.AddFlags(fs)
	options.AddKubeletConfigFlags(fs, kc)
	options.AddGlobalFlags(fs)
	return fs, kf
}

func TestKubeletFlagsExistInRealKubelet(t *testing.T) {
	fs, _ := realKubeletFlagSet(t)
	// The Windows-only flags must really be absent here (registered by osflags_windows.go):
	// otherwise the list below would be excusing a typo.
	for name := range windowsOnlyKubeletFlags {
		if runtime.GOOS != "windows" && fs.Lookup(name) != nil {
			t.Errorf("%s is registered on %s; it is not Windows-only", name, runtime.GOOS)
		}
	}
	for vname, p := range designVariants(t) {
		for _, n := range windowsNodes(p) {
			flags, err := KubeletFlags(p, n)
			if err != nil {
				t.Fatal(err)
			}
			var portable []string
			for _, f := range flags {
				name, _, _ := strings.Cut(strings.TrimPrefix(f, "--"), "=")
				fl := fs.Lookup(name)
				switch {
				case windowsOnlyKubeletFlags[name] && runtime.GOOS != "windows":
					continue // exists only in the Windows kubelet; this test checks it when run on Windows
				case fl == nil:
					t.Errorf("%s/%s: kubelet has no flag --%s", vname, n.Name, name)
				case fl.Deprecated != "":
					t.Errorf("%s/%s: --%s is deprecated (%s); it belongs in config.yaml", vname, n.Name, name, fl.Deprecated)
				}
				portable = append(portable, f)
			}
			// Parse them for real into a fresh flag set and run the kubelet's flag validation
			// (it rejects --node-labels a kubelet may not set on its own Node).
			pfs, kf := realKubeletFlagSet(t)
			if err := pfs.Parse(portable); err != nil {
				t.Fatalf("%s/%s: kubelet flag parsing: %v", vname, n.Name, err)
			}
			if err := options.ValidateKubeletFlags(kf); err != nil {
				t.Errorf("%s/%s: %v", vname, n.Name, err)
			}
			if kf.HostnameOverride != n.Name || kf.NodeIP != n.NodeIP {
				t.Errorf("%s/%s: hostname-override %q node-ip %q", vname, n.Name, kf.HostnameOverride, kf.NodeIP)
			}
			for k, v := range n.Labels {
				if kubeletSetsLabel[k] {
					if _, ok := kf.NodeLabels[k]; ok {
						t.Errorf("%s/%s: --node-labels repeats %s, which the kubelet sets itself", vname, n.Name, k)
					}
					continue
				}
				if kf.NodeLabels[k] != v {
					t.Errorf("%s/%s: label %s=%q, parsed %q", vname, n.Name, k, v, kf.NodeLabels[k])
				}
			}
		}
	}
}

func TestKubeletFlagsFileMatchesFlags(t *testing.T) {
	p := examplePlan(t)
	n := windowsNode(t, p, "node009")
	file, err := KubeletFlagsFile(p, n)
	if err != nil {
		t.Fatal(err)
	}
	flags, _ := KubeletFlags(p, n)
	var got []string
	for _, line := range strings.Split(strings.TrimSpace(string(file)), "\n") {
		if !strings.HasPrefix(line, "#") {
			got = append(got, line)
		}
	}
	if strings.Join(got, " ") != strings.Join(flags, " ") {
		t.Errorf("flags file %q, want %q", got, flags)
	}
	wantContains(t, "kubelet flags", file, "--hostname-override=node009\n", "--node-ip=100.100.126.216\n",
		"--windows-service\n")
	// issue 11 item 13: labels the kubelet sets itself are not repeated in --node-labels.
	for _, own := range []string{"kubernetes.io/os=", "kubernetes.io/arch=", "node.kubernetes.io/windows-build="} {
		if strings.Contains(string(file), own) {
			t.Errorf("kubelet flags repeat %s, which the kubelet sets itself", own)
		}
	}
	for _, removed := range []string{"--network-plugin", "--cni-bin-dir", "--cni-conf-dir", "--image-pull-progress-deadline",
		"--pod-infra-container-image", "--cgroups-per-qos", "--enforce-node-allocatable", "--resolv-conf", "HyperVContainer"} {
		if strings.Contains(string(file), removed) {
			t.Errorf("flags contain %s, gone from current kubelets or moved to config.yaml", removed)
		}
	}
}

func TestKubeletFlagsRejectUnquotableLabel(t *testing.T) {
	p := examplePlan(t)
	n := windowsNode(t, p, "node009")
	n.Labels = map[string]string{"team": "a,b"}
	if _, err := KubeletFlags(p, n); err == nil {
		t.Fatal("a label value with a comma was accepted")
	}
	if _, err := KubeletConfig(p, plan.NodePlan{Name: "x"}); err == nil {
		t.Fatal("a node without a Windows plan was accepted")
	}
}

func TestConfigSchemesAreStrict(t *testing.T) {
	// The decoders used above reject what the kubelet and kube-proxy reject: a misspelt field.
	p := examplePlan(t)
	n := windowsNode(t, p, "node009")
	kc, err := KubeletConfig(p, n)
	if err != nil {
		t.Fatal(err)
	}
	kp, err := KubeProxyConfig(p, n)
	if err != nil {
		t.Fatal(err)
	}
	replace := func(b []byte, old, new string) []byte {
		if !strings.Contains(string(b), old) {
			t.Fatalf("test setup: %q not in rendered config", old)
		}
		return []byte(strings.Replace(string(b), old, new, 1))
	}
	_, codecs, err := kubeletscheme.NewSchemeAndCodecs(serializer.EnableStrict)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := apiruntime.Decode(codecs.UniversalDecoder(), replace(kc, "cgroupsPerQOS:", "cgroupsPerQos:")); err == nil {
		t.Error("kubelet scheme accepted an unknown field")
	}
	if _, err := apiruntime.Decode(proxyscheme.Codecs.UniversalDecoder(), replace(kp, "hostnameOverride:", "hostNameOverride:")); err == nil {
		t.Error("kube-proxy scheme accepted an unknown field")
	}
}
