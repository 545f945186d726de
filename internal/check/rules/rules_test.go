package rules

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/kubewin/kubewin/internal/check"
	"github.com/kubewin/kubewin/internal/plan"
	"github.com/kubewin/kubewin/internal/render"
	"github.com/kubewin/kubewin/pkg/api/v1alpha1"
)

// tc is one input set for a rule test.
type tc struct {
	files     map[string]string // relative path -> content (config files)
	manifests map[string]string
	kubelet   []string
	proxy     []string
	specYAML  string
	example   bool
	mutSpec   func(*v1alpha1.Cluster)
	mutPlan   func(*plan.Plan)
	version   string
	// filesFn adds config files that need the test to build them (rendered ones).
	filesFn func(*testing.T) map[string]string
}

func writeFiles(t *testing.T, dir string, m map[string]string) []string {
	t.Helper()
	var out []string
	for name, content := range m {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// examplePlan plans the embedded example, optionally mutated.
func examplePlan(t *testing.T, mutSpec func(*v1alpha1.Cluster)) (*v1alpha1.Cluster, *plan.Plan) {
	t.Helper()
	c, _, err := v1alpha1.ParseExample()
	if err != nil {
		t.Fatal(err)
	}
	if mutSpec != nil {
		mutSpec(c)
	}
	p, err := plan.New(c)
	if err != nil {
		t.Fatal(err)
	}
	return c, p
}

func runCase(t *testing.T, c tc) *check.Report {
	t.Helper()
	dir := t.TempDir()
	in := check.Input{KubeletFlags: c.kubelet, KubeProxyFlags: c.proxy, KubernetesVersion: c.version}
	files := c.files
	if c.filesFn != nil {
		files = maps.Clone(files)
		if files == nil {
			files = map[string]string{}
		}
		maps.Copy(files, c.filesFn(t))
	}
	in.Files = writeFiles(t, filepath.Join(dir, "files"), files)
	in.Manifests = writeFiles(t, filepath.Join(dir, "manifests"), c.manifests)
	switch {
	case c.specYAML != "":
		in.SpecFile = filepath.Join(dir, "cluster.yaml")
		in.SpecData = []byte(c.specYAML)
	case c.mutSpec != nil || c.mutPlan != nil:
		spec, p := examplePlan(t, c.mutSpec)
		if c.mutPlan != nil {
			c.mutPlan(p)
		}
		in.Spec, in.Plan = spec, p
	case c.example:
		in.UseExample = true
	}
	ctx, _, err := check.Load(in)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	return check.Run(ctx, All(), check.Options{})
}

func findingsOf(rep *check.Report, id string) []check.Finding {
	var out []check.Finding
	for _, f := range rep.Findings {
		if f.RuleID == id {
			out = append(out, f)
		}
	}
	return out
}

// Command-line and file fixtures that pass every rule they are relevant to.
const (
	goodKubelet = `c:\k\kubelet.exe --hostname-override=node009 --node-ip=100.100.126.216 --kubeconfig=c:\k\kubelet.conf ` +
		`--container-runtime-endpoint=npipe:////./pipe/containerd-containerd --cgroups-per-qos=false --enforce-node-allocatable="" ` +
		`--resolv-conf="" --cluster-dns=10.176.0.10 --system-reserved=memory=2Gi --anonymous-auth=false --authorization-mode=Webhook ` +
		`--read-only-port=0 --register-with-taints=os=windows:NoSchedule`
	goodProxy = `c:\k\kube-proxy.exe --proxy-mode=kernelspace --hostname-override=node009 --network-name=l2bridge ` +
		`--bind-address=100.100.126.216 --cluster-cidr=10.160.0.0/12 --kubeconfig=c:\k\kube-proxy.conf`
	goodCNI = `{
  "cniVersion": "0.2.0",
  "name": "l2bridge",
  "type": "win-bridge",
  "capabilities": { "portMappings": true },
  "dns": { "Nameservers": ["10.176.0.10"], "Search": ["default.svc.cluster.local", "svc.cluster.local", "cluster.local"] },
  "AdditionalArgs": [
    { "Name": "EndpointPolicy", "Value": { "Type": "OutBoundNAT", "ExceptionList": ["10.160.0.0/12", "10.176.0.0/12", "100.100.126.0/23"] } },
    { "Name": "EndpointPolicy", "Value": { "Type": "ROUTE", "DestinationPrefix": "10.176.0.0/12", "NeedEncap": true } }
  ]
}
`
	goodKeepalived = `global_defs {
   router_id WIN_GW_1
   vrrp_version 3
}
vrrp_instance VI_1 {
    state BACKUP
    interface eth1
    virtual_router_id 188
    priority 150
    nopreempt
    advert_int 0.1
    unicast_src_ip 100.100.126.202
    unicast_peer {
        100.100.126.203
    }
    virtual_ipaddress {
        10.160.11.1/24 dev eth1
    }
}
`
	goodKubeletConfig = `apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
cgroupsPerQOS: false
enforceNodeAllocatable: []
resolvConf: ""
clusterDNS: [10.176.0.10]
containerRuntimeEndpoint: npipe:////./pipe/containerd-containerd
systemReserved: {memory: 2Gi}
registerWithTaints: [{key: os, value: windows, effect: NoSchedule}]
readOnlyPort: 0
authentication: {anonymous: {enabled: false}, x509: {clientCAFile: 'c:\k\ca.crt'}, webhook: {enabled: true}}
authorization: {mode: Webhook}
`
	goodWinDeployment = `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: apps}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      nodeSelector: {kubernetes.io/os: windows, node.kubernetes.io/windows-build: "10.0.17763"}
      tolerations: [{key: os, operator: Equal, value: windows, effect: NoSchedule}]
      containers:
      - name: web
        image: mcr.microsoft.com/windows/servercore/iis:windowsservercore-ltsc2019
`
	goodLinuxDeployment = `apiVersion: apps/v1
kind: Deployment
metadata: {name: nginx}
spec:
  selector: {matchLabels: {app: nginx}}
  template:
    metadata: {labels: {app: nginx}}
    spec:
      nodeSelector: {kubernetes.io/os: linux}
      containers: [{name: nginx, image: nginx:1.27}]
`
)

// edit returns line with the flags in del removed and add appended.
func edit(line string, del []string, add ...string) string {
	fields := strings.Fields(line)
	var out []string
	for _, f := range fields {
		drop := false
		for _, d := range del {
			if strings.HasPrefix(f, "--"+d+"=") || f == "--"+d {
				drop = true
			}
		}
		if !drop {
			out = append(out, f)
		}
	}
	return strings.Join(append(out, add...), " ")
}

func winDeploy(specExtra, containerExtra string) string {
	return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata: {name: w}
spec:
  selector: {matchLabels: {app: w}}
  template:
    metadata: {labels: {app: w}}
    spec:
      nodeSelector: {kubernetes.io/os: windows}
      tolerations: [{key: os, operator: Equal, value: windows, effect: NoSchedule}]
%s      containers:
      - name: w
        image: mcr.microsoft.com/windows/nanoserver:ltsc2019
%s`, specExtra, containerExtra)
}

func keepalivedConf(routerID, version, instance string) string {
	return "global_defs {\n  router_id " + routerID + "\n" + version + "}\n" + instance
}

func instance(name, body string) string {
	return "vrrp_instance " + name + " {\n  state BACKUP\n  interface eth1\n" + body + "}\n"
}

func nodeByName(p *plan.Plan, n string) *plan.NodePlan {
	for i := range p.Nodes {
		if p.Nodes[i].Name == n {
			return &p.Nodes[i]
		}
	}
	panic(n)
}

func cniWith(f func(string) string) string { return f(goodCNI) }

var ruleCases = map[string]struct{ fire, pass tc }{
	// input
	"KW0001": {tc{files: map[string]string{"a.json": "{bad"}}, tc{files: map[string]string{"a.conf": goodCNI}}},
	"KW0002": {tc{files: map[string]string{"x.txt": "hello world\n"}}, tc{files: map[string]string{"kubelet.cmd": goodKubelet}}},
	"KW0003": {tc{kubelet: []string{goodKubelet + " --foo=bar"}}, tc{kubelet: []string{goodKubelet}}},
	"KW0004": {tc{specYAML: "apiVersion: kubewin.io/v1alpha1\nkind: Cluster\nspec: {nodes: 3}\n"}, tc{example: true}},
	"KW0005": {tc{files: map[string]string{"k.yaml": goodKubeletConfig + "cgroupsPerQos: false\n"}}, tc{files: map[string]string{"k.yaml": goodKubeletConfig}}},
	"KW0006": {tc{kubelet: []string{goodKubelet + " --max-pods=abc"}}, tc{kubelet: []string{goodKubelet + " --max-pods=30"}}},
	"KW0007": {tc{kubelet: []string{goodKubelet + " –v=2"}}, tc{kubelet: []string{goodKubelet + " --v=2"}}},
	"KW0008": {tc{kubelet: []string{goodKubelet + " --v=2 --v=3"}}, tc{kubelet: []string{goodKubelet + " --v=2"}}},
	"KW0009": {tc{files: map[string]string{"start.ps1": goodKubelet + " --node-labels=$global:Labels\n"}},
		tc{files: map[string]string{"start.ps1": "$global:Labels = \"a=b\"\n" + goodKubelet + " --node-labels=$global:Labels\n"}}},
	"KW0010": {tc{kubelet: []string{edit(goodKubelet, []string{"hostname-override"}, "--hostname-override=<hostname>")}}, tc{kubelet: []string{goodKubelet}}},
	"KW0011": {tc{manifests: map[string]string{"d.yaml": strings.Replace(goodLinuxDeployment, "nodeSelector", "nodeSelectr", 1)}},
		tc{manifests: map[string]string{"d.yaml": goodLinuxDeployment}}},
	"KW0012": {tc{files: map[string]string{"k.yaml": goodKubeletConfig + "imageGCHighThresholdPercent: 200\n"}}, tc{files: map[string]string{"k.yaml": goodKubeletConfig}}},
	"KW0013": {tc{kubelet: []string{goodKubelet + " stray"}}, tc{kubelet: []string{goodKubelet}}},
	"KW0015": {tc{files: map[string]string{"start.ps1": "Register-Thing -Exe C:\\k\\kubelet.exe -Flags \"--v=2 --max-pods=20\"\n"}},
		tc{files: map[string]string{"start.ps1": "& C:\\k\\kubelet.exe --v=2 --max-pods=20\n"}}},
	"KW0014": {tc{kubelet: []string{goodKubelet}, version: "1.30"}, tc{kubelet: []string{goodKubelet}, version: "1.37"}},

	// kubelet
	"KW1101": {tc{kubelet: []string{edit(goodKubelet, []string{"cgroups-per-qos"})}}, tc{kubelet: []string{goodKubelet}}},
	"KW1102": {tc{kubelet: []string{edit(goodKubelet, []string{"enforce-node-allocatable"}, "--enforce-node-allocatable=pods")}}, tc{kubelet: []string{goodKubelet}}},
	"KW1103": {tc{kubelet: []string{edit(goodKubelet, []string{"resolv-conf"}, "--resolv-conf=/etc/resolv.conf")}}, tc{kubelet: []string{goodKubelet}}},
	"KW1104": {tc{kubelet: []string{edit(goodKubelet, []string{"cluster-dns"})}},
		tc{kubelet: []string{edit(goodKubelet, []string{"cluster-dns"})}, files: map[string]string{"l2bridge.conf": goodCNI}}},
	"KW1105": {tc{kubelet: []string{goodKubelet + " --network-plugin=cni"}}, tc{kubelet: []string{goodKubelet}}},
	"KW1106": {tc{kubelet: []string{goodKubelet + " --pod-infra-container-image=registry.k8s.io/pause:3.10"}, version: "1.34"},
		tc{kubelet: []string{goodKubelet}, version: "1.34"}},
	"KW1107": {tc{kubelet: []string{goodKubelet}},
		tc{kubelet: []string{`c:\k\kubelet.exe --config=c:\k\config.yaml --hostname-override=node009 --node-ip=100.100.126.216 --kubeconfig=c:\k\kubelet.conf`},
			files: map[string]string{"config.yaml": goodKubeletConfig}}},
	"KW1108": {tc{kubelet: []string{goodKubelet + " --feature-gates=HyperVContainer=true"}}, tc{kubelet: []string{goodKubelet}}},
	"KW1109": {tc{proxy: []string{goodProxy + " --feature-gates=WinOverlay=false"}}, tc{proxy: []string{goodProxy + " --feature-gates=WinOverlay=true"}}},
	"KW1110": {tc{proxy: []string{goodProxy + " --feature-gates=WinDSR=true"}}, tc{proxy: []string{goodProxy}}},
	"KW1111": {tc{kubelet: []string{edit(goodKubelet, []string{"system-reserved"}, "--system-reserved=memory=1Gi")}}, tc{kubelet: []string{goodKubelet}}},
	"KW1112": {tc{kubelet: []string{goodKubelet + " --eviction-hard=memory.available<500Mi,nodefs.inodesFree<5%"}},
		tc{kubelet: []string{goodKubelet + " --eviction-hard=memory.available<500Mi,nodefs.available<10%,imagefs.available<15%"}}},
	"KW1113": {tc{files: map[string]string{"svc.cmd": `sc create kubelet binPath= "` + strings.ReplaceAll(goodKubelet, `"`, `\"`) + `" start= auto` + "\n"}},
		tc{files: map[string]string{"svc.cmd": `sc create kubelet binPath= "` + strings.ReplaceAll(goodKubelet, `"`, `\"`) + ` --windows-service" start= auto` + "\n"}}},
	"KW1114": {tc{files: map[string]string{"svc.ps1": "nssm set kubelet AppParameters " + strings.TrimPrefix(goodKubelet, `c:\k\kubelet.exe `) + " --windows-service\n"}},
		tc{files: map[string]string{"svc.ps1": "nssm set kubelet AppParameters " + strings.TrimPrefix(goodKubelet, `c:\k\kubelet.exe `) + "\n"}}},
	"KW1115": {tc{kubelet: []string{edit(goodKubelet, []string{"container-runtime-endpoint"}, "--container-runtime-endpoint=unix:///run/containerd/containerd.sock")}},
		tc{kubelet: []string{goodKubelet}}},
	"KW1116": {tc{example: true, kubelet: []string{edit(goodKubelet, []string{"node-ip"}, "--node-ip=172.16.126.216")}}, tc{example: true, kubelet: []string{goodKubelet}}},
	"KW1117": {tc{files: map[string]string{"k.yaml": goodKubeletConfig + "defaultPodSysctls: {net.ipv4.ip_forward: \"1\"}\n"}},
		tc{files: map[string]string{"k.yaml": goodKubeletConfig}}},
	"KW1118": {tc{kubelet: []string{edit(goodKubelet, []string{"register-with-taints"})}}, tc{kubelet: []string{goodKubelet}}},
	"KW1119": {tc{version: "1.30", kubelet: []string{goodKubelet + " --pod-infra-container-image=k8s.gcr.io/pause:3.1"}},
		tc{version: "1.30", kubelet: []string{goodKubelet + " --pod-infra-container-image=registry.k8s.io/pause:3.10"}}},

	// kube-proxy
	"KW1201": {tc{proxy: []string{edit(goodProxy, []string{"network-name"})}},
		tc{files: map[string]string{"kp.ps1": "$env:KUBE_NETWORK = \"l2bridge\"\n" + edit(goodProxy, []string{"network-name"}) + "\n"}}},
	"KW1202": {tc{example: true, proxy: []string{edit(goodProxy, []string{"network-name"}, "--network-name=cbr0")}}, tc{example: true, proxy: []string{goodProxy}}},
	"KW1203": {tc{proxy: []string{edit(goodProxy, []string{"hostname-override"})}, kubelet: []string{goodKubelet}}, tc{proxy: []string{goodProxy}, kubelet: []string{goodKubelet}}},
	"KW1204": {tc{proxy: []string{edit(goodProxy, []string{"network-name"}, "--network-name=vxlan0")}},
		tc{proxy: []string{edit(goodProxy, []string{"network-name"}, "--network-name=vxlan0", "--source-vip=10.160.11.3")}}},
	"KW1205": {tc{proxy: []string{edit(goodProxy, []string{"proxy-mode"}, "--proxy-mode=iptables")}}, tc{proxy: []string{goodProxy}}},
	"KW1206": {tc{example: true, mutSpec: seedBuild, proxy: []string{goodProxy + " --enable-dsr=true"}}, tc{example: true, mutSpec: seedBuild, proxy: []string{goodProxy + " --enable-dsr=false"}}},
	"KW1207": {tc{proxy: []string{goodProxy + " --enable-dsr=true"}, version: "1.32"}, tc{proxy: []string{goodProxy + " --enable-dsr=true"}, version: "1.37"}},
	"KW1208": {tc{proxy: []string{edit(goodProxy, []string{"network-name"}, "--network-name=vxlan0", "--source-vip=10.160.11.3")}, version: "1.19"},
		tc{proxy: []string{edit(goodProxy, []string{"network-name"}, "--network-name=vxlan0", "--source-vip=10.160.11.3", "--feature-gates=WinOverlay=true")}, version: "1.19"}},
	"KW1209": {tc{example: true, proxy: []string{edit(goodProxy, []string{"cluster-cidr"}, "--cluster-cidr=10.244.0.0/16")}}, tc{example: true, proxy: []string{goodProxy}}},
	"KW1210": {tc{mutPlan: func(p *plan.Plan) {
		n := nodeByName(p, "node009")
		n.Windows.Build, n.Windows.KubeProxyServiceAccount = 18363, "LocalSystem"
	}}, tc{example: true}},
	"KW1211": {tc{example: true, proxy: []string{goodProxy + " --root-hnsendpoint-name=ep0"}}, tc{example: true, proxy: []string{goodProxy}}},
	"KW1212": {tc{example: true, proxy: []string{edit(goodProxy, []string{"bind-address"}, "--bind-address=172.16.126.216")}}, tc{example: true, proxy: []string{goodProxy}}},

	// CNI
	"KW1301": {tc{example: true, files: map[string]string{"c.conf": strings.Replace(goodCNI, `"name": "l2bridge"`, `"name": "cbr0"`, 1)}},
		tc{example: true, files: map[string]string{"c.conf": goodCNI}}},
	"KW1302": {tc{example: true, files: map[string]string{"c.conf": strings.Replace(goodCNI, `"10.160.0.0/12", `, "", 1)}}, tc{example: true, files: map[string]string{"c.conf": goodCNI}}},
	"KW1303": {tc{example: true, files: map[string]string{"c.conf": strings.Replace(goodCNI, `"10.176.0.0/12", `, "", 1)}}, tc{example: true, files: map[string]string{"c.conf": goodCNI}}},
	"KW1304": {tc{example: true, files: map[string]string{"c.conf": strings.Replace(goodCNI, `, "100.100.126.0/23"`, "", 1)}}, tc{example: true, files: map[string]string{"c.conf": goodCNI}}},
	"KW1305": {tc{files: map[string]string{"c.conf": strings.Replace(goodCNI, `"100.100.126.0/23"`, `"0.0.0.0/0"`, 1)}}, tc{files: map[string]string{"c.conf": goodCNI}}},
	"KW1306": {tc{files: map[string]string{"c.conf": strings.Replace(goodCNI, `"NeedEncap": true`, `"NeedEncap": false`, 1)}}, tc{files: map[string]string{"c.conf": goodCNI}}},
	"KW1307": {tc{files: map[string]string{"c.conf": strings.Replace(goodCNI, `"OutBoundNAT"`, `"PortMapping"`, 1)}}, tc{files: map[string]string{"c.conf": goodCNI}}},
	"KW1308": {tc{files: map[string]string{"net.d/a.conf": goodCNI, "net.d/b.conf": goodCNI}}, tc{files: map[string]string{"net.d/a.conf": goodCNI}}},
	"KW1309": {tc{files: map[string]string{"c.conf": strings.Replace(goodCNI, `"win-bridge"`, `"wincni.exe"`, 1)}}, tc{files: map[string]string{"c.conf": goodCNI}}},
	"KW1310": {tc{example: true, files: map[string]string{"c.conf": strings.Replace(goodCNI, `["10.176.0.10"]`, `["10.0.0.10"]`, 1)}}, tc{example: true, files: map[string]string{"c.conf": goodCNI}}},
	"KW1311": {tc{files: map[string]string{"l2bridge.cfg": goodCNI}}, tc{files: map[string]string{"l2bridge.conf": goodCNI}}},
	"KW1312": {tc{files: map[string]string{"net-conf.json": `{"Network": "10.244.0.0/16", "Backend": {"Type": "vxlan", "VNI": 1}}`}},
		tc{files: map[string]string{"net-conf.json": `{"Network": "10.244.0.0/16", "Backend": {"Type": "vxlan", "VNI": 4096, "Port": 4789}}`}}},
	"KW1313": {tc{files: map[string]string{"net-conf.json": `{"Network": "10.244.0.0/16", "Backend": {"Type": "vxlan", "VNI": 4096, "Port": 8472}}`}},
		tc{files: map[string]string{"net-conf.json": `{"Network": "10.244.0.0/16", "Backend": {"Type": "vxlan", "VNI": 4096, "Port": 4789}}`}}},
	"KW1314": {tc{example: true, files: map[string]string{"net-conf.json": `{"Network": "10.244.0.0/16", "Backend": {"Type": "host-gw"}}`}},
		tc{example: true, files: map[string]string{"net-conf.json": `{"Network": "10.160.0.0/12", "Backend": {"Type": "host-gw"}}`}}},
	"KW1315": {tc{example: true, files: map[string]string{"c.conf": strings.Replace(goodCNI, `"win-bridge"`, `"win-overlay"`, 1)}}, tc{example: true, files: map[string]string{"c.conf": goodCNI}}},
	"KW1316": {tc{files: map[string]string{"c.conf": strings.Replace(goodCNI, `"portMappings": true`, `"portMappings": false`, 1)}}, tc{files: map[string]string{"c.conf": goodCNI}}},
	"KW1121": {tc{files: map[string]string{"kubelet.service.d/10-kubeadm.conf": "[Service]\nEnvironment=\"KUBELET_KUBEADM_ARGS=--cgroup-driver=systemd\"\nEnvironmentFile=-/var/lib/kubelet/kubeadm-flags.env\nExecStart=\nExecStart=/usr/bin/kubelet $KUBELET_KUBEADM_ARGS\n"}},
		tc{files: map[string]string{"kubelet.service.d/10-kubeadm.conf": "[Service]\nEnvironment=\"KUBELET_CONFIG_ARGS=--config=/var/lib/kubelet/config.yaml\"\nEnvironmentFile=-/var/lib/kubelet/kubeadm-flags.env\nExecStart=\nExecStart=/usr/bin/kubelet $KUBELET_CONFIG_ARGS $KUBELET_KUBEADM_ARGS\n"}}},
	"KW1808": {tc{files: map[string]string{"join.yaml": kubeadmJoin("unsafeSkipCAVerification: true")}},
		tc{files: map[string]string{"join.yaml": kubeadmJoin("caCertHashes: [\"sha256:0123\"]")}}},
	"KW1807": {tc{kubelet: []string{goodKubelet + " --api-servers=http://10.0.0.1:8080"}, version: "1.9"}, tc{kubelet: []string{goodKubelet + " --api-servers=https://10.0.0.1:6443"}, version: "1.9"}},
	"KW1120": {tc{kubelet: []string{goodKubelet}}, tc{kubelet: []string{goodKubelet + " --cluster-domain=cluster.local"}}},
	"KW1612": {tc{kubelet: []string{goodKubelet + " --pod-infra-container-image=mcr.microsoft.com/oss/kubernetes/pause"}, version: "1.26"},
		tc{kubelet: []string{goodKubelet + " --pod-infra-container-image=mcr.microsoft.com/oss/kubernetes/pause:3.9"}, version: "1.26"}},
	"KW1318": {tc{files: map[string]string{"c.conf": strings.Replace(goodCNI, `"cniVersion": "0.2.0",`, "", 1)}}, tc{files: map[string]string{"c.conf": goodCNI}}},
	"KW1319": {tc{files: map[string]string{"c.conf": strings.Replace(goodCNI, `"100.100.126.0/23"`, `"10.244.x.x/16"`, 1)}}, tc{files: map[string]string{"c.conf": goodCNI}}},
	"KW1317": {tc{files: map[string]string{"c.conf": strings.Replace(goodCNI, `"svc.cluster.local", `, "", 1)}}, tc{files: map[string]string{"c.conf": goodCNI}}},

	// addressing
	"KW1401": {tc{mutPlan: func(p *plan.Plan) { p.Networking.ServiceCIDR = "10.160.0.0/16" }}, tc{example: true}},
	"KW1402": {tc{mutPlan: func(p *plan.Plan) { nodeByName(p, "node009").PodCIDR = "192.168.0.0/24" }}, tc{example: true}},
	"KW1403": {tc{mutPlan: func(p *plan.Plan) { nodeByName(p, "node008").PodCIDR = "10.160.11.0/25" }}, tc{example: true}},
	"KW1404": {tc{mutPlan: func(p *plan.Plan) { p.Calico.ReservedCIDRs = nil }}, tc{example: true}},
	"KW1405": {tc{mutPlan: func(p *plan.Plan) { nodeByName(p, "node009").Windows.Gateway = "10.160.11.5" }},
		tc{example: true, files: map[string]string{"k.conf": goodKeepalived}}},
	"KW1406": {tc{mutPlan: func(p *plan.Plan) { nodeByName(p, "node009").Windows.HostEndpointIP = "10.160.11.9" }}, tc{example: true}},
	"KW1407": {tc{example: true, kubelet: []string{goodKubelet + " --max-pods=300"}}, tc{example: true, kubelet: []string{goodKubelet + " --max-pods=110"}}},
	"KW1408": {tc{mutPlan: func(p *plan.Plan) {
		p.Calico.ExportsConnectedRoutes = false
		for i := range p.Nodes {
			if p.Nodes[i].Linux != nil {
				p.Nodes[i].Linux.Routes = nil
			}
		}
	}}, tc{example: true}},
	"KW1409": {tc{example: true, files: map[string]string{"k.conf": strings.Replace(goodKeepalived, "10.160.11.1/24", "10.160.11.1/32", 1)}},
		tc{example: true, files: map[string]string{"k.conf": goodKeepalived}}},

	// keepalived
	"KW1501": {tc{files: map[string]string{"k.conf": goodKeepalived + instance("VI_2", "  virtual_router_id 188\n  virtual_ipaddress {\n    10.160.12.1/24\n  }\n")}},
		tc{files: map[string]string{"k.conf": goodKeepalived + instance("VI_2", "  virtual_router_id 189\n  virtual_ipaddress {\n    10.160.12.1/24\n  }\n")}}},
	"KW1502": {tc{files: map[string]string{"k.conf": strings.Replace(goodKeepalived, "virtual_router_id 188", "virtual_router_id 300", 1)}}, tc{files: map[string]string{"k.conf": goodKeepalived}}},
	"KW1503": {tc{files: map[string]string{"a/k.conf": goodKeepalived, "b/k.conf": strings.NewReplacer("virtual_router_id 188", "virtual_router_id 189", "WIN_GW_1", "WIN_GW_2").Replace(goodKeepalived)}},
		tc{files: map[string]string{"a/k.conf": goodKeepalived, "b/k.conf": strings.Replace(goodKeepalived, "WIN_GW_1", "WIN_GW_2", 1)}}},
	"KW1504": {tc{files: map[string]string{"k.conf": strings.Replace(goodKeepalived, "state BACKUP", "state MASTER", 1)}}, tc{files: map[string]string{"k.conf": goodKeepalived}}},
	"KW1505": {tc{files: map[string]string{"k.conf": strings.Replace(goodKeepalived, "vrrp_version 3", "vrrp_version 2", 1)}}, tc{files: map[string]string{"k.conf": goodKeepalived}}},
	"KW1506": {tc{files: map[string]string{"k.conf": keepalivedConf("R", "", instance("VI_1", "  virtual_router_id 1\n  virtual_ipaddress {\n"+manyVIPs(256)+"  }\n"))}},
		tc{files: map[string]string{"k.conf": keepalivedConf("R", "", instance("VI_1", "  virtual_router_id 1\n  virtual_ipaddress {\n"+manyVIPs(255)+"  }\n"))}}},
	"KW1507": {tc{files: map[string]string{"a/k.conf": goodKeepalived, "b/k.conf": goodKeepalived}},
		tc{files: map[string]string{"a/k.conf": goodKeepalived, "b/k.conf": strings.Replace(goodKeepalived, "WIN_GW_1", "WIN_GW_2", 1)}}},
	"KW1508": {tc{files: map[string]string{"k.conf": keepalivedConf("R", "", instance("VI_1", "  virtual_router_id 1\n  authentication {\n    auth_type PASS\n    auth_pass abcdefghij\n  }\n"))}},
		tc{files: map[string]string{"k.conf": keepalivedConf("R", "", instance("VI_1", "  virtual_router_id 1\n  authentication {\n    auth_type PASS\n    auth_pass abcdefgh\n  }\n"))}}},
	"KW1516": {tc{files: map[string]string{"k.conf": strings.Replace(goodKeepalived, "state BACKUP", "state ${KA_STATE}", 1)}}, tc{files: map[string]string{"k.conf": goodKeepalived}}},
	"KW1610": {tc{files: map[string]string{"config.toml": "version = 2\n[plugins.\"io.containerd.grpc.v1.cri\".registry]\n  config_path = \"/etc/containerd/certs.d\"\n[plugins.\"io.containerd.grpc.v1.cri\".registry.mirrors.\"docker.io\"]\n  endpoint = [\"https://mirror.example\"]\n"}},
		tc{files: map[string]string{"config.toml": "version = 2\n[plugins.\"io.containerd.grpc.v1.cri\".registry]\n  config_path = \"/etc/containerd/certs.d\"\n"}}},
	"KW1611": {tc{files: map[string]string{"config.toml": "version = 2\n[plugins.\"io.containerd.grpc.v1.cri\".registry.mirrors.\"docker.io\"]\n  endpoint = [\"https://mirror.example\"]\n  sandbox_image = \"registry.k8s.io/pause:3.10\"\n"}},
		tc{files: map[string]string{"config.toml": "version = 2\n[plugins.\"io.containerd.grpc.v1.cri\"]\n  sandbox_image = \"registry.k8s.io/pause:3.10\"\n[plugins.\"io.containerd.grpc.v1.cri\".registry.mirrors.\"docker.io\"]\n  endpoint = [\"https://mirror.example\"]\n"}}},
	"KW1518": {tc{files: map[string]string{"k.conf": goodKeepalived + "vrrp_script chk {\n    script \"killall -0 haproxy\"\n}\n"}},
		tc{files: map[string]string{"k.conf": strings.Replace(goodKeepalived, "    virtual_ipaddress {", "    track_script {\n        chk\n    }\n    virtual_ipaddress {", 1) +
			"vrrp_script chk {\n    script \"curl -sfk https://127.0.0.1:6443/healthz\"\n}\n"}}},
	"KW1519": {tc{files: map[string]string{"k.conf": strings.Replace(goodKeepalived, "    virtual_ipaddress {", "    track_script {\n        chk\n    }\n    virtual_ipaddress {", 1) +
		"vrrp_script chk {\n    script \"curl -sfk https://10.160.11.1:6443/healthz\"\n}\n"}},
		tc{files: map[string]string{"k.conf": strings.Replace(goodKeepalived, "    virtual_ipaddress {", "    track_script {\n        chk\n    }\n    virtual_ipaddress {", 1) +
			"vrrp_script chk {\n    script \"curl -sfk https://10.160.11.10:6443/healthz\"\n}\n"}}},
	"KW1517": {tc{files: map[string]string{"k.conf": goodKeepalived + "virtual_server 10.0.0.1 6443 {\n  lb_algo round-robin\n  protocol TCP\n}\n"}},
		tc{files: map[string]string{"k.conf": goodKeepalived + "virtual_server 10.0.0.1 6443 {\n  lb_algo rr\n  protocol TCP\n}\n"}}},
	"KW1509": {tc{files: map[string]string{"k.conf": keepalivedConf("R", "  vrrp_version 3\n", instance("VI_1", "  virtual_router_id 1\n  authentication {\n    auth_type PASS\n    auth_pass abc\n  }\n"))}},
		tc{files: map[string]string{"k.conf": keepalivedConf("R", "  vrrp_version 2\n", instance("VI_1", "  virtual_router_id 1\n  authentication {\n    auth_type PASS\n    auth_pass abc\n  }\n"))}}},
	"KW1510": {tc{files: map[string]string{"a/k.conf": goodKeepalived, "b/k.conf": strings.NewReplacer("WIN_GW_1", "WIN_GW_2", "unicast_src_ip 100.100.126.202", "unicast_src_ip 100.100.126.203", "        100.100.126.203", "        100.100.126.204").Replace(goodKeepalived)}},
		tc{files: map[string]string{"a/k.conf": goodKeepalived, "b/k.conf": strings.NewReplacer("WIN_GW_1", "WIN_GW_2", "unicast_src_ip 100.100.126.202", "unicast_src_ip 100.100.126.203", "        100.100.126.203", "        100.100.126.202").Replace(goodKeepalived)}}},
	"KW1511": {tc{files: map[string]string{"k.conf": strings.Replace(goodKeepalived, "priority 150", "priority 255", 1)}}, tc{files: map[string]string{"k.conf": goodKeepalived}}},
	"KW1512": {tc{files: map[string]string{"k.conf": strings.NewReplacer("vrrp_version 3", "vrrp_version 2", "advert_int 0.1", "advert_int 1").Replace(goodKeepalived)}}, tc{files: map[string]string{"k.conf": goodKeepalived}}},
	"KW1513": {tc{files: map[string]string{"k.conf": keepalivedConf("R", "", instance("VI_1", "  virtual_router_id 1\n  authentication {\n    auth_type PASS\n    auth_pass ab#cd\n  }\n"))}},
		tc{files: map[string]string{"k.conf": keepalivedConf("R", "", instance("VI_1", "  virtual_router_id 1\n  authentication {\n    auth_type PASS\n    auth_pass abcd # comment\n  }\n"))}}},
	"KW1514": {tc{files: map[string]string{"k.conf": keepalivedConf("R", "  vrrp_garp_interval 0\n", instance("VI_1", "  virtual_router_id 1\n"))}},
		tc{files: map[string]string{"k.conf": keepalivedConf("R", "  vrrp_garp_interval 0.001\n", instance("VI_1", "  virtual_router_id 1\n"))}}},
	// master2 rendered before node011 joined lacks its gateway VIP; the full rendering does not.
	"KW1515": {tc{filesFn: func(t *testing.T) map[string]string {
		r := renderedKeepalived(t)
		return map[string]string{"a/keepalived.conf": r["master1/keepalived.conf"],
			"b/keepalived.conf": strings.Replace(r["master2/keepalived.conf"], "        10.160.13.1/24 dev eth1\n", "", 1)}
	}}, tc{mutSpec: moreWindowsNodes, filesFn: renderedKeepalived}},

	// runtime
	"KW1601": {tc{example: true, files: map[string]string{"config.toml": "version = 2\n[plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.runc.options]\n  SystemdCgroup = false\n"}},
		tc{example: true, files: map[string]string{"config.toml": "version = 2\n[plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.runc.options]\n  SystemdCgroup = true\n"}}},
	"KW1602": {tc{example: true, mutSpec: seedBuild, files: map[string]string{"config.toml": windowsContainerd("mcr.microsoft.com/oss/kubernetes/pause:3.9-windows-ltsc2022-amd64")}},
		tc{example: true, files: map[string]string{"config.toml": windowsContainerd("registry.k8s.io/pause:3.10")}}},
	"KW1603": {tc{mutPlan: func(p *plan.Plan) { nodeByName(p, "node001").Linux.Modules = []string{"overlay"} }},
		tc{example: true, files: map[string]string{"modules-load.d/k8s.conf": "overlay\nbr_netfilter\n"}}},
	"KW1604": {tc{files: map[string]string{"k8s.conf": "net.ipv4.ip_forward = 0\n"}}, tc{files: map[string]string{"k8s.conf": "net.ipv4.ip_forward = 1\n"}}},
	"KW1608": {tc{example: true, files: map[string]string{"sysctl.d/99-net.conf": "net.ipv4.conf.all.rp_filter = 2\n"}},
		tc{example: true, mutPlan: noLooseAllRPFilter, files: map[string]string{"sysctl.d/99-net.conf": "net.ipv4.conf.all.rp_filter = 1\nnet.ipv4.conf.eth1.rp_filter = 2\n"}}},
	"KW1609": {tc{example: true, mutSpec: func(c *v1alpha1.Cluster) { setBuild(c, "node009", "10.0.17763") }},
		tc{example: true, mutSpec: func(c *v1alpha1.Cluster) { setBuild(c, "node009", "10.0.20348") }}},
	"KW1605": {tc{files: map[string]string{"daemon.json": `{"bridge": "none", "exec-opts": ["native.cgroupdriver=systemd"]}`}}, tc{files: map[string]string{"config.toml": windowsContainerd("registry.k8s.io/pause:3.10")}}},
	"KW1606": {tc{manifests: map[string]string{"rc.yaml": "apiVersion: node.k8s.io/v1\nkind: RuntimeClass\nmetadata: {name: windows-2019}\nhandler: docker\n",
		"rc2.yaml": "apiVersion: node.k8s.io/v1\nkind: RuntimeClass\nmetadata: {name: windows-2022}\nhandler: '${HANDLER}'\n"}},
		tc{manifests: map[string]string{"rc.yaml": "apiVersion: node.k8s.io/v1\nkind: RuntimeClass\nmetadata: {name: windows-2019}\nhandler: runhcs-wcow-process\n"}}},
	"KW1607": {tc{mutSpec: func(c *v1alpha1.Cluster) { c.Spec.Windows.HyperV = true }, mutPlan: func(p *plan.Plan) {
		n := nodeByName(p, "node009")
		var keep []plan.RuntimeHandler
		for _, h := range n.Windows.RuntimeHandlers {
			if h.Isolation != "hyperv" {
				keep = append(keep, h)
			}
		}
		n.Windows.RuntimeHandlers = keep
	}}, tc{mutSpec: func(c *v1alpha1.Cluster) { c.Spec.Windows.HyperV = true }}},

	// workloads
	"KW1701": {tc{manifests: map[string]string{"d.yaml": strings.Replace(goodWinDeployment, "nodeSelector: {kubernetes.io/os: windows, node.kubernetes.io/windows-build: \"10.0.17763\"}", "nodeSelector: {}", 1)}},
		tc{manifests: map[string]string{"d.yaml": goodWinDeployment}}},
	"KW1702": {tc{mutPlan: func(p *plan.Plan) { nodeByName(p, "node009").Taints = nil },
		manifests: map[string]string{"d.yaml": strings.Replace(goodLinuxDeployment, "nodeSelector: {kubernetes.io/os: linux}", "nodeSelector: {}", 1)}},
		tc{example: true, manifests: map[string]string{"d.yaml": strings.Replace(goodLinuxDeployment, "nodeSelector: {kubernetes.io/os: linux}", "nodeSelector: {}", 1)}}},
	"KW1703": {tc{example: true, manifests: map[string]string{"d.yaml": strings.Replace(goodWinDeployment, "tolerations: [{key: os, operator: Equal, value: windows, effect: NoSchedule}]", "tolerations: []", 1)}},
		tc{example: true, manifests: map[string]string{"d.yaml": goodWinDeployment}}},
	"KW1704": {tc{example: true, manifests: map[string]string{"d.yaml": strings.Replace(goodWinDeployment, "ltsc2019", "ltsc2022", 1)}},
		tc{example: true, manifests: map[string]string{"d.yaml": goodWinDeployment}}},
	"KW1705": {tc{manifests: map[string]string{"d.yaml": strings.Replace(goodWinDeployment, "metadata: {labels: {app: web}}", "metadata: {labels: {app: web}, annotations: {experimental.windows.kubernetes.io/isolation-type: hyperv}}", 1)}},
		tc{manifests: map[string]string{"d.yaml": goodWinDeployment}}},
	"KW1706": {tc{manifests: map[string]string{"d.yaml": winDeploy("      hostNetwork: true\n", "")}}, tc{manifests: map[string]string{"d.yaml": winDeploy("", "")}}},
	"KW1707": {tc{manifests: map[string]string{"d.yaml": winDeploy("", "        securityContext: {privileged: true}\n")}}, tc{manifests: map[string]string{"d.yaml": winDeploy("", "")}}},
	"KW1708": {tc{manifests: map[string]string{"d.yaml": winDeploy("", "        securityContext: {runAsUser: 1000}\n")}},
		tc{manifests: map[string]string{"d.yaml": winDeploy("", "        securityContext: {windowsOptions: {runAsUserName: ContainerUser}}\n")}}},
	"KW1709": {tc{manifests: map[string]string{"d.yaml": strings.Replace(goodWinDeployment, "apps/v1", "apps/v1beta2", 1)}}, tc{manifests: map[string]string{"d.yaml": goodWinDeployment}}},
	"KW1710": {tc{manifests: map[string]string{"d.yaml": winDeploy("      volumes: [{name: t, emptyDir: {medium: Memory}}]\n", "")}},
		tc{manifests: map[string]string{"d.yaml": winDeploy("      volumes: [{name: t, emptyDir: {}}]\n", "")}}},
	"KW1711": {tc{manifests: map[string]string{"d.yaml": winDeploy("      dnsPolicy: ClusterFirstWithHostNet\n", "")}}, tc{manifests: map[string]string{"d.yaml": winDeploy("      dnsPolicy: ClusterFirst\n", "")}}},
	"KW1712": {tc{example: true, manifests: map[string]string{"d.yaml": winDeploy("      runtimeClassName: nope\n", "")}}, tc{example: true, manifests: map[string]string{"d.yaml": winDeploy("", "")}}},
	"KW1713": {tc{manifests: map[string]string{"d.yaml": strings.Replace(goodLinuxDeployment, "kubernetes.io/os: linux", "beta.kubernetes.io/os: linux", 1)}},
		tc{manifests: map[string]string{"d.yaml": goodLinuxDeployment}}},
	"KW1715": {tc{manifests: map[string]string{"d.yaml": strings.Replace(winDeploy("", ""), "mcr.microsoft.com/windows/nanoserver:ltsc2019", "microsoft/iis:windowsservercore-1709", 1)}},
		tc{manifests: map[string]string{"d.yaml": winDeploy("", "")}}},
	"KW1714": {tc{example: true, mutSpec: seedBuild, manifests: map[string]string{"d.yaml": strings.Replace(goodWinDeployment, `"10.0.17763"`, `"10.0.20348"`, 1)}},
		tc{example: true, mutSpec: seedBuild, manifests: map[string]string{"d.yaml": goodWinDeployment}}},

	// security
	"KW1801": {tc{kubelet: []string{edit(goodKubelet, []string{"kubeconfig"}, `--kubeconfig=c:\k\admin.conf`)}}, tc{kubelet: []string{goodKubelet}}},
	"KW1802": {tc{files: map[string]string{"setup.ps1": "netsh advfirewall set allprofiles state off\n"}},
		tc{files: map[string]string{"setup.ps1": "New-NetFirewallRule -Name kubelet -Direction Inbound -Protocol TCP -LocalPort 10250 -Action Allow\n" + goodKubelet + "\n"}}},
	"KW1803": {tc{files: map[string]string{"k.conf": keepalivedConf("R", "", instance("VI_1", "  virtual_router_id 1\n  authentication {\n    auth_type PASS\n    auth_pass abc\n  }\n"))}},
		tc{files: map[string]string{"k.conf": goodKeepalived}}},
	"KW1804": {tc{files: map[string]string{"config.toml": "version = 2\n[plugins.\"io.containerd.grpc.v1.cri\".registry.configs.\"repo.example:5000\".tls]\n  insecure_skip_verify = true\n"}},
		tc{files: map[string]string{"config.toml": windowsContainerd("registry.k8s.io/pause:3.10")}}},
	"KW1805": {tc{kubelet: []string{edit(goodKubelet, []string{"anonymous-auth"})}}, tc{kubelet: []string{goodKubelet}}},
	"KW1806": {tc{kubelet: []string{edit(goodKubelet, []string{"read-only-port"}, "--read-only-port=10255")}}, tc{kubelet: []string{goodKubelet}}},
}

// moreWindowsNodes adds node010 and node011, Windows nodes like node009 with the pod CIDRs
// 10.160.12.0/24 and 10.160.13.0/24, so the gateway instance holds three gateway VIPs, which
// the renderer writes as virtual_ipaddress_excluded beside its advertised loopback anchor.
func moreWindowsNodes(c *v1alpha1.Cluster) {
	var tmpl v1alpha1.Node
	for _, n := range c.Spec.Nodes {
		if n.Name == "node009" {
			tmpl = n
		}
	}
	for i, name := range []string{"node010", "node011"} {
		n := tmpl
		n.Name, n.PodCIDR = name, fmt.Sprintf("10.160.%d.0/24", 12+i)
		n.NICs = slices.Clone(tmpl.NICs)
		for j := range n.NICs {
			n.NICs[j].MAC = ""
			n.NICs[j].IP = strings.Replace(n.NICs[j].IP, ".216", fmt.Sprintf(".%d", 217+i), 1)
		}
		c.Spec.Nodes = append(c.Spec.Nodes, n)
	}
}

// renderedKeepalived is every gateway member's keepalived.conf, as kubewin renders it for the
// example with moreWindowsNodes, keyed <member>/keepalived.conf.
func renderedKeepalived(t *testing.T) map[string]string {
	t.Helper()
	_, p := examplePlan(t, moreWindowsNodes)
	if len(p.GatewayGroups) != 1 {
		t.Fatalf("%d gateway groups, want 1", len(p.GatewayGroups))
	}
	out := map[string]string{}
	for _, m := range p.GatewayGroups[0].Members {
		b, err := render.KeepalivedConfig(p.GatewayGroups[0], m.Node)
		if err != nil {
			t.Fatal(err)
		}
		out[m.Node+"/keepalived.conf"] = string(b)
	}
	return out
}

// A gateway VIP is a gateway whichever block holds it: the addressing rules look at
// virtual_ipaddress_excluded too, while the advert-size rule and the grouping of VRRP members
// (by what their adverts carry) look at virtual_ipaddress only.
func TestExcludedVIPs(t *testing.T) {
	rendered := renderedKeepalived(t)
	m1, m2 := rendered["master1/keepalived.conf"], rendered["master2/keepalived.conf"]
	const excluded = "    virtual_ipaddress_excluded {\n        10.160.11.1/24 dev eth1\n        10.160.12.1/24 dev eth1\n        10.160.13.1/24 dev eth1\n    }\n"
	if len(rendered) != 3 || !strings.Contains(m1, "/32 dev lo scope host\n    }\n"+excluded) {
		t.Fatalf("the renderer no longer writes the layout under test (%d members):\n%s", len(rendered), m1)
	}
	// The rendered configs raise nothing in any rule.
	rep := runCase(t, tc{mutSpec: moreWindowsNodes, files: rendered})
	for _, f := range rep.Findings {
		if strings.HasSuffix(f.Location.File, "keepalived.conf") {
			t.Errorf("rendered config: %s %s: %s", f.RuleID, f.Location, f.Message)
		}
	}

	// m2Drift is master2 rendered before node011 joined: its excluded block lacks 10.160.13.1,
	// while its advert still equals master1's.
	m2Drift := strings.Replace(m2, "        10.160.13.1/24 dev eth1\n", "", 1)
	cases := []struct {
		name, rule string
		in         tc
		// line is text the finding's line holds; empty means the rule must not fire.
		line string
	}{
		{"gateway not .1 in excluded block", "KW1405",
			tc{mutSpec: moreWindowsNodes, files: map[string]string{"k.conf": strings.Replace(m1, "10.160.13.1/24", "10.160.13.9/24", 1)}}, "10.160.13.9/24"},
		{"rendered excluded gateways", "KW1405", tc{mutSpec: moreWindowsNodes, files: rendered}, ""},
		{"prefix mismatch in excluded block", "KW1409",
			tc{mutSpec: moreWindowsNodes, files: map[string]string{"k.conf": strings.Replace(m1, "10.160.12.1/24", "10.160.12.1/32", 1)}}, "10.160.12.1/32"},
		{"rendered excluded prefixes", "KW1409", tc{mutSpec: moreWindowsNodes, files: rendered}, ""},
		// The renderer's largest instance: a router VIP advertised, 255 gateway VIPs excluded.
		{"255 excluded VIPs beside one advertised", "KW1506",
			tc{files: map[string]string{"k.conf": keepalivedConf("R", "", instance("VI_1", "  virtual_router_id 1\n  virtual_ipaddress {\n    192.168.0.250/32\n  }\n"+
				"  virtual_ipaddress_excluded {\n"+manyVIPs(255)+"  }\n"))}}, ""},
		{"256 advertised VIPs beside excluded ones", "KW1506",
			tc{files: map[string]string{"k.conf": keepalivedConf("R", "", instance("VI_1", "  virtual_router_id 1\n  virtual_ipaddress {\n"+manyVIPs(256)+"  }\n"+
				"  virtual_ipaddress_excluded {\n    192.168.0.250/32\n  }\n"))}}, "vrrp_instance VI_1"},
		// Members whose adverts match are one VRRP router even when their excluded sets differ.
		{"members differ only in excluded VIPs", "KW1501",
			tc{files: map[string]string{"a/keepalived.conf": m1, "b/keepalived.conf": m2Drift}}, ""},
		{"VRID mismatch between members that differ in excluded VIPs", "KW1503",
			tc{files: map[string]string{"a/keepalived.conf": m1, "b/keepalived.conf": strings.Replace(m2Drift, "virtual_router_id 188", "virtual_router_id 189", 1)}},
			"virtual_router_id 189"},
		{"missing unicast peer between members that differ in excluded VIPs", "KW1510",
			tc{files: map[string]string{"a/keepalived.conf": m1, "b/keepalived.conf": strings.Replace(m2Drift, "        100.100.126.202\n", "", 1)}},
			"vrrp_instance VI_WIN_GW_188"},
	}
	for _, c := range cases {
		t.Run(c.rule+"/"+c.name, func(t *testing.T) {
			rep := runCase(t, c.in)
			got := findingsOf(rep, c.rule)
			if c.line == "" {
				if len(got) > 0 {
					t.Errorf("fires:\n%s", dump(&check.Report{Findings: got}))
				}
				return
			}
			if len(got) == 0 {
				t.Fatalf("does not fire; findings were:\n%s", dump(rep))
			}
			for _, f := range got {
				text := ""
				for name, content := range c.in.files {
					if strings.HasSuffix(f.Location.File, filepath.FromSlash(name)) {
						if lines := strings.Split(content, "\n"); f.Location.Line >= 1 && f.Location.Line <= len(lines) {
							text = lines[f.Location.Line-1]
						}
					}
				}
				if !strings.Contains(text, c.line) {
					t.Errorf("%s: finding at %s:%d (%q), want the line with %q", f.Message, filepath.Base(f.Location.File), f.Location.Line, text, c.line)
				}
			}
		})
	}
}

// KW1515 compares what members of one VRRP router hold, advertised and excluded, by address
// and prefix, and points at the member that differs from the others.
func TestVIPSetsDifferBetweenMembers(t *testing.T) {
	rendered := renderedKeepalived(t)
	m1, m2, m3 := rendered["master1/keepalived.conf"], rendered["master2/keepalived.conf"], rendered["master3/keepalived.conf"]
	const gw13 = "        10.160.13.1/24 dev eth1\n"
	if !strings.Contains(m2, gw13) || !strings.Contains(m3, gw13) {
		t.Fatalf("the renderer no longer writes the layout under test:\n%s", m2)
	}
	// excluded replaces master's excluded block.
	excluded := func(m, block string) string {
		i := strings.Index(m, "    virtual_ipaddress_excluded {\n")
		j := i + strings.Index(m[i:], "    }\n") + len("    }\n")
		return m[:i] + "    virtual_ipaddress_excluded {\n" + block + "    }\n" + m[j:]
	}
	cases := []struct {
		name  string
		files map[string]string
		// spec checks with the example plus moreWindowsNodes, whose plan has the gateway VIPs.
		spec bool
		// want maps a file to the text its finding's line holds and words the message has;
		// files not in want have no finding.
		want map[string][]string
	}{
		{"rendered members", rendered, true, nil},
		{"single file lacking a gateway VIP", map[string]string{"a/keepalived.conf": strings.Replace(m2, gw13, "", 1)}, true, nil},
		{"member lacks a gateway VIP",
			map[string]string{"a/keepalived.conf": m1, "b/keepalived.conf": strings.Replace(m2, gw13, "", 1)}, false,
			map[string][]string{"b/keepalived.conf": {"vrrp_instance VI_WIN_GW_188", "lacks 10.160.13.1/24 (held by ", "a" + string(filepath.Separator) + "keepalived.conf"}}},
		// Without the plan the odd member out is the one that differs from most others.
		{"one of three members re-rendered after a Windows node joined, no plan",
			map[string]string{"a/keepalived.conf": m1, "b/keepalived.conf": strings.Replace(m2, gw13, "", 1), "c/keepalived.conf": strings.Replace(m3, gw13, "", 1)}, false,
			map[string][]string{"a/keepalived.conf": {"vrrp_instance VI_WIN_GW_188", "holds 10.160.13.1/24 (not held by "}}},
		// The plan has node011's gateway, so the members still without it are the ones to fix.
		{"one of three members re-rendered after a Windows node joined, with the plan",
			map[string]string{"a/keepalived.conf": m1, "b/keepalived.conf": strings.Replace(m2, gw13, "", 1), "c/keepalived.conf": strings.Replace(m3, gw13, "", 1)}, true,
			map[string][]string{"b/keepalived.conf": {"vrrp_instance VI_WIN_GW_188", "lacks 10.160.13.1/24"}, "c/keepalived.conf": {"vrrp_instance VI_WIN_GW_188", "lacks 10.160.13.1/24"}}},
		{"one of three members holds an extra VIP",
			map[string]string{"a/keepalived.conf": m1, "b/keepalived.conf": m2, "c/keepalived.conf": strings.Replace(m3, gw13, gw13+"        10.160.14.1/24 dev eth1\n", 1)}, false,
			map[string][]string{"c/keepalived.conf": {"vrrp_instance VI_WIN_GW_188", "holds 10.160.14.1/24 (not held by "}}},
		{"one of three members holds a VIP the plan does not have",
			map[string]string{"a/keepalived.conf": m1, "b/keepalived.conf": m2, "c/keepalived.conf": strings.Replace(m3, gw13, gw13+"        10.160.14.1/24 dev eth1\n", 1)}, true,
			map[string][]string{"c/keepalived.conf": {"vrrp_instance VI_WIN_GW_188", "holds 10.160.14.1/24 (not held by "}}},
		{"same address, other prefix",
			map[string]string{"a/keepalived.conf": m1, "b/keepalived.conf": strings.Replace(m2, "10.160.13.1/24", "10.160.13.1/32", 1)}, false,
			map[string][]string{"a/keepalived.conf": {"vrrp_instance VI_WIN_GW_188", "lacks 10.160.13.1/32"}, "b/keepalived.conf": {"vrrp_instance VI_WIN_GW_188", "lacks 10.160.13.1/24"}}},
		// keepalived reads a bare IPv6 address as /128 and a bare IPv4 one as /32.
		{"bare addresses equal their full-length prefixes",
			map[string]string{"a/keepalived.conf": excluded(m1, "        fd00:10:160:13::1 dev eth1\n        10.160.12.1 dev eth1\n"),
				"b/keepalived.conf": excluded(m2, "        fd00:10:160:13::1/128 dev eth1\n        10.160.12.1/32 dev eth1\n")}, false, nil},
		{"bare IPv6 address is not a /64",
			map[string]string{"a/keepalived.conf": excluded(m1, "        fd00:10:160:13::1 dev eth1\n"), "b/keepalived.conf": excluded(m2, "        fd00:10:160:13::1/64 dev eth1\n")}, false,
			map[string][]string{"a/keepalived.conf": {"lacks fd00:10:160:13::1/64"}, "b/keepalived.conf": {"lacks fd00:10:160:13::1/128"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := tc{files: c.files}
			if c.spec {
				in.mutSpec = moreWindowsNodes
			}
			rep := runCase(t, in)
			got := findingsOf(rep, "KW1515")
			seen := map[string]bool{}
			for _, f := range got {
				name := ""
				for n := range c.files {
					if strings.HasSuffix(f.Location.File, filepath.FromSlash(n)) {
						name = n
					}
				}
				want, ok := c.want[name]
				if !ok {
					t.Errorf("unexpected finding at %s:%d: %s", f.Location.File, f.Location.Line, f.Message)
					continue
				}
				seen[name] = true
				lines := strings.Split(c.files[name], "\n")
				if f.Location.Line < 1 || f.Location.Line > len(lines) || !strings.HasPrefix(lines[f.Location.Line-1], "vrrp_instance VI_WIN_GW_188 ") {
					t.Errorf("%s: finding at line %d, want the vrrp_instance line", name, f.Location.Line)
				}
				for _, w := range want {
					if !strings.Contains(f.Message, w) {
						t.Errorf("%s: message %q lacks %q", name, f.Message, w)
					}
				}
				for n := range c.files {
					if !strings.Contains(f.Message, filepath.FromSlash(n)) {
						t.Errorf("%s: message %q does not name member %s", name, f.Message, n)
					}
				}
			}
			for name := range c.want {
				if !seen[name] {
					t.Errorf("no finding at %s; findings were:\n%s", name, dump(rep))
				}
			}
		})
	}
}

func manyVIPs(n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "    10.%d.%d.1/24\n", 100+i/250, i%250)
	}
	return b.String()
}

func windowsContainerd(sandbox string) string {
	return `version = 2
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "` + sandbox + `"
[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runhcs-wcow-process]
  runtime_type = "io.containerd.runhcs.v1"
[plugins."io.containerd.grpc.v1.cri".cni]
  bin_dir = 'C:\k\cni\bin'
  conf_dir = 'C:\k\cni\config'
`
}

// Every rule has a test input that fires it and one that does not.
func TestEveryRuleFiresAndPasses(t *testing.T) {
	rules := All()
	if err := check.ValidateCatalogue(rules); err != nil {
		t.Fatal(err)
	}
	for _, r := range rules {
		c, ok := ruleCases[r.ID]
		if !ok {
			t.Errorf("%s %s: no test case", r.ID, r.Name)
			continue
		}
		t.Run(r.ID+"-"+r.Name, func(t *testing.T) {
			fire := runCase(t, c.fire)
			if got := findingsOf(fire, r.ID); len(got) == 0 {
				t.Errorf("does not fire; findings were:\n%s", dump(fire))
			} else {
				for _, f := range got {
					if f.Message == "" || f.Why == "" || f.Fix == "" || f.Location.File == "" && f.Location.Field == "" {
						t.Errorf("incomplete finding %+v", f)
					}
				}
			}
			pass := runCase(t, c.pass)
			if got := findingsOf(pass, r.ID); len(got) > 0 {
				t.Errorf("fires on the passing input:\n%s", dump(&check.Report{Findings: got}))
			}
		})
	}
	for id := range ruleCases {
		if _, ok := check.FindRule(rules, id); !ok {
			t.Errorf("test case for unknown rule %s", id)
		}
	}
}

func TestCatalogueSize(t *testing.T) {
	rules := All()
	if len(rules) < 60 {
		t.Fatalf("%d rules, want at least 60", len(rules))
	}
	fams := map[check.Family]int{}
	for _, r := range rules {
		fams[r.Family]++
	}
	for _, f := range check.Families() {
		if fams[f] == 0 {
			t.Errorf("family %s has no rules", f)
		}
	}
}

func dump(rep *check.Report) string {
	var b strings.Builder
	for _, f := range rep.Findings {
		fmt.Fprintf(&b, "  %s %s %s: %s\n", f.RuleID, f.Severity, f.Location, f.Message)
	}
	return b.String()
}

// noLooseAllRPFilter takes a loose all.rp_filter out of every Linux node's plan (the render sets
// loose mode per interface).
func noLooseAllRPFilter(p *plan.Plan) {
	for i := range p.Nodes {
		if l := p.Nodes[i].Linux; l != nil && l.Sysctls["net.ipv4.conf.all.rp_filter"] == "2" {
			delete(l.Sysctls, "net.ipv4.conf.all.rp_filter")
		}
	}
}

func setBuild(c *v1alpha1.Cluster, node, build string) {
	for i := range c.Spec.Nodes {
		if c.Spec.Nodes[i].Name == node {
			c.Spec.Nodes[i].WindowsBuild = build
		}
	}
}

// seedBuild puts node009 back on the field report's Windows Server 2019 (the embedded example
// runs 2022, see example.yaml), for rules about that build.
func seedBuild(c *v1alpha1.Cluster) { setBuild(c, "node009", "10.0.17763") }
