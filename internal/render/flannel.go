package render

import (
	"fmt"

	"github.com/kubewin/kubewin/internal/plan"
)

// flannel designs (flannel/host-gw, flannel/vxlan): flanneld runs on every node, Windows
// included, leases the node's pod CIDR from node.spec.podCIDR (--kube-subnet-mgr) and creates
// the node's HNS network itself: an L2Bridge network with a bridge endpoint "<name>_ep" at .2
// and one route per other node (host-gw), or an Overlay network with one RemoteSubnetRoute
// policy per other node (vxlan). It names that network after net-conf.json's Backend.Name
// (flannel-io/flannel pkg/backend/hostgw/hostgw_windows.go: default "cbr0";
// pkg/backend/vxlan/vxlan_windows.go: default "flannel.<VNI>"). The flannel CNI plugin hands
// its own network name to win-bridge/win-overlay, which look the HNS network up by that name
// (flannel-io/cni-plugin flannel_windows.go), so Backend.Name is always the CNI network name.
//
// flanneld.exe does not implement the Windows service protocol (no --windows-service or
// --run-service; the SCM would kill it after its 30 s start timeout), so a service wrapper runs
// it: WinSW (programs.go), as flanneld-service.exe with its configuration flanneld-service.xml
// beside it (services.go). WinSW sets NODE_NAME, rotates flanneld's output, and exits with
// flanneld's exit code when flanneld exits on its own, leaving a failure to the SCM's recovery
// actions (winsw/winsw v2.12.0 src/WinSW/WrapperService.cs). The Kubernetes Windows guides ran
// flanneld under nssm (sig-windows-tools, downloaded from nssm.cc or a mirror of it, unchecked);
// rke2 runs it as a child of its own service (rancher/rke2 pkg/windows/flannel.go). WinSW comes
// from a GitHub release and is checked against a pinned SHA-256 before it is installed.
//
// flanneld's credential is the node's own: the kubelet's kubeconfig, whose client certificate
// the kubelet renews (the decision and its sources: internal/bootstrap's package comment).
// flannel's ClusterRole (flannel-io/flannel Documentation/kube-flannel.yml: get, list and watch
// nodes, patch nodes/status, get pods) is within what the Node authorizer grants every node
// (kubernetes v1.37.1 plugin/pkg/auth/authorizer/rbac/bootstrappolicy/policy.go NodeRules: get,
// list, watch nodes; patch nodes/status) except get pods, which flanneld needs only to find its
// node when it runs in a pod without NODE_NAME (pkg/subnet/kube/kube.go); it patches only its
// own Node, which NodeRestriction admits.

const (
	flanneldServiceName = "flanneld"
	// flanneldWrapperExe and flanneldWrapperConfig are WinSW and its configuration in the
	// install dir: WinSW finds the .xml by its own name.
	flanneldWrapperExe    = "flanneld-service.exe"
	flanneldWrapperConfig = "flanneld-service.xml"
	// flanneldLogName names flanneld's logs in the node's log directory: WinSW writes its
	// stderr (klog) to flanneld.err.log and its stdout to flanneld.out.log.
	flanneldLogName = "flanneld"
	// flannelNetConfDir holds net-conf.json. flanneld's --net-config-path defaults to
	// /etc/kube-flannel/net-conf.json, which Windows resolves on the current drive; kubewin
	// passes the full path.
	flannelNetConfDir = `C:\etc\kube-flannel`
	// flannelSubnetFile is where flanneld writes the lease (--subnet-file default
	// /run/flannel/subnet.env) and the flannel CNI plugin reads it (subnetFile default), both
	// on drive C: for services started from C:.
	flannelSubnetFile = `C:\run\flannel\subnet.env`
	// flannelBundleNetConf is net-conf.json's path inside a Windows node bundle.
	flannelBundleNetConf = `flannel\net-conf.json`
)

// FlannelNetConfPath is where a Windows node's flanneld reads net-conf.json.
func FlannelNetConfPath() string { return flannelNetConfDir + `\net-conf.json` }

func usesFlannel(w *plan.WindowsNodePlan) bool { return w != nil && w.CNIPlugin == "flannel" }

// flannelBridgeEndpoint is the host endpoint flanneld's Windows host-gw backend creates at .2.
func flannelBridgeEndpoint(w *plan.WindowsNodePlan) string { return w.HNSNetworkName + "_ep" }

// FlanneldArgs returns the command line of flanneld on a Windows node: the Kubernetes subnet
// manager with the node's own kubeconfig (flanneld runs outside a pod), the node's cluster IP as the
// interface (found by address, since the adapter is renamed to "vEthernet (...)" once HNS
// binds it), and IP masquerading, which on Windows the flannel CNI plugin applies as the
// OutBoundNAT policy of each endpoint. The node name comes from the NODE_NAME environment
// variable (FlanneldEnvironment).
func FlanneldArgs(n plan.NodePlan) ([]string, error) {
	w := n.Windows
	if !usesFlannel(w) {
		return nil, fmt.Errorf("render flanneld for %s: the node does not use flannel", n.Name)
	}
	if n.NodeIP == "" {
		return nil, fmt.Errorf("render flanneld for %s: no node IP for --iface", n.Name)
	}
	return []string{
		"--kubeconfig-file=" + winPath(w.InstallDir, kubeletKubeconfig),
		"--net-config-path=" + FlannelNetConfPath(),
		"--iface=" + n.NodeIP,
		"--ip-masq=1",
		"--kube-subnet-mgr=1",
	}, nil
}

// FlanneldEnvironment is flanneld's environment: without NODE_NAME (or a pod's POD_NAME and
// POD_NAMESPACE) the Kubernetes subnet manager cannot find its Node (pkg/subnet/kube).
func FlanneldEnvironment(n plan.NodePlan) []string { return []string{"NODE_NAME=" + n.Name} }

type flannelNetConf struct {
	Network string         `json:"Network"`
	Backend flannelBackend `json:"Backend"`
}

type flannelBackend struct {
	Type string `json:"Type"`
	// Name is the HNS network flanneld creates on Windows nodes (the CNI network name);
	// flanneld on Linux does not read it.
	Name string `json:"Name,omitempty"`
	VNI  int    `json:"VNI,omitempty"`
	Port int    `json:"Port,omitempty"`
}

// FlannelNetConf renders cluster/flannel-net-conf.json, the net-conf.json of flannel's
// kube-flannel-cfg ConfigMap, which Windows nodes also get as flannel/net-conf.json. Nil when
// the design does not use flannel.
func FlannelNetConf(p *plan.Plan) ([]byte, error) {
	f := p.Flannel
	if f == nil {
		return nil, nil
	}
	if f.Backend != "host-gw" && f.Backend != "vxlan" {
		return nil, fmt.Errorf("render flannel net-conf: unknown backend %q", f.Backend)
	}
	name, err := flannelNetworkName(p)
	if err != nil {
		return nil, err
	}
	return jsonIndent(flannelNetConf{Network: f.Network, Backend: flannelBackend{Type: f.Backend, Name: name, VNI: f.VNI, Port: f.Port}})
}

// flannelNetworkName is the HNS network name of the Windows nodes that run flanneld; one
// net-conf.json serves them all, so they must agree.
func flannelNetworkName(p *plan.Plan) (string, error) {
	name, from := "", ""
	for _, n := range p.Nodes {
		if !usesFlannel(n.Windows) {
			continue
		}
		switch {
		case name == "":
			name, from = n.Windows.HNSNetworkName, n.Name
		case n.Windows.HNSNetworkName != name:
			return "", fmt.Errorf("render flannel net-conf: Windows nodes %s and %s name their HNS network %q and %q; one net-conf.json Backend.Name serves both",
				from, n.Name, name, n.Windows.HNSNetworkName)
		}
	}
	return name, nil
}

// WindowsFlannelNetConf renders nodes/<node>/flannel/net-conf.json: the cluster's net-conf.json,
// which the node's flanneld reads from FlannelNetConfPath. Nil for nodes without flannel.
func WindowsFlannelNetConf(p *plan.Plan, n plan.NodePlan) ([]byte, error) {
	if !usesFlannel(n.Windows) {
		return nil, nil
	}
	if p.Flannel == nil {
		return nil, fmt.Errorf("render flannel net-conf for %s: the node delegates to flannel but the plan has no flannel network", n.Name)
	}
	return FlannelNetConf(p)
}
