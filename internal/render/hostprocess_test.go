package render

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/kubewin/kubewin/internal/plan"
	"github.com/kubewin/kubewin/internal/testenv/psgrammar"
	"github.com/kubewin/kubewin/pkg/api/v1alpha1"
)

var updateHostProcess = flag.Bool("update", false, "rewrite the golden files under testdata/hostprocess")

// hostProcessVariants are the HostProcess designs' plans: the two good specs and their BGP and
// host-gw counterparts.
func hostProcessVariants(t *testing.T) map[string]*plan.Plan {
	t.Helper()
	load := func(name string, mutate func(*v1alpha1.Cluster)) *plan.Plan {
		c, _, err := v1alpha1.Load(filepath.Join("..", "..", "testdata", "specs", "good", name))
		if err != nil {
			t.Fatal(err)
		}
		if mutate != nil {
			mutate(c)
		}
		p, err := plan.New(c)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	return map[string]*plan.Plan{
		"calico-vxlan": load("calico-hostprocess.yaml", nil),
		"calico-bgp": load("calico-hostprocess.yaml", func(c *v1alpha1.Cluster) {
			c.Spec.LinuxCNI.Calico.VXLANMode, c.Spec.LinuxCNI.Calico.BGP = "Never", "Enabled"
			c.Spec.Windows.EnableDSR = true
		}),
		"flannel-vxlan": load("flannel-hostprocess.yaml", nil),
		"flannel-host-gw": load("flannel-hostprocess.yaml", func(c *v1alpha1.Cluster) {
			c.Spec.LinuxCNI.Flannel = &v1alpha1.FlannelSettings{Backend: "host-gw"}
			c.Spec.Windows.HNSNetworkName = ""
		}),
	}
}

// splitDocs splits a YAML stream into documents (the renderer writes "---" lines only between
// documents).
func splitDocs(data []byte) [][]byte {
	return bytes.Split(data, []byte("\n---\n"))
}

// decodeStrict decodes one document into an official type, refusing unknown and duplicate fields.
func decodeStrict(t *testing.T, doc []byte, into any) {
	t.Helper()
	if err := sigsyaml.UnmarshalStrict(doc, into); err != nil {
		t.Fatalf("strict decode into %T: %v\n%s", into, err, doc)
	}
}

func TestHostProcessManifests(t *testing.T) {
	var scripts []psgrammar.Document
	for name, p := range hostProcessVariants(t) {
		t.Run(name, func(t *testing.T) {
			files, err := Render(p)
			if err != nil {
				t.Fatal(err)
			}
			byPath := map[string][]byte{}
			for _, f := range files {
				if strings.HasPrefix(f.Path, hostProcessDir+"/") {
					byPath[f.Path] = f.Data
					checkGolden(t, filepath.Join("testdata", "hostprocess", name, strings.TrimPrefix(f.Path, hostProcessDir+"/")), f.Data)
				}
				// No HNS scripts, CNI configuration or kube-proxy service for a node whose
				// network the CNI's pod owns.
				if rel, ok := strings.CutPrefix(f.Path, "nodes/win-1/"); ok {
					if !slices.Contains([]string{"README.md", "kubelet/config.yaml", "kubelet/flags", "containerd/config.toml", "services/install.ps1", "firewall/rules.ps1"}, rel) {
						t.Errorf("unexpected node file %s", f.Path)
					}
					if strings.HasSuffix(rel, ".ps1") {
						scripts = append(scripts, psgrammar.Document{Name: name + "/" + rel, Text: string(f.Data)})
						if rel == "services/install.ps1" && (strings.Contains(string(f.Data), "'kube-proxy'") || strings.Contains(string(f.Data), "'flanneld'")) {
							t.Errorf("%s installs kube-proxy or flanneld, which the DaemonSets run", f.Path)
						}
					}
				}
				if f.Path == "cluster/calico-ipreservation.yaml" {
					t.Errorf("an IPReservation for Calico for Windows, whose pods get Calico IPAM addresses")
				}
			}
			hp := p.HostProcess
			kp := byPath[hostProcessDir+"/kube-proxy-windows.yaml"]
			docs := splitDocs(kp)
			if len(docs) != 2 {
				t.Fatalf("kube-proxy-windows.yaml has %d documents, want ConfigMap and DaemonSet", len(docs))
			}
			var cm corev1.ConfigMap
			var ds appsv1.DaemonSet
			decodeStrict(t, docs[0], &cm)
			decodeStrict(t, docs[1], &ds)
			checkHostProcessDaemonSet(t, &ds, &cm, "kube-proxy-windows", "kube-system", "kube-proxy")
			script := cm.Data["start.ps1"]
			scripts = append(scripts, psgrammar.Document{Name: name + "/kube-proxy", Text: script})
			for _, want := range []string{"$Network = " + psQuote(hp.NetworkName), "'--cluster-cidr=" + p.Networking.ClusterCIDRs[0] + "'", "--proxy-mode=kernelspace", "--network-name=$Network"} {
				if !strings.Contains(script, want) {
					t.Errorf("kube-proxy script lacks %q", want)
				}
			}
			switch {
			case hp.NetworkType == "L2Bridge":
				if strings.Contains(script, "Get-HnsEndpoint") || strings.Contains(script, "host-local.exe") {
					t.Error("an L2Bridge network needs no source VIP lookup")
				}
			case hp.CNI == "calico":
				if !strings.Contains(script, "$ep = 'Calico_ep'") {
					t.Error("Calico VXLAN: the source VIP is not Calico_ep's address")
				}
			default:
				if !strings.Contains(script, `"dataDir":"C:/var/lib/cni/networks"`) {
					t.Error("flannel VXLAN: the source VIP is not reserved in the pods' host-local data directory")
				}
			}
			if got := strings.Contains(script, "'--enable-dsr=true'"); got != hp.EnableDSR {
				t.Errorf("--enable-dsr in script = %v, want %v", got, hp.EnableDSR)
			}

			fl := byPath[hostProcessDir+"/flannel-windows.yaml"]
			cal := byPath[hostProcessDir+"/calico-windows.yaml"]
			if hp.CNI == "calico" {
				if fl != nil || cal == nil {
					t.Fatalf("calico design: flannel %v calico %v", fl != nil, cal != nil)
				}
				docs := splitDocs(cal)
				if len(docs) != 3 {
					t.Fatalf("calico-windows.yaml has %d documents", len(docs))
				}
				var ipam, inst map[string]any
				decodeStrict(t, docs[0], &ipam)
				decodeStrict(t, docs[1], &inst)
				if ipam["kind"] != "IPAMConfig" || ipam["spec"].(map[string]any)["strictAffinity"] != true {
					t.Errorf("IPAMConfig = %v", ipam)
				}
				spec := inst["spec"].(map[string]any)
				if spec["calicoNetwork"].(map[string]any)["windowsDataplane"] != "HNS" || spec["windowsNodes"].(map[string]any)["cniBinDir"] != `C:\k\cni\bin` {
					t.Errorf("Installation = %v", inst)
				}
				var ep corev1.ConfigMap
				decodeStrict(t, docs[2], &ep)
				if ep.Namespace != "tigera-operator" || ep.Data["KUBERNETES_SERVICE_HOST"] != "10.0.0.10" || ep.Data["KUBERNETES_SERVICE_PORT"] != "6443" {
					t.Errorf("services endpoint ConfigMap = %+v", ep)
				}
				return
			}
			if cal != nil || fl == nil {
				t.Fatalf("flannel design: flannel %v calico %v", fl != nil, cal != nil)
			}
			docs = splitDocs(fl)
			if len(docs) != 2 {
				t.Fatalf("flannel-windows.yaml has %d documents", len(docs))
			}
			cm, ds = corev1.ConfigMap{}, appsv1.DaemonSet{}
			decodeStrict(t, docs[0], &cm)
			decodeStrict(t, docs[1], &ds)
			checkHostProcessDaemonSet(t, &ds, &cm, "kube-flannel-ds-windows", "kube-flannel", "flannel")
			var nc flannelNetConf
			decodeStrict(t, []byte(cm.Data["net-conf.json"]), &nc)
			if nc.Backend.Type != hp.Flannel.Backend || nc.Backend.Name != hp.NetworkName || nc.Backend.VNI != hp.Flannel.VNI || nc.Backend.Port != hp.Flannel.Port || nc.Network != "10.244.0.0/16" {
				t.Errorf("Windows net-conf.json = %+v", nc)
			}
			var cni cniConf
			decodeStrict(t, []byte(cm.Data["cni.conf"]), &cni)
			if cni.Type != "flannel" || cni.Name != hp.NetworkName || cni.Delegate == nil {
				t.Fatalf("CNI conf = %+v", cni)
			}
			if want := map[string]string{"L2Bridge": "win-bridge", "Overlay": "win-overlay"}[hp.NetworkType]; cni.Delegate.Type != want {
				t.Errorf("delegate = %s, want %s", cni.Delegate.Type, want)
			}
			fs := cm.Data["start.ps1"]
			scripts = append(scripts, psgrammar.Document{Name: name + "/flannel", Text: fs})
			if got := strings.Contains(fs, `DestinationPrefix = "$env:NODE_IP/32"`); got != (hp.NetworkType == "L2Bridge") {
				t.Errorf("node route added = %v on %s", got, hp.NetworkType)
			}
			// The External placeholder comes before flanneld, of the network's type.
			if !strings.Contains(fs, "-Name 'External'") || strings.Index(fs, "-Name 'External'") > strings.Index(fs, "flanneld.exe') @argv") {
				t.Error("no External placeholder network before flanneld starts")
			}
			if got := strings.Contains(fs, "-Type Overlay -Name 'External'") && strings.Contains(fs, "VSID = 9999"); got != (hp.NetworkType == "Overlay") {
				t.Errorf("overlay placeholder = %v on %s", got, hp.NetworkType)
			}
		})
	}
	if t.Failed() {
		return
	}
	// The real PowerShell grammar parses every start script.
	results, err := psgrammar.Parse(scripts, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range results {
		if !r.OK() {
			t.Errorf("%s does not parse: %v", r.Name, r.Problems)
		}
	}
	if len(results) != 14 {
		t.Errorf("%d scripts parsed, want 4 kube-proxy, 2 flannel and 8 node scripts", len(results))
	}
}

// checkHostProcessDaemonSet asserts the shape both DaemonSets share.
func checkHostProcessDaemonSet(t *testing.T, ds *appsv1.DaemonSet, cm *corev1.ConfigMap, name, namespace, sa string) {
	t.Helper()
	ps := ds.Spec.Template.Spec
	if ds.Name != name || ds.Namespace != namespace || cm.Name != name || cm.Namespace != namespace || ps.ServiceAccountName != sa {
		t.Errorf("names: DaemonSet %s/%s ConfigMap %s/%s account %s", ds.Namespace, ds.Name, cm.Namespace, cm.Name, ps.ServiceAccountName)
	}
	if ps.SecurityContext == nil || ps.SecurityContext.WindowsOptions == nil || ps.SecurityContext.WindowsOptions.HostProcess == nil ||
		!*ps.SecurityContext.WindowsOptions.HostProcess || !ps.HostNetwork {
		t.Error("not a HostProcess pod on the host network")
	}
	if ps.NodeSelector["kubernetes.io/os"] != "windows" {
		t.Errorf("nodeSelector = %v", ps.NodeSelector)
	}
	if len(ps.Volumes) != 1 || ps.Volumes[0].ConfigMap == nil || ps.Volumes[0].ConfigMap.Name != cm.Name {
		t.Errorf("volumes = %+v", ps.Volumes)
	}
	if c := ps.Containers[0]; !strings.Contains(strings.Join(c.Command, " "), `kubewin\start.ps1`) || c.VolumeMounts[0].MountPath != "/kubewin" {
		t.Errorf("container = %+v", c)
	}
	if _, ok := cm.Data["start.ps1"]; !ok {
		t.Error("no start.ps1 in the ConfigMap")
	}
}

func checkGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *updateHostProcess {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -update writes it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (go test -update rewrites it)", path)
	}
}

// Same plan, same bytes.
func TestHostProcessDeterministic(t *testing.T) {
	for name, p := range hostProcessVariants(t) {
		a, err := KubeProxyWindowsDaemonSet(p)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := KubeProxyWindowsDaemonSet(p)
		if !bytes.Equal(a, b) {
			t.Errorf("%s: two renders differ", name)
		}
	}
}

// TestHostProcessClusterManifests: what kubewin publish applies is exactly the bundle's
// cluster/hostprocess files with content, and only the Calico settings take fields over.
func TestHostProcessClusterManifests(t *testing.T) {
	want := map[string][]string{
		"calico-vxlan":    {"cluster/hostprocess/kube-proxy-windows.yaml", "cluster/hostprocess/calico-windows.yaml"},
		"calico-bgp":      {"cluster/hostprocess/kube-proxy-windows.yaml", "cluster/hostprocess/calico-windows.yaml"},
		"flannel-vxlan":   {"cluster/hostprocess/kube-proxy-windows.yaml", "cluster/hostprocess/flannel-windows.yaml"},
		"flannel-host-gw": {"cluster/hostprocess/kube-proxy-windows.yaml", "cluster/hostprocess/flannel-windows.yaml"},
	}
	for name, p := range hostProcessVariants(t) {
		ms, err := HostProcessClusterManifests(p)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, m := range ms {
			got = append(got, m.Name)
			if m.TakeOver != strings.HasSuffix(m.Name, "calico-windows.yaml") || len(m.Data) == 0 {
				t.Errorf("%s: %s take-over %t, %d bytes", name, m.Name, m.TakeOver, len(m.Data))
			}
		}
		if !slices.Equal(got, want[name]) {
			t.Errorf("%s: %v, want %v", name, got, want[name])
		}
	}
	if ms, err := HostProcessClusterManifests(examplePlan(t)); err != nil || len(ms) != 0 {
		t.Errorf("a design without HostProcess pods: %d manifests, %v", len(ms), err)
	}
}
